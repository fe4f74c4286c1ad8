//! The everyday paths of issue #11 against their reference forms: prepared pointers against
//! text pointers, the borrowed decode against the owned one, the direct JSON writer against
//! serde_json's text of the same document.

use leafwire::{Document, Pointer};

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Every pointer to a value of `v`, with the value it names.
fn paths(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, c)| paths(c, format!("{at}/{}", escape(k)), out)),
        serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| paths(c, format!("{at}/{i}"), out)),
        _ => {}
    }
}

#[test]
fn prepared_and_text_pointers_agree_everywhere() {
    let text = r#"{"a": {"b~c": [1, 2.5, {"d/e": null}], "long key with more than eight bytes": "x"},
        "m": [[1.5, 2.5], [3.5, 4.5]], "cube": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "ints": [1, -2, 300],
        "": {"": true}, "mixed": [1, 2.5, -3]}"#;
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let bytes = leafwire::json::from_json(text.as_bytes()).unwrap();
    let doc = Document::open(&bytes).unwrap();
    let mut all = Vec::new();
    paths(&json, String::new(), &mut all);
    for p in &all {
        let by_text = doc.pointer(p).unwrap_or_else(|e| panic!("{p}: {e}")).to_value().unwrap();
        let by_prepared = doc.resolve(&p.parse::<Pointer>().unwrap()).unwrap().to_value().unwrap();
        assert_eq!(by_text, by_prepared, "{p}");
        assert_eq!(&serde_json::to_value(&by_text).unwrap(), json.pointer(p).unwrap(), "{p}");
    }
    for bad in ["/a/b~c/3", "/m/2", "/m/0/2", "/m/0/0/0", "/cube/1/1/1/0", "/a/x", "/ints/01", "/ints/-1", "/a/b~2", "x", "/mixed/0/0"] {
        let by_text = doc.pointer(bad).map(|n| n.kind());
        let by_prepared = Pointer::parse(bad).and_then(|p| doc.resolve(&p)).map(|n| n.kind());
        assert!(by_text.is_err() && by_prepared.is_err(), "{bad}: {by_text:?} {by_prepared:?}");
        assert!(by_text.unwrap_err().to_string().contains(bad.split('/').nth(1).unwrap_or(bad)));
    }
    // A row of a typed array resolves the rest of a pointer from its level.
    let row = doc.pointer("/cube/1").unwrap();
    assert_eq!(row.pointer("/0/1").unwrap().as_i64().unwrap(), 6);
    assert_eq!(row.resolve(&"/1/0".parse().unwrap()).unwrap().as_i64().unwrap(), 7);
}

/// Decoding refuses a repeated key in an object, however the object's keys and its
/// children's keys interleave (the walker stamps key ids per object).
#[test]
fn decoders_refuse_repeated_keys_and_keep_nested_ones_apart() {
    // Nested objects reuse the parent's keys: legal, and must not look repeated.
    let text = br#"{"a": {"a": 1, "b": {"a": 2, "b": 3}}, "b": [{"a": 4}, {"a": 5, "b": 6}]}"#;
    let bytes = leafwire::json::from_json(text).unwrap();
    let owned = leafwire::decode(&bytes).unwrap();
    assert!(*leafwire::decode_borrowed(&bytes).unwrap().root() == owned);
    // Make the root's second key id equal to its first: a repeated key.
    let doc = Document::open(&bytes).unwrap();
    let root = doc.root().offset() as usize;
    assert_eq!(bytes[root + 1], 2, "root count");
    let mut twice = bytes.clone();
    let keys_at = root + 2 + 2;
    twice[keys_at + 1] = twice[keys_at];
    assert!(leafwire::decode(&twice).is_err());
    let err = leafwire::decode_borrowed(&twice).unwrap_err();
    assert!(err.to_string().contains("duplicate key"), "{err}");
}

/// The direct JSON writer agrees with serde_json's text of the same document on every
/// kind of value, and names the path of a value JSON cannot hold.
#[test]
fn json_writer_matches_serde_on_every_kind() {
    use leafwire::{IntMap, Map, TypedArray, TypedData, Value};
    let mut int_map = IntMap::default();
    int_map.insert(-7, Value::String("seven".into()));
    int_map.insert(1 << 40, Value::Null);
    let mut object = Map::default();
    object.insert("esc\"aped\\\n\u{1}".into(), Value::String("tab\there \"q\" \u{7f} é 😀 and a long tail of text".into()));
    object.insert("bytes".into(), Value::Bytes(vec![0, 1, 255]));
    object.insert("big".into(), Value::BigNum("-123456789012345678901234567890".into()));
    object.insert("uint".into(), Value::UInt(u64::MAX));
    object.insert("f32".into(), Value::F32(0.1));
    object.insert("f64".into(), Value::F64(1e300));
    object.insert("ints".into(), Value::IntMap(int_map));
    for data in [TypedData::I8(vec![-1, 2]), TypedData::U16(vec![65535, 0]), TypedData::I64(vec![i64::MIN, 5]),
        TypedData::U64(vec![u64::MAX, 1]), TypedData::Bool(vec![true, false]), TypedData::F32(vec![1.5, -0.25]),
        TypedData::F64(vec![0.1, 2.0, -3.5, 4.0])] {
        let name = format!("{data:?}").split('(').next().unwrap().to_owned();
        object.insert(format!("typed {name}"), Value::Typed(TypedArray::with_shape(data.clone(), vec![2, data.len() / 2]).unwrap()));
    }
    object.insert("mixed".into(), Value::Array(vec![Value::Int(1), Value::F64(2.5), Value::Int(-3)]));
    let bytes = leafwire::encode(&Value::Object(object)).unwrap();
    let doc = Document::open(&bytes).unwrap();
    assert_eq!(leafwire::json::to_json(&bytes).unwrap(), serde_json::to_string(&doc.root()).unwrap());
    let row = doc.pointer("/typed F64/1").unwrap();
    assert_eq!(leafwire::json::to_json_node(&row).unwrap(), serde_json::to_string(&row).unwrap());

    let bad = leafwire::encode(&Value::Array(vec![Value::Int(1), Value::Array(vec![Value::F64(f64::INFINITY)])])).unwrap();
    let err = leafwire::json::to_json(&bad).unwrap_err();
    assert_eq!((err.category(), err.path()), (leafwire::Category::NotRepresentable, Some("/1/0")), "{err}");
}

/// Every ASCII byte and some wider characters, in keys and values, escaped as serde_json
/// escapes them.
#[test]
fn json_writer_escapes_as_serde_json_does() {
    let all: String = (0u8..0x80).map(char::from).chain("é😀\u{2028}".chars()).collect();
    let mut object = leafwire::Map::default();
    object.insert(all.clone(), leafwire::Value::String(all.clone()));
    object.insert(format!("{all}{all}"), leafwire::Value::String(all.repeat(3)));
    let bytes = leafwire::encode(&leafwire::Value::Object(object)).unwrap();
    let doc = Document::open(&bytes).unwrap();
    assert_eq!(leafwire::json::to_json(&bytes).unwrap(), serde_json::to_string(&doc.root()).unwrap());
}

/// One index into a one-dimensional typed array is read inline (`rank1`); it must name
/// what the array's own decode gives, for every element type, and refuse what it refuses.
#[test]
fn indexes_into_flat_typed_arrays_read_every_element_type() {
    #[derive(serde::Serialize)]
    struct Flat {
        i8s: Vec<i8>,
        u16s: Vec<u16>,
        i32s: Vec<i32>,
        u64s: Vec<u64>,
        f32s: Vec<f32>,
        f64s: Vec<f64>,
        bools: Vec<bool>,
    }
    let flat = Flat {
        i8s: vec![-128, 0, 127],
        u16s: vec![0, 65_535],
        i32s: vec![i32::MIN, 7, i32::MAX],
        u64s: vec![0, u64::MAX, 1 << 40],
        f32s: vec![1.5, -0.0, f32::MAX],
        f64s: vec![0.1, -2.5e300],
        bools: vec![true, false, true],
    };
    let bytes = leafwire::to_vec(&flat).unwrap();
    let doc = Document::open(&bytes).unwrap();
    for key in ["i8s", "u16s", "i32s", "u64s", "f32s", "f64s", "bools"] {
        let whole = doc.pointer(&format!("/{key}")).unwrap();
        let leafwire::Value::Typed(typed) = whole.to_value().unwrap() else { panic!("{key}: not a typed array") };
        let leafwire::Value::Array(items) = typed.to_nested() else { panic!("{key}: not one-dimensional") };
        for (i, item) in items.iter().enumerate() {
            let one = doc.pointer(&format!("/{key}/{i}")).unwrap().to_value().unwrap();
            assert_eq!(&one, item, "/{key}/{i}");
            assert_eq!(one, doc.resolve(&format!("/{key}/{i}").parse().unwrap()).unwrap().to_value().unwrap());
        }
        for bad in [format!("/{key}/{}", items.len()), format!("/{key}/x"), format!("/{key}/0/0"), format!("/{key}/00")] {
            let e = doc.pointer(&bad).unwrap_err();
            assert_eq!(e.category(), leafwire::Category::NotFound, "{bad}: {e}");
        }
    }
}

/// Two indices into a two-dimensional typed array are read inline (`rank2`); each must
/// name what the array's own decode gives and what the general walk (one row at a time)
/// names, for dimensions of one and two varint bytes, and refuse what it refuses. Shapes
/// the inline reader leaves alone (a zero dimension, a three-byte dimension) still work.
#[test]
fn indexes_into_two_dimensional_typed_arrays_agree_with_the_general_walk() {
    use leafwire::{Category, TypedArray, TypedData, Value};
    let cases: Vec<(&str, TypedData, Vec<usize>)> = vec![
        ("one", TypedData::F64(vec![2.5]), vec![1, 1]),
        ("points", TypedData::F64((0..6).map(|x| x as f64 / 4.0).collect()), vec![3, 2]),
        ("bytes", TypedData::I8((0..600).map(|x| (x % 256) as i8).collect()), vec![200, 3]),
        ("wide", TypedData::U16((0..260).map(|x| x * 251).collect()), vec![2, 130]),
        ("flags", TypedData::Bool((0..8).map(|x| x % 3 == 0).collect()), vec![4, 2]),
        ("big", TypedData::U64((0..4).map(|x| u64::MAX - x).collect()), vec![2, 2]),
        ("tall", TypedData::I32((0..20_000).collect()), vec![20_000, 1]),
        ("no rows", TypedData::F64(vec![]), vec![0, 3]),
        ("no columns", TypedData::F64(vec![]), vec![3, 0]),
    ];
    let mut object = leafwire::Map::default();
    for (name, data, shape) in &cases {
        object.insert(name.to_string(), Value::Typed(TypedArray::with_shape(data.clone(), shape.clone()).unwrap()));
    }
    let bytes = leafwire::encode(&Value::Object(object)).unwrap();
    let doc = Document::open(&bytes).unwrap();
    for (name, _, shape) in &cases {
        let Value::Typed(typed) = doc.pointer(&format!("/{name}")).unwrap().to_value().unwrap() else {
            panic!("{name}: not a typed array")
        };
        let nested = typed.to_nested();
        let (rows, columns) = (shape[0], shape[1]);
        for i in (0..rows).filter(|&i| i < 40 || i % 997 == 0 || i == rows - 1) {
            let row = doc.pointer(&format!("/{name}/{i}")).unwrap();
            for j in 0..columns {
                let path = format!("/{name}/{i}/{j}");
                let one = doc.pointer(&path).unwrap().to_value().unwrap();
                let Value::Array(expected_row) = &nested else { panic!("{name}: not nested") };
                let Value::Array(expected) = &expected_row[i] else { panic!("{name}: row {i} not an array") };
                assert_eq!(one, expected[j], "{path}");
                assert_eq!(one, row.pointer(&format!("/{j}")).unwrap().to_value().unwrap(), "{path} by row");
                assert_eq!(one, doc.resolve(&path.parse().unwrap()).unwrap().to_value().unwrap(), "{path} prepared");
            }
            let e = doc.pointer(&format!("/{name}/{i}/{columns}")).unwrap_err();
            assert_eq!(e.category(), Category::NotFound, "{e}");
            assert!(e.to_string().contains("out of range"), "{e}");
        }
        for bad in [format!("/{name}/{rows}/0"), format!("/{name}/x/0"), format!("/{name}/0/x"), format!("/{name}/0/0/0"),
            format!("/{name}/00/0"), format!("/{name}/0/01")] {
            let by_text = doc.pointer(&bad).unwrap_err();
            let by_prepared = doc.resolve(&bad.parse().unwrap()).unwrap_err();
            assert_eq!(by_text.category(), Category::NotFound, "{bad}: {by_text}");
            assert_eq!(by_text.to_string(), by_prepared.to_string(), "{bad}");
        }
    }
    // Rows mixing integers and floats are an f64 block with an integer mask (mesh.json's
    // influences): each element comes back as the kind JSON had.
    let text = br#"{"m": [[1.0, 0], [2, 3.5], [-7, 8], [0.25, 9], [10, 11]]}"#;
    let bytes = leafwire::json::from_json(text).unwrap();
    let doc = Document::open(&bytes).unwrap();
    let json: serde_json::Value = serde_json::from_slice(text).unwrap();
    assert!(doc.pointer("/m").unwrap().kind() == leafwire::Kind::TypedArray, "a typed block");
    for i in 0..5 {
        for j in 0..2 {
            let path = format!("/m/{i}/{j}");
            let one = serde_json::to_value(doc.pointer(&path).unwrap()).unwrap();
            assert_eq!(&one, json.pointer(&path).unwrap(), "{path}");
            assert_eq!(one.is_i64(), json.pointer(&path).unwrap().is_i64(), "{path}");
        }
    }
}

/// One arena reused for many borrowed trees, reset between them, agrees with the owned
/// decode each time; typed arrays of rank above 3 (whose shapes live on the heap, freed by
/// the arena, not by the bump memory) and tables included.
#[test]
fn an_arena_reused_across_documents_gives_the_owned_decode_each_time() {
    use leafwire::{TypedArray, TypedData, Value};
    let rank5 = TypedArray::with_shape(TypedData::F64((0..48).map(f64::from).collect()), vec![2, 2, 3, 2, 2]).unwrap();
    let flat = TypedArray::with_shape(TypedData::I32(vec![1, 2, 3]), vec![3]).unwrap();
    let mut arena = leafwire::Arena::new();
    for round in 0..4i64 {
        let mut map = leafwire::Map::new();
        map.insert("round".to_owned(), Value::Int(round));
        map.insert("cube".to_owned(), Value::Typed(rank5.clone()));
        map.insert("flat".to_owned(), Value::Typed(flat.clone()));
        map.insert("rows".to_owned(), Value::Array(vec![Value::String("a".repeat(round as usize)), Value::Null, Value::Array(vec![])]));
        let value = Value::Object(map);
        let bytes = leafwire::encode(&value).unwrap();
        let tree = leafwire::decode_borrowed_in(&bytes, &arena).unwrap();
        assert!(tree == value, "round {round}");
        let leafwire::ValueRef::Typed(cube) = tree.get("cube").copied().unwrap() else { panic!("cube is typed") };
        assert_eq!(cube.shape(), vec![2, 2, 3, 2, 2]);
        let owned = leafwire::decode_borrowed(&bytes).unwrap();
        assert!(*owned.root() == value && owned.allocated_bytes() > 0);
        arena.reset();
    }
}

/// Empty arrays and objects take a short path in the decoders; it keeps the depth limit
/// exactly where the container walk has it, owned and borrowed.
#[test]
fn empty_containers_count_for_depth_like_any_other() {
    use leafwire::{Category, Value};
    for innermost in [Value::Array(vec![]), Value::Object(leafwire::Map::new())] {
        let mut v = innermost;
        for _ in 0..4 {
            v = Value::Array(vec![Value::Null, v]);
        }
        let bytes = leafwire::encode(&v).unwrap();
        assert_eq!(leafwire::decode_with(&bytes, 5).unwrap(), v);
        assert_eq!(leafwire::decode_with(&bytes, 4).unwrap_err().category(), Category::DepthLimit);
        let arena = leafwire::Arena::new();
        let root = Document::open(&bytes).unwrap().root();
        assert!(root.to_value_ref_in(&arena, 5).unwrap() == v);
        assert_eq!(root.to_value_ref_in(&arena, 4).unwrap_err().category(), Category::DepthLimit);
    }
}

/// Encoders guess each object key from the key at the same position of the previous object
/// of its level: records whose keys change shape, order or level must still be read back
/// with their own keys, and a repeated key still refused.
#[test]
fn records_of_changing_shapes_keep_their_keys() {
    let mut records = Vec::new();
    for i in 0..200 {
        let mut r = serde_json::Map::new();
        let keys = ["id", "name", "tags", "idx", "nest"];
        for k in 0..(i % 5 + 1) {
            let key = keys[(k + i / 7) % keys.len()];
            let value = if key == "nest" { serde_json::json!({"id": i, "name": [i], "x": {"name": k}}) } else { serde_json::json!(i * 10 + k) };
            r.insert(key.to_string(), value);
        }
        if i % 11 == 0 {
            r.insert(format!("only{i}"), serde_json::json!(true));
        }
        records.push(serde_json::Value::Object(r));
    }
    let doc = serde_json::json!({"records": records, "id": "top", "name": {"id": 1}});
    let text = serde_json::to_vec(&doc).unwrap();
    // JSON text through the builder, and a Value through the direct encoder.
    let from_text = leafwire::json::from_json(&text).unwrap();
    let from_value = leafwire::encode(&leafwire::json::parse(&text).unwrap()).unwrap();
    for bytes in [&from_text, &from_value] {
        let back: serde_json::Value = serde_json::from_str(&leafwire::json::to_json(bytes).unwrap()).unwrap();
        assert_eq!(back, doc);
    }
    assert_eq!(from_text, from_value);
    // And serde maps with string keys (a `serde_json::Value`), through the builder.
    let from_serde = leafwire::to_vec(&doc).unwrap();
    let back: serde_json::Value = serde_json::from_str(&leafwire::json::to_json(&from_serde).unwrap()).unwrap();
    assert_eq!(back, doc);
    let repeated = br#"[{"a": 1, "b": 2}, {"a": 1, "a": 2}]"#;
    assert_eq!(leafwire::json::from_json(repeated).unwrap_err().category(), leafwire::Category::DuplicateKey);
}

//! Selective loads of packed arrays (`Node::packed_select`, `Node::packed_select_as`):
//! every element's value under the keys, as walking the decoded document would give it,
//! whatever the values above the keys are (objects, other kinds, residual values).

use leafwire::json::parse as parse_json;
use leafwire::{decode, encode_packed, Document, PackOptions, Value};

/// The value under `keys` in `v`, `Null` where a step is not an object with that key.
fn below(v: &Value, keys: &[&str]) -> Value {
    let mut v = v.clone();
    for key in keys {
        v = match v {
            Value::Object(mut m) => m.swap_remove(*key).unwrap_or(Value::Null),
            _ => Value::Null,
        };
    }
    v
}

/// 300 records whose `a` is an object, an array, a string, null or missing, so that the
/// node above the selected keys holds several kinds.
fn mixed_records() -> String {
    let mut rows = Vec::new();
    for i in 0..300 {
        let a = match i % 6 {
            0 => format!(r#""a": {{"b": {i}, "c": "x{i}"}}, "#),
            1 => format!(r#""a": [{i}, {{"b": 1}}, [2, 3]], "#),
            2 => format!(r#""a": "text {i}", "#),
            3 => r#""a": null, "#.to_string(),
            4 => String::new(),
            _ => format!(r#""a": {{"c": "only c", "d": [{i}.5, 1.25]}}, "#),
        };
        rows.push(format!(r#"{{{a}"id": {i}, "name": "n{}"}}"#, i % 17));
    }
    format!(r#"{{"rows": [{}]}}"#, rows.join(","))
}

/// `v` as JSON text: typed and plain arrays of the same numbers compare equal.
fn text(v: &Value) -> String {
    leafwire::json::to_json(&leafwire::encode(v).unwrap()).unwrap()
}

fn packed_rows(text: &str) -> (Vec<u8>, Vec<Value>) {
    let value = parse_json(text.as_bytes()).unwrap();
    let packed = encode_packed(&value, &PackOptions::default()).unwrap();
    let rows = match decode(&packed).unwrap() {
        Value::Object(mut m) => match m.swap_remove("rows") {
            Some(Value::Array(rows)) => rows,
            other => panic!("rows: {other:?}"),
        },
        other => panic!("root: {other:?}"),
    };
    (packed, rows)
}

#[test]
fn selecting_below_a_node_of_several_kinds() {
    let (packed, rows) = packed_rows(&mixed_records());
    let doc = Document::open(&packed).unwrap();
    let node = doc.pointer("/rows").unwrap();
    assert!(node.is_packed());
    for keys in [&["a"][..], &["a", "b"], &["a", "c"], &["a", "d"], &["id"], &["a", "zz"], &["zz", "b"]] {
        let got = node.packed_select(keys).unwrap();
        let want: Vec<Value> = rows.iter().map(|r| below(r, keys)).collect();
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(text(g), text(w), "{keys:?} of row {i}");
        }
    }
}

/// Every selection of [`mixed_records`] and of records whose `a` is sometimes stored
/// whole (bytes, a big integer: residual values), read as `Value` by both selects.
#[test]
fn select_as_reads_what_select_reads() {
    let (mixed, _) = packed_rows(&mixed_records());
    let mut residual_rows = Vec::new();
    for i in 0..300i64 {
        let mut row = leafwire::Map::default();
        let a = match i % 4 {
            0 => Value::Bytes(vec![i as u8, 1, 2]),
            1 => Value::BigNum(format!("{}000000000000000000000", i)),
            2 => parse_json(format!(r#"{{"b": {i}, "c": {{"d": [1, 2, {i}]}}}}"#).as_bytes()).unwrap(),
            _ => Value::Null,
        };
        row.insert("a".into(), a);
        row.insert("id".into(), Value::Int(i));
        residual_rows.push(Value::Object(row));
    }
    let mut root = leafwire::Map::default();
    root.insert("rows".into(), Value::Array(residual_rows));
    let residual = encode_packed(&Value::Object(root), &PackOptions::default()).unwrap();
    for packed in [mixed, residual] {
        let doc = Document::open(&packed).unwrap();
        let node = doc.pointer("/rows").unwrap();
        assert!(node.is_packed());
        for keys in [&["a"][..], &["a", "b"], &["a", "c"], &["a", "c", "d"], &["a", "d"], &["id"], &["zz", "b"]] {
            let values = node.packed_select(keys).unwrap();
            let as_values: Vec<Value> = node.packed_select_as(keys).unwrap();
            assert_eq!(values.len(), as_values.len());
            for (i, (v, a)) in values.iter().zip(&as_values).enumerate() {
                assert_eq!(text(v), text(a), "{keys:?} of row {i}");
            }
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq, Clone)]
struct Properties {
    name: String,
    code: Option<String>,
    area: f64,
    tags: Vec<String>,
}

#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq, Clone)]
struct Feature {
    kind: String,
    properties: Properties,
    geometry: Vec<Vec<(f64, f64)>>,
}

#[test]
fn select_as_into_structs() {
    let features: Vec<Feature> = (0..2000)
        .map(|i| Feature {
            kind: "Feature".into(),
            properties: Properties {
                name: format!("country {}", i % 300),
                code: (i % 5 != 0).then(|| format!("C{i}")),
                area: i as f64 * 0.5,
                tags: (0..i % 3).map(|t| format!("t{t}")).collect(),
            },
            geometry: (0..i % 4).map(|r| (0..20).map(|p| (p as f64 + r as f64, i as f64 / 7.0)).collect()).collect(),
        })
        .collect();
    let packed = leafwire::to_vec_packed(&features, &PackOptions::default()).unwrap();
    let doc = Document::open(&packed).unwrap();
    let root = doc.root();
    assert!(root.is_packed());
    let got: Vec<Properties> = root.packed_select_as(&["properties"]).unwrap();
    assert_eq!(got, features.iter().map(|f| f.properties.clone()).collect::<Vec<_>>());
    let names: Vec<String> = root.packed_select_as(&["properties", "name"]).unwrap();
    assert_eq!(names[301], "country 1");
    let codes: Vec<Option<String>> = root.packed_select_as(&["properties", "code"]).unwrap();
    assert_eq!((codes[5].clone(), codes[6].clone()), (None, Some("C6".to_string())));
    let missing: Vec<Option<Properties>> = root.packed_select_as(&["nothing"]).unwrap();
    assert!(missing.iter().all(Option::is_none));
    // A type that does not fit is an error, not a default.
    let err = root.packed_select_as::<Vec<u32>>(&["properties"]).unwrap_err();
    assert!(err.to_string().contains("expected a sequence"), "{err}");
    // Not a packed array.
    let ordinary = leafwire::to_vec(&features).unwrap();
    assert!(Document::open(&ordinary).unwrap().root().packed_select_as::<Properties>(&["properties"]).is_err());
}

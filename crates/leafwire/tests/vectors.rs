//! The spec's test vectors (`spec/vectors/`): each value here is encoded and compared
//! byte for byte with `NAME.lw`, decoded back, and validated. `REGENERATE=1 cargo test
//! --test vectors` rewrites the files after a deliberate format change.
//!
//! Beside each `NAME.lw` stands `NAME.json` (the value as JSON text) when JSON can express
//! it, else `NAME.txt`: a description and a last line `value: <Python expression>` that
//! the reference reader's tests evaluate.

use std::path::PathBuf;

use leafwire::{IntMap, Map, TypedArray, TypedData, Value};

mod common;
use common::same;

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map>())
}

fn typed(data: TypedData) -> Value {
    Value::Typed(TypedArray::new(data))
}

fn shaped(data: TypedData, shape: Vec<usize>) -> Value {
    Value::Typed(TypedArray::with_shape(data, shape).unwrap())
}

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

/// (name, description, value)
fn sample_table() -> leafwire::Table {
    use leafwire::{ColumnBuilder, ElementType, Unit};
    let mut t = leafwire::TableBuilder::new();
    t.push_column(ColumnBuilder::from_slice("id", &[7i16, -1, 300]));
    let mut x = ColumnBuilder::numbers("x", ElementType::F64);
    x.push(0.5f64).unwrap();
    x.push_null();
    x.push(-3.0f64).unwrap();
    t.push_column(x);
    let mut name = ColumnBuilder::strings("name");
    name.push_str("héllo").unwrap();
    name.push_null();
    name.push_str("").unwrap();
    t.push_column(name);
    t.push_column(ColumnBuilder::from_slice("day", &[0i32, 19_000, -1]).with_unit(Unit::Date, "").unwrap());
    t.push_column(ColumnBuilder::from_slice("at", &[1_381_323_977_000i64, 0, 1]).with_unit(Unit::Millis, "UTC").unwrap());
    let mut ok = ColumnBuilder::numbers("ok", ElementType::Bool);
    for b in [1u8, 0, 1] {
        ok.push_number_bytes(&[b]).unwrap();
    }
    t.push_column(ok);
    t.finish().unwrap()
}

fn vectors() -> Vec<(&'static str, &'static str, Value)> {
    let mut deep = Value::Int(7);
    for _ in 0..100 {
        deep = Value::Array(vec![deep]);
    }
    let wide: Map = (0..40).map(|i| (format!("key{i:02}"), Value::Int(i))).collect();
    let int_map: IntMap = [(-5i64, s("neg")), (0, Value::Null), (1 << 40, Value::F64(2.5))].into_iter().collect();
    vec![
        ("null", "the root is null", Value::Null),
        ("true", "the root is true", Value::Bool(true)),
        ("false", "the root is false", Value::Bool(false)),
        ("int_zero", "integer 0", Value::Int(0)),
        ("int_small", "integers of each width in one array", Value::Array(vec![Value::Int(-1), Value::Int(300), Value::Int(-70000), Value::Int(1 << 40)])),
        ("int_min", "i64::MIN", Value::Int(i64::MIN)),
        ("int_max", "i64::MAX", Value::Int(i64::MAX)),
        ("uint_max", "u64::MAX, stored as uint", Value::UInt(u64::MAX)),
        ("uint_above_i64", "2^63, the smallest uint", Value::UInt(1 << 63)),
        ("bignum_positive", "an integer beyond u64, kept exactly", Value::BigNum("123456789012345678901234567890".into())),
        ("bignum_negative", "an integer below i64::MIN, kept exactly", Value::BigNum("-9223372036854775809".into())),
        ("f64_values", "floats in a generic array", Value::Array(vec![Value::F64(1.5), Value::F64(-0.0), Value::F64(1e300), Value::F64(5e-324), Value::Null])),
        ("f64_negative_zero", "-0.0 at the root keeps its sign", Value::F64(-0.0)),
        ("f64_nan", "NaN: JSON cannot express it", Value::F64(f64::NAN)),
        ("f64_infinities", "+inf and -inf: JSON cannot express them", Value::Array(vec![Value::F64(f64::INFINITY), Value::F64(f64::NEG_INFINITY)])),
        ("f32_value", "an f32 (0.1f32, widened when read)", Value::Array(vec![Value::F32(0.1), Value::F32(-2.5)])),
        ("string_empty", "the empty string", s("")),
        ("string_unicode", "UTF-8 text with multi-byte characters", s("héllo wörld — 日本語 🌿")),
        ("string_long", "a string longer than 127 bytes (two-byte length varint)", s(&"leaf".repeat(50))),
        ("bytes", "raw bytes: JSON cannot express them", Value::Bytes(vec![0, 1, 2, 254, 255])),
        ("array_empty", "the empty array", Value::Array(vec![])),
        ("array_at_end", "an array holding an empty array, which fills the last two bytes of the document", Value::Array(vec![Value::Array(vec![])])),
        ("array_mixed", "a generic array of mixed kinds", Value::Array(vec![Value::Null, Value::Bool(true), Value::Int(1), s("two"), Value::F64(3.5)])),
        ("object_empty", "the empty object", obj(vec![])),
        ("object_small", "a small object (linear key scan)", obj(vec![("name", s("leaf")), ("size", Value::Int(3)), ("ok", Value::Bool(true))])),
        ("object_order", "key order is insertion order, not sorted", obj(vec![("zebra", Value::Int(1)), ("apple", Value::Int(2)), ("mango", Value::Int(3))])),
        ("object_unicode_keys", "keys with non-ASCII characters and JSON Pointer specials", obj(vec![("ключ", Value::Int(1)), ("a/b", Value::Int(2)), ("m~n", Value::Int(3)), ("", Value::Int(4))])),
        ("object_wide", "an object with 40 keys, which carries a hash index", Value::Object(wide)),
        ("nested", "objects and arrays nested, sharing keys", obj(vec![
            ("a", obj(vec![("b", Value::Array(vec![obj(vec![("a", Value::Int(1))]), obj(vec![("b", Value::Null)])]))])),
            ("b", s("x")),
        ])),
        ("deep_nesting", "100 nested arrays around an integer", deep),
        ("intmap", "an integer-keyed map: JSON cannot express it", Value::IntMap(int_map)),
        ("typed_f64", "a 1-D f64 typed array", typed(TypedData::F64(vec![0.5, -1.25, 3.0]))),
        ("table_columns", "a table (§15) in an object: numbers, nullable f64, strings with a missing cell, dates, zoned date-times, bools", Value::Object([("rows".to_string(), Value::Int(3)), ("t".to_string(), Value::Table(sample_table()))].into_iter().collect())),
        ("table_empty", "a table of no columns at the root", Value::Table(leafwire::TableBuilder::new().finish().unwrap())),
        ("typed_ints", "typed arrays of each integer type", Value::Array(vec![
            typed(TypedData::I8(vec![-128, 127])),
            typed(TypedData::I16(vec![-32768, 32767])),
            typed(TypedData::I32(vec![i32::MIN, i32::MAX])),
            typed(TypedData::I64(vec![i64::MIN, i64::MAX])),
            typed(TypedData::U8(vec![0, 255])),
            typed(TypedData::U16(vec![0, 65535])),
            typed(TypedData::U32(vec![0, u32::MAX])),
            typed(TypedData::U64(vec![0, u64::MAX])),
        ])),
        ("typed_bool", "a bool typed array", typed(TypedData::Bool(vec![true, false, true]))),
        ("typed_f32", "an f32 typed array", typed(TypedData::F32(vec![1.5, -0.25]))),
        ("typed_matrix", "a 2x3 f64 matrix: one contiguous block, rank 2", shaped(TypedData::F64(vec![1.5, 2.5, 3.5, 4.5, 5.5, 6.5]), vec![2, 3])),
        ("typed_rank3", "a 2x2x2 i16 block, rank 3", shaped(TypedData::I16(vec![1, 2, 3, 4, 5, 6, 7, 8]), vec![2, 2, 2])),
        ("typed_empty_axis", "a typed array with a zero dimension keeps its type", shaped(TypedData::F64(vec![]), vec![3, 0])),
        ("typed_int_mask", "an f64 array with an integer mask: [1, 2.5, -3] reads back with ints", Value::Typed(
            TypedArray::with_int_mask(vec![1.0, 2.5, -3.0], vec![3], vec![true, false, true]).unwrap(),
        )),
        ("typed_in_object", "metadata around a column, the leafy-tree shape", obj(vec![
            ("name", s("temperature")),
            ("unit", s("C")),
            ("values", typed(TypedData::F64(vec![12.5, 13.25, 11.0, 9.75]))),
        ])),
    ]
}

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors")
}

/// The names of the `.EXT` files in spec/vectors; panics when the directory is missing or
/// holds none, so that no test passes on an empty directory.
fn files_with(ext: &str) -> Vec<String> {
    let dir = vectors_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{} is missing ({e}): REGENERATE=1 cargo test --test vectors writes it", dir.display()));
    let names: Vec<String> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == ext))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(!names.is_empty(), "{} holds no .{ext} file", dir.display());
    names
}

/// Whether JSON text says exactly what the value is (so `NAME.json` can stand for it).
fn json_expressible(v: &Value) -> bool {
    match v {
        Value::F64(x) => x.is_finite(),
        Value::F32(_) | Value::Bytes(_) | Value::IntMap(_) => false,
        Value::Array(items) => items.iter().all(json_expressible),
        Value::Object(map) => map.values().all(json_expressible),
        Value::Typed(t) => !matches!(t.data(), TypedData::F32(_)) && (0..t.len()).all(|i| json_expressible(&t.element(i))),
        _ => true,
    }
}

/// A Python expression for the value as `reference.loads` returns it.
fn python(v: &Value) -> String {
    fn float(x: f64) -> String {
        if x.is_nan() {
            "nan".into()
        } else if x.is_infinite() {
            if x > 0.0 { "inf".into() } else { "-inf".into() }
        } else {
            format!("{x:?}")
        }
    }
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True".into() } else { "False".into() },
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::BigNum(d) => d.clone(),
        Value::F64(x) => float(*x),
        Value::F32(x) => float(*x as f64),
        Value::String(s) => serde_json::to_string(s).unwrap(),
        Value::Bytes(b) => format!("b'{}'", b.iter().map(|x| format!("\\x{x:02x}")).collect::<String>()),
        Value::Array(items) => format!("[{}]", items.iter().map(python).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => format!("{{{}}}", map.iter().map(|(k, v)| format!("{}: {}", serde_json::to_string(k).unwrap(), python(v))).collect::<Vec<_>>().join(", ")),
        Value::IntMap(map) => format!("{{{}}}", map.iter().map(|(k, v)| format!("{k}: {}", python(v))).collect::<Vec<_>>().join(", ")),
        Value::Typed(t) => python(&t.to_nested()),
        // A table reads as an object of columns (spec §15.2).
        Value::Table(t) => python(&t.view().to_value().unwrap()),
    }
}


#[test]
fn vectors_match_the_encoder_and_decode_back() {
    let dir = vectors_dir();
    let regenerate = std::env::var_os("REGENERATE").is_some();
    if regenerate {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let table = vectors();
    for (name, description, value) in &table {
        let bytes = leafwire::encode(value).unwrap();
        let lw = dir.join(format!("{name}.lw"));
        if regenerate {
            std::fs::write(&lw, &bytes).unwrap();
            let (json, txt) = (dir.join(format!("{name}.json")), dir.join(format!("{name}.txt")));
            let _ = std::fs::remove_file(&json);
            let _ = std::fs::remove_file(&txt);
            if json_expressible(value) {
                std::fs::write(json, leafwire::json::to_json(&bytes).unwrap() + "\n").unwrap();
            } else {
                std::fs::write(txt, format!("{description}\nvalue: {}\n", python(value))).unwrap();
            }
        }
        let stored = std::fs::read(&lw).unwrap_or_else(|_| panic!("{name}: missing vector (REGENERATE=1 writes it)"));
        assert!(stored == bytes, "{name}: the encoder no longer produces the stored bytes");
        leafwire::validate(&stored).unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = leafwire::decode(&stored).unwrap();
        assert!(same(&back, value), "{name}: decoded {back:?}");
        assert!(leafwire::encode(&back).unwrap() == stored, "{name}: re-encoding is not byte-identical");
    }
    let on_disk = files_with("lw").len();
    assert_eq!(on_disk, table.len(), "spec/vectors has .lw files no table entry produces");
}

#[test]
fn json_vectors_read_back_as_their_json() {
    let table = vectors();
    let json_files = files_with("json");
    for name in &json_files {
        assert!(table.iter().any(|(n, _, _)| n == name), "spec/vectors/{name}.json has no table entry");
    }
    for (name, _, value) in table {
        let path = vectors_dir().join(format!("{name}.json"));
        let Ok(text) = std::fs::read(&path) else {
            assert!(vectors_dir().join(format!("{name}.txt")).is_file(), "{name}: neither {name}.json nor {name}.txt");
            continue;
        };
        let bytes = std::fs::read(vectors_dir().join(format!("{name}.lw"))).unwrap();
        let expected: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let actual: serde_json::Value = serde_json::from_str(&leafwire::json::to_json(&bytes).unwrap()).unwrap();
        assert_eq!(actual, expected, "{name}");
        // JSON → Leafwire of the vector's JSON decodes to the same JSON value again.
        let again = leafwire::json::from_json(&text).unwrap();
        let round: serde_json::Value = serde_json::from_str(&leafwire::json::to_json(&again).unwrap()).unwrap();
        assert_eq!(round, expected, "{name}: JSON → Leafwire → JSON");
        let _ = value;
    }
}

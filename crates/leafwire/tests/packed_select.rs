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

//! Prepared pointers resolve exactly as text pointers do, on every path of a document
//! (objects, arrays, intmaps, typed arrays of rank 1-3, escaped keys), and fail alike.

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
    assert!(leafwire::decode_borrowed(&bytes).unwrap() == owned);
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

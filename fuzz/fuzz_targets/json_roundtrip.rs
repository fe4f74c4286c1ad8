//! Arbitrary bytes as JSON text: whatever `from_json` accepts must validate, convert back
//! to JSON with the same meaning (checked against serde_json), and encode canonically.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;

fuzz_target!(|data: &[u8]| {
    let Ok(encoded) = leafwire::json::from_json(data) else { return };
    leafwire::validate(&encoded).expect("from_json writes valid documents");
    // JSON has no NaN or infinity, so every document made from JSON has a JSON form.
    let json = leafwire::json::to_json(&encoded).expect("to_json of a document made from JSON");

    // Same meaning as the input, whenever serde_json reads the input too (it refuses
    // numbers beyond the f64 range, lone surrogates, ...).
    if let Ok(original) = serde_json::from_slice::<Json>(data) {
        let back: Json = serde_json::from_str(&json).expect("to_json writes valid JSON");
        assert!(same(&original, &back), "meaning changed:\n  input  {original}\n  output {back}");
    }

    // decode → encode reproduces the canonical bytes, and JSON → Leafwire → JSON →
    // Leafwire is a fixed point.
    let value = leafwire::decode(&encoded).expect("decode a valid document");
    assert!(leafwire::encode(&value).expect("encode a decoded value") == encoded, "decode → encode changed the bytes");
    let again = leafwire::json::from_json(json.as_bytes()).expect("from_json reads what to_json writes");
    assert!(again == encoded, "JSON → Leafwire → JSON → Leafwire changed the bytes; JSON was {json}");
});

/// JSON equality where numbers keep their kind (integer or float), except that
/// serde_json reads the integer text `-0` as the float -0.0 while the spec makes it the
/// integer 0.
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.is_f64(), y.is_f64()) {
            (false, false) => x == y,
            (true, true) => x.as_f64() == y.as_f64(),
            _ => x.as_f64() == Some(0.0) && y.as_f64() == Some(0.0),
        },
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Json::Object(x), Json::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}

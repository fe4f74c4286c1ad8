//! Packed documents (spec §13) through the public API: encode, validate, decode, JSON out,
//! length, elements and pointers, on generated data and (when present) the shared corpus.

use leafwire::json::{parse as parse_json, to_json};
use leafwire::{decode, encode, encode_packed, validate, Document, PackOptions, Value};

fn json(text: &str) -> Value {
    parse_json(text.as_bytes()).unwrap()
}

/// A GraphQL-like response: a small header object around 500 records with optional
/// fields, nulls, mixed types, nested arrays and coordinate pairs.
fn records() -> String {
    let mut s = String::from(r#"{"meta": {"count": 500, "source": "test"}, "data": {"rows": ["#);
    for i in 0..500 {
        if i > 0 {
            s.push(',');
        }
        let price = if i % 7 == 0 { "null".to_string() } else { format!("\"{}\"", i * 1000) };
        let tags = (0..i % 4).map(|t| format!("\"t{t}\"")).collect::<Vec<_>>().join(",");
        let extra = if i % 3 == 0 { format!(r#", "extra": {{"deep": [{i}, {{"x": true}}]}}"#) } else { String::new() };
        s += &format!(
            r#"{{"id": {i}, "name": "item {}", "price": {price}, "tags": [{tags}], "at": [{i}.25, -{i}.5], "mixed": {}{extra}}}"#,
            i % 37,
            if i % 2 == 0 { format!("{i}") } else { format!("\"s{i}\"") }
        );
    }
    s + "]}}"
}

#[test]
fn packed_documents_read_back_as_the_ordinary_ones() {
    let value = json(&records());
    let ordinary = encode(&value).unwrap();
    for options in [PackOptions::default(), PackOptions { zstd_level: Some(3), lossy_step: None }] {
        let packed = encode_packed(&value, &options).unwrap();
        assert!(packed.len() * 2 < ordinary.len(), "{} B packed against {} B", packed.len(), ordinary.len());
        assert_eq!(u16::from_le_bytes([packed[10], packed[11]]) & 1, 1, "feature bit 0");
        let stats = validate(&packed).unwrap();
        assert_eq!(stats.packed_arrays, 1);
        assert_eq!(to_json(&packed).unwrap(), to_json(&ordinary).unwrap());
        assert_eq!(to_json(&encode(&decode(&packed).unwrap()).unwrap()).unwrap(), to_json(&ordinary).unwrap());

        let doc = Document::open(&packed).unwrap();
        let rows = doc.pointer("/data/rows").unwrap();
        assert!(rows.is_packed());
        assert_eq!(rows.kind(), leafwire::Kind::Array);
        assert_eq!(rows.len().unwrap(), 500);
        assert_eq!(doc.pointer("/meta/count").unwrap().as_i64().unwrap(), 500);
        let err = doc.pointer("/data/rows/3/name").unwrap_err();
        assert_eq!(err.category(), leafwire::Category::Unsupported);
        assert_eq!(doc.pointer_value("/data/rows/3/name").unwrap(), Value::String("item 3".into()));
        assert_eq!(doc.pointer_value("/data/rows/6/extra/deep/1/x").unwrap(), Value::Bool(true));
        assert_eq!(doc.pointer_value("/data/rows/7/price").unwrap(), Value::Null);
        assert!(doc.pointer_value("/data/rows/500").is_err());
        assert_eq!(doc.pointer_value("/meta/source").unwrap(), Value::String("test".into()));
    }
}

#[test]
fn small_arrays_stay_ordinary_and_a_packed_root_works() {
    let small = json(r#"{"a": [1, 2, 3], "b": "x"}"#);
    assert_eq!(encode_packed(&small, &PackOptions::default()).unwrap(), encode(&small).unwrap());
    let root = json(&format!("[{}]", (0..1000).map(|i| format!("{{\"v\": {}}}", i * 3)).collect::<Vec<_>>().join(",")));
    let packed = encode_packed(&root, &PackOptions::default()).unwrap();
    validate(&packed).unwrap();
    assert_eq!(to_json(&packed).unwrap(), to_json(&encode(&root).unwrap()).unwrap());
    assert_eq!(Document::open(&packed).unwrap().pointer_value("/999/v").unwrap(), Value::Int(2997));
}

#[test]
fn the_feature_bit_and_the_tag_go_together() {
    let value = json(&records());
    let mut packed = encode_packed(&value, &PackOptions::default()).unwrap();
    packed[10] &= !1;
    assert!(validate(&packed).is_err(), "a packed array without feature bit 0");
    let mut ordinary = encode(&value).unwrap();
    ordinary[10] |= 1;
    assert!(validate(&ordinary).is_err(), "feature bit 0 without a packed array");
}

#[test]
fn damaged_packed_documents_are_errors() {
    let packed = encode_packed(&json(&records()), &PackOptions::default()).unwrap();
    // Every byte changed in turn, past the header: an error or a value, never a panic.
    for i in (112..packed.len()).step_by(7) {
        let mut bad = packed.clone();
        bad[i] ^= 0x5A;
        let _ = validate(&bad);
        let _ = decode(&bad);
        let _ = to_json(&bad);
    }
    for cut in (113..packed.len()).step_by(97) {
        assert!(validate(&packed[..cut]).is_err());
    }
}

/// The shared corpus (skipped without it): every file packs, validates and reads back
/// as the same JSON.
#[test]
fn shared_corpus_round_trips_packed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let files = ["graphql/decentraland_marketplace_orders.json", "geojson/countries.geojson"];
    for name in files {
        let Ok(text) = std::fs::read(dir.join(name)) else { continue };
        let value = parse_json(&text).unwrap();
        let ordinary = encode(&value).unwrap();
        let packed = encode_packed(&value, &PackOptions::default()).unwrap();
        validate(&packed).unwrap();
        assert_eq!(to_json(&packed).unwrap(), to_json(&ordinary).unwrap(), "{name}");
        eprintln!("{name}: {} B ordinary, {} B packed", ordinary.len(), packed.len());
    }
}

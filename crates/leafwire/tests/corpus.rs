//! Every shared dataset round-trips JSON → Leafwire → JSON to an equal JSON value, the
//! document validates, and its size stays under the compact JSON text.

use std::path::PathBuf;

fn shared_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = shared_data();
    let mut files = Vec::new();
    for dir in ["json", "graphql"] {
        let mut entries: Vec<_> = std::fs::read_dir(root.join(dir)).expect("../shared/data is missing").map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            files.push((path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap()));
        }
    }
    let gz = std::fs::File::open(root.join("geojson/countries.geojson.gz")).unwrap();
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut text).unwrap();
    files.push(("countries.geojson".into(), text));
    files
}

#[test]
fn corpus_round_trips_through_json() {
    for (name, text) in corpus() {
        let expected: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let compact = serde_json::to_vec(&expected).unwrap();
        let bytes = leafwire::json::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        leafwire::validate(&bytes).unwrap_or_else(|e| panic!("{name}: invalid: {e}"));
        let back = leafwire::json::to_json(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let actual: serde_json::Value = serde_json::from_str(&back).unwrap();
        assert!(actual == expected, "{name}: JSON value changed in the round trip");
        assert!(bytes.len() <= compact.len(), "{name}: {} bytes, compact JSON {}", bytes.len(), compact.len());
        eprintln!("{name:40} json {:>10} leafwire {:>10} ({:.3})", compact.len(), bytes.len(), bytes.len() as f64 / compact.len() as f64);
    }
}

#[test]
fn corpus_decodes_to_values_that_reencode_identically() {
    for (name, text) in corpus() {
        let bytes = leafwire::json::from_json(&text).unwrap();
        let value = leafwire::decode(&bytes).unwrap();
        let again = leafwire::encode(&value).unwrap();
        assert!(again == bytes, "{name}: decode + encode is not byte-identical");
    }
}

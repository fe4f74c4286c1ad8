//! Every corpus file round-trips JSON → Leafwire → JSON to an equal JSON value, the
//! document validates, and its size stays under the compact JSON text. Runs on the
//! in-repository sample, and on the full `../shared/data` as well when it is present
//! (`common::corpus` says which on stderr).

mod common;

use common::corpus::corpora;

#[test]
fn corpus_round_trips_through_json() {
    for corpus in corpora() {
        for (name, text) in common::json_texts(&corpus) {
            let expected: serde_json::Value = serde_json::from_slice(&text).unwrap();
            let compact = serde_json::to_vec(&expected).unwrap();
            let bytes = leafwire::json::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            leafwire::validate(&bytes).unwrap_or_else(|e| panic!("{name}: invalid: {e}"));
            let back = leafwire::json::to_json(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            let actual: serde_json::Value = serde_json::from_str(&back).unwrap();
            assert!(actual == expected, "{name}: JSON value changed in the round trip");
            // The direct writer writes the text serde_json writes from the document.
            let through_serde = serde_json::to_string(&leafwire::Document::open(&bytes).unwrap().root()).unwrap();
            assert!(back == through_serde, "{name}: json::to_json differs from serde_json's text of the document");
            assert!(bytes.len() <= compact.len(), "{name}: {} bytes, compact JSON {}", bytes.len(), compact.len());
            eprintln!("{name:50} json {:>10} leafwire {:>10} ({:.3})", compact.len(), bytes.len(), bytes.len() as f64 / compact.len() as f64);
        }
    }
}

#[test]
fn corpus_decodes_to_values_that_reencode_identically() {
    for corpus in corpora() {
        for (name, text) in common::json_texts(&corpus) {
            let bytes = leafwire::json::from_json(&text).unwrap();
            let value = leafwire::decode(&bytes).unwrap();
            let again = leafwire::encode(&value).unwrap();
            assert!(again == bytes, "{name}: decode + encode is not byte-identical");
            let tree = leafwire::decode_borrowed(&bytes).unwrap();
            let borrowed = tree.root();
            assert!(*borrowed == value, "{name}: decode_borrowed differs from decode");
            assert!(borrowed.to_value() == value, "{name}: ValueRef::to_value differs from decode");
        }
    }
}

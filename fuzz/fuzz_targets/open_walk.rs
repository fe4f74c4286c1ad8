//! Arbitrary bytes as a Leafwire document: opening, walking every accessor, decoding,
//! JSON output and validation must return errors, never panic, hang or run out of memory.

#![no_main]

use leafwire::{AlignedBytes, Category, Document};
use libfuzzer_sys::fuzz_target;

mod common;
use common::{Walk, POINTERS};

/// Work units (nodes, elements, string bytes) one walk may spend. The lazy reader does
/// not detect shared subtrees (spec §9), so a tiny unvalidated document can describe an
/// exponentially large tree; the walk stops at this budget instead.
const BUDGET: usize = 50_000;

fuzz_target!(|data: &[u8]| common::guard(|| check(data)));

fn check(data: &[u8]) {
    // 8-aligned, so zero-copy slices of typed arrays can succeed.
    let bytes = AlignedBytes::new(data);
    let Ok(doc) = Document::open(&bytes) else { return };
    let _ = (doc.record(), doc.key_count(), doc.as_bytes().len());
    for pointer in POINTERS {
        if let Ok(node) = doc.pointer(pointer) {
            let _ = (node.kind(), node.len());
        }
    }
    let mut walk = Walk::new(BUDGET);
    walk.node(&doc.root(), 0);
    let validated = leafwire::validate(&bytes);
    // Decoding costs as much as a full walk: run it only on trees the walk finished.
    if walk.budget == 0 {
        return;
    }
    let value = doc.root().to_value();
    // The borrowed decode (containers in an arena) reads exactly what the owned one reads;
    // it refuses packed blocks (nothing to borrow) and nothing else the owned one accepts.
    match (&value, leafwire::decode_borrowed(&bytes)) {
        (Ok(owned), Ok(borrowed)) => assert!(
            leafwire::encode(&borrowed.root().to_value()).ok() == leafwire::encode(owned).ok(),
            "the borrowed and owned decodes differ"
        ),
        (Ok(_), Err(e)) => assert_eq!(e.category(), Category::Unsupported, "only the owned decode accepted it: {e}"),
        (Err(_), Ok(_)) => panic!("only the borrowed decode accepted it"),
        (Err(_), Err(_)) => {}
    }
    let json = leafwire::json::to_json(&bytes);
    if validated.is_ok() {
        // A valid document decodes; its value re-encodes into a valid canonical document
        // that is a fixed point of decode → encode (bytes compared, so NaN is fine).
        let value = value.expect("a validated document decodes");
        let canonical = match leafwire::encode(&value) {
            Ok(c) => c,
            Err(e) if common::shape_rows_exceed_canonical_length(&e) => return,
            Err(e) => panic!("a decoded value does not encode: {e}"),
        };
        leafwire::validate(&canonical).expect("the encoder writes valid documents");
        let again = leafwire::decode(&canonical).expect("a canonical document decodes");
        assert_eq!(leafwire::encode(&again).expect("re-encode"), canonical, "canonical encoding is not a fixed point");
        if let Ok(json) = json {
            // Typed rows add JSON nesting, so only the depth limit may refuse the text.
            match leafwire::json::from_json(json.as_bytes()) {
                Ok(reparsed) => drop(leafwire::validate(&reparsed).expect("from_json writes valid documents")),
                Err(e) => assert_eq!(e.category(), Category::DepthLimit, "from_json refused to_json output: {e}"),
            }
        }
    }
}


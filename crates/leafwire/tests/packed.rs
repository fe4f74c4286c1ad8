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
    for options in [PackOptions::default(), PackOptions { zstd_level: Some(3), lossy_step: None, ..Default::default() }] {
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
        // Selective load: one field of every record, from its columns only.
        let names = rows.packed_select(&["name"]).unwrap();
        assert_eq!(names.len(), 500);
        assert_eq!(names[3], Value::String("item 3".into()));
        let deep = rows.packed_select(&["extra", "deep"]).unwrap();
        assert_eq!(deep[3], doc.pointer_value("/data/rows/3/extra/deep").unwrap());
        assert_eq!(deep[1], Value::Null);
        let at = rows.packed_select(&["at"]).unwrap();
        assert_eq!(at[2], doc.pointer_value("/data/rows/2/at").unwrap());
        assert!(matches!(at[2], Value::Typed(_)), "numbers typed as JSON conversion types them");
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

/// Typed arrays come back with their element type: those that decoding would retype
/// (an i64 array of small numbers, f32, bool) are not shredded.
#[test]
fn typed_arrays_keep_their_element_type() {
    use leafwire::{TypedArray, TypedData};
    let typed = |d: TypedData| Value::Typed(TypedArray::new(d));
    let value = Value::Object(
        [
            ("i64_small".to_string(), typed(TypedData::I64((0..100).collect()))),
            ("i16".to_string(), typed(TypedData::I16((0..100).map(|i| i * 300).collect()))),
            ("f32".to_string(), typed(TypedData::F32((0..100).map(|i| i as f32 * 0.5).collect()))),
            ("f64".to_string(), typed(TypedData::F64((0..100).map(|i| i as f64 * 0.25).collect()))),
            ("rows".to_string(), Value::Array((0..40).map(|i| typed(TypedData::I64(vec![i, i << 40]))).collect())),
        ]
        .into_iter()
        .collect(),
    );
    let packed = encode_packed(&value, &PackOptions::default()).unwrap();
    validate(&packed).unwrap();
    let back = decode(&packed).unwrap();
    assert_eq!(back, decode(&encode(&value).unwrap()).unwrap());
}

/// A configuration-like document: objects of unique keys and repeated documentation text,
/// which shreds into columns of one or two values each (spec §13.3's residual forms).
fn service_definition() -> Value {
    let shapes: Vec<String> = (0..120)
        .map(|i| {
            format!(
                r#""Shape{i}": {{"type": "structure", "members": {{"Field{i}": {{"shape": "Shape{}", "documentation": "<p>The name of the bucket that holds shape {i}, as the service returns it.</p>"}}}}, "required": ["Field{i}"]}}"#,
                (i + 1) % 120
            )
        })
        .collect();
    json(&format!(r#"{{"version": "2.0", "metadata": {{"protocol": "rest-xml", "id": "S3"}}, "shapes": {{{}}}}}"#, shapes.join(", ")))
}

#[test]
fn what_does_not_shred_is_kept_whole_and_reads_as_before() {
    let value = service_definition();
    let plain = encode(&value).unwrap();
    let packed = encode_packed(&value, &PackOptions::default()).unwrap();
    let columns = encode_packed(&value, &PackOptions { columns_only: true, ..PackOptions::default() }).unwrap();
    assert!(packed.len() < columns.len(), "kept whole: {} bytes, in columns: {}", packed.len(), columns.len());
    for bytes in [&packed, &columns] {
        validate(bytes).unwrap();
        assert_eq!(to_json(bytes).unwrap(), to_json(&plain).unwrap());
        let doc = Document::open(bytes).unwrap();
        assert_eq!(doc.pointer_value("/shapes/Shape7/members/Field7/shape").unwrap(), Value::String("Shape8".into()));
        assert_eq!(doc.pointer_value("/metadata/id").unwrap(), Value::String("S3".into()));
        assert_eq!(leafwire::decode(bytes).unwrap(), leafwire::decode(&plain).unwrap());
    }
    // The root in the whole form (§13.7): its keys and length read by decoding it.
    let root = Document::open(&packed).unwrap().root();
    assert!(root.is_packed());
    assert_eq!(root.packed_keys().unwrap(), vec!["version", "metadata", "shapes"]);
    assert_eq!(root.len().unwrap(), 3);
    assert_eq!(root.packed_entry("version").unwrap(), Value::String("2.0".into()));
    // Columns only: the root stays an object and the shapes a packed object of entries.
    let root = Document::open(&columns).unwrap().root();
    assert!(!root.is_packed());
    assert!(root.get("shapes").unwrap().packed_columns().unwrap().len() > 1);
}

#[test]
fn a_group_of_records_that_compresses_better_as_text_is_kept_whole() {
    let records: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"id": "item-{i}", "attr_{i}": {{"on": {}}}, "text": "<p>Item {i} is sold by the piece and shipped within two days.</p>"}}"#, i % 2 == 0))
        .collect();
    let value = json(&format!("[{}]", records.join(",")));
    let packed = encode_packed(&value, &PackOptions::default()).unwrap();
    let columns = encode_packed(&value, &PackOptions { columns_only: true, ..PackOptions::default() }).unwrap();
    assert!(packed.len() < columns.len());
    let root = Document::open(&packed).unwrap().root();
    assert_eq!(root.packed_columns().unwrap().len(), 1, "the residual form: one column of whole elements");
    let plain = Document::open(&encode(&value).unwrap()).unwrap().pointer_value("/299").unwrap();
    assert_eq!(root.packed_element(299).unwrap(), plain);
    assert_eq!(to_json(&packed).unwrap(), to_json(&encode(&value).unwrap()).unwrap());
}

mod common;

/// `pack` (and so `to_vec_packed` and `from_json_packed`) reads a document's borrowed tree
/// where `encode_packed` reads an owned `Value`: both must write the same bytes, with every
/// option, on the corpora (the shared one too when present, gzipped files included),
/// the records above and random values.
#[test]
fn packing_a_document_writes_what_packing_its_value_writes() {
    let options = [
        PackOptions::default(),
        PackOptions { zstd_level: Some(3), ..Default::default() },
        PackOptions { lossy_step: Some(-10), ..Default::default() },
        PackOptions { columns_only: true, ..Default::default() },
    ];
    let mut texts = vec![("records".to_string(), records().into_bytes())];
    for c in common::corpus::corpora() {
        texts.extend(common::json_texts(&c));
    }
    for (name, text) in &texts {
        let document = leafwire::json::from_json(text).unwrap();
        let value = decode(&document).unwrap();
        for (i, o) in options.iter().enumerate() {
            // The countries take seconds per option: the default is enough for them.
            if i > 0 && text.len() > 4 << 20 {
                continue;
            }
            let packed = leafwire::pack(&document, o).unwrap();
            assert!(packed == encode_packed(&value, o).unwrap(), "{name}, options {i}");
            if i == 0 {
                // A packed document packs again to itself.
                assert!(leafwire::pack(&packed, o).unwrap() == packed, "{name}: packed twice");
                // Typed arrays are read in place where the bytes are 8-aligned in memory,
                // and copied where not: the same bytes either way.
                let mut shifted = vec![0u8; document.len() + 1];
                shifted[1..].copy_from_slice(&document);
                assert!(leafwire::pack(&shifted[1..], o).unwrap() == packed, "{name}: misaligned");
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn random_documents_pack_as_their_values_do(values in proptest::collection::vec(common::value(), 0..80)) {
        let document = encode(&Value::Array(values)).unwrap();
        let value = decode(&document).unwrap();
        let options = PackOptions::default();
        proptest::prop_assert!(leafwire::pack(&document, &options).unwrap() == encode_packed(&value, &options).unwrap());
    }
}

/// Instance types as a cloud's schema lists them per region: families, generations and
/// sizes, the same few hundred names in every list.
fn instance_types() -> Vec<String> {
    let sizes = ["large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal"];
    ["c", "m", "r", "t", "x", "z", "i", "d"]
        .iter()
        .flat_map(|family| (3..8).flat_map(move |generation| ["", "a", "d", "n"].map(move |variant| format!("{family}{generation}{variant}"))))
        .flat_map(|kind| sizes.map(|size| format!("\"{kind}.{size}\"")))
        .collect()
}

#[test]
fn groups_kept_whole_that_repeat_one_another_take_the_root_whole() {
    let list = instance_types().join(", ");
    let regions: Vec<String> = (0..24).map(|i| format!(r#""region-{i}": {{"enum": [{list}]}}"#)).collect();
    let value = json(&format!("{{{}}}", regions.join(", ")));
    let one_region = json(&format!(r#"{{"region-0": {{"enum": [{list}]}}}}"#));
    let packed = encode_packed(&value, &PackOptions::default()).unwrap();
    let alone = encode_packed(&one_region, &PackOptions::default()).unwrap();
    // Each list alone is kept whole as JSON; 24 of them cost little more than one when the
    // root is kept whole, since zstd finds each list repeated.
    let root = Document::open(&packed).unwrap().root();
    assert!(root.is_packed(), "the root in the whole form");
    assert!(packed.len() < 2 * alone.len(), "24 regions: {} bytes, one: {}", packed.len(), alone.len());
    validate(&packed).unwrap();
    assert_eq!(decode(&packed).unwrap(), value);
    let doc = Document::open(&packed).unwrap();
    assert_eq!(doc.pointer_value("/region-17/enum/5").unwrap(), Value::String("c3.12xlarge".into()));
}

/// One group kept whole with little beside it: the root stays an object, readable in
/// place (the whole form would gain about 1 % for 40 % more encode time).
#[test]
fn one_group_kept_whole_leaves_the_root_an_object() {
    let records: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"id": "item-{i}", "attr_{i}": {{"on": {}}}, "text": "<p>Item {i} is sold by the piece and shipped within two days.</p>"}}"#, i % 2 == 0))
        .collect();
    let value = json(&format!(r#"{{"count": 300, "items": [{}]}}"#, records.join(",")));
    let packed = encode_packed(&value, &PackOptions::default()).unwrap();
    let root = Document::open(&packed).unwrap().root();
    assert!(!root.is_packed());
    assert_eq!(root.get("items").unwrap().packed_columns().unwrap().len(), 1, "the items kept whole");
    assert_eq!(decode(&packed).unwrap(), value);
}

//! Packed objects (spec §13.7): objects whose keys are data are packed as the array of
//! their entries, read back exactly, looked up by key, validated, and left alone when small.

use std::collections::BTreeMap;

use leafwire::json::{parse, to_json};
use leafwire::{decode, encode, encode_packed, from_slice_owned, validate, Category, Document, PackOptions, Value};

/// A registry of plugins by name (update-center's shape) beside a small header object.
fn registry(n: usize) -> String {
    let plugins: Vec<String> = (0..n)
        .map(|i| {
            let deps: Vec<String> = (0..i % 4).map(|d| format!(r#"{{"name": "plugin-{}", "optional": {}}}"#, (i + d) % n, d % 2 == 0)).collect();
            format!(
                r#""plugin-{i}": {{"name": "plugin-{i}", "version": "{}.{}", "url": "https://updates.example.org/download/plugins/plugin-{i}/{}.{}/plugin-{i}.hpi", "size": {}, "dependencies": [{}]}}"#,
                i % 7,
                i % 13,
                i % 7,
                i % 13,
                10_000 + i * 37,
                deps.join(", ")
            )
        })
        .collect();
    format!(r#"{{"id": "default", "version": 1, "plugins": {{{}}}}}"#, plugins.join(", "))
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Plugin {
    name: String,
    version: String,
    size: u64,
}

#[derive(serde::Deserialize, Debug)]
struct Registry {
    id: String,
    plugins: BTreeMap<String, Plugin>,
}

#[test]
fn a_map_of_records_packs_as_an_object_and_reads_back_exactly() {
    for zstd_level in [None, Some(3)] {
        let text = registry(300);
        let value = parse(text.as_bytes()).unwrap();
        let options = PackOptions { zstd_level, lossy_step: None, ..Default::default() };
        let bytes = encode_packed(&value, &options).unwrap();
        let plain = encode(&value).unwrap();
        assert!(bytes.len() * 3 < plain.len(), "{} B packed, {} B plain", bytes.len(), plain.len());
        let stats = validate(&bytes).unwrap();
        assert_eq!((stats.packed_objects, stats.packed_arrays), (1, 0));

        let doc = Document::open(&bytes).unwrap();
        let plugins = doc.root().get("plugins").unwrap();
        assert!(plugins.is_packed());
        assert_eq!(plugins.kind(), leafwire::Kind::Object);
        assert_eq!(plugins.len().unwrap(), 300);
        let keys = plugins.packed_keys().unwrap();
        assert_eq!(keys.len(), 300);
        assert_eq!(keys[0], "plugin-0");
        assert_eq!(keys[299], "plugin-299");

        // Whole reads: decode, JSON, serde.
        assert_eq!(decode(&bytes).unwrap(), decode(&plain).unwrap());
        assert_eq!(to_json(&bytes).unwrap(), to_json(&plain).unwrap());
        let typed: Registry = from_slice_owned(&bytes).unwrap();
        assert_eq!(typed.id, "default");
        assert_eq!(typed.plugins.len(), 300);
        assert_eq!(typed.plugins["plugin-42"], Plugin { name: "plugin-42".into(), version: "0.3".into(), size: 10_000 + 42 * 37 });

        // Lookups: one entry, a path below it, a missing key.
        assert_eq!(doc.pointer_value("/plugins/plugin-42/size").unwrap(), Value::Int(10_000 + 42 * 37));
        assert_eq!(
            doc.pointer_value("/plugins/plugin-5/dependencies/0/name").unwrap(),
            Value::String("plugin-5".into())
        );
        let ordinary = Document::open(&plain).unwrap();
        assert_eq!(plugins.packed_entry("plugin-299").unwrap(), ordinary.pointer_value("/plugins/plugin-299").unwrap());
        let missing = doc.pointer_value("/plugins/plugin-300").unwrap_err();
        assert_eq!(missing.category(), Category::NotFound);
        // Lazy steps cannot go inside: an error that says how to read it.
        assert_eq!(plugins.get("plugin-1").unwrap_err().category(), Category::Unsupported);
    }
}

/// Whether `bytes` holds no packed object in the entries form: none at all, or only its
/// root in the whole form (one column: the object kept whole, §13.7).
fn no_entries_group(bytes: &[u8]) -> bool {
    let root = Document::open(bytes).unwrap().root();
    match validate(bytes).unwrap().packed_objects {
        0 => true,
        1 => root.is_packed() && root.packed_columns().unwrap().len() == 1,
        _ => false,
    }
}

#[test]
fn small_objects_and_objects_inside_groups_stay_as_they_are() {
    // 31 entries: keys are a schema, not data. Below the root such an object stays a
    // container; the root may take the whole form (§13.7) when that is smaller, which
    // keeps no column per entry either.
    let fields: Vec<String> = (0..31).map(|i| format!(r#""field_{i}": [{i}, {}, {}]"#, i + 1, i + 2)).collect();
    let object = format!("{{{}}}", fields.join(", "));
    let value = parse(format!(r#"{{"config": {object}, "name": "x"}}"#).as_bytes()).unwrap();
    let bytes = encode_packed(&value, &PackOptions::default()).unwrap();
    assert!(no_entries_group(&bytes), "an inner object of 31 entries stays a container");
    let value = parse(object.as_bytes()).unwrap();
    let bytes = encode_packed(&value, &PackOptions::default()).unwrap();
    assert!(no_entries_group(&bytes), "no entries form for a schema");
    assert_eq!(to_json(&bytes).unwrap(), to_json(&leafwire::encode(&value).unwrap()).unwrap());
    // 40 entries of one scalar each: fewer than 64 scalars besides the keys.
    let scalars: Vec<String> = (0..40).map(|i| format!(r#""k{i}": {i}"#)).collect();
    let value = parse(format!("{{{}}}", scalars.join(", ")).as_bytes()).unwrap();
    assert!(no_entries_group(&encode_packed(&value, &PackOptions::default()).unwrap()));
    // A map inside the records of a packed array is part of that array's group.
    let rows: Vec<String> = (0..50)
        .map(|r| format!("{{{}}}", (0..40).map(|k| format!(r#""user{}": {k}"#, r * 40 + k)).collect::<Vec<_>>().join(", ")))
        .collect();
    let value = parse(format!("[{}]", rows.join(", ")).as_bytes()).unwrap();
    let stats = validate(&encode_packed(&value, &PackOptions::default()).unwrap()).unwrap();
    assert_eq!((stats.packed_arrays, stats.packed_objects), (1, 0));
}

#[test]
fn unpacking_gives_the_ordinary_document() {
    let value = parse(registry(80).as_bytes()).unwrap();
    let packed = encode_packed(&value, &PackOptions::default()).unwrap();
    let unpacked = leafwire::json::from_json(to_json(&packed).unwrap().as_bytes()).unwrap();
    assert_eq!(unpacked, leafwire::json::from_json(registry(80).as_bytes()).unwrap());
}

#[test]
fn damaged_packed_objects_fail_cleanly() {
    let value = parse(registry(60).as_bytes()).unwrap();
    let bytes = encode_packed(&value, &PackOptions { zstd_level: Some(3), lossy_step: None, ..Default::default() }).unwrap();
    let start = Document::open(&bytes).unwrap().root().get("plugins").unwrap().block_range().unwrap().unwrap().start as usize;
    for at in (start..bytes.len()).step_by(7) {
        let mut b = bytes.clone();
        b[at] ^= 0x5A;
        // An error or some value; never a panic. Lookups likewise.
        let _ = decode(&b);
        if let Ok(doc) = Document::open(&b) {
            let _ = doc.pointer_value("/plugins/plugin-7/url");
        }
        let _ = decode(&b[..at]);
    }
}

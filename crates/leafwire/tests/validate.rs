//! The validator's rules on keys (spec §9): each test breaks one rule in an otherwise
//! valid document and expects a `Malformed` error that names it. Also: the reader's block
//! ranges (`Node::block_range`) against the bytes validation reaches.

use leafwire::{Category, Map, Value};

/// keyhash of spec §4.2, written out independently of the crate's.
fn key_hash(key: &[u8]) -> u64 {
    let mut h = (key.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for chunk in key.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    h
}

fn home_bucket(hash: u64, table: usize) -> usize {
    (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - table.trailing_zeros())) as usize
}

fn u32_at(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
}

/// Where the dictionary at 112 keeps its key bytes and its table.
struct DictLayout {
    count: usize,
    bytes_at: usize,
    table_at: usize,
    table_size: usize,
}

fn dict_layout(bytes: &[u8]) -> DictLayout {
    let (count, cap, bytes_cap, table_size) = (u32_at(bytes, 112), u32_at(bytes, 116), u32_at(bytes, 120), u32_at(bytes, 124));
    let bytes_at = 128 + 4 * (cap + 1);
    let table_at = (bytes_at + bytes_cap).next_multiple_of(4);
    DictLayout { count, bytes_at, table_at, table_size }
}

/// Rebuilds the dictionary's hash table from its current key bytes, so that a test's
/// change to a key leaves the table itself consistent.
fn rebuild_table(bytes: &mut [u8]) {
    let d = dict_layout(bytes);
    bytes[d.table_at..d.table_at + 4 * d.table_size].fill(0);
    for id in 0..d.count {
        let (start, end) = (u32_at(bytes, 128 + 4 * id), u32_at(bytes, 128 + 4 * id + 4));
        let key = bytes[d.bytes_at + start..d.bytes_at + end].to_vec();
        let mut bucket = home_bucket(key_hash(&key), d.table_size);
        while u32_at(bytes, d.table_at + 4 * bucket) != 0 {
            bucket = (bucket + 1) % d.table_size;
        }
        bytes[d.table_at + 4 * bucket..d.table_at + 4 * bucket + 4].copy_from_slice(&(id as u32 + 1).to_le_bytes());
    }
}

fn object(keys: &[&str]) -> Vec<u8> {
    let map: Map = keys.iter().enumerate().map(|(i, k)| (k.to_string(), Value::Int(i as i64 + 5))).collect();
    leafwire::encode(&Value::Object(map)).unwrap()
}

fn find(bytes: &[u8], needle: &[u8]) -> usize {
    bytes.windows(needle.len()).position(|w| w == needle).unwrap()
}

fn malformed(bytes: &[u8], says: &str) {
    let err = leafwire::validate(bytes).unwrap_err();
    assert_eq!(err.category(), Category::Malformed, "{err}");
    assert!(err.to_string().contains(says), "expected {says:?} in: {err}");
    assert!(err.offset().is_some(), "no position in: {err}");
}

#[test]
fn a_dictionary_holding_a_key_twice_is_refused_even_with_a_consistent_table() {
    let mut bytes = object(&["alpha", "bravo"]);
    let at = find(&bytes, b"bravo");
    bytes[at..at + 5].copy_from_slice(b"alpha");
    rebuild_table(&mut bytes);
    malformed(&bytes, "twice");
}

#[test]
fn a_dictionary_key_its_table_cannot_reach_is_refused() {
    let mut bytes = object(&["alpha", "bravo"]);
    let d = dict_layout(&bytes);
    // A replacement whose home bucket is empty: probing for it stops there at once.
    let replacement = (b'a'..=b'z')
        .map(|c| [b'b', b'r', b'a', b'v', c])
        .find(|k| u32_at(&bytes, d.table_at + 4 * home_bucket(key_hash(k), d.table_size)) == 0)
        .unwrap();
    let at = find(&bytes, b"bravo");
    bytes[at..at + 5].copy_from_slice(&replacement);
    malformed(&bytes, "cannot reach");
}

#[test]
fn an_object_using_one_key_twice_is_refused() {
    // Two small objects share the dictionary; the second names key 0 for both children.
    let inner: Map = [("k0".to_string(), Value::Int(1)), ("k1".to_string(), Value::Int(2))].into_iter().collect();
    let doc = Value::Array(vec![Value::Object(inner.clone()), Value::Object(inner)]);
    let mut bytes = leafwire::encode(&doc).unwrap();
    assert!(leafwire::validate(&bytes).is_ok());
    // Each object block is: layout, count 2, tags[2], keys[2] = 00 01.
    let last = bytes.windows(2).rposition(|w| w == [0x00, 0x01]).unwrap();
    bytes[last + 1] = 0x00;
    malformed(&bytes, "same key twice");
}

#[test]
fn a_key_id_outside_the_dictionary_is_refused() {
    let mut bytes = object(&["k0", "k1"]);
    let at = bytes.windows(2).rposition(|w| w == [0x00, 0x01]).unwrap();
    bytes[at + 1] = 0x07;
    malformed(&bytes, "not in the dictionary");
}

#[test]
fn strings_must_be_utf8_and_non_ascii_utf8_is_accepted() {
    let text = "Grüße, 世界 — a string long enough for the SIMD validator's path";
    let bytes = leafwire::encode(&Value::Array(vec![Value::String(text.into())])).unwrap();
    assert_eq!(leafwire::validate(&bytes).unwrap().strings, 1);
    let mut broken = bytes.clone();
    let at = find(&broken, "世".as_bytes());
    broken[at] = 0xFF;
    malformed(&broken, "UTF-8");
    let short = leafwire::encode(&Value::Array(vec![Value::String("ab".into())])).unwrap();
    let mut broken = short.clone();
    let at = find(&broken, b"ab");
    broken[at + 1] = 0xC3;
    malformed(&broken, "UTF-8");
}

#[test]
fn large_objects_with_indexes_validate_and_a_broken_index_is_refused() {
    let keys: Vec<String> = (0..100).map(|i| format!("key{i}")).collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let bytes = object(&refs);
    let stats = leafwire::validate(&bytes).unwrap();
    assert_eq!((stats.keys, stats.scalars), (100, 100));
    // The root object is the last block: layout byte, count 100 (one varint byte), then
    // tags, key ids and one-byte slots (100 each), then its one-byte-entry index. Clearing
    // the index's last nonzero entry leaves a child the index cannot reach.
    let root = u64::from_le_bytes(bytes[24..32].try_into().unwrap()) as usize;
    let index_at = root + 2 + 3 * 100;
    let last_entry = (index_at..bytes.len()).rev().find(|&i| bytes[i] != 0).unwrap();
    let mut broken = bytes.clone();
    broken[last_entry] = 0;
    malformed(&broken, "hash index");
}

/// Sum of `Node::block_range` over `node` and everything below it (typed arrays' rows
/// excluded: their block belongs to the whole array).
fn block_bytes(node: leafwire::Node<'_>) -> u64 {
    let own = node.block_range().unwrap().map_or(0, |r| r.end - r.start);
    let children: u64 = match node.kind() {
        leafwire::Kind::Array | leafwire::Kind::Object | leafwire::Kind::IntMap => node.iter().unwrap().map(|c| block_bytes(c.unwrap())).sum(),
        _ => 0,
    };
    own + children
}

#[test]
fn block_ranges_cover_what_validation_reaches() {
    let text = br#"{"a": {"b": [1, 2.5, {"c": null}], "s": "text", "big": 123456789012345678901234567890},
        "m": [[1.5, 2.5], [3.5, 4.5]], "mixed": [1, 2.5, -3], "k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6}"#;
    let bytes = leafwire::json::from_json(text).unwrap();
    let doc = leafwire::Document::open(&bytes).unwrap();
    let stats = leafwire::validate(&bytes).unwrap();
    let dictionary = leafwire::format::dictionary::Dict::parse(&bytes, doc.record().dictionary).unwrap();
    let dictionary = (dictionary.end() - dictionary.pos()) as u64;
    assert_eq!(block_bytes(doc.root()) + dictionary, stats.reachable_bytes);
    assert_eq!(doc.pointer("/a/b/0").unwrap().block_range().unwrap(), None);
    assert_eq!(doc.pointer("/m/0").unwrap().block_range().unwrap(), None, "a row of a typed array owns no block");
    let s = doc.pointer("/a/s").unwrap();
    assert_eq!(s.block_range().unwrap(), Some(s.offset()..s.offset() + 5));
}

//! Bad input never panics: truncated, bit-flipped and spliced documents go through every
//! entry point (lazy walk, decode, JSON, serde, validate), thousands per run, and each
//! either succeeds or returns a typed error. Invalid JSON and deep nesting are errors with
//! positions.

use leafwire::{Category, Document, Node};

fn samples() -> Vec<Vec<u8>> {
    let jsons: [&[u8]; 5] = [
        br#"{"name":"leaf","values":[1.5,2.5,3.5],"ints":[1,2,300],"mixed":[1,2.5],"m":[[1,2],[3,4]],"nested":{"a":[null,true,"x"],"b":{"c":-7}}}"#,
        br#"[1,"two",3.0,[4,[5,[6,{"k":"v"}]]],{"":0}]"#,
        br#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":"x"}"#,
        br#"123456789012345678901234567890"#,
        br#""just a string""#,
    ];
    let mut out: Vec<Vec<u8>> = jsons.iter().map(|j| leafwire::json::from_json(j).unwrap()).collect();
    let mut map = leafwire::IntMap::default();
    map.insert(-3, leafwire::Value::Bytes(vec![1, 2, 3]));
    map.insert(9, leafwire::Value::F32(1.5));
    out.push(leafwire::encode(&leafwire::Value::IntMap(map)).unwrap());
    out
}

/// Touches everything reachable, through every reader entry point; never panics.
fn exercise(bytes: &[u8]) {
    let _ = leafwire::validate(bytes);
    let _ = leafwire::decode(bytes);
    let _ = leafwire::json::to_json(bytes);
    let _ = leafwire::from_slice::<serde_json::Value>(bytes);
    let _ = leafwire::from_slice::<leafwire::Value>(bytes);
    if let Ok(doc) = Document::open(bytes) {
        walk(doc.root(), 0);
        for p in ["/name", "/values/1", "/m/1/0", "/nested/a/2", "/3/1/1/1/k", "/k9", "/-3", "/0"] {
            let _ = doc.pointer(p).map(|n| n.kind());
        }
    }
}

fn walk(node: Node<'_>, depth: usize) {
    if depth > 64 {
        return;
    }
    let _ = (node.as_str(), node.as_bytes(), node.as_bignum(), node.as_f64(), node.as_i64(), node.len());
    if let Ok(t) = node.typed() {
        let _ = t.to_typed_array();
        let _ = t.as_slice::<f64>();
    }
    if let Ok(children) = node.iter() {
        for child in children.take(1000).flatten() {
            walk(child, depth + 1);
        }
    }
    if let Ok(entries) = node.entries() {
        for (key, _) in entries.take(1000).flatten() {
            let _ = node.get(key);
        }
    }
    let _ = node.get("name");
    let _ = node.get_int(9);
    let _ = node.at(1);
}

/// A small deterministic generator (splitmix64), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    for doc in samples() {
        for len in 0..doc.len() {
            let cut = &doc[..len];
            exercise(cut);
            assert!(leafwire::validate(cut).is_err(), "a {len}-byte prefix validated");
        }
    }
}

#[test]
fn mutated_documents_never_panic() {
    let mut rng = Rng(42);
    let mut mutants = 0;
    for doc in samples() {
        for _ in 0..3000 {
            let mut m = doc.clone();
            match rng.below(4) {
                0 => {
                    let i = rng.below(m.len());
                    m[i] ^= 1 << rng.below(8);
                }
                1 => {
                    let i = rng.below(m.len());
                    m[i] = rng.next() as u8;
                }
                2 => {
                    // Overwrite 8 bytes with a random or extreme number (offsets, counts).
                    let i = rng.below(m.len().saturating_sub(8).max(1));
                    let v = [u64::MAX, 0, 1 << 40, rng.next(), 0x7f][rng.below(5)];
                    let end = (i + 8).min(m.len());
                    m[i..end].copy_from_slice(&v.to_le_bytes()[..end - i]);
                }
                _ => {
                    // Flip bits in the body and re-seal the header so the damage is reached.
                    let i = 112 + rng.below(m.len().saturating_sub(112).max(1));
                    if i < m.len() {
                        m[i] ^= 0xFF;
                    }
                }
            }
            exercise(&m);
            mutants += 1;
        }
    }
    assert!(mutants >= 18_000);
}

#[test]
fn errors_carry_positions() {
    let doc = leafwire::json::from_json(br#"{"a":[1,2,3]}"#).unwrap();
    let err = leafwire::validate(&doc[..doc.len() - 3]).unwrap_err();
    assert_eq!(err.category(), Category::Malformed);
    assert!(err.offset().is_some(), "{err}");

    let err = leafwire::json::from_json(b"{\"a\": [1, 2,\n  ]}").unwrap_err();
    assert_eq!(err.category(), Category::InvalidJson);
    assert_eq!(err.position(), Some(leafwire::Position::LineColumn { line: 2, column: 3 }), "{err}");

    let err = Document::open(&doc).unwrap().pointer("/a/7").unwrap_err();
    assert_eq!(err.category(), Category::NotFound);
    assert_eq!(err.path(), Some("/a/7"));

    let err = Document::open(&doc).unwrap().pointer("/a/0").unwrap().as_str().unwrap_err();
    assert_eq!(err.category(), Category::WrongType);
}

#[test]
fn deep_json_is_an_error_at_the_limit_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let err = leafwire::json::from_json(deep.as_bytes()).unwrap_err();
    assert_eq!(err.category(), Category::DepthLimit);
    let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert!(leafwire::json::from_json(ok.as_bytes()).is_ok());
    let options = leafwire::json::JsonOptions { max_depth: 1000, ..Default::default() };
    let deeper = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    assert!(leafwire::json::from_json_with(deeper.as_bytes(), &options).is_ok());
}

#[test]
fn a_deep_document_is_refused_by_recursive_readers() {
    let mut v = leafwire::Value::Null;
    for _ in 0..120 {
        v = leafwire::Value::Array(vec![v]);
    }
    let bytes = leafwire::encode(&v).unwrap();
    assert!(leafwire::decode(&bytes).is_ok());
    // Deeper than the default limit: built by the serializer with nesting it allows.
    let mut deep = leafwire::Value::Null;
    for _ in 0..200 {
        deep = leafwire::Value::Array(vec![deep]);
    }
    let err = leafwire::encode(&deep).unwrap_err();
    assert_eq!(err.category(), Category::DepthLimit);
}

#[test]
fn duplicate_json_keys_follow_the_documented_rule() {
    let err = leafwire::json::from_json(br#"{"a":1,"b":2,"a":3}"#).unwrap_err();
    assert_eq!(err.category(), Category::DuplicateKey);
    assert!(matches!(err.position(), Some(leafwire::Position::LineColumn { .. })));
    let options = leafwire::json::JsonOptions { duplicate_keys: leafwire::DuplicateKeys::Last, ..Default::default() };
    let bytes = leafwire::json::from_json_with(br#"{"a":1,"b":2,"a":3}"#, &options).unwrap();
    assert_eq!(leafwire::json::to_json(&bytes).unwrap(), r#"{"b":2,"a":3}"#);
}

#[test]
fn duplicate_json_keys_are_found_in_objects_of_any_size() {
    // Keys in descending order of first appearance are each checked against those before
    // (a scan up to 64 keys, a set past that); a repeat is found first, last or between.
    for n in [3usize, 20, 63, 64, 65, 200] {
        let keys: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
        let object = |keys: &[String]| format!("{{{}}}", keys.iter().map(|k| format!("\"{k}\":1")).collect::<Vec<_>>().join(","));
        // Ids follow first appearance; a first object fixes them in ascending order.
        let ascending = object(&keys);
        let descending: Vec<String> = keys.iter().rev().cloned().collect();
        let text = format!("[{ascending},{}]", object(&descending));
        assert!(leafwire::json::from_json(text.as_bytes()).is_ok(), "{n}");
        for dup in [0, n / 2, n - 1] {
            let mut repeated = descending.clone();
            repeated.push(keys[dup].clone());
            let text = format!("[{ascending},{}]", object(&repeated));
            let err = leafwire::json::from_json(text.as_bytes()).unwrap_err();
            assert_eq!(err.category(), Category::DuplicateKey, "{n} {dup}");
        }
    }
}

#[test]
fn absurd_counts_and_shapes_are_refused_without_allocating() {
    // A typed array claiming 2^40 rows of nothing, and a container claiming 2^31 children.
    let mut bytes = leafwire::encode(&leafwire::Value::Typed(leafwire::TypedArray::with_shape(leafwire::TypedData::F64(vec![]), vec![1, 0]).unwrap())).unwrap();
    let block = u64::from_le_bytes(bytes[16 + 8..16 + 16].try_into().unwrap()) as usize;
    bytes.truncate(block);
    bytes.extend_from_slice(&[10, 2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0]);
    let end = bytes.len() as u64;
    reseal(&mut bytes, end);
    let err = leafwire::validate(&bytes).unwrap_err();
    assert_eq!(err.category(), Category::Malformed, "{err}");
    assert!(leafwire::json::to_json(&bytes).is_err());

    let mut bytes = leafwire::encode(&leafwire::Value::Array(vec![leafwire::Value::Null])).unwrap();
    let block = u64::from_le_bytes(bytes[16 + 8..16 + 16].try_into().unwrap()) as usize;
    bytes[block + 1..block + 6].copy_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x08]);
    let end = bytes.len() as u64;
    reseal(&mut bytes, end);
    let err = leafwire::decode(&bytes).unwrap_err();
    assert_eq!(err.category(), Category::Malformed, "{err}");
}

/// Rewrites record A's `end` and CRC after a test edits a document.
fn reseal(bytes: &mut [u8], end: u64) {
    bytes[16 + 24..16 + 32].copy_from_slice(&end.to_le_bytes());
    let crc = crc32fast::hash(&bytes[16..16 + 44]);
    bytes[16 + 44..16 + 48].copy_from_slice(&crc.to_le_bytes());
}


/// A raw document: header with record A naming `root_tag`/`root`, then `body` at 112.
fn raw_document(root_tag: u8, root: u64, body: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0u8; 112];
    bytes[..8].copy_from_slice(b"LEAFWIRE");
    bytes[8] = 1;
    bytes[16..24].copy_from_slice(&1u64.to_le_bytes());
    bytes[24..32].copy_from_slice(&root.to_le_bytes());
    bytes[56] = root_tag;
    bytes.extend_from_slice(body);
    let end = bytes.len() as u64;
    reseal(&mut bytes, end);
    bytes
}

/// Found by fuzzing: 60 arrays, each holding the next one twice, describe 2^60 nodes in
/// 600 bytes. Whole-value readers must stop, not run for ever.
#[test]
fn shared_subtrees_cannot_explode_whole_value_readers() {
    let mut body = Vec::new();
    for i in 0..60u16 {
        let next = 112 + 8 * (i + 1);
        body.extend_from_slice(&[0x01, 0x02, 0x0A, 0x0A]);
        body.extend_from_slice(&next.to_le_bytes());
        body.extend_from_slice(&next.to_le_bytes());
    }
    body.extend_from_slice(&[0x00, 0x00]);
    let bytes = raw_document(0x0A, 112, &body);
    assert!(Document::open(&bytes).unwrap().pointer("/0/1/0/1/0").is_ok(), "lazy steps still work");
    for err in [
        leafwire::decode(&bytes).unwrap_err(),
        leafwire::json::to_json(&bytes).unwrap_err(),
        leafwire::from_slice::<serde_json::Value>(&bytes).unwrap_err(),
        leafwire::validate(&bytes).unwrap_err(),
    ] {
        assert_eq!(err.category(), Category::Malformed, "{err}");
    }
}

/// One wide array shared by every slot of another: 4,000 × 4,000 nulls described in
/// 20 KB. Each child a whole-value reader visits costs budget, not only each container,
/// so the readers stop after a few copies instead of building 16 million values (over
/// 700 MB as `Value`s).
#[test]
fn a_wide_shared_child_cannot_make_readers_quadratic() {
    const WIDTH: usize = 4000;
    let count = [(WIDTH as u8 & 0x7F) | 0x80, (WIDTH >> 7) as u8];
    // The outer array: header, tags, one byte of padding (its two-byte slots are aligned),
    // slots; then the shared array of one-byte slots.
    let shared_at = 112 + 3 + WIDTH + 1 + 2 * WIDTH;
    let mut body = vec![0x01, count[0], count[1]];
    body.extend(std::iter::repeat_n(0x0A, WIDTH));
    body.push(0);
    for _ in 0..WIDTH {
        body.extend_from_slice(&(shared_at as u16).to_le_bytes());
    }
    assert_eq!(112 + body.len(), shared_at);
    body.extend_from_slice(&[0x00, count[0], count[1]]);
    body.extend(std::iter::repeat_n(0x00, 2 * WIDTH));
    let bytes = raw_document(0x0A, 112, &body);
    assert_eq!(Document::open(&bytes).unwrap().pointer(&format!("/{}/{}", WIDTH - 1, WIDTH - 1)).unwrap().kind(), leafwire::Kind::Null);
    for (reader, result) in [
        ("decode", leafwire::decode(&bytes).map(drop)),
        ("decode_borrowed", leafwire::decode_borrowed(&bytes).map(drop)),
        ("to_json", leafwire::json::to_json(&bytes).map(drop)),
        ("from_slice", leafwire::from_slice::<serde_json::Value>(&bytes).map(drop)),
        ("validate", leafwire::validate(&bytes).map(drop)),
    ] {
        let err = result.expect_err(reader);
        assert_eq!(err.category(), Category::Malformed, "{reader}: {err}");
    }
}

/// Found by fuzzing: a child offset near u64::MAX overflowed the lookup's bounds check.
#[test]
fn offsets_near_u64_max_are_errors() {
    let mut body = vec![0x03, 0x01, 0x0A, 0, 0, 0, 0, 0];
    body.extend_from_slice(&u64::MAX.to_le_bytes());
    let bytes = raw_document(0x0A, 112, &body);
    let doc = Document::open(&bytes).unwrap();
    assert_eq!(doc.pointer("/0/0").unwrap_err().category(), Category::Malformed);
    assert_eq!(doc.pointer("/0/x").unwrap_err().category(), Category::NotFound);
    assert!(leafwire::validate(&bytes).is_err());
}

/// Found by the Python bindings: an empty array of shape (5, 6, 6, 0) describes 180 rows
/// in a ~120-byte document, which spec §5.2 forbids; the encoder must refuse it rather
/// than write bytes its own reader rejects.
#[test]
fn the_encoder_refuses_shapes_its_reader_would_reject() {
    let empty = leafwire::TypedArray::with_shape(leafwire::TypedData::Bool(vec![]), vec![5, 6, 6, 0]).unwrap();
    let err = leafwire::encode(&leafwire::Value::Typed(empty)).unwrap_err();
    assert_eq!(err.category(), Category::LimitExceeded, "{err}");
    let fine = leafwire::TypedArray::with_shape(leafwire::TypedData::Bool(vec![]), vec![5, 0]).unwrap();
    let bytes = leafwire::encode(&leafwire::Value::Typed(fine)).unwrap();
    leafwire::validate(&bytes).unwrap();
}

#[test]
fn depth_limits_are_options_on_every_whole_value_path() {
    // 300 levels of recursion need more than a debug build's default test-thread stack.
    std::thread::Builder::new().stack_size(64 << 20).spawn(deep_options).unwrap().join().unwrap();
}

fn deep_options() {
    let mut v = leafwire::Value::Null;
    for _ in 0..300 {
        v = leafwire::Value::Array(vec![v]);
    }
    assert_eq!(leafwire::encode(&v).unwrap_err().category(), Category::DepthLimit);
    let bytes = leafwire::encode_with(&v, 400).unwrap();
    assert_eq!(leafwire::decode(&bytes).unwrap_err().category(), Category::DepthLimit);
    assert_eq!(leafwire::decode_with(&bytes, 400).unwrap(), v);
    let options = leafwire::json::JsonOptions { max_depth: 400, ..Default::default() };
    assert_eq!(leafwire::json::to_json(&bytes).unwrap_err().category(), Category::DepthLimit);
    let text = leafwire::json::to_json_with(&bytes, &options).unwrap();
    assert_eq!(text, format!("{}null{}", "[".repeat(300), "]".repeat(300)));
    let validated = leafwire::validate_with(&bytes, &leafwire::ValidateOptions { max_depth: 400 }).unwrap();
    assert_eq!(validated.max_depth, 300);
}

/// A small deterministic generator for the tests below.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Record A rewritten with `flags` (byte 41) and its CRC recomputed, so that a reader
/// trusts the record and goes on to what the flag names.
fn with_record_flags(doc: &[u8], flags: u8) -> Vec<u8> {
    let mut doc = doc.to_vec();
    doc[16 + 41] = flags;
    let crc = crc32fast::hash(&doc[16..16 + 44]);
    doc[16 + 44..16 + 48].copy_from_slice(&crc.to_le_bytes());
    doc
}

/// Journals (spec §8.5) and page checksums (spec §2.3) of any shape: a record that names a
/// journal followed by random, truncated or half-valid bytes, and documents whose locator
/// and table are damaged, go through every reader that finishes or checks them: errors,
/// never a panic or an allocation the bytes do not justify.
#[test]
fn damaged_journals_and_checksum_tables_are_errors() {
    let mut state = 0x5EED_1234_u64;
    let mut tried = 0;
    for doc in samples() {
        let journaled = with_record_flags(&doc, 1);
        for len in [0usize, 1, 8, 31, 32, 33, 48, 64, 200] {
            for round in 0..40 {
                let mut bytes = journaled.clone();
                bytes.resize(leafwire::format::align(bytes.len(), 8), 0);
                let start = bytes.len();
                bytes.extend((0..len).map(|_| next(&mut state) as u8));
                if round % 2 == 0 && len >= 32 {
                    // A believable header: the magic, the generation, a body length.
                    bytes[start..start + 8].copy_from_slice(b"LWJOURNL");
                    bytes[start + 8..start + 16].copy_from_slice(&1u64.to_le_bytes());
                    let body = next(&mut state) % 300;
                    bytes[start + 16..start + 24].copy_from_slice(&body.to_le_bytes());
                }
                let mut owned = bytes.clone();
                let _ = leafwire::finish_interrupted_commit(&mut owned);
                let _ = leafwire::Editor::new(bytes.clone());
                exercise(&bytes);
                tried += 1;
            }
        }
        let mut sealed = doc.clone();
        leafwire::add_checksums(&mut sealed).unwrap();
        leafwire::validate(&sealed).unwrap();
        for round in 0..400 {
            let mut bytes = sealed.clone();
            // Damage the locator or the table, where the checksums' own geometry lives.
            let tail = bytes.len() - 16 - (next(&mut state) as usize % 48).min(bytes.len() - 128);
            let at = tail + next(&mut state) as usize % (bytes.len() - tail);
            bytes[at] ^= 1 << (round % 8);
            assert!(leafwire::validate(&bytes).is_err(), "a flipped bit at {at} was not found");
            let _ = leafwire::Editor::new(bytes.clone());
            exercise(&bytes);
            tried += 1;
        }
    }
    eprintln!("{tried} damaged journals and checksum tables");
}

/// A string that is not UTF-8 is an error at its block on every path that reads text
/// (JSON out, lookups, validation), whether its valid form would have been plain ASCII,
/// escaped or non-ASCII, short or long.
#[test]
fn invalid_utf8_in_a_string_is_an_error_at_its_block() {
    let texts = ["plain-ascii", "say \"hi\"\n", "caf\u{e9} cr\u{e8}me", &"long plain text ".repeat(6), &"\u{e9}t\u{e9} ".repeat(20)];
    for text in texts {
        let json = serde_json::to_vec(&serde_json::json!({"k": text, "n": 1})).unwrap();
        let doc = leafwire::json::from_json(&json).unwrap();
        assert_eq!(leafwire::json::to_json(&doc).unwrap().as_bytes(), &json[..]);
        let at = doc.windows(text.len()).position(|w| w == text.as_bytes()).expect("the text is in the data section");
        for (i, bad) in [(0, 0xFF), (text.len() - 1, 0xC3), (text.len() / 2, 0x80)] {
            let mut broken = doc.clone();
            broken[at + i] = bad;
            let block = (at - 1) as u64; // the length varint (one byte) starts the block
            let err = leafwire::json::to_json(&broken).unwrap_err();
            assert_eq!((err.category(), err.offset()), (Category::Malformed, Some(block)), "{text:?} {i}: {err}");
            let err = Document::open(&broken).unwrap().pointer("/k").unwrap().as_str().unwrap_err();
            assert_eq!((err.category(), err.offset()), (Category::Malformed, Some(block)), "{text:?} {i}: {err}");
            assert!(leafwire::validate(&broken).is_err(), "{text:?} {i}");
        }
    }
}

/// A lookup in an indexed object follows the index's entries to candidate children and
/// checks each one's key text: an entry naming no child is an error at the object, not a
/// panic or a wrong value, and an intact index finds every key and no other.
#[test]
fn an_index_naming_no_child_is_an_error_at_its_object() {
    let text: String = format!("{{{}}}", (0..10).map(|i| format!("\"key{i}\": {i}")).collect::<Vec<_>>().join(", "));
    let bytes = leafwire::json::from_json(text.as_bytes()).unwrap();
    let doc = Document::open(&bytes).unwrap();
    for i in 0..10 {
        assert_eq!(doc.pointer(&format!("/key{i}")).unwrap().as_i64().unwrap(), i);
    }
    assert!(doc.pointer("/key10").is_err());
    assert!(doc.pointer("/key").is_err());

    let raw = leafwire::raw::RawDocument::open(&bytes).unwrap();
    let (root_tag, root) = raw.root();
    let object = raw.container(root_tag, root).unwrap();
    // Ten children: a 32-entry index of one byte each follows the slots (spec §4.1).
    let index_at = object.slots().as_ptr() as usize - bytes.as_ptr() as usize + object.slots().len();
    let mut damaged = bytes.clone();
    for entry in &mut damaged[index_at..index_at + 32] {
        if *entry != 0 {
            *entry = 0xF0;
        }
    }
    let doc = Document::open(&damaged).unwrap();
    let err = doc.pointer("/key3").unwrap_err();
    assert_eq!(err.category(), leafwire::Category::Malformed, "{err}");
    assert_eq!(err.offset(), Some(root), "{err}");
}

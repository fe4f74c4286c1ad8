//! Stream test vectors (spec §14): positive ones in `spec/vectors/stream/` (NAME.lws, the
//! reference writer's stream of some messages, and NAME.json, the messages as a JSON
//! array), and negative ones in `spec/vectors/invalid/stream_*` (NAME.lws with NAME.json
//! naming the messages read before the error, its category and stream offset).
//! `REGENERATE=1 cargo test --test stream_vectors` rewrites them after a deliberate change.

use std::path::PathBuf;

use leafwire::stream::{SliceReader, StreamOptions, StreamWriter};
use leafwire::Category;

fn dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors").join(sub)
}

fn regenerate() -> bool {
    std::env::var_os("REGENERATE").is_some()
}

/// (name, CRC frames, messages as JSON texts).
fn vectors() -> Vec<(&'static str, bool, Vec<String>)> {
    let s = |v: &[&str]| v.iter().map(|m| m.to_string()).collect::<Vec<_>>();
    let many_keys = format!("{{{}}}", (0..300).map(|i| format!(r#""key{i}":{i}"#)).collect::<Vec<_>>().join(","));
    let doubles = |n: usize| format!("[{}]", (0..n).map(|i| format!("{i}.5")).collect::<Vec<_>>().join(","));
    vec![
        ("empty", false, vec![]),
        (
            "scalars",
            false,
            s(&[
                "null",
                "true",
                "false",
                "0",
                "-1",
                "127",
                "-129",
                "70000",
                "-5000000000",
                "18446744073709551615",
                "0.5",
                "-0.0",
                "1e300",
            ]),
        ),
        ("strings", false, s(&[r#""""#, r#""a""#, r#""naïve ☃""#, "123456789012345678901234567890"])),
        ("typed_phases", false, (1..10).map(doubles).collect()),
        // Vector frames (§14.5, kinds 0x50 + element code): i8 elements (narrowed from
        // JSON), one f64, eight f64 (the 64-byte edge); typed_phases has nine, a
        // typed-array frame.
        (
            "vectors",
            false,
            s(&["[1,2,3]", "[-1.5]", "[1,2,3,4,5,6,7,8]", "[1,2,3,4,5,6,7,8,9]", "[0.5,1.5,2.5,3.5,4.5,5.5,6.5,7.5]"]),
        ),
        (
            "records_keys_once",
            false,
            (0..4).map(|i| format!(r#"{{"id":{i},"name":"n{i}","tags":["a","b"],"pos":[{i}.5,1.5]}}"#)).collect(),
        ),
        (
            "nested",
            false,
            s(&[r#"{"a":{"b":{"c":[1,{"d":null}]}}}"#, "[[1,2],[3,4.5]]", r#"[{"x":1},{"y":2},[]]"#, "{}", "[]"]),
        ),
        ("key_ids_past_255", false, vec![many_keys.clone(), r#"{"key299":1,"key0":2}"#.to_string()]),
        ("crc_frames", true, s(&["1.5", r#"{"k":[1,2,3]}"#, r#""text""#])),
        ("long_frame", false, vec![doubles(300)]),
    ]
}

fn write(crc: bool, messages: &[String]) -> Vec<u8> {
    let mut w = StreamWriter::with_options(Vec::new(), StreamOptions { crc, ..StreamOptions::default() }).unwrap();
    for m in messages {
        w.write_json(m.as_bytes()).unwrap();
    }
    w.into_inner().unwrap()
}

fn read_json(bytes: &[u8]) -> (Vec<String>, Option<leafwire::Error>) {
    let mut r = match SliceReader::new(bytes) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut out = Vec::new();
    while let Some(f) = r.next_frame() {
        match f.and_then(|f| f.to_json()) {
            Ok(j) => out.push(j),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

fn canonical_json(messages: &[String]) -> Vec<String> {
    messages
        .iter()
        .map(|m| leafwire::json::to_json(&leafwire::json::from_json(m.as_bytes()).unwrap()).unwrap())
        .collect()
}

#[test]
fn positive_vectors_are_what_the_writer_writes_and_read_back() {
    let d = dir("stream");
    std::fs::create_dir_all(&d).unwrap();
    for (name, crc, messages) in vectors() {
        let bytes = write(crc, &messages);
        let (lws, json) = (d.join(format!("{name}.lws")), d.join(format!("{name}.json")));
        let expected_json = canonical_json(&messages);
        if regenerate() {
            std::fs::write(&lws, &bytes).unwrap();
            std::fs::write(&json, format!("[{}]\n", expected_json.join(",\n "))).unwrap();
        }
        let stored = std::fs::read(&lws).unwrap_or_else(|e| panic!("{name}: {e} (REGENERATE=1 writes it)"));
        assert!(stored == bytes, "{name}: the writer's bytes changed (REGENERATE=1 after a deliberate change)");
        let (got, error) = read_json(&stored);
        assert!(error.is_none(), "{name}: {error:?}");
        assert_eq!(got, expected_json, "{name}");
        let listed: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(listed.len(), messages.len(), "{name}.json");
    }
}

/// (name, rule, description, the broken stream from positive streams, messages read first).
fn negatives() -> Vec<(&'static str, &'static str, &'static str, Vec<u8>, Category, u64)> {
    let scalars = write(false, &["1.5".into(), "2.5".into()]);
    let keyed = write(false, &[r#"{"a":1}"#.into()]);
    let crc = write(true, &["1.5".into(), "2.5".into()]);
    let header = write(false, &[]);
    let with = |frames: &[u8]| [&header[..], frames].concat();
    let mut bad_crc = crc.clone();
    let second = 112 + 10 + 4;
    bad_crc[second + 3] ^= 0x04;
    let mut bad_flag = scalars.clone();
    bad_flag[10] = 0x02;
    let mut bad_reserved = scalars.clone();
    bad_reserved[40] = 1;
    let mut bad_magic = scalars.clone();
    bad_magic[0] = b'X';
    // The keys frame of `keyed`, then its value frame with key id 0 changed to 1.
    let keys_len = 1 + keyed[112] as usize;
    let mut orphan_key = keyed.clone();
    let mut duplicate = keyed[..112 + keys_len].to_vec();
    duplicate.extend_from_slice(&keyed[112..112 + keys_len]);
    duplicate.extend_from_slice(&keyed[112 + keys_len..]);
    orphan_key.drain(112..112 + keys_len);
    vec![
        (
            "stream_torn_frame",
            "§14.2 torn frame",
            "the stream ends inside its second frame",
            scalars[..scalars.len() - 3].to_vec(),
            Category::Malformed,
            122,
        ),
        (
            "stream_torn_length",
            "§14.2 torn frame",
            "the stream ends inside a length field",
            with(&[0x80]),
            Category::Malformed,
            112,
        ),
        ("stream_zero_length", "§14.2 L ≥ 1", "a frame of length 0", with(&[0x00]), Category::Malformed, 112),
        (
            "stream_absurd_length",
            "§14.2 frame limit",
            "a length of 2^62 bytes, refused before any allocation",
            with(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x05]),
            Category::LimitExceeded,
            112,
        ),
        (
            "stream_bad_crc",
            "§14.2 frame CRC",
            "a bit flipped in the second frame's payload",
            bad_crc,
            Category::Malformed,
            second as u64,
        ),
        (
            "stream_reserved_kind",
            "§14.2 kinds",
            "kind 0x0E (packed) is reserved in streams",
            with(&[0x01, 0x0E]),
            Category::Unsupported,
            113,
        ),
        (
            "stream_scalar_width",
            "§14.3 scalar widths",
            "an f64 with a 2-byte payload",
            with(&[0x03, 0x05, 0x00, 0x00]),
            Category::Malformed,
            113,
        ),
        (
            "stream_vector_reserved_kind",
            "§14.5 vector kinds",
            "kind 0x5B, past the vector kinds 0x50–0x5A (element type 11: there is none), is reserved",
            with(&[0x02, 0x5B, 0x00]),
            Category::Unsupported,
            113,
        ),
        (
            "stream_vector_old_kind",
            "§14.2 kinds",
            "kind 0x42 (a vector frame of an earlier draft: its element code 10 in a byte of its own) is reserved",
            with(&[&[0x0A, 0x42, 0x0A][..], &[0u8; 8]].concat()),
            Category::Unsupported,
            113,
        ),
        (
            "stream_vector_empty",
            "§14.5 k ≥ 1",
            "a vector frame (kind 0x5A: f64) without elements",
            with(&[0x01, 0x5A]),
            Category::Malformed,
            113,
        ),
        (
            "stream_vector_ragged",
            "§14.5 whole elements",
            "a vector frame of f64 (kind 0x5A) with 9 bytes of elements",
            with(&[&[0x0A, 0x5A][..], &[0u8; 9]].concat()),
            Category::Malformed,
            113,
        ),
        (
            "stream_vector_bool",
            "§14.5 bool elements",
            "a vector frame of bools (kind 0x50) whose second element is 2",
            with(&[0x03, 0x50, 0x01, 0x02]),
            Category::Malformed,
            115,
        ),
        (
            "stream_vector_long",
            "§14.5 at most 64 bytes",
            "a vector frame of 9 doubles (72 bytes): longer ones are typed-array frames",
            with(&[&[0x49, 0x5A][..], &[0u8; 72]].concat()),
            Category::Malformed,
            113,
        ),
        (
            "stream_reset_body",
            "§14.2 reset",
            "a reset frame with a body",
            with(&[0x02, 0x41, 0x00]),
            Category::Malformed,
            113,
        ),
        (
            "stream_keys_duplicate",
            "§14.4 distinct keys",
            "a keys frame sends a key the table holds",
            duplicate,
            Category::Malformed,
            (112 + keys_len) as u64 + 1,
        ),
        (
            "stream_keys_utf8",
            "§14.4 UTF-8 keys",
            "a key that is not UTF-8",
            with(&[0x04, 0x40, 0x01, 0x01, 0xFF]),
            Category::Malformed,
            116,
        ),
        (
            "stream_keys_trailing",
            "§14.4 keys frame",
            "a byte after the last key",
            with(&[0x05, 0x40, 0x01, 0x01, b'a', 0x00]),
            Category::Malformed,
            117,
        ),
        (
            "stream_key_not_in_table",
            "§14.3 key ids",
            "an object whose key id was never sent",
            orphan_key,
            Category::Malformed,
            0,
        ),
        ("stream_unknown_flag", "§14.1 flags", "header flag bit 1", bad_flag, Category::Unsupported, 10),
        (
            "stream_reserved_header",
            "§14.1 reserved",
            "a non-zero reserved header byte",
            bad_reserved,
            Category::Unsupported,
            12,
        ),
        ("stream_bad_magic", "§14.1 magic", "not LWSTREAM", bad_magic, Category::Malformed, 0),
    ]
}

#[test]
fn negative_vectors_are_typed_errors_at_their_offsets() {
    let d = dir("invalid");
    for (name, rule, description, bytes, category, offset) in negatives() {
        let (lws, json) = (d.join(format!("{name}.lws")), d.join(format!("{name}.json")));
        let error = read_json(&bytes).1.unwrap_or_else(|| panic!("{name}: read without an error"));
        assert_eq!(error.category(), category, "{name}: {error}");
        // A key id past the table is found where the object is read: its offset is inside
        // the frame, which depends on the layout; the others are fixed by the vector.
        if offset != 0 || name == "stream_bad_magic" {
            assert_eq!(error.offset(), Some(offset), "{name}: {error}");
        }
        let record = serde_json::json!({
            "rule": rule,
            "category": format!("{category:?}"),
            "offset": error.offset(),
            "description": description,
            "messages_before": read_json(&bytes).0.len(),
        });
        if regenerate() {
            std::fs::write(&lws, &bytes).unwrap();
            std::fs::write(&json, serde_json::to_string_pretty(&record).unwrap() + "\n").unwrap();
        }
        let stored = std::fs::read(&lws).unwrap_or_else(|e| panic!("{name}: {e} (REGENERATE=1 writes it)"));
        assert!(stored == bytes, "{name}: changed (REGENERATE=1 after a deliberate change)");
        let listed: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(listed, record, "{name}.json");
    }
}

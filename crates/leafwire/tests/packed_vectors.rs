//! Packed-mode test vectors (spec §13): positive ones in `spec/vectors/packed/` (NAME.lw,
//! the reference encoder's output for the value, and NAME.json, the value as JSON), and
//! negative ones in `spec/vectors/invalid/packed_*` (a broken copy of a positive vector,
//! with the category and offset a validator reports). `REGENERATE=1 cargo test --test
//! packed_vectors` rewrites them after a deliberate change.

use std::path::PathBuf;

use leafwire::json::{parse, to_json};
use leafwire::{encode_packed, validate, Category, Document, PackOptions, Value};

fn dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors").join(sub)
}

fn regenerate() -> bool {
    std::env::var_os("REGENERATE").is_some()
}

fn records(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            let price = match i % 5 {
                0 => "null".to_string(),
                1 => format!("\"{}000000000000000000\"", i),
                _ => format!("{}", i * 25),
            };
            let tags: Vec<String> = (0..i % 3).map(|t| format!("\"tag{t}\"")).collect();
            let note = if i % 4 == 0 { format!(r#", "note": "order {i} of the day""#) } else { String::new() };
            format!(r#"{{"id": {i}, "ok": {}, "price": {price}, "tags": [{}]{note}}}"#, i % 2 == 0, tags.join(", "))
        })
        .collect();
    format!(r#"{{"count": {n}, "rows": [{}]}}"#, rows.join(", "))
}

/// (name, options, JSON text of the value).
fn vectors() -> Vec<(&'static str, PackOptions, String)> {
    // The vectors of the shredded layout keep their columns (their small data would
    // otherwise often be kept whole as JSON text, §13.3); the residual forms have their
    // own vectors below.
    let plain = PackOptions { columns_only: true, ..PackOptions::default() };
    let zstd3 = PackOptions { zstd_level: Some(3), columns_only: true, ..PackOptions::default() };
    let default = PackOptions::default();
    let ints: Vec<String> = (0..100).map(|i| (1_600_000_000 + i * 7).to_string()).collect();
    let pairs: Vec<String> = (0..40).map(|i| format!("[{}.125, -{}.5]", i, 40 - i)).collect();
    let ragged: Vec<String> = (0..40).map(|i| format!("[{}]", (0..i % 5).map(|j| (i * j).to_string()).collect::<Vec<_>>().join(","))).collect();
    let mixed: Vec<String> = (0..70)
        .map(|i| match i % 7 {
            0 => "null".into(),
            1 => "true".into(),
            2 => format!("{i}"),
            3 => format!("{i}.75"),
            4 => format!("\"s{i}\""),
            5 => format!("[{i}, \"x\"]"),
            _ => format!("{{\"k\": {i}}}"),
        })
        .collect();
    let keyed: Vec<String> = (0..8)
        .map(|i| format!("{{{}}}", (0..10).map(|k| format!("\"user{}\": {}", i * 10 + k, k)).collect::<Vec<_>>().join(", ")))
        .collect();
    let mut deep = "1".to_string();
    for _ in 0..36 {
        deep = format!("[{deep}]");
    }
    let residual: Vec<String> = (0..70)
        .map(|i| match i % 3 {
            0 => "18446744073709551615".into(),
            1 => "123456789012345678901234567890".into(),
            _ => format!("{i}"),
        })
        .collect();
    let words = ["alpha", "beta", "gamma", "delta"];
    let repeated: Vec<String> = (0..200).map(|i| format!("\"{} {}\"", words[i % 4], words[(i / 4) % 4])).collect();
    // Each record names its repository in three fields: what a frame around the stripe
    // finds and per-page compression does not.
    // Records of forty attributes: the key table is most of the group.
    let wide: Vec<String> = (0..64)
        .map(|i| format!("{{{}}}", (0..40).map(|k| format!("\"attribute_{k:02}_value\": {}", (i * k) % 3)).collect::<Vec<_>>().join(", ")))
        .collect();
    let linked: Vec<String> = (0..80)
        .map(|i| {
            let repo = format!("{}/{}-{}", words[i % 4], words[(i / 4) % 4], i * 37 % 11);
            format!(
                r#"{{"repo": "{repo}", "url": "https://api.example.com/repos/{repo}", "html": "https://example.com/{repo}/pull/{i}"}}"#
            )
        })
        .collect();
    // An object whose keys are data (§13.7): users by name.
    let users: Vec<String> = (0..40)
        .map(|i| format!(r#""user_{i:02}": {{"id": {}, "admin": {}, "groups": [{}]}}"#, 1000 + i, i % 9 == 0, (0..i % 3).map(|g| format!("\"g{g}\"")).collect::<Vec<_>>().join(", ")))
        .collect();
    // Entries as a packed array would hold them: [key, value] pairs, a key repeated.
    let pairs_dup: Vec<String> = (0..64).map(|i| format!(r#"["k{}", {i}]"#, i % 63)).collect();
    // What does not shred (§13.3): settings of one service each, every one with its own
    // keys, and documentation text that repeats across them.
    let services: Vec<String> = (0..40)
        .map(|i| {
            format!(
                r#"{{"name": "service-{i}", "setting_{i}": {{"enabled": {}, "retries": {}}}, "doc": "<p>Sets how service {i} retries a request that timed out before giving up.</p>"}}"#,
                i % 2 == 0,
                i % 5
            )
        })
        .collect();
    let settings: Vec<String> = (0..12)
        .map(|i| format!(r#""option_{i}": {{"type": "string", "doc": "<p>The value of option {i}, as the service reads it at start.</p>", "default": "{}"}}"#, i * 7))
        .collect();
    vec![
        ("residual_form", default, format!("[{}]", services.join(", "))),
        ("whole_object", default, format!("{{{}}}", settings.join(", "))),
        ("records", plain, records(60)),
        ("packed_object", plain, format!("{{{}}}", users.join(", "))),
        ("entry_pairs", plain, format!("[{}]", pairs_dup.join(","))),
        ("ints_root", plain, format!("[{}]", ints.join(","))),
        ("float_pairs", plain, format!("{{\"pairs\": [{}]}}", pairs.join(","))),
        ("ragged_arrays", plain, format!("[{}]", ragged.join(","))),
        ("mixed_kinds", plain, format!("[{}]", mixed.join(","))),
        ("keyed_objects", plain, format!("[{}]", keyed.join(","))),
        ("deep_residual", plain, format!("[{}, {}]", deep, (0..70).map(|i| i.to_string()).collect::<Vec<_>>().join(","))),
        ("big_integers_residual", default, format!("[{}]", residual.join(","))),
        ("zstd_stage", zstd3, format!("[{}]", repeated.join(","))),
        ("stripe_frames", zstd3, format!("[{}]", linked.join(","))),
        ("framed_tables", zstd3, format!("[{}]", wide.join(","))),
        ("lossy_floats", PackOptions { lossy_step: Some(-8), ..plain }, format!("[{}]", (0..80).map(|i| format!("{}", i as f64 * 0.1)).collect::<Vec<_>>().join(","))),
    ]
}

#[test]
fn positive_vectors_match_the_reference_encoder() {
    let mut wrong = Vec::new();
    for (name, options, text) in vectors() {
        let value = parse(text.as_bytes()).unwrap();
        let bytes = encode_packed(&value, &options).unwrap();
        assert_eq!(bytes[10] & 1, 1, "{name}: not packed");
        validate(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let json = to_json(&bytes).unwrap();
        let path = dir("packed").join(format!("{name}.lw"));
        if regenerate() {
            std::fs::write(&path, &bytes).unwrap();
            std::fs::write(path.with_extension("json"), format!("{json}\n")).unwrap();
            continue;
        }
        match std::fs::read(&path) {
            Ok(stored) if stored == bytes => {}
            _ => wrong.push(name),
        }
        let stored_json = std::fs::read_to_string(path.with_extension("json")).unwrap();
        assert_eq!(stored_json.trim_end(), json, "{name}");
        if options.lossy_step.is_none() {
            // Lossless: the packed document reads back as the value.
            assert_eq!(json, to_json(&leafwire::encode(&value).unwrap()).unwrap(), "{name}");
        }
    }
    assert!(wrong.is_empty(), "vectors differ from the encoder (REGENERATE=1 rewrites them): {wrong:?}");
}

/// Offset of the packed block's content (past its length varint) at `pointer`.
fn group_start(bytes: &[u8], pointer: &str) -> usize {
    let node = Document::open(bytes).unwrap().pointer(pointer).unwrap();
    let range = node.block_range().unwrap().unwrap();
    let block = range.start as usize;
    let mut at = block;
    while bytes[at] & 0x80 != 0 {
        at += 1;
    }
    at + 1
}

/// Offset of D of the first zstd frame laid out as framed stripes and tables are (§13.2,
/// §13.4): varint D, varint C, then a frame of C bytes, found by its magic number.
fn first_frame(bytes: &[u8]) -> usize {
    let varint = |at: usize| -> (u64, usize) {
        let (mut v, mut i) = (0u64, 0);
        loop {
            v |= ((bytes[at + i] & 0x7f) as u64) << (7 * i);
            i += 1;
            if bytes[at + i - 1] & 0x80 == 0 {
                return (v, i);
            }
        }
    };
    let magic = bytes.windows(4).position(|w| w == [0x28, 0xb5, 0x2f, 0xfd]).expect("a zstd frame");
    (magic.saturating_sub(20)..magic)
        .find(|&p| {
            let (_, d_len) = varint(p);
            let (c, c_len) = varint(p + d_len);
            p + d_len + c_len == magic && bytes.get(magic + c as usize - 1).is_some()
        })
        .expect("the frame's D")
}

struct Broken {
    name: &'static str,
    description: &'static str,
    bytes: Vec<u8>,
}

fn negative_vectors() -> Vec<Broken> {
    let base = |name: &str| {
        let (_, options, text) = vectors().into_iter().find(|v| v.0 == name).unwrap();
        encode_packed(&parse(text.as_bytes()).unwrap(), &options).unwrap()
    };
    let patched = |mut b: Vec<u8>, at: usize, byte: u8| {
        b[at] = byte;
        b
    };
    let ints = base("ints_root");
    let g = group_start(&ints, "");
    let ragged = base("ragged_arrays");
    let r = group_start(&ragged, "");
    // ragged_arrays: header (2 bytes), N = 40, 2 nodes, 2 columns (len, int), 1 stripe,
    // no keys; node 0 takes 6 bytes (parent, role, name, u16 kinds, flags), then node 1,
    // then the column table (node varint, stream byte, count varint per column).
    let node1 = r + 2 + 1 + 1 + 1 + 1 + 1 + 6;
    let records = base("records");
    let mut truncated = records.clone();
    let cut = group_start(&records, "/rows") + 40;
    truncated.truncate(cut);
    // A residual page in the document form (§13.3): f32 values have no exact JSON form.
    let halves = Value::Array((0..70).map(|i| Value::F32(i as f32 + 0.5)).collect());
    let big = encode_packed(&halves, &PackOptions::default()).unwrap();
    let page = 8 + big[8..].windows(8).position(|w| w == b"LEAFWIRE").unwrap();
    // big_integers_residual: its one residual page is in the JSON form (0x30, D, C, frame).
    let json_page = base("big_integers_residual");
    let json_d = json_page_d(&json_page);
    let framed = base("stripe_frames");
    // The stripe's framing byte, before its D.
    let frame = first_frame(&framed) - 1;
    assert_eq!(framed[frame], 1, "stripe_frames: a framed stripe");
    let tables = base("framed_tables");
    let tables_d = first_frame(&tables);
    assert_eq!(tables[group_start(&tables, "") + 1] & 2, 2, "framed_tables: tables framed");
    // The root slot's tag byte (root record A at 16, its tag at +40, the record's CRC of
    // bytes 0..44 at +44, spec §2.2), changed to 0x10 (packed object).
    let as_object = |mut b: Vec<u8>| {
        assert_eq!(b[56], 0x0E, "a packed array at the root");
        b[56] = 0x10;
        let crc = crc32(&b[16..60]);
        b[60..64].copy_from_slice(&crc.to_le_bytes());
        b
    };
    let numeric_pairs = encode_packed(&parse(format!("[{}]", (0..40).map(|i| format!("[{i}, {}]", i * 3)).collect::<Vec<_>>().join(",")).as_bytes()).unwrap(), &PackOptions::default()).unwrap();
    vec![
        Broken { name: "packed_object_not_entries", description: "a packed object (tag 0x10) whose group is an array of integers, not of [key, value] entries", bytes: as_object(ints.clone()) },
        Broken { name: "packed_object_key_not_string", description: "a packed object whose entries are [int, int] pairs: its keys are not strings", bytes: as_object(numeric_pairs) },
        Broken { name: "packed_object_repeated_key", description: "a packed object whose entries repeat the key \"k0\"", bytes: as_object(base("entry_pairs")) },
        Broken { name: "packed_group_flags", description: "the column group's flags have bit 2 set", bytes: patched(ints.clone(), g + 1, 4) },
        Broken { name: "packed_stripe_framing_byte", description: "a stripe's framing byte is 2 (neither bare nor framed)", bytes: patched(framed.clone(), frame, 2) },
        Broken { name: "packed_stripe_frame_size", description: "a stripe frame declares a D other than the size its zstd frame holds", bytes: {
            let mut b = framed.clone();
            // D's first byte, its low 7 bits changed and its continuation bit kept.
            b[frame + 1] = (b[frame + 1] & 0x80) | ((b[frame + 1] & 0x7f).wrapping_sub(1) & 0x7f);
            b
        } },
        Broken { name: "packed_tables_frame_size", description: "the group's framed tables declare a D other than the size their zstd frame holds", bytes: {
            let mut b = tables.clone();
            b[tables_d] = (b[tables_d] & 0x80) | ((b[tables_d] & 0x7f).wrapping_sub(1) & 0x7f);
            b
        } },
        Broken { name: "packed_residual_page_not_array", description: "the residual page's document has the int 5 at its root, not the array of its values", bytes: {
            // Root record A of the page's document: root slot at +8, root tag at +40, CRC
            // of bytes 0..44 at +44 (spec §2.2).
            let mut b = big.clone();
            let record = page + 16;
            b[record + 8..record + 16].copy_from_slice(&5u64.to_le_bytes());
            b[record + 40] = 0x03;
            let crc = crc32(&b[record..record + 44]);
            b[record + 44..record + 48].copy_from_slice(&crc.to_le_bytes());
            b
        } },
        Broken { name: "packed_residual_json_size", description: "the residual page in the JSON form declares a D other than the size its zstd frame holds", bytes: {
            let mut b = json_page.clone();
            b[json_d] = (b[json_d] & 0x80) | ((b[json_d] & 0x7f).wrapping_sub(1) & 0x7f);
            b
        } },
        Broken { name: "packed_group_version", description: "the column group's version byte is 2", bytes: patched(ints.clone(), g, 2) },
        Broken { name: "packed_tag_without_feature", description: "a packed array in a document whose feature bit 0 is clear", bytes: patched(ints.clone(), 10, ints[10] & !1) },
        Broken { name: "packed_node_parent_not_earlier", description: "node 1 of the group names itself as its parent", bytes: patched(ragged.clone(), node1, 1) },
        Broken { name: "packed_node_unknown_kind", description: "node 1's kinds have bit 12 set", bytes: patched(ragged.clone(), node1 + 4, 0x10) },
        Broken { name: "packed_column_out_of_order", description: "the column table names stream 3 (float) where the node table calls for 6 (length)", bytes: patched(ragged.clone(), node1 + 7, 3) },
        Broken { name: "packed_truncated_document", description: "the document's end moved into the middle of the packed block", bytes: {
            // The end field of root record A (offset 16 + 24) now points into the group; the
            // CRC of the record is recomputed so that only the block is short.
            let mut b = records.clone();
            let end = cut as u64;
            b[40..48].copy_from_slice(&end.to_le_bytes());
            b.truncate(cut);
            let crc = crc32(&b[16..60]);
            b[60..64].copy_from_slice(&crc.to_le_bytes());
            b
        } },
    ]
}

/// Offset of D in the first residual page of the JSON form (§13.3): the 0x30 byte whose
/// D and C varints end where a zstd frame's magic begins.
fn json_page_d(bytes: &[u8]) -> usize {
    let varint_end = |mut at: usize| {
        while bytes[at] & 0x80 != 0 {
            at += 1;
        }
        at + 1
    };
    let magic = bytes.windows(4).position(|w| w == [0x28, 0xB5, 0x2F, 0xFD]).expect("a zstd frame");
    (magic.saturating_sub(8)..magic)
        .find(|&p| bytes[p] == 0x30 && varint_end(varint_end(p + 1)) == magic)
        .expect("a residual page in the JSON form")
        + 1
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn negative_vectors_are_rejected_where_they_say() {
    for v in negative_vectors() {
        let err = validate(&v.bytes).expect_err(v.name);
        let category = match err.category() {
            Category::Malformed => "Malformed",
            Category::Unsupported => "Unsupported",
            Category::LimitExceeded => "LimitExceeded",
            Category::DepthLimit => "DepthLimit",
            other => panic!("{}: unexpected category {other:?}", v.name),
        };
        assert!(leafwire::decode(&v.bytes).is_err(), "{}: decode accepted it", v.name);
        let offset = err.offset().unwrap_or_else(|| panic!("{}: no offset in {err}", v.name));
        let meta = serde_json::json!({
            "rule": if v.name.starts_with("packed_object") { "§13.7 packed objects" } else { "§13 packed arrays" },
            "category": category,
            "offset": offset,
            "description": v.description,
            "decode": "error",
        });
        let path = dir("invalid").join(format!("{}.lw", v.name));
        if regenerate() {
            std::fs::write(&path, &v.bytes).unwrap();
            std::fs::write(path.with_extension("json"), format!("{}\n", serde_json::to_string_pretty(&meta).unwrap())).unwrap();
            continue;
        }
        assert_eq!(std::fs::read(&path).unwrap(), v.bytes, "{} (REGENERATE=1 rewrites it)", v.name);
        let stored: serde_json::Value = serde_json::from_slice(&std::fs::read(path.with_extension("json")).unwrap()).unwrap();
        assert_eq!(stored, meta, "{}", v.name);
    }
}

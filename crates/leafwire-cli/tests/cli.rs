//! The `leafwire` command, run as a process on temporary files: every case checks the
//! exit status, stdout and stderr (failures are one line naming the file and the place).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value as Json;

/// The JSON corpora: the in-repository sample, and the full shared data when present.
#[path = "../../leafwire/tests/common/corpus.rs"]
mod corpus;

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn leafwire(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leafwire"))
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run leafwire");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    Run { ok: out.status.success(), stdout: String::from_utf8(out.stdout).unwrap(), stderr: String::from_utf8(out.stderr).unwrap() }
}

/// Runs and expects success with nothing on stderr.
fn succeed(args: &[&str], stdin: Option<&[u8]>) -> String {
    let run = leafwire(args, stdin);
    assert!(run.ok && run.stderr.is_empty(), "leafwire {args:?} failed: {}", run.stderr);
    run.stdout
}

/// Runs and expects the failure contract: non-zero exit, empty stdout, exactly one
/// stderr line starting with `leafwire: ` and mentioning every string in `mentions`.
fn fail(args: &[&str], stdin: Option<&[u8]>, mentions: &[&str]) -> String {
    let run = leafwire(args, stdin);
    assert!(!run.ok, "leafwire {args:?} succeeded: {}", run.stdout);
    assert_eq!(run.stdout, "", "leafwire {args:?} wrote to stdout on failure");
    assert!(run.stderr.ends_with('\n') && run.stderr.matches('\n').count() == 1, "not one line: {:?}", run.stderr);
    assert!(run.stderr.starts_with("leafwire: "), "{:?}", run.stderr);
    for m in mentions {
        assert!(run.stderr.contains(m), "leafwire {args:?}: stderr {:?} does not mention {m:?}", run.stderr);
    }
    run.stderr
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Converts JSON text to a Leafwire file in `dir`, returning its path.
fn convert(dir: &Path, name: &str, json: &[u8]) -> PathBuf {
    let input = dir.join(format!("{name}.json"));
    let output = dir.join(format!("{name}.lw"));
    fs::write(&input, json).unwrap();
    succeed(&["from-json", s(&input), "-o", s(&output)], None);
    output
}

const ROUND_TRIPS: &[&str] = &[
    "null",
    "true",
    "-17",
    "1.0",
    "-0.0",
    "\"h\\u00e9llo \\\"w\\\\orld\\\" \\ud83d\\ude00\"",
    "[]",
    "{}",
    "[1, 2, 3, -4]",
    "[1, 2.5, -60.64, 47]",
    "[[1.5, 2.5], [3.5, 4.5]]",
    "[[1, 2], [3, 4], [5, 6]]",
    "[9223372036854775807, 9223372036854775808, 18446744073709551615]",
    "[1e300, 5e-324, 1.7976931348623157e308, 0.1]",
    r#"{"a": {"b": [null, true, false, "x", {"c": []}]}, "": {"~/": 1}}"#,
    r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":[{"deep":[[[]]]}]}"#,
];

#[test]
fn json_round_trips_through_leafwire() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = ROUND_TRIPS.iter().enumerate().map(|(i, j)| (format!("inline{i}"), j.as_bytes().to_vec())).collect();
    for corpus in corpus::corpora() {
        for name in ["github_events.json", "twitter.json", "numbers.json", "canada.json"] {
            cases.push((format!("{}-{name}", corpus.name), corpus.json(name)));
        }
    }
    for (name, json) in &cases {
        let expected: Json = serde_json::from_slice(json).unwrap();
        let lw = convert(dir.path(), name, json);
        let compact = succeed(&["to-json", s(&lw)], None);
        assert!(!compact.trim_end().contains('\n'), "{name}: compact output spans lines");
        let pretty = succeed(&["to-json", "--pretty", s(&lw)], None);
        let to_file = dir.path().join(format!("{name}.out.json"));
        assert_eq!(succeed(&["to-json", s(&lw), "-o", s(&to_file)], None), "");
        for (how, text) in [("compact", compact.clone()), ("pretty", pretty.clone()), ("-o", fs::read_to_string(&to_file).unwrap())] {
            let got: Json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} {how}: {e}"));
            assert_eq!(got, expected, "{name} ({how})");
        }
    }
}

#[test]
fn pretty_output_has_serde_json_layout() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "p", br#"{"a":[1,{"b":[]}],"c":{},"d":"x,{"}"#);
    let pretty = succeed(&["to-json", "--pretty", s(&lw)], None);
    assert_eq!(pretty, "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {},\n  \"d\": \"x,{\"\n}\n");
}

#[test]
fn stdin_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stdin.lw");
    succeed(&["from-json", "-", "-o", s(&out)], Some(br#"{"from": ["stdin", 1]}"#));
    assert_eq!(succeed(&["to-json", s(&out)], None), "{\"from\":[\"stdin\",1]}\n");
    let err = fail(&["from-json", "-", "-o", s(&out)], Some(b"{\"from\": [stdin]}"), &["<stdin>", "line 1", "column"]);
    assert!(err.contains("line"), "{err}");
}

#[test]
fn get_reads_pointers() {
    for corpus in corpus::corpora() {
        get_reads_pointers_in(&corpus.json("twitter.json"));
    }
}

fn get_reads_pointers_in(json: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let expected: Json = serde_json::from_slice(json).unwrap();
    let n = expected["statuses"].as_array().unwrap().len();
    assert!(n >= 10, "twitter.json has {n} statuses");
    let lw = convert(dir.path(), "twitter", json);
    let pointers = [
        "/statuses/0/user/screen_name".to_owned(),
        "/statuses/3/entities/hashtags".to_owned(),
        "/statuses/7/user/entities/description/urls".to_owned(),
        format!("/statuses/{}/metadata/iso_language_code", n - 1),
        format!("/statuses/{}/id", n / 2),
        "/search_metadata".to_owned(),
        "/search_metadata/count".to_owned(),
    ];
    for pointer in &pointers {
        let out = succeed(&["get", s(&lw), pointer], None);
        assert!(out.ends_with('\n'));
        let got: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(Some(&got), expected.pointer(pointer), "{pointer}");
    }
    let root: Json = serde_json::from_str(&succeed(&["get", s(&lw), ""], None)).unwrap();
    assert_eq!(root, expected);

    let past_end = format!("/statuses/{n}");
    let absent = ["/statuses/0/no_such_key", &past_end, "/statuses/x", "/search_metadata/count/deeper", "no-slash", "/statuses/01"];
    for pointer in absent {
        fail(&["get", s(&lw), pointer], None, &[pointer, s(&lw)]);
    }
}

#[test]
fn get_on_typed_arrays_and_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "t", br#"{"m": [[1.5, 2], [3, 4.25]], "a/b": {"c~d": [7, 8]}}"#);
    let cases = [("/m", "[[1.5,2],[3,4.25]]"), ("/m/1", "[3,4.25]"), ("/m/0/1", "2"), ("/m/1/1", "4.25"), ("/a~1b/c~0d/1", "8")];
    for (pointer, json) in cases {
        assert_eq!(succeed(&["get", s(&lw), pointer], None), format!("{json}\n"), "{pointer}");
    }
    fail(&["get", s(&lw), "/m/2"], None, &["/m/2"]);
    fail(&["get", s(&lw), "/a~2b"], None, &["/a~2b"]);
}

#[test]
fn invalid_json_reports_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[u8], &[&str])] = &[
        ("syntax", b"{\n  \"a\": [1, 2,]\n}", &["line 2", "column"]),
        ("trailing", b"[1] x", &["line 1", "column"]),
        ("empty", b"", &["line", "column"]),
        ("duplicate", b"{\"a\": 1, \"a\": 2}", &["line 1", "column"]),
        ("not utf-8", b"[\"\xff\"]", &["line", "column"]),
        ("too deep", b"[[[[[[1]]]]]]", &["line", "column", "max_depth"]),
    ];
    for (name, json, mentions) in cases {
        let input = dir.path().join(format!("{name}.json"));
        let output = dir.path().join(format!("{name}.lw"));
        fs::write(&input, json).unwrap();
        let mut args = vec!["from-json", s(&input), "-o", s(&output)];
        if *name == "too deep" {
            args.extend(["--max-depth", "4"]);
        }
        fail(&args, None, &[&[s(&input)], *mentions].concat());
        assert!(!output.exists(), "{name}: a failed conversion left {output:?}");
    }
    let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n.to_string_lossy().contains(".tmp-")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let input = dir.path().join("duplicate.json");
    let output = dir.path().join("last.lw");
    succeed(&["from-json", s(&input), "-o", s(&output), "--duplicate-keys", "last"], None);
    assert_eq!(succeed(&["to-json", s(&output)], None), "{\"a\":2}\n");
}

#[test]
fn damaged_files_fail_with_byte_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "doc", br#"{"name": "caf\u00e9", "xs": [1.5, 2.5], "list": [{"k": "v"}, [1, "two"]]}"#);
    let bytes = fs::read(&lw).unwrap();

    let mut bad_utf8 = bytes.clone();
    let at = bytes.windows(5).position(|w| w == "café".as_bytes()).unwrap();
    bad_utf8[at + 3] = 0xff;
    let mut bad_magic = bytes.clone();
    bad_magic[0] = b'X';
    let mut bad_crc = bytes.clone();
    bad_crc[60] ^= 1;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", bytes[..bytes.len() - 9].to_vec()),
        ("half", bytes[..bytes.len() / 2].to_vec()),
        ("header only", bytes[..50].to_vec()),
        ("empty", Vec::new()),
        ("bad utf-8", bad_utf8),
        ("bad magic", bad_magic),
        ("bad crc", bad_crc),
    ];
    for (name, damaged) in cases {
        let path = dir.path().join(format!("{name}.lw"));
        fs::write(&path, &damaged).unwrap();
        for command in ["validate", "to-json"] {
            fail(&[command, s(&path)], None, &[s(&path), "byte"]);
        }
        if name != "bad utf-8" {
            fail(&["inspect", s(&path)], None, &[s(&path), "byte"]);
        }
        // The pointer does not reach the damage in every case; when it fails, it says where.
        let run = leafwire(&["get", s(&path), "/name"], None);
        if !run.ok {
            fail(&["get", s(&path), "/name"], None, &["byte"]);
        }
    }
}

#[test]
fn validate_summarizes_a_good_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = corpus::corpora()[0].json("twitter.json");
    let lw = convert(dir.path(), "twitter", &json);
    let line = succeed(&["validate", s(&lw)], None);
    assert_eq!(line.matches('\n').count(), 1, "{line}");
    for word in ["valid Leafwire 1.0", "containers", "strings", "typed arrays", "keys", "max depth", "bytes"] {
        assert!(line.contains(word), "{line:?} lacks {word:?}");
    }
    fail(&["validate", "--max-depth", "2", s(&lw)], None, &["max_depth", "byte"]);
}

#[test]
fn inspect_lists_the_top_level() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "i", br#"{"name": "mesh", "xs": [[0.5, 1], [2, 3]], "tags": ["a", "b"], "n": 3, "meta": {"x": null}}"#);
    let text = succeed(&["inspect", s(&lw)], None);
    for expected in ["Leafwire 1.0", "generation 1", "6 keys", "object, 5 entries", "\"name\"", "string, 4 bytes: \"mesh\"", "typed array of f64, shape [2, 2]", "array, 2 items", "int 3", "object, 1 entry"] {
        assert!(text.contains(expected), "inspect output lacks {expected:?}:\n{text}");
    }
}

#[test]
fn missing_files_and_non_finite_floats() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.lw");
    for args in [vec!["to-json", s(&missing)], vec!["get", s(&missing), "/a"], vec!["validate", s(&missing)], vec!["inspect", s(&missing)], vec!["from-json", s(&missing), "-o", "x.lw"]] {
        let err = fail(&args, None, &[s(&missing)]);
        assert_eq!(err.matches(s(&missing)).count(), 1, "{err}");
    }

    let mut map = leafwire::Map::default();
    map.insert("ok".into(), leafwire::Value::F64(1.5));
    map.insert("bad".into(), leafwire::Value::Array(vec![leafwire::Value::F64(f64::NAN)]));
    let nan = dir.path().join("nan.lw");
    fs::write(&nan, leafwire::encode(&leafwire::Value::Object(map)).unwrap()).unwrap();
    fail(&["to-json", s(&nan)], None, &["no JSON form", "/bad/0"]);
    fail(&["to-json", "--pretty", s(&nan)], None, &["no JSON form", "/bad/0"]);
    let out = dir.path().join("nan.json");
    fail(&["to-json", s(&nan), "-o", s(&out)], None, &["no JSON form"]);
    assert!(!out.exists());
    assert_eq!(succeed(&["get", s(&nan), "/ok"], None), "1.5\n");
    succeed(&["validate", s(&nan)], None);
}

#[test]
fn shared_subtrees_are_caught() {
    // `[["a"], ["b"]]` with the root's second slot pointed at the first child: a DAG. The
    // lazy reader follows it (spec §9 says lazy access may), whole-value output stays
    // bounded by the document's size, and validation rejects it.
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "dag", b"[[\"a\"], [\"b\"]]");
    let text = succeed(&["inspect", s(&lw)], None);
    let offset_of = |item: &str| -> u16 {
        let line = text.lines().find(|l| l.trim_start().starts_with(item)).unwrap();
        line.rsplit("at byte ").next().unwrap().parse().unwrap()
    };
    let (first, second) = (offset_of("[0]"), offset_of("[1]"));
    let mut bytes = fs::read(&lw).unwrap();
    let at = bytes.windows(2).position(|w| w == second.to_le_bytes()).unwrap();
    bytes[at..at + 2].copy_from_slice(&first.to_le_bytes());
    fs::write(&lw, &bytes).unwrap();

    assert_eq!(succeed(&["get", s(&lw), "/1/0"], None), "\"a\"\n");
    fail(&["validate", s(&lw)], None, &["reachable twice", "byte"]);

    // Sixty arrays each holding the next one twice describe 2^60 values in 600 bytes:
    // refused by every whole-value command, not expanded.
    let mut doc = vec![0u8; 112];
    doc[..8].copy_from_slice(b"LEAFWIRE");
    doc[8] = 1;
    doc[16..24].copy_from_slice(&1u64.to_le_bytes());
    doc[24..32].copy_from_slice(&112u64.to_le_bytes());
    doc[56] = 0x0A;
    for i in 0..60u16 {
        let next = 112 + 8 * (i + 1);
        doc.extend_from_slice(&[0x01, 0x02, 0x0A, 0x0A]);
        doc.extend_from_slice(&next.to_le_bytes());
        doc.extend_from_slice(&next.to_le_bytes());
    }
    doc.extend_from_slice(&[0x00, 0x00]);
    let end = doc.len() as u64;
    doc[40..48].copy_from_slice(&end.to_le_bytes());
    let crc = crc32fast::hash(&doc[16..60]);
    doc[60..64].copy_from_slice(&crc.to_le_bytes());
    let dag = dir.path().join("exploding.lw");
    fs::write(&dag, &doc).unwrap();
    for args in [vec!["to-json", s(&dag)], vec!["get", s(&dag), ""], vec!["get", s(&dag), "/0/1"]] {
        fail(&args, None, &["more values than it has bytes", "byte"]);
    }
    fail(&["validate", s(&dag)], None, &["reachable twice", "byte"]);
}


#[test]
fn inspect_describes_every_root_kind() {
    use leafwire::{IntMap, TypedArray, TypedData, Value};
    let dir = tempfile::tempdir().unwrap();
    let mut intmap = IntMap::default();
    intmap.insert(-7, Value::Bytes(vec![1, 2, 3]));
    intmap.insert(1 << 40, Value::BigNum("-123456789012345678901234567890".into()));
    let many: Vec<Value> = (0..150).map(|i| Value::String(format!("s{i}"))).collect();
    let cases: Vec<(&str, Value, &[&str])> = vec![
        ("intmap", Value::IntMap(intmap), &["intmap, 2 entries", "-7", "bytes, 3 bytes", "1099511627776", "bignum -123456789012345678901234567890"]),
        ("typed", Value::Typed(TypedArray::new(TypedData::U16(vec![1, 2, 3]))), &["typed array of u16, shape [3]"]),
        ("scalar", Value::F32(1.5), &["root         f32 1.5"]),
        ("long array", Value::Array(many), &["array, 150 items", "[99]", "... and 50 more"]),
    ];
    for (name, value, expected) in cases {
        let path = dir.path().join(format!("{name}.lw"));
        fs::write(&path, leafwire::encode(&value).unwrap()).unwrap();
        let text = succeed(&["inspect", s(&path)], None);
        for e in expected {
            assert!(text.contains(e), "{name}: inspect output lacks {e:?}:\n{text}");
        }
    }
}

#[test]
fn set_delete_and_compact_edit_files_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "edit", br#"{"name":"leaf","tags":["a"],"n":1,"old":{"x":[1,2]}}"#);

    succeed(&["set", s(&lw), "/name", r#""a much longer name than before""#], None);
    succeed(&["set", s(&lw), "/n", "1099511627776"], None);
    succeed(&["set", s(&lw), "/tags/-", r#"{"deep":[0.5,1.5]}"#], None);
    succeed(&["set", s(&lw), "/added", "null"], None);
    succeed(&["delete", s(&lw), "/old"], None);
    succeed(&["validate", s(&lw)], None);
    let expected = r#"{"name":"a much longer name than before","tags":["a",{"deep":[0.5,1.5]}],"n":1099511627776,"added":null}"#;
    assert_eq!(succeed(&["to-json", s(&lw)], None), format!("{expected}\n"));

    // Errors name what is wrong and leave the file as it was.
    let before = fs::read(&lw).unwrap();
    fail(&["delete", s(&lw), "/missing"], None, &["missing"]);
    fail(&["set", s(&lw), "/tags/9", "1"], None, &["9"]);
    fail(&["set", s(&lw), "/n", "{not json"], None, &["line", "column"]);
    assert_eq!(fs::read(&lw).unwrap(), before);

    // Compaction drops the edits' garbage and gives the canonical bytes of the value.
    let canonical = convert(dir.path(), "canonical", expected.as_bytes());
    let out = dir.path().join("compact.lw");
    succeed(&["compact", s(&lw), "-o", s(&out)], None);
    assert_eq!(fs::read(&out).unwrap(), fs::read(&canonical).unwrap());
    assert!(fs::read(&lw).unwrap().len() > fs::read(&out).unwrap().len());
    succeed(&["compact", s(&lw)], None);
    assert_eq!(fs::read(&lw).unwrap(), fs::read(&canonical).unwrap());
}

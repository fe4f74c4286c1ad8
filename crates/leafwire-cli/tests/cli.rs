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
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Runs and expects success with nothing on stderr.
fn succeed(args: &[&str], stdin: Option<&[u8]>) -> String {
    let run = leafwire(args, stdin);
    assert!(run.ok && run.stderr.is_empty(), "leafwire {args:?} failed: {}", run.stderr);
    run.stdout
}

/// Runs and expects the failure contract: non-zero exit, empty stdout, exactly one
/// stderr line starting with `leafwire: ` and mentioning every string in `mentions`.
/// `to-json` to stdout streams, so a document failing halfway leaves the text written up to
/// that point: only there is stdout allowed to be non-empty.
fn fail(args: &[&str], stdin: Option<&[u8]>, mentions: &[&str]) -> String {
    let run = leafwire(args, stdin);
    assert!(!run.ok, "leafwire {args:?} succeeded: {}", run.stdout);
    let streams_to_stdout =
        matches!(args.first(), Some(&"to-json") | Some(&"to-jsonl") | Some(&"cat")) && !args.contains(&"-o");
    if !streams_to_stdout {
        assert_eq!(run.stdout, "", "leafwire {args:?} wrote to stdout on failure");
    }
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
    let mut cases: Vec<(String, Vec<u8>)> =
        ROUND_TRIPS.iter().enumerate().map(|(i, j)| (format!("inline{i}"), j.as_bytes().to_vec())).collect();
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
        for (how, text) in
            [("compact", compact.clone()), ("pretty", pretty.clone()), ("-o", fs::read_to_string(&to_file).unwrap())]
        {
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
    assert_eq!(
        pretty,
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {},\n  \"d\": \"x,{\"\n}\n"
    );
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
    let absent = [
        "/statuses/0/no_such_key",
        &past_end,
        "/statuses/x",
        "/search_metadata/count/deeper",
        "no-slash",
        "/statuses/01",
    ];
    for pointer in absent {
        fail(&["get", s(&lw), pointer], None, &[pointer, s(&lw)]);
    }
}

#[test]
fn get_on_typed_arrays_and_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "t", br#"{"m": [[1.5, 2], [3, 4.25]], "a/b": {"c~d": [7, 8]}}"#);
    let cases = [
        ("/m", "[[1.5,2],[3,4.25]]"),
        ("/m/1", "[3,4.25]"),
        ("/m/0/1", "2"),
        ("/m/1/1", "4.25"),
        ("/a~1b/c~0d/1", "8"),
    ];
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
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let input = dir.path().join("duplicate.json");
    let output = dir.path().join("last.lw");
    succeed(&["from-json", s(&input), "-o", s(&output), "--duplicate-keys", "last"], None);
    assert_eq!(succeed(&["to-json", s(&output)], None), "{\"a\":2}\n");
}

#[test]
fn damaged_files_fail_with_byte_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let lw =
        convert(dir.path(), "doc", br#"{"name": "caf\u00e9", "xs": [1.5, 2.5], "list": [{"k": "v"}, [1, "two"]]}"#);
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
        for command in ["validate", "to-json", "stats"] {
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
    let lw = convert(
        dir.path(),
        "i",
        br#"{"name": "mesh", "xs": [[0.5, 1], [2, 3]], "tags": ["a", "b"], "n": 3, "meta": {"x": null}}"#,
    );
    let text = succeed(&["inspect", s(&lw)], None);
    for expected in [
        "Leafwire 1.0",
        "generation 1",
        "6 keys",
        "object, 5 entries",
        "\"name\"",
        "string, 4 bytes: \"mesh\"",
        "typed array of f64, shape [2, 2]",
        "array, 2 items",
        "int 3",
        "object, 1 entry",
    ] {
        assert!(text.contains(expected), "inspect output lacks {expected:?}:\n{text}");
    }
}

#[test]
fn missing_files_and_non_finite_floats() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.lw");
    for args in [
        vec!["to-json", s(&missing)],
        vec!["get", s(&missing), "/a"],
        vec!["validate", s(&missing)],
        vec!["inspect", s(&missing)],
        vec!["from-json", s(&missing), "-o", "x.lw"],
    ] {
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
    // Streamed to stdout: the text before the NaN is out when it is met, and the exit
    // status and stderr say the output is incomplete.
    let run = leafwire(&["to-json", s(&nan)], None);
    assert!(
        !run.ok && run.stdout == r#"{"ok":1.5,"bad":["# && run.stderr.contains("no JSON form"),
        "{:?} {:?}",
        run.stdout,
        run.stderr
    );
    let out = dir.path().join("nan.json");
    fail(&["to-json", s(&nan), "-o", s(&out)], None, &["no JSON form"]);
    assert!(!out.exists());
    assert_eq!(succeed(&["get", s(&nan), "/ok"], None), "1.5\n");
    succeed(&["validate", s(&nan)], None);
}

/// The same damage in a file with page checksums (the default) is found by them first.
fn checksums_find_what_the_tree_rule_would() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "dag", b"[[\"a\"], [\"b\"]]");
    let mut bytes = fs::read(&lw).unwrap();
    bytes[130] ^= 1; // inside the structure section, in the first page
    fs::write(&lw, &bytes).unwrap();
    fail(&["validate", s(&lw)], None, &["page checksum mismatch", "byte 112"]);
}

#[test]
fn shared_subtrees_are_caught() {
    checksums_find_what_the_tree_rule_would();
    // `[["a"], ["b"]]` with the root's second slot pointed at the first child: a DAG. The
    // lazy reader follows it (spec §9 says lazy access may), whole-value output stays
    // bounded by the document's size, and validation rejects it.
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "dag", b"[[\"a\"], [\"b\"]]");
    // Without checksums, so that the damage below is found by the tree rule, not by them.
    succeed(&["compact", s(&lw), "--no-checksums"], None);
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
        (
            "intmap",
            Value::IntMap(intmap),
            &["intmap, 2 entries", "-7", "bytes, 3 bytes", "1099511627776", "bignum -123456789012345678901234567890"],
        ),
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
    let expected =
        r#"{"name":"a much longer name than before","tags":["a",{"deep":[0.5,1.5]}],"n":1099511627776,"added":null}"#;
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

#[test]
fn values_and_pointers_may_start_with_a_hyphen() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "hyphen", br#"{"a": 1, "b": [1, "x"], "-k": 3}"#);
    succeed(&["set", s(&lw), "/a", "-7"], None);
    succeed(&["set", s(&lw), "/b/0", "-1.5e3"], None);
    succeed(&["set", s(&lw), "/b/-", "-0"], None);
    succeed(&["set", s(&lw), "/c", "--", "-2"], None);
    assert_eq!(succeed(&["get", s(&lw), "/a"], None), "-7\n");
    assert_eq!(succeed(&["to-json", s(&lw)], None), "{\"a\":-7,\"b\":[-1500.0,\"x\",0],\"-k\":3,\"c\":-2}\n");
    // A pointer that is not one fails as a pointer, in one line, not as an unknown option.
    for args in [vec!["get", s(&lw), "-k"], vec!["delete", s(&lw), "-k"], vec!["set", s(&lw), "-k", "1"]] {
        fail(&args, None, &["-k", "JSON Pointer"]);
    }
    succeed(&["delete", s(&lw), "/-k"], None);
    fail(&["get", s(&lw), "/-k"], None, &["-k"]);
}

#[test]
fn missing_paths_fail_alike_in_get_set_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "missing", br#"{"a": 1, "b": {}, "list": [1, "x"], "xs": [0.5, 1.5]}"#);
    let before = fs::read(&lw).unwrap();
    let cases = [
        ("/b/c/d", r#"no "c" in /b (path /b/c/d)"#),
        ("/list/5/z", r#"no "5" in /list, an array of 2 items (path /list/5/z)"#),
        ("/list/01/z", r#"no "01" in /list, an array of 2 items (path /list/01/z)"#),
        ("/xs/2/z", r#"no "2" in /xs, an array of 2 items (path /xs/2/z)"#),
        ("/xs/1/z", r#"no "z" in /xs/1, which is a float (path /xs/1/z)"#),
        ("/a/b/c", r#"no "b" in /a, which is an integer (path /a/b/c)"#),
        ("/nope/x", r#"no "nope" in the root (path /nope/x)"#),
        ("/a~1b/x", r#"no "a/b" in the root (path /a~1b/x)"#),
        ("/list/5", r#"no "5" in /list, an array of 2 items (path /list/5)"#),
        ("/a/b", r#"no "b" in /a, which is an integer (path /a/b)"#),
        ("nope", r#""nope" is not a JSON Pointer: it must be empty or start with "/""#),
        ("/b/~2", r#""/b/~2" is not a JSON Pointer: "~" must be followed by "0" or "1""#),
    ];
    for (pointer, message) in cases {
        let expected = format!("leafwire: {}: {message}\n", s(&lw));
        for args in [vec!["get", s(&lw), pointer], vec!["delete", s(&lw), pointer], vec!["set", s(&lw), pointer, "1"]] {
            assert_eq!(fail(&args, None, &[]), expected, "{args:?}");
        }
    }
    // A key that is missing only at the end: get and delete fail alike, set adds it.
    for command in ["get", "delete"] {
        assert_eq!(
            fail(&[command, s(&lw), "/b/c"], None, &[]),
            format!("leafwire: {}: no \"c\" in /b (path /b/c)\n", s(&lw))
        );
    }
    assert_eq!(fs::read(&lw).unwrap(), before);
    succeed(&["set", s(&lw), "/b/c", "2"], None);
    succeed(&["set", s(&lw), "/list/2", "3"], None);
    assert_eq!(succeed(&["get", s(&lw), "/b"], None), "{\"c\":2}\n");
    assert_eq!(succeed(&["get", s(&lw), "/list"], None), "[1,\"x\",3]\n");
}

#[test]
fn inspect_prints_floats_in_shortest_round_trip_form() {
    use leafwire::Value;
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(
        dir.path(),
        "floats",
        br#"{"tiny": 5e-324, "huge": 1.7976931348623157e308, "tenth": 0.1, "one": 1.0, "neg": -2.5e-10}"#,
    );
    let text = succeed(&["inspect", s(&lw)], None);
    for expected in ["f64 5e-324", "f64 1.7976931348623157e308", "f64 0.1", "f64 1.0", "f64 -2.5e-10"] {
        assert!(text.lines().any(|l| l.trim_end().ends_with(expected)), "inspect output lacks {expected:?}:\n{text}");
    }
    assert!(text.lines().all(|l| l.len() < 100), "a long line:\n{text}");
    let f32_root = dir.path().join("f32.lw");
    fs::write(&f32_root, leafwire::encode(&Value::F32(f32::from_bits(1))).unwrap()).unwrap();
    assert!(succeed(&["inspect", s(&f32_root)], None).contains("root         f32 1e-45\n"));
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Rewrites keep the file's mode and refuse read-only files; new outputs are never more
/// open than their source. (Checked by mode bits, so it holds when the tests run as root.)
#[cfg(unix)]
#[test]
fn permissions_are_kept_and_never_widened() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(dir.path(), "perm", br#"{"a": [1, "x"], "b": "secret"}"#);
    succeed(&["set", s(&lw), "/a/-", "2"], None);

    // In place: the mode is kept; a read-only file is refused and left alone.
    chmod(&lw, 0o640);
    succeed(&["compact", s(&lw)], None);
    assert_eq!(mode(&lw), 0o640);
    succeed(&["set", s(&lw), "/c", "3"], None);
    assert_eq!(mode(&lw), 0o640);
    chmod(&lw, 0o444);
    let before = fs::read(&lw).unwrap();
    for args in [vec!["compact", s(&lw)], vec!["set", s(&lw), "/a/0", "9"], vec!["delete", s(&lw), "/b"]] {
        fail(&args, None, &[s(&lw), "read-only"]);
        assert_eq!((fs::read(&lw).unwrap(), mode(&lw)), (before.clone(), 0o444), "{args:?}");
    }

    // New outputs take the source's mode (less the umask, which only narrows).
    chmod(&lw, 0o600);
    let json = dir.path().join("out.json");
    let compacted = dir.path().join("out.lw");
    succeed(&["to-json", s(&lw), "-o", s(&json)], None);
    succeed(&["compact", s(&lw), "-o", s(&compacted)], None);
    assert_eq!((mode(&json), mode(&compacted)), (0o600, 0o600));
    let private_json = dir.path().join("private.json");
    fs::write(&private_json, b"[1]").unwrap();
    chmod(&private_json, 0o600);
    let from_private = dir.path().join("private.lw");
    succeed(&["from-json", s(&private_json), "-o", s(&from_private)], None);
    assert_eq!(mode(&from_private), 0o600);

    // Replacing an existing output keeps its mode, narrowed to the source's.
    chmod(&json, 0o644);
    succeed(&["to-json", s(&lw), "-o", s(&json)], None);
    assert_eq!(mode(&json), 0o600);
    chmod(&lw, 0o644);
    chmod(&json, 0o640);
    succeed(&["to-json", s(&lw), "-o", s(&json)], None);
    assert_eq!(mode(&json), 0o640);
    chmod(&json, 0o444);
    fail(&["to-json", s(&lw), "-o", s(&json)], None, &[s(&json), "read-only"]);
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Runs in `cwd` with raw stdout: (success, stdout bytes, stderr).
fn leafwire_raw(cwd: &Path, args: &[&str], stdin: &[u8]) -> (bool, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leafwire"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run leafwire");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (out.status.success(), out.stdout, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn dash_is_stdin_and_stdout_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let json = br#"{"a": [1, "x"], "xs": [0.5, 1.5], "n": -3}"#;
    let lw = convert(cwd, "dash", json);
    let lw_bytes = fs::read(&lw).unwrap();
    let ok = |args: &[&str], stdin: &[u8]| -> Vec<u8> {
        let (ok, stdout, stderr) = leafwire_raw(cwd, args, stdin);
        assert!(ok && stderr.is_empty(), "leafwire {args:?}: {stderr}");
        stdout
    };
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    let compact_json = "{\"a\":[1,\"x\"],\"xs\":[0.5,1.5],\"n\":-3}\n";

    // Leafwire from stdin.
    assert_eq!(text(ok(&["to-json", "-"], &lw_bytes)), compact_json);
    assert_eq!(text(ok(&["to-json", "-", "-o", "-"], &lw_bytes)), compact_json);
    assert_eq!(text(ok(&["get", "-", "/xs/1"], &lw_bytes)), "1.5\n");
    assert_eq!(text(ok(&["get", "-", "/n"], &lw_bytes)), "-3\n");
    assert!(text(ok(&["validate", "-"], &lw_bytes)).starts_with("<stdin>: valid Leafwire 1.0"));
    assert!(text(ok(&["inspect", "-"], &lw_bytes)).contains("typed array of f64, shape [2]"));

    // Leafwire to stdout: the same bytes as a file.
    assert_eq!(ok(&["from-json", "dash.json", "-o", "-"], b""), lw_bytes);
    assert_eq!(ok(&["from-json", "-", "-o", "-"], json), lw_bytes);
    assert_eq!(ok(&["compact", "-"], &lw_bytes), lw_bytes);
    assert_eq!(ok(&["compact", "dash.lw", "-o", "-"], b""), lw_bytes);
    assert_eq!(text(ok(&["to-json", "dash.lw", "-o", "-"], b"")), compact_json);

    // Edits of stdin go to stdout; the pipe composes.
    let edited = ok(&["set", "-", "/n", "-4"], &lw_bytes);
    let edited = ok(&["delete", "-", "/a/0"], &edited);
    assert_eq!(text(ok(&["to-json", "-"], &edited)), "{\"a\":[\"x\"],\"xs\":[0.5,1.5],\"n\":-4}\n");
    assert_eq!(fs::read(&lw).unwrap(), lw_bytes);

    // Failures name stdin, print one line and nothing on stdout.
    for args in [
        vec!["to-json", "-"],
        vec!["validate", "-"],
        vec!["inspect", "-"],
        vec!["get", "-", "/a"],
        vec!["compact", "-"],
        vec!["set", "-", "/a", "1"],
    ] {
        let (ok, stdout, stderr) = leafwire_raw(cwd, &args, b"not leafwire at all, not even close to a header");
        assert!(
            !ok && stdout.is_empty() && stderr.starts_with("leafwire: <stdin>: ") && stderr.matches('\n').count() == 1,
            "{args:?}: {stderr}"
        );
    }
    // No file named "-" (or a temporary for one) was created.
    let names: Vec<_> =
        fs::read_dir(cwd).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.starts_with('-')), "{names:?}");
}

/// JSON text of `n` records, a few dozen bytes each.
fn big_json(n: usize) -> Vec<u8> {
    let mut text = String::from("[");
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(r#"{{"id":{i},"name":"item {i}","tags":["a","b",{i}],"x":{}.5}}"#, i % 1000));
    }
    text.push(']');
    text.into_bytes()
}

fn temporaries_in(dir: &Path) -> Vec<String> {
    let names = fs::read_dir(dir).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned());
    names.filter(|n| n.contains(".tmp-")).collect()
}

/// Starts `leafwire args` (made by `args` for an input of `n` records), sends `signal`
/// once its temporary output file exists, and checks that it died of the signal and left
/// no temporary behind. Returns false when the command finished before the temporary was
/// seen (the input was too small to catch it).
#[cfg(unix)]
fn interrupted_while_writing(dir: &Path, args: &[&str], signal: &str, number: i32) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_leafwire"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if !temporaries_in(dir).is_empty() {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "leafwire {args:?} failed");
            return false;
        }
    }
    let killed = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        return false; // finished between the check and the signal
    }
    assert!(
        out.status.signal() == Some(number) || out.status.code() == Some(128 + number),
        "leafwire {args:?} {signal}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(temporaries_in(dir), Vec::<String>::new(), "leafwire {args:?} {signal}");
    true
}

#[cfg(unix)]
#[test]
fn interrupted_conversions_leave_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    let (json, lw, out) = (dir.path().join("big.json"), dir.path().join("big.lw"), work.join("out"));
    let mut caught = [false; 3];
    let mut n = 50_000;
    for _ in 0..6 {
        fs::write(&json, big_json(n)).unwrap();
        succeed(&["from-json", s(&json), "-o", s(&lw)], None);
        let cases: [(&[&str], &str, i32); 3] = [
            (&["from-json", s(&json), "-o", s(&out)], "-INT", 2),
            (&["to-json", s(&lw), "-o", s(&out)], "-INT", 2),
            (&["to-json", "--pretty", s(&lw), "-o", s(&out)], "-TERM", 15),
        ];
        for (i, (args, signal, number)) in cases.iter().enumerate() {
            if !caught[i] {
                caught[i] = interrupted_while_writing(&work, args, signal, *number);
                let _ = fs::remove_file(&out);
            }
        }
        if caught.iter().all(|&c| c) {
            return;
        }
        n *= 2;
    }
    panic!("never caught a conversion while it wrote (caught: {caught:?}, last input {n} records)");
}

#[test]
fn set_and_delete_reach_into_typed_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let lw =
        convert(dir.path(), "typed", br#"{"xs": [1.5, 2.5, 3.5, 4.5], "m": [[1.5, 2], [3, 4.25]], "i": [1, 2, 3]}"#);
    let layout = |pointer: &str| -> String {
        let text = succeed(&["inspect", s(&lw)], None);
        let line = text.lines().find(|l| l.trim_start().starts_with(&format!("\"{pointer}\""))).unwrap().to_owned();
        line.split(", at byte").next().unwrap().split_whitespace().skip(1).collect::<Vec<_>>().join(" ")
    };
    // One element in place; the array keeps its layout.
    succeed(&["set", s(&lw), "/xs/3", "2.5"], None);
    succeed(&["set", s(&lw), "/m/1/0", "7.5"], None);
    succeed(&["set", s(&lw), "/i/2", "-100"], None);
    assert_eq!(succeed(&["get", s(&lw), "/xs/3"], None), "2.5\n");
    assert_eq!(
        succeed(&["to-json", s(&lw)], None),
        "{\"xs\":[1.5,2.5,3.5,2.5],\"m\":[[1.5,2],[7.5,4.25]],\"i\":[1,2,-100]}\n"
    );
    assert_eq!(
        (layout("xs"), layout("m"), layout("i")),
        (
            "typed array of f64, shape [4]".into(),
            "typed array of f64, shape [2, 2]".into(),
            "typed array of i8, shape [3]".into()
        )
    );

    // Values the element type cannot hold, and new elements, re-lay the array out as
    // from-json would lay out its JSON.
    succeed(&["set", s(&lw), "/xs/0", "-1"], None);
    succeed(&["set", s(&lw), "/i/0", "1000"], None);
    succeed(&["set", s(&lw), "/i/-", "5"], None);
    succeed(&["set", s(&lw), "/i/4", "6"], None);
    assert_eq!(succeed(&["get", s(&lw), "/xs"], None), "[-1,2.5,3.5,2.5]\n");
    assert_eq!(succeed(&["get", s(&lw), "/i"], None), "[1000,2,-100,5,6]\n");
    assert_eq!(
        (layout("xs"), layout("i")),
        ("typed array of f64, shape [4]".into(), "typed array of i16, shape [5]".into())
    );
    succeed(&["delete", s(&lw), "/xs/1"], None);
    succeed(&["delete", s(&lw), "/m/0"], None);
    succeed(&["set", s(&lw), "/i/1", r#""two""#], None);
    assert_eq!(
        succeed(&["to-json", s(&lw)], None),
        "{\"xs\":[-1,3.5,2.5],\"m\":[[7.5,4.25]],\"i\":[1000,\"two\",-100,5,6]}\n"
    );
    assert_eq!(layout("i"), "array, 5 items");
    succeed(&["validate", s(&lw)], None);

    // Indexes past the end fail as anywhere else.
    fail(&["set", s(&lw), "/xs/9", "1"], None, &[r#"no "9" in /xs, an array of 3 items (path /xs/9)"#]);
    fail(&["set", s(&lw), "/xs/0/0", "1"], None, &[r#"no "0" in /xs/0, which is an integer (path /xs/0/0)"#]);
    fail(&["delete", s(&lw), "/m/0/2"], None, &[r#"no "2" in /m/0, an array of 2 items (path /m/0/2)"#]);

    // A typed array at the root.
    let root = dir.path().join("root.lw");
    fs::write(
        &root,
        leafwire::encode(&leafwire::Value::Typed(leafwire::TypedArray::new(leafwire::TypedData::U16(vec![1, 2, 3]))))
            .unwrap(),
    )
    .unwrap();
    succeed(&["set", s(&root), "/1", "7"], None);
    assert_eq!(succeed(&["to-json", s(&root)], None), "[1,7,3]\n");
    assert!(succeed(&["inspect", s(&root)], None).contains("typed array of u16, shape [3]"));
}

#[test]
fn long_integers_up_to_the_json_readers_limit() {
    let dir = tempfile::tempdir().unwrap();
    let longest = format!("[{}, -{}]", "9".repeat(4300), "1".repeat(4300));
    let lw = convert(dir.path(), "long", longest.as_bytes());
    assert_eq!(succeed(&["to-json", s(&lw)], None), format!("{}\n", longest.replace(", ", ",")));

    // One digit more is refused, saying which limit.
    let too_long = dir.path().join("too_long.json");
    fs::write(&too_long, format!("[1, {}]", "9".repeat(4301))).unwrap();
    let out = dir.path().join("too_long.lw");
    fail(
        &["from-json", s(&too_long), "-o", s(&out)],
        None,
        &[s(&too_long), "longer than 4,300 digits", "line 1 column"],
    );
    fail(&["set", s(&lw), "/0", &"7".repeat(4301)], None, &["<JSON argument>", "longer than 4,300 digits"]);
    fail(&["set", s(&lw), "/0", &format!("{}.5", "7".repeat(5000))], None, &["longer than 4,300 digits"]);

    // Larger bignums written through the library read back whole.
    let huge = "8".repeat(10_000);
    let path = dir.path().join("huge.lw");
    fs::write(&path, leafwire::encode(&leafwire::Value::BigNum(huge.clone())).unwrap()).unwrap();
    assert_eq!(succeed(&["to-json", s(&path)], None), format!("{huge}\n"));
}

/// A document `from-json` wrote at its deepest reads back with every command's defaults.
#[test]
fn the_deepest_documents_from_json_writes_read_back_with_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 9_999;
    let json = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let input = dir.path().join("deep.json");
    let lw = dir.path().join("deep.lw");
    fs::write(&input, &json).unwrap();
    succeed(&["from-json", s(&input), "-o", s(&lw), "--max-depth", "10000"], None);
    assert_eq!(succeed(&["to-json", s(&lw)], None), format!("{json}\n"));
    succeed(&["validate", s(&lw)], None);
    let stats = stats_json(&["--top", "1"], &lw);
    // Every level is a path of its own (the innermost levels form one typed array).
    let values: u64 = stats["kinds"].as_array().unwrap().iter().map(|k| k["count"].as_u64().unwrap()).sum();
    assert_eq!(stats["more_paths"]["paths"].as_u64().unwrap() + 1, values);
    assert!(values > 9_900, "{stats}");
    let pointer = "/0".repeat(depth - 1);
    assert_eq!(succeed(&["get", s(&lw), &pointer], None), "[1]\n");
    succeed(&["compact", s(&lw)], None);
    assert_eq!(succeed(&["to-json", s(&lw), "--pretty"], None).lines().count(), 2 * depth + 1);
}

/// `stats --json` of a file (with `extra` options), checked to add up: the sections to the
/// file's length, the containers' bytes to the structure section, the other kinds' to the
/// data section.
fn stats_json(extra: &[&str], lw: &Path) -> Json {
    let mut args = vec!["stats", "--json"];
    args.extend_from_slice(extra);
    args.push(s(lw));
    let report: Json = serde_json::from_str(&succeed(&args, None)).unwrap();
    let n = |v: &Json| v.as_u64().unwrap();
    let len = fs::metadata(lw).unwrap().len();
    assert_eq!(n(&report["bytes"]), len);
    let sections = report["sections"].as_object().unwrap();
    assert_eq!(sections.values().map(n).sum::<u64>(), len, "{report}");
    assert_eq!(n(&sections["header"]), 112);
    let (mut structure, mut data) = (0, 0);
    for kind in report["kinds"].as_array().unwrap() {
        match kind["kind"].as_str().unwrap() {
            "object" | "array" | "intmap" => structure += n(&kind["bytes"]),
            _ => data += n(&kind["bytes"]),
        }
    }
    assert_eq!((structure, data), (n(&sections["structure"]), n(&sections["data"])), "{report}");
    let listed: u64 = report["paths"].as_array().unwrap().iter().map(|p| n(&p["bytes"])).sum();
    assert_eq!(listed + n(&report["more_paths"]["bytes"]), structure + data);
    report
}

/// The `stats --json` entry of `path`.
fn stats_path<'a>(report: &'a Json, path: &str) -> &'a Json {
    report["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == path)
        .unwrap_or_else(|| panic!("no path {path:?} in {report}"))
}

#[test]
fn stats_attributes_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let json = br#"{"list": [{"b": "xyz"}, {"b": "hello", "c": null}], "m": [[1.5, 2.5], [3.5, 4.5]], "n": 7}"#;
    let input = dir.path().join("doc.json");
    fs::write(&input, json).unwrap();
    let plain = dir.path().join("plain.lw");
    succeed(&["from-json", s(&input), "-o", s(&plain), "--no-checksums"], None);
    let report = stats_json(&["--top", "0"], &plain);
    let sections = &report["sections"];
    assert_eq!(
        (sections["checksums"].as_u64(), sections["garbage"].as_u64(), sections["past end"].as_u64()),
        (Some(0), Some(0), Some(0))
    );
    // Two string blocks: a length byte and the text.
    let b = stats_path(&report, "list[].b");
    assert_eq!(
        (b["bytes"].as_u64(), b["count"].as_u64(), b["kinds"].clone()),
        (Some(4 + 6), Some(2), serde_json::json!(["string"]))
    );
    let c = stats_path(&report, "list[].c");
    assert_eq!((c["bytes"].as_u64(), c["count"].as_u64()), (Some(0), Some(1)));
    // A typed matrix is one value, its whole block: 2 header bytes, 2 shape varints, 4
    // bytes of padding to 8 at most, 32 bytes of data.
    let m = stats_path(&report, "m");
    assert_eq!((m["count"].as_u64(), m["kinds"].clone()), (Some(1), serde_json::json!(["typed f64"])));
    assert!((36..=40).contains(&m["bytes"].as_u64().unwrap()), "{m}");
    assert!(report["paths"].as_array().unwrap().iter().all(|p| !p["path"].as_str().unwrap().starts_with("m[")));
    assert_eq!(stats_path(&report, "list")["count"], 1);
    assert_eq!(stats_path(&report, "list[]")["count"], 2);
    assert_eq!(stats_path(&report, ".")["kinds"], serde_json::json!(["object"]));
    assert_eq!(report["more_paths"]["paths"], 0);

    // With checksums, after an edit that leaves garbage, and with bytes past the end.
    let sealed = convert(dir.path(), "sealed", json);
    assert!(stats_json(&[], &sealed)["sections"]["checksums"].as_u64().unwrap() > 16);
    let longer = "a string much longer than the one it replaces";
    succeed(&["set", s(&sealed), "/list/0/b", &format!("{longer:?}")], None);
    let edited = stats_json(&[], &sealed);
    assert!(edited["sections"]["garbage"].as_u64().unwrap() >= 4, "{edited}");
    assert_eq!(stats_path(&edited, "list[].b")["bytes"], 6 + 1 + longer.len());
    let mut bytes = fs::read(&plain).unwrap();
    bytes.extend_from_slice(b"trailing");
    fs::write(&plain, &bytes).unwrap();
    assert_eq!(stats_json(&[], &plain)["sections"]["past end"], 8);
}

#[test]
fn stats_escapes_odd_keys() {
    let dir = tempfile::tempdir().unwrap();
    let lw = convert(
        dir.path(),
        "odd",
        br#"{"a.b": {"[x]": 1, "": [2, "x"], "q\"\\": "s", "caf\u00e9-_$@": true}, "plain": {"0": null}}"#,
    );
    let report = stats_json(&["--top", "0"], &lw);
    let mut paths: Vec<&str> =
        report["paths"].as_array().unwrap().iter().map(|p| p["path"].as_str().unwrap()).collect();
    let mut expected = [
        ".",
        r#"["a.b"]"#,
        r#"["a.b"][""]"#,
        r#"["a.b"][""][]"#,
        r#"["a.b"]["[x]"]"#,
        r#"["a.b"]["q\"\\"]"#,
        r#"["a.b"].café-_$@"#,
        "plain",
        "plain.0",
    ];
    paths.sort_unstable();
    expected.sort_unstable();
    assert_eq!(paths, expected);
    assert_eq!(stats_path(&report, r#"["a.b"][""][]"#)["kinds"], serde_json::json!(["string", "int"]));
    let text = succeed(&["stats", "--top", "0", s(&lw)], None);
    assert!(text.contains(r#"  ["a.b"]["q\"\\"] (string)"#), "{text}");
}

/// The text report's path lines: (path, bytes, values). A line is bytes, percent and
/// values, then the path and its kinds in parentheses.
fn text_paths(text: &str) -> Vec<(String, u64, u64)> {
    let start = text.find("path (kinds)\n").expect("a path table") + "path (kinds)\n".len();
    text[start..]
        .lines()
        .filter(|l| !l.starts_with('('))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let mut rest = line;
            for _ in 0..3 {
                rest = rest.trim_start();
                rest = &rest[rest.find(' ').unwrap()..];
            }
            let path = rest.trim_start();
            (path[..path.rfind(" (").unwrap()].to_owned(), fields[0].parse().unwrap(), fields[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn stats_text_and_json_agree_and_top_limits_both() {
    let dir = tempfile::tempdir().unwrap();
    let json = corpus::corpora()[0].json("twitter.json");
    let lw = convert(dir.path(), "twitter", &json);
    let all = stats_json(&["--top", "0"], &lw);
    let every = all["paths"].as_array().unwrap();
    assert!(every.len() > 20);
    assert!(every.iter().any(|p| p["path"] == "statuses[].user.screen_name"), "{all}");
    assert!(every.windows(2).all(|w| w[0]["bytes"].as_u64() >= w[1]["bytes"].as_u64()), "not largest first");

    let text = succeed(&["stats", "--top", "5", s(&lw)], None);
    assert!(text.starts_with(&format!("{}: {} bytes\n", s(&lw), fs::metadata(&lw).unwrap().len())), "{text}");
    let listed = text_paths(&text);
    assert_eq!(listed.len(), 5, "{text}");
    for (i, (path, bytes, count)) in listed.iter().enumerate() {
        assert_eq!(
            (
                every[i]["path"].as_str().unwrap(),
                every[i]["bytes"].as_u64().unwrap(),
                every[i]["count"].as_u64().unwrap()
            ),
            (path.as_str(), *bytes, *count)
        );
    }
    let rest: u64 = every[5..].iter().map(|p| p["bytes"].as_u64().unwrap()).sum();
    assert!(text.ends_with(&format!("({} more paths, {rest} bytes)\n", every.len() - 5)), "{text}");
    let top5 = stats_json(&["--top", "5"], &lw);
    assert_eq!(top5["paths"].as_array().unwrap()[..], every[..5]);
    assert_eq!(
        (top5["more_paths"]["paths"].as_u64(), top5["more_paths"]["bytes"].as_u64()),
        (Some(every.len() as u64 - 5), Some(rest))
    );
    for (name, bytes) in all["sections"].as_object().unwrap() {
        assert!(
            text.lines()
                .any(|l| l.ends_with(&format!("  {name}")) && l.split_whitespace().next() == Some(&bytes.to_string())),
            "{name}: {text}"
        );
    }
    // The default lists 30, and stdin works as for the other commands.
    assert_eq!(text_paths(&succeed(&["stats", "-"], Some(&fs::read(&lw).unwrap()))).len(), 30);
}

#[test]
fn json_lines_round_trip_through_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let lines = "{\"a\":1,\"b\":[1.5,2.5]}\n\n  {\"a\":2,\"c\":\"x\"}\r\n[1,2,3]\n1.5\nnull\n\"text\"";
    let input = dir.path().join("in.jsonl");
    fs::write(&input, lines).unwrap();
    let stream = dir.path().join("s.lws");
    for crc in [false, true] {
        let mut args = vec!["from-jsonl", s(&input), "-o", s(&stream)];
        if crc {
            args.push("--crc");
        }
        succeed(&args, None);
        let out = succeed(&["cat", s(&stream)], None);
        let want: Vec<Json> =
            lines.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
        let got: Vec<Json> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(got, want);
        let copy = dir.path().join("out.jsonl");
        succeed(&["to-jsonl", s(&stream), "-o", s(&copy)], None);
        assert_eq!(fs::read_to_string(&copy).unwrap(), out);
    }
    // Through pipes: stdin to stdout, then stdin to stdout again.
    let mut child = Command::new(env!("CARGO_BIN_EXE_leafwire"))
        .args(["from-jsonl", "-", "-o", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
    let piped = child.wait_with_output().unwrap();
    assert!(piped.status.success());
    assert_eq!(succeed(&["cat", "-"], Some(&piped.stdout)), succeed(&["cat", s(&stream)], None));
}

#[test]
fn bad_json_lines_and_torn_streams_fail_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    fs::write(&input, "{\"a\":1}\n{\"a\":\n").unwrap();
    let out = dir.path().join("bad.lws");
    fail(&["from-jsonl", s(&input), "-o", s(&out)], None, &["bad.jsonl", "line 2 column"]);
    assert!(!out.exists(), "a failed conversion leaves nothing behind");
    let good = dir.path().join("good.jsonl");
    fs::write(&good, "{\"a\":1}\n{\"b\":[1,2,3]}\n").unwrap();
    let stream = dir.path().join("s.lws");
    succeed(&["from-jsonl", s(&good), "-o", s(&stream)], None);
    let bytes = fs::read(&stream).unwrap();
    let torn = dir.path().join("torn.lws");
    fs::write(&torn, &bytes[..bytes.len() - 2]).unwrap();
    let run = leafwire(&["cat", s(&torn)], None);
    assert!(!run.ok && run.stdout == "{\"a\":1}\n", "the complete frame, then the error: {:?}", run.stdout);
    assert!(run.stderr.contains("truncated frame"), "{}", run.stderr);
    fail(&["cat", s(&input)], None, &["bad.jsonl", "not a Leafwire stream"]);
}

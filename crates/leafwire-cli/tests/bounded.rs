//! The CLI's streaming paths write the bytes of the core's in-memory encoders: `from-json`
//! (to a file and to stdout) against `leafwire::json::from_json`, and `compact` against
//! `leafwire::encode(&leafwire::decode(..))`, on the sample corpus (and the shared data
//! when present). Progress bars stay off: stderr is a pipe here, so it must stay empty.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

#[path = "../../leafwire/tests/common/corpus.rs"]
mod corpus;

fn run(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_leafwire")).args(args).stdin(Stdio::null()).output().expect("run leafwire");
    assert!(out.status.success(), "leafwire {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "leafwire {args:?} wrote to stderr (a progress bar without a terminal?): {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn with_checksums(doc: &[u8]) -> Vec<u8> {
    let mut sealed = doc.to_vec();
    leafwire::add_checksums(&mut sealed).unwrap();
    sealed
}

#[test]
fn from_json_and_compact_write_the_bytes_of_the_in_memory_encoders() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for corpus in corpus::corpora() {
        for rel in corpus.files.iter().filter(|f| f.ends_with(".json")) {
            let json = corpus.read(rel);
            let expected = leafwire::json::from_json(&json).unwrap();
            // What the command writes by default: the same bytes with page checksums.
            let sealed = with_checksums(&expected);
            let input = dir.path().join("in.json");
            let output = dir.path().join("out.lw");
            fs::write(&input, &json).unwrap();
            run(&["from-json", s(&input), "-o", s(&output), "--no-checksums"]);
            assert!(fs::read(&output).unwrap() == expected, "{rel}: from-json -o differs from from_json");
            run(&["from-json", s(&input), "-o", s(&output)]);
            assert!(fs::read(&output).unwrap() == sealed, "{rel}: from-json -o with checksums differs from add_checksums");
            let to_stdout = run(&["from-json", s(&input), "-o", "-"]).stdout;
            assert!(to_stdout == sealed, "{rel}: from-json to stdout differs from from_json");

            // A document with garbage (an edit), compacted in place and to stdout.
            let mut editor = leafwire::Editor::new(expected.clone()).unwrap();
            editor.set("/added", &leafwire::Value::String("x".repeat(100))).ok();
            let edited = editor.as_bytes().to_vec();
            let canonical = leafwire::encode(&leafwire::decode(&edited).unwrap()).unwrap();
            let file = dir.path().join("edited.lw");
            fs::write(&file, &edited).unwrap();
            assert!(run(&["compact", s(&file), "-o", "-", "--no-checksums"]).stdout == canonical, "{rel}: compact to stdout");
            run(&["compact", s(&file)]);
            assert!(fs::read(&file).unwrap() == with_checksums(&canonical), "{rel}: compact in place");
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} corpus files");
}

#[test]
fn to_json_streams_the_text_of_the_core_writer() {
    let dir = tempfile::tempdir().unwrap();
    let json = corpus::corpora()[0].json("twitter.json");
    let lw = dir.path().join("t.lw");
    fs::write(&lw, leafwire::json::from_json(&json).unwrap()).unwrap();
    let expected = leafwire::json::to_json(&fs::read(&lw).unwrap()).unwrap() + "\n";
    assert_eq!(String::from_utf8(run(&["to-json", s(&lw)]).stdout).unwrap(), expected);
}

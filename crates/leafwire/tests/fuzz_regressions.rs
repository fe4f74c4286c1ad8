//! Every input the fuzzers ever crashed on (`fuzz/regressions/<target>/`, kept as found)
//! now runs clean through every reader: no panic, only errors. The inputs are raw bytes as
//! the targets received them; for `mutate_fields` and the readers they are documents, for
//! the others they may be anything, which is just as good a hostile document.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

fn regressions() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut files = Vec::new();
    for target in std::fs::read_dir(&root).expect("fuzz/regressions is missing") {
        let target = target.unwrap().path();
        if target.is_dir() {
            files.extend(std::fs::read_dir(&target).unwrap().map(|f| f.unwrap().path()));
        }
    }
    files.sort();
    files
}

/// Runs every whole-document reader on `bytes`; returns nothing: only panics matter here.
fn read_everything(bytes: &[u8]) {
    let _ = leafwire::validate(bytes);
    let _ = leafwire::decode(bytes);
    let _ = leafwire::json::to_json(bytes);
    let _ = leafwire::from_slice::<leafwire::Value>(bytes);
    let _ = leafwire::from_slice::<serde_json::Value>(bytes);
    let _ = leafwire::from_slice::<Vec<(String, Vec<f64>)>>(bytes);
    if let Ok(mut editor) = leafwire::Editor::new(bytes.to_vec()) {
        let _ = editor.set("/0", &leafwire::Value::Int(1));
        let _ = editor.push("", &leafwire::Value::Null);
        let _ = editor.compact();
    }
    if let Ok(raw) = leafwire::raw::RawDocument::open(bytes) {
        let (t, payload) = raw.root();
        if let Ok(c) = raw.container(t, payload) {
            for i in 0..c.len() {
                let _ = c.child(i);
                let _ = raw.key(c.key(i));
                let _ = raw.child_node(&c, i).map(|n| n.to_value());
            }
        }
    }
}

#[test]
fn every_fuzz_regression_reads_without_a_panic() {
    let files = regressions();
    assert!(files.iter().filter(|f| f.extension().is_none_or(|e| e != "md")).count() >= 4, "fuzz/regressions holds too few inputs");
    let mut panics = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        if catch_unwind(AssertUnwindSafe(|| read_everything(&bytes))).is_err() {
            panics.push(file.display().to_string());
        }
    }
    eprintln!("{} fuzz regressions read", files.len());
    assert!(panics.is_empty(), "panics on:\n  {}", panics.join("\n  "));
}

//! The spec's negative test vectors (`spec/vectors/invalid/`, spec §9, "Invalid
//! vectors"): each `NAME.lw` breaks one rule of §9 or one limit of §10, and `NAME.json`
//! says which, with the error category and byte offset `validate` reports. Written by
//! `scripts/make_invalid_vectors.py`.
//!
//! For every vector: `validate` gives exactly that category and offset; `Editor::new`
//! refuses it the same way (or as its `owned` entry says, for what an owner of the bytes
//! reads differently: an interrupted commit's journal); opening, walking every node, `decode`, `to_json` and serde
//! never panic, and fail where the rule is one lazy access checks (`"decode": "error"`).
//! A missing or empty directory is a failure, not a pass.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Once;

use leafwire::{Category, Document, Kind, Node};
use serde_json::Value as Json;

struct Vector {
    name: String,
    bytes: Vec<u8>,
    meta: Json,
}

impl Vector {
    fn category(&self) -> &str {
        self.meta["category"].as_str().unwrap()
    }

    fn offset(&self) -> u64 {
        self.meta["offset"].as_u64().unwrap()
    }

    /// Whether a full decode must fail too (the rule is one lazy access checks).
    fn decode_fails(&self) -> bool {
        self.meta["decode"] == "error"
    }
}

fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors")
}

/// Every vector, with its expectation checked for form. Panics when the directory is
/// missing or holds no vector: the tests must not pass on nothing.
fn vectors() -> Vec<Vector> {
    let dir = spec_dir().join("invalid");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} is missing ({e}): run scripts/make_invalid_vectors.py", dir.display()));
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "lw"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{} holds no .lw vector: run scripts/make_invalid_vectors.py", dir.display());
    names
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(dir.join(format!("{name}.lw"))).unwrap();
            let text = std::fs::read(dir.join(format!("{name}.json"))).unwrap_or_else(|_| panic!("{name}.lw has no {name}.json"));
            let meta: Json = serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{name}.json: {e}"));
            assert!(meta["rule"].as_str().is_some_and(|r| r.starts_with('§')), "{name}.json: rule");
            assert!(["Malformed", "Unsupported", "DepthLimit", "LimitExceeded"].contains(&meta["category"].as_str().unwrap_or("")), "{name}.json: category");
            assert!(meta["offset"].is_u64(), "{name}.json: offset");
            assert!(meta["description"].is_string(), "{name}.json: description");
            assert!(meta["decode"] == "error" || meta["decode"] == "unchecked", "{name}.json: decode");
            Vector { name, bytes, meta }
        })
        .collect()
}

thread_local! {
    /// Set while a vector runs: its panics are reported in the test's own message, so
    /// the default hook's output (and backtrace) is left out.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

fn quiet_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                default(info);
            }
        }));
    });
}

/// Runs `f` on every vector; a failure or a panic is one line of the report, and the
/// test fails listing them all (so one broken vector does not hide the others).
fn for_each_vector(what: &str, f: impl Fn(&Vector) -> Result<(), String>) {
    quiet_panics();
    let mut problems = Vec::new();
    let all = vectors();
    for v in &all {
        QUIET.with(|q| q.set(true));
        let outcome = catch_unwind(AssertUnwindSafe(|| f(v)));
        QUIET.with(|q| q.set(false));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(problem)) => problems.push(format!("{}: {problem}", v.name)),
            Err(panic) => {
                let message = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                problems.push(format!("{}: PANIC: {}", v.name, message.unwrap_or_default()));
            }
        }
    }
    assert!(problems.is_empty(), "{what}: {} of {} vectors fail:\n  {}", problems.len(), all.len(), problems.join("\n  "));
}

fn expect_error(v: &Vector, what: &str, result: leafwire::Result<impl Sized>) -> Result<(), String> {
    match result {
        Err(e) => {
            let category = format!("{:?}", e.category());
            if category == v.category() && e.offset() == Some(v.offset()) {
                Ok(())
            } else {
                Err(format!("{what}: expected {} at byte {}, got {category} at {:?}: {e}", v.category(), v.offset(), e.offset()))
            }
        }
        Ok(_) => Err(format!("{what}: accepted (expected {} at byte {})", v.category(), v.offset())),
    }
}

#[test]
fn validate_reports_the_category_and_offset_of_each_vector() {
    for_each_vector("validate", |v| expect_error(v, "validate", leafwire::validate(&v.bytes)));
}

#[test]
fn the_editor_refuses_each_vector() {
    for_each_vector("Editor::new", |v| {
        // An editor owns its copy: it finishes an interrupted commit before validating.
        let owned = Vector { name: v.name.clone(), bytes: v.bytes.clone(), meta: v.meta.get("owned").cloned().unwrap_or_else(|| v.meta.clone()) };
        expect_error(&owned, "Editor::new", leafwire::Editor::new(v.bytes.clone()))
    });
}

/// Touches every node reachable through the lazy API, lookups included (key lookups go
/// through the dictionary's table and the hash indexes). Bounded, so cycles end.
fn walk(node: Node<'_>, depth: usize, budget: &mut usize) -> leafwire::Result<()> {
    if depth > 200 || *budget == 0 {
        return Ok(());
    }
    *budget -= 1;
    let absent = |r: leafwire::Result<Node<'_>>| match r {
        Err(e) if e.category() == Category::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
    };
    match node.kind() {
        Kind::String => drop(node.as_str()?),
        Kind::Bytes => drop(node.as_bytes()?),
        Kind::BigNum => drop(node.as_bignum()?),
        Kind::TypedArray => {
            let len = node.len()?;
            let _ = node.typed()?.to_typed_array();
            for row in node.iter()? {
                walk(row?, depth + 1, budget)?;
            }
            absent(node.at(len))?;
        }
        Kind::Array => {
            let len = node.len()?;
            for (i, child) in node.iter()?.enumerate() {
                walk(child?, depth + 1, budget)?;
                node.pointer(&format!("/{i}"))?;
            }
            absent(node.pointer(&format!("/{len}")))?;
        }
        Kind::Object => {
            for entry in node.entries()? {
                let (key, child) = entry?;
                walk(child, depth + 1, budget)?;
                node.get(key)?;
                node.object()?.get(key)?;
            }
            absent(node.get("\u{1}absent"))?;
        }
        Kind::IntMap => {
            for entry in node.int_entries()? {
                let (key, child) = entry?;
                walk(child, depth + 1, budget)?;
                node.get_int(key)?;
            }
            absent(node.get_int(i64::MIN + 12345))?;
        }
        // A table's lazy reads: every cell of every column (spec §15.1).
        Kind::Table => {
            let t = node.table()?;
            for c in t.columns() {
                let c = c?;
                c.name()?;
                for i in 0..c.len() {
                    c.cell(i)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[test]
fn readers_never_panic_and_fail_where_the_rule_is_checked_lazily() {
    // The test's own walk goes 200 levels deep, which an unoptimized build's frames do
    // not fit in a test thread's 2 MiB: give it room (the library's readers stop at their
    // depth limits well within 2 MiB, which `deep_json_is_an_error_at_the_limit_not_a_crash`
    // and the bounded tests check).
    std::thread::Builder::new().stack_size(64 << 20).spawn(lazy_readers).unwrap().join().unwrap();
}

fn lazy_readers() {
    for_each_vector("lazy readers", |v| {
        let bytes = &v.bytes;
        let walked = Document::open(bytes).and_then(|doc| walk(doc.root(), 0, &mut 100_000));
        let decoded = leafwire::decode(bytes);
        let borrowed = leafwire::decode_borrowed(bytes);
        let json = leafwire::json::to_json(bytes);
        let serde = leafwire::from_slice::<leafwire::Value>(bytes);
        let _ = leafwire::from_slice::<serde_json::Value>(bytes);
        if !v.decode_fails() {
            return Ok(());
        }
        let mut problems = Vec::new();
        // A lazy walk has no depth limit and stops at its own bound on cycles: depth and
        // tree rules are for the decoders, which count depth and work.
        let walk_applies = v.category() != "DepthLimit" && !v.meta["rule"].as_str().unwrap().starts_with("§9.9");
        if walk_applies && walked.is_ok() {
            problems.push("a full lazy walk accepted it");
        }
        if decoded.is_ok() {
            problems.push("decode accepted it");
        }
        if borrowed.is_ok() {
            problems.push("decode_borrowed accepted it");
        }
        if json.is_ok() {
            problems.push("to_json accepted it");
        }
        if serde.is_ok() {
            problems.push("from_slice::<Value> accepted it");
        }
        if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
    });
}

/// spec/vectors/array_at_end.lw is valid: `[[]]`, whose inner empty array fills the last
/// two bytes of the document. Lookups and JSON must agree on it (issue 9: the lookup
/// path refused a container starting in the last two bytes).
#[test]
fn a_container_in_the_last_two_bytes_reads_the_same_through_every_path() {
    let bytes = std::fs::read(spec_dir().join("array_at_end.lw")).expect("spec/vectors/array_at_end.lw is missing");
    leafwire::validate(&bytes).unwrap();
    let doc = Document::open(&bytes).unwrap();
    let inner = doc.pointer("/0").unwrap();
    assert_eq!(inner.offset() as usize, bytes.len() - 2, "the inner array fills the last two bytes");
    assert_eq!(inner.len().unwrap(), 0);
    assert_eq!(doc.root().at(0).unwrap().len().unwrap(), 0);
    for pointer in ["/0/0", "/0/-", "/1"] {
        let err = doc.pointer(pointer).unwrap_err();
        assert_eq!(err.category(), Category::NotFound, "{pointer}: {err}");
    }
    assert_eq!(leafwire::json::to_json(&bytes).unwrap(), "[[]]");
    assert_eq!(leafwire::json::to_json_node(&inner).unwrap(), "[]");
    assert_eq!(leafwire::decode(&bytes).unwrap(), leafwire::Value::Array(vec![leafwire::Value::Array(vec![])]));
    // The root alone at the end (array_empty.lw): the lookup path again.
    let empty = std::fs::read(spec_dir().join("array_empty.lw")).unwrap();
    let err = Document::open(&empty).unwrap().pointer("/0").unwrap_err();
    assert_eq!(err.category(), Category::NotFound, "{err}");
}

/// A dictionary that holds one text under two ids is a rule the decoders need not check
/// (`"decode": "unchecked"`), but an object using both ids must not become a map with the
/// key twice, or one value silently dropped: `decode` refuses it when it meets the second id.
#[test]
fn reading_an_object_whose_ids_share_a_text_is_an_error() {
    for name in ["dict_duplicate_keys", "dict_duplicate_keys_no_table"] {
        let bytes = std::fs::read(spec_dir().join("invalid").join(format!("{name}.lw"))).unwrap();
        // JSON would carry the repeat as `{"a":1,"a":2}`, which most parsers read as one key.
        let mut pretty = Vec::new();
        for result in [
            leafwire::decode(&bytes).map(drop),
            leafwire::decode_borrowed(&bytes).map(drop),
            leafwire::json::to_json(&bytes).map(drop),
            leafwire::Document::open(&bytes).and_then(|doc| leafwire::json::write_json_node_pretty(&doc.root(), &mut pretty)),
        ] {
            let err = result.expect_err(name);
            assert_eq!(err.category(), Category::Malformed, "{name}: {err}");
            assert!(err.to_string().contains("holds key \"a\" twice"), "{name}: {err}");
        }
    }
}

//! The spec's negative test vectors (`spec/vectors/invalid/`, spec §9, "Invalid
//! vectors") through the command: `leafwire validate` fails on each, naming the byte
//! offset of its `.json`; `to-json` and `inspect` never panic (the command reports a
//! caught panic as an "internal error", an uncaught one exits with 101), and `to-json`
//! fails where the rule is one lazy access checks. A missing or empty directory is a
//! failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors")
}

/// (path of NAME.lw, its NAME.json); panics when there is none.
fn vectors() -> Vec<(PathBuf, Json)> {
    let dir = spec_dir().join("invalid");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} is missing ({e}): run scripts/make_invalid_vectors.py", dir.display()));
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "lw")).collect();
    paths.sort();
    assert!(!paths.is_empty(), "{} holds no .lw vector: run scripts/make_invalid_vectors.py", dir.display());
    paths
        .into_iter()
        .map(|lw| {
            let text = std::fs::read(lw.with_extension("json")).unwrap_or_else(|_| panic!("{} has no .json", lw.display()));
            let meta = serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", lw.display()));
            (lw, meta)
        })
        .collect()
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the command; the vector's path is shortened to its name in the output kept.
fn leafwire(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_leafwire")).args(args).output().expect("run leafwire");
    let short = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes).into_owned();
        args.get(1).map_or(text.clone(), |file| text.replace(file, &name(Path::new(file))))
    };
    Run { code: out.status.code(), stdout: short(&out.stdout), stderr: short(&out.stderr) }
}

impl Run {
    /// A panic, caught (reported as an internal error) or not (exit code 101, or a signal).
    fn panicked(&self) -> bool {
        self.code.is_none() || self.code == Some(101) || self.stderr.contains("internal error")
    }
}

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

#[test]
fn validate_fails_on_each_vector_naming_its_offset() {
    let mut problems = Vec::new();
    for (path, meta) in vectors() {
        // The commands read up to 10,000 levels (what from-json may write); a vector of the
        // default limit's rule is checked at that limit.
        let depth_rule = meta["category"] == "DepthLimit";
        let run = if depth_rule {
            leafwire(&["validate", path.to_str().unwrap(), "--max-depth", "128"])
        } else {
            leafwire(&["validate", path.to_str().unwrap()])
        };
        // The command reads files as their owner: it finishes an interrupted commit first.
        let meta = meta.get("owned").unwrap_or(&meta);
        let at = format!("at byte {}", meta["offset"]);
        if run.panicked() {
            problems.push(format!("{}: panicked: {}", name(&path), run.stderr.trim_end()));
        } else if run.code == Some(0) {
            problems.push(format!("{}: validated: {}", name(&path), run.stdout.trim_end()));
        } else if !run.stderr.ends_with(&format!("{at}\n")) || !run.stdout.is_empty() {
            problems.push(format!("{}: expected {} {at}, got: {}", name(&path), meta["category"], run.stderr.trim_end()));
        }
    }
    assert!(problems.is_empty(), "leafwire validate:\n  {}", problems.join("\n  "));
}

#[test]
fn to_json_and_inspect_never_panic_and_to_json_fails_where_reads_check() {
    let mut problems = Vec::new();
    for (path, meta) in vectors() {
        let file = path.to_str().unwrap();
        let to_json = leafwire(&["to-json", file]);
        if to_json.panicked() {
            problems.push(format!("{}: to-json panicked: {}", name(&path), to_json.stderr.trim_end()));
        } else if meta["decode"] == "error" && meta["category"] != "DepthLimit" && to_json.code == Some(0) {
            problems.push(format!("{}: to-json accepted it: {}", name(&path), to_json.stdout.trim_end()));
        }
        let inspect = leafwire(&["inspect", file]);
        if inspect.panicked() {
            problems.push(format!("{}: inspect panicked: {}", name(&path), inspect.stderr.trim_end()));
        }
    }
    assert!(problems.is_empty(), "leafwire to-json / inspect:\n  {}", problems.join("\n  "));
}

/// spec/vectors/array_at_end.lw (`[[]]`, the inner array in the last two bytes) is valid:
/// `get` and `to-json` agree on it (issue 9: `get` called it malformed).
#[test]
fn get_and_to_json_agree_on_a_container_in_the_last_two_bytes() {
    let path = spec_dir().join("array_at_end.lw");
    assert!(path.is_file(), "{} is missing", path.display());
    let file = path.to_str().unwrap();
    let run = leafwire(&["to-json", file]);
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "[[]]\n"), "{}", run.stderr);
    let run = leafwire(&["get", file, "/0"]);
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), "[]\n"), "{}", run.stderr);
    let run = leafwire(&["get", file, "/0/0"]);
    let past_end = "no \"0\" in /0, an empty array (path /0/0)";
    assert!(run.code == Some(1) && run.stderr.contains(past_end), "get /0/0 should say the index is past the end: {}", run.stderr);
    assert!(leafwire(&["validate", file]).code == Some(0));
}

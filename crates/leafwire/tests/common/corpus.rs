//! The JSON corpora the tests run on: the sample kept in the repository
//! (`tests/data/sample`), always, and the full shared data (`../shared/data` beside the
//! repository, or the directory `LEAFWIRE_SHARED_DATA` names) when it is there.
//!
//! The sample has the layout and file names of the shared data and is the list of files:
//! every data file in it must be in the shared data too. Nothing is skipped quietly: a
//! missing sample, a missing shared file, or a `LEAFWIRE_SHARED_DATA` that names no
//! directory fails the test with a message saying what is missing.
//!
//! Also used by the CLI's tests (`#[path]`), so it depends on nothing but std.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};

/// One corpus: `name` is "sample" or "shared".
pub struct Corpus {
    pub name: &'static str,
    pub dir: PathBuf,
    /// The data files, relative to `dir` with `/` separators, sorted.
    pub files: Vec<String>,
}

impl Corpus {
    /// The bytes of `rel` (as stored: `.gz` files stay compressed).
    pub fn read(&self, rel: &str) -> Vec<u8> {
        let path = self.dir.join(rel);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{} corpus: cannot read {}: {e}", self.name, path.display()))
    }

    /// The JSON files (not gzipped) whose file name is `name`, e.g. "twitter.json".
    pub fn json(&self, name: &str) -> Vec<u8> {
        let rel = self.files.iter().find(|f| f.rsplit('/').next() == Some(name));
        let rel = rel.unwrap_or_else(|| panic!("{} corpus ({}) has no file {name}", self.name, self.dir.display()));
        self.read(rel)
    }
}

/// The repository's root (both crates using this live in `crates/<name>`).
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The in-repository sample, then the full shared data when present; says on stderr which
/// ran (visible with `--nocapture`).
pub fn corpora() -> Vec<Corpus> {
    let root = repo_root();
    let sample_dir = root.join("tests/data/sample");
    let files = data_files(&sample_dir);
    assert!(
        !files.is_empty(),
        "the in-repository sample corpus {} is missing or empty: it is part of the repository (see its README.md)",
        sample_dir.display()
    );
    let mut corpora = vec![Corpus { name: "sample", dir: sample_dir, files: files.clone() }];
    let shared_dir = match std::env::var_os("LEAFWIRE_SHARED_DATA") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            assert!(dir.is_dir(), "LEAFWIRE_SHARED_DATA={} is not a directory", dir.display());
            Some(dir)
        }
        None => Some(root.join("../shared/data")).filter(|d| d.is_dir()),
    };
    match shared_dir {
        Some(dir) => {
            for rel in &files {
                assert!(dir.join(rel).is_file(), "the shared data {} lacks {rel}, which the sample has", dir.display());
            }
            eprintln!("corpus: the in-repository sample ({} files) and the full shared data in {}", files.len(), dir.display());
            corpora.push(Corpus { name: "shared", dir, files });
        }
        None => eprintln!("corpus: the in-repository sample only ({} files); ../shared/data is absent, the full corpus did not run", files.len()),
    }
    corpora
}

/// The data files under `dir` (one level of subdirectories, as the shared data has), sorted.
fn data_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return files };
    for sub in entries.map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        for path in std::fs::read_dir(&sub).unwrap().map(|e| e.unwrap().path()) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if [".json", ".geojson", ".json.gz", ".geojson.gz"].iter().any(|ext| name.ends_with(ext)) {
                files.push(format!("{}/{name}", sub.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    files.sort();
    files
}

//! Workload "files" (issue #10): Leafwire on big files. On a seeded array of records
//! (1 MB – 1 GB of JSON text), it measures
//! - commits of one 8-byte change (a same-size float `set` in the middle of the array):
//!   latency including fsync, bytes written per commit, file size after 1,000 commits;
//! - `Editor::open_file` (untrusted: full validation) and `leafwire::validate`;
//! - time and peak RSS of the CLI's `from-json`, `to-json` and `compact`, each a fresh
//!   process, against `jq -c .` and Python's `json.load` + `json.dump`.
//!
//! Every output is checked against the generator (replayed record by record) before
//! anything is timed. The files live in `<work>/files` and are deleted after each size.

#[cfg(feature = "leafwire")]
mod edit;
mod records;
mod tools;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

#[cfg(not(feature = "leafwire"))]
use crate::harness::Status;
use crate::harness::{Fail, Report, Row};
use crate::Ctx;
use tools::{Output, Programs};

/// (label, bytes of JSON text).
const QUICK_SIZES: [(&str, u64); 2] = [("1 MB", 1_000_000), ("16 MB", 16_000_000)];
const FULL_SIZES: [(&str, u64); 4] =
    [("1 MB", 1_000_000), ("16 MB", 16_000_000), ("256 MB", 256_000_000), ("1 GB", 1_000_000_000)];

/// The commit loop stops early once the edited file has grown this much over canonical:
/// the disk holds at most ~4 GB of this workload's files at a time, and the editor keeps
/// the whole file in memory. The report then gives the projection to 1,000 commits.
const GROWTH_CAP: u64 = 1536 << 20;

/// The `leafwire` binary: `BENCH_LEAFWIRE_CLI` (bench/run sets it; empty when the CLI
/// did not build), else the root workspace's release build.
fn cli_path() -> Option<PathBuf> {
    match std::env::var_os("BENCH_LEAFWIRE_CLI") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/leafwire")),
    }
}

pub use tools::{child_main, CHILD_COMMAND};

pub fn run(ctx: &Ctx) -> Report {
    let mut report =
        Report::new("files", "big files: commits, edit-open, whole-file commands (issue #10)", &ctx.plan, tools::JQ);
    report.leafwire = vec!["leafwire".into(), tools::CLI.into()];
    let programs = Programs::find(cli_path(), cfg!(feature = "leafwire"));
    report.peers = vec![crate::harness::PeerInfo::new(
        "leafwire",
        "`Editor::open_file`, `set`, `commit`; `leafwire::validate` on `MappedFile` bytes",
        "library at this checkout",
    )];
    if !cfg!(feature = "leafwire") {
        report.peers = vec![crate::leafwire_missing()];
    }
    report.peers.extend(programs.peers.iter().cloned());
    let sizes: &[(&str, u64)] = if ctx.quick { &QUICK_SIZES } else { &FULL_SIZES };
    let growth_cap = GROWTH_CAP;
    let reps = if ctx.quick { 3 } else { 5 };
    let work = ctx.work_dir.join("files");
    let mut datasets = Vec::new();
    let mut memory = Memory::default();
    for &(label, target) in sizes {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).expect("create the files workload's directory");
        let t = Instant::now();
        let json_path = work.join("records.json");
        let (records, json_bytes) = match records::write_json(&json_path, target) {
            Ok(x) => x,
            Err(fail) => panic!("cannot write {}: {fail:?}", json_path.display()),
        };
        eprintln!(
            "[files] {label}: {records} records, {json_bytes} bytes of JSON in {:.1}s",
            t.elapsed().as_secs_f64()
        );
        let mut info = json!({"dataset": label, "records": records, "json_bytes": json_bytes});
        let (rows, extra) =
            dataset(ctx, label, &work, &json_path, records, json_bytes, growth_cap, reps, &programs, &memory);
        memory.learn(&rows, json_bytes);
        report.rows.extend(rows);
        if let (Some(obj), serde_json::Value::Object(more)) = (info.as_object_mut(), extra) {
            obj.extend(more);
        }
        datasets.push(info);
        let _ = std::fs::remove_dir_all(&work);
    }
    report.extra = json!({
        "datasets": datasets,
        "commits_target": COMMITS,
        "growth_cap_bytes": growth_cap,
        "tool_reps": reps,
        "empty_run_peak_rss": tools::empty_run_peak_rss(&ctx.exe),
    });
    report.notes = vec![
        "Document: one JSON array of records {\"id\": int, \"x\": float, \"y\": float, \"name\": 4–12 letters, \"tags\": 0–4 ints}, seeded, written as compact JSON until it reaches the dataset's size; the canonical Leafwire file is `leafwire::json::from_json` of it.".into(),
        format!("Commits: one `Editor::open_file` of a copy of the canonical file, then up to {COMMITS} commits, each `set(\"/<records/2>/x\", F64)` of a new full-precision float (same size as the old one) then `commit()`. The first commit is the check (reopened: the value reads back and the file validates) and is not timed; each other commit is timed alone (set + commit, which syncs to this machine's disk). After the last commit the file must validate and read back the last value."),
        "Bytes written per commit: the delta of `wchar` in /proc/self/io around set + commit (bytes passed to write system calls: appended blocks, the root record, zeroed garbage); `write_bytes` (pages dirtied, in 4 KiB units) is in the JSON beside it.".into(),
        format!("The commit loop stops early when the file has grown {} MiB over canonical (disk and time are limited); the table then shows the commits done and the size projected to {COMMITS} commits at the median growth per commit.", growth_cap >> 20),
        "Open: `Editor::open_file` (reads and validates the whole file) and `leafwire::validate` on the bytes of a `MappedFile`, both on the canonical file with the page cache warm; throughput is file bytes ÷ median time.".into(),
        format!("Commands: every run is a fresh process, spawned by a small child of the harness (`files-child`) that reaps it with wait4 and reports its `ru_maxrss` as the peak RSS (spawned from the harness itself, Linux would count the harness's own peak: exec seeds `ru_maxrss` from the replaced image); the floor this leaves is the empty run's figure below the table. Time is from spawn to exit (process start included). Each command's first run is the check (untimed); then {reps} runs, round-robin across commands. Inputs are in the page cache. `compact` reads the canonical file and writes with `-o`. A command whose peak RSS per JSON byte at the previous size projects over half of the memory available is not run at the next size (skipped, with the projection)."),
        "Checks: JSON outputs are parsed and compared record by record with the generator replayed (floats bit for bit); Leafwire outputs must equal the canonical file byte for byte, or else validate and convert back (`leafwire::json::to_json`) to the generator's records.".into(),
    ];
    report
}

/// Peak RSS per byte of JSON text each command needed at the last size, so that a bigger
/// size is not started when it would not fit: a command that runs the machine out of
/// memory takes the other processes on it down too.
#[derive(Default)]
struct Memory {
    per_json_byte: std::collections::HashMap<(String, String), f64>,
}

impl Memory {
    fn learn(&mut self, rows: &[Row], json_bytes: u64) {
        for r in rows {
            if let Some(rss) = r.peak_rss_bytes {
                self.per_json_byte.insert((r.peer.clone(), r.op.clone()), rss as f64 / json_bytes as f64);
            }
        }
    }

    /// Why `t` is not run on `json_bytes` of JSON: its projected peak RSS is over half of
    /// the memory available now.
    fn too_big(&self, t: &tools::Tool, json_bytes: u64) -> Option<String> {
        self.too_big_for(t.peer, t.op, json_bytes, mem_available()?)
    }

    fn too_big_for(&self, peer: &str, op: &str, json_bytes: u64, available: u64) -> Option<String> {
        let per_byte = self.per_json_byte.get(&(peer.to_string(), op.to_string()))?;
        let projected = per_byte * json_bytes as f64;
        (projected > available as f64 / 2.0).then(|| {
            format!("not run: at the previous size's peak RSS per JSON byte it would need {:.1} GB, over half of the memory available ({:.1} GB)", projected / 1e9, available as f64 / 1e9)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_would_not_fit_is_not_started() {
        let mut m = Memory::default();
        let mut row = Row::new("16 MB", "compact", "leafwire-cli");
        row.peak_rss_bytes = Some(320_000_000);
        m.learn(&[row], 16_000_000);
        // 20 bytes of RSS per JSON byte: 1 GB of JSON needs 20 GB.
        assert!(m.too_big_for("leafwire-cli", "compact", 1_000_000_000, 16_000_000_000).is_some());
        assert!(m.too_big_for("leafwire-cli", "compact", 256_000_000, 16_000_000_000).is_none());
        assert!(m.too_big_for("jq", "json → json", 1_000_000_000, 1).is_none(), "no figure yet: run it");
    }
}

fn mem_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(feature = "leafwire")]
use edit::COMMITS;
#[cfg(not(feature = "leafwire"))]
const COMMITS: usize = 1_000;

/// Rows of one size, and facts for the report's tables.
#[allow(clippy::too_many_arguments)]
fn dataset(
    ctx: &Ctx,
    label: &str,
    work: &Path,
    json_path: &Path,
    records: usize,
    json_bytes: u64,
    growth_cap: u64,
    reps: usize,
    programs: &Programs,
    memory: &Memory,
) -> (Vec<Row>, serde_json::Value) {
    let mut rows = Vec::new();
    #[cfg(feature = "leafwire")]
    {
        let leaf_path = work.join("canonical.leafwire");
        let canonical = canonical(json_path, &leaf_path, records);
        let canonical_bytes = std::fs::metadata(&leaf_path).map(|m| m.len()).ok();
        if let Err(fail) = &canonical {
            for op in ["commit", "size after commits", "open_file (untrusted: validates)", "validate (mapped bytes)"] {
                rows.push(Row::new(label, op, edit::PEER).failed(fail.clone()));
            }
            let tools = programs.tools(json_path, &leaf_path);
            rows.extend(tools.iter().map(|t| Row::new(label, t.op, t.peer).failed(fail.clone())));
            return (rows, json!({"canonical_bytes": canonical_bytes}));
        }
        eprintln!("[files]   open and validate");
        rows.extend(edit::open_rows(label, &leaf_path, records, &ctx.plan));
        eprintln!("[files]   commands");
        let check = |kind: Output, out: &Path| check_output(kind, out, &leaf_path, records);
        let skip = |t: &tools::Tool| memory.too_big(t, json_bytes);
        let spec = tools::RunSpec { exe: &ctx.exe, work, reps, check: &check, skip: &skip };
        rows.extend(tools::rows(label, &programs.tools(json_path, &leaf_path), &spec));
        // The JSON text is not needed any more: its space goes to the edited copy.
        let _ = std::fs::remove_file(json_path);
        eprintln!("[files]   commits");
        let commits = edit::commits(label, &leaf_path, work, records, growth_cap);
        rows.extend(commits.rows);
        (rows, json!({"canonical_bytes": canonical_bytes, "commits": commits.extra}))
    }
    #[cfg(not(feature = "leafwire"))]
    {
        let _ = (ctx, growth_cap);
        for op in ["commit", "size after commits", "open_file (untrusted: validates)", "validate (mapped bytes)"] {
            rows.push(Row::new(label, op, "leafwire").status(Status::DidNotBuild, crate::LEAFWIRE_MISSING));
        }
        let missing = work.join("canonical.leafwire");
        let check = |kind: Output, out: &Path| check_output(kind, out, &missing, records);
        let skip = |t: &tools::Tool| memory.too_big(t, json_bytes);
        let spec = tools::RunSpec { exe: &ctx.exe, work, reps, check: &check, skip: &skip };
        rows.extend(tools::rows(label, &programs.tools(json_path, &missing), &spec));
        (rows, json!({}))
    }
}

/// The canonical file: `leafwire::json::from_json` of the JSON text, checked by
/// converting it back and comparing with the generator.
#[cfg(feature = "leafwire")]
fn canonical(json_path: &Path, leaf_path: &Path, records: usize) -> Result<(), Fail> {
    let t = Instant::now();
    let text = std::fs::read(json_path).map_err(Fail::error)?;
    let bytes = leafwire::json::from_json(&text).map_err(Fail::error)?;
    drop(text);
    let back = leafwire::json::to_json(&bytes).map_err(Fail::error)?;
    records::check_json(back.as_bytes(), records, None)
        .map_err(|fail| Fail::Wrong(format!("the canonical file does not convert back: {fail:?}")))?;
    std::fs::write(leaf_path, &bytes).map_err(Fail::error)?;
    eprintln!("[files]   canonical: {} bytes in {:.1}s", bytes.len(), t.elapsed().as_secs_f64());
    Ok(())
}

fn map(path: &Path) -> Result<memmap2::Mmap, Fail> {
    let file = std::fs::File::open(path).map_err(Fail::error)?;
    // SAFETY: the harness's own output file; nothing writes it while it is mapped.
    unsafe { memmap2::Mmap::map(&file) }.map_err(Fail::error)
}

fn check_output(kind: Output, out: &Path, canonical: &Path, records: usize) -> Result<(), Fail> {
    let got = map(out)?;
    match kind {
        Output::Json => records::check_json(&got, records, None),
        Output::Leafwire => {
            if map(canonical).is_ok_and(|c| c[..] == got[..]) {
                return Ok(());
            }
            check_leafwire(&got, records)
        }
    }
}

#[cfg(feature = "leafwire")]
fn check_leafwire(bytes: &[u8], records: usize) -> Result<(), Fail> {
    leafwire::validate(bytes).map_err(|e| Fail::Wrong(format!("does not validate: {e}")))?;
    let back = leafwire::json::to_json(bytes).map_err(Fail::error)?;
    records::check_json(back.as_bytes(), records, None)
}

#[cfg(not(feature = "leafwire"))]
fn check_leafwire(_: &[u8], _: usize) -> Result<(), Fail> {
    Err(Fail::Error(crate::LEAFWIRE_MISSING.into()))
}

//! Leafwire's editor on a file: opening for editing, validation throughput, and
//! commits of one same-size float `set` in the middle of the big array.

use std::path::Path;
use std::time::Instant;

use leafwire::{Editor, MappedFile, Trust, Value};
use serde_json::json;

use crate::harness::rng::Rng;
use crate::harness::sys::proc_io;
use crate::harness::timing::Stats;
use crate::harness::{Case, Fail, Plan, Row, Session, Status};

pub const PEER: &str = "leafwire";

/// One way to open a file for editing; each is a timed row.
pub struct Opener {
    pub op: &'static str,
    pub open: fn(&Path) -> leafwire::Result<Editor>,
}

/// The open rows. Every opener must accept the canonical file as the library wrote it.
pub const OPENERS: &[Opener] = &[
    Opener { op: "open_file (untrusted: reads + validates)", open: |p| Editor::open_file(p) },
    // SAFETY (both rows): the bench alone touches its scratch files while they are open.
    Opener { op: "map_file (untrusted: maps + validates)", open: |p| unsafe { Editor::map_file(p, Trust::Untrusted) } },
    Opener { op: "map_file (trusted: header only)", open: |p| unsafe { Editor::map_file(p, Trust::Trusted) } },
];

/// Commits per dataset, as the target counts them.
pub const COMMITS: usize = 1_000;
const VALUE_SEED: u64 = 0x5e7_f10a7;

fn map(path: &Path) -> Result<MappedFile, Fail> {
    // SAFETY: the harness's own file; nothing writes it while it is mapped.
    unsafe { MappedFile::open(path) }.map_err(Fail::error)
}

/// Validates the file and reads the number at `pointer`; checks the root's length.
fn read_back(path: &Path, pointer: &str, records: usize) -> Result<f64, Fail> {
    let file = map(path)?;
    leafwire::validate(file.as_bytes()).map_err(|e| Fail::Wrong(format!("the file does not validate: {e}")))?;
    let doc = file.document().map_err(Fail::error)?;
    let len = doc.root().len().map_err(Fail::error)?;
    if len != records {
        return Err(Fail::Wrong(format!("root array of {len}, expected {records}")));
    }
    doc.pointer(pointer).and_then(|n| n.as_f64()).map_err(|e| Fail::Wrong(format!("{pointer}: {e}")))
}

/// Timed rows: each opener, and `leafwire::validate` on the mapped bytes.
pub fn open_rows(ds: &str, path: &Path, records: usize, plan: &Plan) -> Vec<Row> {
    let size = std::fs::metadata(path).map(|m| m.len() as usize).unwrap_or(0);
    let mapped = map(path);
    let mut session = Session::new();
    for o in OPENERS {
        let check = (o.open)(path).map_err(Fail::error).and_then(|ed| {
            let len = ed.document().and_then(|d| d.root().len()).map_err(Fail::error)?;
            if len == records {
                Ok(())
            } else {
                Err(Fail::Wrong(format!("root array of {len}, expected {records}")))
            }
        });
        session.checked(Row::new(ds, o.op, PEER).bytes(size), check, || Case::new(move || (o.open)(path)));
    }
    let row = Row::new(ds, "validate (mapped bytes)", PEER).bytes(size);
    match &mapped {
        Ok(file) => {
            let bytes = file.as_bytes();
            let check = leafwire::validate(bytes).map(|_| ()).map_err(Fail::error);
            session.checked(row, check, || Case::new(move || leafwire::validate(bytes)));
        }
        Err(fail) => session.push(row.failed(fail.clone())),
    }
    session.run(plan)
}

/// What the commit rows and the report's commit table need.
pub struct Commits {
    pub rows: Vec<Row>,
    pub extra: serde_json::Value,
}

/// Copies the canonical file to `work`, opens it for editing once and commits one
/// same-size float change to `/<records/2>/x` up to [`COMMITS`] times, stopping early
/// when the file has grown by `growth_cap` bytes. The first commit is the check (read
/// back after reopening; the file validates) and is not timed; the others are timed one
/// by one (set + commit, which syncs) with /proc/self/io counters around each.
pub fn commits(ds: &str, canonical: &Path, work: &Path, records: usize, growth_cap: u64) -> Commits {
    let path = work.join("edited.leafwire");
    let result = commit_loop(ds, &path, canonical, records, growth_cap);
    let _ = std::fs::remove_file(&path);
    match result {
        Ok((rows, extra)) => Commits { rows, extra },
        Err(fail) => Commits {
            rows: vec![
                Row::new(ds, "commit", PEER).failed(fail.clone()),
                Row::new(ds, "size after commits", PEER).failed(fail),
            ],
            extra: serde_json::Value::Null,
        },
    }
}

fn commit_loop(
    ds: &str,
    path: &Path,
    canonical: &Path,
    records: usize,
    growth_cap: u64,
) -> Result<(Vec<Row>, serde_json::Value), Fail> {
    let file_len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).map_err(Fail::error);
    std::fs::copy(canonical, path).map_err(Fail::error)?;
    let canonical_bytes = file_len(canonical)?;
    let index = records / 2;
    let pointer = format!("/{index}/x");
    let mut rng = Rng::new(VALUE_SEED);
    let mut next_value = |previous: f64| loop {
        let v = rng.unit() * 2000.0 - 1000.0;
        if v != previous {
            break v;
        }
    };

    let original = read_back(path, &pointer, records)?;
    let mut value = next_value(original);
    // SAFETY: the bench alone touches its scratch file while it is open.
    let mut ed = unsafe { Editor::map_file(path, Trust::Untrusted) }.map_err(Fail::error)?;
    ed.set(&pointer, &Value::F64(value)).map_err(Fail::error)?;
    ed.commit().map_err(Fail::error)?;
    drop(ed);
    let got = read_back(path, &pointer, records)?;
    if got.to_bits() != value.to_bits() {
        return Err(Fail::Wrong(format!("{pointer} reads {got} after the commit, expected {value}")));
    }

    // SAFETY: the bench alone touches its scratch file while it is open.
    let mut ed = unsafe { Editor::map_file(path, Trust::Untrusted) }.map_err(Fail::error)?;
    let (mut latency, mut wchar, mut write_bytes, mut growth) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut size = file_len(path)?;
    let mut done = 1;
    let mut stopped = None;
    while done < COMMITS {
        if size >= canonical_bytes + growth_cap {
            stopped = Some(format!("the file grew past the run's cap of {growth_cap} bytes over canonical"));
            break;
        }
        value = next_value(value);
        let io_before = proc_io().ok_or_else(|| Fail::Error("/proc/self/io is unreadable".into()))?;
        let start = Instant::now();
        ed.set(&pointer, &Value::F64(value)).map_err(Fail::error)?;
        ed.commit().map_err(Fail::error)?;
        let ns = start.elapsed().as_nanos() as f64;
        let io_after = proc_io().ok_or_else(|| Fail::Error("/proc/self/io is unreadable".into()))?;
        let new_size = file_len(path)?;
        latency.push(ns);
        wchar.push(io_after.wchar - io_before.wchar);
        write_bytes.push(io_after.write_bytes - io_before.write_bytes);
        growth.push(new_size.saturating_sub(size));
        size = new_size;
        done += 1;
    }
    drop(ed);

    let timed = latency.len();
    let after = read_back(path, &pointer, records);
    let check = match after {
        Ok(got) if got.to_bits() == value.to_bits() => Ok(()),
        Ok(got) => Err(Fail::Wrong(format!("{pointer} reads {got} after {done} commits, expected {value}"))),
        Err(fail) => Err(fail),
    };
    let ratio = size as f64 / canonical_bytes as f64;
    let growth_median = median(&growth);
    let projected =
        (stopped.is_some()).then(|| (size + (COMMITS - done) as u64 * growth_median) as f64 / canonical_bytes as f64);
    let mut commit = Row::new(ds, "commit", PEER);
    let mut after_row = Row::new(ds, "size after commits", PEER);
    after_row.bytes = Some(size);
    if timed == 0 {
        commit = commit.status(Status::Skipped, "no timed commit: the first commit already reached the cap");
    } else {
        commit.time = Some(Stats::from_samples(latency, 1));
        commit.bytes = Some(median(&wchar));
    }
    if let Err(fail) = check {
        commit = commit.failed(fail.clone());
        after_row = after_row.failed(fail);
    }
    let extra = json!({
        "pointer": pointer,
        "records": records,
        "canonical_bytes": canonical_bytes,
        "commits": done,
        "timed_commits": timed,
        "stopped": stopped,
        "size_after": size,
        "size_ratio": ratio,
        "projected_ratio_at_target": projected,
        "wchar": summary(&wchar),
        "write_bytes": summary(&write_bytes),
        "growth_per_commit": summary(&growth),
    });
    Ok((vec![commit, after_row], extra))
}

fn median(v: &[u64]) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied().unwrap_or(0)
}

fn summary(v: &[u64]) -> serde_json::Value {
    json!({
        "median": median(v),
        "min": v.iter().min(),
        "max": v.iter().max(),
    })
}

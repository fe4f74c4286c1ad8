//! Workload "columns" (seed 000, Wisent): N rows × 100 f64 columns inside a
//! JSON-like metadata tree. Tasks: sum one column; sum it where another
//! column passes a predicate, at selectivities 1/256, 1/16, 1/2 and 1.
//!
//! Each file is written once, then read fully so the page cache is warm.
//! Every measured run is a fresh child process (this executable, command
//! `columns-child`) that opens the file, answers the query and reports its
//! time and peak RSS (VmHWM). Runs are interleaved across peers and tasks.

mod arrowipc;
mod bsonraw;
mod json;
#[cfg(feature = "leafwire")]
mod leaf;
mod msgpack;
mod peer;
mod selective;
mod table;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use crate::harness::sys::peak_rss;
use crate::harness::timing::Stats;
use crate::harness::{Fail, PeerInfo, Report, Row, Status};
use crate::Ctx;
use peer::ColumnsPeer;
use table::{Query, Table, QUERIES};

pub const CHILD_COMMAND: &str = "columns-child";
/// Bump when the generator or a writer changes, so cached files are rewritten.
const FILE_VERSION: &str = "columns-v1";

struct Entry {
    info: fn() -> PeerInfo,
    name: &'static str,
    ext: &'static str,
    max_rows: usize,
    write: fn(&Table, &Path) -> Result<(), Fail>,
    query: fn(&Path, Query) -> Result<f64, Fail>,
}

const fn entry<P: ColumnsPeer>() -> Entry {
    Entry { info: P::info, name: P::NAME, ext: P::EXT, max_rows: P::MAX_ROWS, write: P::write, query: P::query }
}

/// The registry, baseline (JSON) first.
const PEERS: &[Entry] = &[
    entry::<json::Json>(),
    entry::<bsonraw::Bson>(),
    entry::<msgpack::MsgPack>(),
    entry::<arrowipc::ArrowIpc>(),
    #[cfg(feature = "leafwire")]
    entry::<leaf::Leafwire>(),
];

/// (label, rows): rows × 100 columns × 8 bytes of payload.
const QUICK_SCALES: [(&str, usize); 2] = [("1 MB", 1_280), ("10 MB", 12_800)];
const FULL_SCALES: [(&str, usize); 3] = [("1 MB", 1_280), ("100 MB", 128_000), ("1 GB", 1_280_000)];

/// `columns-child <peer|none> <file> <query>`: one measured run; prints one JSON line.
pub fn child_main(args: &[String]) {
    let start_rss = peak_rss();
    let out = match args {
        [peer, path, query] if peer == "none" => {
            let _ = (path, query);
            json!({"ns": 0, "start_rss": start_rss, "peak_rss": peak_rss()})
        }
        [peer, path, query] => match PEERS.iter().find(|e| e.name == peer) {
            None => json!({"error": format!("unknown peer {peer}")}),
            Some(e) => {
                let q = Query::parse(query);
                let t = Instant::now();
                let result = (e.query)(Path::new(path), q);
                let ns = t.elapsed().as_nanos() as u64;
                match result {
                    Ok(sum) => {
                        json!({"ns": ns, "sum_bits": sum.to_bits(), "start_rss": start_rss, "peak_rss": peak_rss()})
                    }
                    Err(fail) => json!({"error": format!("{fail:?}")}),
                }
            }
        },
        _ => json!({"error": "usage: columns-child <peer> <file> <query>"}),
    };
    println!("{out}");
}

struct Measured {
    ns: u64,
    sum: f64,
    peak_rss: u64,
}

fn spawn(exe: &Path, peer: &str, file: &Path, q: Query) -> Result<Measured, Fail> {
    let out = Command::new(exe).arg(CHILD_COMMAND).arg(peer).arg(file).arg(q.arg()).output().map_err(Fail::error)?;
    let line: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        Fail::Error(format!("child exited with {}: {e}; stderr: {}", out.status, String::from_utf8_lossy(&out.stderr)))
    })?;
    if let Some(e) = line.get("error") {
        return Err(Fail::Error(e.as_str().unwrap_or("child failed").to_string()));
    }
    let num =
        |k: &str| line.get(k).and_then(Value::as_u64).ok_or_else(|| Fail::Error(format!("child reported no {k}")));
    Ok(Measured {
        ns: num("ns")?,
        sum: f64::from_bits(line.get("sum_bits").and_then(Value::as_u64).unwrap_or(0)),
        peak_rss: num("peak_rss")?,
    })
}

fn stamp(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".ok");
    PathBuf::from(s)
}

/// Write each peer's file unless an up-to-date one is already there.
fn prepare(dir: &Path, rows: usize, table: &Table) -> Vec<(usize, Result<PathBuf, Fail>)> {
    std::fs::create_dir_all(dir).expect("create the columns data directory");
    PEERS
        .iter()
        .enumerate()
        .filter(|(_, e)| rows <= e.max_rows)
        .map(|(i, e)| {
            let path = dir.join(format!("{rows}.{}", e.ext));
            let tag = format!("{FILE_VERSION} rows={rows}");
            let fresh = std::fs::read_to_string(stamp(&path)).is_ok_and(|s| s == tag) && path.exists();
            if fresh {
                return (i, Ok(path));
            }
            let t = Instant::now();
            let written = (e.write)(table, &path).and_then(|_| std::fs::write(stamp(&path), &tag).map_err(Fail::error));
            eprintln!("[columns]   wrote {} in {:.1}s", path.display(), t.elapsed().as_secs_f64());
            (i, written.map(|_| path))
        })
        .collect()
}

/// Read a file through once so every child finds it in the page cache.
fn warm(path: &Path) {
    if let Ok(mut f) = std::fs::File::open(path) {
        let mut buf = vec![0u8; 1 << 20];
        while matches!(f.read(&mut buf), Ok(n) if n > 0) {}
    }
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

pub fn run(ctx: &Ctx) -> Report {
    let mut report = Report::new(
        "columns",
        "sum and filtered sum over a wide f64 table (seed 000, Wisent)",
        &ctx.plan,
        json::Json::NAME,
    );
    report.leafwire = vec!["leafwire".into()];
    report.peers = PEERS.iter().map(|e| (e.info)()).collect();
    if !cfg!(feature = "leafwire") {
        report.peers.push(crate::leafwire_missing());
    }
    let scales: &[(&str, usize)] = if ctx.quick { &QUICK_SCALES } else { &FULL_SCALES };
    let reps = if ctx.quick { 5 } else { 7 };
    let dir = ctx.work_dir.join("columns");
    let mut extra_scales = Vec::new();
    for &(label, rows) in scales {
        eprintln!("[columns] {label} ({rows} rows)");
        let table = Table::generate(rows);
        let files = prepare(&dir, rows, &table);
        let references: Vec<f64> = QUERIES.iter().map(|q| table::reference(&table, *q)).collect();
        drop(table);

        let mut todo = Vec::new();
        for (i, e) in PEERS.iter().enumerate() {
            let Some((_, file)) = files.iter().find(|(j, _)| *j == i) else {
                let why = format!("not run at {rows} rows (see the peer's note)");
                for q in QUERIES {
                    report.rows.push(Row::new(label, &q.label(), e.name).status(Status::Skipped, why.clone()));
                }
                continue;
            };
            let path = match file {
                Ok(p) => p,
                Err(fail) => {
                    for op in std::iter::once("size".to_string()).chain(QUERIES.iter().map(Query::label)) {
                        report.rows.push(Row::new(label, &op, e.name).failed(fail.clone()));
                    }
                    continue;
                }
            };
            let size = std::fs::metadata(path).map(|m| m.len() as usize).unwrap_or(0);
            report.rows.push(Row::new(label, "size", e.name).bytes(size));
            warm(path);
            for (qi, q) in QUERIES.iter().enumerate() {
                let row = Row::new(label, &q.label(), e.name).bytes(size);
                match spawn(&ctx.exe, e.name, path, *q) {
                    Ok(m) if m.sum.to_bits() == references[qi].to_bits() => {
                        todo.push((row, path.clone(), *q, Vec::new()))
                    }
                    Ok(m) => report.rows.push(
                        row.failed(Fail::Wrong(format!("sum {} but the reference is {}", m.sum, references[qi]))),
                    ),
                    Err(fail) => report.rows.push(row.failed(fail)),
                }
            }
        }
        for round in 0..reps {
            for k in 0..todo.len() {
                let i = (k + round) % todo.len();
                let (row, path, q, samples) = &mut todo[i];
                match spawn(&ctx.exe, &row.peer, path, *q) {
                    Ok(m) => samples.push(m),
                    Err(fail) => eprintln!("[columns]   {} {}: {fail:?}", row.peer, row.op),
                }
            }
        }
        for (mut row, _, _, samples) in todo {
            if samples.is_empty() {
                report.rows.push(row.status(Status::Error, "every timed run failed"));
                continue;
            }
            row.peak_rss_bytes = Some(median(samples.iter().map(|m| m.peak_rss).collect()));
            row.time = Some(Stats::from_samples(samples.iter().map(|m| m.ns as f64).collect(), 1));
            report.rows.push(row);
        }
        let baseline = spawn(&ctx.exe, "none", &dir, QUERIES[0]).map(|m| m.peak_rss).ok();
        extra_scales.push(json!({"dataset": label, "rows": rows, "columns": table::COLUMNS, "payload_bytes": rows * table::COLUMNS * 8, "empty_child_peak_rss": baseline}));
    }
    report.extra = json!({
        "scales": extra_scales,
        "value_column": table::VALUE,
        "predicate_column": table::PREDICATE,
        "queries": QUERIES.iter().map(|q| json!({"op": q.label(), "predicate": q.below.map(|k| format!("{} < {k}", table::PREDICATE))})).collect::<Vec<_>>(),
        "reps": reps,
    });
    report.notes = vec![
        format!("Table: {} f64 columns c0..c99 under {{\"meta\": {{...}}, \"columns\": {{...}}}}; tasks sum {} (filters: where {} < k, k = 1, 16, 128, 256 of 256 equally frequent values).", table::COLUMNS, table::VALUE, table::PREDICATE),
        "Each file is written once beforehand and read through once, so the page cache is warm for every run.".into(),
        format!("Each measured run is a fresh process: time covers opening the file through the final sum; peak RSS is the child's VmHWM (median of {reps} runs), which counts file pages the reader touched through mmap."),
        "Every result must equal the reference sum bit for bit (all peers sum in row order) before runs are timed.".into(),
        "JSON and MessagePack must parse the whole file; their visitor keeps only the wanted columns (IgnoredAny for everything else).".into(),
    ];
    report
}

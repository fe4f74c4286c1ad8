//! The scoreboard: Leafwire against its peers.
//!
//! `leafwire-bench <workload> [--quick] --out FILE` runs one workload and
//! writes its rows as JSON; `scripts/report.py` turns the files into
//! RESULTS.md and graphs. Every peer's output is checked against a
//! reference before it is timed. `bench/run` is the entry point.

mod columns;
mod corpus;
mod data;
mod files;
mod harness;
mod kv;
mod stream;
mod trees;
mod workbook;

use std::path::{Path, PathBuf};
use std::time::Instant;

use harness::{PeerInfo, Plan, Report};

/// Settings shared by every workload.
pub struct Ctx {
    pub plan: Plan,
    pub quick: bool,
    /// The data files: `--data`, else `../shared/data` beside the repository, else (for
    /// `--quick` only) the in-repository sample `tests/data/sample`, which has the same
    /// layout and file names.
    pub data_dir: PathBuf,
    /// Scratch space for generated files (the columns and files workloads).
    pub work_dir: PathBuf,
    /// This executable, for the child processes of the columns, files and stream workloads.
    pub exe: PathBuf,
}

pub const LEAFWIRE_MISSING: &str =
    "crates/leafwire did not build with the API this harness adapts to; built without the `leafwire` feature";

pub fn leafwire_missing() -> PeerInfo {
    PeerInfo::new("leafwire", "-", LEAFWIRE_MISSING)
}

const WORKLOADS: &[(&str, fn(&Ctx) -> Report)] = &[
    ("corpus", corpus::run),
    ("kv", kv::run),
    ("graphql", trees::run_graphql),
    ("geojson", trees::run_geojson),
    ("workbook", workbook::run),
    ("columns", columns::run),
    ("files", files::run),
    ("stream", stream::run),
];

fn usage() -> ! {
    let names: Vec<&str> = WORKLOADS.iter().map(|(n, _)| *n).collect();
    eprintln!(
        "usage: leafwire-bench <{}> [--quick] [--out FILE] [--data DIR] [--work DIR]\n       leafwire-bench machine",
        names.join("|")
    );
    std::process::exit(2)
}

/// `../shared/data` beside the repository; without it, for a quick run, the in-repository
/// sample (said on stderr); without it, for a full run, exits with a message.
fn default_data_dir(quick: bool) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let shared = repo.join("../shared/data");
    if shared.is_dir() {
        return shared;
    }
    if quick {
        let sample = repo.join("tests/data/sample");
        eprintln!(
            "leafwire-bench: {} is absent: running on the in-repository sample {} (small cuts of the shared files)",
            shared.display(),
            sample.display()
        );
        return sample;
    }
    eprintln!("leafwire-bench: {} is absent: pass --data DIR (or --quick to run on the in-repository sample)", shared.display());
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else { usage() };
    match command.as_str() {
        "machine" => {
            println!("{}", serde_json::to_string_pretty(&harness::sys::machine()).expect("serializes"));
            return;
        }
        columns::CHILD_COMMAND => {
            columns::child_main(&args[1..]);
            return;
        }
        files::CHILD_COMMAND => {
            files::child_main(&args[1..]);
            return;
        }
        stream::RECV_COMMAND => {
            stream::recv_main(&args[1..]);
            return;
        }
        stream::SEND_COMMAND => {
            stream::send_main(&args[1..]);
            return;
        }
        _ => {}
    }
    let Some((name, run)) = WORKLOADS.iter().find(|(n, _)| n == command) else { usage() };
    let mut quick = false;
    let mut out = PathBuf::from(format!("{name}.json"));
    let mut data_dir = None;
    let mut work_dir = PathBuf::from("target/bench-data");
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        let mut value = || PathBuf::from(rest.next().unwrap_or_else(|| usage()));
        match arg.as_str() {
            "--quick" => quick = true,
            "--full" => quick = false,
            "--out" => out = value(),
            "--data" => data_dir = Some(value()),
            "--work" => work_dir = value(),
            _ => usage(),
        }
    }
    let data_dir = data_dir.unwrap_or_else(|| default_data_dir(quick));
    let ctx = Ctx {
        plan: if quick { Plan::quick() } else { Plan::full() },
        quick,
        data_dir,
        work_dir,
        exe: std::env::current_exe().expect("own path"),
    };
    let started = Instant::now();
    let report = run(&ctx);
    report.finish(started, &out).unwrap_or_else(|e| panic!("write {}: {e}", out.display()));
}

//! The scoreboard: Leafwire against its peers.
//!
//! `leafwire-bench <workload> [--quick] --out FILE` runs one workload and
//! writes its rows as JSON; `scripts/report.py` turns the files into
//! RESULTS.md and graphs. Every peer's output is checked against a
//! reference before it is timed. `bench/run` is the entry point.

mod columns;
mod corpus;
mod data;
mod harness;
mod kv;
mod trees;
mod workbook;

use std::path::PathBuf;
use std::time::Instant;

use harness::{PeerInfo, Plan, Report};

/// Settings shared by every workload.
pub struct Ctx {
    pub plan: Plan,
    pub quick: bool,
    /// The shared data (`/work/shared/data` unless `--data` says otherwise).
    pub data_dir: PathBuf,
    /// Scratch space for generated files (the columns workload).
    pub work_dir: PathBuf,
    /// This executable, for the columns workload's child processes.
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
];

fn usage() -> ! {
    let names: Vec<&str> = WORKLOADS.iter().map(|(n, _)| *n).collect();
    eprintln!(
        "usage: leafwire-bench <{}> [--quick] [--out FILE] [--data DIR] [--work DIR]\n       leafwire-bench machine",
        names.join("|")
    );
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
        _ => {}
    }
    let Some((name, run)) = WORKLOADS.iter().find(|(n, _)| n == command) else { usage() };
    let mut quick = false;
    let mut out = PathBuf::from(format!("{name}.json"));
    let mut data_dir = PathBuf::from("/work/shared/data");
    let mut work_dir = PathBuf::from("target/bench-data");
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        let mut value = || PathBuf::from(rest.next().unwrap_or_else(|| usage()));
        match arg.as_str() {
            "--quick" => quick = true,
            "--full" => quick = false,
            "--out" => out = value(),
            "--data" => data_dir = value(),
            "--work" => work_dir = value(),
            _ => usage(),
        }
    }
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

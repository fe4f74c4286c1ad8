//! Result rows and the JSON file each workload writes. Ratios are not stored:
//! the report script derives them from rows of the same run.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::check::Fail;
use super::timing::{measure, Case, Plan, Stats};

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Output matched the reference; timed.
    Ok,
    /// Output differed from the reference; not timed.
    Wrong,
    /// The peer returned an error; not timed.
    Error,
    /// The peer's crate did not compile here.
    DidNotBuild,
    /// Left out by the harness (too slow or too big for this run); reason says which.
    Skipped,
}

/// One (dataset, operation, peer) measurement.
#[derive(Serialize, Clone, Debug)]
pub struct Row {
    pub dataset: String,
    pub op: String,
    pub peer: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Row {
    pub fn new(dataset: &str, op: &str, peer: &str) -> Row {
        Row {
            dataset: dataset.to_string(),
            op: op.to_string(),
            peer: peer.to_string(),
            status: Status::Ok,
            reason: None,
            time: None,
            bytes: None,
            peak_rss_bytes: None,
            note: None,
        }
    }

    pub fn bytes(mut self, n: usize) -> Row {
        self.bytes = Some(n as u64);
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Row {
        self.note = Some(note.into());
        self
    }

    pub fn status(mut self, status: Status, reason: impl Into<String>) -> Row {
        self.status = status;
        self.reason = Some(reason.into());
        self
    }

    pub fn failed(self, fail: Fail) -> Row {
        match fail {
            Fail::Wrong(why) => self.status(Status::Wrong, why),
            Fail::Error(why) => self.status(Status::Error, why),
        }
    }
}

/// Rows of one dataset; the timed ones run interleaved in `run`.
#[derive(Default)]
pub struct Session<'a> {
    rows: Vec<Row>,
    timed: Vec<(usize, Case<'a>)>,
}

impl<'a> Session<'a> {
    pub fn new() -> Session<'a> {
        Session { rows: Vec::new(), timed: Vec::new() }
    }

    /// A row with no timing (a size, or a failure).
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// Time `case` only if `check` passed; otherwise record why not.
    pub fn checked(&mut self, row: Row, check: Result<(), Fail>, case: impl FnOnce() -> Case<'a>) {
        if !dev_filter_wants(&row) {
            return;
        }
        match check {
            Ok(()) => {
                self.timed.push((self.rows.len(), case()));
                self.rows.push(row);
            }
            Err(fail) => self.rows.push(row.failed(fail)),
        }
    }

    pub fn run(mut self, plan: &Plan) -> Vec<Row> {
        let (slots, mut cases): (Vec<usize>, Vec<Case<'a>>) = self.timed.drain(..).unzip();
        let stats = measure(&mut cases, plan);
        drop(cases);
        for (slot, s) in slots.into_iter().zip(stats) {
            self.rows[slot].time = Some(s);
        }
        self.rows
    }
}

/// For work on one operation: `BENCH_ONLY_OPS=encode,lookup` and `BENCH_ONLY_PEERS=leafwire,rmp-serde`
/// (comma lists, exact names) time only those rows and drop the others from the results.
/// Unset (as `bench/run` leaves them), every row is timed; never set them for published numbers.
fn dev_filter_wants(row: &Row) -> bool {
    let listed = |var: &str, name: &str| std::env::var(var).map_or(true, |list| list.split(',').any(|n| n == name));
    listed("BENCH_ONLY_OPS", &row.op) && listed("BENCH_ONLY_PEERS", &row.peer)
}

/// A peer as the report names it: crate, API used, caveats.
#[derive(Serialize, Clone, Debug)]
pub struct PeerInfo {
    pub name: String,
    pub api: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl PeerInfo {
    pub fn new(name: &str, api: &str, note: &str) -> PeerInfo {
        PeerInfo { name: name.into(), api: api.into(), note: note.into() }
    }
}

/// Everything one workload writes to `results/<workload>.json`.
#[derive(Serialize)]
pub struct Report {
    pub workload: String,
    pub title: String,
    pub mode: &'static str,
    pub plan: Plan,
    /// Peer that "ratio to baseline" divides by.
    pub baseline: String,
    /// Peer names that are Leafwire; "ratio to Leafwire" divides by the first one present.
    pub leafwire: Vec<String>,
    pub peers: Vec<PeerInfo>,
    pub notes: Vec<String>,
    pub extra: serde_json::Value,
    pub rows: Vec<Row>,
    pub elapsed_s: f64,
    /// Where this workload ran: the results directory's machine.json may be another run's.
    pub machine: super::sys::Machine,
    /// bench/run's description of this run (`BENCH_RUN`: command, git commit, start).
    pub run: serde_json::Value,
    /// The machine's state at the workload's start and end (`probe.rs`).
    pub probe_start: super::probe::Probe,
    pub probe_end: Option<super::probe::Probe>,
}

impl Report {
    pub fn new(workload: &str, title: &str, plan: &Plan, baseline: &str) -> Report {
        Report {
            workload: workload.into(),
            title: title.into(),
            mode: plan.name,
            plan: *plan,
            baseline: baseline.into(),
            leafwire: Vec::new(),
            peers: Vec::new(),
            notes: Vec::new(),
            extra: serde_json::Value::Null,
            rows: Vec::new(),
            elapsed_s: 0.0,
            machine: super::sys::machine(),
            run: std::env::var("BENCH_RUN").ok().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default(),
            probe_start: super::probe::probe(),
            probe_end: None,
        }
    }

    pub fn finish(mut self, started: Instant, out: &Path) -> std::io::Result<()> {
        self.elapsed_s = started.elapsed().as_secs_f64();
        self.probe_end = Some(super::probe::probe());
        let bad = self.rows.iter().filter(|r| matches!(r.status, Status::Wrong | Status::Error)).count();
        eprintln!(
            "[{}] {} rows ({} wrong or error) in {:.1}s -> {}",
            self.workload,
            self.rows.len(),
            bad,
            self.elapsed_s,
            out.display()
        );
        let text = serde_json::to_string_pretty(&self).expect("report serializes");
        std::fs::write(out, text)
    }
}

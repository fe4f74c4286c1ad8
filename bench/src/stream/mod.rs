//! Workload "stream" (issue 13's XBS experiment): messages of n doubles, n = 1, 2, 4, …
//! 2048, sent from this process to a receiving child over loopback TCP and a Unix socket,
//! and written to a file; messages per second and MB/s against a hand-coded writer
//! (length + raw doubles, the physical limit). Then a stream of real JSON records (the
//! shared files' arrays, one record per message) in MB/s of their JSON lines.
//!
//! Every peer writes through one buffer of `peer::BUFFER` bytes and flushes at the end of a run (and, in
//! one more column, every 16 messages). Every peer's received messages are compared
//! exactly with the sent ones before it is timed; every timed run is acknowledged by the
//! receiver with its count and checksum. Rows hold the time per message.

mod arrowipc;
mod bincode2;
mod data;
mod driver;
mod flexbuf;
mod handcoded;
// leafwire::stream came after the rest of the API this harness adapts to: a feature of its
// own, so that without it this workload and every other Leafwire row still build and run.
#[cfg(feature = "leafwire-stream")]
mod leaf;
mod msgpack;
mod ndjson;
mod peer;
mod protobuf;
mod syscalls;
mod transport;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{sys, Fail, PeerInfo, Report, Row, Session, Status};
use crate::Ctx;
use data::{Dataset, Spec};
use driver::{run_peer, Env, Op, OPS};
use peer::{Source, StreamPeer};
use transport::{Ack, Receiver, Socket, Transport};

pub use syscalls::SEND_COMMAND;
pub const RECV_COMMAND: &str = "stream-recv";

pub struct Entry<I: 'static> {
    pub name: &'static str,
    info: fn() -> PeerInfo,
    run: for<'a> fn(&'a Env, &'a [Op], &'a Dataset<I>, &mut Session<'a>),
    recv: fn(Source, u64, Option<&[I]>) -> Ack,
    pub send: fn(&str, &Dataset<I>, u64) -> Result<(u64, u64), Fail>,
}

const fn entry<P: StreamPeer + 'static>() -> Entry<P::Item> {
    Entry { name: P::NAME, info: P::info, run: run_peer::<P>, recv: driver::recv::<P>, send: syscalls::send_once::<P> }
}

type Doubles = Vec<f64>;

/// Messages of doubles, baseline (the hand-coded writer) first.
const DOUBLES: &[Entry<Doubles>] = &[
    entry::<handcoded::HandCoded>(),
    entry::<bincode2::Bincode>(),
    entry::<msgpack::MsgPack>(),
    entry::<protobuf::Prost>(),
    entry::<arrowipc::ArrowIpc>(),
    entry::<flexbuf::Flexbuffers>(),
    entry::<ndjson::Ndjson<ndjson::SerdeJson, Doubles>>(),
    entry::<ndjson::Ndjson<ndjson::Sonic, Doubles>>(),
    #[cfg(feature = "leafwire-stream")]
    entry::<leaf::Leafwire>(),
    #[cfg(feature = "leafwire-stream")]
    entry::<leaf::LeafwireEncoder>(),
    #[cfg(feature = "leafwire-stream")]
    entry::<leaf::LeafwireSerde>(),
];

/// The corpus stream, baseline (NDJSON through sonic-rs) first.
const RECORDS: &[Entry<Value>] = &[
    entry::<ndjson::Ndjson<ndjson::Sonic, Value>>(),
    entry::<ndjson::Ndjson<ndjson::SerdeJson, Value>>(),
    entry::<msgpack::MsgPackRecords>(),
    #[cfg(feature = "leafwire-stream")]
    entry::<leaf::LeafwireRecords>(),
];

const LEAFWIRE_DOUBLES: [&str; 3] = ["leafwire", "leafwire (Encoder)", "leafwire (serde)"];
const STREAM_MISSING: &str =
    "built without the `leafwire-stream` feature (crates/leafwire or its `stream` module did not build)";

const QUICK_NS: [usize; 5] = [1, 8, 64, 512, 2048];
const FULL_NS: [usize; 12] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048];
const SYSCALL_NS: [usize; 3] = [1, 64, 2048];

/// The receiving process: dispatch a connection to the peer its header names.
fn serve(h: &transport::Header, socket: Socket, data_dir: &Path) -> Ack {
    let error = |e: String| Ack { error: Some(e), ..Ack::default() };
    match &h.spec {
        Spec::Doubles { n } => {
            let Some(e) = DOUBLES.iter().find(|e| e.name == h.peer) else {
                return error(format!("no peer {}", h.peer));
            };
            let ds = h.check.then(|| data::doubles(*n));
            (e.recv)(Box::new(socket), h.count, ds.as_ref().map(|d| &d.items[..]))
        }
        Spec::Records { name } => {
            let Some(e) = RECORDS.iter().find(|e| e.name == h.peer) else {
                return error(format!("no peer {}", h.peer));
            };
            let ds = match h.check.then(|| data::records(data_dir, name)).transpose() {
                Ok(ds) => ds,
                Err(why) => return error(why),
            };
            (e.recv)(Box::new(socket), h.count, ds.as_ref().map(|d| &d.items[..]))
        }
    }
}

pub fn recv_main(args: &[String]) {
    transport::recv_main(args, serve);
}

pub fn send_main(args: &[String]) {
    syscalls::send_main(args, DOUBLES);
}

/// Rows come back timed per run; the report wants per message. Also marks the rows whose
/// timed runs failed their acknowledgement.
fn per_message(rows: Vec<Row>, env: &Env) -> Vec<Row> {
    let runs = env.runs.borrow();
    let failures = env.failures.borrow();
    rows.into_iter()
        .map(|mut row| {
            let key = (row.dataset.clone(), row.op.clone(), row.peer.clone());
            if let Some(why) = failures.get(&key) {
                return Row { time: None, ..row }.status(Status::Error, why.clone());
            }
            let info = runs.iter().find(|r| r.dataset == row.dataset && r.op == row.op && r.peer == row.peer);
            if let (Some(t), Some(info)) = (row.time.as_mut(), info) {
                let m = info.messages as f64;
                t.median_ns /= m;
                t.min_ns /= m;
                t.max_ns /= m;
                row.note = Some(format!("time per message; runs of {} messages", info.messages));
            }
            row
        })
        .collect()
}

/// `BENCH_STREAM_NS=1,16,128`: only these message lengths (to look at a few cells again).
fn only_ns() -> Option<Vec<usize>> {
    let list = std::env::var("BENCH_STREAM_NS").ok()?;
    let ns: Vec<usize> = list.split(',').filter_map(|n| n.trim().parse().ok()).filter(|&n| n > 0).collect();
    (!ns.is_empty()).then_some(ns)
}

/// `BENCH_STREAM_PIN=0` leaves sender and receiver to the scheduler.
fn pin_enabled() -> bool {
    std::env::var("BENCH_STREAM_PIN").map_or(true, |v| v != "0")
}

fn placement_note(placement: &Value) -> String {
    match (placement["sender_cpu"].as_u64(), placement["receiver_cpu"].as_u64()) {
        (Some(s), Some(r)) => format!("The sender runs on CPU {s} and the receiver on CPU {r} (sched_setaffinity), for every peer: left to the scheduler, the pair sometimes shared a core, and runs of one cell differed by up to 2x."),
        _ => "Sender and receiver are not pinned: they share the machine's cores as the scheduler places them (and with whatever else runs on the machine).".into(),
    }
}

fn missing_rows(report: &mut Report, dataset: &str, ops: &[Op], peers: &[&str]) {
    if cfg!(feature = "leafwire-stream") {
        return;
    }
    for op in ops {
        for peer in peers {
            report.rows.push(Row::new(dataset, op.name, peer).status(Status::DidNotBuild, STREAM_MISSING));
        }
    }
}

pub fn run(ctx: &Ctx) -> Report {
    let mut report = Report::new(
        "stream",
        "messages of n doubles over TCP, a Unix socket and a file; a stream of JSON records (issue 13)",
        &ctx.plan,
        handcoded::HandCoded::NAME,
    );
    report.leafwire = LEAFWIRE_DOUBLES.iter().map(|s| s.to_string()).collect();
    report.peers = DOUBLES.iter().map(|e| (e.info)()).collect();
    report.peers.extend(RECORDS.iter().map(|e| {
        let info = (e.info)();
        PeerInfo { name: format!("{} (records)", info.name), ..info }
    }));
    if !cfg!(feature = "leafwire-stream") {
        report.peers.push(PeerInfo::new("leafwire", "-", STREAM_MISSING));
    }

    let dir = ctx.work_dir.join("stream");
    std::fs::create_dir_all(&dir).expect("create the stream workload's directory");
    let spawn = |t| Receiver::spawn(&ctx.exe, t, &dir.join("recv.sock"), &ctx.data_dir).map_err(|e| e.to_string());
    // Sender and receiver each on a core of its own, the same two for every peer: left to
    // the scheduler, the pair sometimes shares a core and sometimes not, and a run's
    // throughput follows that more than the peer (cells moved 2x between runs).
    let cpus = sys::allowed_cpus();
    let pinned = pin_enabled() && cpus.len() >= 2 && sys::pin_to(&cpus[cpus.len() - 1..]);
    let (tcp, unix) = (spawn(Transport::Tcp), spawn(Transport::Unix));
    let pinned = pinned && sys::pin_to(&cpus[..1]);
    let placement =
        if pinned { json!({"sender_cpu": cpus[0], "receiver_cpu": cpus[cpus.len() - 1]}) } else { json!("not pinned") };
    let env = Env {
        tcp,
        unix,
        file: dir.join("stream.bin"),
        target: Duration::from_millis(if ctx.quick { 20 } else { 80 }),
        max_payload: if ctx.quick { 64 << 20 } else { 256 << 20 },
        runs: RefCell::new(Vec::new()),
        failures: RefCell::new(HashMap::new()),
    };

    let ns: Vec<usize> = only_ns().unwrap_or_else(|| if ctx.quick { QUICK_NS.to_vec() } else { FULL_NS.to_vec() });
    for &n in &ns {
        let ds = data::doubles(n);
        eprintln!("[stream] {} ({} distinct messages)", ds.label, ds.items.len());
        let mut session = Session::new();
        for e in DOUBLES {
            (e.run)(&env, &OPS, &ds, &mut session);
        }
        let rows = session.run(&ctx.plan);
        report.rows.extend(per_message(rows, &env));
        missing_rows(&mut report, &ds.label, &OPS, &LEAFWIRE_DOUBLES);
    }

    // Records: no flush-every-K column (one record is already a sizeable message).
    let record_ops = &OPS[..3];
    let mut records = Vec::new();
    for (name, file, pointer) in data::RECORDS {
        let ds = match data::records(&ctx.data_dir, name) {
            Ok(ds) => ds,
            Err(why) => {
                eprintln!("[stream] records {name} skipped: {why}");
                records.push(json!({"name": name, "file": file, "skipped": why}));
                continue;
            }
        };
        eprintln!("[stream] {} ({} records, {:.0} bytes of JSON each)", ds.label, ds.items.len(), ds.mean_payload());
        records.push(json!({"dataset": ds.label, "name": name, "file": file, "pointer": pointer,
            "records": ds.items.len(), "mean_json_line_bytes": ds.mean_payload()}));
        let mut session = Session::new();
        for e in RECORDS {
            (e.run)(&env, record_ops, &ds, &mut session);
        }
        let rows = session.run(&ctx.plan);
        report.rows.extend(per_message(rows, &env));
        missing_rows(&mut report, &ds.label, record_ops, &["leafwire"]);
    }

    let syscall_payload: u64 = 8 << 20;
    let syscalls = match &env.unix {
        Ok(r) => {
            eprintln!("[stream] write calls per message (n = {SYSCALL_NS:?})");
            syscalls::measure(&ctx.exe, &dir, &r.addr, DOUBLES, &SYSCALL_NS, syscall_payload)
        }
        Err(why) => json!({"error": why}),
    };

    if pinned {
        sys::pin_to(&cpus);
    }
    // The file transport's last run: up to 256 MB that nothing reads again.
    let _ = std::fs::remove_file(&env.file);
    report.extra = json!({
        "ns": ns,
        "ops": OPS.iter().map(|o| json!({"op": o.name, "transport": o.transport.name(), "flush_every": o.flush_every})).collect::<Vec<_>>(),
        "buffer_bytes": peer::BUFFER,
        "target_run_ms": env.target.as_millis() as u64,
        "max_payload_bytes": env.max_payload,
        "runs": *env.runs.borrow(),
        "records": records,
        "records_baseline": RECORDS[0].name,
        "syscalls": syscalls,
        "placement": placement,
    });
    report.notes = vec![
        "Message: n doubles, uniform in ±10⁴ with all 53 bits, seeded; the sender cycles through a pool of distinct messages (about 1 MB, 16 to 4,096 of them). Peers that keep their own message type (prost's Doubles, Arrow's RecordBatch) get it built outside the clock.".into(),
        format!("Every writer writes through one buffer of {} bytes (a BufWriter, or Leafwire's own of the same size on the bare sink) and flushes once at the end of the run; the column \"tcp, flush every {}\" flushes after every {} messages as well. Readers read through a BufReader of the same size (Leafwire: its own reader). The size is 64 KiB less 64 bytes: on loopback TCP, a write just over two segments (2 × 32,741 bytes on this machine) costs a third, tiny segment and 2-5× the kernel time per byte (bench/scripts/loopback_writes.py); at 64 KiB, which peers paid that at which n followed from their message sizes.", peer::BUFFER, driver::FLUSH_EVERY, driver::FLUSH_EVERY),
        "tcp and unix: the harness sends to a child process (this executable, `stream-recv`) over loopback TCP (TCP_NODELAY on both ends) or a Unix stream socket; the child decodes every message and answers with its count and a checksum of every value's bits, which must match the sender's. The time is from the writer's creation to that answer, so the receiver's decoding is inside it and bytes still in kernel buffers are not counted as sent. Connecting and the run's header are outside it.".into(),
        "file: written to target/bench-data/stream/stream.bin, opened outside the clock and overwritten in place (the check run truncates it and reads it back once; timed runs do not truncate, so they time the writer and the copy into pages the page cache already holds, not the kernel freeing and allocating pages, which varied from run to run more than the peers did); the time covers writing and the final flush, not fsync.".into(),
        "Checks before timing: one run per peer, transport and n in which the receiver compares every message with the one sent, value by value (bits) or record by record (JSON data); then a few short runs size the timed run to about the target length. Every timed run is still acknowledged with count and checksum.".into(),
        format!("Time is per message (the run's time ÷ its messages); messages/s and MB/s (payload: 8 bytes per double; for records, the JSON lines' bytes) follow from it. Runs are interleaved across peers and transports of one n. {}", placement_note(&placement)),
        "Records: the arrays of the shared JSON files, one record per message, as serde_json::Values in memory; MB/s of their compact JSON lines. NDJSON through sonic-rs decodes to sonic_rs::Value and Leafwire to its leafwire::ValueRef (each library's own tree), the others to serde_json::Value; a timed run checks the count and each record's number of top-level entries, the check run every value.".into(),
        format!("Write calls per message: one run per peer of {} MB at n = {:?} over the Unix socket, by a child process under `strace -c -f` (see the table's source column).", syscall_payload >> 20, SYSCALL_NS),
    ];
    report
}

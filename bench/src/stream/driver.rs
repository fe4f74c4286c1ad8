//! The check-then-time driver. For each (dataset, transport, peer): one check run (the
//! receiver compares every message exactly), a few short runs to size the timed run,
//! then the timed case. A timed run on a socket lasts from the first byte the peer
//! writes until the receiver acknowledges that it has decoded every message and that the
//! count and checksum match, so bytes still in kernel buffers are not counted as sent.
//! On a file it is the write including the final flush (no fsync).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::data::{Dataset, Expect};
use super::peer::{Counting, Received, Sink, Source, StreamPeer};
use super::transport::{read_frame, write_frame, Ack, Header, Receiver, Socket, Transport};
use crate::harness::{Case, Fail, Row, Session};

/// One column of the report: a transport and a flush policy.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    pub name: &'static str,
    pub transport: Transport,
    /// Flush after every K messages; `None`: only at the end of the run.
    pub flush_every: Option<u64>,
}

pub const FLUSH_EVERY: u64 = 16;

pub const OPS: [Op; 4] = [
    Op { name: "tcp", transport: Transport::Tcp, flush_every: None },
    Op { name: "unix", transport: Transport::Unix, flush_every: None },
    Op { name: "file", transport: Transport::File, flush_every: None },
    Op { name: "tcp, flush every 16", transport: Transport::Tcp, flush_every: Some(FLUSH_EVERY) },
];

/// What a timed row stands for: its time is per message; these are per run.
#[derive(serde::Serialize, Clone, Debug)]
pub struct RunInfo {
    pub dataset: String,
    pub op: String,
    pub peer: String,
    /// Messages per timed run.
    pub messages: u64,
    /// Payload bytes per timed run: 8 per double, or the records' JSON lines.
    pub payload_bytes: u64,
    /// Bytes on the wire per message, stream header and end marker included (check run).
    pub wire_bytes_per_message: f64,
}

pub struct Env {
    pub tcp: Result<Receiver, String>,
    pub unix: Result<Receiver, String>,
    pub file: std::path::PathBuf,
    /// How long a timed run should last (sized from short runs).
    pub target: Duration,
    /// At most this many payload bytes per run (the file transport writes them to disk).
    pub max_payload: u64,
    pub runs: RefCell<Vec<RunInfo>>,
    /// Timed runs that failed their ack (never expected after a passed check).
    pub failures: RefCell<HashMap<(String, String, String), String>>,
}

impl Env {
    fn addr(&self, t: Transport) -> Result<&str, Fail> {
        let r = match t {
            Transport::Tcp => &self.tcp,
            Transport::Unix => &self.unix,
            Transport::File => return Err(Fail::Error("a file has no receiver".into())),
        };
        r.as_ref().map(|r| r.addr.as_str()).map_err(|e| Fail::Error(format!("no receiver: {e}")))
    }

    pub fn fail(&self, dataset: &str, op: &str, peer: &str, why: String) {
        self.failures.borrow_mut().entry((dataset.into(), op.into(), peer.into())).or_insert(why);
    }
}

/// The write loop every run shares: cycle through the messages, flush per the policy.
pub fn send<P: StreamPeer>(sink: Sink, msgs: &[P::Msg], count: u64, flush_every: Option<u64>) -> Result<(), Fail> {
    let mut w = P::start(sink)?;
    let every = flush_every.unwrap_or(u64::MAX);
    let mut left = every;
    for msg in msgs.iter().cycle().take(count as usize) {
        P::write(&mut w, msg)?;
        left -= 1;
        if left == 0 {
            P::flush(&mut w)?;
            left = every;
        }
    }
    P::finish(w)
}

/// The receiving side of a run: read `count` messages and tally them.
pub fn recv<P: StreamPeer>(source: Source, count: u64, expect: Option<&[P::Item]>) -> Ack {
    let mut got = Received::new(expect);
    let result = P::read(source, count, &mut got);
    Ack {
        count: got.count,
        checksum: got.checksum,
        wrong: got.wrong,
        error: result.err().map(|f| match f {
            Fail::Wrong(w) | Fail::Error(w) => w,
        }),
    }
}

/// The ack against the sender's expectation.
fn verify(ack: Ack, want: Expect) -> Result<(), Fail> {
    if let Some(e) = ack.error {
        return Err(Fail::Error(format!("receiver, after {} messages: {e}", ack.count)));
    }
    if let Some(w) = ack.wrong {
        return Err(Fail::Wrong(w));
    }
    if ack.count != want.count {
        return Err(Fail::Wrong(format!("received {} messages, sent {}", ack.count, want.count)));
    }
    if ack.checksum != want.checksum {
        return Err(Fail::Wrong(format!("checksum {:#x}, expected {:#x}", ack.checksum, want.checksum)));
    }
    Ok(())
}

/// A connection with its header sent: made outside the clock.
pub struct Conn {
    sock: Socket,
    want: Expect,
}

impl Conn {
    pub fn open<I>(addr: &str, peer: &str, ds: &Dataset<I>, count: u64, check: bool) -> Result<Conn, Fail>
    where
        I: super::peer::Item,
    {
        let mut sock = Socket::connect(addr).map_err(Fail::error)?;
        let header = Header { peer: peer.into(), spec: ds.spec.clone(), count, check };
        write_frame(&mut sock, &header).map_err(Fail::error)?;
        Ok(Conn { sock, want: ds.expect(count) })
    }

    /// Streams, then waits for the receiver's verdict. Returns the bytes and write calls
    /// that reached the socket.
    pub fn run<P: StreamPeer>(&mut self, msgs: &[P::Msg], flush_every: Option<u64>) -> Result<(u64, u64), Fail> {
        let (sink, counts) = Counting::new(self.sock.try_clone().map_err(Fail::error)?);
        send::<P>(Box::new(sink), msgs, self.want.count, flush_every)?;
        self.sock.shutdown_write().map_err(Fail::error)?;
        let ack: Ack = read_frame(&mut self.sock).map_err(|e| Fail::Error(format!("no ack: {e}")))?;
        verify(ack, self.want)?;
        Ok((counts.bytes.get(), counts.writes.get()))
    }
}

fn file_run<P: StreamPeer>(file: File, msgs: &[P::Msg], count: u64, flush_every: Option<u64>) -> Result<u64, Fail> {
    let (sink, counts) = Counting::new(file);
    send::<P>(Box::new(sink), msgs, count, flush_every)?;
    Ok(counts.bytes.get())
}

/// One untimed run: (wall time, bytes on the wire). With `check`, every message received
/// (or read back from the file) is compared exactly with the one sent.
fn one_run<P: StreamPeer>(
    env: &Env,
    ds: &Dataset<P::Item>,
    msgs: &[P::Msg],
    op: Op,
    count: u64,
    check: bool,
) -> Result<(Duration, u64), Fail> {
    match op.transport {
        Transport::File => {
            let file = File::create(&env.file).map_err(Fail::error)?;
            let start = Instant::now();
            let bytes = file_run::<P>(file, msgs, count, op.flush_every)?;
            let elapsed = start.elapsed();
            if check {
                let source = File::open(&env.file).map_err(Fail::error)?;
                verify(recv::<P>(Box::new(source), count, Some(&ds.items)), ds.expect(count))?;
            }
            Ok((elapsed, bytes))
        }
        t => {
            let mut conn = Conn::open(env.addr(t)?, P::NAME, ds, count, check)?;
            let start = Instant::now();
            let (bytes, _) = conn.run::<P>(msgs, op.flush_every)?;
            Ok((start.elapsed(), bytes))
        }
    }
}

/// Messages of the check run: about 1 MB of doubles, or a few hundred records.
fn check_count<I: super::peer::Item>(ds: &Dataset<I>) -> u64 {
    ((1 << 20) as f64 / ds.mean_payload().max(1.0)).clamp(64.0, 16_384.0) as u64
}

/// Check, then size the timed run: grow the count until an unchecked run lasts a quarter
/// of the target (the check run's own time includes the receiver rebuilding and comparing
/// the messages), then scale to the target. Returns (messages per timed run, wire bytes per
/// message).
fn prepare<P: StreamPeer>(env: &Env, ds: &Dataset<P::Item>, msgs: &[P::Msg], op: Op) -> Result<(u64, f64), Fail> {
    let first = check_count(ds);
    let (_, bytes) = one_run::<P>(env, ds, msgs, op, first, true)?;
    let per_message = bytes as f64 / first as f64;
    let cap = ((env.max_payload as f64 / ds.mean_payload().max(1.0)) as u64).max(first);
    let mut count = first;
    let mut t = one_run::<P>(env, ds, msgs, op, count, false)?.0;
    while t < env.target / 4 && count < cap {
        let grow = (env.target.as_secs_f64() / t.as_secs_f64().max(1e-6)).min(64.0);
        count = ((count as f64 * grow) as u64).min(cap);
        t = one_run::<P>(env, ds, msgs, op, count, false)?.0;
    }
    let scaled = count as f64 * env.target.as_secs_f64() / t.as_secs_f64().max(1e-6);
    Ok(((scaled as u64).clamp(first.min(cap), cap), per_message))
}

/// Check and queue every transport of peer `P` on dataset `ds`.
pub fn run_peer<'a, P: StreamPeer + 'static>(
    env: &'a Env,
    ops: &'a [Op],
    ds: &'a Dataset<P::Item>,
    s: &mut Session<'a>,
) {
    let msgs: Rc<Vec<P::Msg>> = Rc::new(ds.items.iter().map(P::message).collect());
    for &op in ops {
        let row = Row::new(&ds.label, op.name, P::NAME);
        let (count, wire) = match prepare::<P>(env, ds, &msgs, op) {
            Ok(x) => x,
            Err(fail) => {
                s.push(row.failed(fail));
                continue;
            }
        };
        env.runs.borrow_mut().push(RunInfo {
            dataset: ds.label.clone(),
            op: op.name.into(),
            peer: P::NAME.into(),
            messages: count,
            payload_bytes: ds.expect(count).payload_bytes,
            wire_bytes_per_message: wire,
        });
        let msgs = msgs.clone();
        let fail = move |why: Fail| {
            let why = match why {
                Fail::Wrong(w) => format!("a timed run: {w}"),
                Fail::Error(e) => format!("a timed run: {e}"),
            };
            env.fail(&ds.label, op.name, P::NAME, why);
        };
        s.checked(row, Ok(()), move || match op.transport {
            Transport::File => Case::batched(
                // Overwritten in place, not truncated: the page cache keeps the previous
                // run's pages, so a run times the writer and the copy into the cache, not
                // the kernel freeing and allocating pages, which varied from run to run
                // more than the peers did.
                move || std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(&env.file),
                move |file| match file.map_err(Fail::error) {
                    Ok(f) => {
                        if let Err(e) = file_run::<P>(f, &msgs, count, op.flush_every) {
                            fail(e)
                        }
                    }
                    Err(e) => fail(e),
                },
            ),
            t => Case::batched(
                move || env.addr(t).and_then(|a| Conn::open(a, P::NAME, ds, count, false)),
                move |conn: Result<Conn, Fail>| match conn {
                    // The connection is handed back, to be closed outside the clock.
                    Ok(mut c) => match c.run::<P>(&msgs, op.flush_every) {
                        Ok(_) => Some(c),
                        Err(e) => {
                            fail(e);
                            Some(c)
                        }
                    },
                    Err(e) => {
                        fail(e);
                        None
                    }
                },
            ),
        });
    }
}

//! What a peer provides to the stream workload: a writer that frames messages onto a byte
//! sink, and a reader that takes them back off a byte source. The driver (`driver.rs`)
//! moves the bytes between processes; this file holds the trait, the buffer policy every
//! peer shares, and the tally a reader fills (count, checksum, or an exact comparison).

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::rc::Rc;

use serde_json::Value;

use crate::harness::{json_eq, Fail, PeerInfo};

/// The one buffer size of every writer and reader (issue 13: "same buffer size"): 64 KiB
/// less 64 bytes, so that no peer's buffer-sized write is just over two TCP segments on
/// loopback (Linux bounds the segment to half the window: 32,741 bytes here). A write of
/// 65,483 bytes or more then costs a third segment of a few bytes, and 2-5x the kernel time
/// per byte (`bench/scripts/loopback_writes.py`); at 64 KiB, whether a peer paid it
/// depended on its message size (hand-coded at n = 8, Leafwire at n = 16 and 128).
pub const BUFFER: usize = (64 << 10) - 64;

/// Where a writer puts its bytes: a socket or a file (a dynamic call per buffer flush,
/// never per message).
pub type Sink = Box<dyn Write>;
/// Where a reader takes them from.
pub type Source = Box<dyn Read>;

pub trait StreamPeer {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "";
    /// What the dataset holds: `Vec<f64>` (a message of doubles) or a JSON record.
    type Item: Item;
    /// The message as this peer's users hold it (a prost struct, an Arrow batch),
    /// made from the item outside the clock.
    type Msg;
    type Writer;

    fn message(item: &Self::Item) -> Self::Msg;
    /// Begins a stream on `sink`. Stream headers (Arrow's schema) are written here: timed.
    fn start(sink: Sink) -> Result<Self::Writer, Fail>;
    fn write(w: &mut Self::Writer, msg: &Self::Msg) -> Result<(), Fail>;
    /// Pushes the buffered messages to the sink (the flush-every-K policy).
    fn flush(w: &mut Self::Writer) -> Result<(), Fail>;
    /// Ends the stream: its end marker if the format has one, then a flush.
    fn finish(w: Self::Writer) -> Result<(), Fail>;
    /// Reads `count` messages off `source`, decoding each one fully and handing it to `got`.
    fn read(source: Source, count: u64, got: &mut Received<'_, Self::Item>) -> Result<(), Fail>;

    fn info() -> PeerInfo {
        PeerInfo::new(Self::NAME, Self::API, Self::NOTE)
    }
}

/// A message of a dataset: the sender's expectation is built from `digest`, and the
/// receiver computes the same digest from what it decoded.
pub trait Item: Sized {
    fn digest(&self) -> u64;
}

impl Item for Vec<f64> {
    fn digest(&self) -> u64 {
        doubles_digest(self)
    }
}

/// A wrapping sum of the bit patterns: cheap (it vectorizes), so a timed run can afford it
/// on every value; the exact, ordered comparison is the check run's job.
#[inline]
pub fn doubles_digest(xs: &[f64]) -> u64 {
    xs.iter().fold(0u64, |a, x| a.wrapping_add(x.to_bits()))
}

impl Item for Value {
    fn digest(&self) -> u64 {
        self.entries()
    }
}

/// A decoded JSON record, whichever type a peer decodes into (serde_json's or sonic-rs's).
pub trait Record {
    /// Entries of the top-level container: all a timed run checks of a record, so that no
    /// peer pays for a walk of the tree it decoded (the check run compares everything).
    fn entries(&self) -> u64;
    fn to_json(&self) -> Result<Value, Fail>;
}

impl Record for Value {
    fn entries(&self) -> u64 {
        match self {
            Value::Object(m) => m.len() as u64,
            Value::Array(a) => a.len() as u64,
            _ => 0,
        }
    }
    fn to_json(&self) -> Result<Value, Fail> {
        Ok(self.clone())
    }
}

impl Record for sonic_rs::Value {
    fn entries(&self) -> u64 {
        use sonic_rs::JsonContainerTrait;
        if let Some(o) = self.as_object() {
            o.len() as u64
        } else if let Some(a) = self.as_array() {
            a.len() as u64
        } else {
            0
        }
    }
    fn to_json(&self) -> Result<Value, Fail> {
        serde_json::to_value(self).map_err(Fail::error)
    }
}

impl Record for leafwire::ValueRef<'_> {
    fn entries(&self) -> u64 {
        match self {
            leafwire::ValueRef::Object(m) => m.len() as u64,
            leafwire::ValueRef::IntMap(m) => m.len() as u64,
            leafwire::ValueRef::Array(a) => a.len() as u64,
            leafwire::ValueRef::Typed(t) => t.shape().first().copied().unwrap_or(0) as u64,
            _ => 0,
        }
    }
    fn to_json(&self) -> Result<Value, Fail> {
        serde_json::to_value(self).map_err(Fail::error)
    }
}

/// What a reader received: a count and a digest, and in a check run, the verdict of an
/// exact comparison of every message with the one the sender sent.
pub struct Received<'a, I> {
    pub count: u64,
    pub checksum: u64,
    /// Check runs: the sender's messages (it cycles through them).
    expect: Option<&'a [I]>,
    pub wrong: Option<String>,
}

impl<'a, I> Received<'a, I> {
    pub fn new(expect: Option<&'a [I]>) -> Received<'a, I> {
        Received { count: 0, checksum: 0, expect, wrong: None }
    }

    fn expected(&self) -> Option<&'a I> {
        let e = self.expect?;
        e.get((self.count % e.len() as u64) as usize)
    }

    fn mismatch(&mut self, why: String) {
        if self.wrong.is_none() {
            self.wrong = Some(format!("message {}: {why}", self.count));
        }
    }
}

impl Received<'_, Vec<f64>> {
    #[inline]
    pub fn take(&mut self, xs: &[f64]) {
        if let Some(want) = self.expected() {
            if want.len() != xs.len() {
                self.mismatch(format!("{} values, expected {}", xs.len(), want.len()));
            } else if let Some(i) = (0..xs.len()).find(|&i| xs[i].to_bits() != want[i].to_bits()) {
                self.mismatch(format!("value {i} is {:e}, expected {:e}", xs[i], want[i]));
            }
        }
        self.checksum = self.checksum.wrapping_add(doubles_digest(xs));
        self.count += 1;
    }
}

impl Received<'_, Value> {
    pub fn take(&mut self, r: &impl Record) {
        if let Some(want) = self.expected() {
            match r.to_json().and_then(|got| json_eq(want, &got)) {
                Ok(()) => {}
                Err(Fail::Wrong(why)) | Err(Fail::Error(why)) => self.mismatch(why),
            }
        }
        self.checksum = self.checksum.wrapping_add(r.entries());
        self.count += 1;
    }
}

pub fn io_err(e: impl std::fmt::Display) -> Fail {
    Fail::error(e)
}

/// A sink that counts the write calls that reach it and their bytes: the size of a stream
/// on the wire, and (in `stream-send`) the writes per message when strace is missing.
pub struct Counting<W> {
    inner: W,
    pub counts: Rc<Counts>,
}

#[derive(Default)]
pub struct Counts {
    pub writes: Cell<u64>,
    pub bytes: Cell<u64>,
}

impl<W> Counting<W> {
    pub fn new(inner: W) -> (Counting<W>, Rc<Counts>) {
        let counts = Rc::new(Counts::default());
        (Counting { inner, counts: counts.clone() }, counts)
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.counts.writes.set(self.counts.writes.get() + 1);
        self.counts.bytes.set(self.counts.bytes.get() + n as u64);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The raw bytes of doubles (f64 has no padding, and on a little-endian machine its memory
/// is the little-endian encoding the hand-coded peer writes).
pub fn f64_bytes(xs: &[f64]) -> &[u8] {
    // SAFETY: any f64 memory is valid as u8, same address and 8× the length.
    unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), std::mem::size_of_val(xs)) }
}

pub fn f64_bytes_mut(xs: &mut [f64]) -> &mut [u8] {
    // SAFETY: as above, and every bit pattern is a valid f64, so any bytes written are too.
    unsafe { std::slice::from_raw_parts_mut(xs.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(xs)) }
}

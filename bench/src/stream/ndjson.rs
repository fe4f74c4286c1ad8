//! NDJSON: one JSON text per line, through serde_json or sonic-rs. The reader splits lines
//! with `read_until(b'\n')` into a reused buffer and parses each one from the slice (the
//! fast way for both libraries; serde_json's `StreamDeserializer` over a reader is slower).

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::marker::PhantomData;

use serde::Serialize;
use serde_json::Value;

use super::peer::{io_err, Item, Received, Record, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

pub trait JsonLib {
    const NAME: &'static str;
    const DOUBLES_API: &'static str;
    const RECORDS_API: &'static str;
    /// What a record line parses into: each library's own dynamic value.
    type Record: Record;
    /// Writes `v` and a newline.
    fn write_line<T: Serialize + ?Sized>(w: &mut LineWriter, v: &T) -> Result<(), Fail>;
    fn doubles(line: &[u8]) -> Result<Vec<f64>, Fail>;
    fn record(line: &[u8]) -> Result<Self::Record, Fail>;
}

pub struct LineWriter {
    w: BufWriter<Sink>,
    scratch: Vec<u8>,
}

pub struct SerdeJson;

impl JsonLib for SerdeJson {
    const NAME: &'static str = "ndjson (serde_json)";
    const DOUBLES_API: &'static str = "serde_json::to_writer + \\n / read_until + from_slice::<Vec<f64>>";
    const RECORDS_API: &'static str = "serde_json::to_writer + \\n / read_until + from_slice::<Value>";
    type Record = Value;

    fn write_line<T: Serialize + ?Sized>(w: &mut LineWriter, v: &T) -> Result<(), Fail> {
        serde_json::to_writer(&mut w.w, v).map_err(io_err)?;
        w.w.write_all(b"\n").map_err(io_err)
    }
    fn doubles(line: &[u8]) -> Result<Vec<f64>, Fail> {
        serde_json::from_slice(line).map_err(io_err)
    }
    fn record(line: &[u8]) -> Result<Value, Fail> {
        serde_json::from_slice(line).map_err(io_err)
    }
}

pub struct Sonic;

impl JsonLib for Sonic {
    const NAME: &'static str = "ndjson (sonic-rs)";
    const DOUBLES_API: &'static str =
        "sonic_rs::to_writer into a reused Vec + \\n, write_all / read_until + from_slice::<Vec<f64>>";
    const RECORDS_API: &'static str =
        "sonic_rs::to_writer(&serde_json::Value) into a reused Vec + \\n / read_until + from_slice::<sonic_rs::Value>";
    type Record = sonic_rs::Value;

    /// sonic-rs writes only to its `WriteExt` (a Vec here), not to any `io::Write`.
    fn write_line<T: Serialize + ?Sized>(w: &mut LineWriter, v: &T) -> Result<(), Fail> {
        w.scratch.clear();
        sonic_rs::to_writer(&mut w.scratch, v).map_err(io_err)?;
        w.scratch.push(b'\n');
        w.w.write_all(&w.scratch).map_err(io_err)
    }
    fn doubles(line: &[u8]) -> Result<Vec<f64>, Fail> {
        sonic_rs::from_slice(line).map_err(io_err)
    }
    fn record(line: &[u8]) -> Result<sonic_rs::Value, Fail> {
        sonic_rs::from_slice(line).map_err(io_err)
    }
}

/// NDJSON through library `L`, of items `I` (messages of doubles, or records).
pub struct Ndjson<L, I>(PhantomData<(L, I)>);

/// What differs between the two kinds of item: the API text and how a line is parsed.
pub trait NdjsonItem: Item + Serialize {
    const NOTE: &'static str;
    fn api<L: JsonLib>() -> &'static str;
    fn take<L: JsonLib>(line: &[u8], got: &mut Received<'_, Self>) -> Result<(), Fail>;
}

impl NdjsonItem for Vec<f64> {
    const NOTE: &'static str = "17 significant digits per double, as these are full-precision";
    fn api<L: JsonLib>() -> &'static str {
        L::DOUBLES_API
    }
    fn take<L: JsonLib>(line: &[u8], got: &mut Received<'_, Self>) -> Result<(), Fail> {
        got.take(&L::doubles(line)?);
        Ok(())
    }
}

impl NdjsonItem for Value {
    const NOTE: &'static str = "";
    fn api<L: JsonLib>() -> &'static str {
        L::RECORDS_API
    }
    fn take<L: JsonLib>(line: &[u8], got: &mut Received<'_, Self>) -> Result<(), Fail> {
        got.take(&L::record(line)?);
        Ok(())
    }
}

impl<L: JsonLib, I: NdjsonItem + Clone> StreamPeer for Ndjson<L, I> {
    const NAME: &'static str = L::NAME;
    const API: &'static str = "";
    type Item = I;
    type Msg = I;
    type Writer = LineWriter;

    fn info() -> crate::harness::PeerInfo {
        crate::harness::PeerInfo::new(L::NAME, I::api::<L>(), I::NOTE)
    }

    fn message(item: &I) -> I {
        item.clone()
    }

    fn start(sink: Sink) -> Result<LineWriter, Fail> {
        Ok(LineWriter { w: BufWriter::with_capacity(BUFFER, sink), scratch: Vec::new() })
    }

    fn write(w: &mut LineWriter, msg: &I) -> Result<(), Fail> {
        L::write_line(w, msg)
    }

    fn flush(w: &mut LineWriter) -> Result<(), Fail> {
        w.w.flush().map_err(io_err)
    }

    fn finish(mut w: LineWriter) -> Result<(), Fail> {
        w.w.flush().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, I>) -> Result<(), Fail> {
        let mut r = BufReader::with_capacity(BUFFER, source);
        let mut line = Vec::new();
        for _ in 0..count {
            line.clear();
            if r.read_until(b'\n', &mut line).map_err(io_err)? == 0 {
                return Err(Fail::Error("stream ended early".into()));
            }
            I::take::<L>(&line, got)?;
        }
        Ok(())
    }
}

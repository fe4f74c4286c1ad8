//! prost, length-delimited: `encode_length_delimited` into a reused buffer (prost writes
//! to a `BufMut`, not an `io::Write`), then `write_all`; the reader takes the varint
//! length, the body into a reused buffer, and `Doubles::decode` (a packed repeated double).

use std::io::{BufReader, BufWriter, Read, Write};

use prost::Message;

use super::peer::{io_err, Received, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/stream.rs"));
}

pub struct Prost;

pub struct ProstWriter {
    w: BufWriter<Sink>,
    scratch: Vec<u8>,
}

/// A protobuf varint off a buffered reader (prost's own `decode_length_delimiter` wants
/// a `Buf` holding all of it, which a socket's next bytes need not be).
fn read_varint(r: &mut impl Read) -> std::io::Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let mut b = [0u8; 1];
        r.read_exact(&mut b)?;
        value |= u64::from(b[0] & 0x7f) << shift;
        if b[0] < 0x80 {
            return Ok(value);
        }
    }
    Err(std::io::Error::other("varint longer than 10 bytes"))
}

impl StreamPeer for Prost {
    const NAME: &'static str = "prost";
    const API: &'static str = "Message::encode_length_delimited / varint + Doubles::decode";
    const NOTE: &'static str = "schema proto/stream.proto: message Doubles { repeated double v = 1; } (packed)";
    type Item = Vec<f64>;
    type Msg = pb::Doubles;
    type Writer = ProstWriter;

    fn message(item: &Vec<f64>) -> pb::Doubles {
        pb::Doubles { v: item.clone() }
    }

    fn start(sink: Sink) -> Result<ProstWriter, Fail> {
        Ok(ProstWriter { w: BufWriter::with_capacity(BUFFER, sink), scratch: Vec::new() })
    }

    fn write(w: &mut ProstWriter, msg: &pb::Doubles) -> Result<(), Fail> {
        w.scratch.clear();
        msg.encode_length_delimited(&mut w.scratch).map_err(io_err)?;
        w.w.write_all(&w.scratch).map_err(io_err)
    }

    fn flush(w: &mut ProstWriter) -> Result<(), Fail> {
        w.w.flush().map_err(io_err)
    }

    fn finish(mut w: ProstWriter) -> Result<(), Fail> {
        w.w.flush().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        let mut r = BufReader::with_capacity(BUFFER, source);
        let mut body = Vec::new();
        for _ in 0..count {
            let len = read_varint(&mut r).map_err(io_err)? as usize;
            body.resize(len, 0);
            r.read_exact(&mut body).map_err(io_err)?;
            let msg = pb::Doubles::decode(&body[..]).map_err(io_err)?;
            got.take(&msg.v);
        }
        Ok(())
    }
}

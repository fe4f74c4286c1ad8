//! flexbuffers: a buffer is read from its end, so a stream needs framing: a u32 length,
//! then the buffer from a reused `FlexbufferSerializer`; read back with `from_slice`.

use std::io::{BufReader, BufWriter, Read, Write};

use flexbuffers::FlexbufferSerializer;
use serde::Serialize;

use super::peer::{io_err, Received, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

pub struct Flexbuffers;

pub struct FlexWriter {
    w: BufWriter<Sink>,
    ser: FlexbufferSerializer,
}

impl StreamPeer for Flexbuffers {
    const NAME: &'static str = "flexbuffers";
    const API: &'static str = "FlexbufferSerializer (reset per message) + u32 length / from_slice::<Vec<f64>>";
    const NOTE: &'static str = "length-prefixed: a flexbuffer's root is at its end";
    type Item = Vec<f64>;
    type Msg = Vec<f64>;
    type Writer = FlexWriter;

    fn message(item: &Vec<f64>) -> Vec<f64> {
        item.clone()
    }

    fn start(sink: Sink) -> Result<FlexWriter, Fail> {
        Ok(FlexWriter { w: BufWriter::with_capacity(BUFFER, sink), ser: FlexbufferSerializer::new() })
    }

    fn write(w: &mut FlexWriter, msg: &Vec<f64>) -> Result<(), Fail> {
        w.ser.reset();
        msg.serialize(&mut w.ser).map_err(io_err)?;
        let bytes = w.ser.view();
        w.w.write_all(&(bytes.len() as u32).to_le_bytes()).map_err(io_err)?;
        w.w.write_all(bytes).map_err(io_err)
    }

    fn flush(w: &mut FlexWriter) -> Result<(), Fail> {
        w.w.flush().map_err(io_err)
    }

    fn finish(mut w: FlexWriter) -> Result<(), Fail> {
        w.w.flush().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        let mut r = BufReader::with_capacity(BUFFER, source);
        let mut body = Vec::new();
        for _ in 0..count {
            let mut len = [0u8; 4];
            r.read_exact(&mut len).map_err(io_err)?;
            body.resize(u32::from_le_bytes(len) as usize, 0);
            r.read_exact(&mut body).map_err(io_err)?;
            let v: Vec<f64> = flexbuffers::from_slice(&body).map_err(io_err)?;
            got.take(&v);
        }
        Ok(())
    }
}

//! rmp-serde: MessagePack values are self-delimiting, so the stream is the values back to
//! back; one `Deserializer` over the buffered source reads them in turn.

use std::io::{BufReader, BufWriter, Write};

use serde::Deserialize;
use serde_json::Value;

use super::peer::{io_err, Received, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

pub struct MsgPack;

impl StreamPeer for MsgPack {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str = "encode::write(&[f64]) / Vec::<f64>::deserialize(&mut Deserializer::new(reader))";
    const NOTE: &'static str = "an array of float 64 (9 bytes per double)";
    type Item = Vec<f64>;
    type Msg = Vec<f64>;
    type Writer = BufWriter<Sink>;

    fn message(item: &Vec<f64>) -> Vec<f64> {
        item.clone()
    }

    fn start(sink: Sink) -> Result<BufWriter<Sink>, Fail> {
        Ok(BufWriter::with_capacity(BUFFER, sink))
    }

    fn write(w: &mut BufWriter<Sink>, msg: &Vec<f64>) -> Result<(), Fail> {
        rmp_serde::encode::write(w, msg.as_slice()).map_err(io_err)
    }

    fn flush(w: &mut BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(mut w: BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        let mut de = rmp_serde::Deserializer::new(BufReader::with_capacity(BUFFER, source));
        for _ in 0..count {
            let v = Vec::<f64>::deserialize(&mut de).map_err(io_err)?;
            got.take(&v);
        }
        Ok(())
    }
}

/// The corpus stream: each record a MessagePack map, decoded to a serde_json::Value.
pub struct MsgPackRecords;

impl StreamPeer for MsgPackRecords {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str = "encode::write(&serde_json::Value) / Value::deserialize(&mut Deserializer::new(reader))";
    type Item = Value;
    type Msg = Value;
    type Writer = BufWriter<Sink>;

    fn message(item: &Value) -> Value {
        item.clone()
    }

    fn start(sink: Sink) -> Result<BufWriter<Sink>, Fail> {
        Ok(BufWriter::with_capacity(BUFFER, sink))
    }

    fn write(w: &mut BufWriter<Sink>, msg: &Value) -> Result<(), Fail> {
        rmp_serde::encode::write(w, msg).map_err(io_err)
    }

    fn flush(w: &mut BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(mut w: BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Value>) -> Result<(), Fail> {
        let mut de = rmp_serde::Deserializer::new(BufReader::with_capacity(BUFFER, source));
        for _ in 0..count {
            let v = Value::deserialize(&mut de).map_err(io_err)?;
            got.take(&v);
        }
        Ok(())
    }
}

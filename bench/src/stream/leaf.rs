//! Leafwire's stream API (`leafwire::stream`): `StreamWriter::write_slice(&msg)` (its
//! fastest public call for a slice of numbers: one copy) or `write(&msg)` (serde) frames
//! one message through its own buffer of `BUFFER` bytes (so the sink is the bare socket or
//! file, not a `BufWriter`); `StreamReader::next_slice` hands out each message's doubles
//! (in place, or copied from a vector frame of at most 64 bytes), and
//! `StreamReader::next_frame` lends each frame, read as a typed array or through serde.

use leafwire::stream::{StreamOptions, StreamReader, StreamWriter};
use leafwire::{ElementType, Encoder};
use serde_json::Value;

use super::peer::{f64_bytes, io_err, Received, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

fn start(sink: Sink) -> Result<StreamWriter<Sink>, Fail> {
    StreamWriter::with_options(sink, StreamOptions { buffer_size: BUFFER, ..StreamOptions::default() }).map_err(io_err)
}

fn finish(mut w: StreamWriter<Sink>) -> Result<(), Fail> {
    w.flush().map_err(io_err)?;
    w.into_inner().map(drop).map_err(io_err)
}

/// Each frame through `f`, `count` of them.
fn frames(
    source: Source,
    count: u64,
    mut f: impl FnMut(leafwire::stream::Frame<'_>) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let mut r = StreamReader::new(source).map_err(io_err)?;
    for _ in 0..count {
        let frame = r.next_frame().ok_or_else(|| Fail::Error("stream ended early".into()))?.map_err(io_err)?;
        f(frame)?;
    }
    Ok(())
}

pub struct Leafwire;

impl StreamPeer for Leafwire {
    const NAME: &'static str = "leafwire";
    const API: &'static str =
        "stream::StreamWriter::write_slice(&[f64]) / StreamReader::next_slice::<f64>() (in place, or copied from a vector frame)";
    type Item = Vec<f64>;
    type Msg = Vec<f64>;
    type Writer = StreamWriter<Sink>;

    fn message(item: &Vec<f64>) -> Vec<f64> {
        item.clone()
    }

    fn start(sink: Sink) -> Result<Self::Writer, Fail> {
        start(sink)
    }

    fn write(w: &mut Self::Writer, msg: &Vec<f64>) -> Result<(), Fail> {
        w.write_slice(msg.as_slice()).map_err(io_err)
    }

    fn flush(w: &mut Self::Writer) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(w: Self::Writer) -> Result<(), Fail> {
        finish(w)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        let mut r = StreamReader::new(source).map_err(io_err)?;
        for _ in 0..count {
            let xs = r.next_slice::<f64>().ok_or_else(|| Fail::Error("stream ended early".into()))?.map_err(io_err)?;
            got.take(xs);
        }
        Ok(())
    }
}

/// The same stream written without serde: `Encoder::typed` of the doubles' little-endian
/// bytes, one encoder per message (the API gives no way to reuse one), `write_encoded`.
pub struct LeafwireEncoder;

impl StreamPeer for LeafwireEncoder {
    const NAME: &'static str = "leafwire (Encoder)";
    const API: &'static str =
        "stream::StreamWriter::write_encoded(Encoder::typed(F64, [n], bytes)) / next_frame, root().as_slice::<f64>()";
    type Item = Vec<f64>;
    type Msg = Vec<f64>;
    type Writer = StreamWriter<Sink>;

    fn message(item: &Vec<f64>) -> Vec<f64> {
        item.clone()
    }

    fn start(sink: Sink) -> Result<Self::Writer, Fail> {
        start(sink)
    }

    fn write(w: &mut Self::Writer, msg: &Vec<f64>) -> Result<(), Fail> {
        let mut e = Encoder::new(leafwire::DEFAULT_MAX_DEPTH);
        let bytes: std::borrow::Cow<[u8]> = if cfg!(target_endian = "little") {
            f64_bytes(msg).into()
        } else {
            msg.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>().into()
        };
        e.typed(ElementType::F64, &[msg.len()], &bytes, None).map_err(io_err)?;
        w.write_encoded(e).map_err(io_err)
    }

    fn flush(w: &mut Self::Writer) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(w: Self::Writer) -> Result<(), Fail> {
        finish(w)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        // Frames, as a reader that wants the whole message would take them.
        frames(source, count, |frame| {
            got.take(frame.root().as_slice::<f64>().map_err(io_err)?);
            Ok(())
        })
    }
}

/// The same stream, decoded the way the serde peers decode: into a fresh `Vec<f64>`.
pub struct LeafwireSerde;

impl StreamPeer for LeafwireSerde {
    const NAME: &'static str = "leafwire (serde)";
    const API: &'static str =
        "stream::StreamWriter::write(&[f64]) / StreamReader::next_frame, Frame::deserialize::<Vec<f64>>";
    type Item = Vec<f64>;
    type Msg = Vec<f64>;
    type Writer = StreamWriter<Sink>;

    fn message(item: &Vec<f64>) -> Vec<f64> {
        item.clone()
    }

    fn start(sink: Sink) -> Result<Self::Writer, Fail> {
        start(sink)
    }

    fn write(w: &mut Self::Writer, msg: &Vec<f64>) -> Result<(), Fail> {
        w.write(msg.as_slice()).map_err(io_err)
    }

    fn flush(w: &mut Self::Writer) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(w: Self::Writer) -> Result<(), Fail> {
        finish(w)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        frames(source, count, |frame| {
            got.take(&frame.deserialize::<Vec<f64>>().map_err(io_err)?);
            Ok(())
        })
    }
}

/// The corpus stream: `write(&serde_json::Value)` per record; read back into Leafwire's
/// own tree borrowing the reader's buffer (`Frame::to_value_ref`), as sonic-rs reads into
/// its own `Value`.
pub struct LeafwireRecords;

impl StreamPeer for LeafwireRecords {
    const NAME: &'static str = "leafwire";
    const API: &'static str = "stream::StreamWriter::write(&serde_json::Value) / Frame::to_value_ref(&arena) (leafwire::ValueRef, borrowing the reader's buffer; one Arena reset per message)";
    type Item = Value;
    type Msg = Value;
    type Writer = StreamWriter<Sink>;

    fn message(item: &Value) -> Value {
        item.clone()
    }

    fn start(sink: Sink) -> Result<Self::Writer, Fail> {
        start(sink)
    }

    fn write(w: &mut Self::Writer, msg: &Value) -> Result<(), Fail> {
        w.write(msg).map_err(io_err)
    }

    fn flush(w: &mut Self::Writer) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(w: Self::Writer) -> Result<(), Fail> {
        finish(w)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Value>) -> Result<(), Fail> {
        // One arena for the stream, reset per message: the reader's memory is reused.
        let mut arena = leafwire::Arena::new();
        frames(source, count, |frame| {
            arena.reset();
            got.take(&frame.to_value_ref(&arena).map_err(io_err)?);
            Ok(())
        })
    }
}

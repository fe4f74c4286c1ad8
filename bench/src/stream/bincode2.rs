//! bincode 2, its own `Encode`/`Decode` (no serde layer) with the standard configuration:
//! a sequence is its varint length then the elements, so a stream of values needs no
//! further framing. The reader is bincode's `Reader` impl of `BufReader`, which peeks into
//! the buffer (`decode_from_std_read` would wrap it as a plain `io::Read`).

use std::io::{BufReader, BufWriter, Write};

use bincode::config::{standard, Configuration};

use super::peer::{io_err, Received, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

const CONFIG: Configuration = standard();

pub struct Bincode;

impl StreamPeer for Bincode {
    const NAME: &'static str = "bincode";
    const API: &'static str =
        "encode_into_std_write(&[f64]) / decode_from_reader::<Vec<f64>>(&mut BufReader) (config::standard)";
    const NOTE: &'static str = "self-delimiting: varint length, then 8 bytes per double";
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
        bincode::encode_into_std_write(msg.as_slice(), w, CONFIG).map(drop).map_err(io_err)
    }

    fn flush(w: &mut BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(mut w: BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        let mut r = BufReader::with_capacity(BUFFER, source);
        for _ in 0..count {
            let v: Vec<f64> = bincode::decode_from_reader(&mut r, CONFIG).map_err(io_err)?;
            got.take(&v);
        }
        Ok(())
    }
}

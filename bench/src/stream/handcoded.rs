//! The physical limit: a u32 count and the raw little-endian doubles, through the same
//! `BufWriter` of `BUFFER` bytes; the reader reads each message into one reused buffer. No format,
//! one copy each way.

use std::io::{BufReader, BufWriter, Read, Write};

use super::peer::{f64_bytes, f64_bytes_mut, io_err, Received, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

pub struct HandCoded;

impl StreamPeer for HandCoded {
    const NAME: &'static str = "hand-coded";
    const API: &'static str = "write_all(u32 count), write_all(the doubles' bytes); read_exact into a reused Vec<f64>";
    const NOTE: &'static str = "no format: the physical limit of this buffer and flush policy";
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
        w.write_all(&(msg.len() as u32).to_le_bytes()).map_err(io_err)?;
        if cfg!(target_endian = "little") {
            w.write_all(f64_bytes(msg)).map_err(io_err)
        } else {
            msg.iter().try_for_each(|x| w.write_all(&x.to_le_bytes())).map_err(io_err)
        }
    }

    fn flush(w: &mut BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn finish(mut w: BufWriter<Sink>) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        let mut r = BufReader::with_capacity(BUFFER, source);
        let mut buf: Vec<f64> = Vec::new();
        for _ in 0..count {
            let mut len = [0u8; 4];
            r.read_exact(&mut len).map_err(io_err)?;
            buf.resize(u32::from_le_bytes(len) as usize, 0.0);
            r.read_exact(f64_bytes_mut(&mut buf)).map_err(io_err)?;
            if cfg!(target_endian = "big") {
                buf.iter_mut().for_each(|x| *x = f64::from_bits(u64::from_le(x.to_bits())));
            }
            got.take(&buf);
        }
        Ok(())
    }
}

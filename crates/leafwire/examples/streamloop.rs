//! Messages of n doubles through a `StreamWriter` into memory and back, against a
//! hand-coded writer (u32 length + raw doubles, same buffer size): ns per message, for
//! profiling the stream's per-message path (`valgrind --tool=callgrind` on it).
//!
//! `cargo run --release -p leafwire --example streamloop -- [n] [messages]`

use std::hint::black_box;
use std::io::{Read, Write};
use std::time::Instant;

use leafwire::stream::{SliceReader, StreamWriter};

fn main() -> leafwire::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let n = args.first().copied().unwrap_or(1);
    let count = args.get(1).copied().unwrap_or(1_000_000);
    let message: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 + 0.25).collect();
    for _ in 0..3 {
        let t = Instant::now();
        // Sinks that discard: the loop measures the writers, not page faults of a sink.
        let mut hand = std::io::BufWriter::with_capacity(64 << 10, std::io::sink());
        for _ in 0..count {
            hand.write_all(&((n * 8) as u32).to_le_bytes()).unwrap();
            hand.write_all(bytemuck_bytes(black_box(&message))).unwrap();
        }
        hand.into_inner().unwrap();
        let hand_ns = t.elapsed().as_nanos() as f64 / count as f64;

        let t = Instant::now();
        let mut w = StreamWriter::new(std::io::sink())?;
        for _ in 0..count {
            w.write(black_box(&message))?;
        }
        w.into_inner()?;
        let write_ns = t.elapsed().as_nanos() as f64 / count as f64;

        let t = Instant::now();
        let mut w = StreamWriter::new(std::io::sink())?;
        for _ in 0..count {
            w.write_slice(black_box(&message[..]))?;
        }
        w.into_inner()?;
        let slice_ns = t.elapsed().as_nanos() as f64 / count as f64;

        // The stream to read back, written once more into memory; both ways agree.
        let mut w = StreamWriter::new(Vec::new())?;
        let mut s = StreamWriter::new(Vec::new())?;
        for _ in 0..count {
            w.write(&message)?;
            s.write_slice(&message[..])?;
        }
        let bytes = w.into_inner()?;
        assert!(s.into_inner()? == bytes, "write_slice writes the bytes of write");

        let t = Instant::now();
        let mut r = SliceReader::new(&bytes)?;
        let mut sum = 0.0;
        while let Some(f) = r.next_frame() {
            let f = f?;
            sum += match n {
                1 => f.root().as_slice::<f64>().map(|s| s[0]).or_else(|_| f.root().as_f64())?,
                _ => f.root().as_slice::<f64>()?.iter().sum::<f64>(),
            };
        }
        let read_ns = t.elapsed().as_nanos() as f64 / count as f64;

        // The same through the reader over `Read` (what a socket gets).
        let t = Instant::now();
        let mut r = leafwire::stream::StreamReader::new(&bytes[..])?;
        let mut total = 0usize;
        while let Some(f) = r.next_frame() {
            total += f?.root().as_slice::<f64>()?.len();
        }
        let reader_ns = t.elapsed().as_nanos() as f64 / count as f64;
        black_box(total);

        // The hand-coded reader, as the bench's: a BufReader, read_exact of the count, then
        // of the doubles into one reused buffer.
        let mut hand = Vec::with_capacity(count * (4 + 8 * n));
        for _ in 0..count {
            hand.extend_from_slice(&(n as u32).to_le_bytes());
            hand.extend_from_slice(bytemuck_bytes(&message));
        }
        let t = Instant::now();
        let mut r = std::io::BufReader::with_capacity(64 << 10, &hand[..]);
        let mut buf: Vec<f64> = Vec::new();
        let mut total = 0usize;
        for _ in 0..count {
            let mut len = [0u8; 4];
            r.read_exact(&mut len).unwrap();
            buf.resize(u32::from_le_bytes(len) as usize, 0.0);
            r.read_exact(bytemuck_bytes_mut(&mut buf)).unwrap();
            total += black_box(&buf).len();
        }
        let hand_read_ns = t.elapsed().as_nanos() as f64 / count as f64;
        black_box(total);
        black_box(sum);
        println!(
            "n={n}: hand-coded write {hand_ns:.1} ns/msg ({} B), leafwire write {write_ns:.1} ns/msg ({} B, {:.2}x), write_slice {slice_ns:.1} ({:.2}x), read and sum {read_ns:.1} ns/msg, StreamReader {reader_ns:.1} ns/msg ({:.2}x hand-coded read {hand_read_ns:.1})",
            count * (4 + 8 * n),
            bytes.len(),
            write_ns / hand_ns,
            slice_ns / hand_ns,
            reader_ns / hand_read_ns
        );
    }
    Ok(())
}

fn bytemuck_bytes(xs: &[f64]) -> &[u8] {
    // SAFETY: f64 has no padding and any byte is a valid u8; the length is the slice's.
    unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), std::mem::size_of_val(xs)) }
}

fn bytemuck_bytes_mut(xs: &mut [f64]) -> &mut [u8] {
    // SAFETY: as above; any bytes are a valid f64.
    unsafe { std::slice::from_raw_parts_mut(xs.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(xs)) }
}

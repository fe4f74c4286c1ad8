//! Instruction counts per message of the stream's writer and readers against hand-coded
//! I/O (a u32 count and the raw doubles through a 64 KiB `BufWriter`/`BufReader`), one
//! phase per run, for callgrind:
//!
//! ```text
//! for p in none hand-write write-slice hand-read stream-next stream-read stream-slice slice-read; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/streamcost $p 1 100000 2>&1 | grep refs
//! done
//! ```
//!
//! (a phase's count less `none`'s, divided by the messages, is the cost of one message).
//! Every phase builds the same inputs, so `none` is the baseline of all.

use std::hint::black_box;
use std::io::{BufReader, BufWriter, Read, Write};

use leafwire::stream::{SliceReader, StreamReader, StreamWriter};

fn main() -> leafwire::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let phase = args.first().map(String::as_str).unwrap_or("none");
    let n: usize = args.get(1).map_or(1, |a| a.parse().expect("n"));
    let count: usize = args.get(2).map_or(100_000, |a| a.parse().expect("count"));
    let message: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 + 0.25).collect();
    let data: &[u8] = bytemuck::cast_slice(&message);

    let mut stream = StreamWriter::new(Vec::new())?;
    let mut hand = Vec::with_capacity(count * (4 + data.len()));
    for _ in 0..count {
        stream.write_slice(&message[..])?;
        hand.extend_from_slice(&(n as u32).to_le_bytes());
        hand.extend_from_slice(data);
    }
    let stream = stream.into_inner()?;

    let mut total = 0.0;
    match phase {
        "none" => {}
        "hand-write" => {
            let mut w = BufWriter::with_capacity(64 << 10, std::io::sink());
            for _ in 0..count {
                w.write_all(&(n as u32).to_le_bytes())?;
                w.write_all(bytemuck::cast_slice(black_box(&message[..])))?;
            }
            w.flush()?;
        }
        "write-slice" => {
            let mut w = StreamWriter::new(std::io::sink())?;
            for _ in 0..count {
                w.write_slice(black_box(&message[..]))?;
            }
            w.into_inner()?;
        }
        "hand-read" => {
            let mut r = BufReader::with_capacity(64 << 10, &hand[..]);
            let mut buf: Vec<f64> = Vec::new();
            for _ in 0..count {
                let mut len = [0u8; 4];
                r.read_exact(&mut len)?;
                buf.resize(u32::from_le_bytes(len) as usize, 0.0);
                r.read_exact(bytemuck::cast_slice_mut(&mut buf))?;
                total += black_box(&buf)[0];
            }
        }
        "stream-read" => {
            let mut r = StreamReader::new(&stream[..])?;
            while let Some(frame) = r.next_frame() {
                total += black_box(frame?.root().as_slice::<f64>()?)[0];
            }
        }
        "stream-next" => {
            // The frames alone, not their numbers: what `next_frame` costs by itself.
            let mut r = StreamReader::new(&stream[..])?;
            while let Some(frame) = r.next_frame() {
                total += black_box(frame?.offset()) as f64;
            }
        }
        "stream-slice" => {
            let mut r = StreamReader::new(&stream[..])?;
            while let Some(xs) = r.next_slice::<f64>() {
                total += black_box(xs?)[0];
            }
        }
        "slice-read" => {
            let mut r = SliceReader::new(&stream)?;
            while let Some(frame) = r.next_frame() {
                total += black_box(frame?.root().as_slice::<f64>()?)[0];
            }
        }
        other => panic!("unknown phase {other}"),
    }
    black_box(total);
    Ok(())
}

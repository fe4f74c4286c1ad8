//! A stream of JSON records (one `serde_json::Value` per message, from a JSON array file)
//! through `StreamWriter::write` and back with `Frame::deserialize`: ns per record, for
//! profiling the stream's general path.
//!
//! `cargo run --release -p leafwire --example recordloop -- FILE.json [rounds]`

use std::hint::black_box;
use std::time::Instant;

use leafwire::stream::{SliceReader, StreamWriter};

fn main() -> leafwire::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let text = std::fs::read(args.first().expect("a JSON file holding an array of records"))?;
    let rounds: usize = args.get(1).map_or(20, |r| r.parse().expect("a number"));
    let json: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| leafwire::Error::from(std::io::Error::other(e)))?;
    let records = json.as_array().cloned().unwrap_or_else(|| vec![json]);
    let lines: usize = records.iter().map(|r| serde_json::to_vec(r).unwrap().len() + 1).sum();
    for _ in 0..3 {
        let t = Instant::now();
        let mut bytes = Vec::new();
        for _ in 0..rounds {
            let mut w = StreamWriter::new(Vec::with_capacity(lines))?;
            for r in &records {
                w.write(black_box(r))?;
            }
            bytes = w.into_inner()?;
        }
        let write = t.elapsed().as_secs_f64() / rounds as f64;
        let t = Instant::now();
        for _ in 0..rounds {
            let mut r = SliceReader::new(&bytes)?;
            while let Some(f) = r.next_frame() {
                black_box(f?.deserialize::<serde_json::Value>()?);
            }
        }
        let read = t.elapsed().as_secs_f64() / rounds as f64;
        println!(
            "{} records, {} B of JSON lines, {} B of stream: write {:.0} MB/s, read {:.0} MB/s (of JSON lines)",
            records.len(),
            lines,
            bytes.len(),
            lines as f64 / write / 1e6,
            lines as f64 / read / 1e6
        );
    }
    Ok(())
}

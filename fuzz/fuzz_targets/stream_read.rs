//! Arbitrary bytes as a Leafwire stream (spec §14), through both readers: the slice reader
//! and the reader over `Read`, fed in small reads with a small buffer so that every refill
//! path runs. Neither may panic; both must yield the same frames (compared as decoded
//! values) and stop at the same error; every frame is walked lazily as a document is, and
//! what decodes must re-encode into a stream that reads back the same.

#![no_main]

use std::io::Read;

use leafwire::stream::{SliceReader, StreamOptions, StreamReader, StreamWriter};
use libfuzzer_sys::fuzz_target;

mod common;
use common::{same, Walk};

/// Hands out the input in reads of 1 to 16 bytes (the sizes cycle with the input).
struct Trickle<'a> {
    bytes: &'a [u8],
    turn: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.turn += 1;
        let n = (1 + self.turn % 16).min(out.len()).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// Small limits, so that the fuzzer meets them.
fn options() -> StreamOptions {
    StreamOptions { buffer_size: 32, max_frame: 1 << 16, max_keys: 64, max_key_bytes: 4096, ..StreamOptions::default() }
}

fuzz_target!(|data: &[u8]| common::guard(|| check(data)));

fn check(data: &[u8]) {
    let Ok(mut slice) = SliceReader::with_options(data, options()) else {
        assert!(
            StreamReader::with_options(Trickle { bytes: data, turn: 0 }, options()).is_err(),
            "the readers disagree on the header"
        );
        return;
    };
    let mut from_slice = Vec::new();
    let mut walk = Walk::new(20_000);
    while let Some(frame) = slice.next_frame() {
        match frame {
            Ok(frame) => {
                walk.node(&frame.root(), 0);
                from_slice.push(frame.to_value().map_err(|e| e.category()));
            }
            Err(e) => {
                from_slice.push(Err(e.category()));
                // Skipping goes on at the next frame when the length was readable.
                if !slice.skip() {
                    break;
                }
            }
        }
        if from_slice.len() > 2000 {
            return;
        }
    }
    let mut reader = StreamReader::with_options(Trickle { bytes: data, turn: 0 }, options())
        .expect("the slice reader read the header");
    let mut from_read = Vec::new();
    while let Some(frame) = reader.next_frame() {
        match frame {
            Ok(frame) => from_read.push(frame.to_value().map_err(|e| e.category())),
            Err(e) => {
                from_read.push(Err(e.category()));
                if !reader.skip() {
                    break;
                }
            }
        }
    }
    assert_eq!(from_slice.len(), from_read.len(), "the readers yield different numbers of frames");
    // `next_slice` agrees with `next_frame` + `as_slice`, frame by frame.
    let (mut frames, mut slices) =
        (SliceReader::with_options(data, options()).unwrap(), SliceReader::with_options(data, options()).unwrap());
    for _ in 0..from_slice.len() {
        let expected = frames.next_frame().map(|f| f.and_then(|f| f.root().as_slice::<f64>().map(<[f64]>::to_vec)));
        let got = slices.next_slice::<f64>().map(|s| s.map(<[f64]>::to_vec));
        match (&expected, &got) {
            (Some(Ok(a)), Some(Ok(b))) => assert!(
                a.iter().map(|x| x.to_bits()).eq(b.iter().map(|x| x.to_bits())),
                "next_slice reads other numbers"
            ),
            (Some(Err(a)), Some(Err(b))) => assert_eq!(a.category(), b.category(), "next_slice fails differently"),
            (None, None) => break,
            _ => panic!("next_slice and next_frame disagree: {expected:?} / {got:?}"),
        }
        if matches!(expected, Some(Err(_))) {
            assert_eq!(frames.skip(), slices.skip(), "the readers stop differently");
        }
    }
    let mut messages = Vec::new();
    for (a, b) in from_slice.iter().zip(&from_read) {
        match (a, b) {
            (Ok(x), Ok(y)) => {
                assert!(same(x, y), "the readers decode a frame differently");
                messages.push(x.clone());
            }
            (Err(x), Err(y)) => assert_eq!(x, y, "the readers fail differently"),
            _ => panic!("one reader decodes a frame the other refuses: {a:?} / {b:?}"),
        }
    }
    // What decoded is written again and reads back the same.
    let mut w = StreamWriter::new(Vec::new()).unwrap();
    let mut written = Vec::new();
    for m in messages {
        if w.write_value(&m).is_ok() {
            written.push(m);
        }
    }
    let bytes = w.into_inner().unwrap();
    let mut again = SliceReader::new(&bytes).unwrap();
    for m in &written {
        let back = again
            .next_frame()
            .expect("a frame per message")
            .expect("the writer's frames read")
            .to_value()
            .expect("and decode");
        assert!(same(m, &back), "a message changed through the writer");
    }
    assert!(again.next_frame().is_none());
}

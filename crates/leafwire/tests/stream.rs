//! Streams (spec §14): messages written with `StreamWriter` read back equal through both
//! readers, whatever the read sizes; torn, damaged and hostile streams give typed errors at
//! stream offsets; frames are small.

use std::io::Read;

use leafwire::stream::{SliceReader, StreamOptions, StreamReader, StreamWriter};
use leafwire::{Category, Value};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Tick {
    symbol: String,
    price: f64,
    size: u32,
    tags: Vec<String>,
    book: Vec<(f64, f64)>,
}

fn tick(i: usize) -> Tick {
    Tick {
        symbol: format!("S{}", i % 7),
        price: 100.0 + i as f64 / 8.0,
        size: i as u32 * 3,
        tags: (0..i % 3).map(|t| format!("t{t}")).collect(),
        book: (0..i % 5).map(|k| (k as f64, -(k as f64))).collect(),
    }
}

/// JSON messages of every shape: scalars, strings, typed arrays, nested containers, many keys.
fn json_messages() -> Vec<String> {
    let mut m: Vec<String> = [
        "null",
        "true",
        "false",
        "0",
        "-1",
        "300",
        "-70000",
        "4294967296",
        "18446744073709551615",
        "1.5",
        "-0.0",
        "123456789012345678901234567890",
        r#""""#,
        r#""hello""#,
        "[]",
        "{}",
        "[1,2,3]",
        "[1.5,2.5]",
        "[1,2.5]",
        "[[1,2],[3,4]]",
        r#"{"a":1}"#,
        r#"{"a":{"b":[1,"x",null,{"c":true}]}}"#,
        r#"[{"a":1},{"b":2},{"a":3}]"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let wide: Vec<String> = (0..300).map(|i| format!(r#""k{i}":{i}"#)).collect();
    m.push(format!("{{{}}}", wide.join(",")));
    m.push(format!(r#"{{"s":"{}"}}"#, "x".repeat(200)));
    m.push(format!("[{}]", (0..5000).map(|i| (i as f64 * 0.25).to_string()).collect::<Vec<_>>().join(",")));
    m
}

/// A `Read` that hands out at most `chunk` bytes a call: every refill boundary is crossed.
struct Trickle<'a> {
    bytes: &'a [u8],
    chunk: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(out.len()).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

fn write_json_stream(messages: &[String], options: StreamOptions) -> Vec<u8> {
    let mut w = StreamWriter::with_options(Vec::new(), options).unwrap();
    for m in messages {
        w.write_json(m.as_bytes()).unwrap();
    }
    w.into_inner().unwrap()
}

fn expected(messages: &[String]) -> Vec<Value> {
    messages.iter().map(|m| leafwire::decode(&leafwire::json::from_json(m.as_bytes()).unwrap()).unwrap()).collect()
}

fn slice_values(bytes: &[u8]) -> Vec<Value> {
    let mut r = SliceReader::new(bytes).unwrap();
    let mut out = Vec::new();
    while let Some(f) = r.next_frame() {
        out.push(f.unwrap().to_value().unwrap());
    }
    out
}

#[test]
fn json_messages_read_back_through_both_readers() {
    let messages = json_messages();
    let want = expected(&messages);
    for crc in [false, true] {
        let bytes = write_json_stream(&messages, StreamOptions { crc, ..StreamOptions::default() });
        assert_eq!(slice_values(&bytes), want, "slice reader, crc {crc}");
        for chunk in [1, 3, 7, 64, 1 << 20] {
            for buffer_size in [16, 100, 1 << 16] {
                let source = Trickle { bytes: &bytes, chunk };
                let r = StreamReader::with_options(source, StreamOptions { buffer_size, ..StreamOptions::default() })
                    .unwrap();
                let got: Vec<Value> = r.values().map(|v| v.unwrap()).collect();
                assert_eq!(got, want, "chunk {chunk}, buffer {buffer_size}, crc {crc}");
            }
        }
    }
}

#[test]
fn serde_values_and_encoders_read_back() {
    let ticks: Vec<Tick> = (0..500).map(tick).collect();
    let mut w = StreamWriter::with_options(Vec::new(), StreamOptions { buffer_size: 1000, ..StreamOptions::default() })
        .unwrap();
    for t in &ticks {
        w.write(t).unwrap();
    }
    let value = leafwire::decode(&leafwire::to_vec(&ticks[3]).unwrap()).unwrap();
    w.write_value(&value).unwrap();
    let mut e = leafwire::Encoder::new(leafwire::DEFAULT_MAX_DEPTH);
    e.begin_object().unwrap();
    e.key("symbol").unwrap();
    e.string("enc").unwrap();
    e.end().unwrap();
    w.write_encoded(e).unwrap();
    let bytes = w.into_inner().unwrap();
    let r = StreamReader::new(&bytes[..]).unwrap();
    let mut got = r.values();
    for t in &ticks {
        let v = got.next().unwrap().unwrap();
        assert_eq!(v, leafwire::decode(&leafwire::to_vec(t).unwrap()).unwrap());
    }
    assert_eq!(got.next().unwrap().unwrap(), value);
    let enc = leafwire::decode(&leafwire::json::from_json(br#"{"symbol":"enc"}"#).unwrap()).unwrap();
    assert_eq!(got.next().unwrap().unwrap(), enc);
    assert!(got.next().is_none());
    let mut r = SliceReader::new(&bytes).unwrap();
    for t in &ticks {
        let back: Tick = r.next_frame().unwrap().unwrap().deserialize().unwrap();
        assert_eq!(&back, t);
    }
}

#[test]
fn frames_are_small() {
    let mut w = StreamWriter::new(Vec::new()).unwrap();
    w.write(&1.5f64).unwrap();
    assert_eq!(w.position(), 112 + 10, "one f64: 2 bytes beyond its 8");
    w.write(&7i32).unwrap();
    assert_eq!(w.position(), 122 + 3);
    w.write(&()).unwrap();
    assert_eq!(w.position(), 125 + 2);
    w.write(&[1.5f64]).unwrap();
    assert_eq!(w.position(), 127 + 10, "an array of one f64 (a vector frame): 2 bytes beyond its 8");
    w.write(&[0.5f64; 8]).unwrap();
    assert_eq!(w.position(), 137 + 66, "eight f64: 2 bytes beyond their 64");
    // Keys once: the second message of the same shape costs no key bytes.
    let p0 = w.position();
    w.write(&tick(4)).unwrap();
    let first = w.position() - p0;
    w.write(&tick(4)).unwrap();
    let second = w.position() - p0 - first;
    // The keys frame: 5 keys of 23 bytes, their lengths, count, kind and length.
    assert!(second + 25 < first, "keys are sent once: {first} then {second} bytes");
}

#[test]
fn short_numeric_messages_are_vector_frames_read_as_typed_arrays() {
    // Every element type, every count up to one past the 64-byte edge (spec §14.5).
    fn check<T: leafwire::Element + Serialize + PartialEq + std::fmt::Debug + Copy>(make: impl Fn(usize) -> T) {
        let size = std::mem::size_of::<T>();
        let messages: Vec<Vec<T>> = (1..=64 / size + 1).map(|n| (0..n).map(&make).collect()).collect();
        let mut w = StreamWriter::new(Vec::new()).unwrap();
        let mut sizes = Vec::new();
        for m in &messages {
            let before = w.position();
            w.write_slice(m).unwrap();
            sizes.push(w.position() - before);
        }
        for (m, &len) in messages.iter().zip(&sizes) {
            let bytes = m.len() * size;
            if bytes <= 64 {
                assert_eq!(len, 2 + bytes as u64, "{} elements of {size} bytes: length, kind, data", m.len());
            } else {
                assert!(len > 2 + bytes as u64, "past 64 bytes, an aligned typed-array frame");
            }
        }
        let bytes = w.into_inner().unwrap();
        for chunk in [1, 3, 4096] {
            let mut r = StreamReader::with_options(
                Trickle { bytes: &bytes, chunk },
                StreamOptions { buffer_size: 16, ..StreamOptions::default() },
            )
            .unwrap();
            for m in &messages {
                let frame = r.next_frame().unwrap().unwrap();
                assert_eq!(frame.root().kind(), leafwire::Kind::TypedArray);
                assert_eq!(frame.root().as_slice::<T>().unwrap(), &m[..]);
                assert_eq!(
                    frame.pointer("/0").unwrap().to_value().unwrap(),
                    frame.root().at(0).unwrap().to_value().unwrap()
                );
                assert!(frame.pointer(&format!("/{}", m.len())).is_err());
            }
            assert!(r.next_frame().is_none());
        }
        let mut r = SliceReader::new(&bytes).unwrap();
        for m in &messages {
            let frame = r.next_frame().unwrap().unwrap();
            assert_eq!(frame.root().as_slice::<T>().unwrap(), &m[..]);
            // The general writer of a `Value` agrees with the slice writer.
            let mut one = StreamWriter::new(Vec::new()).unwrap();
            one.write_value(&frame.to_value().unwrap()).unwrap();
            let mut two = StreamWriter::new(Vec::new()).unwrap();
            two.write_slice(m).unwrap();
            assert!(one.into_inner().unwrap() == two.into_inner().unwrap());
        }
    }
    check(|i| i as i8 - 3);
    check(|i| i as i16 * -300);
    check(|i| i as i32 * 70_000);
    check(|i| i as i64 - (1 << 40));
    check(|i| i as u8);
    check(|i| i as u16 * 1000);
    check(|i| i as u32 * 100_000);
    check(|i| u64::MAX - i as u64);
    check(|i| i as f32 * 0.25);
    check(|i| i as f64 * -1.5);
}

#[test]
fn next_slice_reads_streams_of_numbers_without_frames() {
    let mut w = StreamWriter::new(Vec::new()).unwrap();
    let messages: Vec<Vec<f64>> = (1..40).map(|n| (0..n).map(|i| i as f64 - 0.5).collect()).collect();
    for m in &messages {
        w.write_slice(m).unwrap();
    }
    w.write(&Tick { symbol: "x".into(), price: 1.0, size: 2, tags: vec![], book: vec![] }).unwrap();
    w.write_slice(&[1.5f32, 2.5][..]).unwrap();
    w.write(&vec![vec![1.0f64, 2.0], vec![3.0, 4.0]]).unwrap();
    w.write_slice(&[7.5f64][..]).unwrap();
    let bytes = w.into_inner().unwrap();
    let expect = |got: Vec<Result<Vec<f64>, Category>>| {
        assert_eq!(got.len(), messages.len() + 4);
        for (g, m) in got.iter().zip(&messages) {
            assert_eq!(g.as_ref().unwrap(), m, "vector and typed-array frames alike");
        }
        let rest = &got[messages.len()..];
        // An object and f32s are not slices of f64: an error each, consumed; a matrix gives
        // its elements in row-major order, as `as_slice` does.
        assert_eq!(rest[0], Err(Category::WrongType));
        assert_eq!(rest[1], Err(Category::WrongType));
        assert_eq!(rest[2], Ok(vec![1.0, 2.0, 3.0, 4.0]));
        assert_eq!(rest[3], Ok(vec![7.5]));
    };
    let mut r = SliceReader::new(&bytes).unwrap();
    let mut got = Vec::new();
    while let Some(xs) = r.next_slice::<f64>() {
        got.push(xs.map(<[f64]>::to_vec).map_err(|e| e.category()));
    }
    expect(got);
    for chunk in [1, 7, 4096] {
        let mut r = StreamReader::with_options(
            Trickle { bytes: &bytes, chunk },
            StreamOptions { buffer_size: 16, ..StreamOptions::default() },
        )
        .unwrap();
        let mut got = Vec::new();
        while let Some(xs) = r.next_slice::<f64>() {
            got.push(xs.map(<[f64]>::to_vec).map_err(|e| e.category()));
        }
        expect(got);
    }
    // The f32 vector reads as f32.
    let mut r = SliceReader::new(&bytes).unwrap();
    for _ in 0..messages.len() + 1 {
        r.next_frame().unwrap().ok();
    }
    assert_eq!(r.next_slice::<f32>().unwrap().unwrap(), &[1.5f32, 2.5]);
    // A torn stream: every whole message, then the error.
    let mut r = SliceReader::new(&bytes[..bytes.len() - 2]).unwrap();
    let mut n = 0;
    let mut last = None;
    while let Some(xs) = r.next_slice::<f64>() {
        n += 1;
        last = Some(xs.map(<[f64]>::to_vec).map_err(|e| e.category()));
    }
    assert_eq!(n, messages.len() + 4);
    assert_eq!(last, Some(Err(Category::Malformed)));
}

#[test]
fn writes_stay_within_the_buffer_unless_one_frame_is_longer() {
    // A sink that records the length of every write.
    struct Sizes(Vec<u8>, Vec<usize>);
    impl std::io::Write for Sizes {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.extend_from_slice(b);
            self.1.push(b.len());
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = 1000;
    let mut w = StreamWriter::with_options(
        Sizes(Vec::new(), Vec::new()),
        StreamOptions { buffer_size: buffer, ..StreamOptions::default() },
    )
    .unwrap();
    let messages: Vec<Vec<f64>> = (0..400).map(|i| (0..1 + (i * 7) % 40).map(|j| j as f64).collect()).collect();
    for m in &messages {
        w.write_slice(m).unwrap();
        w.write(&tick(m.len())).unwrap();
    }
    w.write_slice(&vec![0.5f64; 300]).unwrap();
    let Sizes(bytes, sizes) = w.into_inner().unwrap();
    let (last, rest) = sizes.split_last().unwrap();
    assert!(rest.iter().all(|&n| n <= buffer), "a write past the buffer: {sizes:?}");
    assert!(rest.iter().filter(|&&n| n < buffer / 2).count() <= 1, "writes are buffer-sized: {sizes:?}");
    assert!(*last > buffer, "a frame longer than the buffer goes in one write");
    let mut r = SliceReader::new(&bytes).unwrap();
    for m in &messages {
        assert_eq!(r.next_slice::<f64>().unwrap().unwrap(), &m[..]);
        assert_eq!(r.next_frame().unwrap().unwrap().deserialize::<Tick>().unwrap(), tick(m.len()));
    }
    assert_eq!(r.next_slice::<f64>().unwrap().unwrap().len(), 300);
    assert!(r.next_frame().is_none());
}

#[test]
fn typed_arrays_are_aligned_slices_at_every_phase() {
    // Messages of growing length put the frames at every offset modulo 8.
    let mut w =
        StreamWriter::with_options(Vec::new(), StreamOptions { buffer_size: 50, ..StreamOptions::default() }).unwrap();
    for n in 0..40usize {
        w.write(&(0..n).map(|i| i as f64 + 0.5).collect::<Vec<f64>>()).unwrap();
        w.write(&"x".repeat(n)).unwrap();
    }
    let bytes = w.into_inner().unwrap();
    for chunk in [1, 5, 4096] {
        let mut r = StreamReader::with_options(
            Trickle { bytes: &bytes, chunk },
            StreamOptions { buffer_size: 24, ..StreamOptions::default() },
        )
        .unwrap();
        for n in 0..40usize {
            let f = r.next_frame().unwrap().unwrap();
            if n > 0 {
                let xs = f.root().as_slice::<f64>().unwrap();
                assert_eq!(xs.len(), n);
                assert_eq!(xs[n - 1], n as f64 - 0.5);
            }
            let s = r.next_frame().unwrap().unwrap();
            assert_eq!(s.root().as_str().unwrap().len(), n);
        }
        assert!(r.next_frame().is_none());
    }
}

#[test]
fn a_torn_last_frame_is_reported_after_every_complete_frame() {
    let messages = json_messages();
    let want = expected(&messages);
    let bytes = write_json_stream(&messages, StreamOptions::default());
    // Frame boundaries, keys frames' included: each frame's length field says where the
    // next starts.
    let mut boundaries = vec![112u64];
    while (*boundaries.last().unwrap() as usize) < bytes.len() {
        let (mut at, mut len, mut shift) = (*boundaries.last().unwrap() as usize, 0u64, 0);
        loop {
            len |= ((bytes[at] & 0x7F) as u64) << shift;
            shift += 7;
            at += 1;
            if bytes[at - 1] < 0x80 {
                break;
            }
        }
        boundaries.push(at as u64 + len);
    }
    let mut value_ends = vec![112u64];
    let mut r = SliceReader::new(&bytes).unwrap();
    while let Some(f) = r.next_frame() {
        f.unwrap();
        value_ends.push(r.position());
    }
    // Every cut in the small messages, then a sample through the large ones (each cut
    // reads the stream again).
    let cuts = (112..bytes.len()).filter(|&c| c < 3000 || c % 211 == 0 || c + 3 >= bytes.len());
    for cut in cuts {
        let torn = &bytes[..cut];
        let mut r = SliceReader::new(torn).unwrap();
        let mut n = 0;
        let mut error = None;
        while let Some(f) = r.next_frame() {
            match f {
                Ok(f) => {
                    assert_eq!(f.to_value().unwrap(), want[n]);
                    n += 1;
                }
                Err(e) => error = Some(e),
            }
        }
        // Keys frames sit between boundaries too: a cut there is also a torn frame.
        if boundaries.contains(&(cut as u64)) {
            assert!(error.is_none(), "cut {cut} at a boundary");
        } else {
            let e = error.unwrap_or_else(|| panic!("cut {cut}: no error"));
            assert_eq!(e.category(), Category::Malformed);
            assert!(e.to_string().contains("truncated"), "{e}");
            assert!(e.offset().unwrap() >= value_ends[n], "cut {cut}: {e}");
        }
        let r = StreamReader::new(Trickle { bytes: torn, chunk: 13 }).unwrap();
        let results: Vec<_> = r.values().collect();
        let ok = results.iter().take_while(|v| v.is_ok()).count();
        assert_eq!(ok, n, "cut {cut}: the reader over Read yields the same frames");
        assert_eq!(results.len() - ok, usize::from(!boundaries.contains(&(cut as u64))));
    }
}

#[test]
fn a_damaged_frame_is_reported_and_skipped() {
    let messages: Vec<String> = (0..20).map(|i| format!(r#"{{"i":{i},"xs":[{i}.5,2.5]}}"#)).collect();
    let bytes = write_json_stream(&messages, StreamOptions { crc: true, ..StreamOptions::default() });
    // Frame 5's offset: read up to it.
    let mut r = SliceReader::new(&bytes).unwrap();
    let mut offsets = Vec::new();
    while let Some(f) = r.next_frame() {
        offsets.push(f.unwrap().offset());
    }
    let mut bad = bytes.clone();
    bad[offsets[5] as usize + 3] ^= 0x10;
    let mut r = SliceReader::new(&bad).unwrap();
    let (mut seen, mut errors) = (Vec::new(), Vec::new());
    loop {
        match r.next_frame() {
            Some(Ok(f)) => seen.push(f.pointer("/i").unwrap().as_i64().unwrap()),
            Some(Err(e)) => {
                errors.push(e);
                assert!(r.skip());
            }
            None => break,
        }
    }
    // The damaged frame held a value, but the reader cannot know it held no keys: after
    // it, frames with blocks are refused (each with its own offset) until a reset. Here no
    // reset comes.
    assert_eq!(seen, (0..5).collect::<Vec<i64>>());
    assert_eq!(errors[0].offset(), Some(offsets[5]));
    assert!(errors[0].to_string().contains("checksum"), "{}", errors[0]);
    assert_eq!(errors[1..].iter().map(|e| e.offset().unwrap()).collect::<Vec<_>>(), offsets[6..]);
    assert!(errors[1..].iter().all(|e| e.to_string().contains("unknown")));
}

#[test]
fn a_damaged_frame_before_a_reset_loses_only_itself() {
    let mut w =
        StreamWriter::with_options(Vec::new(), StreamOptions { crc: true, ..StreamOptions::default() }).unwrap();
    let mut offsets = Vec::new();
    for i in 0..6 {
        if i == 3 {
            w.reset_keys().unwrap();
        }
        offsets.push(w.position());
        w.write_json(format!(r#"{{"i":{i}}}"#).as_bytes()).unwrap();
    }
    let mut bytes = w.into_inner().unwrap();
    let last = bytes.len() - 1;
    bytes[offsets[1] as usize + 4] ^= 1;
    let _ = last;
    let mut r = SliceReader::new(&bytes).unwrap();
    let mut seen = Vec::new();
    let mut errors = 0;
    loop {
        match r.next_frame() {
            Some(Ok(f)) => seen.push(f.pointer("/i").unwrap().as_i64().unwrap()),
            Some(Err(_)) => {
                errors += 1;
                assert!(r.skip());
            }
            None => break,
        }
    }
    assert_eq!(seen, vec![0, 3, 4, 5]);
    assert_eq!(errors, 2, "the damaged frame, then frame 2 whose keys are unknown");
}

#[test]
fn hostile_streams_are_typed_errors() {
    let header = {
        let w = StreamWriter::new(Vec::new()).unwrap();
        w.into_inner().unwrap()
    };
    let with = |frame: &[u8]| [&header[..], frame].concat();
    let first_error = |bytes: &[u8]| {
        let mut r = SliceReader::new(bytes).unwrap();
        loop {
            match r.next_frame() {
                Some(Ok(_)) => continue,
                Some(Err(e)) => return e,
                None => panic!("no error"),
            }
        }
    };
    // An absurd length: refused before anything is allocated.
    let e = first_error(&with(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x05]));
    assert_eq!((e.category(), e.offset()), (Category::LimitExceeded, Some(112)));
    let huge = with(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F]);
    let r = StreamReader::new(&huge[..]).unwrap();
    assert_eq!(r.values().next().unwrap().unwrap_err().category(), Category::LimitExceeded);
    // Length 0, a reserved kind, a scalar of the wrong width, a key id past the table.
    assert_eq!(first_error(&with(&[0x00])).offset(), Some(112));
    assert_eq!(first_error(&with(&[0x01, 0x0E])).category(), Category::Unsupported);
    assert_eq!(first_error(&with(&[0x01, 0x20])).category(), Category::Unsupported);
    assert_eq!(first_error(&with(&[0x03, 0x05, 1, 2])).offset(), Some(113));
    // Keys frames: no keys, a duplicate, bad UTF-8, trailing bytes.
    assert_eq!(first_error(&with(&[0x02, 0x40, 0x00])).category(), Category::Malformed);
    assert!(first_error(&with(&[0x06, 0x40, 0x02, 0x01, b'a', 0x01, b'a'])).to_string().contains("already"));
    assert!(first_error(&with(&[0x04, 0x40, 0x01, 0x01, 0xFF])).to_string().contains("UTF-8"));
    assert!(first_error(&with(&[0x05, 0x40, 0x01, 0x01, b'a', 0x00])).to_string().contains("after the last key"));
    assert!(first_error(&with(&[0x02, 0x41, 0x00])).to_string().contains("reset"));
    // An object whose key id is not in the table: the frame reads, the lookup fails.
    let mut w = StreamWriter::new(Vec::new()).unwrap();
    w.write_json(br#"{"a":1}"#).unwrap();
    let good = w.into_inner().unwrap();
    let keys_frame_len = 1 + good[112] as usize;
    let orphan = [&header[..], &good[112 + keys_frame_len..]].concat();
    let mut r = SliceReader::new(&orphan).unwrap();
    let f = r.next_frame().unwrap().unwrap();
    let e = f.to_value().unwrap_err();
    assert_eq!(e.category(), Category::Malformed);
    assert!(e.to_string().contains("key id"), "{e}");
    // Headers.
    assert_eq!(SliceReader::new(b"LWSTREAM").err().unwrap().offset(), Some(8));
    assert_eq!(SliceReader::new(b"LEAFWIRE\x01\x00\x00\x00\x00\x00\x00\x00").err().unwrap().offset(), Some(0));
    let mut flagged = header.clone();
    flagged[10] = 2;
    assert_eq!(SliceReader::new(&flagged).err().unwrap().category(), Category::Unsupported);
}

#[test]
fn the_key_table_resets_at_the_writers_bound() {
    let options = StreamOptions { max_keys: 10, ..StreamOptions::default() };
    let messages: Vec<String> = (0..50).map(|i| format!(r#"{{"k{i}":{i},"common":true}}"#)).collect();
    let bytes = write_json_stream(&messages, options.clone());
    assert_eq!(slice_values(&bytes), expected(&messages));
    // A reader with a smaller bound than the writer's refuses the stream.
    let bytes = write_json_stream(&messages, StreamOptions::default());
    let mut r = SliceReader::with_options(&bytes, options).unwrap();
    let e = std::iter::from_fn(|| r.next_frame().map(|f| f.map(|_| ()))).find_map(|f| f.err()).unwrap();
    assert_eq!(e.category(), Category::LimitExceeded);
}

#[test]
fn errors_inside_frames_are_at_stream_offsets() {
    let mut w = StreamWriter::new(Vec::new()).unwrap();
    for i in 0..10 {
        w.write_json(format!(r#"{{"n":{i},"s":"abc"}}"#).as_bytes()).unwrap();
    }
    let mut bytes = w.into_inner().unwrap();
    // Break the UTF-8 of the last message's string: its error names a byte in that frame.
    let at = bytes.len() - 1;
    bytes[at] = 0xFF;
    let mut r = SliceReader::new(&bytes).unwrap();
    let mut last = None;
    while let Some(f) = r.next_frame() {
        let f = f.unwrap();
        last = Some((f.offset(), f.to_value().err()));
    }
    let (frame_at, e) = last.unwrap();
    let e = e.expect("the broken string is found");
    assert!(e.offset().unwrap() > frame_at && e.offset().unwrap() < bytes.len() as u64, "{e} in a frame at {frame_at}");
}

#[test]
fn the_short_path_writes_the_bytes_of_the_general_path() {
    fn both<T: Serialize + ?Sized>(messages: &[&T]) {
        let (mut fast, mut planned) = (StreamWriter::new(Vec::new()).unwrap(), StreamWriter::new(Vec::new()).unwrap());
        for m in messages {
            fast.write(*m).unwrap();
            planned.write_planned(*m).unwrap();
        }
        let (fast, planned) = (fast.into_inner().unwrap(), planned.into_inner().unwrap());
        assert!(fast == planned, "{} messages", messages.len());
    }
    // Every length up to 300 (length fields of 1 and 2 bytes, every phase), each type.
    let f64s: Vec<Vec<f64>> = (0..300).map(|n| (0..n).map(|i| i as f64 * 1.5).collect()).collect();
    both(&f64s.iter().collect::<Vec<_>>());
    let i8s: Vec<Vec<i8>> = (0..70).map(|n| (0..n).map(|i| i as i8 - 30).collect()).collect();
    both(&i8s.iter().collect::<Vec<_>>());
    let u64s: Vec<Vec<u64>> = (0..40).map(|n| (0..n).map(|i| u64::MAX - i).collect()).collect();
    both(&u64s.iter().collect::<Vec<_>>());
    let f32s: Vec<Vec<f32>> = (0..40).map(|n| (0..n).map(|i| i as f32).collect()).collect();
    both(&f32s.iter().collect::<Vec<_>>());
    let bools: Vec<Vec<bool>> = (0..20).map(|n| (0..n).map(|i| i % 3 == 0).collect()).collect();
    both(&bools.iter().collect::<Vec<_>>());
    both(&[&(1.5f64, 2.5f64), &(1.5f64, 2.5f64)]);
    both(&[&[1u16, 2, 3], &[4u16, 5, 6]]);
    // Scalars, and what the short path declines midway (mixed types, not numbers).
    both(&[&1.5f64, &-0.0]);
    both(&[&-7i64, &300, &i64::MIN]);
    both(&[&u64::MAX, &3]);
    both(&[&true, &false]);
    both(&[&(), &()]);
    both(&[&2.5f32]);
    both(&[&None, &Some(4i32)]);
    both(&[&(1u8, 2.5f64)]);
    both(&[&(1u8, 2u8)]);
    both(&[&vec![vec![1.0f64, 2.0], vec![3.0, 4.0]], &vec![vec![1.0f64], vec![]]]);
    both(&[&"text", &"more"]);
    // The slice API writes the bytes of `write`.
    let mut w = StreamWriter::new(Vec::new()).unwrap();
    let mut s = StreamWriter::new(Vec::new()).unwrap();
    for v in &f64s {
        w.write(v).unwrap();
        s.write_slice(v).unwrap();
    }
    assert!(w.into_inner().unwrap() == s.into_inner().unwrap());
}

/// The child half of `two_processes_over_tcp_and_a_unix_socket`: run only by that test,
/// which starts this test binary again with `LEAFWIRE_STREAM_PEER` set.
#[test]
#[ignore = "started by two_processes_over_tcp_and_a_unix_socket"]
fn stream_peer_writer() {
    let Ok(peer) = std::env::var("LEAFWIRE_STREAM_PEER") else { return };
    let count: usize = std::env::var("LEAFWIRE_STREAM_COUNT").unwrap().parse().unwrap();
    let write_all = |sink: &mut dyn std::io::Write| {
        let mut w = StreamWriter::with_options(
            sink,
            StreamOptions { buffer_size: 4096, crc: true, ..StreamOptions::default() },
        )
        .unwrap();
        for i in 0..count {
            w.write(&tick(i)).unwrap();
            w.write_slice(&[i as f64; 3]).unwrap();
        }
        w.flush().unwrap();
    };
    match peer.strip_prefix("unix:") {
        Some(path) => write_all(&mut std::os::unix::net::UnixStream::connect(path).unwrap()),
        None => write_all(&mut std::net::TcpStream::connect(&peer).unwrap()),
    }
}

#[test]
fn two_processes_over_tcp_and_a_unix_socket() {
    let count = 3000;
    let spawn = |peer: String| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "stream_peer_writer", "--ignored", "--quiet"])
            .env("LEAFWIRE_STREAM_PEER", peer)
            .env("LEAFWIRE_STREAM_COUNT", count.to_string())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let check = |source: &mut dyn std::io::Read| {
        let mut r = StreamReader::new(source).unwrap();
        for i in 0..count {
            let t: Tick = r.next_frame().unwrap().unwrap().deserialize().unwrap();
            assert_eq!(t, tick(i));
            let f = r.next_frame().unwrap().unwrap();
            assert_eq!(f.root().as_slice::<f64>().unwrap(), &[i as f64; 3]);
        }
        assert!(r.next_frame().is_none(), "the stream ends where the writer stopped");
    };
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut child = spawn(tcp.local_addr().unwrap().to_string());
    let (mut conn, _) = tcp.accept().unwrap();
    check(&mut conn);
    assert!(child.wait().unwrap().success());
    let dir = std::env::temp_dir().join(format!("leafwire-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let unix = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let mut child = spawn(format!("unix:{}", path.display()));
    let (mut conn, _) = unix.accept().unwrap();
    check(&mut conn);
    assert!(child.wait().unwrap().success());
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The fuzzing entry of the codec layer (`fuzz/fuzz_targets/packed_page.rs`), reached
//! through the hidden `leafwire::__fuzz_packed_page`.
//!
//! Byte 0 picks the kind (ints, floats, strings) and the mode, bytes 1–2 the value count;
//! the rest is either a page to decode (which must fail cleanly or give n values) or the
//! values of a page to encode with the selector (which must decode back to them, bit for
//! bit, also through the zstd stage).

use super::{decode_page, select, zstd_stage, Limits, PageKind, PageValues};

pub(crate) fn page(data: &[u8]) {
    let [head, n0, n1, rest @ ..] = data else { return };
    let kind = match head % 3 {
        0 => PageKind::Ints,
        1 => PageKind::Floats,
        _ => PageKind::Strings,
    };
    let limits = Limits { max_values: 65_536, max_page_bytes: 1 << 22 };
    if head & 0x80 == 0 {
        let n = 1 + u16::from_le_bytes([*n0, *n1]) as usize;
        if let Ok(values) = decode_page(rest, 0, rest.len(), n, kind, &limits) {
            let len = match values {
                PageValues::Ints(v) => v.len(),
                PageValues::Floats(v) => v.len(),
                PageValues::Strings(v) => v.len(),
            };
            assert_eq!(len, n, "a page decoded to another count than declared");
        }
        return;
    }
    let (stream, n, expect) = match kind {
        PageKind::Ints => {
            let v: Vec<i64> = rest.chunks(8).map(|c| c.iter().rev().fold(0i64, |a, &b| a << 8 | b as i64)).collect();
            let mut out = Vec::new();
            select::write_ints(&v, 0, &mut out).unwrap();
            (out, v.len(), PageValues::Ints(v))
        }
        PageKind::Floats => {
            let v: Vec<f64> =
                rest.chunks(8).map(|c| f64::from_bits(c.iter().rev().fold(0u64, |a, &b| a << 8 | b as u64))).collect();
            let mut out = Vec::new();
            let lossy = (*n0 & 1 == 1).then_some((*n1 % 121) as i8 - 60);
            select::write_floats(&v, lossy, &mut out).unwrap();
            if lossy.is_some() && out.first() == Some(&super::codec::FLOAT_QUANTIZED) {
                let back = decode_page(&out, 0, out.len(), v.len(), kind, &limits).unwrap();
                let PageValues::Floats(b) = back else { unreachable!() };
                let half = f64::powi(2.0, lossy.unwrap_or(0) as i32 - 1);
                assert!(v.iter().zip(&b).all(|(x, y)| (x - y).abs() <= half));
                return;
            }
            (out, v.len(), PageValues::Floats(v))
        }
        PageKind::Strings => {
            let text = String::from_utf8_lossy(rest);
            let v: Vec<String> = text.split(',').map(str::to_owned).collect();
            let mut out = Vec::new();
            select::write_strings(&v, 0, true, true, &mut out).unwrap();
            (out, v.len(), PageValues::Strings(v.iter().collect()))
        }
    };
    if n == 0 {
        assert!(stream.is_empty());
        return;
    }
    for page in [stream.clone(), zstd_stage::wrap(stream, 3)] {
        let back = decode_page(&page, 0, page.len(), n, kind, &limits).unwrap();
        let same = match (&back, &expect) {
            (PageValues::Floats(a), PageValues::Floats(b)) => a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
            _ => back == expect,
        };
        assert!(same, "the selector's page does not decode to its input");
    }
}

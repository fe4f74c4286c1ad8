//! The optional zstd stage of a page (§5.5, codec 0x30): varint D (decoded length), varint
//! C, then C bytes holding exactly one zstd frame whose content is a complete stream of D
//! bytes (not 0x30 again). D is checked against `max_page_bytes` before anything is
//! allocated, and the frame is decompressed into a buffer of exactly D bytes of capacity,
//! so a frame that would write more fails instead of growing memory.

use super::codec::ZSTD;
use super::Reader;
use crate::error::{Category, Error, Result};
use crate::format::numbers::{varint_len, write_varint};

/// `bytes` compressed at `level` as the stage and stripe frames lay it out (§13.4,
/// §13.5.4): varint D, varint C, then the C bytes of one zstd frame.
pub(crate) fn frame(bytes: &[u8], level: i32) -> Option<Vec<u8>> {
    let frame = compress(bytes, level).ok()?;
    let mut out = Vec::with_capacity(varint_len(bytes.len() as u64) + varint_len(frame.len() as u64) + frame.len());
    write_varint(&mut out, bytes.len() as u64);
    write_varint(&mut out, frame.len() as u64);
    out.extend_from_slice(&frame);
    Some(out)
}

/// One zstd frame of `bytes` at `level`, through this thread's compression context: making
/// a context costs about as much as compressing a small page, and a packed document
/// compresses hundreds.
pub(crate) fn compress(bytes: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static CCTX: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    CCTX.with(|cell| {
        let mut cell = cell.borrow_mut();
        let cctx = match &mut *cell {
            Some(cctx) => cctx,
            empty => empty.insert(zstd::bulk::Compressor::new(level)?),
        };
        cctx.set_compression_level(level)?;
        cctx.compress(bytes)
    })
}

/// [`frame`] of `bytes`, when it is at least 1/8 smaller than `than` bytes: the margin
/// by which the reference encoder frames a stripe or a group's tables (§13.2, §13.4)
/// rather than keep them readable in place (a frame is decompressed whole to read any
/// column of it). Above level 3, a frame at level 3 must clear the margin first.
pub(crate) fn frame_if_worth(bytes: &[u8], level: i32, than: usize) -> Option<Vec<u8>> {
    if bytes.len() > super::Limits::default().max_page_bytes {
        return None;
    }
    // A frame costs readers their column-by-column access, so it must gain much; at a
    // slow level, a quick one decides first whether the slow one is worth computing.
    let worth = |f: &Vec<u8>| f.len() <= than - than / 8;
    let quick = level.min(QUICK_LEVEL);
    let first = frame(bytes, quick).filter(worth)?;
    if quick == level {
        return Some(first);
    }
    frame(bytes, level).filter(worth)
}

/// The level at which [`frame_if_worth`] first tries a frame.
const QUICK_LEVEL: i32 = 3;

/// `stream` wrapped in a zstd frame at `level`, when that is smaller; else `stream`.
pub(crate) fn wrap(stream: Vec<u8>, level: i32) -> Vec<u8> {
    match frame(&stream, level) {
        Some(frame) if 1 + frame.len() < stream.len() => {
            let mut out = Vec::with_capacity(1 + frame.len());
            out.push(ZSTD);
            out.extend_from_slice(&frame);
            out
        }
        _ => stream,
    }
}

/// The smaller of `selected` (the selector's stream for `values`) wrapped, and a plain
/// stream wrapped: the selector's codecs (symbol tables, dictionaries) remove the
/// redundancy zstd would have found, and their output compresses worse than the text.
pub(crate) fn wrap_best_strings<S: AsRef<str>>(values: &[S], selected: Vec<u8>, level: i32) -> Vec<u8> {
    let mut plain = Vec::new();
    if super::string::encode_strings(values, &super::string::StrCodec::Plain(super::int::IntCodec::Auto), &mut plain)
        .is_err()
    {
        return wrap(selected, level);
    }
    smaller_wrapped(selected, plain, level)
}

/// `kept` wrapped, unless `other` wrapped is smaller.
fn smaller_wrapped(kept: Vec<u8>, other: Vec<u8>, level: i32) -> Vec<u8> {
    let (kept, other) = (wrap(kept, level), wrap(other, level));
    if other.len() < kept.len() {
        other
    } else {
        kept
    }
}

/// The smaller of `selected` (the selector's stream for `values`) wrapped, and the
/// byte-aligned float stream wrapped (`select::write_floats_byte_aligned`). Above level 3,
/// frames at level 3 pick the candidate where one is clearly smaller (by 1/8), and only
/// that one is compressed at `level`: an archival level costs seconds per ten megabytes.
pub(crate) fn wrap_best_floats(values: &[f64], selected: Vec<u8>, level: i32) -> Vec<u8> {
    let mut aligned = Vec::new();
    if super::select::write_floats_byte_aligned(values, &mut aligned).is_err() {
        return wrap(selected, level);
    }
    if level > QUICK_LEVEL {
        let quick = |stream: &[u8]| frame(stream, QUICK_LEVEL).map_or(stream.len(), |f| f.len().min(stream.len()));
        let (a, s) = (quick(&aligned), quick(&selected));
        // Slow levels find more in long aligned data than level 3 does: within 1/8 of each
        // other, both are compressed at the level.
        if a < s - s / 8 {
            return wrap(aligned, level);
        }
        if s < a - a / 8 {
            return wrap(selected, level);
        }
    }
    smaller_wrapped(selected, aligned, level)
}

/// `e`, raised inside the decompressed content of a frame (`what`) that starts at `at`:
/// offsets there mean nothing in the document, so the error moves to the frame.
pub(crate) fn inside(e: Error, what: &str, at: usize) -> Error {
    Error::new(e.category(), format!("in {what}: {}", e.message())).at(at as u64)
}

/// Reads a zstd stage whose codec byte (at `at`) the caller has read, or a stripe frame
/// past its framing byte: D, C and the frame; returns the D decoded bytes.
pub(crate) fn unwrap(r: &mut Reader, at: usize) -> Result<Vec<u8>> {
    let d_at = r.pos;
    let d = r.varint()?;
    if d > r.limits.max_page_bytes as u64 {
        return Err(Error::new(
            Category::LimitExceeded,
            format!("zstd stage of {d} bytes exceeds the limit of {} (raise max_page_bytes)", r.limits.max_page_bytes),
        )
        .at(d_at as u64));
    }
    let c_at = r.pos;
    let c = r.varint()?;
    let c = usize::try_from(c).map_err(|_| r.err(c_at, "zstd frame longer than the page"))?;
    let frame_at = r.pos;
    let frame = r.take(c)?;
    match zstd::zstd_safe::find_frame_compressed_size(frame) {
        Ok(len) if len == c => {}
        _ => return Err(r.err(frame_at, "zstd stage is not exactly one zstd frame")),
    }
    if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(frame) {
        if size != d {
            return Err(r.err(frame_at, "zstd frame content size differs from D"));
        }
    }
    let mut out = Vec::with_capacity(d as usize);
    // One decompression context per thread: making one costs more than decompressing a
    // small page, and a select reads many (each frame starts the context afresh).
    thread_local! {
        static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    let decoded = DCTX.with(|cell| {
        let mut cell = cell.borrow_mut();
        let dctx = match &mut *cell {
            Some(dctx) => dctx,
            empty => empty.insert(
                zstd::bulk::Decompressor::new().map_err(|e| Error::new(Category::Io, e.to_string()).at(at as u64))?,
            ),
        };
        Ok::<_, Error>(dctx.decompress_to_buffer(frame, &mut out))
    })?;
    match decoded {
        Ok(n) if n as u64 == d => Ok(out),
        _ => Err(r.err(frame_at, "zstd frame does not decode to exactly D bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::int::{encode_ints, IntCodec};
    use super::super::{decode_page, Limits, PageKind, PageValues};
    use super::*;

    fn page(stream: &[u8]) -> Vec<u8> {
        let mut out = vec![ZSTD];
        let frame = zstd::bulk::compress(stream, 3).unwrap();
        write_varint(&mut out, stream.len() as u64);
        write_varint(&mut out, frame.len() as u64);
        out.extend_from_slice(&frame);
        out
    }

    #[test]
    fn wrapped_pages_round_trip_and_truncations_fail() {
        let values: Vec<i64> = (0..4096).map(|j| (j % 10) * 1_000_003).collect();
        let mut stream = Vec::new();
        encode_ints(&values, &IntCodec::Plain, &mut stream).unwrap();
        let wrapped = wrap(stream.clone(), 3);
        assert_eq!(wrapped[0], ZSTD);
        assert!(wrapped.len() < stream.len() / 4);
        let lim = Limits::default();
        assert_eq!(
            decode_page(&wrapped, 0, wrapped.len(), 4096, PageKind::Ints, &lim).unwrap(),
            PageValues::Ints(values)
        );
        for cut in 0..wrapped.len() {
            assert!(decode_page(&wrapped[..cut], 0, cut, 4096, PageKind::Ints, &lim).is_err());
        }
        // A stream that does not shrink stays as it is.
        assert_eq!(wrap(vec![0x01, 0], 3), vec![0x01, 0]);
    }

    #[test]
    fn strings_under_zstd_take_the_smaller_of_the_selected_and_the_plain_stream() {
        // URLs sharing long prefixes: the symbol table wins alone, zstd wins on the text.
        let values: Vec<String> = (0..300)
            .map(|i| format!("https://api.github.com/repos/owner{}/project{}/issues/{i}", i % 7, i % 5))
            .collect();
        let mut selected = Vec::new();
        super::super::select::write_strings(&values, 0, true, true, &mut selected).unwrap();
        let mut plain = Vec::new();
        super::super::string::encode_strings(
            &values,
            &super::super::string::StrCodec::Plain(IntCodec::Auto),
            &mut plain,
        )
        .unwrap();
        let best = wrap_best_strings(&values, selected.clone(), 3);
        assert_eq!(best.len(), wrap(selected, 3).len().min(wrap(plain, 3).len()));
        let lim = Limits::default();
        assert_eq!(
            decode_page(&best, 0, best.len(), values.len(), PageKind::Strings, &lim).unwrap(),
            PageValues::Strings(values.iter().collect())
        );
    }

    #[test]
    fn bombs_and_lies_are_errors() {
        let lim = Limits { max_values: 65_536, max_page_bytes: 1 << 20 };
        // D of 2^40 bytes in a 10-byte page: refused before allocating.
        let b = [ZSTD, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0, 0];
        let e = decode_page(&b, 0, b.len(), 1, PageKind::Ints, &lim).unwrap_err();
        assert_eq!(e.category(), Category::LimitExceeded);
        // 64 MiB of zeros in a small frame, declared as 1,000 bytes.
        let zeros = vec![0u8; 64 << 20];
        let frame = zstd::bulk::compress(&zeros, 3).unwrap();
        let mut b = vec![ZSTD];
        write_varint(&mut b, 1000);
        write_varint(&mut b, frame.len() as u64);
        b.extend_from_slice(&frame);
        let e = decode_page(&b, 0, b.len(), 1, PageKind::Ints, &lim).unwrap_err();
        assert_eq!(e.category(), Category::Malformed);
        // Not a frame.
        let b = [ZSTD, 2, 4, 1, 2, 3, 4];
        assert_eq!(decode_page(&b, 0, b.len(), 1, PageKind::Ints, &lim).unwrap_err().category(), Category::Malformed);
        // A zstd stage inside a zstd stage.
        let inner = page(&[0x01, 0]);
        let b = page(&inner);
        assert_eq!(decode_page(&b, 0, b.len(), 1, PageKind::Ints, &lim).unwrap_err().category(), Category::Malformed);
        // The stream inside must use all D bytes.
        let b = page(&[0x01, 0, 0]);
        assert_eq!(decode_page(&b, 0, b.len(), 1, PageKind::Ints, &lim).unwrap_err().category(), Category::Malformed);
        // A well-formed one for contrast.
        let b = page(&[0x01, 0]);
        assert_eq!(decode_page(&b, 0, b.len(), 3, PageKind::Ints, &lim).unwrap(), PageValues::Ints(vec![0, 0, 0]));
    }
}

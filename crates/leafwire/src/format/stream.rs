//! The byte rules of streams (spec §14): the stream header, a frame's length and kind,
//! where a frame's section starts, scalar payload widths, keys frames and frame CRCs. The
//! reader and writer in `crate::stream` move bytes; what the bytes mean is decided here.

use super::numbers::{put_varint, read_uint, sign_extend, signed_width};
use super::{tag, varint_len, ElementType};
use crate::error::{Category, Error, Result};

pub const MAGIC: &[u8; 8] = b"LWSTREAM";
pub const MAJOR_VERSION: u8 = 1;
pub const MINOR_VERSION: u8 = 0;
/// As long as a document's header, so that every frame has that many stream bytes before
/// it: a frame's offsets count from 112 bytes before its origin (spec §14.3), and lazy
/// readers keep the document rule that no block starts in the first 112 bytes.
pub const HEADER_LEN: usize = super::HEADER_LEN;
/// The offset, in a frame's section, of the frame's origin.
pub const SECTION_BASE: u64 = super::HEADER_LEN as u64;
/// Header flag bit 0: every frame ends with a CRC-32 of its length and body.
pub const FLAG_CRC: u16 = 1;
pub const CRC_LEN: usize = 4;

/// Frame kinds besides the value frames' root tags 0x00–0x0D (spec §14.2).
pub const KIND_KEYS: u8 = 0x40;
pub const KIND_RESET: u8 = 0x41;
/// Vector frames, short one-dimensional typed arrays unaligned (spec §14.5), have the
/// kinds 0x50 + their element type code (0x50–0x5A): the code costs no byte of its own.
/// 0x5B–0x5F, room for more element types, are reserved. See [`vector_kind`] and
/// [`vector_element`], the one place of this rule.
pub const KIND_VECTOR_BASE: u8 = 0x50;
/// The bytes of a vector frame before its elements ([`vector_head`]).
pub const VECTOR_HEAD_LEN: usize = 2;
/// The most element bytes a vector frame holds.
pub const VECTOR_MAX_BYTES: usize = 64;
/// Bytes of a vector frame's materialized section (see [`vector_section`]): the typed
/// header at offset 120, the data at most at 128, then the elements.
pub const VECTOR_SECTION_BYTES: usize = 128 + VECTOR_MAX_BYTES;

/// Reader limits (spec §14.2, §14.4): defaults of the reference implementation.
pub const DEFAULT_MAX_FRAME: u64 = 64 << 20;
pub const DEFAULT_MAX_KEYS: usize = 1 << 20;
pub const DEFAULT_MAX_KEY_BYTES: usize = 64 << 20;

/// The 16 header bytes of a stream with these flags.
pub fn header(flags: u16) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8] = MAJOR_VERSION;
    h[9] = MINOR_VERSION;
    h[10..12].copy_from_slice(&flags.to_le_bytes());
    h
}

/// Checks a stream's header (`bytes` is the whole stream or its start); returns its flags.
pub fn parse_header(bytes: &[u8]) -> Result<u16> {
    let Some(h) = bytes.get(..HEADER_LEN) else {
        if !bytes.is_empty() && !MAGIC.starts_with(&bytes[..bytes.len().min(8)]) {
            return Err(Error::malformed(0, "not a Leafwire stream (bad magic)"));
        }
        return Err(Error::malformed(bytes.len() as u64, "truncated stream header"));
    };
    if &h[..8] != MAGIC {
        return Err(Error::malformed(0, "not a Leafwire stream (bad magic)"));
    }
    if h[8] != MAJOR_VERSION {
        return Err(
            Error::new(Category::Unsupported, format!("stream major version {} (this reader knows 1)", h[8])).at(8)
        );
    }
    let flags = u16::from_le_bytes([h[10], h[11]]);
    if flags & !FLAG_CRC != 0 {
        return Err(Error::new(Category::Unsupported, format!("unknown stream flags 0x{flags:04x}")).at(10));
    }
    if h[12..].iter().any(|&b| b != 0) {
        return Err(Error::new(Category::Unsupported, "reserved stream header bytes are not zero").at(12));
    }
    Ok(flags)
}

/// A frame's length field at `buf[0..]`, for a frame at stream offset `at`: the body
/// length L and the field's length; `None` when `buf` ends inside the field.
#[inline(always)]
pub fn frame_length(buf: &[u8], at: u64, max_frame: u64) -> Result<Option<(u64, usize)>> {
    if let Some(&b) = buf.first() {
        if b > 0 && b < 0x80 && b as u64 <= max_frame {
            return Ok(Some((b as u64, 1)));
        }
    }
    let mut value = 0u64;
    for (i, &byte) in buf.iter().enumerate().take(10) {
        let low = (byte & 0x7F) as u64;
        if i == 9 && low > 1 {
            return Err(Error::malformed(at, "frame length overflows 64 bits"));
        }
        value |= low << (7 * i);
        if byte & 0x80 == 0 {
            if value == 0 {
                return Err(Error::malformed(at, "frame of length 0"));
            }
            if value > max_frame {
                return Err(Error::new(
                    Category::LimitExceeded,
                    format!("frame of {value} bytes, above the limit of {max_frame} (raise max_frame)"),
                )
                .at(at));
            }
            return Ok(Some((value, i + 1)));
        }
    }
    if buf.len() >= 10 {
        return Err(Error::malformed(at, "frame length longer than 10 bytes"));
    }
    Ok(None)
}

/// Writes a frame length of `len` in exactly `width` bytes (≥ its minimal length): a
/// frame's section depends on where its body starts (spec §14.3), so a writer may have to
/// pad the field rather than let the layout move.
pub fn put_frame_length(out: &mut [u8], len: u64, width: usize) {
    let n = put_varint(out, len);
    if n < width {
        out[n - 1] |= 0x80;
        for b in &mut out[n..width - 1] {
            *b = 0x80;
        }
        out[width - 1] = 0;
    }
}

/// The origin of a frame whose body starts at stream offset `body`: the multiple of 8 at
/// or before it, which has offset `SECTION_BASE` in the frame (spec §14.3).
#[inline]
pub fn origin(body: u64) -> u64 {
    body - body % 8
}

/// The offset, in its frame, of the byte after the kind byte of a body at stream offset
/// `body`: where the frame's structure starts.
#[inline]
pub fn section_start(body: u64) -> u64 {
    SECTION_BASE + body + 1 - origin(body)
}

/// Where a block root lies in its frame's section, `start` being the offset just past the
/// kind byte: at `start` for a container, at the data section's start for a data block.
#[inline]
pub fn root_offset(root_tag: u8, start: u64) -> u64 {
    match root_tag {
        tag::ARRAY | tag::OBJECT | tag::INTMAP => start,
        _ => super::align(start as usize, 8) as u64,
    }
}

/// Whether a value frame's kind is a scalar root (its payload follows the kind byte).
#[inline]
pub fn is_scalar(kind: u8) -> bool {
    kind < tag::STRING
}

/// Whether `kind` opens a value frame (spec §14.2).
#[inline]
pub fn is_value(kind: u8) -> bool {
    kind <= tag::TYPED
}

/// The payload of a scalar root stored in `bytes` (w = its length), read as a slot of
/// width w (spec §§3.2, 14.3); `body` is the stream offset of the kind byte, for errors.
#[inline]
pub fn scalar_payload(kind: u8, bytes: &[u8], body: u64) -> Result<u64> {
    let w = bytes.len();
    let fits = match kind {
        tag::NULL | tag::FALSE | tag::TRUE => w == 0,
        tag::F64 => w == 8,
        tag::F32 => w == 4 || w == 8,
        _ => matches!(w, 1 | 2 | 4 | 8),
    };
    if !fits {
        return Err(Error::malformed(body, format!("a scalar frame of tag 0x{kind:02x} with a payload of {w} bytes")));
    }
    if w == 0 {
        return Ok(0);
    }
    let raw = read_uint(bytes, w, 0);
    Ok(if kind == tag::INT { sign_extend(raw, w) as u64 } else { raw })
}

/// The canonical payload width of a scalar root (spec §7): 0 for null and booleans.
#[inline]
pub fn scalar_width(kind: u8, payload: u64) -> usize {
    match kind {
        tag::NULL | tag::FALSE | tag::TRUE => 0,
        tag::INT => signed_width(payload as i64),
        tag::F32 => 4,
        _ => 8,
    }
}

/// Whether a message that is a one-dimensional typed array of `count` elements of type
/// `element`, without a mask, is written as a vector frame (spec §14.5, canonical).
#[inline]
pub fn is_vector(element: ElementType, count: usize) -> bool {
    count >= 1 && count * element.size() <= VECTOR_MAX_BYTES
}

/// The kind of a vector frame of elements of type `element` (spec §14.5).
#[inline]
pub fn vector_kind(element: ElementType) -> u8 {
    KIND_VECTOR_BASE + element as u8
}

/// The element type of a vector frame of kind `kind`; `None` when `kind` is no vector
/// frame's (a reserved kind among them, 0x5B–0x5F).
#[inline(always)]
pub fn vector_element(kind: u8) -> Option<ElementType> {
    ElementType::from_code(kind.checked_sub(KIND_VECTOR_BASE)?)
}

/// The bytes of a vector frame before its elements: the length field (one byte: L ≤ 65)
/// and the kind (spec §14.5). `count` elements must fit ([`is_vector`]).
#[inline]
pub fn vector_head(element: ElementType, count: usize) -> [u8; VECTOR_HEAD_LEN] {
    debug_assert!(is_vector(element, count));
    [(1 + count * element.size()) as u8, vector_kind(element)]
}

/// Checks a vector frame's elements, `data` of type `element` after the kind byte at
/// stream offset `body` (spec §14.5): whole elements, at least one, at most
/// `VECTOR_MAX_BYTES`, and bools 0 or 1 (§5.2; reported at the element).
#[inline(always)]
pub fn check_vector(element: ElementType, data: &[u8], body: u64) -> Result<()> {
    let len = data.len();
    if len == 0 || len % element.size() != 0 || len > VECTOR_MAX_BYTES {
        return Err(Error::malformed(
            body,
            format!(
                "vector frame: {len} bytes of elements, not a positive multiple of {} up to {VECTOR_MAX_BYTES}",
                element.size()
            ),
        ));
    }
    if element == ElementType::Bool {
        if let Some(i) = data.iter().position(|&b| b > 1) {
            return Err(Error::malformed(body + 1 + i as u64, "vector frame: a bool element other than 0 or 1"));
        }
    }
    Ok(())
}

/// Lays out the message of a vector frame as the section a value frame of tag 0x0D with
/// the same elements would have after a kind byte at its origin (spec §14.3): the typed
/// header at 120, the elements at their alignment. `out` is 8-aligned memory of the
/// reader's; returns the section's length and the root's offset.
#[inline]
pub fn vector_section(out: &mut [u8; VECTOR_SECTION_BYTES], element: ElementType, data: &[u8]) -> (usize, u64) {
    const ROOT: usize = 120;
    let count = (data.len() / element.size()) as u64;
    let data_at = super::typed::write_header(out, ROOT, element, &[count], false);
    let dst = &mut out[data_at..data_at + data.len()];
    // SAFETY: `dst` is `data.len()` bytes of `out`, apart from `data`.
    unsafe { super::numbers::copy_short(dst.as_mut_ptr(), data) };
    (data_at + data.len(), ROOT as u64)
}

/// The keys of a keys frame's body past its kind byte, `body` being the stream offset of
/// that kind byte (for errors). Checks the count, lengths and UTF-8; duplicates are the
/// caller's to check against its table.
pub fn parse_keys(rest: &[u8], body: u64) -> Result<Vec<&[u8]>> {
    let at = |p: usize| body + 1 + p as u64;
    let (n, mut p) =
        super::read_varint(rest, 0).map_err(|_| Error::malformed(at(0), "keys frame: truncated key count"))?;
    if n == 0 {
        return Err(Error::malformed(at(0), "keys frame without keys"));
    }
    // Each key takes at least its length byte: a count beyond the body is a lie, found
    // before anything is reserved for it.
    if n > rest.len() as u64 {
        return Err(Error::malformed(at(0), format!("keys frame: {n} keys in {} bytes", rest.len())));
    }
    let mut keys = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (len, q) =
            super::read_varint(rest, p).map_err(|_| Error::malformed(at(p), "keys frame: truncated key length"))?;
        let key = usize::try_from(len).ok().and_then(|len| rest.get(q..q.checked_add(len)?));
        let key = key.ok_or_else(|| Error::malformed(at(p), "keys frame: a key runs past the frame"))?;
        if std::str::from_utf8(key).is_err() {
            return Err(Error::malformed(at(q), "keys frame: a key is not valid UTF-8"));
        }
        keys.push(key);
        p = q + key.len();
    }
    if p != rest.len() {
        return Err(Error::malformed(at(p), "keys frame: bytes after the last key"));
    }
    Ok(keys)
}

/// The body of a keys frame holding `keys` (kind byte included).
pub fn keys_body<'k>(keys: impl Iterator<Item = &'k [u8]> + Clone, out: &mut Vec<u8>) {
    out.push(KIND_KEYS);
    let mut v = [0u8; 10];
    let n = put_varint(&mut v, keys.clone().count() as u64);
    out.extend_from_slice(&v[..n]);
    for key in keys {
        let n = put_varint(&mut v, key.len() as u64);
        out.extend_from_slice(&v[..n]);
        out.extend_from_slice(key);
    }
}

/// The length of the frame length field for a body of `len` bytes, minimal.
#[inline]
pub fn length_len(len: u64) -> usize {
    varint_len(len)
}

/// The CRC a frame ends with (header flag bit 0): CRC-32 of its length field and body.
#[inline]
pub fn crc(frame: &[u8]) -> u32 {
    crc32fast::hash(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_lengths_read_back() {
        for len in [1u64, 5, 127, 128, 300, 1 << 20] {
            for width in varint_len(len)..=varint_len(len) + 2 {
                let mut out = [0u8; 12];
                put_frame_length(&mut out, len, width);
                assert_eq!(frame_length(&out[..width], 0, u64::MAX).unwrap(), Some((len, width)), "{len} in {width}");
            }
        }
    }

    #[test]
    fn lengths_are_checked() {
        assert_eq!(frame_length(&[0x80], 0, 100).unwrap(), None);
        assert_eq!(frame_length(&[0], 7, 100).unwrap_err().offset(), Some(7));
        assert_eq!(frame_length(&[0x80, 0x01], 0, 100).unwrap_err().category(), Category::LimitExceeded);
        assert!(frame_length(&[0xFF; 11], 0, u64::MAX).is_err());
    }

    #[test]
    fn vector_kinds_are_the_element_codes_from_0x50() {
        for code in 0..=10u8 {
            let element = ElementType::from_code(code).unwrap();
            assert_eq!(vector_kind(element), 0x50 + code);
            assert_eq!(vector_element(0x50 + code), Some(element));
        }
        // The old vector kind, the kinds around 0x50–0x5A, and the reserved 0x5B–0x5F.
        for kind in [0x00, 0x0D, 0x42, 0x4F, 0x5B, 0x5F, 0x60, 0xFF] {
            assert_eq!(vector_element(kind), None, "0x{kind:02x}");
        }
    }

    #[test]
    fn headers_are_checked() {
        assert_eq!(parse_header(&header(FLAG_CRC)).unwrap(), FLAG_CRC);
        assert_eq!(parse_header(&header(2)).unwrap_err().category(), Category::Unsupported);
        assert_eq!(parse_header(b"LWSTR").unwrap_err().offset(), Some(5));
        let mut h = header(0);
        h[100] = 1;
        assert_eq!(parse_header(&h).unwrap_err().category(), Category::Unsupported);
        assert_eq!(parse_header(b"LEAFWIRE").unwrap_err().offset(), Some(0));
    }
}

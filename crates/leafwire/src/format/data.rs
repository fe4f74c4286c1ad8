//! String, bytes and bignum blocks (spec §5.1): a varint length, then the content.

use super::numbers::read_varint;
use super::HEADER_LEN;
use crate::error::{Error, Result};

/// The content of the data block at `payload`.
#[inline]
pub fn block(buf: &[u8], payload: u64) -> Result<&[u8]> {
    let (start, end) = span(buf, payload)?;
    Ok(&buf[start..end])
}

/// Where the content of the data block at `payload` lies: (start, end) past its length.
/// Blocks under 128 bytes (a one-byte length) take the inline path.
#[inline]
pub fn span(buf: &[u8], payload: u64) -> Result<(usize, usize)> {
    if payload >= HEADER_LEN as u64 && payload < buf.len() as u64 {
        let pos = payload as usize;
        let len = buf[pos] as usize;
        // No overflow: pos < buf.len() and len < 128.
        if len < 0x80 && pos + 1 + len <= buf.len() {
            return Ok((pos + 1, pos + 1 + len));
        }
    }
    span_general(buf, payload)
}

#[cold]
fn span_general(buf: &[u8], payload: u64) -> Result<(usize, usize)> {
    let pos = usize::try_from(payload).ok().filter(|&p| p >= HEADER_LEN && p < buf.len())
        .ok_or_else(|| Error::malformed(payload, "data block offset outside the document"))?;
    let (len, at) = read_varint(buf, pos)?;
    let end = usize::try_from(len).ok().and_then(|l| at.checked_add(l)).filter(|&e| e <= buf.len())
        .ok_or_else(|| Error::malformed(payload, format!("block of {len} bytes runs past the end of the document")))?;
    Ok((at, end))
}

/// `bytes` as text if they are UTF-8. Most strings and keys in leafy data are short and
/// ASCII: a word-at-a-time ASCII scan settles those before the SIMD validator (which
/// falls back to a byte loop below 64 bytes) is called.
#[inline]
pub fn utf8(bytes: &[u8]) -> Option<&str> {
    let mut chunks = bytes.chunks_exact(8);
    let mut high = 0u64;
    for c in &mut chunks {
        high |= u64::from_le_bytes(c.try_into().unwrap());
    }
    let tail = chunks.remainder().iter().fold(0u8, |acc, &b| acc | b);
    if high & 0x8080_8080_8080_8080 == 0 && tail < 0x80 {
        // SAFETY: every byte is below 0x80, so the bytes are ASCII and therefore UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    simdutf8::basic::from_utf8(bytes).ok()
}

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

/// `bytes` as text if they are UTF-8. Long texts go to the SIMD validator; most strings and
/// keys in leafy data are short and ASCII, which a word-at-a-time scan settles; other short
/// texts are validated as one zero-padded SIMD block.
#[inline]
pub fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.len() >= SIMD_BLOCK {
        // Long texts, ASCII or not, are checked fastest by the vectorized validator.
        return simdutf8::basic::from_utf8(bytes).ok();
    }
    if high_bits(bytes) & 0x8080_8080_8080_8080 == 0 {
        // SAFETY: every byte is below 0x80, so the bytes are ASCII and therefore UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    // The validator checks inputs shorter than a block a byte at a time (about ten
    // instructions a byte): a short text is checked as one block, zero-padded. Zeros are
    // ASCII and complete any text that is valid, while a sequence cut short at the end of
    // the text stays invalid before a zero, so the block is valid exactly when the text is.
    let mut block = [0u8; SIMD_BLOCK];
    block[..bytes.len()].copy_from_slice(bytes);
    simdutf8::basic::from_utf8(&block).ok()?;
    // SAFETY: the text is valid UTF-8, as its padded block is.
    Some(unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// The text of the string block at `payload` in the common case, ASCII under `SIMD_BLOCK`
/// bytes with a one-byte length; `None` for any other block, valid or not (which
/// [`block`] and [`text`] then read).
#[inline(always)]
pub fn short_ascii(buf: &[u8], payload: u64) -> Option<&str> {
    if payload < HEADER_LEN as u64 || payload >= buf.len() as u64 {
        return None;
    }
    let pos = payload as usize;
    let len = buf[pos] as usize;
    // A length byte under 64 is the whole varint (no continuation bit).
    if len >= SIMD_BLOCK || pos + 1 + len > buf.len() {
        return None;
    }
    let bytes = &buf[pos + 1..pos + 1 + len];
    // SAFETY: every byte is below 0x80, so the bytes are ASCII and therefore UTF-8.
    (high_bits(bytes) & 0x8080_8080_8080_8080 == 0).then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// The content of the string block at `payload` as text: an error there unless UTF-8.
#[inline(always)]
pub fn text(content: &[u8], payload: u64) -> Result<&str> {
    utf8(content).ok_or_else(|| Error::malformed(payload, "string is not valid UTF-8"))
}

/// The input length from which the UTF-8 validator works a vector at a time.
const SIMD_BLOCK: usize = 64;

/// Every byte of `bytes` (shorter than a SIMD block) OR-ed into a word, eight at a time:
/// a text is ASCII when no high bit is set. The last word overlaps the one before, and
/// texts under eight bytes are read as two overlapping halves, so no byte is looked at
/// alone (ORing a byte twice changes nothing).
#[inline(always)]
fn high_bits(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    if n >= 8 {
        let mut high = word(n - 8);
        let mut at = 0;
        while at + 8 < n {
            high |= word(at);
            at += 8;
        }
        high
    } else if n >= 4 {
        (u32::from_le_bytes(bytes[..4].try_into().unwrap()) | u32::from_le_bytes(bytes[n - 4..].try_into().unwrap())) as u64
    } else if n >= 2 {
        (u16::from_le_bytes(bytes[..2].try_into().unwrap()) | u16::from_le_bytes(bytes[n - 2..].try_into().unwrap())) as u64
    } else {
        bytes.first().map_or(0, |&b| b as u64)
    }
}

/// `bytes` as a `String` if they are UTF-8, checked by [`utf8`] (vectorized: the standard
/// library's check costs about ten times as much on long texts such as a whole JSON output).
pub fn into_string(bytes: Vec<u8>) -> Option<String> {
    utf8(&bytes)?;
    // SAFETY: `utf8` just checked that the bytes are UTF-8.
    Some(unsafe { String::from_utf8_unchecked(bytes) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ASCII test sees one high byte at any position of any short length, and none
    /// in ASCII text.
    #[test]
    fn one_high_byte_is_seen_wherever_it_is() {
        for len in 0..SIMD_BLOCK {
            let mut text = vec![b'a'; len];
            assert!(utf8(&text).is_some() && high_bits(&text) & 0x8080_8080_8080_8080 == 0, "{len}");
            for at in 0..len {
                text[at] = 0xC3;
                assert_ne!(high_bits(&text) & 0x8080_8080_8080_8080, 0, "{len} {at}");
                assert!(utf8(&text).is_none(), "{len} {at}: a lone lead byte");
                text[at] = b'a';
            }
        }
    }

    /// `utf8` agrees with the standard library on every length around the block size,
    /// valid and invalid texts alike (cut sequences, lone continuations, overlongs,
    /// surrogates), ASCII or not.
    #[test]
    fn utf8_agrees_with_the_standard_check() {
        let pieces: [&[u8]; 12] =
            [b"a", "é".as_bytes(), "€".as_bytes(), "😀".as_bytes(), &[0x80], &[0xC3], &[0xE2, 0x82], &[0xF0, 0x9F, 0x98], &[0xC0, 0x80], &[0xED, 0xA0, 0x80], &[0xFF], &[0]];
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let target = (next() % 80) as usize;
            let mut text = Vec::new();
            while text.len() < target {
                // Mostly valid pieces, so that long valid texts occur too.
                let r = next() as usize;
                let piece = if r % 8 == 0 { pieces[4 + r / 8 % 8] } else { pieces[r / 8 % 4] };
                text.extend_from_slice(piece);
            }
            for cut in [text.len(), text.len().saturating_sub(1)] {
                let t = &text[..cut];
                assert_eq!(utf8(t).is_some(), std::str::from_utf8(t).is_ok(), "{t:?}");
            }
        }
    }
}

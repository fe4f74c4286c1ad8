//! Varints, fixed-width little-endian integers, widths and alignment (spec §§1, 3.2, 7).
//! Positions read from untrusted bytes go through the checked variants.

use crate::error::{Error, Result};

/// `pos` rounded up to a multiple of `to`, a power of two (every alignment of the format is
/// one). The caller knows `pos + to` cannot overflow (a position it computed itself);
/// positions read from a document use [`checked_align`].
#[inline(always)]
pub fn align(pos: usize, to: usize) -> usize {
    debug_assert!(to.is_power_of_two());
    (pos + to - 1) & !(to - 1)
}

/// [`align`] for positions read from untrusted bytes: `None` on overflow.
#[inline]
pub fn checked_align(pos: usize, to: usize) -> Option<usize> {
    debug_assert!(to.is_power_of_two());
    Some(pos.checked_add(to - 1)? & !(to - 1))
}

/// Reads an unsigned LEB128 varint at `pos` (at most 10 bytes, value < 2^64); returns the
/// value and the position after it.
pub fn read_varint(buf: &[u8], pos: usize) -> Result<(u64, usize)> {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    let mut p = pos;
    loop {
        let byte = *buf.get(p).ok_or_else(|| Error::malformed(p as u64, "truncated varint"))?;
        p += 1;
        let low = (byte & 0x7F) as u64;
        if shift == 63 && low > 1 {
            return Err(Error::malformed(pos as u64, "varint overflows 64 bits"));
        }
        value |= low << shift;
        if byte & 0x80 == 0 {
            return Ok((value, p));
        }
        shift += 7;
        if shift > 63 {
            return Err(Error::malformed(pos as u64, "varint longer than 10 bytes"));
        }
    }
}

/// A varint that is almost always one byte (counts, lengths): that case inline, the rest
/// out of line.
#[inline(always)]
pub fn read_small_varint(buf: &[u8], pos: usize) -> Result<(u64, usize)> {
    match buf.get(pos) {
        Some(&b) if b < 0x80 => Ok((b as u64, pos + 1)),
        _ => read_varint(buf, pos),
    }
}

/// Appends the varint of `value`.
pub fn write_varint(out: &mut (impl super::sink::ByteSink + ?Sized), value: u64) {
    let mut bytes = [0u8; 10];
    let n = put_varint(&mut bytes, value);
    out.extend_from_slice(&bytes[..n]);
}

/// Writes the varint of `value` at `out[0..]`; returns its length (at most 10).
#[inline]
pub fn put_varint(out: &mut [u8], mut value: u64) -> usize {
    let mut n = 0;
    while value >= 0x80 {
        out[n] = (value as u8) | 0x80;
        value >>= 7;
        n += 1;
    }
    out[n] = value as u8;
    n + 1
}

/// The longest varint: that of `u64::MAX`.
pub const MAX_VARINT_LEN: usize = 10;

/// Length in bytes of the varint of `value`.
#[inline]
pub fn varint_len(value: u64) -> usize {
    // One byte per started group of 7 bits; zero takes one byte.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// Reads a little-endian unsigned integer of `width` bytes (1, 2, 4 or 8) from `bytes` at
/// element index `i`. The caller has checked the bounds of the whole array (slice indexing
/// still guards against a mistake).
#[inline(always)]
pub fn read_uint(bytes: &[u8], width: usize, i: usize) -> u64 {
    match width {
        1 => bytes[i] as u64,
        2 => u16::from_le_bytes(bytes[i * 2..i * 2 + 2].try_into().unwrap()) as u64,
        4 => u32::from_le_bytes(bytes[i * 4..i * 4 + 4].try_into().unwrap()) as u64,
        _ => u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap()),
    }
}

/// Writes the low `width` bytes of `v`, little-endian, at byte position `at`.
#[inline(always)]
pub fn write_uint(buf: &mut [u8], at: usize, width: usize, v: u64) {
    buf[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

/// Sign-extends the low `width` bytes of `raw`.
#[inline(always)]
pub fn sign_extend(raw: u64, width: usize) -> i64 {
    let shift = 64 - 8 * width as u32;
    ((raw << shift) as i64) >> shift
}

/// The u32 at byte position `pos`, if it lies inside `buf`.
#[inline]
pub fn read_u32(buf: &[u8], pos: usize) -> Option<u32> {
    Some(u32::from_le_bytes(buf.get(pos..pos.checked_add(4)?)?.try_into().ok()?))
}

/// The smallest width in {1, 2, 4, 8} holding `v` as a signed integer.
#[inline]
pub fn signed_width(v: i64) -> usize {
    if v == v as i8 as i64 {
        1
    } else if v == v as i16 as i64 {
        2
    } else if v == v as i32 as i64 {
        4
    } else {
        8
    }
}

/// The smallest width in {1, 2, 4, 8} holding `v` as an unsigned integer.
#[inline]
pub fn unsigned_width(v: u64) -> usize {
    if v <= u8::MAX as u64 {
        1
    } else if v <= u16::MAX as u64 {
        2
    } else if v <= u32::MAX as u64 {
        4
    } else {
        8
    }
}

/// The 2-bit code of a width in {1, 2, 4, 8} (layout byte, spec §4).
#[inline]
pub fn log2_width(w: usize) -> u8 {
    w.trailing_zeros() as u8
}

/// Copies `src` (at most 64 bytes: a vector frame's elements, spec §14.5, or a short
/// string's content) to `dst` with a few moves of up to 16 bytes, the ones from the end overlapping those from the start,
/// instead of a call to `memcpy`, whose fixed cost is most of so short a copy. (There is
/// no loop: LLVM turns a copying loop back into a `memcpy` call.)
///
/// # Safety
/// `dst` must be valid for writes of `src.len()` bytes and not overlap `src`;
/// `src.len()` ≤ 64.
#[inline(always)]
pub unsafe fn copy_short(dst: *mut u8, src: &[u8]) {
    let (n, from) = (src.len(), src.as_ptr());
    debug_assert!(n <= 64);
    // SAFETY: every read is inside `src` and every write inside `dst[..n]` (n ≥ the
    // offset plus the width of each move).
    unsafe {
        let word = |at: usize| dst.add(at).cast::<u64>().write_unaligned(from.add(at).cast::<u64>().read_unaligned());
        let pair = |at: usize| dst.add(at).cast::<u128>().write_unaligned(from.add(at).cast::<u128>().read_unaligned());
        let half = |at: usize| dst.add(at).cast::<u32>().write_unaligned(from.add(at).cast::<u32>().read_unaligned());
        let quarter = |at: usize| dst.add(at).cast::<u16>().write_unaligned(from.add(at).cast::<u16>().read_unaligned());
        if n < 8 {
            // Without a loop or a call too: LLVM makes a variable-length copy a `memcpy`.
            if n >= 4 {
                half(0);
                half(n - 4);
            } else if n >= 2 {
                quarter(0);
                quarter(n - 2);
            } else if n == 1 {
                *dst = *from;
            }
        } else if n <= 16 {
            word(0);
            word(n - 8);
        } else if n <= 32 {
            pair(0);
            pair(n - 16);
        } else {
            pair(0);
            pair(16);
            pair(n - 32);
            pair(n - 16);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_copies_write_exactly_their_bytes() {
        for n in 0..=64usize {
            let src: Vec<u8> = (0..n as u8).map(|b| b.wrapping_mul(7) ^ 0x5a).collect();
            let mut dst = vec![0xeeu8; n + 16];
            // SAFETY: `dst` holds n + 16 bytes and does not overlap `src`.
            unsafe { copy_short(dst.as_mut_ptr().add(8), &src) };
            assert_eq!(&dst[8..8 + n], &src[..], "n = {n}");
            assert!(dst[..8].iter().chain(&dst[8 + n..]).all(|&b| b == 0xee), "n = {n}: wrote outside");
        }
    }

    #[test]
    fn varint_lengths_match_the_writer() {
        for v in [0, 1, 127, 128, 16383, 16384, u32::MAX as u64, u64::MAX >> 1, u64::MAX] {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            assert_eq!(read_varint(&out, 0).unwrap(), (v, out.len()));
        }
        assert_eq!(varint_len(u64::MAX), MAX_VARINT_LEN);
    }

    #[test]
    fn checked_align_refuses_overflow() {
        assert_eq!(checked_align(usize::MAX - 2, 8), None);
        assert_eq!(checked_align(9, 8), Some(16));
        assert_eq!(align(16, 8), 16);
    }
}

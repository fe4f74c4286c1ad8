//! The shared definitions of §5: zigzag, zvarint and LSB-first bit-packing.

use crate::format::numbers::write_varint;

#[inline]
pub(crate) fn zigzag(x: i64) -> u64 {
    ((x << 1) ^ (x >> 63)) as u64
}

#[inline]
pub(crate) fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Appends the varint of zigzag(x).
#[inline]
pub(crate) fn write_zvarint(out: &mut Vec<u8>, x: i64) {
    write_varint(out, zigzag(x));
}

/// Number of significant bits of `u` (0 for 0).
#[inline]
pub(crate) fn bitlen(u: u64) -> u32 {
    64 - u.leading_zeros()
}

/// ⌈n·w/8⌉, the byte length of `pack(n, w)`; `None` if it does not fit a usize.
#[inline]
pub(crate) fn packed_len(n: usize, w: u32) -> Option<usize> {
    let bits = (n as u128).checked_mul(w as u128)?;
    usize::try_from(bits.div_ceil(8)).ok()
}

#[inline]
fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Appends `pack(values.len(), w)`: value j at bits [j·w, j·w + w), least significant bit
/// first; pad bits zero. Bits of a value above `w` are dropped (callers pass values that fit).
pub(crate) fn pack(values: &[u64], w: u32, out: &mut Vec<u8>) {
    pack_iter(values.iter().copied(), values.len(), w, out)
}

/// [`pack`] of the `n` values `values` yields, made as they are packed (all of them, even
/// for w = 0).
#[inline]
pub(crate) fn pack_iter(values: impl Iterator<Item = u64>, n: usize, w: u32, out: &mut Vec<u8>) {
    debug_assert!(w <= 64);
    if w == 0 {
        // Nothing to store, but the values are still made: callers collect as they go.
        values.take(n).for_each(drop);
        return;
    }
    let m = mask(w);
    let start = out.len();
    let len = packed_len(n, w).expect("a packed length that fits memory");
    // Whole words are stored into room made beforehand (8 bytes over, cut off at the end),
    // not appended: the append's capacity check was a third of the loop.
    out.resize(start + len + 8, 0);
    let words = &mut out[start..];
    let (mut acc, mut held, mut at) = (0u64, 0u32, 0usize);
    for v in values.take(n) {
        let v = v & m;
        acc |= v << held;
        held += w;
        if held >= 64 {
            words[at..at + 8].copy_from_slice(&acc.to_le_bytes());
            at += 8;
            held -= 64;
            // The bits of v that did not fit the word start the next one.
            acc = if held == 0 { 0 } else { v >> (w - held) };
        }
    }
    words[at..at + 8].copy_from_slice(&acc.to_le_bytes());
    out.truncate(start + len);
}

/// The little-endian u64 at byte `at`, zero beyond the end of `bytes`.
#[inline]
fn load(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(s) => u64::from_le_bytes(s.try_into().unwrap()),
        None => {
            let mut b = [0u8; 8];
            let rest = bytes.get(at..).unwrap_or(&[]);
            b[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(b)
        }
    }
}

/// Appends the n values of `pack(n, w)` held in `bytes` (which the caller has checked to
/// hold at least ⌈n·w/8⌉ bytes; missing bytes read as zero, so this cannot panic).
pub(crate) fn unpack(bytes: &[u8], n: usize, w: u32, out: &mut Vec<u64>) {
    debug_assert!(w <= 64);
    // Extending from ranges (whose length is known) writes into reserved room with no
    // capacity test per value.
    out.reserve(n);
    if w == 0 {
        out.resize(out.len() + n, 0);
        return;
    }
    if w == 8 {
        out.extend((0..n).map(|j| bytes.get(j).map_or(0, |&b| b as u64)));
        return;
    }
    let m = mask(w);
    let w = w as usize;
    // Up to 56 bits, a value and its shift fit one 8-byte load: the values whose load
    // lies inside `bytes` take one each, with no test for a ninth byte.
    let whole = match w <= 56 && bytes.len() >= 8 {
        true => ((bytes.len() - 8) * 8 / w + 1).min(n),
        false => 0,
    };
    out.extend((0..whole).map(|j| {
        let bit = j * w;
        let at = bit >> 3;
        let word = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        (word >> (bit & 7)) & m
    }));
    out.extend((whole..n).map(|j| {
        let bit = j * w;
        let at = bit >> 3;
        let shift = (bit & 7) as u32;
        let mut x = load(bytes, at) >> shift;
        if shift as usize + w > 64 {
            x |= (*bytes.get(at + 8).unwrap_or(&0) as u64) << (64 - shift);
        }
        x & m
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_pins() {
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(-2), 3);
        assert_eq!(zigzag(i64::MAX), u64::MAX - 1);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
        for x in [0, 1, -1, 12345, -98765, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(x)), x);
        }
    }

    #[test]
    fn pack_is_lsb_first() {
        // w = 3: values 1, 2, 3, 4, 5 → bits 001 010 011 100 101 from bit 0 up:
        // byte 0 = b10_010_001 = 0xD1, byte 1 = b1_100_011_0 >> ... computed by hand below.
        let mut out = Vec::new();
        pack(&[1, 2, 3, 4, 5], 3, &mut out);
        // bit string (LSB first): 1,0,0, 0,1,0, 1,1,0, 0,0,1, 1,0,1 (+ 1 pad bit)
        // byte 0 bits 0..7 = 1,0,0,0,1,0,1,1 → 0b1101_0001 = 0xD1
        // byte 1 bits 0..7 = 0,0,0,1,1,0,1,0 → 0b0101_1000 = 0x58
        assert_eq!(out, vec![0xD1, 0x58]);
        let mut back = Vec::new();
        unpack(&out, 5, 3, &mut back);
        assert_eq!(back, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn pack_round_trips_every_width() {
        for w in 0..=64u32 {
            for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 200] {
                let vals: Vec<u64> = (0..n as u64).map(|j| j.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask(w)).collect();
                // Packing appends: what is before it stays.
                let mut out = vec![0xAA];
                pack(&vals, w, &mut out);
                assert_eq!(out.remove(0), 0xAA, "w={w} n={n}");
                assert_eq!(out.len(), packed_len(n, w).unwrap(), "w={w} n={n}");
                let mut back = Vec::new();
                unpack(&out, n, w, &mut back);
                assert_eq!(back, vals, "w={w} n={n}");
                // Cut short, the values wholly inside the bytes left come back, the rest
                // are read as if the missing bytes were zero, and nothing panics.
                let cut = out.len() / 2;
                let mut short = Vec::new();
                unpack(&out[..cut], n, w, &mut short);
                assert_eq!(short.len(), n);
                let inside = if w == 0 { n } else { cut * 8 / w as usize };
                assert_eq!(short[..inside], vals[..inside], "w={w} n={n}");
            }
        }
    }

    #[test]
    fn packed_len_overflow_is_none() {
        assert_eq!(packed_len(usize::MAX, 64).map(|_| ()), if usize::BITS >= 64 { None } else { Some(()) });
        assert_eq!(packed_len(3, 0), Some(0));
        assert_eq!(packed_len(3, 3), Some(2));
    }
}

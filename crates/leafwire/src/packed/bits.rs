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
    pack_map(values, |v| v, w, out)
}

/// [`pack`] of `f` of each of `values`, made as they are packed (the high bits of each
/// dropped).
#[inline]
pub(crate) fn pack_map<T: Copy>(values: &[T], f: impl Fn(T) -> u64, w: u32, out: &mut Vec<u8>) {
    pack_map_seeing(values, f, w, out, |_, _| {})
}

/// [`pack_map`] that also shows `seen` each position and its value before it is masked
/// (patched finds its patches so, without making the values a second time).
#[inline]
pub(crate) fn pack_map_seeing<T: Copy>(
    values: &[T],
    f: impl Fn(T) -> u64,
    w: u32,
    out: &mut Vec<u8>,
    mut seen: impl FnMut(usize, u64),
) {
    debug_assert!(w <= 64);
    if w == 0 {
        values.iter().enumerate().for_each(|(j, &x)| seen(j, f(x)));
        return;
    }
    let start = out.len();
    let len = packed_len(values.len(), w).expect("a packed length that fits memory");
    // Whole words are stored into room made beforehand (8 bytes over, cut off at the end),
    // not appended: the append's capacity check was a third of the loop.
    out.resize(start + len + 8, 0);
    let words = &mut out[start..];
    // Whole blocks of 64 values fill w words each: gathered into a buffer, the unrolled
    // kernel of width w packs them. The rest, fewer than 64, go one at a time.
    let blocks = values.chunks_exact(BLOCK);
    let rest = blocks.remainder();
    let (kernel, block_bytes) = (PACKERS[w as usize], 8 * w as usize);
    let mut block = [0u64; BLOCK];
    let mut at = 0usize;
    for chunk in blocks {
        for (slot, &x) in block.iter_mut().zip(chunk) {
            *slot = f(x);
        }
        kernel(&block, &mut words[at..at + block_bytes]);
        block.iter().enumerate().for_each(|(k, &v)| seen(at / block_bytes * BLOCK + k, v));
        at += block_bytes;
    }
    let m = mask(w);
    let (mut acc, mut held) = (0u64, 0u32);
    for (k, &x) in rest.iter().enumerate() {
        let v = f(x);
        seen(values.len() - rest.len() + k, v);
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

/// Values per block of the unrolled kernels: 64 values of width w take exactly w words.
const BLOCK: usize = 64;

/// The kernels of `pack` and `unpack` for whole blocks, by width.
type Packer = fn(&[u64; BLOCK], &mut [u8]);
type Unpacker = fn(&[u8], &mut [u64; BLOCK]);
seq_macro::seq!(W in 0..=64 {
    const PACKERS: [Packer; 65] = [#(pack_block::<W>,)*];
    const UNPACKERS: [Unpacker; 65] = [#(unpack_block::<W>,)*];
});

/// Packs a block of 64 values, each masked to `W` bits, into the `8·W` bytes of `out`
/// (the layout of `pack`). Unrolled, every shift and word index is a constant: a few
/// instructions a value where the general loop took nineteen.
fn pack_block<const W: usize>(block: &[u64; BLOCK], out: &mut [u8]) {
    let m = mask(W as u32);
    let mut words = [0u64; BLOCK];
    seq_macro::seq!(J in 0..64 {
        {
            let (at, shift) = (J * W / 64, J * W % 64);
            let v = block[J] & m;
            if W > 0 {
                words[at] |= v << shift;
                if shift + W > 64 {
                    words[at + 1] |= v >> (64 - shift);
                }
            }
        }
    });
    for (bytes, word) in out[..8 * W].chunks_exact_mut(8).zip(&words) {
        bytes.copy_from_slice(&word.to_le_bytes());
    }
}

/// Unpacks the block of 64 values of width `W` held in the first `8·W` bytes of `bytes`.
fn unpack_block<const W: usize>(bytes: &[u8], out: &mut [u64; BLOCK]) {
    let m = mask(W as u32);
    let mut words = [0u64; BLOCK + 1];
    for (word, b) in words.iter_mut().zip(bytes[..8 * W].chunks_exact(8)) {
        *word = u64::from_le_bytes(b.try_into().unwrap());
    }
    seq_macro::seq!(J in 0..64 {
        {
            let (at, shift) = (J * W / 64, J * W % 64);
            let mut v = words[at] >> shift;
            if shift + W > 64 {
                v |= words[at + 1] << (64 - shift);
            }
            out[J] = v & m;
        }
    });
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
    // Whole blocks of 64 values whose 8·w bytes are all there: the unrolled kernel.
    let blocks = (n / BLOCK).min(bytes.len() / (8 * w as usize));
    let kernel = UNPACKERS[w as usize];
    let mut block = [0u64; BLOCK];
    for b in 0..blocks {
        kernel(&bytes[8 * w as usize * b..], &mut block);
        out.extend_from_slice(&block);
    }
    let (first, bytes) = (blocks * BLOCK, &bytes[8 * w as usize * blocks..]);
    let (n, m, w) = (n - first, mask(w), w as usize);
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

    /// The unrolled kernels against the layout's definition, bit by bit: value j's bit b at
    /// bit j·w + b of the stream (round trips alone would pass kernels wrong both ways).
    #[test]
    fn kernels_lay_out_bits_as_the_definition() {
        for w in 1..=64u32 {
            let n = 3 * BLOCK + 5;
            let vals: Vec<u64> = (0..n as u64).map(|j| (j + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93) & mask(w)).collect();
            let mut expected = vec![0u8; packed_len(n, w).unwrap()];
            for (j, &v) in vals.iter().enumerate() {
                for b in 0..w as usize {
                    if v >> b & 1 == 1 {
                        let bit = j * w as usize + b;
                        expected[bit / 8] |= 1 << (bit % 8);
                    }
                }
            }
            let mut out = Vec::new();
            pack(&vals, w, &mut out);
            assert_eq!(out, expected, "w={w}");
            let mut back = Vec::new();
            unpack(&expected, n, w, &mut back);
            assert_eq!(back, vals, "w={w}");
        }
    }

    #[test]
    fn packed_len_overflow_is_none() {
        assert_eq!(packed_len(usize::MAX, 64).map(|_| ()), if usize::BITS >= 64 { None } else { Some(()) });
        assert_eq!(packed_len(3, 0), Some(0));
        assert_eq!(packed_len(3, 3), Some(2));
    }
}

//! Float codec 0x13, split (§5.2; ALP-RD for "real doubles"): the top L bits of each
//! double (sign, exponent, a few mantissa bits) take few distinct values, so they are
//! dictionary-coded (at most 8 entries, the rest patched) and the low 64 − L bits are
//! packed raw.

use super::bits::{bitlen, pack, unpack};
use super::codec::FLOAT_SPLIT;
use super::{PatchPositions, Reader};
use crate::error::Result;
use crate::format::numbers::write_varint;

const MAX_DICT: usize = 8;

/// The top 16 bits of each value, sorted: the left parts at any l ≤ 16 are these shifted
/// right, which keeps their order, so one sort serves every l.
fn sorted_tops(values: &[f64]) -> Vec<u16> {
    let mut tops: Vec<u16> = values.iter().map(|v| (v.to_bits() >> 48) as u16).collect();
    tops.sort_unstable();
    tops
}

/// The dictionary of left parts at `l`: the (at most 8) most frequent, ties by value; and
/// how many values it holds.
fn left_dict(tops: &[u16], l: u32) -> (Vec<u16>, usize) {
    let shift = 16 - l;
    let mut counts: Vec<(usize, u16)> = Vec::new();
    for ch in tops.chunk_by(|a, b| a >> shift == b >> shift) {
        counts.push((ch.len(), ch[0] >> shift));
    }
    let order = |a: &(usize, u16), b: &(usize, u16)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
    if counts.len() > MAX_DICT {
        counts.select_nth_unstable_by(MAX_DICT - 1, order);
        counts.truncate(MAX_DICT);
    }
    counts.sort_unstable_by(order);
    let inside = counts.iter().map(|c| c.0).sum();
    (counts.into_iter().map(|(_, v)| v).collect(), inside)
}

/// Estimated size in bits of a split encoding at `l`.
fn cost(tops: &[u16], l: u32) -> usize {
    let (dict, inside) = left_dict(tops, l);
    let dw = bitlen(dict.len() as u64 - 1) as usize;
    tops.len() * (dw + 64 - l as usize) + (tops.len() - inside) * 32 + dict.len() * 16
}

/// The L in 1..=16 with the smallest estimated size (the smallest L on ties).
pub(crate) fn best_l(values: &[f64]) -> u8 {
    let tops = sorted_tops(values);
    (1..=16u32).min_by_key(|&l| cost(&tops, l)).unwrap_or(16) as u8
}

/// Writes the split stream of `values` (not empty) at `l` ∈ 1..=16.
pub(crate) fn write_split(values: &[f64], l: u8, out: &mut Vec<u8>) {
    let l = l.clamp(1, 16) as u32;
    let (dict, _) = left_dict(&sorted_tops(values), l);
    let dw = bitlen(dict.len() as u64 - 1);
    out.push(FLOAT_SPLIT);
    out.push(l as u8);
    out.push(dict.len() as u8);
    for d in &dict {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out.push(dw as u8);
    let mut codes = Vec::with_capacity(values.len());
    let mut patches = Vec::new();
    for (j, v) in values.iter().enumerate() {
        let left = (v.to_bits() >> (64 - l)) as u16;
        match dict.iter().position(|&d| d == left) {
            Some(c) => codes.push(c as u64),
            None => {
                codes.push(0);
                patches.push((j, left));
            }
        }
    }
    pack(&codes, dw, out);
    let right_mask = if l == 0 { u64::MAX } else { u64::MAX >> l };
    let rights: Vec<u64> = values.iter().map(|v| v.to_bits() & right_mask).collect();
    pack(&rights, 64 - l, out);
    write_varint(out, patches.len() as u64);
    let mut prev = 0;
    for (k, &(j, left)) in patches.iter().enumerate() {
        write_varint(out, if k == 0 { j } else { j - prev } as u64);
        out.extend_from_slice(&left.to_le_bytes());
        prev = j;
    }
}

/// Appends the n values of a split stream whose codec byte the caller has read.
pub(crate) fn read_split(r: &mut Reader, n: usize, out: &mut Vec<f64>) -> Result<()> {
    let l_at = r.pos;
    let l = r.u8()? as u32;
    if !(1..=16).contains(&l) {
        return Err(r.err(l_at, "split left width not in 1..=16"));
    }
    let d = r.u8()? as usize;
    if !(1..=MAX_DICT).contains(&d) {
        return Err(r.err(l_at + 1, "split dictionary size not in 1..=8"));
    }
    let dict_at = r.pos;
    let dict: Vec<u64> = r.take(2 * d)?.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u64).collect();
    if dict.iter().any(|&x| x >> l != 0) {
        return Err(r.err(dict_at, "split left value wider than L"));
    }
    let dw_at = r.pos;
    let dw = r.u8()? as u32;
    if dw != bitlen(d as u64 - 1) {
        return Err(r.err(dw_at, "split code width is not bitlen(d - 1)"));
    }
    let code_bytes = r.packed(n, dw)?;
    let right_bytes = r.packed(n, 64 - l)?;
    let mut codes = Vec::new();
    unpack(code_bytes, n, dw, &mut codes);
    let mut lefts = Vec::with_capacity(n);
    for &c in &codes {
        lefts.push(*dict.get(c as usize).ok_or_else(|| r.err(dw_at + 1, "split code out of range"))?);
    }
    let m = r.count(0, n, "patch count above n")?;
    let mut positions = PatchPositions::new(n);
    for _ in 0..m {
        let gap_at = r.pos;
        let g = r.varint()?;
        let p = positions.next(g, r, gap_at)?;
        let b = r.take(2)?;
        let left = u16::from_le_bytes([b[0], b[1]]) as u64;
        if left >> l != 0 {
            return Err(r.err(gap_at, "split left value wider than L"));
        }
        lefts[p] = left;
    }
    let mut rights = Vec::new();
    unpack(right_bytes, n, 64 - l, &mut rights);
    out.reserve(n);
    out.extend(lefts.iter().zip(&rights).map(|(&left, &right)| f64::from_bits(left << (64 - l) | right)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::float::{decode_floats, encode_floats, FloatCodec};
    use super::super::Limits;

    /// A byte vector written by hand from §5.2: L = 12; lefts 0x3FF (1.0, twice), 0x400
    /// (3.0) and 0xC00 (−2.0), by frequency then value; dw = 2, codes 0, 2, 0, 1 →
    /// 0 | 2<<2 | 0<<4 | 1<<6 = 0x48; rights of 52 bits, only 3.0's bit 51 set (bit 207 of
    /// the string: byte 25, bit 7); no patches.
    #[test]
    fn fixed_vector() {
        let v = [1.0, -2.0, 1.0, 3.0];
        let mut b = vec![0x13, 12, 3, 0xFF, 0x03, 0x00, 0x04, 0x00, 0x0C, 2, 0x48];
        let mut rights = vec![0u8; 26];
        rights[25] = 0x80;
        b.extend(rights);
        b.push(0);
        let mut out = Vec::new();
        encode_floats(&v, &FloatCodec::Split { l: 12 }, &mut out).unwrap();
        assert_eq!(out, b);
        let back = decode_floats(&b, 0, 4, &Limits::default()).unwrap().0;
        assert_eq!(back, v);
    }
}

//! Integer codec 0x05, patched bit-packing (§5.1; FastLanes/BtrBlocks' "bit-packing with
//! exceptions"): zigzag of the difference to a reference, the low w bits of every value
//! packed, and the values wider than w patched with their high bits.

use super::bits::{bitlen, pack, unpack, unzigzag, write_zvarint, zigzag};
use super::codec::INT_PATCHED;
use super::{PatchPositions, Reader};
use crate::error::Result;
use crate::format::numbers::write_varint;

/// Patched bit-packing (FastLanes/BtrBlocks' exceptions): reference at the median, zigzag
/// of the difference, w minimising n·w + patches·(maxw − w + bitlen(n)).
pub(crate) fn write_patched(values: &[i64], out: &mut Vec<u8>) {
    let n = values.len();
    let mut sorted = values.to_vec();
    let (_, &mut reference, _) = sorted.select_nth_unstable(n / 2);
    let u: Vec<u64> = values.iter().map(|&x| zigzag(x.wrapping_sub(reference))).collect();
    let mut hist = [0usize; 65];
    for &x in &u {
        hist[bitlen(x) as usize] += 1;
    }
    let maxw = (0..=64).rev().find(|&b| hist[b] > 0).unwrap_or(0);
    let pos_bits = bitlen(n as u64) as usize;
    let (mut best_w, mut best_cost, mut above) = (0usize, usize::MAX, n);
    for (w, &count) in hist.iter().enumerate().take(maxw + 1) {
        above -= count;
        let cost = n * w + above * (maxw - w + pos_bits) + if above > 0 { 16 } else { 0 };
        if cost < best_cost {
            (best_w, best_cost) = (w, cost);
        }
    }
    let w = best_w as u32;
    let low_mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    out.push(INT_PATCHED);
    write_zvarint(out, reference);
    out.push(w as u8);
    let lows: Vec<u64> = u.iter().map(|&x| x & low_mask).collect();
    pack(&lows, w, out);
    let mut gaps = Vec::new();
    let mut highs = Vec::new();
    let mut prev = 0usize;
    for (j, &x) in u.iter().enumerate() {
        if bitlen(x) > w {
            gaps.push((if gaps.is_empty() { j } else { j - prev }) as u64);
            highs.push(x >> w);
            prev = j;
        }
    }
    write_varint(out, gaps.len() as u64);
    if !gaps.is_empty() {
        let pw = bitlen(gaps.iter().copied().max().unwrap_or(0));
        let hw = bitlen(highs.iter().copied().max().unwrap_or(0));
        out.push(pw as u8);
        out.push(hw as u8);
        pack(&gaps, pw, out);
        pack(&highs, hw, out);
    }
}

/// Appends the n values of a patched stream whose codec byte the caller has read.
pub(crate) fn read_patched(r: &mut Reader, n: usize, out: &mut Vec<i64>) -> Result<()> {
    let reference = r.zvarint()?;
    let w_at = r.pos;
    let w = r.u8()? as u32;
    let lows = r.packed(n, w)?;
    let mut u = Vec::new();
    unpack(lows, n, w, &mut u);
    let m = r.count(0, n, "patch count above n")?;
    if m > 0 {
        let pw = r.u8()? as u32;
        let hw = r.u8()? as u32;
        if w + hw > 64 {
            return Err(r.err(w_at, "patched widths w + hw above 64"));
        }
        let gaps_at = r.pos;
        let gap_bytes = r.packed(m, pw)?;
        let high_bytes = r.packed(m, hw)?;
        let (mut gaps, mut highs) = (Vec::new(), Vec::new());
        unpack(gap_bytes, m, pw, &mut gaps);
        unpack(high_bytes, m, hw, &mut highs);
        let mut positions = PatchPositions::new(n);
        for (&g, &h) in gaps.iter().zip(&highs) {
            let p = positions.next(g, r, gaps_at)?;
            if hw > 0 {
                u[p] |= h << w;
            }
        }
    }
    out.reserve(n);
    out.extend(u.iter().map(|&x| reference.wrapping_add(unzigzag(x))));
    Ok(())
}

//! Integer codec 0x05, patched bit-packing (§5.1; FastLanes/BtrBlocks' "bit-packing with
//! exceptions"): zigzag of the difference to a reference, the low w bits of every value
//! packed, and the values wider than w patched with their high bits.

use super::bits::{bitlen, pack, pack_map_seeing, packed_len, unpack, unzigzag, write_zvarint, zigzag};
use super::codec::INT_PATCHED;
use super::{PatchPositions, Reader};
use crate::error::Result;
use crate::format::numbers::{varint_len, write_varint};

/// The parameters of a page's patched stream (FastLanes/BtrBlocks' exceptions): reference
/// near the median (`median_estimate`), zigzag of the difference, w minimising n·w +
/// patches·(maxw − w + bitlen(n)). Made once; the selector asks its length and writes only
/// the winner.
#[derive(Clone, Copy)]
pub(crate) struct Patched {
    reference: i64,
    w: u32,
    /// How many values are wider than w, the widest gap between their positions and the
    /// widest of their high bits.
    patches: usize,
    gap_width: u32,
    high_width: u32,
}

/// The reference: the median of `values`, or, for more than `MEDIAN_SAMPLE` values, the
/// median of `MEDIAN_SAMPLE` of them spread evenly over the page (any reference gives a
/// valid stream; one near the middle keeps the differences narrow, and a page's median is
/// otherwise a selection over all of it for every stream the selector sizes).
pub(crate) fn median_estimate(values: &[i64]) -> i64 {
    let n = values.len();
    let mut picked = [0i64; MEDIAN_SAMPLE];
    let picked = if n <= MEDIAN_SAMPLE {
        picked[..n].copy_from_slice(values);
        &mut picked[..n]
    } else {
        for (i, p) in picked.iter_mut().enumerate() {
            *p = values[i * n / MEDIAN_SAMPLE];
        }
        &mut picked[..]
    };
    let middle = picked.len() / 2;
    *picked.select_nth_unstable(middle).1
}

const MEDIAN_SAMPLE: usize = 127;

/// Patched's width is chosen on every eighth value of pages of more than 1024.
const HISTOGRAM_STRIDE: usize = 8;
const HISTOGRAM_SAMPLED_ABOVE: usize = 1024;

/// How many of a page's values need each bit length (0–64) as zigzag(x − reference):
/// what patched's width is chosen from.
pub(crate) type Histogram = [usize; 65];

/// Adds `x`, at `reference`, to `hist`.
#[inline]
pub(crate) fn count(hist: &mut Histogram, x: i64, reference: i64) {
    hist[bitlen(zigzag(x.wrapping_sub(reference))) as usize] += 1;
}

impl Patched {
    pub fn plan(values: &[i64]) -> Patched {
        let reference = median_estimate(values);
        let mut hist = [0usize; 65];
        values.iter().for_each(|&x| count(&mut hist, x, reference));
        Patched::choose(reference, &hist, values.len()).with_gaps(values)
    }

    /// The plan for n values whose histogram at `reference` is `hist`, but for the width of
    /// the gaps between patches, which takes a pass over the values (`with_gaps`); until
    /// then it is 0, and `len` a lower bound.
    pub fn choose(reference: i64, hist: &Histogram, n: usize) -> Patched {
        let maxw = (0..=64).rev().find(|&b| hist[b] > 0).unwrap_or(0);
        let pos_bits = bitlen(n as u64) as usize;
        let (mut best_w, mut best_cost, mut best_above, mut above) = (0usize, usize::MAX, 0, n);
        for (w, &count) in hist.iter().enumerate().take(maxw + 1) {
            above -= count;
            let cost = n * w + above * (maxw - w + pos_bits) + if above > 0 { 16 } else { 0 };
            if cost < best_cost {
                (best_w, best_cost, best_above) = (w, cost, above);
            }
        }
        // A patch's high bits are its bits above w: the widest is maxw − w wide.
        let high_width = if best_above > 0 { (maxw - best_w) as u32 } else { 0 };
        Patched { reference, w: best_w as u32, patches: best_above, gap_width: 0, high_width }
    }

    /// The plan for `values` at `reference` made from the histogram of every
    /// `HISTOGRAM_STRIDE`-th value when there are more than `HISTOGRAM_SAMPLED_ABOVE`: its
    /// width is as good as the whole page's (to within the sample's error), its `len` an
    /// estimate, and the histogram costs an eighth of a pass, not a pass, on every page the
    /// selector sizes. `write` measures what it writes.
    pub fn sampled(values: &[i64], reference: i64) -> Patched {
        let n = values.len();
        if n <= HISTOGRAM_SAMPLED_ABOVE {
            let mut hist = [0usize; 65];
            values.iter().for_each(|&x| count(&mut hist, x, reference));
            return Patched::choose(reference, &hist, n);
        }
        let mut hist = [0usize; 65];
        values.iter().step_by(HISTOGRAM_STRIDE).for_each(|&x| count(&mut hist, x, reference));
        let m = n.div_ceil(HISTOGRAM_STRIDE);
        let mut plan = Patched::choose(reference, &hist, m);
        // Chosen for m values, costed for n: the width stays, the patches scale.
        plan.patches = (plan.patches * n).div_ceil(m);
        plan
    }

    /// The plan with the width of its gaps measured on `values`.
    pub fn with_gaps(mut self, values: &[i64]) -> Patched {
        if self.patches > 0 {
            let mut gap_width = 0;
            self.for_each_patch(values, |gap, _| gap_width = gap_width.max(bitlen(gap)));
            self.gap_width = gap_width;
        }
        self
    }

    /// The plan with its gaps as wide as gaps between positions below n can be: its `len`
    /// is then an upper bound.
    pub fn with_widest_gaps(mut self, n: usize) -> Patched {
        if self.patches > 0 {
            self.gap_width = bitlen(n.saturating_sub(1) as u64);
        }
        self
    }

    /// Calls `f` with the gap and high bits of each value wider than w, in order.
    fn for_each_patch(&self, values: &[i64], mut f: impl FnMut(u64, u64)) {
        if self.w >= 64 {
            return;
        }
        let mut prev = None;
        for (j, &x) in values.iter().enumerate() {
            let u = zigzag(x.wrapping_sub(self.reference));
            if u >> self.w != 0 {
                f(prev.map_or(j, |p| j - p) as u64, u >> self.w);
                prev = Some(j);
            }
        }
    }

    /// The stream's length in bytes for `n` values.
    pub fn len(&self, n: usize) -> usize {
        let bits = |m: usize, w: u32| packed_len(m, w).unwrap_or(usize::MAX);
        let head = 1 + varint_len(zigzag(self.reference)) + 1 + bits(n, self.w) + varint_len(self.patches as u64);
        if self.patches == 0 {
            return head;
        }
        head + 2 + bits(self.patches, self.gap_width) + bits(self.patches, self.high_width)
    }

    pub fn write(&self, values: &[i64], out: &mut Vec<u8>) {
        let w = self.w;
        out.push(INT_PATCHED);
        write_zvarint(out, self.reference);
        out.push(w as u8);
        // The low bits packed (`pack_map` drops the high ones), the patches found among
        // the values as the packing shows them.
        let (mut gaps, mut highs) = (Vec::with_capacity(self.patches), Vec::with_capacity(self.patches));
        let mut prev = None;
        let zigzagged = |x: i64| zigzag(x.wrapping_sub(self.reference));
        pack_map_seeing(values, zigzagged, w, out, |j, u| {
            if w < 64 && u >> w != 0 {
                gaps.push(prev.map_or(j, |p| j - p) as u64);
                highs.push(u >> w);
                prev = Some(j);
            }
        });
        // Count and widths measured here, not taken from the plan, which may have been made
        // on a sample of the values (`sampled`) or with its gaps bounded.
        write_varint(out, gaps.len() as u64);
        if !gaps.is_empty() {
            let widest = |xs: &[u64]| xs.iter().map(|&x| bitlen(x)).max().unwrap_or(0);
            let (gap_width, high_width) = (widest(&gaps), widest(&highs));
            out.push(gap_width as u8);
            out.push(high_width as u8);
            pack(&gaps, gap_width, out);
            pack(&highs, high_width, out);
        }
    }
}

/// Writes `values` as a patched stream.
pub(crate) fn write_patched(values: &[i64], out: &mut Vec<u8>) {
    Patched::plan(values).write(values, out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_the_median_of_small_pages_and_of_a_spread_sample_of_large_ones() {
        let mut next = crate::testing::xorshift(0x5851_F42D_4C95_7F2D);
        for n in [1usize, 2, 5, 126, 127, 128, 640, 4096] {
            let values: Vec<i64> = (0..n).map(|_| (next() % 1000) as i64 - 500).collect();
            let median = |v: &[i64]| {
                let mut sorted = v.to_vec();
                sorted.sort_unstable();
                sorted[sorted.len() / 2]
            };
            let expected = match n <= MEDIAN_SAMPLE {
                true => median(&values),
                false => median(&(0..MEDIAN_SAMPLE).map(|i| values[i * n / MEDIAN_SAMPLE]).collect::<Vec<_>>()),
            };
            assert_eq!(median_estimate(&values), expected, "n = {n}");
            assert_eq!(Patched::plan(&values).reference, expected, "n = {n}");
        }
    }
}

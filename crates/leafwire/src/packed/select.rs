//! The sampling selector of §6 (BtrBlocks' method): statistics on the whole page, every
//! candidate the statistics allow encoded on a sample of 10 runs of 64 values spread over
//! the page (its nested streams chosen the same way, recursively), the smallest wins, and
//! plain when nothing beats it. Plain and FOR are sized exactly on the whole page, patched
//! planned on every eighth value of a large one and measured as it is written. The
//! winner is written on the whole page with the codecs its trial took (packed.md, note
//! 16), so the search runs on the sample only. The sample positions depend on n only, so
//! the output is a function of the input.

use std::borrow::Cow;

use super::bits::{bitlen, zigzag};
use super::codec::*;
use super::float::{decimal_of, encode_floats_at, residual_parts, split_residual, FloatCodec};
use super::int::{encode_at, for_len_of, min_max, plain_len_of, run_count, write_constant, write_for, write_plain, IntCodec};
use super::patched::{self, Patched};
use super::string::{encode_strings_at, hex_flags, numeric_parts, StrCodec};
use super::{not_representable, MAX_NESTING};
use crate::error::Result;

const SAMPLE_RUNS: usize = 10;
const SAMPLE_RUN: usize = 64;
/// Float exponents are ranked on every `RANKING_STRIDE`-th value of the sample.
const RANKING_STRIDE: usize = 5;

/// Pages of up to this many values are their own sample. Up to twice the sample's size,
/// trying candidates on the whole page costs less than trying them on the sample and then
/// writing the winner again (and chooses exactly).
const WHOLE_PAGE_SAMPLE: usize = 2 * SAMPLE_RUNS * SAMPLE_RUN;

/// The sample of a page of `values.len()` values: the whole page up to 1280 values, else
/// 10 runs of 64 starting at r·(n − 64) / 9 (integer division), r = 0…9.
pub(crate) fn sample<T: Clone>(values: &[T]) -> Cow<'_, [T]> {
    let n = values.len();
    if n <= WHOLE_PAGE_SAMPLE {
        return Cow::Borrowed(values);
    }
    let mut out = Vec::with_capacity(SAMPLE_RUNS * SAMPLE_RUN);
    for r in 0..SAMPLE_RUNS {
        let s = r * (n - SAMPLE_RUN) / (SAMPLE_RUNS - 1);
        out.extend_from_slice(&values[s..s + SAMPLE_RUN]);
    }
    Cow::Owned(out)
}

/// Encoded size of `f`'s output, scaled from the sample to the whole page.
fn scaled(len: usize, sample: usize, n: usize) -> usize {
    ((len as u128 * n as u128) / sample.max(1) as u128) as usize
}

/// A candidate encoded on the sample: its size, and, when `whole` (the sample is the
/// whole page), its bytes, which are then the page's encoding under that candidate: the
/// winner is not encoded a second time. Also what `f` returns: the codec it took.
fn trial<C>(whole: bool, f: impl FnOnce(&mut Vec<u8>) -> Result<C>) -> Option<(usize, Option<Vec<u8>>, C)> {
    let mut buf = Vec::new();
    let taken = f(&mut buf).ok()?;
    Some((buf.len(), whole.then_some(buf), taken))
}

/// The winner's bytes on the whole page: those of its trial if kept, else `encode`'s.
fn whole_page<C>(kept: Option<Vec<u8>>, encode: impl FnOnce(&mut Vec<u8>) -> Result<C>) -> Result<Vec<u8>> {
    match kept {
        Some(bytes) => Ok(bytes),
        None => {
            let mut buf = Vec::new();
            encode(&mut buf)?;
            Ok(buf)
        }
    }
}

/// Integer streams nested this deep or deeper in a cascade are not searched for a cascade
/// of their own: they take `Exact`. (Searching one level deeper as well cost 17% more
/// instructions on the GraphQL file's packed encode for 0.45% of its bytes; not searching
/// below the page's own stream cost canada 29% more bytes.)
const SEARCH_DEPTH: u32 = 2;

/// Writes `values` as one integer stream chosen by the selector; returns the codec taken
/// (see [`encode_at`]).
pub(crate) fn write_ints(values: &[i64], depth: u32, out: &mut Vec<u8>) -> Result<IntCodec> {
    write_ints_excluding(values, depth, None, out)
}

/// [`write_ints`] for a nested stream that may not use codec `forbid`.
///
/// The cascades are chosen on the sample, their nested streams too (recursively). The
/// winner is then written on the whole page with the codecs its trial took: each nested
/// cascade kept unless `Exact` is smaller on the page's own values, nothing searched again.
pub(crate) fn write_ints_excluding(values: &[i64], depth: u32, forbid: Option<u8>, out: &mut Vec<u8>) -> Result<IntCodec> {
    let n = values.len();
    if n == 0 {
        return Ok(IntCodec::Auto);
    }
    if depth > MAX_NESTING {
        return Err(not_representable("integer cascade nested deeper than 3"));
    }
    let Some(exact) = Exact::size(values) else {
        write_constant(values[0], out);
        return Ok(IntCodec::Exact);
    };
    // Cascades, estimated on the sample.
    if depth < SEARCH_DEPTH {
        let s = sample(values);
        let whole = s.len() == n;
        let mut cands = Vec::new();
        if forbid != Some(INT_DELTA) && n >= 2 {
            cands.push(IntCodec::delta(IntCodec::Auto));
        }
        if run_count(values) * 2 <= n {
            cands.push(IntCodec::rle(IntCodec::Auto, IntCodec::Auto));
        }
        if distinct_at_most(values, n / 2) {
            cands.push(IntCodec::dict(IntCodec::Auto));
        }
        let mut winner: Option<(usize, IntCodec, Option<Vec<u8>>)> = None;
        for c in cands {
            if let Some((len, kept, taken)) = trial(whole, |b| encode_at(&s, &c, depth, b)) {
                let est = scaled(len, s.len(), n);
                if est < exact.len && winner.as_ref().is_none_or(|(w, _, _)| est < *w) {
                    winner = Some((est, taken, kept));
                }
            }
        }
        if let Some((_, taken, kept)) = winner {
            let buf = whole_page(kept, |b| encode_at(values, &taken, depth, b))?;
            if buf.len() < exact.len {
                out.extend_from_slice(&buf);
                return Ok(IntCodec::prefer(taken));
            }
        }
    }
    exact.write(values, out);
    Ok(IntCodec::Exact)
}

/// Writes `values` with the smallest of constant, plain, FOR and patched (`IntCodec::Exact`).
pub(crate) fn write_ints_exact(values: &[i64], out: &mut Vec<u8>) {
    match Exact::size(values) {
        Some(exact) => exact.write(values, out),
        None => write_constant(values[0], out),
    }
}

/// Writes `values` with `cascade`, or `Exact` where that is smaller (`IntCodec::Prefer`).
///
/// The cascade is written first, straight into `out`; `Exact` is sized on the whole page
/// only when its estimate on the sample comes within a quarter of the cascade's length.
/// Where a cascade was chosen it is most often far smaller (a coordinate's decimal integers
/// take 33 bits, their deltas 28), and sizing `Exact` on every page of such a chunk cost
/// a pass over the page for nothing.
pub(crate) fn write_ints_preferring(values: &[i64], cascade: &IntCodec, depth: u32, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    if encode_at(values, cascade, depth, out).is_ok() {
        let cascade_len = out.len() - start;
        if !exact_may_beat(values, cascade_len) {
            return Ok(());
        }
        match Exact::size(values) {
            Some(exact) if exact.len >= cascade_len => return Ok(()),
            _ => {}
        }
    }
    out.truncate(start);
    write_ints_exact(values, out);
    Ok(())
}

/// Whether `Exact` on `values` may be shorter than `len` bytes: its size on the sample,
/// scaled to the page, is under 5/4 of `len` (always when the sample is the whole page).
fn exact_may_beat(values: &[i64], len: usize) -> bool {
    let s = sample(values);
    if s.len() == values.len() {
        return true;
    }
    let estimate = Exact::size(&s).map_or(0, |exact| scaled(exact.len, s.len(), values.len()));
    estimate * 4 < len * 5
}

/// The smallest of the integer codecs that need no cascade (plain, FOR, patched), sized
/// without being written: only the winner is. Plain and FOR are sized exactly; patched is
/// planned on a sample of a large page (`Patched::sampled`), and when it wins it is
/// written and measured, and replaced by the smaller of the others if it came out larger.
struct Exact {
    best: Best,
    /// Exact for plain and FOR; patched's estimate.
    len: usize,
    /// The smaller of plain and FOR, and its length.
    flat: Best,
    flat_len: usize,
    patched: Patched,
}

#[derive(Clone, Copy)]
enum Best {
    Plain,
    For,
    Patched,
}

impl Exact {
    /// `None` when every value is the same (constant is then the smallest). One pass over
    /// the values gives plain's and FOR's sizes, an eighth of one patched's plan; patched's
    /// gaps take a pass only when bounds on their width cannot tell whether it wins.
    fn size(values: &[i64]) -> Option<Exact> {
        let n = values.len();
        let (lo, hi) = min_max(values);
        if lo == hi {
            return None;
        }
        let (mut flat, mut flat_len) = (Best::Plain, plain_len_of(n, lo, hi));
        let for_len = for_len_of(n, lo, hi);
        if for_len < flat_len {
            (flat, flat_len) = (Best::For, for_len);
        }
        let (mut best, mut len) = (flat, flat_len);
        // Patched's gaps are measured only when neither the widest they can be (the stream
        // is then likely the smallest) nor none (it then surely is not) decides: the first
        // decides on most pages, and a pass is saved (`write` measures them as it writes).
        let mut patched = Patched::sampled(values, patched::median_estimate(values));
        if patched.len(n) < len {
            patched = match patched.with_widest_gaps(n) {
                widest if widest.len(n) < len => widest,
                _ => patched.with_gaps(values),
            };
            if patched.len(n) < len {
                (best, len) = (Best::Patched, patched.len(n));
            }
        }
        Some(Exact { best, len, flat, flat_len, patched })
    }

    fn write(&self, values: &[i64], out: &mut Vec<u8>) {
        let start = out.len();
        match self.best {
            Best::Plain => write_plain(values, out),
            Best::For => write_for(values, out),
            Best::Patched => {
                self.patched.write(values, out);
                if out.len() - start <= self.flat_len {
                    return;
                }
                out.truncate(start);
                Exact { best: self.flat, ..*self }.write(values, out);
            }
        }
    }
}

/// A proxy for the size of decimal + residual at `e`: the significant bits of the deltas
/// of the integers and of the residuals.
fn residual_bits(values: &[f64], e: u8) -> u64 {
    let mut parts = residual_parts(values, e);
    let Some((first, r)) = parts.next() else { return 0 };
    let (bits, _) = parts.fold((bitlen(zigzag(r)) as u64, first), |(bits, prev), (i, r)| {
        (bits + bitlen(zigzag(i.wrapping_sub(prev))) as u64 + bitlen(zigzag(r)) as u64, i)
    });
    bits
}

/// Whether `values` hold at most `cap` distinct values. An open-addressing set of the
/// values (linear probing, at most half full), given up at the (cap + 1)-th distinct value:
/// a quarter of the instructions of a general hash set, on a check made for every page.
fn distinct_at_most(values: &[i64], cap: usize) -> bool {
    if values.len() <= cap {
        return true;
    }
    // A slot holding `EMPTY` is free; the value `EMPTY` itself is counted apart.
    const EMPTY: i64 = i64::MIN;
    let bits = (2 * (cap + 1)).next_power_of_two().trailing_zeros().max(1);
    let mask = (1usize << bits) - 1;
    let mut slots = vec![EMPTY; 1 << bits];
    let (mut distinct, mut has_empty) = (0, false);
    for &x in values {
        if x == EMPTY {
            if !has_empty {
                has_empty = true;
                distinct += 1;
            }
        } else {
            let mut at = ((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
            loop {
                match slots[at] {
                    s if s == x => break,
                    EMPTY => {
                        slots[at] = x;
                        distinct += 1;
                        break;
                    }
                    _ => at = (at + 1) & mask,
                }
            }
        }
        if distinct > cap {
            return false;
        }
    }
    true
}

/// The float stream of `values` to put under a zstd stage beside the selector's:
/// decimal-plus-residual with its deltas and residuals in plain little-endian integers, at
/// the e whose deltas and residuals need the fewest significant bytes on the sample. Bit-packed
/// streams hide from zstd what repeats in them (a border traced by two countries); whole
/// bytes keep it visible, and zstd removes the zero high bytes itself.
pub(crate) fn write_floats_byte_aligned(values: &[f64], out: &mut Vec<u8>) -> Result<()> {
    let s = sample(values);
    let bytes = |u: u64| bitlen(u).div_ceil(8) as u64;
    let e = (0..=18u8)
        .min_by_key(|&e| {
            let (ints, res) = split_residual(&s, e);
            let deltas: u64 = ints.windows(2).map(|p| bytes(zigzag(p[1].wrapping_sub(p[0])))).sum();
            deltas + res.iter().map(|&r| bytes(zigzag(r))).sum::<u64>()
        })
        .unwrap_or(0);
    let c = FloatCodec::DecimalResidual { e, ints: IntCodec::delta(IntCodec::Plain), residuals: IntCodec::Plain };
    encode_floats_at(values, &c, 0, out).map(drop)
}

/// Writes `values` as one float stream chosen by the selector. With `lossy_step` = Some(t)
/// the page is quantized to steps of 2^t when every value can be (else it is lossless).
/// As for integers, the winner is written on the whole page with the cascades its trial
/// took on the sample.
pub(crate) fn write_floats(values: &[f64], lossy_step: Option<i8>, out: &mut Vec<u8>) -> Result<()> {
    if values.is_empty() || write_quantized(values, lossy_step, out) {
        return Ok(());
    }
    let (taken, kept) = match select_floats(values) {
        Some(Choice { codec, kept, .. }) => (Some(codec), kept),
        None => (None, None),
    };
    write_floats_with(values, taken.as_ref(), kept, out)
}

/// The float codec the selector chose on a sample spread over a whole column chunk, for
/// its pages to share (`None`: plain), with the size per value its trial estimated.
pub(crate) struct ChunkFloats {
    codec: Option<FloatCodec>,
    bytes_per_value: f64,
}

/// The selector's float codec for a chunk of many pages, chosen once on a sample spread
/// over all its values: its pages are much alike (a chunk is one path's values in one
/// stripe), and choosing per page spent as much as writing the pages.
fn choose_chunk_floats(values: &[f64]) -> ChunkFloats {
    match select_floats(values) {
        Some(Choice { codec, len, sampled, .. }) => {
            ChunkFloats { codec: Some(codec), bytes_per_value: len as f64 / sampled.max(1) as f64 }
        }
        None => ChunkFloats { codec: None, bytes_per_value: 8.0 },
    }
}

/// A page of a chunk with the chunk's codec (chosen on `chunk_values` when first needed:
/// quantized pages need none), unless the page turns out well above the chunk's estimate
/// (by a quarter, plus a margin for its header): then it is selected on its own, and the
/// smaller written.
pub(crate) fn write_chunk_floats(
    values: &[f64],
    chunk_values: &[f64],
    chunk: &std::cell::OnceCell<ChunkFloats>,
    lossy_step: Option<i8>,
    out: &mut Vec<u8>,
) -> Result<()> {
    if values.is_empty() || write_quantized(values, lossy_step, out) {
        return Ok(());
    }
    let chunk = chunk.get_or_init(|| choose_chunk_floats(chunk_values));
    let mut page = Vec::new();
    write_floats_with(values, chunk.codec.as_ref(), None, &mut page)?;
    let expected = chunk.bytes_per_value * values.len() as f64 * 1.25 + 64.0;
    if page.len() as f64 > expected {
        let mut own = Vec::new();
        write_floats(values, None, &mut own)?;
        if own.len() < page.len() {
            page = own;
        }
    }
    out.extend_from_slice(&page);
    Ok(())
}

/// With `lossy_step` = Some(t): writes `values` quantized to steps of 2^t if every value
/// can be, and says whether it did.
fn write_quantized(values: &[f64], lossy_step: Option<i8>, out: &mut Vec<u8>) -> bool {
    let Some(t) = lossy_step else { return false };
    let mut buf = Vec::new();
    if encode_floats_at(values, &FloatCodec::Quantized { t, ints: IntCodec::Auto }, 0, &mut buf).is_ok() {
        out.extend_from_slice(&buf);
        return true;
    }
    false
}

/// `values` with `taken` (its trial's bytes if `kept`), or plain when that is not smaller
/// or there is no codec.
fn write_floats_with(values: &[f64], taken: Option<&FloatCodec>, kept: Option<Vec<u8>>, out: &mut Vec<u8>) -> Result<()> {
    if let Some(taken) = taken {
        let buf = whole_page(kept, |b| encode_floats_at(values, taken, 0, b))?;
        if buf.len() < 1 + 8 * values.len() {
            out.extend_from_slice(&buf);
            return Ok(());
        }
    }
    encode_floats_at(values, &FloatCodec::Plain, 0, out).map(drop)
}

/// A winner of the selector: its codec with the cascades its trial took, the trial's
/// length on `sampled` values, and its bytes when the sample was all of the values.
struct Choice {
    codec: FloatCodec,
    len: usize,
    sampled: usize,
    kept: Option<Vec<u8>>,
}

/// The float candidates tried on the sample of `values` (non-empty), the smallest kept if
/// its estimate beats plain.
fn select_floats(values: &[f64]) -> Option<Choice> {
    let n = values.len();
    let plain_len = 1 + 8 * n;
    let s = sample(values);
    let whole = s.len() == n;
    type Tried = Option<(usize, Option<Vec<u8>>, FloatCodec)>;
    let mut winner: Option<(usize, Choice)> = None;
    let mut consider = |tried: Tried| {
        if let Some((len, kept, codec)) = tried {
            let est = scaled(len, s.len(), n);
            if est < plain_len && winner.as_ref().is_none_or(|(w, _)| est < *w) {
                winner = Some((est, Choice { codec, len, sampled: s.len(), kept }));
            }
        }
    };
    // The exponents are ranked on every fifth value of the sample: 19 or 23 passes over
    // all of it were a third of the selector's instructions on the countries.
    let r: Vec<f64> = s.iter().step_by(RANKING_STRIDE).copied().collect();
    // Decimal: the smallest e for which at least 90 % of the values round-trip.
    if let Some(e) = (0..=22u8).find(|&e| r.iter().filter(|&&v| decimal_of(v, e).is_some()).count() * 10 >= r.len() * 9)
    {
        consider(trial(whole, |b| encode_floats_at(&s, &FloatCodec::Decimal { e, ints: IntCodec::Auto }, 0, b)));
    }
    // Decimal + residual: every e ranked by a one-pass bit count on the sample, the best
    // two encoded for real, the smaller kept.
    let mut ranked: Vec<(u64, u8)> = (0..=18u8).map(|e| (residual_bits(&r, e), e)).collect();
    ranked.sort_unstable();
    let mut best_e: Tried = None;
    for &(_, e) in ranked.iter().take(2) {
        let c = FloatCodec::DecimalResidual { e, ints: IntCodec::Auto, residuals: IntCodec::Auto };
        if let Some(tried) = trial(whole, |b| encode_floats_at(&s, &c, 0, b)) {
            if best_e.as_ref().is_none_or(|(l, _, _)| tried.0 < *l) {
                best_e = Some(tried);
            }
        }
    }
    consider(best_e);
    let c = FloatCodec::Split { l: super::split::best_l(&s) };
    consider(trial(whole, |b| encode_floats_at(&s, &c, 0, b)));
    winner.map(|(_, choice)| choice)
}

/// Writes `values` as one string stream chosen by the selector; `allow_dict` is false for
/// a dictionary's own values, `allow_symbols` false where a trial estimates a dictionary.
///
/// The symbol table is tried only where a dictionary is not: a dictionary's values can
/// take the table themselves, and each repeat then costs a code of at most ⌈log2 d⌉ bits
/// where the table spends a byte or more, so the dictionary is the smaller whenever it
/// qualifies (it was on every such page of the corpus), and one table is trained, not two.
pub(crate) fn write_strings<S: AsRef<str>>(
    values: &[S],
    depth: u32,
    allow_dict: bool,
    allow_symbols: bool,
    out: &mut Vec<u8>,
) -> Result<()> {
    let n = values.len();
    if n == 0 {
        return Ok(());
    }
    let mut best = Vec::new();
    encode_strings_at(values, &StrCodec::Plain(IntCodec::Auto), depth, &mut best)?;
    let mut cands = Vec::new();
    if values.iter().all(|v| numeric_parts(v.as_ref()).is_some()) {
        cands.push(StrCodec::Numeric(IntCodec::Auto, IntCodec::Auto));
    }
    if hex_flags(values).is_some() {
        cands.push(StrCodec::Hex(IntCodec::Auto));
    }
    let refs: Vec<&str> = values.iter().map(AsRef::as_ref).collect();
    let s = sample(&refs);
    let whole = s.len() == n;
    let dict = allow_dict && depth < MAX_NESTING - 1 && distinct_strings_at_most(values, n / 2);
    if allow_symbols && depth < MAX_NESTING - 1 && !dict {
        cands.push(StrCodec::Symbols(IntCodec::Auto));
    }
    if dict {
        // On a sample, the dictionary's values are sized without a symbol table: the
        // page's dictionary is chosen for real (table and all) if the dictionary wins.
        let values_codec = if whole { StrCodec::Auto } else { StrCodec::AutoUntrained };
        cands.push(StrCodec::Dict(Box::new(values_codec), IntCodec::Auto));
    }
    // On the whole page, plain on the sample is `best`.
    let s_plain = if whole {
        best.len()
    } else {
        trial(false, |b| encode_strings_at(&s, &StrCodec::Plain(IntCodec::Auto), depth, b)).map_or(usize::MAX, |t| t.0)
    };
    let mut winner: Option<(usize, StrCodec, Option<Vec<u8>>)> = None;
    for c in cands {
        if let Some((len, kept, ())) = trial(whole, |b| encode_strings_at(&s, &c, depth, b)) {
            if len < s_plain && winner.as_ref().is_none_or(|(w, _, _)| len < *w) {
                winner = Some((len, c, kept));
            }
        }
    }
    if let Some((_, mut c, kept)) = winner {
        if let StrCodec::Dict(values_codec, _) = &mut c {
            **values_codec = StrCodec::Auto;
        }
        let buf = whole_page(kept, |b| encode_strings_at(values, &c, depth, b))?;
        if buf.len() < best.len() {
            best = buf;
        }
    }
    out.extend_from_slice(&best);
    Ok(())
}

fn distinct_strings_at_most<S: AsRef<str>>(values: &[S], cap: usize) -> bool {
    let mut seen = rustc_hash::FxHashSet::with_capacity_and_hasher(cap + 1, Default::default());
    for v in values {
        if seen.insert(v.as_ref()) && seen.len() > cap {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::int::{for_len, plain_len};

    /// The one-pass sizing agrees with sizing each codec on its own, and writes what it
    /// sized.
    #[test]
    fn exact_writes_the_smallest_of_plain_for_and_patched() {
        let mut next = crate::testing::xorshift(0x2545_F491_4F6C_DD1D);
        let (mut over, mut sampled) = (0.0, 0);
        for case in 0..3000 {
            // Large pages too, whose patched plan is made on a sample.
            let n = 1 + (next() % if case % 4 == 3 { 6000 } else { 900 }) as usize;
            let bits = (case % 64) as u32;
            let spread = next() % 4;
            let values: Vec<i64> = (0..n)
                .map(|_| {
                    let x = (next() >> (63 - bits.min(62))) as i64 - (1 << bits.min(61));
                    match next() % 100 {
                        0 if spread > 0 => x.wrapping_mul(1 << (8 * spread)),
                        1 if spread > 2 => i64::MIN,
                        2 if spread > 2 => i64::MAX,
                        _ => x,
                    }
                })
                .collect();
            let Some(exact) = Exact::size(&values) else {
                assert!(values.iter().all(|&x| x == values[0]), "{case}");
                continue;
            };
            let flat = plain_len(&values).min(for_len(&values));
            let smallest = flat.min(Patched::plan(&values).len(n));
            let mut out = Vec::new();
            exact.write(&values, &mut out);
            if n <= 1024 {
                // The smallest is written; its size may have been bounded from above.
                assert_eq!(out.len(), smallest, "{case}");
                assert!(exact.len >= out.len(), "{case}");
            } else {
                // Never above plain or FOR, and patched's sampled plan near its best.
                assert!(out.len() <= flat, "{case}");
                assert!(out.len() <= smallest + smallest / 8 + 16, "{case}: {} against {smallest}", out.len());
                (over, sampled) = (over + out.len() as f64 / smallest as f64 - 1.0, sampled + 1);
            }
            let (back, _) = crate::packed::int::decode_ints(&out, 0, n, &crate::packed::Limits::default()).unwrap();
            assert_eq!(back, values, "{case}");
        }
        // On average the sampled plans cost next to nothing (0.02 % over these pages).
        assert!(over / (sampled as f64) < 0.002, "sampled plans {:.4} % over the best", 100.0 * over / sampled as f64);
    }

    #[test]
    fn distinct_counts_agree_with_a_hash_set() {
        let mut next = crate::testing::xorshift(0xD1B5_4A32_D192_ED03);
        for case in 0..2000 {
            let n = (next() % 300) as usize;
            let spread = 1 + next() % 400;
            let values: Vec<i64> = (0..n)
                .map(|_| match next() % 10 {
                    0 => i64::MIN,
                    1 => i64::MAX,
                    _ => (next() % spread) as i64 - 50,
                })
                .collect();
            let distinct = values.iter().collect::<std::collections::HashSet<_>>().len();
            for cap in [0, 1, distinct.saturating_sub(1), distinct, distinct + 1, n / 2, n] {
                assert_eq!(distinct_at_most(&values, cap), distinct <= cap, "case {case}, cap {cap}");
            }
        }
    }

    #[test]
    fn residual_bits_are_those_of_the_split() {
        let mut next = crate::testing::xorshift(0x94D0_49BB_1331_11EB);
        let values: Vec<f64> =
            (0..500).map(|_| if next() % 20 == 0 { f64::NAN } else { (next() % 100_000) as f64 / 997.0 }).collect();
        for e in 0..=18 {
            let (ints, res) = split_residual(&values, e);
            let expected: u64 = ints.windows(2).map(|p| bitlen(zigzag(p[1].wrapping_sub(p[0]))) as u64).sum::<u64>()
                + res.iter().map(|&r| bitlen(zigzag(r)) as u64).sum::<u64>();
            assert_eq!(residual_bits(&values, e), expected, "e = {e}");
        }
    }
}

//! Integer codecs 0x00–0x06 (§5.1): values are i64, arithmetic wraps. A stream of n = 0
//! values is empty (no codec byte; see the implementation notes of packed.md).

use super::bits::{bitlen, pack, pack_map, packed_len, unpack, write_zvarint, zigzag};
use super::codec::*;
use super::{not_representable, select, Limits, Reader, MAX_NESTING};
use crate::error::Result;
use crate::format::numbers::{signed_width, varint_len, write_varint};

/// An integer codec with its cascade, as an encoder is asked to write it. `Auto` lets the
/// selector (§6) choose for that stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum IntCodec {
    Auto,
    /// The smallest of constant, plain, FOR and patched, sized exactly on the values: what
    /// a nested stream of a cascade chosen on the sample becomes on the whole page, whose
    /// widths and outliers the sample may not show.
    Exact,
    Plain,
    Constant,
    For,
    /// Nested: the n − 1 deltas (not delta).
    Delta(Box<IntCodec>),
    /// Nested: the run values, then the run lengths.
    Rle(Box<IntCodec>, Box<IntCodec>),
    Patched,
    /// Nested: the sorted distinct values.
    Dict(Box<IntCodec>),
    /// This cascade, unless `Exact` is smaller on the values: what a cascade chosen on the
    /// sample becomes on the whole page (a ramp's sampled deltas jump between the sample's
    /// runs; the page's are constant).
    Prefer(Box<IntCodec>),
}

impl IntCodec {
    pub fn delta(inner: IntCodec) -> Self {
        IntCodec::Delta(Box::new(inner))
    }
    pub fn rle(values: IntCodec, runs: IntCodec) -> Self {
        IntCodec::Rle(Box::new(values), Box::new(runs))
    }
    pub fn dict(values: IntCodec) -> Self {
        IntCodec::Dict(Box::new(values))
    }
    pub fn prefer(cascade: IntCodec) -> Self {
        IntCodec::Prefer(Box::new(cascade))
    }
}

/// Writes `values` as one stream with `codec` (nothing when `values` is empty).
pub(crate) fn encode_ints(values: &[i64], codec: &IntCodec, out: &mut Vec<u8>) -> Result<()> {
    encode_at(values, codec, 0, out).map(drop)
}

/// Writes `values` as one stream with `codec`; returns the codec it took, `Auto` resolved:
/// each cascade chosen as `Prefer` it, each other choice as `Exact` (encoding other values
/// of the same kind with it repeats the choice of cascade, not the search).
pub(crate) fn encode_at(values: &[i64], codec: &IntCodec, depth: u32, out: &mut Vec<u8>) -> Result<IntCodec> {
    if values.is_empty() {
        return Ok(codec.clone());
    }
    if depth > MAX_NESTING {
        return Err(not_representable("integer cascade nested deeper than 3"));
    }
    let taken = match codec {
        IntCodec::Auto => return select::write_ints(values, depth, out),
        IntCodec::Exact => {
            select::write_ints_exact(values, out);
            IntCodec::Exact
        }
        IntCodec::Prefer(cascade) => {
            select::write_ints_preferring(values, cascade, depth, out)?;
            codec.clone()
        }
        IntCodec::Plain => {
            write_plain(values, out);
            IntCodec::Plain
        }
        IntCodec::Constant => {
            if values.iter().any(|&x| x != values[0]) {
                return Err(not_representable("constant codec on values that differ"));
            }
            write_constant(values[0], out);
            IntCodec::Constant
        }
        IntCodec::For => {
            write_for(values, out);
            IntCodec::For
        }
        IntCodec::Delta(inner) => {
            if matches!(**inner, IntCodec::Delta(_)) {
                return Err(not_representable("delta nested in delta"));
            }
            out.push(INT_DELTA);
            write_zvarint(out, values[0]);
            let deltas = deltas(values);
            IntCodec::delta(encode_nested(&deltas, inner, depth, Some(INT_DELTA), out)?)
        }
        IntCodec::Rle(vals, lens) => {
            let (run_values, run_lengths) = runs(values);
            out.push(INT_RLE);
            write_varint(out, run_values.len() as u64);
            let vals = encode_at(&run_values, vals, depth + 1, out)?;
            IntCodec::rle(vals, encode_at(&run_lengths, lens, depth + 1, out)?)
        }
        IntCodec::Patched => {
            super::patched::write_patched(values, out);
            IntCodec::Patched
        }
        IntCodec::Dict(inner) => {
            let (dict, codes) = dictionary(values);
            out.push(INT_DICT);
            write_varint(out, dict.len() as u64);
            let inner = encode_at(&dict, inner, depth + 1, out)?;
            let w = bitlen(dict.len() as u64 - 1);
            out.push(w as u8);
            pack(&codes, w, out);
            IntCodec::dict(inner)
        }
    };
    Ok(taken)
}

/// A nested stream whose codec may not be `forbid` (delta's deltas are not delta).
fn encode_nested(values: &[i64], codec: &IntCodec, depth: u32, forbid: Option<u8>, out: &mut Vec<u8>) -> Result<IntCodec> {
    if matches!(codec, IntCodec::Auto) {
        if values.is_empty() {
            return Ok(IntCodec::Auto);
        }
        if depth + 1 > MAX_NESTING {
            return Err(not_representable("integer cascade nested deeper than 3"));
        }
        return select::write_ints_excluding(values, depth + 1, forbid, out);
    }
    encode_at(values, codec, depth + 1, out)
}

/// Writes a constant stream of `value`.
pub(crate) fn write_constant(value: i64, out: &mut Vec<u8>) {
    out.push(INT_CONSTANT);
    write_zvarint(out, value);
}

/// The byte width of a plain stream: its widest value's.
fn plain_width(values: &[i64]) -> usize {
    values.iter().map(|&x| signed_width(x)).max().unwrap_or(1)
}

/// The length of `values`' plain stream.
pub(crate) fn plain_len(values: &[i64]) -> usize {
    2 + values.len() * plain_width(values)
}

/// [`plain_len`] of n values whose least is `lo` and greatest `hi` (the widest is one of
/// them).
pub(crate) fn plain_len_of(n: usize, lo: i64, hi: i64) -> usize {
    2 + n * signed_width(lo).max(signed_width(hi))
}

pub(crate) fn write_plain(values: &[i64], out: &mut Vec<u8>) {
    let k = plain_width(values);
    out.push(INT_PLAIN);
    out.push(k as u8);
    match k {
        1 => put_le::<1>(values, out),
        2 => put_le::<2>(values, out),
        4 => put_le::<4>(values, out),
        _ => put_le::<8>(values, out),
    }
}

/// Appends the low `K` bytes of each value, little-endian.
fn put_le<const K: usize>(values: &[i64], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + K * values.len(), 0);
    for (bytes, &x) in out[start..].chunks_exact_mut(K).zip(values) {
        bytes.copy_from_slice(&x.to_le_bytes()[..K]);
    }
}

/// The frame of `values`' FOR stream: the least value and the width of the differences.
fn for_frame(values: &[i64]) -> (i64, u32) {
    let (lo, hi) = min_max(values);
    (lo, bitlen(hi.wrapping_sub(lo) as u64))
}

/// The length of `values`' FOR stream.
pub(crate) fn for_len(values: &[i64]) -> usize {
    let (lo, hi) = min_max(values);
    for_len_of(values.len(), lo, hi)
}

/// [`for_len`] of n values whose least is `lo` and greatest `hi`.
pub(crate) fn for_len_of(n: usize, lo: i64, hi: i64) -> usize {
    2 + varint_len(zigzag(lo)) + packed_len(n, bitlen(hi.wrapping_sub(lo) as u64)).unwrap_or(usize::MAX)
}

pub(crate) fn write_for(values: &[i64], out: &mut Vec<u8>) {
    let (lo, w) = for_frame(values);
    out.push(INT_FOR);
    write_zvarint(out, lo);
    out.push(w as u8);
    pack_map(values, |x| x.wrapping_sub(lo) as u64, w, out);
}

pub(crate) fn min_max(values: &[i64]) -> (i64, i64) {
    values.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

pub(crate) fn deltas(values: &[i64]) -> Vec<i64> {
    values.windows(2).map(|p| p[1].wrapping_sub(p[0])).collect()
}

/// How many runs of equal values there are.
pub(crate) fn run_count(values: &[i64]) -> usize {
    values.windows(2).filter(|p| p[0] != p[1]).count() + !values.is_empty() as usize
}

/// Run values and run lengths.
pub(crate) fn runs(values: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut vals: Vec<i64> = Vec::new();
    let mut lens: Vec<i64> = Vec::new();
    for &x in values {
        match (vals.last(), lens.last_mut()) {
            (Some(&v), Some(l)) if v == x => *l += 1,
            _ => {
                vals.push(x);
                lens.push(1);
            }
        }
    }
    (vals, lens)
}

/// Sorted distinct values and each value's code.
pub(crate) fn dictionary(values: &[i64]) -> (Vec<i64>, Vec<u64>) {
    let mut dict = values.to_vec();
    dict.sort_unstable();
    dict.dedup();
    let codes = values.iter().map(|x| dict.binary_search(x).unwrap_or(0) as u64).collect();
    (dict, codes)
}

/// Decodes one integer stream of `n` values at `pos`; returns the values and the position
/// after the stream.
pub(crate) fn decode_ints(buf: &[u8], pos: usize, n: usize, limits: &Limits) -> Result<(Vec<i64>, usize)> {
    let mut r = Reader::new(buf, pos, limits);
    let mut out = Vec::new();
    read_ints(&mut r, n, 0, None, &mut out)?;
    Ok((out, r.pos))
}

/// Decodes a bool stream (§5.4): an integer stream whose values are all 0 or 1.
pub(crate) fn decode_bools(buf: &[u8], pos: usize, n: usize, limits: &Limits) -> Result<(Vec<bool>, usize)> {
    let (ints, end) = decode_ints(buf, pos, n, limits)?;
    if ints.iter().any(|&x| x != 0 && x != 1) {
        return Err(crate::Error::malformed(pos as u64, "bool stream holds a value other than 0 or 1"));
    }
    Ok((ints.into_iter().map(|x| x == 1).collect(), end))
}

/// Appends the `n` values of the stream at the reader's position. `depth` is the nesting
/// level (0 for a page's stream); `forbid` a codec the context does not allow.
pub(crate) fn read_ints(r: &mut Reader, n: usize, depth: u32, forbid: Option<u8>, out: &mut Vec<i64>) -> Result<()> {
    r.check_values(n)?;
    if n == 0 {
        return Ok(());
    }
    r.check_depth(depth)?;
    let at = r.pos;
    let c = r.u8()?;
    if Some(c) == forbid {
        return Err(r.err(at, "codec not allowed in this nested stream"));
    }
    match c {
        INT_PLAIN => {
            let k = r.u8()? as usize;
            if !matches!(k, 1 | 2 | 4 | 8) {
                return Err(r.err(at + 1, "plain integer width not 1, 2, 4 or 8"));
            }
            let bytes = r.take(n.checked_mul(k).ok_or_else(|| r.err(at, "plain integers too long"))?)?;
            out.reserve(n);
            out.extend(bytes.chunks_exact(k).map(|ch| {
                let mut b = [0u8; 8];
                b[..k].copy_from_slice(ch);
                crate::format::numbers::sign_extend(u64::from_le_bytes(b), k)
            }));
        }
        INT_CONSTANT => {
            let v = r.zvarint()?;
            out.resize(out.len() + n, v);
        }
        INT_FOR => {
            let base = r.zvarint()?;
            let w = r.u8()? as u32;
            let bytes = r.packed(n, w)?;
            let mut u = Vec::new();
            unpack(bytes, n, w, &mut u);
            out.extend(u.iter().map(|&x| base.wrapping_add(x as i64)));
        }
        INT_DELTA => {
            let x0 = r.zvarint()?;
            let start = out.len();
            out.push(x0);
            read_ints(r, n - 1, depth + 1, Some(INT_DELTA), out)?;
            let mut acc = x0;
            for v in &mut out[start + 1..] {
                acc = acc.wrapping_add(*v);
                *v = acc;
            }
        }
        INT_RLE => {
            let count = r.count(1, n, "RLE run count not in 1..=n")?;
            let mut vals = Vec::new();
            read_ints(r, count, depth + 1, None, &mut vals)?;
            let lens_at = r.pos;
            let mut lens = Vec::new();
            read_ints(r, count, depth + 1, None, &mut lens)?;
            let mut total: u64 = 0;
            for &l in &lens {
                if l < 1 {
                    return Err(r.err(lens_at, "RLE run length below 1"));
                }
                total = total.saturating_add(l as u64);
            }
            if total != n as u64 {
                return Err(r.err(lens_at, "RLE run lengths do not sum to n"));
            }
            out.reserve(n);
            for (&v, &l) in vals.iter().zip(&lens) {
                out.resize(out.len() + l as usize, v);
            }
        }
        INT_PATCHED => super::patched::read_patched(r, n, out)?,
        INT_DICT => {
            let d = r.count(1, n, "dictionary size not in 1..=n")?;
            let mut dict = Vec::new();
            read_ints(r, d, depth + 1, None, &mut dict)?;
            let w_at = r.pos;
            let w = r.u8()? as u32;
            if w != bitlen(d as u64 - 1) {
                return Err(r.err(w_at, "dictionary code width is not bitlen(d - 1)"));
            }
            let bytes = r.packed(n, w)?;
            let mut codes = Vec::new();
            unpack(bytes, n, w, &mut codes);
            out.reserve(n);
            for &code in &codes {
                out.push(*dict.get(code as usize).ok_or_else(|| r.err(w_at + 1, "dictionary code out of range"))?);
            }
        }
        _ => return Err(r.err(at, "unknown integer codec")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The selector sizes plain, FOR and patched streams without writing them: the sizes
    /// must be the written lengths, or it would pick by wrong figures.
    #[test]
    fn sizes_without_writing_are_the_written_lengths() {
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        for case in 0..400 {
            let n = 1 + (next() % 700) as usize;
            let bits = (case % 64) as u32;
            let values: Vec<i64> = (0..n)
                .map(|_| {
                    let x = (next() >> (63 - bits.min(62))) as i64 - (1 << bits.min(61));
                    // Some outliers, so that patched has patches.
                    if next() % 50 == 0 { x.wrapping_mul(1 << 20) } else { x }
                })
                .collect();
            assert_eq!(plain_len(&values), enc(&values, IntCodec::Plain).len(), "{case}");
            assert_eq!(for_len(&values), enc(&values, IntCodec::For).len(), "{case}");
            let patched = super::super::patched::Patched::plan(&values);
            assert_eq!(patched.len(n), enc(&values, IntCodec::Patched).len(), "{case}");
            assert_eq!(dec(&enc(&values, IntCodec::Patched), n), values, "{case}");
            assert_eq!(run_count(&values), runs(&values).0.len(), "{case}");
        }
    }

    fn enc(values: &[i64], c: IntCodec) -> Vec<u8> {
        let mut out = Vec::new();
        encode_ints(values, &c, &mut out).unwrap();
        out
    }

    fn dec(bytes: &[u8], n: usize) -> Vec<i64> {
        let (v, end) = decode_ints(bytes, 0, n, &Limits::default()).unwrap();
        assert_eq!(end, bytes.len());
        v
    }

    /// Byte vectors written by hand from §5.1.
    #[test]
    fn fixed_vectors() {
        let cases: Vec<(Vec<i64>, IntCodec, Vec<u8>)> = vec![
            (vec![1, -1, 300], IntCodec::Plain, vec![0x00, 2, 0x01, 0x00, 0xFF, 0xFF, 0x2C, 0x01]),
            (vec![-3, -3, -3, -3], IntCodec::Constant, vec![0x01, 0x05]),
            // base 10 (zz 20), w = 2, u = 0,3,1,2 → 0 | 3<<2 | 1<<4 | 2<<6 = 0x9C
            (vec![10, 13, 11, 12], IntCodec::For, vec![0x02, 20, 2, 0x9C]),
            // x0 = 5 (zz 10), deltas 1,1,1 constant (zz 2)
            (vec![5, 6, 7, 8], IntCodec::delta(IntCodec::Constant), vec![0x03, 10, 0x01, 2]),
            // runs: 7×3, 9×2: r = 2; values FOR base 7 (zz 14) w 2 u 0,2 → 0b10_00 = 0x08;
            // lengths FOR base 2 (zz 4) w 1 u 1,0 → 0x01
            (
                vec![7, 7, 7, 9, 9],
                IntCodec::rle(IntCodec::For, IntCodec::For),
                vec![0x04, 2, 0x02, 14, 2, 0x08, 0x02, 4, 1, 0x01],
            ),
            // d = 2, values plain k=1 [4, 100]; w = 1; codes 1,0,0,1 → 0b1001 = 0x09
            (vec![100, 4, 4, 100], IntCodec::dict(IntCodec::Plain), vec![0x06, 2, 0x00, 1, 4, 100, 1, 0x09]),
            // median (index 2 of sorted 0,0,0,0,1000) = 0; u = 0,0,2000,0,0 → w = 0 (cost
            // 0 + 1·(11 + 3) + 16 = 30 < 5·11 = 55); m = 1, first gap 2 (pw 2), high 2000 (hw 11)
            // gaps bits: 10 → 0x02; highs: 2000 = 0x7D0 → 0xD0, 0x07
            (vec![0, 0, 1000, 0, 0], IntCodec::Patched, vec![0x05, 0, 0, 1, 2, 11, 0x02, 0xD0, 0x07]),
        ];
        for (values, codec, bytes) in cases {
            assert_eq!(enc(&values, codec.clone()), bytes, "{codec:?}");
            assert_eq!(dec(&bytes, values.len()), values, "{codec:?}");
        }
    }

    #[test]
    fn rejects_bad_streams() {
        let lim = Limits::default();
        let bad: &[(&[u8], usize)] = &[
            (&[0x00, 3, 1, 2, 3], 3),                                   // plain width 3
            (&[0x02, 0, 65], 1),                                        // FOR width 65
            (&[0x03, 0, 0x03, 0, 0x01, 0], 3),                          // delta inside delta
            (&[0x04, 3, 0x01, 0, 0x01, 2], 2),                          // r > n
            (&[0x04, 1, 0x01, 0, 0x01, 4], 3),                          // run lengths sum to 2, not 3
            (&[0x04, 1, 0x01, 0, 0x01, 1], 1),                          // run length −1
            (&[0x06, 2, 0x00, 1, 1, 2, 2, 0], 2),                       // code width 2, not 1
            (&[0x05, 0, 0, 1, 3, 1, 0x02, 1], 2),                       // patch position 2 ≥ n
            (&[0x05, 0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 8, 0, 1], 1), // w + hw > 64
            (&[0x07], 1),                                               // unknown codec
            (&[0x02, 0, 64, 0, 0, 0, 0, 0, 0, 0], 2),                   // 2 × 64 bits in 8 bytes
        ];
        for (bytes, n) in bad {
            let e = decode_ints(bytes, 0, *n, &lim).unwrap_err();
            assert_eq!(e.category(), crate::Category::Malformed, "{bytes:?}: {e}");
        }
    }

    #[test]
    fn bools_are_zero_or_one() {
        let lim = Limits::default();
        // A 1-bit FOR page is a bitmap: 1, 0, 1, 1 → 0b1101.
        assert_eq!(decode_bools(&[0x02, 0, 1, 0x0D], 0, 4, &lim).unwrap(), (vec![true, false, true, true], 4));
        assert_eq!(enc(&[1, 0, 1, 1], IntCodec::For), vec![0x02, 0, 1, 0x0D]);
        let e = decode_bools(&[0x02, 0, 2, 0x02], 0, 1, &lim).unwrap_err();
        assert_eq!(e.category(), crate::Category::Malformed);
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        let lim = Limits::default();
        let e = decode_ints(&[0x01, 0], 0, 1 << 40, &lim).unwrap_err();
        assert_eq!(e.category(), crate::Category::LimitExceeded);
        // RLE declaring 2^40 runs
        let e = decode_ints(&[0x04, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x01, 0], 0, 10, &lim).unwrap_err();
        assert_eq!(e.category(), crate::Category::Malformed);
    }

    #[test]
    fn nesting_deeper_than_three_is_rejected() {
        // dict > dict > dict > dict > constant: the innermost stream sits at depth 4.
        let bytes = [0x06, 1, 0x06, 1, 0x06, 1, 0x06, 1, 0x01, 0, 0, 0, 0, 0];
        let e = decode_ints(&bytes, 0, 1, &Limits::default()).unwrap_err();
        assert_eq!(e.category(), crate::Category::Malformed);
        let ok = [0x06, 1, 0x06, 1, 0x06, 1, 0x01, 0, 0, 0, 0];
        assert_eq!(dec(&ok, 1), vec![0]);
    }
}

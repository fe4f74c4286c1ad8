//! Float codecs 0x10–0x15 (§5.2): plain, decimal (ALP's scheme with a division), quantized
//! (lossy, explicit step), decimal + ulp residual, and split (in [`super::split`]). 0x11
//! (pco) is reserved: its decoder answers `Unsupported`.

use super::bits::{bitlen, pack, unpack};
use super::codec::*;
use super::int::{encode_at, read_ints, IntCodec};
use super::{not_representable, Limits, PatchPositions, Reader, MAX_NESTING};
use crate::error::{Category, Error, Result};
use crate::format::numbers::write_varint;

/// 10^e for e ≤ 22, each exactly representable.
pub(crate) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// Largest magnitude of a decimal or quantized integer: every such i64 is an exact double.
pub(crate) const MAX_EXACT: i64 = 1 << 53;

/// A float codec with its nested integer codecs, as an encoder is asked to write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FloatCodec {
    Plain,
    /// e ≤ 22; values that are not `i ⊘ 10^e` become patches.
    Decimal {
        e: u8,
        ints: IntCodec,
    },
    /// Lossy: q × 2^t, −60 ≤ t ≤ 60; every value within 2^(t−1) of the original.
    Quantized {
        t: i8,
        ints: IntCodec,
    },
    /// e ≤ 18; bits(i ⊘ 10^e) + r, exact for every input.
    DecimalResidual {
        e: u8,
        ints: IntCodec,
        residuals: IntCodec,
    },
    /// ALP-RD: the top l ∈ 1..=16 bits dictionary-coded, the rest packed.
    Split {
        l: u8,
    },
}

/// `i ⊘ 10^e` (§5.2): the correctly rounded binary64 division.
#[inline]
pub(crate) fn decimal(i: i64, e: u8) -> f64 {
    i as f64 / POW10[e as usize]
}

/// 2^t as an exact double, for −60 ≤ t ≤ 60.
#[inline]
fn pow2(t: i8) -> f64 {
    f64::from_bits(((1023 + t as i64) as u64) << 52)
}

/// The decimal integer of `v` at exponent `e`, if `v` is exactly `i ⊘ 10^e`.
#[inline]
pub(crate) fn decimal_of(v: f64, e: u8) -> Option<i64> {
    let i = nearest_decimal(v, e)?;
    (decimal(i, e).to_bits() == v.to_bits()).then_some(i)
}

/// The nearest decimal integer of `v` at exponent `e` (None when not finite or too large).
#[inline]
fn nearest_decimal(v: f64, e: u8) -> Option<i64> {
    let i = round_ties_even(v * POW10[e as usize]);
    (i.abs() <= MAX_EXACT as f64).then_some(i as i64)
}

/// `y.round_ties_even()` up to the sign of a zero (callers make integers of it), without
/// the call it is on targets without SSE4.1's `roundsd` (x86-64's baseline), where it was
/// a tenth of the time to pack float columns: below 2^51, adding 1.5 · 2^52 leaves no
/// fraction bits, so the addition rounds (to nearest, ties to even) and the subtraction is
/// exact; above, the call.
#[inline]
pub(crate) fn round_ties_even(y: f64) -> f64 {
    const ROUNDER: f64 = 6_755_399_441_055_744.0;
    if y.abs() < 2_251_799_813_685_248.0 {
        (y + ROUNDER) - ROUNDER
    } else {
        y.round_ties_even()
    }
}

/// The integers and residuals of decimal + residual at `e`. Values with no usable decimal
/// (NaN, ±∞, too large) repeat the previous integer, so the residual carries all their bits.
pub(crate) fn split_residual(values: &[f64], e: u8) -> (Vec<i64>, Vec<i64>) {
    // Two maps over slices, whose length is known, rather than `unzip` of the scan below,
    // which cannot know it and grew both vectors as it went (that growth was two thirds of
    // this function's instructions on the countries' coordinates).
    let mut prev = 0i64;
    let ints: Vec<i64> = values
        .iter()
        .map(|&v| {
            prev = nearest_decimal(v, e).unwrap_or(prev);
            prev
        })
        .collect();
    let residuals = values.iter().zip(&ints).map(|(&v, &i)| residual(v, i, e)).collect();
    (ints, residuals)
}

/// The residual of `v` on the decimal integer `i` at `e`: the difference of their bits.
#[inline]
fn residual(v: f64, i: i64, e: u8) -> i64 {
    v.to_bits().wrapping_sub(decimal(i, e).to_bits()) as i64
}

/// Each value's integer and residual at `e`, as [`split_residual`] gives them, made one at
/// a time (the selector sizes them for every e without keeping them).
pub(crate) fn residual_parts(values: &[f64], e: u8) -> impl Iterator<Item = (i64, i64)> + '_ {
    values.iter().scan(0i64, move |prev, &v| {
        let i = nearest_decimal(v, e).unwrap_or(*prev);
        *prev = i;
        Some((i, residual(v, i, e)))
    })
}

/// Writes `values` as one stream with `codec` (nothing when `values` is empty).
pub(crate) fn encode_floats(values: &[f64], codec: &FloatCodec, out: &mut Vec<u8>) -> Result<()> {
    encode_floats_at(values, codec, 0, out).map(drop)
}

/// Writes `values` as one stream with `codec`; returns the codec taken, its integer
/// streams' `Auto` resolved (see [`encode_at`]).
pub(crate) fn encode_floats_at(values: &[f64], codec: &FloatCodec, depth: u32, out: &mut Vec<u8>) -> Result<FloatCodec> {
    if values.is_empty() {
        return Ok(codec.clone());
    }
    if depth > MAX_NESTING {
        return Err(not_representable("float cascade nested deeper than 3"));
    }
    let taken = match codec {
        FloatCodec::Plain => {
            out.reserve(1 + 8 * values.len());
            out.push(FLOAT_PLAIN);
            for v in values {
                out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            FloatCodec::Plain
        }
        FloatCodec::Decimal { e, ints } => {
            if *e > 22 {
                return Err(not_representable("decimal exponent above 22"));
            }
            let mut is = Vec::with_capacity(values.len());
            let mut patches = Vec::new();
            let mut prev = 0i64;
            for (j, &v) in values.iter().enumerate() {
                match decimal_of(v, *e) {
                    Some(i) => prev = i,
                    None => patches.push(j),
                }
                is.push(prev);
            }
            out.push(FLOAT_DECIMAL);
            out.push(*e);
            let ints = encode_at(&is, ints, depth + 1, out)?;
            write_varint(out, patches.len() as u64);
            if !patches.is_empty() {
                let gaps: Vec<u64> = patches
                    .iter()
                    .enumerate()
                    .map(|(k, &p)| if k == 0 { p } else { p - patches[k - 1] } as u64)
                    .collect();
                let pw = bitlen(gaps.iter().copied().max().unwrap_or(0));
                out.push(pw as u8);
                pack(&gaps, pw, out);
                for &p in &patches {
                    out.extend_from_slice(&values[p].to_bits().to_le_bytes());
                }
            }
            FloatCodec::Decimal { e: *e, ints }
        }
        FloatCodec::Quantized { t, ints } => {
            if !(-60..=60).contains(t) {
                return Err(not_representable("quantization step exponent outside -60..=60"));
            }
            let scale = pow2(-*t);
            let mut qs = Vec::with_capacity(values.len());
            for &v in values {
                let q = round_ties_even(v * scale);
                if q.is_nan() || q.abs() > MAX_EXACT as f64 {
                    return Err(not_representable("value not quantizable at this step (NaN, infinite or too large)"));
                }
                qs.push(q as i64);
            }
            out.push(FLOAT_QUANTIZED);
            out.push(*t as u8);
            FloatCodec::Quantized { t: *t, ints: encode_at(&qs, ints, depth + 1, out)? }
        }
        FloatCodec::DecimalResidual { e, ints, residuals } => {
            if *e > 18 {
                return Err(not_representable("decimal + residual exponent above 18"));
            }
            let (is, rs) = split_residual(values, *e);
            out.push(FLOAT_DECIMAL_RESIDUAL);
            out.push(*e);
            let ints = encode_at(&is, ints, depth + 1, out)?;
            let residuals = encode_at(&rs, residuals, depth + 1, out)?;
            FloatCodec::DecimalResidual { e: *e, ints, residuals }
        }
        FloatCodec::Split { l } => {
            if !(1..=16).contains(l) {
                return Err(not_representable("split left width not in 1..=16"));
            }
            super::split::write_split(values, *l, out);
            FloatCodec::Split { l: *l }
        }
    };
    Ok(taken)
}

/// Decodes one float stream of `n` values at `pos`; returns the values and the position
/// after the stream.
pub(crate) fn decode_floats(buf: &[u8], pos: usize, n: usize, limits: &Limits) -> Result<(Vec<f64>, usize)> {
    let mut r = Reader::new(buf, pos, limits);
    let mut out = Vec::new();
    read_floats(&mut r, n, 0, &mut out)?;
    Ok((out, r.pos))
}

fn check_exact(r: &Reader, at: usize, ints: &[i64]) -> Result<()> {
    if ints.iter().any(|i| i.unsigned_abs() > MAX_EXACT as u64) {
        return Err(r.err(at, "decimal or quantized integer above 2^53"));
    }
    Ok(())
}

pub(crate) fn read_floats(r: &mut Reader, n: usize, depth: u32, out: &mut Vec<f64>) -> Result<()> {
    r.check_values(n)?;
    if n == 0 {
        return Ok(());
    }
    r.check_depth(depth)?;
    let at = r.pos;
    match r.u8()? {
        FLOAT_PLAIN => {
            let bytes = r.take(n.checked_mul(8).ok_or_else(|| r.err(at, "plain floats too long"))?)?;
            out.reserve(n);
            out.extend(bytes.chunks_exact(8).map(|b| f64::from_bits(u64::from_le_bytes(b.try_into().unwrap()))));
        }
        FLOAT_DECIMAL => {
            let e = r.u8()?;
            if e > 22 {
                return Err(r.err(at + 1, "decimal exponent above 22"));
            }
            let ints_at = r.pos;
            let mut ints = Vec::new();
            read_ints(r, n, depth + 1, None, &mut ints)?;
            check_exact(r, ints_at, &ints)?;
            let start = out.len();
            out.reserve(n);
            out.extend(ints.iter().map(|&i| decimal(i, e)));
            let m = r.count(0, n, "patch count above n")?;
            if m > 0 {
                let pw = r.u8()? as u32;
                let gaps_at = r.pos;
                let gap_bytes = r.packed(m, pw)?;
                let raw = r.take(m * 8)?;
                let mut gaps = Vec::new();
                unpack(gap_bytes, m, pw, &mut gaps);
                let mut positions = PatchPositions::new(n);
                for (&g, b) in gaps.iter().zip(raw.chunks_exact(8)) {
                    let p = positions.next(g, r, gaps_at)?;
                    out[start + p] = f64::from_bits(u64::from_le_bytes(b.try_into().unwrap()));
                }
            }
        }
        FLOAT_QUANTIZED => {
            let t = r.u8()? as i8;
            if !(-60..=60).contains(&t) {
                return Err(r.err(at + 1, "quantization step exponent outside -60..=60"));
            }
            let ints_at = r.pos;
            let mut qs = Vec::new();
            read_ints(r, n, depth + 1, None, &mut qs)?;
            check_exact(r, ints_at, &qs)?;
            let step = pow2(t);
            out.reserve(n);
            out.extend(qs.iter().map(|&q| q as f64 * step));
        }
        FLOAT_DECIMAL_RESIDUAL => {
            let e = r.u8()?;
            if e > 18 {
                return Err(r.err(at + 1, "decimal + residual exponent above 18"));
            }
            let ints_at = r.pos;
            let mut ints = Vec::new();
            read_ints(r, n, depth + 1, None, &mut ints)?;
            check_exact(r, ints_at, &ints)?;
            let mut res = Vec::new();
            read_ints(r, n, depth + 1, None, &mut res)?;
            out.reserve(n);
            out.extend(
                ints.iter().zip(&res).map(|(&i, &d)| f64::from_bits(decimal(i, e).to_bits().wrapping_add(d as u64))),
            );
        }
        FLOAT_PCO => {
            return Err(Error::new(Category::Unsupported, "float codec 0x11 (pco) is not supported").at(at as u64))
        }
        FLOAT_SPLIT => super::split::read_split(r, n, out)?,
        _ => return Err(r.err(at, "unknown float codec")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_without_the_call_is_round_ties_even() {
        let mut next = crate::testing::xorshift(0x2545_F491_4F6C_DD1D);
        let mut cases: Vec<f64> = vec![0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 4503599627370495.5];
        cases.extend([2f64.powi(51) - 0.5, 2f64.powi(51), 2f64.powi(52) + 1.0, f64::MAX, f64::MIN_POSITIVE, 1e-300]);
        cases.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -0.0, 0.0]);
        for _ in 0..100_000 {
            let scale = 10f64.powi((next() % 40) as i32 - 10);
            cases.push((next() as i64) as f64 / 9_223_372_036_854_775_808.0 * scale);
            cases.push(f64::from_bits(next()));
        }
        for &y in &cases {
            let (ours, std) = (round_ties_even(y), y.round_ties_even());
            assert!(ours == std || (ours.is_nan() && std.is_nan()), "{y:e}: {ours:e} against {std:e}");
        }
    }

    fn enc(values: &[f64], c: FloatCodec) -> Vec<u8> {
        let mut out = Vec::new();
        encode_floats(values, &c, &mut out).unwrap();
        out
    }

    fn dec(bytes: &[u8], n: usize) -> Vec<f64> {
        let (v, end) = decode_floats(bytes, 0, n, &Limits::default()).unwrap();
        assert_eq!(end, bytes.len());
        v
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Byte vectors written by hand from §5.2.
    #[test]
    fn fixed_vectors() {
        // plain: 1.0 = 0x3FF0_0000_0000_0000
        let v = [1.0];
        let b = vec![0x10, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F];
        assert_eq!(enc(&v, FloatCodec::Plain), b);
        assert_eq!(bits(&dec(&b, 1)), bits(&v));

        // decimal e = 2: 1.25 → 125, 0.5 → 50, π is a patch at position 2 (pw = 2, gap 2)
        // ints plain k = 1: 125, 50, then 50 again (the previous good integer)
        let v = [1.25, 0.5, std::f64::consts::PI];
        let mut b = vec![0x12, 2, 0x00, 1, 125, 50, 50, 1, 2, 0x02];
        b.extend_from_slice(&std::f64::consts::PI.to_bits().to_le_bytes());
        assert_eq!(enc(&v, FloatCodec::Decimal { e: 2, ints: IntCodec::Plain }), b);
        assert_eq!(bits(&dec(&b, 3)), bits(&v));

        // quantized t = −1 (step 0.5): 1.3 → q = 3 (1.5), −0.2 → q = 0 (ties: −0.4 → −0)
        let v = [1.3, -0.2];
        let b = vec![0x14, 0xFF, 0x00, 1, 3, 0];
        assert_eq!(enc(&v, FloatCodec::Quantized { t: -1, ints: IntCodec::Plain }), b);
        assert_eq!(dec(&b, 2), vec![1.5, 0.0]);

        // decimal + residual e = 1: 0.1 + 0.2 = 0.30000000000000004 is 3 ⊘ 10 plus one ulp
        let v = [0.1 + 0.2, 0.5];
        let b = vec![0x15, 1, 0x00, 1, 3, 5, 0x00, 1, 1, 0];
        assert_eq!(enc(&v, FloatCodec::DecimalResidual { e: 1, ints: IntCodec::Plain, residuals: IntCodec::Plain }), b);
        assert_eq!(bits(&dec(&b, 2)), bits(&v));
    }

    #[test]
    fn residual_is_exact_for_every_double() {
        let v = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 5e-324, f64::MAX, f64::MIN, -1.5e300, 1e-310];
        for e in [0u8, 9, 18] {
            let c = FloatCodec::DecimalResidual { e, ints: IntCodec::Plain, residuals: IntCodec::Plain };
            assert_eq!(bits(&dec(&enc(&v, c), v.len())), bits(&v));
        }
    }

    #[test]
    fn reserved_and_bad_streams() {
        let lim = Limits::default();
        for (bytes, cat) in [
            (&[0x11u8, 0][..], Category::Unsupported),
            (&[0x13, 0], Category::Malformed),
            (&[0x13, 17], Category::Malformed),
            (&[0x13, 8, 0], Category::Malformed),
            (&[0x13, 8, 1, 0, 1, 0], Category::Malformed), // left 256 wider than 8 bits
            (&[0x13, 8, 2, 0, 0, 1, 0, 0], Category::Malformed), // dw 0 with d = 2
            (&[0x12, 23, 0x01, 0, 0], Category::Malformed),
            (&[0x15, 19, 0x01, 0, 0x01, 0], Category::Malformed),
            (&[0x14, 61, 0x01, 0], Category::Malformed),
            (&[0x14, 0, 0x01, 0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20], Category::Malformed), // 2^53 + 1
            (&[0x12, 0, 0x01, 0, 2, 0, 0], Category::Malformed),                                     // m = 2 > n = 1
            (&[0x17], Category::Malformed),
        ] {
            let e = decode_floats(bytes, 0, 1, &lim).unwrap_err();
            assert_eq!(e.category(), cat, "{bytes:?}: {e}");
        }
    }
}

//! Cross-codec tests: round trips of every codec and of the selector on random and
//! adversarial inputs, every truncation an error, random bytes never a panic, and the
//! size sanity check on the bench data (ignored by default).

use proptest::prelude::*;

use super::float::{decode_floats, encode_floats, FloatCodec};
use super::int::{decode_ints, encode_ints, IntCodec};
use super::string::{decode_strings, encode_strings, StrCodec};
use super::{select, Limits};

fn int_codecs() -> Vec<IntCodec> {
    use IntCodec::*;
    vec![
        Auto,
        Plain,
        For,
        Patched,
        IntCodec::delta(Auto),
        IntCodec::delta(Patched),
        IntCodec::delta(IntCodec::rle(For, Plain)),
        IntCodec::rle(Auto, Auto),
        IntCodec::rle(IntCodec::dict(For), IntCodec::delta(For)),
        IntCodec::dict(Auto),
        IntCodec::dict(IntCodec::delta(Patched)),
    ]
}

fn adversarial_ints() -> Vec<Vec<i64>> {
    vec![
        vec![0],
        vec![i64::MIN],
        vec![i64::MAX; 5],
        vec![i64::MIN, i64::MAX, i64::MIN, i64::MAX],
        vec![i64::MAX, i64::MIN, 0, -1, 1],
        (0..2000).map(|j| if j % 2 == 0 { i64::MIN } else { i64::MAX }).collect(),
        (0..5000).map(|j| j * 7 - 3).collect(),
        (0..5000).map(|j| if j % 97 == 0 { i64::MIN + j } else { j % 5 }).collect(),
        (0..4096).map(|j| (j / 300) as i64).collect(),
    ]
}

/// Every strict prefix of a stream must fail to decode (streams are self-delimiting and
/// every byte counts), and must not panic.
fn truncations_fail<T>(bytes: &[u8], decode: impl Fn(&[u8]) -> crate::Result<T>) {
    for cut in 0..bytes.len() {
        assert!(decode(&bytes[..cut]).is_err(), "prefix of {cut} of {} bytes decoded", bytes.len());
    }
}

fn check_ints(values: &[i64], codec: &IntCodec) {
    let lim = Limits::default();
    let mut out = Vec::new();
    encode_ints(values, codec, &mut out).unwrap();
    let (back, end) = decode_ints(&out, 0, values.len(), &lim).unwrap();
    assert_eq!(back, values, "{codec:?}");
    assert_eq!(end, out.len());
    if out.len() < 4096 {
        truncations_fail(&out, |b| decode_ints(b, 0, values.len(), &lim));
    }
}

#[test]
fn ints_adversarial_round_trip() {
    for values in adversarial_ints() {
        for c in int_codecs() {
            check_ints(&values, &c);
        }
    }
}

fn adversarial_floats() -> Vec<Vec<f64>> {
    let specials = [
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7FF0_0000_0000_0001),
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.0,
        5e-324,
        -2.2250738585072014e-308,
        f64::MAX,
        f64::MIN,
        1e300,
        0.1,
        -69.99693762899992,
    ];
    vec![
        specials.to_vec(),
        vec![-0.0; 10],
        (0..3000).map(|j| j as f64 * 0.01).collect(),
        (0..3000).map(|j| -69.99693762899992 + j as f64 * 1e-6).collect(),
        (0..3000).map(|j| if j % 50 == 0 { specials[j / 50 % specials.len()] } else { j as f64 / 8.0 }).collect(),
    ]
}

fn float_codecs() -> Vec<FloatCodec> {
    use IntCodec::Auto;
    vec![
        FloatCodec::Plain,
        FloatCodec::Decimal { e: 0, ints: Auto },
        FloatCodec::Decimal { e: 2, ints: IntCodec::delta(Auto) },
        FloatCodec::Decimal { e: 22, ints: Auto },
        FloatCodec::DecimalResidual { e: 0, ints: Auto, residuals: Auto },
        FloatCodec::DecimalResidual { e: 9, ints: IntCodec::delta(IntCodec::Patched), residuals: IntCodec::Patched },
        FloatCodec::DecimalResidual { e: 18, ints: IntCodec::Plain, residuals: Auto },
        FloatCodec::Split { l: 1 },
        FloatCodec::Split { l: 12 },
        FloatCodec::Split { l: 16 },
    ]
}

pub(super) fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

fn check_floats(values: &[f64], codec: &FloatCodec) {
    let lim = Limits::default();
    let mut out = Vec::new();
    encode_floats(values, codec, &mut out).unwrap();
    let (back, end) = decode_floats(&out, 0, values.len(), &lim).unwrap();
    assert!(same_bits(&back, values), "{codec:?}");
    assert_eq!(end, out.len());
    if out.len() < 4096 {
        truncations_fail(&out, |b| decode_floats(b, 0, values.len(), &lim));
    }
}

fn check_quantized(values: &[f64], t: i8) {
    let mut out = Vec::new();
    let c = FloatCodec::Quantized { t, ints: IntCodec::Auto };
    if encode_floats(values, &c, &mut out).is_err() {
        assert!(values.iter().any(|v| !v.is_finite() || (v * 2f64.powi(-t as i32)).abs() > (1u64 << 53) as f64));
        return;
    }
    let (back, _) = decode_floats(&out, 0, values.len(), &Limits::default()).unwrap();
    let half = 2f64.powi(t as i32 - 1);
    for (a, b) in values.iter().zip(&back) {
        assert!((a - b).abs() <= half, "{a} → {b} with step 2^{t}");
    }
}

#[test]
fn floats_adversarial_round_trip() {
    for values in adversarial_floats() {
        for c in float_codecs() {
            check_floats(&values, &c);
        }
        let mut out = Vec::new();
        select::write_floats(&values, None, &mut out).unwrap();
        assert!(same_bits(&decode_floats(&out, 0, values.len(), &Limits::default()).unwrap().0, &values));
        check_quantized(&values, -12);
    }
    check_quantized(&[1.0, -3.75, 1e-20, 123456.789], -12);
    check_quantized(&[1e15, -1e15], 0);
}

fn check_strings(values: &[String], codec: &StrCodec) {
    let lim = Limits::default();
    let mut out = Vec::new();
    if encode_strings(values, codec, &mut out).is_err() {
        return; // numeric or hex codec on values of another form
    }
    let (back, end) = decode_strings(&out, 0, values.len(), &lim).unwrap();
    assert_eq!(back, values, "{codec:?}");
    assert_eq!(end, out.len());
    if out.len() < 4096 {
        truncations_fail(&out, |b| decode_strings(b, 0, values.len(), &lim));
    }
}

fn str_codecs() -> Vec<StrCodec> {
    use IntCodec::Auto;
    vec![
        StrCodec::Auto,
        StrCodec::Plain(Auto),
        StrCodec::Dict(Box::new(StrCodec::Auto), Auto),
        StrCodec::Dict(Box::new(StrCodec::Plain(IntCodec::Plain)), IntCodec::For),
        StrCodec::Numeric(Auto, Auto),
        StrCodec::Hex(Auto),
        StrCodec::Symbols(Auto),
        StrCodec::Dict(Box::new(StrCodec::Symbols(IntCodec::For)), Auto),
    ]
}

#[test]
fn strings_adversarial_round_trip() {
    let sets: Vec<Vec<String>> = vec![
        vec!["".into()],
        vec!["30000000000000000000".into(), "500".into(), "0".into(), "-9223372036854775808".into(), "-10".into()],
        vec!["0xdeadbeef".into(), "0x".into(), "0x00ff".into()],
        vec!["DEADBEEF".into(), "0012".into()],
        vec!["héllo".into(), "wörld 🌍".into(), "".into(), "héllo".into()],
        (0..3000).map(|j| format!("{}", j * 1000)).collect(),
        (0..3000).map(|j| format!("name {}", j % 7)).collect(),
    ];
    for values in sets {
        for c in str_codecs() {
            check_strings(&values, &c);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn ints_round_trip(values in prop::collection::vec(prop_oneof![any::<i64>(), -50i64..50, Just(i64::MIN), Just(i64::MAX)], 1..300)) {
        for c in int_codecs() {
            check_ints(&values, &c);
        }
    }

    #[test]
    fn int_runs_round_trip(runs in prop::collection::vec((any::<i16>(), 1usize..40), 1..60)) {
        let values: Vec<i64> = runs.iter().flat_map(|&(v, l)| std::iter::repeat_n(v as i64, l)).collect();
        for c in int_codecs() {
            check_ints(&values, &c);
        }
    }

    #[test]
    fn floats_round_trip(bits in prop::collection::vec(any::<u64>(), 1..200), decimals in prop::collection::vec(-10_000_000i64..10_000_000, 1..200), e in 0u8..10) {
        let raw: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
        let dec: Vec<f64> = decimals.iter().map(|&i| i as f64 / 10f64.powi(e as i32)).collect();
        for values in [&raw, &dec] {
            for c in float_codecs() {
                check_floats(values, &c);
            }
            let mut out = Vec::new();
            select::write_floats(values, None, &mut out).unwrap();
            prop_assert!(same_bits(&decode_floats(&out, 0, values.len(), &Limits::default()).unwrap().0, values));
            check_quantized(values, -12);
            check_quantized(values, 3);
        }
    }

    #[test]
    fn strings_round_trip(values in prop::collection::vec(prop_oneof!["[a-c]{0,3}", "\\PC{0,8}", "0|-?[1-9][0-9]{0,25}", "0x([0-9a-f]{2}){0,4}"], 1..100)) {
        for c in str_codecs() {
            check_strings(&values, &c);
        }
    }

    #[test]
    fn fuzz_entry_holds(data in prop::collection::vec(any::<u8>(), 0..300), head in any::<u8>()) {
        let mut d = data;
        if let Some(b) = d.first_mut() {
            *b = head;
        }
        super::fuzz::page(&d);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64), n in 0usize..2000) {
        let lim = Limits { max_values: 4096, max_page_bytes: 1 << 20 };
        let _ = decode_ints(&bytes, 0, n, &lim);
        let _ = decode_floats(&bytes, 0, n, &lim);
        let _ = decode_strings(&bytes, 0, n, &lim);
    }

    #[test]
    fn codec_headed_bytes_never_panic(codec in prop_oneof![0u8..8, 0x10u8..0x16, 0x20u8..0x25], tail in prop::collection::vec(prop_oneof![0u8..4, any::<u8>()], 0..48), n in 1usize..100) {
        let mut bytes = vec![codec];
        bytes.extend(tail);
        let lim = Limits { max_values: 4096, max_page_bytes: 1 << 20 };
        let _ = decode_ints(&bytes, 0, n, &lim);
        let _ = decode_floats(&bytes, 0, n, &lim);
        let _ = decode_strings(&bytes, 0, n, &lim);
    }
}

#[test]
fn selector_picks_small_codecs_and_falls_back_to_plain() {
    let mut out = Vec::new();
    select::write_ints(&[7; 4096], 0, &mut out).unwrap();
    assert_eq!(out, vec![0x01, 14]);
    out.clear();
    let ramp: Vec<i64> = (0..4096).map(|j| 1_000_000 + 3 * j).collect();
    select::write_ints(&ramp, 0, &mut out).unwrap();
    assert!(out.len() < 16, "ramp took {} bytes", out.len());
    out.clear();
    let random: Vec<f64> = (0..1000u64).map(|j| f64::from_bits(splitmix(j))).collect();
    select::write_floats(&random, None, &mut out).unwrap();
    assert_eq!(out[0], 0x10);
    assert_eq!(out.len(), 1 + 8 * 1000);
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Valid streams of every codec with bytes overwritten at random: decoders may fail but
/// never panic, and never return other than n values.
#[test]
fn mutated_streams_never_panic() {
    let mut streams: Vec<(Vec<u8>, usize, u8)> = Vec::new();
    for values in adversarial_ints() {
        let values = &values[..values.len().min(300)];
        for c in int_codecs() {
            let mut out = Vec::new();
            encode_ints(values, &c, &mut out).unwrap();
            streams.push((out, values.len(), 0));
        }
    }
    for values in adversarial_floats() {
        let values = &values[..values.len().min(300)];
        for c in float_codecs() {
            let mut out = Vec::new();
            encode_floats(values, &c, &mut out).unwrap();
            streams.push((out, values.len(), 1));
        }
    }
    let strings: Vec<String> = (0..200).map(|j| format!("0x{:04x}", j * 37 % 50)).collect();
    for c in str_codecs() {
        let mut out = Vec::new();
        if encode_strings(&strings, &c, &mut out).is_ok() {
            streams.push((out, strings.len(), 2));
        }
    }
    let lim = Limits { max_values: 4096, max_page_bytes: 1 << 20 };
    let mut seed = 1u64;
    for (bytes, n, kind) in &streams {
        for _ in 0..2000 {
            let mut b = bytes.clone();
            for _ in 0..1 + (splitmix(seed) % 3) {
                seed = splitmix(seed);
                let at = (seed % b.len() as u64) as usize;
                seed = splitmix(seed);
                b[at] = match seed % 4 {
                    0 => 0,
                    1 => 0xFF,
                    2 => b[at].wrapping_add(1),
                    _ => (seed >> 8) as u8,
                };
            }
            let ok_len = match kind {
                0 => decode_ints(&b, 0, *n, &lim).map(|v| v.0.len()),
                1 => decode_floats(&b, 0, *n, &lim).map(|v| v.0.len()),
                _ => decode_strings(&b, 0, *n, &lim).map(|v| v.0.len()),
            };
            if let Ok(len) = ok_len {
                assert_eq!(len, *n);
            }
        }
    }
}

#[test]
fn decoded_blocks_keep_the_callers_depth_limit_and_type_number_arrays() {
    use crate::value::{Map, Value};
    // Objects nested `levels` deep around a string (no arrays of numbers).
    let nested = |levels: usize| {
        (0..levels).fold(Value::String("leaf".into()), |inner, _| {
            let mut m = Map::default();
            m.insert("k".into(), inner);
            Value::Object(m)
        })
    };
    let value = nested(10);
    assert!(super::as_decoded(value.clone(), 10, 77).is_ok());
    let e = super::as_decoded(value, 9, 77).unwrap_err();
    assert_eq!((e.category(), e.offset()), (crate::Category::DepthLimit, Some(77)));
    // An array of numbers anywhere, even after arrays of other values, is typed as §11
    // types it; the depth limit still holds.
    let with_numbers = Value::Array(vec![
        Value::Array(vec![Value::String("x".into())]),
        Value::Array(vec![Value::F64(1.5), Value::F64(2.5)]),
    ]);
    let typed = super::as_decoded(with_numbers.clone(), 8, 0).unwrap();
    assert!(matches!(&typed, Value::Array(items) if matches!(items[1], Value::Typed(_))), "{typed:?}");
    assert!(super::as_decoded(with_numbers, 1, 0).is_err());
}

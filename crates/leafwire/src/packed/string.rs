//! String codecs 0x20–0x24 (§5.3): plain, dictionary, numeric text, hex, and the symbol
//! table (in [`super::symbols`]).

use super::codec::*;
use super::int::{encode_at, read_ints, IntCodec};
use super::texts::Texts;
use super::{not_representable, select, Reader, MAX_NESTING};
#[cfg(test)]
use super::Limits;
use crate::error::{Category, Error, Result};
use crate::format::numbers::write_varint;

/// A string codec with its nested codecs, as an encoder is asked to write it. `Auto` lets
/// the selector choose for that stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StrCodec {
    Auto,
    /// The selector's choice without the symbol table: how a dictionary's values are
    /// sized in a trial on a sample, as the page's own dictionary is chosen (and its
    /// table trained) again when the page is written.
    AutoUntrained,
    /// Nested: the byte lengths.
    Plain(IntCodec),
    /// Nested: the distinct values in first-occurrence order (not dictionary), the codes.
    Dict(Box<StrCodec>, IntCodec),
    /// Nested: significands, trailing-zero counts.
    Numeric(IntCodec, IntCodec),
    /// Nested: byte lengths.
    Hex(IntCodec),
    /// Nested: encoded lengths.
    Symbols(IntCodec),
}

/// Significand and trailing-zero count of a string of the form `0|-?[1-9][0-9]*` whose
/// significand fits an i64 (and at most 64 trailing zeros); `None` for any other string.
pub(crate) fn numeric_parts(s: &str) -> Option<(i64, i64)> {
    if s == "0" {
        return Some((0, 0));
    }
    let digits = s.strip_prefix('-').unwrap_or(s).as_bytes();
    if digits.first().is_none_or(|&d| !(b'1'..=b'9').contains(&d)) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let kept = digits.iter().rposition(|&d| d != b'0').map_or(0, |p| p + 1);
    let zeros = digits.len() - kept;
    if zeros > 64 {
        return None;
    }
    let sig_len = s.len() - zeros;
    let sig: i64 = s[..sig_len].parse().ok()?;
    Some((sig, zeros as i64))
}

/// The hex flags (bit 0 `0x` prefix, bit 1 upper case) under which every value is hex
/// text, or `None`.
pub(crate) fn hex_flags<S: AsRef<str>>(values: &[S]) -> Option<u8> {
    let prefix = values.first()?.as_ref().starts_with("0x");
    let (mut lower, mut upper) = (false, false);
    for v in values {
        let v = v.as_ref();
        let digits = if prefix { v.strip_prefix("0x")? } else { v };
        if digits.len() % 2 != 0 {
            return None;
        }
        for c in digits.bytes() {
            match c {
                b'0'..=b'9' => {}
                b'a'..=b'f' => lower = true,
                b'A'..=b'F' => upper = true,
                _ => return None,
            }
        }
    }
    if lower && upper {
        return None;
    }
    Some(prefix as u8 | (upper as u8) << 1)
}

fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// Writes `values` as one stream with `codec` (nothing when `values` is empty).
pub(crate) fn encode_strings<S: AsRef<str>>(values: &[S], codec: &StrCodec, out: &mut Vec<u8>) -> Result<()> {
    encode_strings_at(values, codec, 0, out)
}

pub(crate) fn encode_strings_at<S: AsRef<str>>(
    values: &[S],
    codec: &StrCodec,
    depth: u32,
    out: &mut Vec<u8>,
) -> Result<()> {
    if values.is_empty() {
        return Ok(());
    }
    if depth > MAX_NESTING {
        return Err(not_representable("string cascade nested deeper than 3"));
    }
    match codec {
        StrCodec::Auto => return select::write_strings(values, depth, true, true, out),
        StrCodec::AutoUntrained => return select::write_strings(values, depth, true, false, out),
        StrCodec::Plain(lengths) => {
            out.push(STR_PLAIN);
            let lens: Vec<i64> = values.iter().map(|v| v.as_ref().len() as i64).collect();
            encode_at(&lens, lengths, depth + 1, out)?;
            for v in values {
                out.extend_from_slice(v.as_ref().as_bytes());
            }
        }
        StrCodec::Dict(dict_codec, codes_codec) => {
            if matches!(**dict_codec, StrCodec::Dict(..)) {
                return Err(not_representable("string dictionary nested in a dictionary"));
            }
            let (dict, codes) = dictionary(values);
            out.push(STR_DICT);
            write_varint(out, dict.len() as u64);
            if let StrCodec::Auto | StrCodec::AutoUntrained = **dict_codec {
                if depth + 1 > MAX_NESTING {
                    return Err(not_representable("string cascade nested deeper than 3"));
                }
                select::write_strings(&dict, depth + 1, false, **dict_codec == StrCodec::Auto, out)?;
            } else {
                encode_strings_at(&dict, dict_codec, depth + 1, out)?;
            }
            encode_at(&codes, codes_codec, depth + 1, out)?;
        }
        StrCodec::Numeric(sig_codec, zeros_codec) => {
            let mut sig = Vec::with_capacity(values.len());
            let mut zeros = Vec::with_capacity(values.len());
            for v in values {
                let (s, z) =
                    numeric_parts(v.as_ref()).ok_or_else(|| not_representable("string is not numeric text"))?;
                sig.push(s);
                zeros.push(z);
            }
            out.push(STR_NUMERIC);
            encode_at(&sig, sig_codec, depth + 1, out)?;
            encode_at(&zeros, zeros_codec, depth + 1, out)?;
        }
        StrCodec::Hex(lengths) => {
            let flags = hex_flags(values).ok_or_else(|| not_representable("strings are not hex text of one form"))?;
            let skip = if flags & 1 != 0 { 2 } else { 0 };
            out.push(STR_HEX);
            out.push(flags);
            let lens: Vec<i64> = values.iter().map(|v| ((v.as_ref().len() - skip) / 2) as i64).collect();
            encode_at(&lens, lengths, depth + 1, out)?;
            for v in values {
                let d = &v.as_ref().as_bytes()[skip..];
                out.extend(d.chunks_exact(2).map(|p| hex_value(p[0]) << 4 | hex_value(p[1])));
            }
        }
        StrCodec::Symbols(lengths) => super::symbols::write_symbols(values, lengths, depth, out)?,
    }
    Ok(())
}

/// Distinct values in first-occurrence order and each value's code.
pub(crate) fn dictionary<S: AsRef<str>>(values: &[S]) -> (Vec<&str>, Vec<i64>) {
    let mut index: rustc_hash::FxHashMap<&str, i64> = Default::default();
    let mut dict = Vec::new();
    let codes = values
        .iter()
        .map(|v| {
            let v = v.as_ref();
            *index.entry(v).or_insert_with(|| {
                dict.push(v);
                dict.len() as i64 - 1
            })
        })
        .collect();
    (dict, codes)
}

/// Decodes one string stream of `n` values at `pos`; returns the values and the position
/// after the stream.
#[cfg(test)]
pub(crate) fn decode_strings(buf: &[u8], pos: usize, n: usize, limits: &Limits) -> Result<(Vec<String>, usize)> {
    let mut r = Reader::new(buf, pos, limits);
    let mut out = Texts::default();
    read_strings(&mut r, n, 0, None, &mut out)?;
    Ok((out.iter().map(str::to_owned).collect(), r.pos))
}

pub(crate) fn too_big(r: &Reader, at: usize) -> Error {
    Error::new(
        Category::LimitExceeded,
        format!("decoded strings of a page exceed {} bytes (raise max_page_bytes)", r.limits.max_page_bytes),
    )
    .at(at as u64)
}

/// Byte lengths from a nested stream: each ≥ 0, their sum within the bytes left.
pub(crate) fn read_lengths(r: &mut Reader, n: usize, depth: u32) -> Result<(Vec<usize>, usize)> {
    let at = r.pos;
    let mut lens = Vec::new();
    read_ints(r, n, depth + 1, None, &mut lens)?;
    let mut total: usize = 0;
    let mut out = Vec::with_capacity(n);
    for &l in &lens {
        let l = usize::try_from(l).map_err(|_| r.err(at, "negative string length"))?;
        total = total
            .checked_add(l)
            .filter(|&t| t <= r.remaining())
            .ok_or_else(|| r.err(at, "string lengths exceed the stream"))?;
        out.push(l);
    }
    Ok((out, total))
}

/// Appends the `n` strings of the stream at `r` to `out`; a nested stream may not use the
/// codec `forbid` (a dictionary's values are not a dictionary).
pub(crate) fn read_strings(r: &mut Reader, n: usize, depth: u32, forbid: Option<u8>, out: &mut Texts) -> Result<()> {
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
        STR_PLAIN => {
            let (lens, total) = read_lengths(r, n, depth)?;
            let data_at = r.pos;
            let bytes = r.take(total)?;
            // One check of the page's text, then of the cuts between its strings.
            let text = std::str::from_utf8(bytes).map_err(|e| r.err(data_at + e.valid_up_to(), "string is not UTF-8"))?;
            out.push_cut(text, &lens).map_err(|e| r.err(data_at + e.byte, "string is not UTF-8"))?;
        }
        STR_DICT => {
            let d = r.count(1, n, "dictionary size not in 1..=n")?;
            let mut dict = Texts::default();
            read_strings(r, d, depth + 1, Some(STR_DICT), &mut dict)?;
            let codes_at = r.pos;
            let mut codes = Vec::new();
            read_ints(r, n, depth + 1, None, &mut codes)?;
            // The strings share the dictionary's text, but each is its own when read
            // out: what they expand to is bounded as other codecs' text is.
            let mut total: usize = 0;
            for &code in &codes {
                let s = usize::try_from(code)
                    .ok()
                    .and_then(|c| dict.get(c))
                    .ok_or_else(|| r.err(codes_at, "dictionary code out of range"))?;
                total = total.saturating_add(s.len());
            }
            if total > r.limits.max_page_bytes {
                return Err(too_big(r, codes_at));
            }
            out.push_codes(&dict, &codes).expect("codes checked above");
        }
        STR_NUMERIC => {
            // A numeric text's trailing zeros (at most 64, checked below), appended at once.
            const ZEROS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
            let mut sig = Vec::new();
            read_ints(r, n, depth + 1, None, &mut sig)?;
            let zeros_at = r.pos;
            let mut zeros = Vec::new();
            read_ints(r, n, depth + 1, None, &mut zeros)?;
            // At most 20 + 64 bytes a value.
            if n.saturating_mul(84) > r.limits.max_page_bytes {
                let total: usize = zeros.iter().map(|&z| 20 + z.clamp(0, 64) as usize).sum();
                if total > r.limits.max_page_bytes {
                    return Err(too_big(r, zeros_at));
                }
            }
            let mut buf = itoa::Buffer::new();
            for (&s, &z) in sig.iter().zip(&zeros) {
                if !(0..=64).contains(&z) || (s == 0 && z != 0) {
                    return Err(r.err(zeros_at, "numeric text zero count out of range"));
                }
                let digits = buf.format(s);
                out.push_with(|text| {
                    text.push_str(digits);
                    text.push_str(&ZEROS[..z as usize]);
                });
            }
        }
        STR_HEX => {
            let flags_at = r.pos;
            let flags = r.u8()?;
            if flags > 3 {
                return Err(r.err(flags_at, "unknown hex flags"));
            }
            let (lens, total) = read_lengths(r, n, depth)?;
            let bytes = r.take(total)?;
            let prefix = if flags & 1 != 0 { "0x" } else { "" };
            let decoded = total.saturating_mul(2).saturating_add(n * prefix.len());
            if decoded > r.limits.max_page_bytes {
                return Err(too_big(r, flags_at));
            }
            let digits: &[u8; 16] = if flags & 2 != 0 { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
            let mut p = 0;
            for l in lens {
                out.push_with(|text| {
                    text.push_str(prefix);
                    for &b in &bytes[p..p + l] {
                        text.push(digits[(b >> 4) as usize] as char);
                        text.push(digits[(b & 15) as usize] as char);
                    }
                });
                p += l;
            }
        }
        STR_SYMBOLS => super::symbols::read_symbols(r, n, depth, out)?,
        _ => return Err(r.err(at, "unknown string codec")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(values: &[&str], c: StrCodec) -> Vec<u8> {
        let mut out = Vec::new();
        encode_strings(values, &c, &mut out).unwrap();
        out
    }

    fn dec(bytes: &[u8], n: usize) -> Vec<String> {
        let (v, end) = decode_strings(bytes, 0, n, &Limits::default()).unwrap();
        assert_eq!(end, bytes.len());
        v
    }

    /// Byte vectors written by hand from §5.3.
    #[test]
    fn fixed_vectors() {
        let cases: Vec<(Vec<&str>, StrCodec, Vec<u8>)> = vec![
            // lengths FOR base 1 (zz 2) w 1: u 1,0 → 0x01; then "ab", "c"
            (vec!["ab", "c"], StrCodec::Plain(IntCodec::For), vec![0x20, 0x02, 2, 1, 0x01, b'a', b'b', b'c']),
            // d = 2 ("yz", "x" in first-occurrence order) as plain, lengths 2, 1 plain k = 1;
            // codes 0, 1, 0 plain k = 1
            (
                vec!["yz", "x", "yz"],
                StrCodec::Dict(Box::new(StrCodec::Plain(IntCodec::Plain)), IntCodec::Plain),
                vec![0x21, 2, 0x20, 0x00, 1, 2, 1, b'y', b'z', b'x', 0x00, 1, 0, 1, 0],
            ),
            // "30000000000000000000" = 3 × 10^19 → s 3, z 19; "-120" → s −12, z 1; "0" → 0, 0
            (
                vec!["30000000000000000000", "-120", "0"],
                StrCodec::Numeric(IntCodec::Plain, IntCodec::Plain),
                vec![0x22, 0x00, 1, 3, 0xF4, 0, 0x00, 1, 19, 1, 0],
            ),
            // 0x prefix, lower case: "0xdead", "0x" → flags 1, lengths 2, 0 plain, bytes DE AD
            (vec!["0xdead", "0x"], StrCodec::Hex(IntCodec::Plain), vec![0x23, 1, 0x00, 1, 2, 0, 0xDE, 0xAD]),
            (vec!["0A"], StrCodec::Hex(IntCodec::Constant), vec![0x23, 2, 0x01, 2, 0x0A]),
        ];
        for (values, codec, bytes) in cases {
            assert_eq!(enc(&values, codec.clone()), bytes, "{codec:?}");
            assert_eq!(dec(&bytes, values.len()), values, "{codec:?}");
        }
    }

    #[test]
    fn numeric_text_is_only_canonical_integers() {
        for s in ["-0", "+1", "007", "1e5", "", "-", "1.0", " 1", "0x10", "١"] {
            assert_eq!(numeric_parts(s), None, "{s:?}");
        }
        assert_eq!(numeric_parts("-9223372036854775808"), Some((i64::MIN, 0)));
        assert_eq!(numeric_parts("9223372036854775808"), None);
        assert_eq!(numeric_parts("92233720368547758080"), None);
        assert_eq!(numeric_parts("92233720368547758070"), Some((i64::MAX, 1)));
        assert_eq!(numeric_parts(&format!("1{}", "0".repeat(64))), Some((1, 64)));
        assert_eq!(numeric_parts(&format!("1{}", "0".repeat(65))), None);
    }

    #[test]
    fn bad_streams() {
        let lim = Limits::default();
        for (bytes, n, cat) in [
            (&[0x20u8, 0x01, 2, 0xFF][..], 1, Category::Malformed), // not UTF-8
            (&[0x20, 0x01, 2, b'a'], 2, Category::Malformed),       // lengths exceed bytes
            (&[0x20, 0x01, 3], 1, Category::Malformed),             // negative length
            (&[0x21, 1, 0x21, 1, 0x20, 0x01, 0, 0x01, 0, 0x01, 0], 1, Category::Malformed), // dict in dict
            (&[0x21, 1, 0x20, 0x01, 0, 0x01, 2], 1, Category::Malformed), // code 1 ≥ d
            (&[0x22, 0x01, 0, 0x01, 2], 1, Category::Malformed),    // "0" with a zero count
            (&[0x22, 0x01, 2, 0x01, 130, 1], 1, Category::Malformed), // z = 65
            (&[0x23, 4, 0x01, 0], 1, Category::Malformed),          // unknown flag
        ] {
            let e = decode_strings(bytes, 0, n, &lim).unwrap_err();
            assert_eq!(e.category(), cat, "{bytes:?}: {e}");
        }
    }

    #[test]
    fn dictionary_expansion_is_bounded() {
        // One 1000-byte string repeated 65,536 times by a 3-byte code stream.
        let mut b = vec![0x21, 1, 0x20, 0x01, 0xD0, 0x0F];
        b.extend(std::iter::repeat_n(b'a', 1000));
        b.extend([0x01, 0]);
        let lim = Limits { max_values: 65_536, max_page_bytes: 1 << 20 };
        let e = decode_strings(&b, 0, 65_536, &lim).unwrap_err();
        assert_eq!(e.category(), Category::LimitExceeded);
        assert_eq!(decode_strings(&b, 0, 1000, &lim).unwrap().0.len(), 1000);
    }
}

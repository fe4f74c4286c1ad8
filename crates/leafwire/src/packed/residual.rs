//! Residual pages (spec §13.3): the values of a column that are kept whole, in one of two
//! forms. The document form is a Leafwire document whose root is the array of the page's
//! values; the JSON form is a zstd stage (codec byte 0x30, as §13.5.4 frames it) whose
//! content is the JSON text of that array. The JSON form is what lets a subtree that does
//! not shred (configuration, documentation text, objects of unique keys) cost what zstd
//! makes of its JSON: the breadth-first layout takes keys and structure away from the
//! values they sit beside in text, which LZ then cannot match as one phrase
//! (spec/design/packed.md, open question 6).

use super::codec::ZSTD;
use super::input::{Input, View};
use super::{zstd_stage, Limits, Reader};
use crate::error::{Category, Error, Result};
use crate::value::Value;

/// A residual page's document nests one level deeper than its values: its root array.
pub(crate) const PAGE_DEPTH: usize = crate::format::DEFAULT_MAX_DEPTH + 1;

/// The zstd level of the JSON form when the document has none: the text is what zstd is
/// best at, and level 9 takes 15–20 % off level 3's frame (measured on AWS service
/// definitions and policies) at about 50 MB/s.
pub(crate) const DEFAULT_JSON_LEVEL: i32 = 9;

/// The zstd level of a JSON page for a document packed at `zstd_level` (if any).
pub(crate) fn json_level(zstd_level: Option<i32>) -> i32 {
    zstd_level.map_or(DEFAULT_JSON_LEVEL, |l| l.max(DEFAULT_JSON_LEVEL))
}

/// The residual page of `values`: the JSON form when every value has an exact JSON form
/// and its frame is smaller, else the document form.
pub(crate) fn encode_page(values: &[Value], zstd_level: Option<i32>) -> Result<Vec<u8>> {
    let document = crate::encode_with(&Value::Array(values.to_vec()), PAGE_DEPTH)?;
    if !values.iter().all(json_exact) {
        return Ok(document);
    }
    match json_page(&document, json_level(zstd_level)) {
        Some(page) if page.len() < document.len() => Ok(page),
        _ => Ok(document),
    }
}

/// The JSON form of the page whose document form is `document`, or `None` when its text
/// cannot be written (a number JSON has no text for) or framed.
fn json_page(document: &[u8], level: i32) -> Option<Vec<u8>> {
    let text = crate::json::to_json_with(
        document,
        &crate::json::JsonOptions { max_depth: PAGE_DEPTH, ..Default::default() },
    )
    .ok()?;
    if text.len() > Limits::default().max_page_bytes {
        return None;
    }
    // Higher levels are not always smaller: on text of little redundancy (long random
    // digits) level 1 beats level 9 by a tenth, and costs little next to it.
    let frame = [level, 1]
        .into_iter()
        .filter_map(|l| zstd_stage::frame(text.as_bytes(), l))
        .min_by_key(Vec::len)?;
    let mut page = Vec::with_capacity(1 + frame.len());
    page.push(ZSTD);
    page.extend_from_slice(&frame);
    Some(page)
}

/// Whether the residual form of `elements` (each kept whole, as JSON pages) may come out
/// smaller than their shredded group of `than` bytes: their JSON text (up to
/// `CHECK_TEXT` bytes of it, scaled to all of them) framed at level 3 must come within
/// `LEVEL_GAIN` of `than`, as the pages' higher level takes that much off (measured on
/// AWS service definitions). A sample spread over the elements was tried first and
/// misjudged both ways: it flatters JSON where the shredder's dictionaries gain most
/// from the whole (GraphQL orders: an eighth frames 19 % under its group, the whole 35 %
/// over), and shredding the sample cost more than this check. A wrong guess costs only
/// encode time.
pub(crate) fn json_form_may_win<E: JsonElement>(elements: &[E], than: usize) -> bool {
    let mut text = Capped(Vec::new());
    let mut written = 0;
    for element in elements {
        // serde_json writes the text straight from the values; its numbers may be spelled
        // otherwise than §11's, not so as to change the estimate.
        if serde_json::to_writer(&mut text, element).is_err() {
            break;
        }
        text.0.push(b',');
        written += 1;
    }
    let Ok(frame) = zstd_stage::compress(&text.0, 3) else { return false };
    // Scaled by the text's length, not the elements' count: elements differ in size (the
    // first countries of a GeoJSON file are islands), and a first guess at each one's
    // text is cheap to make.
    let framed: u64 = elements[..written].iter().map(E::text_len_guess).sum();
    let total = framed + elements[written..].iter().map(E::text_len_guess).sum::<u64>();
    let framed = if written == 0 { text.0.len() as u64 } else { framed };
    let estimate = frame.len() as u64 * total / framed.max(1);
    estimate * LEVEL_GAIN.1 < than as u64 * LEVEL_GAIN.0
}

/// An element of a group as its JSON form is judged: one of the input's values, or a
/// packed object's entry (`packed::entries::Entry`), the array `[key, value]`.
pub(crate) trait JsonElement: serde::Serialize {
    /// Whether JSON text gives it back as it is ([`json_exact`]).
    fn json_exact(&self) -> bool;
    /// About how long its compact JSON text is ([`text_len_guess`]).
    fn text_len_guess(&self) -> u64;
}

impl<T: Input> JsonElement for T {
    fn json_exact(&self) -> bool {
        json_exact(self)
    }
    fn text_len_guess(&self) -> u64 {
        text_len_guess(self)
    }
}

/// About how long `v`'s compact JSON text is: exact for structure, strings without
/// escapes and integers, 18 bytes for a float.
pub(crate) fn text_len_guess<T: Input>(v: &T) -> u64 {
    fn digits(x: u64) -> u64 {
        x.checked_ilog10().map_or(1, |d| d as u64 + 1)
    }
    match v.view() {
        View::Null | View::Bool(_) => 5,
        View::Int(x) => digits(x.unsigned_abs()) + (x < 0) as u64,
        View::UInt(x) => digits(x),
        View::F64(_) | View::F32(_) => 18,
        View::String(s) | View::BigNum(s) => s.len() as u64 + 2,
        View::Bytes(b) => 2 * b.len() as u64 + 2,
        View::Array(items) => 2 + items.iter().map(|i| text_len_guess(i) + 1).sum::<u64>(),
        View::Object(entries) => 2 + entries.iter().map(|(k, i)| k.as_ref().len() as u64 + 4 + text_len_guess(i)).sum::<u64>(),
        View::IntMap(entries) => 2 + entries.iter().map(|(k, i)| digits(k.unsigned_abs()) + 4 + text_len_guess(i)).sum::<u64>(),
        View::Typed(t) => 2 + t.len() as u64 * if t.element_type() == crate::format::ElementType::F64 { 19 } else { 4 },
        View::Table(t) => t.table().map_or(0, |t| t.body().len() as u64),
    }
}

/// The most JSON text [`json_form_may_win`] frames.
const CHECK_TEXT: usize = 256 << 10;

/// A writer that refuses bytes past `CHECK_TEXT`.
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + bytes.len() > CHECK_TEXT {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How much smaller than a level-3 frame of JSON text a residual page may come out
/// (numerator, denominator): level 9 took 15–22 % off level 3 on the texts measured.
const LEVEL_GAIN: (u64, u64) = (6, 5);


/// Whether JSON text gives `v` back as the same value, as §11 reads JSON: no bytes,
/// `f32`, intmaps, tables or non-finite numbers, and only typed arrays that JSON typing
/// makes again (§13.1).
pub(crate) fn json_exact<T: Input>(v: &T) -> bool {
    match v.view() {
        View::Null | View::Bool(_) | View::Int(_) | View::UInt(_) | View::String(_) | View::BigNum(_) => true,
        View::F64(x) => x.is_finite(),
        View::Array(items) => items.iter().all(json_exact),
        View::Object(entries) => entries.iter().all(|(_, v)| json_exact(v)),
        // Read back with its element type, and every element written as JSON (no NaN).
        View::Typed(t) => t.retyped_as_is() && t.all_finite(),
        View::F32(_) | View::Bytes(_) | View::IntMap(_) | View::Table(_) => false,
    }
}

/// The `n` values of the residual page `buf[pos..end]`, either form, its cost taken from
/// `budget` (spec §13.6: the document's bytes, or the JSON text's D, charged before the
/// frame is decompressed). Errors inside the page are reported at its first byte.
pub(crate) fn decode_page(buf: &[u8], pos: usize, end: usize, n: usize, limits: &Limits, budget: &mut u64) -> Result<Vec<Value>> {
    let page = buf.get(pos..end).ok_or_else(|| Error::malformed(pos as u64, "residual page runs past the group"))?;
    let in_page = |e: Error| Error::new(e.category(), format!("in a residual page: {}", e.message())).at(pos as u64);
    let value = if page.first() == Some(&ZSTD) {
        let mut r = Reader::new(page, 1, limits);
        let declared = crate::format::numbers::read_varint(page, 1).map_err(in_page)?.0;
        charge(budget, declared, pos)?;
        let text = zstd_stage::unwrap(&mut r, 0).map_err(in_page)?;
        if r.pos != page.len() {
            return Err(Error::malformed(pos as u64, "a residual page's zstd frame does not fill the page"));
        }
        let options = crate::json::JsonOptions { max_depth: PAGE_DEPTH, ..Default::default() };
        // Text that is not JSON, or repeats a key, makes the document malformed (§13.3);
        // limits stay what they are.
        let document = crate::json::from_json_with(&text, &options).map_err(|e| match e.category() {
            Category::InvalidJson | Category::DuplicateKey => {
                Error::malformed(pos as u64, format!("in a residual page's JSON text: {}", e.message()))
            }
            _ => in_page(e),
        })?;
        crate::decode_with(&document, PAGE_DEPTH).map_err(in_page)?
    } else {
        charge(budget, page.len() as u64, pos)?;
        crate::decode_with(page, PAGE_DEPTH).map_err(in_page)?
    };
    match value {
        Value::Array(values) if values.len() == n => Ok(values),
        // The JSON text of n numbers (or of n equal-length arrays of numbers) reads back
        // as one typed array (§11): its rows are the values.
        Value::Typed(t) if page[0] == ZSTD => match t.to_nested() {
            Value::Array(values) if values.len() == n => Ok(values),
            _ => Err(not_the_values(pos)),
        },
        _ => Err(not_the_values(pos)),
    }
}

fn charge(budget: &mut u64, cost: u64, pos: usize) -> Result<()> {
    *budget = budget.checked_sub(cost).ok_or_else(|| {
        Error::new(crate::error::Category::LimitExceeded, "residual values exceed the decode budget (spec §13.6)").at(pos as u64)
    })?;
    Ok(())
}

#[cold]
fn not_the_values(pos: usize) -> Error {
    Error::malformed(pos as u64, "a residual page's document is not an array of its n values")
}

/// Whether the page's first byte says it is the JSON form (for reports).
pub(crate) fn is_json_page(page: &[u8]) -> bool {
    page.first() == Some(&ZSTD)
}

// The document form begins with the magic, whose first byte is not the JSON form's.
const _: () = assert!(crate::format::MAGIC[0] != ZSTD);

#[cfg(test)]
mod tests {
    use super::*;

    fn json_frame(text: &str) -> Vec<u8> {
        let mut page = vec![ZSTD];
        page.extend(zstd_stage::frame(text.as_bytes(), 3).unwrap());
        page
    }

    fn read(page: &[u8], n: usize) -> Result<Vec<Value>> {
        decode_page(page, 0, page.len(), n, &Limits::default(), &mut u64::MAX.clone())
    }

    #[test]
    fn both_forms_round_trip_and_the_smaller_is_kept() {
        let values: Vec<Value> = (0..50)
            .map(|i| crate::json::parse(format!(r#"{{"name": "service {i}", "doc": "<p>Retries service {i}.</p>", "n": [{i}, 2.5]}}"#).as_bytes()).unwrap())
            .collect();
        let page = encode_page(&values, None).unwrap();
        assert!(is_json_page(&page), "text of this redundancy frames smaller than its document");
        assert_eq!(read(&page, 50).unwrap().len(), 50);
        let back = crate::encode(&Value::Array(read(&page, 50).unwrap())).unwrap();
        assert_eq!(crate::json::to_json(&back).unwrap(), crate::json::to_json(&crate::encode(&Value::Array(values)).unwrap()).unwrap());
        // No exact JSON form: the document form, whatever its size.
        let floats: Vec<Value> = (0..50).map(|i| Value::F32(i as f32)).collect();
        let page = encode_page(&floats, None).unwrap();
        assert!(!is_json_page(&page));
        assert_eq!(read(&page, 50).unwrap(), floats);
    }

    #[test]
    fn numbers_only_text_reads_as_its_rows() {
        assert_eq!(read(&json_frame("[1,2,3]"), 3).unwrap().len(), 3);
        assert_eq!(read(&json_frame("[[1,2],[3,4]]"), 2).unwrap().len(), 2);
    }

    #[test]
    fn json_pages_that_lie_are_errors_at_the_page() {
        let malformed = |page: &[u8], n: usize| {
            let e = read(page, n).unwrap_err();
            assert_eq!(e.category(), Category::Malformed, "{e}");
            assert_eq!(e.offset(), Some(0), "{e}");
        };
        malformed(&json_frame(r#"["a","b"]"#), 3);
        malformed(&json_frame(r#"{"a": 1}"#), 1);
        malformed(&json_frame(r#"["a", tru]"#), 2);
        malformed(&json_frame(r#"[{"a": 1, "a": 2}]"#), 1);
        let mut trailing = json_frame(r#"["a"]"#);
        trailing.push(0);
        malformed(&trailing, 1);
        // A D past the limit is refused before anything is decompressed.
        let mut huge = vec![ZSTD];
        crate::format::numbers::write_varint(&mut huge, (DEFAULT_PAGE_LIMIT + 1) as u64);
        huge.extend_from_slice(&[4, 0x28, 0xB5, 0x2F, 0xFD]);
        assert_eq!(read(&huge, 1).unwrap_err().category(), Category::LimitExceeded);
        // The budget is charged D first.
        let page = json_frame(r#"["abcdef"]"#);
        let e = decode_page(&page, 0, page.len(), 1, &Limits::default(), &mut 5).unwrap_err();
        assert_eq!(e.category(), Category::LimitExceeded);
    }

    const DEFAULT_PAGE_LIMIT: usize = super::super::DEFAULT_MAX_PAGE_BYTES;

    #[test]
    fn what_json_gives_back_exactly() {
        let exact = crate::json::parse(br#"{"a": [1, 2.5, "x", null, true, 123456789012345678901234567890]}"#).unwrap();
        assert!(json_exact(&exact));
        assert!(!json_exact(&Value::F64(f64::NAN)));
        assert!(!json_exact(&Value::Bytes(vec![1])));
        assert!(!json_exact(&Value::Array(vec![Value::F32(1.0)])));
    }

    /// A typed array of f64 has an exact JSON form unless some element is not finite,
    /// wherever it is, owned or read in place.
    #[test]
    fn typed_arrays_are_exact_unless_an_element_is_not_finite() {
        use crate::value::{TypedArray, TypedData};
        for len in [1, 2, 7, 8, 9, 31, 64, 100] {
            for at in [None, Some(0), Some(len / 2), Some(len - 1)] {
                for odd in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut xs: Vec<f64> = (0..len).map(|i| i as f64 * 0.25 - 3.0).collect();
                    if let Some(at) = at {
                        xs[at] = odd;
                    }
                    let owned = Value::Typed(TypedArray::new(TypedData::F64(xs)));
                    let doc = crate::encode(&owned).unwrap();
                    let arena = crate::Arena::new();
                    let borrowed = crate::decode_borrowed_in(&doc, &arena).unwrap();
                    assert!(matches!(borrowed, crate::ValueRef::Typed(_)));
                    assert_eq!(json_exact(&owned), at.is_none(), "{len} {at:?} {odd}");
                    assert_eq!(json_exact(&borrowed), at.is_none(), "borrowed: {len} {at:?} {odd}");
                }
            }
        }
    }
}

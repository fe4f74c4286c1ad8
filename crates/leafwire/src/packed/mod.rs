//! Packed mode's codec layer (spec/design/packed.md §5, §6, §8): the integer, float and
//! string codecs that a page of a column is written with, and the sampling selector that
//! picks one. A *stream* is a codec byte, its parameters and its data; its value count n
//! comes from the context. Decoders check every count, width and length against the bytes
//! left and against [`Limits`] before allocating, and never panic. `shred` turns the
//! elements of an array into per-path streams (§3) and back.

pub(crate) mod bits;
pub(crate) mod de;
pub(crate) mod entries;
pub(crate) mod float;
pub(crate) mod fuzz;
pub(crate) mod group;
pub(crate) mod input;
pub(crate) mod int;
pub(crate) mod patched;
pub(crate) mod residual;
pub(crate) mod select;
pub(crate) mod shred;
pub(crate) mod split;
pub(crate) mod string;
pub(crate) mod symbols;
pub(crate) mod texts;
pub(crate) mod zstd_stage;

#[cfg(test)]
mod sizes;
#[cfg(test)]
mod tests;

use crate::error::{Category, Error, Result};
use crate::value::Value;
use bits::unzigzag;
pub use group::{ColumnSize, PackOptions, PathStep, Stream};

/// A group of fewer scalars than this is not worth its tables: the array stays ordinary.
pub(crate) const MIN_GROUP_LEAVES: usize = 64;

/// A packed block, and whether its values were kept whole (the residual form won: their
/// JSON text compresses better than their columns).
pub(crate) struct Packed {
    pub bytes: Vec<u8>,
    pub kept_whole: bool,
}

/// The packed block of `elements` (the content of a tag 0x0E block, spec §13), or `None`
/// when they are too few scalars to pack or the shredder declines them.
pub(crate) fn pack<T: input::Input>(elements: &[T], options: &PackOptions) -> Result<Option<Packed>> {
    if !leaves_at_least(elements, MIN_GROUP_LEAVES) {
        return Ok(None);
    }
    let shredded = write_block(shred::shred_in(elements, options.stripe_values()), options)?;
    or_residual_form(shredded, elements, || shred::shred_residual(elements, options.stripe_values()), options)
}

/// `shredded` (the group of `elements`, or `None` if the shredder declined it), or the
/// group `residual` makes (its values kept whole, §13.3), whichever is smaller. The
/// residual form is tried only where its pages can be JSON text, and, against a shredded
/// group, only when their JSON text compresses near enough to it.
pub(crate) fn or_residual_form<'e, E: residual::JsonElement>(
    shredded: Option<Vec<u8>>,
    elements: &[E],
    residual: impl FnOnce() -> Option<shred::Shredded<'e>>,
    options: &PackOptions,
) -> Result<Option<Packed>> {
    let columns = |bytes| Packed { bytes, kept_whole: false };
    if options.columns_only || elements.is_empty() || !elements.iter().all(E::json_exact) {
        return Ok(shredded.map(columns));
    }
    if shredded.as_ref().is_some_and(|block| !residual::json_form_may_win(elements, block.len())) {
        return Ok(shredded.map(columns));
    }
    let whole = |bytes| Packed { bytes, kept_whole: true };
    let kept_whole = write_block(residual(), options)?;
    Ok(match (shredded, kept_whole) {
        (Some(a), Some(b)) => Some(if b.len() < a.len() { whole(b) } else { columns(a) }),
        (a, b) => a.map(columns).or(b.map(whole)),
    })
}

/// The group block of `s` (`None`: the shredder declined), unless it decodes to more than
/// a reader's default budget for its size (a long run of nulls, say): then the value stays
/// ordinary, since every packed document must read back.
fn write_block(s: Option<shred::Shredded<'_>>, options: &PackOptions) -> Result<Option<Vec<u8>>> {
    let Some(s) = s else {
        return Ok(None);
    };
    let mut out = Vec::new();
    group::write_group(&s, options, &mut out)?;
    if s.decode_cost() > decode_budget(out.len()) {
        return Ok(None);
    }
    Ok(Some(out))
}

/// Whether `values` hold at least `min` scalars (typed arrays count their elements);
/// stops counting there.
pub(crate) fn leaves_at_least<'a, T: input::Input + 'a>(values: impl IntoIterator<Item = &'a T>, min: usize) -> bool {
    fn count<T: input::Input>(v: &T, left: &mut usize) {
        use input::View;
        if *left == 0 {
            return;
        }
        match v.view() {
            View::Array(items) => items.iter().for_each(|i| count(i, left)),
            View::Object(entries) => entries.iter().for_each(|(_, i)| count(i, left)),
            View::IntMap(entries) => entries.iter().for_each(|(_, i)| count(i, left)),
            View::Typed(t) => *left = left.saturating_sub(t.len()),
            _ => *left -= 1,
        }
    }
    let mut left = min;
    values.into_iter().for_each(|v| count(v, &mut left));
    left == 0
}

/// How many containers deep `v` nests (a scalar: 0), and whether it holds a non-empty
/// array whose elements are all numbers or arrays: what §11's typing may turn into a typed
/// array. One walk for both, as every decoded packed block needs both.
fn survey(v: &Value) -> (usize, bool) {
    fn children<'v>(values: impl Iterator<Item = &'v Value>) -> (usize, bool) {
        values.map(survey).fold((0, false), |(depth, numbers), (d, n)| (depth.max(d), numbers || n))
    }
    match v {
        Value::Array(items) => {
            let numeric = |i: &Value| {
                matches!(i, Value::Int(_) | Value::UInt(_) | Value::F64(_) | Value::F32(_) | Value::Array(_))
            };
            let (depth, numbers) = children(items.iter());
            (1 + depth, numbers || (!items.is_empty() && items.iter().all(numeric)))
        }
        Value::Object(m) => {
            let (depth, numbers) = children(m.values());
            (1 + depth, numbers)
        }
        Value::IntMap(m) => {
            let (depth, numbers) = children(m.values());
            (1 + depth, numbers)
        }
        Value::Typed(t) => (t.shape().len(), false),
        _ => (0, false),
    }
}

/// The column group of the packed block at `payload` of `buf`.
pub(crate) fn open_block(buf: &[u8], payload: u64) -> Result<group::Group<'_>> {
    use crate::format::{header, FLAG_PACKED, HEADER_LEN};
    if buf.len() < HEADER_LEN || header::flags(buf) & FLAG_PACKED == 0 {
        return Err(Error::malformed(payload, "packed array in a document without feature bit 0 (spec §13)"));
    }
    let (start, end) = crate::format::data::span(buf, payload)?;
    group::Group::open(buf, start..end)
}

/// What one packed block may decode to, in values plus string bytes (spec §13.6): enough
/// for 256 values per byte of the document, which no valid group comes near, and not
/// enough for a small bomb to exhaust memory.
pub(crate) fn decode_budget(document_len: usize) -> u64 {
    (1 << 20) + 256 * document_len as u64
}

/// Every element of the packed block at `payload`, as the shredder stored them (arrays of
/// numbers as arrays).
pub(crate) fn decode_block(buf: &[u8], payload: u64) -> Result<Vec<Value>> {
    let mut budget = decode_budget(buf.len());
    open_block(buf, payload)?.elements(&mut budget)
}

/// The packed array (tag 0x0E) or object (tag 0x10, §13.7) at `payload`, as the shredder
/// stored its values (arrays of numbers as arrays).
pub(crate) fn decode_packed(buf: &[u8], t: u8, payload: u64) -> Result<Value> {
    if t == crate::format::tag::PACKED_OBJECT {
        entries::decode_object(buf, payload)
    } else {
        Ok(Value::Array(decode_block(buf, payload)?))
    }
}

/// The packed array or object at `payload` as a decoded document gives it (spec §13): its
/// arrays of numbers typed as JSON conversion types them (§11), so an array of numbers
/// only is one typed array.
pub(crate) fn decode_block_typed(buf: &[u8], t: u8, payload: u64, max_depth: usize) -> Result<Value> {
    as_decoded(decode_packed(buf, t, payload)?, max_depth, payload)
}

/// A value from a group's columns with its arrays of numbers typed as §11 types them.
/// Errors (the depth limit) are reported at `at`, the packed block's offset: the document
/// the typing goes through is not the caller's.
pub(crate) fn as_decoded(value: Value, max_depth: usize, at: u64) -> Result<Value> {
    let (depth, number_arrays) = survey(&value);
    if !number_arrays {
        if depth > max_depth {
            return Err(Error::depth_limit(max_depth).at(at));
        }
        return Ok(value);
    }
    let typed =
        crate::recode::encode_as_json_would(&value, max_depth).and_then(|doc| crate::decode_with(&doc, max_depth));
    typed.map_err(|e| Error::new(e.category(), e.message().to_owned()).at(at))
}

/// Nested streams (a cascade) may nest at most this deep below the page's own stream.
pub(crate) const MAX_NESTING: u32 = 3;

/// Codec bytes (§5).
pub(crate) mod codec {
    pub const INT_PLAIN: u8 = 0x00;
    pub const INT_CONSTANT: u8 = 0x01;
    pub const INT_FOR: u8 = 0x02;
    pub const INT_DELTA: u8 = 0x03;
    pub const INT_RLE: u8 = 0x04;
    pub const INT_PATCHED: u8 = 0x05;
    pub const INT_DICT: u8 = 0x06;
    pub const FLOAT_PLAIN: u8 = 0x10;
    pub const FLOAT_PCO: u8 = 0x11;
    pub const FLOAT_DECIMAL: u8 = 0x12;
    pub const FLOAT_SPLIT: u8 = 0x13;
    pub const FLOAT_QUANTIZED: u8 = 0x14;
    pub const FLOAT_DECIMAL_RESIDUAL: u8 = 0x15;
    pub const STR_PLAIN: u8 = 0x20;
    pub const STR_DICT: u8 = 0x21;
    pub const STR_NUMERIC: u8 = 0x22;
    pub const STR_HEX: u8 = 0x23;
    pub const STR_SYMBOLS: u8 = 0x24;
    pub const ZSTD: u8 = 0x30;

    /// A codec's name, for reports.
    pub fn name(byte: u8) -> &'static str {
        match byte {
            INT_PLAIN => "int plain",
            INT_CONSTANT => "constant",
            INT_FOR => "FOR",
            INT_DELTA => "delta",
            INT_RLE => "RLE",
            INT_PATCHED => "patched",
            INT_DICT => "int dictionary",
            FLOAT_PLAIN => "float plain",
            FLOAT_PCO => "pco",
            FLOAT_DECIMAL => "decimal",
            FLOAT_SPLIT => "split",
            FLOAT_QUANTIZED => "quantized (lossy)",
            FLOAT_DECIMAL_RESIDUAL => "decimal+residual",
            STR_PLAIN => "string plain",
            STR_DICT => "string dictionary",
            STR_NUMERIC => "numeric text",
            STR_HEX => "hex",
            STR_SYMBOLS => "symbol table",
            ZSTD => "zstd",
            _ => "unknown",
        }
    }
}

/// The kind of values a page holds: which family of codecs its stream uses.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PageValues {
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Strings(texts::Texts),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageKind {
    Ints,
    Floats,
    Strings,
}

/// Decodes a page: one stream of `n` values of `kind`, possibly inside a zstd stage (§5.5),
/// that must end exactly at `end` (the page's byte length from its directory).
pub(crate) fn decode_page(
    buf: &[u8],
    pos: usize,
    end: usize,
    n: usize,
    kind: PageKind,
    limits: &Limits,
) -> Result<PageValues> {
    let page = buf.get(..end).ok_or_else(|| Error::malformed(pos as u64, "page runs past its buffer"))?;
    let mut r = Reader::new(page, pos, limits);
    r.check_values(n)?;
    if n == 0 {
        return Err(Error::malformed(pos as u64, "page of zero values"));
    }
    if page.get(pos) == Some(&codec::ZSTD) {
        r.pos += 1;
        let inner = zstd_stage::unwrap(&mut r, pos)?;
        if r.pos != end {
            return Err(Error::malformed(r.pos as u64, "page bytes after the zstd frame"));
        }
        // Errors inside the decoded stream are reported at the page's offset.
        return decode_stream(&inner, n, kind, limits)
            .map_err(|e| Error::new(e.category(), format!("in the zstd stage: {}", e.message())).at(pos as u64));
    }
    let values = read_stream(&mut r, n, kind)?;
    if r.pos != end {
        return Err(Error::malformed(r.pos as u64, "page stream ends before its byte length"));
    }
    Ok(values)
}

fn decode_stream(bytes: &[u8], n: usize, kind: PageKind, limits: &Limits) -> Result<PageValues> {
    let mut r = Reader::new(bytes, 0, limits);
    let values = read_stream(&mut r, n, kind)?;
    if r.pos != bytes.len() {
        return Err(Error::malformed(r.pos as u64, "stream ends before the zstd stage's D bytes"));
    }
    Ok(values)
}

fn read_stream(r: &mut Reader, n: usize, kind: PageKind) -> Result<PageValues> {
    Ok(match kind {
        PageKind::Ints => {
            let mut v = Vec::new();
            int::read_ints(r, n, 0, None, &mut v)?;
            PageValues::Ints(v)
        }
        PageKind::Floats => {
            let mut v = Vec::new();
            float::read_floats(r, n, 0, &mut v)?;
            PageValues::Floats(v)
        }
        PageKind::Strings => {
            let mut v = texts::Texts::default();
            string::read_strings(r, n, 0, None, &mut v)?;
            PageValues::Strings(v)
        }
    })
}

/// What a page decoder may allocate (§8).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Largest value count of one stream (a page's n; nested counts are ≤ their parent's).
    pub max_values: usize,
    /// Largest decoded size of one page's strings, in bytes (`max_page_bytes`).
    pub max_page_bytes: usize,
}

pub(crate) const DEFAULT_MAX_VALUES: usize = 65_536;
pub(crate) const DEFAULT_MAX_PAGE_BYTES: usize = 64 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits { max_values: DEFAULT_MAX_VALUES, max_page_bytes: DEFAULT_MAX_PAGE_BYTES }
    }
}

/// A bounds-checked cursor over untrusted bytes; every error carries the absolute offset.
pub(crate) struct Reader<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
    pub limits: &'a Limits,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], pos: usize, limits: &'a Limits) -> Self {
        Reader { buf, pos, limits }
    }

    pub fn err(&self, at: usize, message: &'static str) -> Error {
        Error::malformed(at as u64, message)
    }

    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub fn u8(&mut self) -> Result<u8> {
        let b = *self.buf.get(self.pos).ok_or_else(|| self.err(self.pos, "packed stream truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    /// Most of a group's tables and directories are one-byte varints: that case inline.
    #[inline]
    pub fn varint(&mut self) -> Result<u64> {
        let (v, next) = crate::format::numbers::read_small_varint(self.buf, self.pos)?;
        self.pos = next;
        Ok(v)
    }

    pub fn zvarint(&mut self) -> Result<i64> {
        Ok(unzigzag(self.varint()?))
    }

    /// A varint count that must lie in `min..=max`.
    pub fn count(&mut self, min: usize, max: usize, message: &'static str) -> Result<usize> {
        let at = self.pos;
        let v = self.varint()?;
        if v < min as u64 || v > max as u64 {
            return Err(self.err(at, message));
        }
        Ok(v as usize)
    }

    /// The next `len` bytes, or a truncation error when fewer are left.
    pub fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        if len > self.remaining() {
            return Err(self.err(self.pos, "packed stream truncated"));
        }
        let s = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        Ok(s)
    }

    /// The bytes of `pack(n, w)` (§5), checked to fit before anything is unpacked.
    pub fn packed(&mut self, n: usize, w: u32) -> Result<&'a [u8]> {
        if w > 64 {
            return Err(self.err(self.pos.saturating_sub(1), "bit width above 64"));
        }
        let len = bits::packed_len(n, w).ok_or_else(|| self.err(self.pos, "packed data too long"))?;
        self.take(len)
    }

    /// Fails with `LimitExceeded` when a stream declares more values than the limits allow.
    pub fn check_values(&self, n: usize) -> Result<()> {
        if n > self.limits.max_values {
            return Err(Error::new(
                Category::LimitExceeded,
                format!(
                    "packed stream of {n} values exceeds the limit of {} (raise max_page_values)",
                    self.limits.max_values
                ),
            )
            .at(self.pos as u64));
        }
        Ok(())
    }

    /// The nesting depth check of §5: a stream below `depth` more than [`MAX_NESTING`] is
    /// rejected.
    pub fn check_depth(&self, depth: u32) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(self.err(self.pos, "packed streams nested deeper than 3"));
        }
        Ok(())
    }
}

/// Patch positions from their gaps (§5.1, shared by 0x05, 0x12 and 0x13): the first gap
/// is the first position, each later gap is ≥ 1, and every position is below n.
pub(crate) struct PatchPositions {
    last: u64,
    started: bool,
    n: usize,
}

impl PatchPositions {
    pub fn new(n: usize) -> Self {
        PatchPositions { last: 0, started: false, n }
    }

    /// The next position, from its `gap` (read at byte `at`).
    pub fn next(&mut self, gap: u64, r: &Reader, at: usize) -> Result<usize> {
        if self.started && gap == 0 {
            return Err(r.err(at, "patch positions not increasing"));
        }
        self.started = true;
        self.last = self.last.saturating_add(gap);
        if self.last >= self.n as u64 {
            return Err(r.err(at, "patch position not below n"));
        }
        Ok(self.last as usize)
    }
}

/// The error of an encoder asked for a codec that cannot represent the values.
pub(crate) fn not_representable(message: &'static str) -> Error {
    Error::new(Category::NotRepresentable, message)
}

//! Leafwire → JSON text. The compact form is written straight from the document: each
//! container's header read once, key texts resolved once per document, strings copied as
//! they are unless they need escaping, integers through itoa and floats through zmij (the
//! shortest round-trip text, as serde_json writes it). The indented form goes through
//! serde_json's pretty printer and `Serialize for Node`.

use std::io::Write;

use crate::error::{Category, Error, Result};
use crate::format::budget::Budget;
use crate::format::container::Geometry;
use crate::format::dictionary::DistinctTexts;
use crate::format::typed::TypedHeader;
use crate::format::{is_bignum_text, tag, ElementType};
use crate::node_serde::Owned;
use crate::read::Node;

/// Writes the value at `node` as compact JSON text into a string.
pub fn to_json_node(node: &Node<'_>) -> Result<String> {
    let budget = Budget::for_document(node.buf().len());
    // The text is gathered straight in the string's buffer: never flushed, so not copied.
    let out = Vec::with_capacity(node.buf().len() + node.buf().len() / 2);
    let mut w = JsonWriter::new(node, &budget, crate::DEFAULT_MAX_DEPTH, out, usize::MAX, std::io::sink());
    w.root(crate::DEFAULT_MAX_DEPTH)?;
    // The writer writes only valid UTF-8: document strings are checked, the rest is ASCII.
    Ok(crate::format::data::into_string(w.out).expect("JSON text is UTF-8"))
}

/// Writes the value at `node` as compact JSON text into `writer`.
pub fn write_json_node<W: Write>(node: &Node<'_>, writer: W) -> Result<()> {
    write_json_node_with(node, writer, crate::DEFAULT_MAX_DEPTH)
}

/// Writes the value at `node` as compact JSON text, accepting nesting up to `max_depth`.
pub fn write_json_node_with<W: Write>(node: &Node<'_>, writer: W, max_depth: usize) -> Result<()> {
    let budget = Budget::for_document(node.buf().len());
    let mut w = JsonWriter::new(node, &budget, max_depth, Vec::with_capacity(FLUSH_AT + 4096), FLUSH_AT, writer);
    let written = w.root(max_depth);
    // On an error too, the text before it goes out: a streaming reader sees how far it got.
    let flushed = w.flush();
    written.and(flushed)
}

/// Writes the value at `node` as JSON text indented by two spaces into `writer`.
pub fn write_json_node_pretty<W: Write>(node: &Node<'_>, writer: W) -> Result<()> {
    write_json_node_pretty_with(node, writer, crate::DEFAULT_MAX_DEPTH)
}

/// [`write_json_node_pretty`], accepting nesting up to `max_depth`.
pub fn write_json_node_pretty_with<W: Write>(node: &Node<'_>, writer: W, max_depth: usize) -> Result<()> {
    let mut ser = serde_json::Serializer::pretty(writer);
    Owned::new(*node, true, max_depth).serialize_into(&mut ser)
}

/// JSON text of what a pointer names inside a table ([`crate::Document::pointer_in_table`]):
/// the column's cells as an array, or the cell of `row`, written as the whole table's JSON
/// writes them (spec §15.2: dates and date-times as text).
pub fn table_part_to_json(column: &crate::table::ColumnRef<'_>, row: Option<usize>) -> Result<String> {
    let mut out = Vec::new();
    match row {
        Some(i) => write_cell(&mut out, column, i)?,
        None => {
            out.push(b'[');
            for i in 0..column.len() {
                if i > 0 {
                    out.push(b',');
                }
                write_cell(&mut out, column, i)?;
            }
            out.push(b']');
        }
    }
    Ok(crate::format::data::into_string(out).expect("JSON text is UTF-8"))
}

/// Cell `i` of a table column as JSON (spec §15.2).
fn write_cell(out: &mut Vec<u8>, column: &crate::table::ColumnRef<'_>, i: usize) -> Result<()> {
    let at = || format!("{}/{i}", column.name().unwrap_or(""));
    match column.cell(i)? {
        crate::Value::Null => out.extend_from_slice(b"null"),
        crate::Value::String(s) => write_str(out, &s),
        crate::Value::Int(v) if column.unit() != crate::table::Unit::Plain => {
            out.push(b'"');
            crate::table::write_time_text(out, v, column.unit(), !column.zone()?.is_empty());
            out.push(b'"');
        }
        crate::Value::Int(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        crate::Value::UInt(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        crate::Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        crate::Value::F64(v) if v.is_finite() => push_float(out, v),
        crate::Value::F32(v) if v.is_finite() => push_float(out, v),
        crate::Value::F64(v) => return Err(in_step(not_finite(v, 0), at)),
        crate::Value::F32(v) => return Err(in_step(not_finite(v as f64, 0), at)),
        _ => unreachable!("table cells are scalars"),
    }
    Ok(())
}

/// The text is gathered in a buffer and handed to the writer about this much at a time.
const FLUSH_AT: usize = 64 << 10;

struct JsonWriter<'a, 'b, W: Write> {
    node: Node<'a>,
    /// Key texts by id, already escaped and quoted with their colon (`"key":`), made the
    /// first time each is met: `quoted[spans[id]]` (an empty span: not made yet).
    spans: Vec<(usize, usize)>,
    quoted: Vec<u8>,
    /// The texts of the keys met so far, which must differ.
    distinct: DistinctTexts<'a>,
    budget: &'b Budget,
    limit: usize,
    out: Vec<u8>,
    /// `out` goes to the sink once it holds this much.
    flush_at: usize,
    sink: W,
}

impl<'a, 'b, W: Write> JsonWriter<'a, 'b, W> {
    fn new(node: &Node<'a>, budget: &'b Budget, limit: usize, out: Vec<u8>, flush_at: usize, sink: W) -> Self {
        JsonWriter { node: *node, spans: Vec::new(), quoted: Vec::new(), distinct: DistinctTexts::for_keys(node.key_count()), budget, limit, out, flush_at, sink }
    }

    fn buf(&self) -> &'a [u8] {
        self.node.buf()
    }

    fn flush(&mut self) -> Result<()> {
        self.sink.write_all(&self.out)?;
        self.out.clear();
        Ok(())
    }

    fn root(&mut self, max_depth: usize) -> Result<()> {
        let node = self.node;
        if node.tag() != tag::TYPED {
            return self.value(node.tag(), node.payload(), max_depth);
        }
        // Possibly a row of a higher-rank array: the node knows its axis and first element.
        let typed = node.typed()?;
        self.budget.charge(node.visit_cost(), node.offset())?;
        self.typed(&typed.header, typed.level, typed.start)
    }

    /// Writes one value. Inlined into `container`'s loop (and the root), so that a scalar
    /// or string child costs no call; containers and the rarer kinds are calls.
    #[inline(always)]
    fn value(&mut self, t: u8, payload: u64, depth_left: usize) -> Result<()> {
        if self.out.len() >= self.flush_at {
            self.flush()?;
        }
        match t {
            tag::NULL => self.out.extend_from_slice(b"null"),
            tag::FALSE => self.out.extend_from_slice(b"false"),
            tag::TRUE => self.out.extend_from_slice(b"true"),
            tag::INT => self.out.extend_from_slice(itoa::Buffer::new().format(payload as i64).as_bytes()),
            tag::UINT => self.out.extend_from_slice(itoa::Buffer::new().format(payload).as_bytes()),
            tag::F64 => self.f64(f64::from_bits(payload), 0)?,
            tag::F32 => self.f32(f32::from_bits(payload as u32), 0)?,
            tag::STRING => {
                let content = self.block(payload)?;
                self.string(content, payload)?;
            }
            tag::BYTES | tag::BIGNUM | tag::TYPED => self.block_value(t, payload)?,
            tag::PACKED | tag::PACKED_OBJECT => self.packed(t, payload, depth_left)?,
            tag::TABLE => self.table(payload)?,
            _ => self.container(t, payload, depth_left)?,
        }
        Ok(())
    }

    /// Bytes, a bignum or a typed array.
    #[inline(never)]
    fn block_value(&mut self, t: u8, payload: u64) -> Result<()> {
        match t {
            tag::BYTES => {
                // As serde_json writes bytes: an array of numbers.
                let bytes = self.block(payload)?;
                self.out.push(b'[');
                for (i, b) in bytes.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.out.extend_from_slice(itoa::Buffer::new().format(*b).as_bytes());
                }
                self.out.push(b']');
            }
            tag::BIGNUM => {
                let digits = self.block(payload)?;
                if !is_bignum_text(digits) {
                    return Err(Error::malformed(payload, "bignum is not decimal digits"));
                }
                self.out.extend_from_slice(digits);
            }
            _ => {
                let header = TypedHeader::parse(self.buf(), payload)?;
                self.budget.charge(Budget::typed_header_cost(&header), payload)?;
                self.typed(&header, 0, 0)?;
            }
        }
        Ok(())
    }

    /// A packed array or object: decoded, laid out as an ordinary container and written by
    /// this same writer, so that every value has one JSON form (NaN an error, as here).
    #[inline(never)]
    fn packed(&mut self, t: u8, payload: u64, depth_left: usize) -> Result<()> {
        self.budget.charge(1, payload)?;
        let value = crate::packed::decode_packed(self.buf(), t, payload)?;
        let doc = crate::encode_with(&value, depth_left.max(1))?;
        let root = crate::Document::open(&doc)?.root();
        // Through the non-generic entry point: a writer generic over its sink calling
        // itself would instantiate without end.
        self.out.extend_from_slice(to_json_node(&root)?.as_bytes());
        Ok(())
    }

    /// A table as an object of columns (spec §15.2): dates and date-times as text.
    #[inline(never)]
    fn table(&mut self, payload: u64) -> Result<()> {
        let t = crate::table::TableRef::in_document(self.buf(), payload)?;
        self.budget.charge(Budget::block_cost(t.body().len()), payload)?;
        self.out.push(b'{');
        for (ci, column) in t.columns().enumerate() {
            let column = column?;
            if ci > 0 {
                self.out.push(b',');
            }
            write_str(&mut self.out, column.name()?);
            self.out.extend_from_slice(b":[");
            for i in 0..column.len() {
                if i > 0 {
                    self.out.push(b',');
                }
                if self.out.len() >= self.flush_at {
                    self.flush()?;
                }
                write_cell(&mut self.out, &column, i)?;
            }
            self.out.push(b']');
        }
        self.out.push(b'}');
        Ok(())
    }

    #[inline(never)]
    fn container(&mut self, t: u8, payload: u64, depth_left: usize) -> Result<()> {
        let depth_left = depth_left.checked_sub(1).ok_or_else(|| Error::depth_limit(self.limit).at(payload))?;
        let g = Geometry::parse(self.buf(), payload, t)?;
        self.budget.charge(Budget::container_cost(g.count), payload)?;
        let (open, close) = if t == tag::ARRAY { (b'[', b']') } else { (b'{', b'}') };
        self.out.push(open);
        for i in 0..g.count {
            if i > 0 {
                self.out.push(b',');
            }
            match t {
                tag::OBJECT => self.key(g.key(self.buf(), i)).map_err(|e| in_step(e, || i.to_string()))?,
                tag::INTMAP => {
                    self.out.push(b'"');
                    self.out.extend_from_slice(itoa::Buffer::new().format(g.key(self.buf(), i) as i64).as_bytes());
                    self.out.extend_from_slice(b"\":");
                }
                _ => {}
            }
            let (ct, cp) = g.child(self.buf(), i)?;
            if let Err(e) = self.value(ct, cp, depth_left) {
                return Err(in_step(e, || self.step_name(&g, i)));
            }
        }
        self.out.push(close);
        Ok(())
    }

    /// How a child appears in a JSON Pointer, for error paths.
    fn step_name(&self, g: &Geometry, i: usize) -> String {
        match g.tag {
            tag::OBJECT => self.node.key_str(g.key(self.buf(), i)).map_or_else(|_| i.to_string(), escape_token),
            tag::INTMAP => (g.key(self.buf(), i) as i64).to_string(),
            _ => i.to_string(),
        }
    }

    #[inline]
    fn key(&mut self, id: u64) -> Result<()> {
        if let Some(&(start, end)) = self.spans.get(id as usize) {
            if start != end {
                // Each quoted key is followed by SHORT_COPY bytes of padding (`new_key`).
                push_short(&mut self.out, &self.quoted[start..], end - start);
                return Ok(());
            }
        }
        self.new_key(id)
    }

    #[cold]
    fn new_key(&mut self, id: u64) -> Result<()> {
        let text = self.node.key_str(id)?;
        self.distinct.claim(text, id, self.node.dictionary_pos() as u64)?;
        if self.spans.is_empty() {
            let keys = self.node.key_count() as usize;
            self.spans = vec![(0, 0); keys];
            // Room for every key quoted and padded (most are short), so that a document's
            // first keys do not grow the buffer a step at a time; bounded for huge
            // dictionaries, of which a document may use few keys.
            self.quoted.reserve((keys * (SHORT_COPY + 16)).min(QUOTED_RESERVE_MAX));
        }
        let start = self.quoted.len();
        write_str(&mut self.quoted, text);
        self.quoted.push(b':');
        self.out.extend_from_slice(&self.quoted[start..]);
        // key_str checked the id against the dictionary's count.
        self.spans[id as usize] = (start, self.quoted.len());
        self.quoted.extend_from_slice(&[0; SHORT_COPY]);
        Ok(())
    }

    /// A string block's content, quoted. Plain ASCII (most text) is copied after one scan,
    /// which is also its UTF-8 check; anything else is checked as every reader checks it
    /// and escaped.
    #[inline]
    fn string(&mut self, content: &[u8], payload: u64) -> Result<()> {
        if first_special_or_non_ascii(content, 0).is_none() {
            self.out.reserve(content.len() + 2);
            self.out.push(b'"');
            // The document's bytes from the text on, when there are enough to move short
            // text in one fixed-size copy.
            let from = content.as_ptr() as usize - self.buf().as_ptr() as usize;
            match self.buf().get(from..from + SHORT_COPY) {
                Some(padded) if content.len() <= SHORT_COPY => push_short(&mut self.out, padded, content.len()),
                _ => self.out.extend_from_slice(content),
            }
            self.out.push(b'"');
            return Ok(());
        }
        write_str(&mut self.out, crate::format::data::text(content, payload)?);
        Ok(())
    }

    #[inline]
    fn block(&self, payload: u64) -> Result<&'a [u8]> {
        self.budget.block(self.buf(), payload)
    }

    #[inline]
    fn f64(&mut self, v: f64, offset: u64) -> Result<()> {
        if !v.is_finite() {
            return Err(not_finite(v, offset));
        }
        push_float(&mut self.out, v);
        Ok(())
    }

    #[inline]
    fn f32(&mut self, v: f32, offset: u64) -> Result<()> {
        if !v.is_finite() {
            return Err(not_finite(v as f64, offset));
        }
        push_float(&mut self.out, v);
        Ok(())
    }

    /// A typed array, or its row at axis `level` starting at element `first`: nested
    /// arrays of numbers, read straight from the data.
    fn typed(&mut self, h: &TypedHeader, level: usize, first: usize) -> Result<()> {
        let dim = h.shape[level] as usize;
        self.out.push(b'[');
        if level + 1 < h.rank {
            let stride = h.stride(level);
            for i in 0..dim {
                if i > 0 {
                    self.out.push(b',');
                }
                self.typed(h, level + 1, first + i * stride).map_err(|e| in_step(e, || i.to_string()))?;
            }
            self.out.push(b']');
            return Ok(());
        }
        if self.out.len() >= self.flush_at {
            self.flush()?;
        }
        let size = h.element.size();
        let at = h.data_pos + first * size;
        let bytes = &self.buf()[at..at + dim * size];
        if h.element == ElementType::F64 && h.mask_pos.is_none() {
            // The bulk of numeric files (coordinates, meshes): one loop with no
            // per-element dispatch.
            for (i, chunk) in bytes.chunks_exact(8).enumerate() {
                let v = f64::from_le_bytes(chunk.try_into().unwrap());
                if !v.is_finite() {
                    return Err(in_step(not_finite(v, h.pos as u64), || i.to_string()));
                }
                if i > 0 {
                    self.out.push(b',');
                }
                push_float(&mut self.out, v);
            }
            self.out.push(b']');
            return Ok(());
        }
        let mask = h.mask_pos.map(|m| &self.buf()[m..]);
        for (i, chunk) in bytes.chunks_exact(size).enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            let mut itoa = itoa::Buffer::new();
            let text = match h.element {
                ElementType::F64 => {
                    let v = f64::from_le_bytes(chunk.try_into().unwrap());
                    let flat = first + i;
                    if mask.is_some_and(|m| m[flat / 8] >> (flat % 8) & 1 == 1) {
                        itoa.format(v as i64)
                    } else {
                        self.f64(v, h.pos as u64).map_err(|e| in_step(e, || i.to_string()))?;
                        continue;
                    }
                }
                ElementType::F32 => {
                    self.f32(f32::from_le_bytes(chunk.try_into().unwrap()), h.pos as u64).map_err(|e| in_step(e, || i.to_string()))?;
                    continue;
                }
                ElementType::Bool => if chunk[0] != 0 { "true" } else { "false" },
                ElementType::I8 => itoa.format(chunk[0] as i8),
                ElementType::U8 => itoa.format(chunk[0]),
                ElementType::I16 => itoa.format(i16::from_le_bytes(chunk.try_into().unwrap())),
                ElementType::U16 => itoa.format(u16::from_le_bytes(chunk.try_into().unwrap())),
                ElementType::I32 => itoa.format(i32::from_le_bytes(chunk.try_into().unwrap())),
                ElementType::U32 => itoa.format(u32::from_le_bytes(chunk.try_into().unwrap())),
                ElementType::I64 => itoa.format(i64::from_le_bytes(chunk.try_into().unwrap())),
                ElementType::U64 => itoa.format(u64::from_le_bytes(chunk.try_into().unwrap())),
            };
            self.out.extend_from_slice(text.as_bytes());
        }
        self.out.push(b']');
        Ok(())
    }
}

/// The most room reserved at once for the quoted keys.
const QUOTED_RESERVE_MAX: usize = 64 << 10;

/// How many bytes `push_short` moves at once.
const SHORT_COPY: usize = 32;

/// Appends the first `len` bytes of `from`, which holds at least `len` bytes and at least
/// [`SHORT_COPY`]: short texts (keys, most strings) then move as one fixed-size copy
/// and a length cut, where a copy of `len` bytes is a `memcpy` call.
#[inline(always)]
fn push_short(out: &mut Vec<u8>, from: &[u8], len: usize) {
    if len <= SHORT_COPY {
        let end = out.len() + len;
        out.extend_from_slice(&from[..SHORT_COPY]);
        out.truncate(end);
    } else {
        out.extend_from_slice(&from[..len]);
    }
}

/// Appends the shortest text that reads back as the finite `v`: zmij's, which is also
/// serde_json's, so that both writers give the same JSON.
#[inline(always)]
fn push_float<F: zmij::Float>(out: &mut Vec<u8>, v: F) {
    const BUFFER: usize = std::mem::size_of::<zmij::Buffer>();
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(v);
    let (from, len) = (text.as_ptr(), text.len());
    let base = (&buffer as *const zmij::Buffer).cast::<u8>();
    out.reserve(BUFFER);
    if from == base {
        // zmij writes from the start of its buffer: moving the whole buffer is a few
        // fixed-size moves where copying `len` bytes is a `memcpy` call, a third of the
        // cost of a float. The bytes past `len` land in spare capacity and stay unread.
        // SAFETY: `reserve` made room for BUFFER bytes past the length; `base` points to
        // the whole buffer (bytes past `len` may be uninitialized, which a raw copy into
        // spare capacity allows); the first `len` bytes copied are the text.
        unsafe {
            std::ptr::copy_nonoverlapping(base, out.as_mut_ptr().add(out.len()), BUFFER);
            out.set_len(out.len() + len);
        }
    } else {
        // SAFETY: `from` and `len` are the text's, and `buffer` is still alive.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(from, len) });
    }
}

/// Writes `text` as a JSON string, with the escapes serde_json writes (so both writers
/// give the same text): the short forms for quote, backslash, \b \f \n \r \t, `\u00XX`
/// for the other control characters; everything else copied as it is, in runs.
#[inline]
fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    match first_special(bytes, 0) {
        None => out.extend_from_slice(bytes),
        Some(first) => write_escaped(out, bytes, first),
    }
    out.push(b'"');
}

/// Writes `bytes` escaped, its first byte to escape being at `first`: the runs between
/// special bytes are copied whole.
#[cold]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8], first: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let (mut run, mut next) = (0, Some(first));
    while let Some(i) = next {
        out.extend_from_slice(&bytes[run..i]);
        let b = bytes[i];
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x0C => b'f',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            _ => 0,
        };
        if short != 0 {
            out.extend_from_slice(&[b'\\', short]);
        } else {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        }
        run = i + 1;
        next = first_special(bytes, run);
    }
    out.extend_from_slice(&bytes[run..]);
}

/// Where the first byte from `from` on that a JSON string must escape is: a control
/// character, a quote or a backslash.
#[inline]
fn first_special(bytes: &[u8], from: usize) -> Option<usize> {
    first_flagged::<false>(bytes, from)
}

/// The position of the first byte at or after `from` that must be escaped or is not ASCII:
/// `None` says the text is ASCII (so UTF-8) and goes out as it is.
#[inline]
fn first_special_or_non_ascii(bytes: &[u8], from: usize) -> Option<usize> {
    first_flagged::<true>(bytes, from)
}

/// Both scans: sixteen bytes at a time with SSE2 (every x86-64 has it), else eight with
/// the word tests of "Bit Twiddling Hacks".
#[inline(always)]
fn first_flagged<const NON_ASCII: bool>(bytes: &[u8], from: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::first_special::<NON_ASCII>(bytes, from)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        swar::first_special::<NON_ASCII>(bytes, from)
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    /// One bit per byte of the 16 at `bytes[at..]` that must be escaped (or, with
    /// `NON_ASCII`, is not ASCII).
    #[inline(always)]
    fn special<const NON_ASCII: bool>(bytes: &[u8], at: usize) -> u32 {
        let block: &[u8; 16] = bytes[at..at + 16].try_into().unwrap();
        // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of `block`, unaligned.
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().cast());
            // Unsigned v < 0x20 exactly when max(v, 0x1F) is 0x1F.
            let control = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            let escapes = _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash))) as u32;
            // The mask of the bytes' own high bits: the non-ASCII ones.
            if NON_ASCII {
                escapes | _mm_movemask_epi8(v) as u32
            } else {
                escapes
            }
        }
    }

    #[inline]
    pub(super) fn first_special<const NON_ASCII: bool>(bytes: &[u8], from: usize) -> Option<usize> {
        let n = bytes.len();
        let mut at = from;
        while at + 16 <= n {
            let bits = special::<NON_ASCII>(bytes, at);
            if bits != 0 {
                return Some(at + bits.trailing_zeros() as usize);
            }
            at += 16;
        }
        if at == n {
            return None;
        }
        if n >= from + 16 {
            // The last sixteen bytes, overlapping the blocks above (found clean).
            let bits = special::<NON_ASCII>(bytes, n - 16) >> (at - (n - 16));
            return (bits != 0).then(|| at + bits.trailing_zeros() as usize);
        }
        super::swar::first_special::<NON_ASCII>(bytes, at)
    }
}

mod swar {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = ONES * 0x80;

    /// The high bit of each byte to escape (or, with `NON_ASCII`, not ASCII: its own high
    /// bit); the lowest one set is exact (`hasless` and `haszero` borrow only into bytes
    /// above a true match).
    #[inline(always)]
    fn special<const NON_ASCII: bool>(w: u64) -> u64 {
        let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
        let escapes = control | zero_byte(w ^ (ONES * b'"' as u64)) | zero_byte(w ^ (ONES * b'\\' as u64));
        if NON_ASCII {
            escapes | w & HIGHS
        } else {
            escapes
        }
    }

    #[inline]
    pub(super) fn first_special<const NON_ASCII: bool>(bytes: &[u8], from: usize) -> Option<usize> {
        let found = |at: usize, bits: u64| (bits != 0).then(|| at + bits.trailing_zeros() as usize / 8);
        let mut at = from;
        while at + 8 <= bytes.len() {
            let bits = special::<NON_ASCII>(u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()));
            if bits != 0 {
                return found(at, bits);
            }
            at += 8;
        }
        let n = bytes.len();
        if at == n {
            return None;
        }
        if n >= from + 8 {
            // The last eight bytes, overlapping the words above: the bytes before `at` in
            // it were found clean, so nothing below `at` is flagged.
            return found(n - 8, special::<NON_ASCII>(u64::from_le_bytes(bytes[n - 8..].try_into().unwrap())));
        }
        let mut word = [b' '; 8];
        word[..n - at].copy_from_slice(&bytes[at..]);
        found(at, special::<NON_ASCII>(u64::from_le_bytes(word)))
    }
}


/// Prefixes an error's path (a JSON Pointer) with one step.
#[cold]
fn in_step(mut e: Error, step: impl FnOnce() -> String) -> Error {
    let path = format!("/{}{}", step(), e.path().unwrap_or(""));
    e.set_path(path);
    e
}

#[cold]
fn not_finite(v: f64, offset: u64) -> Error {
    Error::new(Category::NotRepresentable, format!("{v} has no JSON form")).at(offset)
}

/// Escapes a key as a JSON Pointer token (RFC 6901).
fn escape_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_special_finds_every_special_byte_at_every_place() {
        #[cfg(target_arch = "x86_64")]
        check(sse2::first_special::<false>, false);
        check(swar::first_special::<false>, false);
    }

    #[test]
    fn first_special_or_non_ascii_finds_every_such_byte_at_every_place() {
        #[cfg(target_arch = "x86_64")]
        check(sse2::first_special::<true>, true);
        check(swar::first_special::<true>, true);
    }

    fn check(first_special: fn(&[u8], usize) -> Option<usize>, non_ascii: bool) {
        let naive = |b: &[u8]| b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\' || (non_ascii && c >= 0x80));
        let specials: Vec<u8> = (0u8..0x20).chain([b'"', b'\\']).chain(if non_ascii { vec![0x80, 0xC3, 0xFF] } else { vec![] }).collect();
        let plain: &[u8] = if non_ascii { b"a\x7F !#[]~0Z" } else { &[b'a', 0x7F, 0xC3, 0xA9, b' ', b'!', b'#', b'[', b']', 0xFF] };
        for n in 0..40 {
            let clean: Vec<u8> = (0..n).map(|i| plain[i % plain.len()]).collect();
            assert_eq!(first_special(&clean, 0), None, "{clean:?}");
            for at in 0..n {
                for &special in &specials {
                    let mut text = clean.clone();
                    text[at] = special;
                    assert_eq!(first_special(&text, 0), Some(at), "{text:?}");
                    assert_eq!(first_special(&text, at + 1), None, "{text:?}");
                }
                for near in [0x20u8, 0x21, 0x23, 0x5B, 0x5D, 0xA2, 0xDC, 0x80] {
                    let mut text = clean.clone();
                    text[at] = near;
                    assert_eq!(first_special(&text, 0).is_some(), naive(&text), "{text:?}");
                }
            }
        }
    }
}

#[cfg(test)]
mod float_tests {
    use super::push_float;

    /// The appended text is serde_json's for the same float, after text already in the
    /// buffer and with spare capacity of every size (the whole-buffer move must neither
    /// overwrite what is there nor leave its spare bytes in the text).
    #[test]
    fn push_float_writes_serde_json_text() {
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        let mut values = vec![0.0, -0.0, 1.0, -1.5, 0.1, 1e21, 1e-7, 123456789.0, f64::MAX, f64::MIN_POSITIVE, 5e-324];
        values.extend((0..20_000).map(|_| f64::from_bits(next())).filter(|v| v.is_finite()));
        values.extend((0..2_000).map(|i| (next() % 1_000_000) as f64 / 1000.0 * if i % 2 == 0 { 1.0 } else { -1.0 }));
        for (i, &v) in values.iter().enumerate() {
            let mut out = Vec::with_capacity(i % 40);
            out.extend_from_slice(&b"[1,"[..i % 4]);
            let before = out.clone();
            push_float(&mut out, v);
            assert_eq!(&out[..before.len()], &before[..]);
            assert_eq!(std::str::from_utf8(&out[before.len()..]).unwrap(), serde_json::to_string(&v).unwrap());
            let mut out32 = Vec::new();
            push_float(&mut out32, v as f32);
            if (v as f32).is_finite() {
                assert_eq!(std::str::from_utf8(&out32).unwrap(), serde_json::to_string(&(v as f32)).unwrap());
            }
        }
    }
}

#[cfg(test)]
mod short_copy_tests {
    /// Keys and strings of every length around the fixed-size copy (and strings that end
    /// the document, where fewer than 32 bytes follow) come out as serde_json writes them.
    #[test]
    fn texts_of_every_length_round_trip() {
        for len in 0..70 {
            let text: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let mut object = serde_json::Map::new();
            object.insert(text.clone(), serde_json::Value::String(text.clone()));
            object.insert(format!("{text}!"), serde_json::json!([text.clone(), 1]));
            for value in [serde_json::Value::Object(object), serde_json::Value::String(text.clone())] {
                let json = serde_json::to_string(&value).unwrap();
                let doc = crate::json::from_json(json.as_bytes()).unwrap();
                assert_eq!(crate::json::to_json(&doc).unwrap(), json, "length {len}");
            }
        }
    }
}

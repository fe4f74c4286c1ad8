//! The column group block (spec §13.2–13.4): a shredded group written as a header, a key
//! table, a node table, a column table, a stripe index and stripes of chunks of pages, and
//! read back one stripe at a time. The node table alone decides which columns exist and in
//! which order ([`streams`]), so the writer and the reader cannot disagree about it.

use std::borrow::Cow;
use std::ops::Range;

use super::shred::{kind, Cursor, Node, Role, Shredded, Unshredder, MAX_SHRED_DEPTH};
use super::{decode_page, select, zstd_stage, Limits, PageKind, PageValues, Reader};
use crate::error::{Error, Result};
use crate::format::numbers::{write_varint, MAX_VARINT_LEN};
use crate::value::Value;

/// The group layout's version byte.
pub(crate) const VERSION: u8 = 1;
/// The encoder cuts a chunk into pages of at most this many values (§13.4)...
pub(crate) const PAGE_VALUES: usize = 4096;
/// ...and closes a stripe once one node holds this many pages of its values: a stripe is
/// what one element costs to read, but also a fixed cost (a chunk directory, a page per
/// column read) that a selective load pays once per stripe, so that stripes of one page
/// of the largest column leave the narrow columns in pages of a few values.
pub(crate) const STRIPE_PAGES: usize = 4;
/// ...or, at an archival zstd level (`ARCHIVE_LEVEL` and above), pages and stripes of this
/// many values, the most a page may hold: zstd then sees 16 times the context (a border
/// shared by two countries, a mesh's repeated vertex), and one element costs up to a whole
/// page per column.
pub(crate) const ARCHIVE_PAGE_VALUES: usize = 65_536;
/// The zstd level from which pages and stripes take `ARCHIVE_PAGE_VALUES` values.
pub(crate) const ARCHIVE_LEVEL: i32 = 10;
/// A reader accepts at most this many nodes in a group.
pub(crate) const MAX_NODES: usize = 65_536;
/// Tuple nodes hold arrays of at most this many positions (§13.1).
const MAX_TUPLE: u8 = 16;

const FLAG_TUPLE: u8 = 1;
/// Group flag bit 0: every stripe begins with its framing byte (§13.4).
const GROUP_STRIPE_FRAMES: u8 = 1;
/// Group flag bit 1: the key, node and column tables are one zstd frame (§13.2).
const GROUP_TABLES_FRAMED: u8 = 2;
/// A stripe's framing byte: its bytes follow as they are, or a zstd frame holds them.
const STRIPE_BARE: u8 = 0;
const STRIPE_FRAMED: u8 = 1;
const FLAG_KEYED: u8 = 2;

/// A column: which stream of a node it holds (the `stream` byte of the column table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stream {
    Kind = 0,
    Bool = 1,
    Int = 2,
    Float = 3,
    String = 4,
    Shape = 5,
    Len = 6,
    Key = 7,
    Residual = 8,
}

impl Stream {
    pub fn name(self) -> &'static str {
        match self {
            Stream::Kind => "kind",
            Stream::Bool => "bool",
            Stream::Int => "int",
            Stream::Float => "float",
            Stream::String => "string",
            Stream::Shape => "shape",
            Stream::Len => "length",
            Stream::Key => "key",
            Stream::Residual => "residual",
        }
    }
}

/// The columns node `n` stores, in column-table order (spec §13.2): one per stream that
/// its kinds, tuple and keyed flags and shape count call for.
pub(crate) fn streams(n: &Node) -> impl Iterator<Item = Stream> {
    let has = |k: u8| n.kinds & (1 << k) != 0;
    let maps = has(kind::INTMAP) || (has(kind::OBJECT) && n.keyed);
    [
        (n.kinds.count_ones() > 1, Stream::Kind),
        (has(kind::BOOL), Stream::Bool),
        (has(kind::INT), Stream::Int),
        (has(kind::FLOAT), Stream::Float),
        (has(kind::STRING), Stream::String),
        (has(kind::OBJECT) && !n.keyed && n.shapes.len() > 1, Stream::Shape),
        ((has(kind::ARRAY) && n.tuple.is_none()) || maps, Stream::Len),
        (maps, Stream::Key),
        (has(kind::RESIDUAL), Stream::Residual),
    ]
    .into_iter()
    .filter_map(|(present, s)| present.then_some(s))
}

/// The value under `keys` in a projected element (`Null` where it lacks them).
pub(crate) fn below(mut v: Value, keys: &[&str]) -> Value {
    for key in keys {
        v = match v {
            Value::Object(mut m) => m.swap_remove(*key).unwrap_or(Value::Null),
            _ => Value::Null,
        };
    }
    v
}

/// The size of one column of a packed array, for `leafwire stats`.
#[derive(Debug, Clone)]
pub struct ColumnSize {
    pub node: usize,
    pub stream: Stream,
    pub values: u64,
    /// Bytes of its chunks, page directories included.
    pub bytes: u64,
    /// Bytes of its pages by codec name (`"FOR"`, `"dictionary"`, `"zstd"`...).
    pub codecs: Vec<(&'static str, u64)>,
}

/// One step of a column's path below the packed array's elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    Key(String),
    /// Any element (or tuple position) of an array.
    Item,
    /// Any value of an intmap or keyed object (or of a packed object, §13.7).
    Entry,
    /// The keys of a packed object (§13.7).
    EntryKey,
}

/// How pages are encoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct PackOptions {
    /// Compress with zstd at this level where that is smaller: each page (§13.5.4), or
    /// each stripe whole when that is at least 1/8 smaller (§13.4). From level 10
    /// (`ARCHIVE_LEVEL`) pages hold 65,536 values instead of 4,096: smaller files, and
    /// one element decompresses up to a whole page of each column it reads.
    pub zstd_level: Option<i32>,
    /// Quantize floats to steps of 2^t (lossy; §13.5, codec 0x14).
    pub lossy_step: Option<i8>,
    /// Keep every group shredded into columns: never the residual form of a group or a
    /// packed object's whole form (§13.3, §13.7), which keep the values whole as
    /// compressed JSON text where that is smaller. Selective loads then read one field
    /// from its own columns everywhere, at the cost of size where data does not shred.
    pub columns_only: bool,
}

impl PackOptions {
    /// The most values the encoder puts in one page.
    pub(crate) fn page_values(&self) -> usize {
        match self.archival() {
            true => ARCHIVE_PAGE_VALUES,
            false => PAGE_VALUES,
        }
    }

    /// How many values of one node close a stripe.
    pub(crate) fn stripe_values(&self) -> usize {
        match self.archival() {
            true => ARCHIVE_PAGE_VALUES,
            false => STRIPE_PAGES * PAGE_VALUES,
        }
    }

    fn archival(&self) -> bool {
        self.zstd_level.is_some_and(|level| level >= ARCHIVE_LEVEL)
    }
}

// ---------------------------------------------------------------------------------------
// Writing

/// Appends the group block of `s` to `out`.
pub(crate) fn write_group(s: &Shredded, options: &PackOptions, out: &mut Vec<u8>) -> Result<()> {
    let columns: Vec<(usize, Stream)> =
        s.nodes.iter().enumerate().flat_map(|(i, n)| streams(n).map(move |st| (i, st))).collect();
    let mut tables = Vec::new();
    write_varint(&mut tables, s.keys.len() as u64);
    for key in &s.keys {
        write_varint(&mut tables, key.len() as u64);
        tables.extend_from_slice(key.as_bytes());
    }
    for n in &s.nodes {
        write_node(n, &mut tables);
    }
    let last = s.marks.len().saturating_sub(1);
    for &(node, stream) in &columns {
        let total = values(&s.nodes[node], stream, &Cursor::default(), &s.cursor(last, node)).len();
        write_varint(&mut tables, node as u64);
        tables.push(stream as u8);
        write_varint(&mut tables, total as u64);
    }
    // With a zstd level, the tables are framed on the stripes' terms (a group of many
    // nodes names many keys; opening a group decompresses its tables).
    let framed_tables = options.zstd_level.and_then(|level| zstd_stage::frame_if_worth(&tables, level, tables.len()));
    let mut flags = 0;
    if options.zstd_level.is_some() {
        flags |= GROUP_STRIPE_FRAMES;
    }
    if framed_tables.is_some() {
        flags |= GROUP_TABLES_FRAMED;
    }
    out.push(VERSION);
    out.push(flags);
    write_varint(out, s.len as u64);
    write_varint(out, s.nodes.len() as u64);
    write_varint(out, columns.len() as u64);
    write_varint(out, s.stripes() as u64);
    out.extend_from_slice(framed_tables.as_deref().unwrap_or(&tables));
    // The stripes go to a buffer first: the index before them holds their offsets.
    let mut body = Vec::new();
    let mut index = Vec::new();
    for m in 0..s.stripes() {
        write_varint(&mut index, s.marks[m].first as u64);
        write_varint(&mut index, body.len() as u64);
        match options.zstd_level {
            None => write_stripe(s, &columns, m, options, &mut body)?,
            Some(level) => write_framed_stripe(s, &columns, m, options, level, &mut body)?,
        }
    }
    out.reserve(index.len() + body.len());
    out.extend_from_slice(&index);
    out.extend_from_slice(&body);
    Ok(())
}

fn write_node(n: &Node, out: &mut Vec<u8>) {
    let (role, name) = match n.role.expect("every node has a role") {
        Role::Root => (0, 0),
        Role::Field(id) => (1, id as u64),
        Role::Element => (2, 0),
        Role::Position(i) => (3, i as u64),
        Role::MapValue => (4, 0),
    };
    write_varint(out, n.parent as u64);
    out.push(role);
    write_varint(out, name);
    out.extend_from_slice(&n.kinds.to_le_bytes());
    let flags = if n.tuple.is_some() { FLAG_TUPLE } else { 0 } | if n.keyed { FLAG_KEYED } else { 0 };
    out.push(flags);
    if let Some(k) = n.tuple {
        out.push(k);
    }
    if n.kinds & (1 << kind::OBJECT) != 0 && !n.keyed {
        write_varint(out, n.shapes.len() as u64);
        for shape in &n.shapes {
            write_varint(out, shape.len() as u64);
            for &id in shape {
                write_varint(out, id as u64);
            }
        }
    }
}

/// The values of one column between two stream positions.
enum Values<'s> {
    Ints(Cow<'s, [i64]>),
    Floats(&'s [f64]),
    Strings(&'s [Cow<'s, str>]),
    Residual(&'s [Value]),
}

impl Values<'_> {
    fn len(&self) -> usize {
        match self {
            Values::Ints(v) => v.len(),
            Values::Floats(v) => v.len(),
            Values::Strings(v) => v.len(),
            Values::Residual(v) => v.len(),
        }
    }
}

fn values<'s>(n: &'s Node<'_>, stream: Stream, a: &Cursor, b: &Cursor) -> Values<'s> {
    fn ints<T: Copy>(v: &[T], f: impl Fn(T) -> i64) -> Values<'_> {
        Values::Ints(Cow::Owned(v.iter().map(|&x| f(x)).collect()))
    }
    match stream {
        Stream::Kind => ints(&n.kind[a.kind..b.kind], i64::from),
        Stream::Bool => ints(&n.bools[a.bools..b.bools], i64::from),
        Stream::Int => Values::Ints(Cow::Borrowed(&n.ints[a.ints..b.ints])),
        Stream::Float => Values::Floats(&n.floats[a.floats..b.floats]),
        Stream::String => Values::Strings(&n.strings[a.strings..b.strings]),
        Stream::Shape => ints(&n.shape[a.shape..b.shape], i64::from),
        Stream::Len => ints(&n.len[a.len..b.len], |x| x as i64),
        Stream::Key => Values::Ints(Cow::Borrowed(&n.keys[a.keys..b.keys])),
        Stream::Residual => Values::Residual(&n.residual[a.residual..b.residual]),
    }
}

/// How string pages are written: as the selector chooses, or plain (text that a zstd
/// frame around the stripe compresses better than the selector's codes).
#[derive(Clone, Copy, PartialEq)]
enum StringPages {
    Selected,
    Plain,
}

/// One column's chunk of a stripe: its values and their pages, encoded once, with no
/// zstd stage yet.
struct Chunk<'s> {
    values: Values<'s>,
    /// Each page's values and bytes.
    pages: Vec<(Range<usize>, Vec<u8>)>,
}

/// The chunks of stripe `m`, every page encoded (string pages as `strings` says).
fn encode_chunks<'s>(
    s: &'s Shredded,
    columns: &[(usize, Stream)],
    m: usize,
    options: &PackOptions,
    strings: StringPages,
) -> Result<Vec<Chunk<'s>>> {
    columns
        .iter()
        .map(|&(node, stream)| {
            let values = values(&s.nodes[node], stream, &s.cursor(m, node), &s.cursor(m + 1, node));
            let n = values.len();
            let page_values = options.page_values();
            // A float chunk of several pages has its codec chosen once, for all of them.
            let chunk_floats = std::cell::OnceCell::new();
            let pages = (0..n)
                .step_by(page_values)
                .map(|p| {
                    let r = p..(p + page_values).min(n);
                    let page = match &values {
                        Values::Floats(v) if n > page_values => {
                            let mut page = Vec::new();
                            select::write_chunk_floats(&v[r.clone()], v, &chunk_floats, options.lossy_step, &mut page)?;
                            page
                        }
                        _ => encode_page(&values, r.clone(), options, strings)?,
                    };
                    Ok((r, page))
                })
                .collect::<Result<_>>()?;
            Ok(Chunk { values, pages })
        })
        .collect()
}

/// With a zstd level (§13.4, stripe frames): stripe `m` with its pages each in a zstd
/// stage where that pays, or, when that is at least 1/8 smaller, a zstd frame of the
/// whole stripe without stages (its string pages selected or plain, the smaller), which
/// also finds what columns repeat of one another. The margin keeps pages apart where a
/// frame gains little: reading one column of a framed stripe decompresses all of them.
/// The selector runs once: the candidates differ only in stages and plain strings.
fn write_framed_stripe(
    s: &Shredded,
    columns: &[(usize, Stream)],
    m: usize,
    options: &PackOptions,
    level: i32,
    out: &mut Vec<u8>,
) -> Result<()> {
    let chunks = encode_chunks(s, columns, m, options, StringPages::Selected)?;
    let mut best = vec![STRIPE_BARE];
    put_stripe(&chunks, |c, r, page| Ok(Cow::Owned(staged(&c.values, r, page, level))), &mut best)?;
    let staged = best.len() - 1;
    let mut selected = Vec::new();
    put_stripe(&chunks, |_, _, page| Ok(Cow::Borrowed(page)), &mut selected)?;
    let mut candidates = vec![selected];
    if chunks.iter().any(|c| matches!(c.values, Values::Strings(_)) && c.values.len() > 0) {
        let mut plain = Vec::new();
        put_stripe(
            &chunks,
            |c, r, page| match c.values {
                Values::Strings(_) => encode_page(&c.values, r.clone(), options, StringPages::Plain).map(Cow::Owned),
                _ => Ok(Cow::Borrowed(page)),
            },
            &mut plain,
        )?;
        candidates.push(plain);
    }
    for stripe in &candidates {
        if let Some(frame) = zstd_stage::frame_if_worth(stripe, level, staged) {
            if 1 + frame.len() < best.len() {
                best.clear();
                best.push(STRIPE_FRAMED);
                best.extend_from_slice(&frame);
            }
        }
    }
    out.extend_from_slice(&best);
    Ok(())
}

/// `page` (of `values[r]`) in a zstd stage at `level` where that is smaller (§13.5.4);
/// strings take the smaller of their selected and their plain stream staged. Residual
/// pages are never staged again (the JSON form is a zstd frame already, §13.3).
fn staged(values: &Values, r: &Range<usize>, page: &[u8], level: i32) -> Vec<u8> {
    match values {
        Values::Strings(v) => zstd_stage::wrap_best_strings(&v[r.clone()], page.to_vec(), level),
        Values::Residual(_) => page.to_vec(),
        Values::Floats(v) => zstd_stage::wrap_best_floats(&v[r.clone()], page.to_vec(), level),
        _ => zstd_stage::wrap(page.to_vec(), level),
    }
}

/// Writes stripe `m` without zstd: its chunk directory, then its chunks.
fn write_stripe(s: &Shredded, columns: &[(usize, Stream)], m: usize, options: &PackOptions, out: &mut Vec<u8>) -> Result<()> {
    let chunks = encode_chunks(s, columns, m, options, StringPages::Selected)?;
    put_stripe(&chunks, |_, _, page| Ok(Cow::Borrowed(page)), out)
}

/// Writes a stripe of `chunks` (§13.4): the chunk directory, then each chunk: nothing
/// for no values; else varint P, for P ≥ 2 the page directory, then the pages, each as
/// `page` makes it of the encoded page.
fn put_stripe<'c>(
    chunks: &'c [Chunk],
    page: impl Fn(&Chunk, &Range<usize>, &'c [u8]) -> Result<Cow<'c, [u8]>>,
    out: &mut Vec<u8>,
) -> Result<()> {
    // Room for the pages as encoded (those `page` changes are about their size) and their
    // directories: the stripe is copied once, not regrown.
    let room = chunks.iter().flat_map(|c| &c.pages).map(|(_, bytes)| bytes.len() + 2 * MAX_VARINT_LEN).sum::<usize>();
    let mut body = Vec::with_capacity(room + chunks.len() * MAX_VARINT_LEN);
    for c in chunks {
        let start = body.len();
        if !c.pages.is_empty() {
            let pages = c.pages.iter().map(|(r, bytes)| page(c, r, bytes)).collect::<Result<Vec<_>>>()?;
            write_varint(&mut body, pages.len() as u64);
            if pages.len() > 1 {
                for ((r, _), bytes) in c.pages.iter().zip(&pages) {
                    write_varint(&mut body, r.len() as u64);
                    write_varint(&mut body, bytes.len() as u64);
                }
            }
            pages.iter().for_each(|bytes| body.extend_from_slice(bytes));
        }
        write_varint(out, c.values.len() as u64);
        write_varint(out, (body.len() - start) as u64);
    }
    out.reserve(body.len());
    out.extend_from_slice(&body);
    Ok(())
}

/// Page `r` of `values`, encoded by the selector (string pages plain if `strings` says).
fn encode_page(values: &Values, r: Range<usize>, options: &PackOptions, strings: StringPages) -> Result<Vec<u8>> {
    let mut page = Vec::new();
    match values {
        Values::Ints(v) => select::write_ints(&v[r], 0, &mut page).map(drop)?,
        Values::Floats(v) => select::write_floats(&v[r], options.lossy_step, &mut page)?,
        Values::Strings(v) if strings == StringPages::Plain => {
            super::string::encode_strings(&v[r], &super::string::StrCodec::Plain(super::int::IntCodec::Auto), &mut page)?
        }
        Values::Strings(v) => select::write_strings(&v[r], 0, true, true, &mut page)?,
        Values::Residual(v) => return super::residual::encode_page(&v[r], options.zstd_level),
    }
    Ok(page)
}

// ---------------------------------------------------------------------------------------
// Reading

/// An opened group block: its node tree (no values yet), columns and stripe index,
/// checked; stripes are decoded on demand.
pub(crate) struct Group<'a> {
    /// The document (positions below are absolute, so errors carry document offsets).
    buf: &'a [u8],
    end: usize,
    template: Shredded<'static>,
    columns: Vec<Column>,
    /// First element and absolute position of each stripe (its chunk directory, or its
    /// framing byte when `framed`).
    stripes: Vec<(usize, usize)>,
    /// Whether stripes begin with a framing byte (group flag bit 0, §13.4).
    framed: bool,
    limits: Limits,
}

/// The bytes of one stripe's chunk directory and chunks: a range of the document, or the
/// content of its zstd frame, whose errors are reported at the frame (§13.4).
struct StripeBytes<'a> {
    bytes: std::borrow::Cow<'a, [u8]>,
    start: usize,
    end: usize,
    frame: Option<usize>,
}

impl StripeBytes<'_> {
    /// Where the stripe's errors are reported: its chunk directory or its frame.
    fn at(&self) -> usize {
        self.frame.unwrap_or(self.start)
    }

    /// `e` as reported from this stripe: inside a frame, offsets mean nothing in the
    /// document, so the error moves to the frame.
    fn locate(&self, e: Error) -> Error {
        match self.frame {
            Some(at) => zstd_stage::inside(e, "a stripe frame", at),
            None => e,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Column {
    node: usize,
    stream: Stream,
    count: usize,
}

impl<'a> Group<'a> {
    /// Opens the group block that occupies `range` of `buf`.
    pub fn open(buf: &'a [u8], range: Range<usize>) -> Result<Group<'a>> {
        let limits = Limits::default();
        let end = range.end;
        let mut r = Reader::new(&buf[..end], range.start, &limits);
        let at = r.pos;
        if r.u8()? != VERSION {
            return Err(Error::malformed(at as u64, "unknown column group version"));
        }
        let flags = r.u8()?;
        if flags & !(GROUP_STRIPE_FRAMES | GROUP_TABLES_FRAMED) != 0 {
            return Err(Error::malformed(at as u64 + 1, "unknown column group flags"));
        }
        let len = r.count(0, u32::MAX as usize, "group element count above 2^32 - 1")?;
        let (nodes_at, nodes) = (r.pos, r.varint()?);
        let (columns_at, column_count) = (r.pos, r.varint()?);
        // Every stripe takes at least 2 bytes of the index.
        let (min_stripes, max_stripes) = if len == 0 { (0, 0) } else { (1, len.min(r.remaining() / 2)) };
        let stripe_count = r.count(min_stripes, max_stripes, "group stripe count out of range")?;
        let (mut template, columns) = if flags & GROUP_TABLES_FRAMED != 0 {
            let frame_at = r.pos;
            let tables = zstd_stage::unwrap(&mut r, frame_at)?;
            let mut t = Reader::new(&tables, 0, &limits);
            let in_frame = |e: Error| zstd_stage::inside(e, "the group's tables frame", frame_at);
            let read = read_tables(&mut t, len, (nodes_at, nodes), (columns_at, column_count)).map_err(in_frame)?;
            if t.pos != tables.len() {
                return Err(in_frame(Error::malformed(t.pos as u64, "bytes after the tables")));
            }
            read
        } else {
            read_tables(&mut r, len, (nodes_at, nodes), (columns_at, column_count))?
        };
        let mut index = Vec::with_capacity(stripe_count);
        for s in 0..stripe_count {
            let at = r.pos;
            let (first, offset) = (r.varint()?, r.varint()?);
            let ok_first = if s == 0 {
                first == 0
            } else {
                first > index.last().map_or(0, |&(f, _)| f as u64) && first < len as u64
            };
            // Stripes of columns without values take no bytes, so offsets may repeat.
            let ok_offset = if s == 0 { offset == 0 } else { offset >= index.last().map_or(0, |&(_, o)| o as u64) };
            if !ok_first || !ok_offset {
                return Err(Error::malformed(at as u64, "stripe index not increasing from 0"));
            }
            index.push((first as usize, offset as usize));
        }
        let body = r.pos;
        let stripes = index
            .into_iter()
            .map(|(first, offset)| match body.checked_add(offset).filter(|&p| p <= end) {
                Some(p) => Ok((first, p)),
                None => Err(Error::malformed(body as u64, "stripe offset past the group")),
            })
            .collect::<Result<Vec<_>>>()?;
        // Once here, rather than in every stripe's copy of the template.
        template.index_fields();
        Ok(Group { buf, end, template, columns, stripes, framed: flags & GROUP_STRIPE_FRAMES != 0, limits })
    }

    /// The element count.
    pub fn len(&self) -> usize {
        self.template.len
    }

    /// Node `i` of the node table (no values).
    pub(crate) fn node(&self, i: usize) -> &Node<'static> {
        &self.template.nodes[i]
    }

    /// Every element, stripe after stripe; each value built is charged to `budget`.
    pub fn elements(&self, budget: &mut u64) -> Result<Vec<Value>> {
        self.elements_keeping(None, budget)
    }

    /// The part of every element below `keys` (a path of object keys from the element),
    /// decoding only the columns on that path and below it: the selective load. Returns
    /// the values and how many of `keys` the projection followed (it stops at the first
    /// key that no object at that path has; the caller steps through the rest).
    pub fn select(&self, keys: &[&str], budget: &mut u64) -> Result<(Vec<Value>, usize)> {
        let (keep, path) = self.nodes_on(keys);
        let used = path.len();
        let elements = self.elements_keeping(Some(&keep), budget)?;
        Ok((elements.into_iter().map(|v| below(v, &keys[..used])).collect(), used))
    }

    /// As [`Group::select`] for element `i` alone: decodes its stripe's columns on the path.
    pub fn element_select(mut self, i: usize, keys: &[&str], budget: &mut u64) -> Result<(Value, usize)> {
        let (keep, path) = self.nodes_on(keys);
        let used = path.len();
        let s = self.stripes.partition_point(|&(first, _)| first <= i) - 1;
        let mut totals = vec![0usize; self.columns.len()];
        let mut work = self.take_template();
        let value = self.stripe_element(s, i - self.stripes[s].0, Some(&keep), &mut work, budget, &mut totals)?;
        Ok((below(value, &keys[..used]), used))
    }

    /// The nodes a projection on `keys` reads, and the path it follows (the key id and the
    /// node of each key followed; it stops at a key no object there has): the nodes on
    /// the path of the followed keys, the whole subtree of the last one, and, below each
    /// node on the path, everything but its other fields: a node on the path may hold
    /// arrays or maps in some elements, whose values must be read to step over them.
    pub(crate) fn nodes_on(&self, keys: &[&str]) -> (Vec<bool>, Vec<(u32, usize)>) {
        let nodes = &self.template.nodes;
        let mut on_path = vec![false; nodes.len()];
        on_path[0] = true;
        let (mut at, mut path) = (0, Vec::new());
        for key in keys {
            let Some(id) = self.template.keys.get_index_of(*key).map(|id| id as u32) else { break };
            let Some(child) = nodes[at].child(Role::Field(id)) else { break };
            on_path[child] = true;
            path.push((id, child));
            at = child;
        }
        // Children come after their parents: one pass marks the subtrees.
        let mut whole = vec![false; nodes.len()];
        whole[at] = true;
        for (i, n) in nodes.iter().enumerate().skip(1) {
            let field = matches!(n.role, Some(Role::Field(_)));
            whole[i] |= whole[n.parent] || (on_path[n.parent] && !field);
        }
        let keep = on_path.iter().zip(&whole).map(|(&p, &w)| p || w).collect();
        (keep, path)
    }

    fn elements_keeping(&self, keep: Option<&[bool]>, budget: &mut u64) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(self.len());
        let mut totals = vec![0usize; self.columns.len()];
        // One copy of the node tree for all stripes: each stripe empties its streams.
        let mut work = self.template.clone();
        for s in 0..self.stripes.len() {
            out.extend(self.stripe(s, keep, &mut work, budget, &mut totals)?);
        }
        self.check_totals(&totals)?;
        Ok(out)
    }

    /// Element `i` (< `len`): decodes its stripe only.
    pub fn element(mut self, i: usize, budget: &mut u64) -> Result<Value> {
        let s = self.stripes.partition_point(|&(first, _)| first <= i) - 1;
        let first = self.stripes[s].0;
        let mut totals = vec![0usize; self.columns.len()];
        let mut work = self.take_template();
        self.stripe_element(s, i - first, None, &mut work, budget, &mut totals)
    }

    /// The bytes of each column over all stripes (chunks with their page directories), and
    /// of each column's pages by codec; what is left of the block is tables.
    pub fn column_sizes(&self) -> Result<Vec<ColumnSize>> {
        let mut sizes: Vec<ColumnSize> = self
            .columns
            .iter()
            .map(|c| ColumnSize {
                node: c.node,
                stream: c.stream,
                values: c.count as u64,
                bytes: 0,
                codecs: Vec::new(),
            })
            .collect();
        for s in 0..self.stripes.len() {
            let stripe = self.stripe_bytes(s)?;
            let buf = &stripe.bytes[..stripe.end];
            // A framed stripe's bytes are shared out among its columns in proportion to
            // what each takes inside the frame, so that the sizes add up to the file's.
            let stored = self.stripe_end(s) - self.stripes[s].1;
            let share = |len: usize| match stripe.frame {
                Some(_) => (len as u128 * stored as u128 / (stripe.end - stripe.start).max(1) as u128) as u64,
                None => len as u64,
            };
            let mut r = Reader::new(buf, stripe.start, &self.limits);
            let mut chunks = Vec::with_capacity(self.columns.len());
            for _ in &self.columns {
                chunks.push((r.varint()?, r.count(0, r.remaining(), "chunk runs past its stripe")?));
            }
            let mut pos = r.pos;
            for (size, &(count, bytes)) in sizes.iter_mut().zip(&chunks) {
                size.bytes += share(bytes);
                let end = pos + bytes;
                if count > 0 {
                    for (at, len) in self.pages(buf, pos, end, count as usize).map_err(|e| stripe.locate(e))? {
                        let name = match size.stream {
                            // Residual pages are documents or JSON text, not codec streams (§13.3).
                            Stream::Residual if super::residual::is_json_page(&buf[at..at + len]) => "residual JSON (zstd)",
                            Stream::Residual => "residual documents",
                            // Inside a frame, the bytes of a page are its share of the frame.
                            _ if stripe.frame.is_some() => "zstd stripe frames",
                            _ => super::codec::name(buf[at]),
                        };
                        match size.codecs.iter_mut().find(|(n, _)| *n == name) {
                            Some((_, b)) => *b += share(len),
                            None => size.codecs.push((name, share(len))),
                        }
                    }
                }
                pos = end;
            }
        }
        Ok(sizes)
    }

    /// The steps from an element to node `node`'s values.
    pub fn path(&self, mut node: usize) -> Vec<PathStep> {
        let mut steps = Vec::new();
        while node != 0 {
            let n = &self.template.nodes[node];
            steps.push(match n.role.expect("every node has a role") {
                Role::Field(id) => PathStep::Key(self.template.keys[id as usize].clone()),
                Role::Element | Role::Position(_) => PathStep::Item,
                Role::MapValue => PathStep::Entry,
                Role::Root => unreachable!("only node 0 is the root"),
            });
            node = n.parent;
        }
        steps.reverse();
        steps
    }

    /// Where the pages of the chunk at `pos..end` of `count` values lie: (start, length).
    fn pages(&self, buf: &[u8], pos: usize, end: usize, count: usize) -> Result<Vec<(usize, usize)>> {
        let mut r = Reader::new(&buf[..end], pos, &self.limits);
        let pages = r.count(1, count, "chunk page count out of range")?;
        if pages == 1 {
            return Ok(vec![(r.pos, end - r.pos)]);
        }
        let mut lens = Vec::with_capacity(pages);
        for _ in 0..pages {
            r.varint()?;
            lens.push(r.count(1, r.remaining(), "page runs past its chunk")?);
        }
        let mut at = r.pos;
        let mut out = Vec::with_capacity(pages);
        for len in lens {
            if at + len > end {
                return Err(Error::malformed(at as u64, "page runs past its chunk"));
            }
            out.push((at, len));
            at += len;
        }
        Ok(out)
    }

    /// The elements of stripe `s`, its columns decoded into `groups` by
    /// [`Group::load_stripe`].
    fn stripe(
        &self,
        s: usize,
        keep: Option<&[bool]>,
        groups: &mut Shredded<'static>,
        budget: &mut u64,
        totals: &mut [usize],
    ) -> Result<Vec<Value>> {
        let (unshredder, dir) = self.unshredder(s, keep, groups, budget, totals)?;
        unshredder.elements().map_err(|m| unshred_error(m, dir))
    }

    /// Element `i` of stripe `s` alone, as [`Group::stripe`] would give it among the
    /// others, which are stepped over.
    fn stripe_element(
        &self,
        s: usize,
        i: usize,
        keep: Option<&[bool]>,
        groups: &mut Shredded<'static>,
        budget: &mut u64,
        totals: &mut [usize],
    ) -> Result<Value> {
        let (unshredder, dir) = self.unshredder(s, keep, groups, budget, totals)?;
        unshredder.element_at(i).map_err(|m| unshred_error(m, dir))
    }

    /// Stripe `s` loaded into `groups` ([`Group::load_stripe`]) and a reader of its
    /// elements (of the nodes in `keep` only, when given), with the stripe's directory
    /// offset for its errors.
    fn unshredder<'s, 'b>(
        &self,
        s: usize,
        keep: Option<&'s [bool]>,
        groups: &'s mut Shredded<'static>,
        budget: &'b mut u64,
        totals: &mut [usize],
    ) -> Result<(Unshredder<'s, 'b>, usize)> {
        let dir = self.load_stripe(s, keep, groups, budget, totals)?;
        let unshredder = Unshredder::new(groups, budget);
        let unshredder = match keep {
            Some(keep) => unshredder.keeping(keep),
            None => unshredder,
        };
        Ok((unshredder, dir))
    }

    /// How many stripes the group has.
    pub(crate) fn stripe_count(&self) -> usize {
        self.stripes.len()
    }

    /// Decodes the columns of stripe `s` into the streams of `groups` (a copy of the node
    /// tree, whose streams it empties first), adding each chunk's value count to `totals`;
    /// returns the offset of the stripe's directory, where errors of its elements are
    /// reported ([`unshred_error`]).
    pub(crate) fn load_stripe(
        &self,
        s: usize,
        keep: Option<&[bool]>,
        groups: &mut Shredded<'static>,
        budget: &mut u64,
        totals: &mut [usize],
    ) -> Result<usize> {
        let first = self.stripes[s].0;
        let next = self.stripes.get(s + 1).map_or(self.len(), |&(f, _)| f);
        groups.nodes.iter_mut().for_each(Node::clear_streams);
        groups.len = next - first;
        let stripe = self.stripe_bytes(s)?;
        self.load_chunks(&stripe, keep, groups, budget, totals).map_err(|e| stripe.locate(e))?;
        Ok(stripe.at())
    }

    /// Where stripe `s`'s bytes end in the document.
    fn stripe_end(&self, s: usize) -> usize {
        self.stripes.get(s + 1).map_or(self.end, |&(_, p)| p)
    }

    /// Stripe `s`'s chunk directory and chunks: in place, or its frame decompressed.
    fn stripe_bytes(&self, s: usize) -> Result<StripeBytes<'a>> {
        let (pos, end) = (self.stripes[s].1, self.stripe_end(s));
        let bare = |start| StripeBytes { bytes: std::borrow::Cow::Borrowed(self.buf), start, end, frame: None };
        if !self.framed {
            return Ok(bare(pos));
        }
        let mut r = Reader::new(&self.buf[..end], pos, &self.limits);
        match r.u8()? {
            STRIPE_BARE => Ok(bare(pos + 1)),
            STRIPE_FRAMED => {
                let content = zstd_stage::unwrap(&mut r, pos)?;
                if r.pos != end {
                    return Err(Error::malformed(r.pos as u64, "stripe bytes after its zstd frame"));
                }
                let len = content.len();
                Ok(StripeBytes { bytes: std::borrow::Cow::Owned(content), start: 0, end: len, frame: Some(pos) })
            }
            _ => Err(Error::malformed(pos as u64, "unknown stripe framing byte")),
        }
    }

    /// Decodes the chunks of `stripe` (see [`Group::load_stripe`]).
    fn load_chunks(
        &self,
        stripe: &StripeBytes,
        keep: Option<&[bool]>,
        groups: &mut Shredded<'static>,
        budget: &mut u64,
        totals: &mut [usize],
    ) -> Result<()> {
        let (buf, dir, stripe_end) = (&stripe.bytes[..stripe.end], stripe.start, stripe.end);
        let mut r = Reader::new(buf, dir, &self.limits);
        let mut chunks = Vec::with_capacity(self.columns.len());
        for (c, total) in self.columns.iter().zip(totals.iter_mut()) {
            let count = r.count(0, c.count - *total, "chunk count past the column's")?;
            let bytes = r.count(0, r.remaining(), "chunk runs past its stripe")?;
            *total += count;
            chunks.push((count, bytes));
        }
        let mut pos = r.pos;
        for (c, &(count, bytes)) in self.columns.iter().zip(&chunks) {
            let end = pos
                .checked_add(bytes)
                .filter(|&e| e <= stripe_end)
                .ok_or_else(|| Error::malformed(pos as u64, "chunk runs past its stripe"))?;
            if keep.is_none_or(|keep| keep[c.node]) {
                self.read_chunk(buf, pos, end, count, *c, &mut groups.nodes[c.node], budget)?;
            }
            pos = end;
        }
        if pos != stripe_end {
            return Err(Error::malformed(pos as u64, "bytes after the stripe's last chunk"));
        }
        Ok(())
    }

    /// Checks, once every stripe is read, that the chunks added up to the columns.
    pub(crate) fn check_totals(&self, totals: &[usize]) -> Result<()> {
        if totals.iter().zip(&self.columns).any(|(&t, c)| t != c.count) {
            return Err(Error::malformed(
                self.stripes.first().map_or(0, |s| s.1) as u64,
                "chunk counts do not add up to the column table's",
            ));
        }
        Ok(())
    }

    /// An empty copy of the node tree, whose streams [`Group::load_stripe`] fills.
    pub(crate) fn template(&self) -> Shredded<'static> {
        self.template.clone()
    }

    /// The node tree itself, for a reader that needs no more copies of it: copying the
    /// tables costs about what reading them did. The group keeps its length and can still
    /// load stripes, but has no nodes left (`node`, `nodes_on`, `path` and `template`
    /// read them).
    pub(crate) fn take_template(&mut self) -> Shredded<'static> {
        let shell = Shredded { len: self.template.len, nodes: Vec::new(), keys: Default::default(), marks: Vec::new() };
        std::mem::replace(&mut self.template, shell)
    }

    /// How many columns the group has (the length of the totals of `load_stripe`).
    pub(crate) fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// Decodes the chunk at `pos..end` of `count` values into its node's stream.
    fn read_chunk(
        &self,
        buf: &[u8],
        pos: usize,
        end: usize,
        count: usize,
        c: Column,
        node: &mut Node,
        budget: &mut u64,
    ) -> Result<()> {
        if count == 0 {
            return if pos == end {
                Ok(())
            } else {
                Err(Error::malformed(pos as u64, "a chunk of no values has bytes"))
            };
        }
        let mut r = Reader::new(&buf[..end], pos, &self.limits);
        let pages = r.count(1, count, "chunk page count out of range")?;
        let mut directory = Vec::with_capacity(pages);
        if pages == 1 {
            directory.push((count, end - r.pos));
        } else {
            let mut left = count;
            for _ in 0..pages {
                let n = r.count(1, left, "page value counts exceed the chunk's")?;
                let len = r.count(1, r.remaining(), "page runs past its chunk")?;
                left -= n;
                directory.push((n, len));
            }
            if left != 0 {
                return Err(Error::malformed(pos as u64, "page value counts fall short of the chunk's"));
            }
        }
        let mut at = r.pos;
        for (n, len) in directory {
            let page_end = at
                .checked_add(len)
                .filter(|&e| e <= end)
                .ok_or_else(|| Error::malformed(at as u64, "page runs past its chunk"))?;
            self.read_page(buf, at, page_end, n, c.stream, node, budget)?;
            at = page_end;
        }
        if at != end {
            return Err(Error::malformed(at as u64, "chunk bytes after its last page"));
        }
        Ok(())
    }

    fn read_page(
        &self,
        buf: &[u8],
        pos: usize,
        end: usize,
        n: usize,
        stream: Stream,
        node: &mut Node,
        budget: &mut u64,
    ) -> Result<()> {
        let bad = |m: &'static str| Error::malformed(pos as u64, m);
        let page_kind = match stream {
            Stream::Float => PageKind::Floats,
            Stream::String => PageKind::Strings,
            Stream::Residual => return self.read_residual(buf, pos, end, n, node, budget),
            _ => PageKind::Ints,
        };
        let ints = match decode_page(buf, pos, end, n, page_kind, &self.limits)? {
            PageValues::Floats(v) => {
                append(&mut node.floats, v);
                return Ok(());
            }
            PageValues::Strings(v) => {
                node.texts.append(v);
                return Ok(());
            }
            PageValues::Ints(v) => v,
        };
        match stream {
            Stream::Kind => {
                for k in ints {
                    if !(0..16).contains(&k) || node.kinds & (1 << k) == 0 {
                        return Err(bad("kind not among the node's kinds"));
                    }
                    node.kind.push(k as u8);
                }
            }
            Stream::Bool => {
                for b in ints {
                    node.bools.push(match b {
                        0 => false,
                        1 => true,
                        _ => return Err(bad("boolean column value not 0 or 1")),
                    });
                }
            }
            Stream::Int => append(&mut node.ints, ints),
            Stream::Shape => {
                for id in ints {
                    node.shape.push(
                        u32::try_from(id)
                            .ok()
                            .filter(|&id| (id as usize) < node.shapes.len())
                            .ok_or_else(|| bad("shape id out of range"))?,
                    );
                }
            }
            Stream::Len => {
                for len in ints {
                    node.len.push(u32::try_from(len).map_err(|_| bad("length out of range"))? as u64);
                }
            }
            Stream::Key => node.keys.extend(ints),
            Stream::Float | Stream::String | Stream::Residual => unreachable!("handled above"),
        }
        Ok(())
    }

    /// A residual page (§13.3, either form).
    fn read_residual(&self, buf: &[u8], pos: usize, end: usize, n: usize, node: &mut Node, budget: &mut u64) -> Result<()> {
        node.residual.extend(super::residual::decode_page(buf, pos, end, n, &self.limits, budget)?);
        Ok(())
    }
}

/// Appends a page's values to a stream: the first page's vector becomes the stream (most
/// chunks of a stripe are one page), instead of a copy into a new one.
fn append<T>(stream: &mut Vec<T>, page: Vec<T>) {
    if stream.is_empty() && stream.capacity() < page.len() {
        *stream = page;
    } else {
        stream.extend(page);
    }
}

/// The key, node and column tables of a group (§13.2) from `r`, in place or the content
/// of their frame; `nodes` and `columns` are the counts and where the header holds them.
fn read_tables(
    r: &mut Reader,
    len: usize,
    (nodes_at, nodes): (usize, u64),
    (columns_at, column_count): (usize, u64),
) -> Result<(Shredded<'static>, Vec<Column>)> {
    // Every node takes at least 5 bytes, every column 3, every key 1.
    let nodes = usize::try_from(nodes)
        .ok()
        .filter(|&n| (1..=MAX_NODES.min(r.remaining() / 5)).contains(&n))
        .ok_or_else(|| Error::malformed(nodes_at as u64, "group node count out of range"))?;
    let column_count = usize::try_from(column_count)
        .ok()
        .filter(|&c| c <= (16 * nodes).min(r.remaining() / 3))
        .ok_or_else(|| Error::malformed(columns_at as u64, "group column count out of range"))?;
    let key_count = r.count(0, r.remaining(), "group key count out of range")?;
    // Room for the nodes at once (their count is bounded above): growing a vector of
    // nodes copies them each time.
    let mut template = Shredded::with_room(len, nodes);
    // Each key takes a byte at least; room for the first thousand is a small allocation.
    template.keys.reserve(key_count.min(1024));
    for _ in 0..key_count {
        let at = r.pos;
        let n = r.count(0, r.remaining(), "group key runs past the block")?;
        let text =
            std::str::from_utf8(r.take(n)?).map_err(|_| Error::malformed(at as u64, "group key is not UTF-8"))?;
        if !template.keys.insert(text.to_owned()) {
            return Err(Error::malformed(at as u64, "group key repeated"));
        }
    }
    let mut sorted = Vec::new();
    for i in 0..nodes {
        read_node(r, &mut template, i, &mut sorted)?;
    }
    let expected = || template.nodes.iter().enumerate().flat_map(|(i, n)| streams(n).map(move |st| (i, st)));
    if expected().count() != column_count {
        return Err(Error::malformed(r.pos as u64, "column count differs from what the node table calls for"));
    }
    let mut columns = Vec::with_capacity(column_count);
    for (node, stream) in expected() {
        let at = r.pos;
        let (n, s) = (r.varint()?, r.u8()?);
        if n != node as u64 || s != stream as u8 {
            return Err(Error::malformed(at as u64, "column table out of the node table's order"));
        }
        let count = r.count(0, u32::MAX as usize * 16, "column count out of range")?;
        columns.push(Column { node, stream, count });
    }
    Ok((template, columns))
}

/// The error of an unshredder's message about the elements of the stripe whose directory
/// is at `dir`.
pub(crate) fn unshred_error(message: &'static str, dir: usize) -> Error {
    match message {
        super::shred::OVER_BUDGET => Error::new(
            crate::error::Category::LimitExceeded,
            "the packed array decodes to more values than the decode budget allows (spec §13.6)",
        )
        .at(dir as u64),
        m => Error::malformed(dir as u64, m),
    }
}

/// Reads node `i` of the node table into `s` (node 0 replaces the root `s` starts with);
/// `sorted` is room for checking a shape's keys distinct.
fn read_node(r: &mut Reader, s: &mut Shredded, i: usize, sorted: &mut Vec<u32>) -> Result<()> {
    let at = r.pos;
    let bad = |m: &'static str| Error::malformed(at as u64, m);
    let parent = r.varint()?;
    let role = r.u8()?;
    let name = r.varint()?;
    let kinds = u16::from_le_bytes([r.u8()?, r.u8()?]);
    let flags = r.u8()?;
    // Only the root of an empty group has no kinds.
    if (kinds == 0 && (i != 0 || s.len != 0)) || kinds >> (kind::RESIDUAL + 1) != 0 {
        return Err(bad("node kinds empty or unknown"));
    }
    if flags & !(FLAG_TUPLE | FLAG_KEYED) != 0 {
        return Err(bad("unknown node flags"));
    }
    let index = if i == 0 {
        if parent != 0 || role != 0 || name != 0 {
            return Err(bad("node 0 is not the root"));
        }
        0
    } else {
        if parent >= i as u64 {
            return Err(bad("node parent is not an earlier node"));
        }
        let parent = parent as usize;
        let p = &s.nodes[parent];
        let has = |k: u8| p.kinds & (1 << k) != 0;
        let role = match (role, name) {
            (1, id) if has(kind::OBJECT) && !p.keyed && id < s.keys.len() as u64 => Role::Field(id as u32),
            (2, 0) if has(kind::ARRAY) && p.tuple.is_none() => Role::Element,
            (3, pos) if p.tuple.is_some_and(|k| pos < k as u64) => Role::Position(pos as u8),
            (4, 0) if has(kind::INTMAP) || (has(kind::OBJECT) && p.keyed) => Role::MapValue,
            _ => return Err(bad("node role does not fit its parent")),
        };
        if p.child(role).is_some() {
            return Err(bad("two nodes with one parent and role"));
        }
        if p.depth > MAX_SHRED_DEPTH {
            return Err(bad("node deeper than the shredding depth limit"));
        }
        s.add_node(parent, role)
    };
    let n = &mut s.nodes[index];
    n.kinds = kinds;
    n.keyed = flags & FLAG_KEYED != 0;
    if n.keyed && kinds & (1 << kind::OBJECT) == 0 {
        return Err(bad("keyed flag on a node without objects"));
    }
    if flags & FLAG_TUPLE != 0 {
        let k = r.u8()?;
        if kinds & (1 << kind::ARRAY) == 0 || !(1..=MAX_TUPLE).contains(&k) {
            return Err(bad("tuple flag on a node without arrays, or tuple length out of range"));
        }
        n.tuple = Some(k);
    }
    if kinds & (1 << kind::OBJECT) != 0 && !n.keyed {
        let shapes = r.count(1, r.remaining(), "shape count out of range")?;
        for _ in 0..shapes {
            let len = r.count(0, r.remaining(), "shape runs past the block")?;
            let mut ids = Vec::with_capacity(len);
            for _ in 0..len {
                let at = r.pos;
                let id = r.varint()?;
                if id >= s.keys.len() as u64 {
                    return Err(Error::malformed(at as u64, "shape key id out of range"));
                }
                ids.push(id as u32);
            }
            sorted.clear();
            sorted.extend_from_slice(&ids);
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(bad("shape repeats a key"));
            }
            if !s.nodes[index].shapes.insert(ids) {
                return Err(bad("shape repeated"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::packed::shred::{shred, shred_in};
    use crate::packed::shred::tests::{normal, value};

    /// Writes `elements` as a group placed after 7 bytes of something else, and reads them
    /// back whole and one by one.
    fn round_trip(elements: &[Value], options: &PackOptions) -> (Vec<Value>, usize) {
        let s = shred(elements).expect("packable");
        let mut buf = vec![0xAB; 7];
        write_group(&s, options, &mut buf).unwrap();
        let g = Group::open(&buf, 7..buf.len()).unwrap();
        assert_eq!(g.len(), elements.len());
        let mut budget = u64::MAX;
        let all = g.elements(&mut budget).unwrap();
        for (i, e) in all.iter().enumerate() {
            let g = Group::open(&buf, 7..buf.len()).unwrap();
            assert_eq!(normal(&g.element(i, &mut budget).unwrap()), normal(e));
        }
        (all, buf.len() - 7)
    }

    #[test]
    fn archival_levels_cut_long_pages_that_see_distant_repeats() {
        // A random walk of 20,000 coordinates traced three times (a border that countries
        // share): pages of 4,096 values cannot see the repeat, pages of 65,536 can.
        let (mut x, mut next) = (0i64, crate::testing::xorshift(0x9E37_79B9_7F4A_7C15));
        let walk: Vec<f64> = (0..20_000)
            .map(|_| {
                x += (next() % 2001) as i64 - 1000;
                x as f64 / 1e6 + 0.1
            })
            .collect();
        let elements: Vec<Value> = walk.iter().cycle().take(60_000).map(|&v| Value::F64(v)).collect();
        let size_at = |level: i32| {
            let options = PackOptions { zstd_level: Some(level), lossy_step: None, ..Default::default() };
            assert_eq!(options.page_values(), if level >= ARCHIVE_LEVEL { ARCHIVE_PAGE_VALUES } else { PAGE_VALUES });
            let s = shred_in(&elements, options.stripe_values()).unwrap();
            let mut buf = Vec::new();
            write_group(&s, &options, &mut buf).unwrap();
            let g = Group::open(&buf, 0..buf.len()).unwrap();
            let mut budget = u64::MAX;
            assert_eq!(g.elements(&mut budget).unwrap(), elements);
            for i in [0, 4_095, 4_096, 20_000, 59_999] {
                let g = Group::open(&buf, 0..buf.len()).unwrap();
                assert_eq!(g.element(i, &mut budget).unwrap(), elements[i]);
            }
            buf.len()
        };
        let (quick, archival) = (size_at(ARCHIVE_LEVEL - 1), size_at(ARCHIVE_LEVEL));
        assert!(archival * 2 < quick, "{archival} B at level 10, {quick} B at level 9");
    }

    #[test]
    fn float_pages_under_zstd_take_the_byte_aligned_stream_where_it_is_smaller() {
        // 2,047 decimals repeated: bit-packed deltas repeat at no byte boundary, plain ones do.
        let (mut x, mut seed) = (0i64, 7u64);
        let values: Vec<f64> = (0..4096)
            .map(|j| {
                if j % 2047 == 0 {
                    (x, seed) = (0, 7);
                }
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                x += (seed >> 40) as i64 % 100_001 - 50_000;
                x as f64 / 1e9 - 69.5
            })
            .collect();
        let mut selected = Vec::new();
        select::write_floats(&values, None, &mut selected).unwrap();
        for level in [3, 19] {
            let best = zstd_stage::wrap_best_floats(&values, selected.clone(), level);
            assert!(best.len() * 10 < zstd_stage::wrap(selected.clone(), level).len() * 9, "level {level}");
            let lim = Limits::default();
            let back = super::super::decode_page(&best, 0, best.len(), values.len(), super::super::PageKind::Floats, &lim);
            assert_eq!(back.unwrap(), super::super::PageValues::Floats(values.clone()));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn groups_come_back(elements in prop::collection::vec(value(), 0..12), zstd in any::<bool>()) {
            let options = PackOptions { zstd_level: zstd.then_some(3), lossy_step: None, ..Default::default() };
            let (back, _) = round_trip(&elements, &options);
            prop_assert_eq!(back.iter().map(normal).collect::<Vec<_>>(), elements.iter().map(normal).collect::<Vec<_>>());
        }

        /// Cut anywhere or with a byte changed, a group is an error or some value, never a
        /// panic.
        #[test]
        fn damaged_groups_fail_cleanly(elements in prop::collection::vec(value(), 1..8), cut in any::<prop::sample::Index>(), flip in any::<(prop::sample::Index, u8)>()) {
            let s = shred(&elements).unwrap();
            let mut buf = Vec::new();
            write_group(&s, &PackOptions::default(), &mut buf).unwrap();
            let decode = |b: &[u8]| Group::open(b, 0..b.len()).and_then(|g| g.elements(&mut 1_000_000));
            let _ = decode(&buf[..cut.index(buf.len())]);
            let mut bad = buf.clone();
            let i = flip.0.index(bad.len());
            bad[i] ^= flip.1.max(1);
            let _ = decode(&bad);
        }
    }

    #[test]
    fn stripes_split_large_groups_and_elements_decode_alone() {
        // 10,000 records of 2 fields: stripes close at 4,096 values of a column.
        let elements: Vec<Value> = (0..10_000)
            .map(|i| {
                Value::Object(
                    [("id".to_string(), Value::Int(i)), ("v".to_string(), Value::F64(i as f64 * 0.5))]
                        .into_iter()
                        .collect(),
                )
            })
            .collect();
        let s = shred(&elements).unwrap();
        assert_eq!(s.stripes(), 3);
        let (back, size) = round_trip(&elements, &PackOptions::default());
        assert_eq!(back, elements);
        assert!(size < 200, "sequential ids and halves pack into {size} bytes");
    }

    /// 9,000 records naming their own token in three fields, in three stripes: with a
    /// zstd level the stripes are framed (§13.4: the tokens, unique per record, repeat
    /// only across columns), read back whole, by element and by column, and every cut or
    /// flipped byte of the group is an error, never a panic.
    #[test]
    fn framed_stripes_round_trip_and_damage_fails_cleanly() {
        let elements: Vec<Value> = (0..9_000u64)
            .map(|i| {
                let repo = format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                Value::Object(
                    [
                        ("repo".to_string(), Value::String(repo.clone())),
                        ("url".to_string(), Value::String(format!("https://api.example.com/repos/{repo}"))),
                        ("html".to_string(), Value::String(format!("https://example.com/{repo}/pull/{i}"))),
                        ("n".to_string(), Value::Int(i as i64)),
                    ]
                    .into_iter()
                    .collect(),
                )
            })
            .collect();
        let zstd = PackOptions { zstd_level: Some(3), lossy_step: None, ..Default::default() };
        let s = shred(&elements).unwrap();
        assert!(s.stripes() >= 3);
        let mut buf = Vec::new();
        write_group(&s, &zstd, &mut buf).unwrap();
        let mut staged = Vec::new();
        write_group(&s, &PackOptions::default(), &mut staged).unwrap();
        assert!(buf.len() * 2 < staged.len(), "framed {} B against {} B without zstd", buf.len(), staged.len());
        assert_eq!(buf[1], GROUP_STRIPE_FRAMES);
        let g = Group::open(&buf, 0..buf.len()).unwrap();
        assert_eq!(g.elements(&mut u64::MAX.clone()).unwrap(), elements);
        for i in [0, 4_095, 4_096, 8_999] {
            let g = Group::open(&buf, 0..buf.len()).unwrap();
            assert_eq!(g.element(i, &mut u64::MAX.clone()).unwrap(), elements[i]);
        }
        let sizes = g.column_sizes().unwrap();
        assert!(sizes.iter().any(|c| c.codecs.iter().any(|(name, _)| *name == "zstd stripe frames")), "{sizes:?}");
        let stored: u64 = sizes.iter().map(|c| c.bytes).sum();
        assert!(stored <= buf.len() as u64 && stored * 10 > buf.len() as u64 * 9, "{stored} of {} B", buf.len());
        let (urls, used) = g.select(&["url"], &mut u64::MAX.clone()).unwrap();
        assert_eq!(used, 1);
        let want: Vec<Value> = elements.iter().map(|e| below(e.clone(), &["url"])).collect();
        assert_eq!(urls, want);

        for cut in (0..buf.len()).step_by(397) {
            if let Ok(g) = Group::open(&buf, 0..cut) {
                assert!(g.elements(&mut u64::MAX.clone()).is_err(), "cut at {cut}");
            }
        }
        for at in (0..buf.len()).step_by(211) {
            let mut bad = buf.clone();
            bad[at] ^= 0x5A;
            if let Ok(g) = Group::open(&bad, 0..bad.len()) {
                let _ = g.elements(&mut u64::MAX.clone());
            }
        }
    }

    #[test]
    fn a_group_that_expands_past_the_budget_is_an_error() {
        let elements = vec![Value::Array(vec![Value::Null; 100_000])];
        let s = shred(&elements).unwrap();
        let mut buf = Vec::new();
        write_group(&s, &PackOptions::default(), &mut buf).unwrap();
        let g = Group::open(&buf, 0..buf.len()).unwrap();
        assert!(g.elements(&mut 1_000).is_err());
        assert_eq!(g.elements(&mut 1_000_000).unwrap(), elements);
    }

    /// The shared bench data's GraphQL orders: size against the design's estimate.
    #[test]
    fn graphql_orders_pack_small() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        let Ok(text) = std::fs::read(dir.join("graphql/decentraland_marketplace_orders.json")) else {
            return;
        };
        let doc = crate::json::parse(&text).unwrap();
        let Value::Object(m) = doc else { panic!() };
        let Value::Object(data) = &m["data"] else { panic!() };
        let Value::Array(orders) = &data["orders"] else { panic!() };
        let (back, size) = round_trip(orders, &PackOptions::default());
        assert_eq!(back.iter().map(normal).collect::<Vec<_>>(), orders.iter().map(normal).collect::<Vec<_>>());
        eprintln!("graphql orders group: {size} B");
        assert!(size < 26_000, "{size} B");
    }
}

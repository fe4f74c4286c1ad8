//! Table blocks (spec §15): a varint body length, padding to 8, then a head, one 56-byte
//! entry per column and the columns' buffers at positions fixed by [`place`]. Readers
//! ([`TableBlock::parse`], [`TableBlock::entry`]), the validator ([`check_table`]) and the
//! writer ([`write_body`]) all go through this module, so the placement rule is stated once.

use std::ops::Range;

use super::data::utf8;
use super::numbers::{put_varint, read_varint};
use super::{ElementType, HEADER_LEN};
use crate::error::{Category, Error, Result};

/// The head: rows (u64), columns (u32), reserved (u32).
pub const HEAD_LEN: usize = 16;
/// One column entry.
pub const ENTRY_LEN: usize = 56;

/// Column kinds (entry byte 0).
pub const KIND_NUMBERS: u8 = 0;
pub const KIND_STRINGS: u8 = 1;

/// What the counts of a numeric column mean (entry byte 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Unit {
    Plain = 0,
    /// Days since 1970-01-01, element i32.
    Date = 1,
    /// Date-times since 1970-01-01T00:00:00, element i64.
    Seconds = 2,
    Millis = 3,
    Micros = 4,
    Nanos = 5,
}

impl Unit {
    pub fn from_code(code: u8) -> Option<Unit> {
        Some(match code {
            0 => Unit::Plain,
            1 => Unit::Date,
            2 => Unit::Seconds,
            3 => Unit::Millis,
            4 => Unit::Micros,
            5 => Unit::Nanos,
            _ => return None,
        })
    }

    /// Whether the counts are date-times (units 2–5), which may carry a zone.
    pub fn is_datetime(self) -> bool {
        (self as u8) >= 2
    }

    /// The element type the unit requires, if any.
    pub fn element(self) -> Option<ElementType> {
        match self {
            Unit::Plain => None,
            Unit::Date => Some(ElementType::I32),
            _ => Some(ElementType::I64),
        }
    }

    /// Counts per second for date-times (1 for dates, whose counts are days).
    pub fn per_second(self) -> i64 {
        match self {
            Unit::Millis => 1_000,
            Unit::Micros => 1_000_000,
            Unit::Nanos => 1_000_000_000,
            _ => 1,
        }
    }
}

/// What placing a column needs to know (spec §15.1, "Placement").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnShape {
    pub kind: u8,
    /// The element code: §5.2 for numbers, 7 or 8 (u32 or u64 offsets) for strings.
    pub element: ElementType,
    pub validity: bool,
    pub unit: Unit,
    pub name_len: usize,
    pub zone_len: usize,
    /// Strings: the length of the string bytes (the last offset); 0 for numbers.
    pub bytes_len: usize,
}

/// Where a column's parts go, relative to the body start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColumnPlace {
    pub name_at: usize,
    pub zone_at: usize,
    pub data_at: usize,
    pub bytes_at: usize,
    pub validity_at: usize,
}

fn too_big() -> Error {
    Error::new(Category::LimitExceeded, "table larger than the address space")
}

fn add(a: usize, b: usize) -> Result<usize> {
    a.checked_add(b).ok_or_else(too_big)
}

fn mul(a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b).ok_or_else(too_big)
}

fn align_to(at: usize, to: usize) -> Result<usize> {
    Ok(add(at, to - 1)? & !(to - 1))
}

/// The placement rule: where every part of every column goes, and the body length.
pub fn place(rows: usize, columns: &[ColumnShape]) -> Result<(Vec<ColumnPlace>, usize)> {
    let mut at = add(HEAD_LEN, mul(columns.len(), ENTRY_LEN)?)?;
    let mut places = vec![ColumnPlace::default(); columns.len()];
    for (c, p) in columns.iter().zip(&mut places) {
        p.name_at = at;
        at = add(at, c.name_len)?;
        p.zone_at = if c.zone_len == 0 { 0 } else { at };
        at = add(at, c.zone_len)?;
    }
    for (c, p) in columns.iter().zip(&mut places) {
        let size = c.element.size();
        at = align_to(at, size)?;
        p.data_at = at;
        if c.kind == KIND_STRINGS {
            at = add(at, mul(add(rows, 1)?, size)?)?;
            p.bytes_at = at;
            at = add(at, c.bytes_len)?;
        } else {
            at = add(at, mul(rows, size)?)?;
        }
        if c.validity {
            p.validity_at = at;
            at = add(at, rows.div_ceil(8))?;
        }
    }
    Ok((places, at))
}

/// A table block's frame: where its body is and how big the table says it is. `parse`
/// proves the body lies in the buffer and that rows and columns are bounded by its length.
#[derive(Debug, Clone, Copy)]
pub struct TableBlock {
    /// The block's offset (its length varint).
    pub pos: usize,
    /// The body start `b`, a multiple of 8 in document offsets.
    pub body: usize,
    pub len: usize,
    pub rows: usize,
    pub columns: usize,
}

fn rd_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
}

fn rd_u64(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap())
}

impl TableBlock {
    /// The table block at `offset` of a document.
    pub fn parse(buf: &[u8], offset: u64) -> Result<TableBlock> {
        let pos = usize::try_from(offset)
            .ok()
            .filter(|&p| p >= HEADER_LEN && p < buf.len())
            .ok_or_else(|| Error::malformed(offset, "table block offset outside the document"))?;
        let (len, at) = read_varint(buf, pos)?;
        let body = (at + 7) & !7;
        let len =
            usize::try_from(len).ok().filter(|&l| body <= buf.len() && l <= buf.len() - body).ok_or_else(|| {
                Error::malformed(offset, format!("table body of {len} bytes runs past the end of the document"))
            })?;
        Self::over_body(buf, pos, body, len)
    }

    /// A body held on its own (an owned table): the body starts at 0.
    pub fn parse_body(body: &[u8]) -> Result<TableBlock> {
        Self::over_body(body, 0, 0, body.len())
    }

    fn over_body(buf: &[u8], pos: usize, body: usize, len: usize) -> Result<TableBlock> {
        if len < HEAD_LEN {
            return Err(Error::malformed(body as u64, "table body shorter than its head"));
        }
        let rows = rd_u64(buf, body);
        let columns = rd_u32(buf, body + 8) as usize;
        // A column costs at least an entry; a row at least one bit of some column (with no
        // columns, rows are bounded by the body length all the same).
        if columns > (len - HEAD_LEN) / ENTRY_LEN || rows > (len as u64).saturating_mul(8) || rows >= 1 << 63 {
            return Err(Error::malformed(
                body as u64,
                format!("table of {rows} rows and {columns} columns does not fit its {len}-byte body"),
            ));
        }
        Ok(TableBlock { pos, body, len, rows: rows as usize, columns })
    }

    /// The end of the block.
    pub fn end(&self) -> usize {
        self.body + self.len
    }

    /// Column `i`'s entry, its buffers checked to lie inside the body.
    pub fn entry(&self, buf: &[u8], i: usize) -> Result<Entry> {
        let at = self.body + HEAD_LEN + i * ENTRY_LEN;
        let bad = |what: String| Error::malformed(at as u64, what);
        let kind = buf[at];
        let element =
            ElementType::from_code(buf[at + 1]).ok_or_else(|| bad(format!("unknown element type {}", buf[at + 1])))?;
        let flags = buf[at + 2];
        let unit = Unit::from_code(buf[at + 3]).ok_or_else(|| bad(format!("unknown unit {}", buf[at + 3])))?;
        match kind {
            KIND_NUMBERS => {
                if unit.element().is_some_and(|e| e != element) {
                    return Err(bad(format!(
                        "unit {} needs element {:?}, not {element:?}",
                        unit as u8,
                        unit.element().unwrap()
                    )));
                }
            }
            KIND_STRINGS if matches!(element, ElementType::U32 | ElementType::U64) && unit == Unit::Plain => {}
            KIND_STRINGS => return Err(bad("a string column's offsets are u32 or u64, without a unit".into())),
            _ => return Err(bad(format!("unknown column kind {kind}"))),
        }
        if flags & !1 != 0 {
            return Err(bad(format!("unknown column flags {flags:#x}")));
        }
        let range = |rel: u64, len: usize| -> Result<Range<usize>> {
            usize::try_from(rel)
                .ok()
                .filter(|&r| r <= self.len && len <= self.len - r)
                .map(|r| self.body + r..self.body + r + len)
                .ok_or_else(|| Error::malformed(at as u64, "a column buffer lies outside the table body"))
        };
        let name = range(rd_u64(buf, at + 8), rd_u32(buf, at + 4) as usize)?;
        let zone = range(rd_u64(buf, at + 40), rd_u32(buf, at + 48) as usize)?;
        let size = element.size();
        let count = if kind == KIND_STRINGS { self.rows + 1 } else { self.rows };
        // rows ≤ 8 × len, so count × size cannot overflow.
        let data = range(rd_u64(buf, at + 16), count * size)?;
        if (data.start - self.body) % size != 0 {
            return Err(bad("column data not aligned to its element size".into()));
        }
        let bytes = if kind == KIND_STRINGS {
            let last = if size == 4 { rd_u32(buf, data.end - 4) as u64 } else { rd_u64(buf, data.end - 8) };
            range(rd_u64(buf, at + 24), usize::try_from(last).unwrap_or(usize::MAX))?
        } else {
            data.end..data.end
        };
        let validity = if flags & 1 != 0 { Some(range(rd_u64(buf, at + 32), self.rows.div_ceil(8))?) } else { None };
        Ok(Entry { at, kind, element, unit, name, zone, data, bytes, validity })
    }

    /// The index of the column named `name`.
    pub fn find(&self, buf: &[u8], name: &[u8]) -> Result<Option<usize>> {
        for i in 0..self.columns {
            let at = self.body + HEAD_LEN + i * ENTRY_LEN;
            if rd_u32(buf, at + 4) as usize == name.len() && self.entry(buf, i)?.name_bytes(buf) == name {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
}

/// A column entry as read: absolute byte ranges of its parts.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Where the entry is (for error positions).
    pub at: usize,
    pub kind: u8,
    pub element: ElementType,
    pub unit: Unit,
    pub name: Range<usize>,
    pub zone: Range<usize>,
    /// Numbers: the R elements; strings: the R + 1 offsets.
    pub data: Range<usize>,
    /// Strings: the string bytes; empty for numbers.
    pub bytes: Range<usize>,
    pub validity: Option<Range<usize>>,
}

impl Entry {
    pub fn name_bytes<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        &buf[self.name.clone()]
    }

    pub fn name<'b>(&self, buf: &'b [u8]) -> Result<&'b str> {
        utf8(self.name_bytes(buf))
            .ok_or_else(|| Error::malformed(self.name.start as u64, "column name is not valid UTF-8"))
    }

    pub fn zone<'b>(&self, buf: &'b [u8]) -> Result<&'b str> {
        utf8(&buf[self.zone.clone()])
            .ok_or_else(|| Error::malformed(self.zone.start as u64, "time zone is not valid UTF-8"))
    }

    /// Whether row `i` (< rows) holds a value.
    #[inline]
    pub fn is_valid(&self, buf: &[u8], i: usize) -> bool {
        match &self.validity {
            Some(v) => buf[v.start + i / 8] >> (i % 8) & 1 == 1,
            None => true,
        }
    }

    /// String offset `i` (≤ rows) of a string column.
    #[inline]
    pub fn offset(&self, buf: &[u8], i: usize) -> u64 {
        if self.element == ElementType::U32 {
            rd_u32(buf, self.data.start + 4 * i) as u64
        } else {
            rd_u64(buf, self.data.start + 8 * i)
        }
    }

    /// The bytes of string cell `i` (< rows), checked to lie in the string bytes.
    pub fn string_bytes<'b>(&self, buf: &'b [u8], i: usize) -> Result<&'b [u8]> {
        let (a, b) = (self.offset(buf, i), self.offset(buf, i + 1));
        let n = (self.bytes.end - self.bytes.start) as u64;
        if a > b || b > n {
            return Err(Error::malformed(
                (self.data.start + i * self.element.size()) as u64,
                "string offsets decrease or run past the column's bytes",
            ));
        }
        Ok(&buf[self.bytes.start + a as usize..self.bytes.start + b as usize])
    }

    /// The shape this entry has, for comparing with the placement rule.
    fn shape(&self) -> ColumnShape {
        ColumnShape {
            kind: self.kind,
            element: self.element,
            validity: self.validity.is_some(),
            unit: self.unit,
            name_len: self.name.len(),
            zone_len: self.zone.len(),
            bytes_len: self.bytes.len(),
        }
    }
}

/// Checks every rule of spec §15.1 for the table block at `offset`; returns its end.
pub fn check_table(buf: &[u8], offset: u64) -> Result<usize> {
    check_block(buf, TableBlock::parse(buf, offset)?)
}

/// Checks every rule of spec §15.1 for a body held on its own (an owned table's).
pub fn check_body(body: &[u8]) -> Result<()> {
    check_block(body, TableBlock::parse_body(body)?).map(|_| ())
}

fn check_block(buf: &[u8], t: TableBlock) -> Result<usize> {
    let entries = check_parsed_layout(buf, &t)?;
    for (i, e) in entries.iter().enumerate() {
        check_column(buf, t.rows, i, e)?;
    }
    Ok(t.end())
}

/// Checks column `i`'s cells (spec §15.1): string offsets and UTF-8, missing cells empty
/// or zero, bools 0 or 1, validity bits past the last row clear. O(rows): a reader that
/// hands one column to Arrow checks that column, not the whole table.
pub fn check_column(buf: &[u8], rows: usize, i: usize, e: &Entry) -> Result<()> {
    check_cells(buf, rows, e).map_err(|m| Error::malformed(e.at as u64, format!("column {i}: {m}")))
}

/// Checks every rule of spec §15.1 that is not about cells: the head, the entries, the
/// placement of every buffer, names, zones and padding. O(columns), whatever the rows;
/// returns the block and its entries.
pub fn check_layout(buf: &[u8], offset: u64) -> Result<(TableBlock, Vec<Entry>)> {
    let t = TableBlock::parse(buf, offset)?;
    let entries = check_parsed_layout(buf, &t)?;
    Ok((t, entries))
}

fn check_parsed_layout(buf: &[u8], t: &TableBlock) -> Result<Vec<Entry>> {
    // The padding before the body (none for a body held on its own).
    if buf[t.pos..t.body].iter().skip(varint_end(buf, t.pos) - t.pos).any(|&b| b != 0) || rd_u32(buf, t.body + 12) != 0
    {
        return Err(Error::malformed(t.pos as u64, "table padding or reserved field is not zero"));
    }
    let entries: Vec<Entry> = (0..t.columns).map(|i| t.entry(buf, i)).collect::<Result<_>>()?;
    let shapes: Vec<ColumnShape> = entries.iter().map(Entry::shape).collect();
    let (places, end) = place(t.rows, &shapes)?;
    if end != t.len {
        return Err(Error::malformed(
            t.body as u64,
            format!("table body is {} bytes; its columns end at {end}", t.len),
        ));
    }
    let mut names = std::collections::HashSet::new();
    let mut used: Vec<Range<usize>> = Vec::with_capacity(4 * entries.len());
    for (i, (e, p)) in entries.iter().zip(&places).enumerate() {
        let rel = |r: &Range<usize>| r.start - t.body;
        let bad = |what: &str| Error::malformed(e.at as u64, format!("column {i}: {what}"));
        if rd_u32(buf, e.at + 52) != 0
            || (e.zone.is_empty() && rd_u64(buf, e.at + 40) != 0)
            || (e.kind == KIND_NUMBERS && rd_u64(buf, e.at + 24) != 0)
            || (e.validity.is_none() && rd_u64(buf, e.at + 32) != 0)
        {
            return Err(bad("reserved or unused field is not zero"));
        }
        let placed = rel(&e.name) == p.name_at
            && (e.zone.is_empty() || rel(&e.zone) == p.zone_at)
            && rel(&e.data) == p.data_at
            && (e.kind == KIND_NUMBERS || rel(&e.bytes) == p.bytes_at)
            && e.validity.as_ref().is_none_or(|v| rel(v) == p.validity_at);
        if !placed {
            return Err(bad("a buffer is not where the placement rule puts it"));
        }
        used.extend(
            [&e.name, &e.zone, &e.data, &e.bytes]
                .into_iter()
                .chain(e.validity.as_ref())
                .map(|r| r.start - t.body..r.end - t.body),
        );
        if !names.insert(e.name(buf)?) {
            return Err(bad("duplicate column name"));
        }
        e.zone(buf)?;
        if !e.zone.is_empty() && !e.unit.is_datetime() {
            return Err(bad("a time zone on a column that is not of date-times"));
        }
    }
    // Padding between buffers is zero: walk the gaps between the used ranges.
    used.sort_unstable_by_key(|r| r.start);
    let mut at = HEAD_LEN + t.columns * ENTRY_LEN;
    for r in used.iter().chain(std::iter::once(&(t.len..t.len))) {
        if let Some(i) = (at..r.start.max(at)).find(|&i| buf[t.body + i] != 0) {
            return Err(Error::malformed((t.body + i) as u64, "table padding is not zero"));
        }
        at = at.max(r.end);
    }
    Ok(entries)
}

fn varint_end(buf: &[u8], pos: usize) -> usize {
    read_varint(buf, pos).map_or(pos, |(_, at)| at)
}

fn check_cells(buf: &[u8], rows: usize, e: &Entry) -> std::result::Result<(), String> {
    if let Some(v) = &e.validity {
        if rows % 8 != 0 && buf[v.end - 1] >> (rows % 8) != 0 {
            return Err("validity bits past the last row are set".into());
        }
    }
    if e.kind == KIND_STRINGS {
        if e.offset(buf, 0) != 0 {
            return Err("string offsets do not start at 0".into());
        }
        for i in 0..rows {
            let s = e.string_bytes(buf, i).map_err(|err| err.message().to_string())?;
            if !e.is_valid(buf, i) && !s.is_empty() {
                return Err(format!("missing row {i} holds a string"));
            }
            if utf8(s).is_none() {
                return Err(format!("string in row {i} is not valid UTF-8"));
            }
        }
        return Ok(());
    }
    let size = e.element.size();
    for i in 0..rows {
        let cell = &buf[e.data.start + i * size..e.data.start + (i + 1) * size];
        if !e.is_valid(buf, i) && cell.iter().any(|&b| b != 0) {
            return Err(format!("missing row {i} holds a non-zero number"));
        }
        if e.element == ElementType::Bool && cell[0] > 1 {
            return Err(format!("bool in row {i} is {}", cell[0]));
        }
    }
    Ok(())
}

/// A column as the writer takes it: its shape and its buffers' bytes, little-endian.
pub struct ColumnWrite<'c> {
    pub shape: ColumnShape,
    pub name: &'c [u8],
    pub zone: &'c [u8],
    /// Numbers: R elements; strings: R + 1 offsets of the shape's width.
    pub data: &'c [u8],
    pub bytes: &'c [u8],
    pub validity: Option<&'c [u8]>,
}

/// Writes a table body (spec §15.1) into words, so that it is 8-aligned in memory too.
pub fn write_body(rows: usize, columns: &[ColumnWrite<'_>]) -> Result<(Vec<u64>, usize)> {
    let shapes: Vec<ColumnShape> = columns.iter().map(|c| c.shape).collect();
    let (places, len) = place(rows, &shapes)?;
    let columns_u32 = u32::try_from(columns.len())
        .map_err(|_| Error::new(Category::LimitExceeded, "a table has fewer than 2^32 columns"))?;
    let mut words = vec![0u64; len.div_ceil(8)];
    let out: &mut [u8] = &mut bytemuck::cast_slice_mut(&mut words)[..len];
    out[0..8].copy_from_slice(&(rows as u64).to_le_bytes());
    out[8..12].copy_from_slice(&columns_u32.to_le_bytes());
    for (i, (c, p)) in columns.iter().zip(&places).enumerate() {
        let e = HEAD_LEN + i * ENTRY_LEN;
        out[e] = c.shape.kind;
        out[e + 1] = c.shape.element as u8;
        out[e + 2] = c.validity.is_some() as u8;
        out[e + 3] = c.shape.unit as u8;
        out[e + 4..e + 8].copy_from_slice(&(c.name.len() as u32).to_le_bytes());
        out[e + 8..e + 16].copy_from_slice(&(p.name_at as u64).to_le_bytes());
        out[e + 16..e + 24].copy_from_slice(&(p.data_at as u64).to_le_bytes());
        out[e + 24..e + 32].copy_from_slice(&(p.bytes_at as u64).to_le_bytes());
        out[e + 32..e + 40].copy_from_slice(&(p.validity_at as u64).to_le_bytes());
        out[e + 40..e + 48].copy_from_slice(&(p.zone_at as u64).to_le_bytes());
        out[e + 48..e + 52].copy_from_slice(&(c.zone.len() as u32).to_le_bytes());
        out[p.name_at..p.name_at + c.name.len()].copy_from_slice(c.name);
        out[p.zone_at..p.zone_at + c.zone.len()].copy_from_slice(c.zone);
        out[p.data_at..p.data_at + c.data.len()].copy_from_slice(c.data);
        out[p.bytes_at..p.bytes_at + c.bytes.len()].copy_from_slice(c.bytes);
        if let Some(v) = c.validity {
            out[p.validity_at..p.validity_at + v.len()].copy_from_slice(v);
        }
    }
    Ok((words, len))
}

/// The bytes before a body of `len` bytes placed at document offset `at`: its length
/// varint and the padding to the next multiple of 8. Returns how many were written.
pub fn write_prefix(out: &mut [u8; 17], at: usize, len: usize) -> usize {
    let n = put_varint(out, len as u64);
    let body = (at + n + 7) & !7;
    let total = body - at;
    out[n..total].iter_mut().for_each(|b| *b = 0);
    total
}

/// The length of a table block of a `len`-byte body placed at `at`.
pub fn block_len(at: usize, len: usize) -> usize {
    let n = super::numbers::varint_len(len as u64);
    ((at + n + 7) & !7) - at + len
}

//! Tables (spec §15): named columns of one length, stored the way Arrow stores a record
//! batch. [`TableBuilder`] makes a [`Table`] (an owned, validated table block body, which a
//! `Value::Table` holds and the encoders copy as is); [`TableRef`] reads one in place,
//! in a document or in a `Table`, and [`ColumnRef`] hands out its buffers without copying.

use std::fmt;

use crate::error::{Category, Error, Result};
pub use crate::format::table::Unit;
use crate::format::table::{self as layout, ColumnShape, ColumnWrite, Entry, TableBlock, KIND_NUMBERS, KIND_STRINGS};
use crate::format::ElementType;
use crate::read::Element;
use crate::value::Value;

/// An owned table: the body of a table block, 8-aligned in memory so that its columns
/// can be borrowed as slices. Made by [`TableBuilder`], or by decoding a document.
#[derive(Clone)]
pub struct Table {
    words: Vec<u64>,
    len: usize,
}

impl Table {
    /// A table from a body's bytes, checked against every rule of spec §15.1.
    pub fn from_body(body: &[u8]) -> Result<Table> {
        let mut words = vec![0u64; body.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..body.len()].copy_from_slice(body);
        let table = Table { words, len: body.len() };
        table.check()?;
        Ok(table)
    }

    fn check(&self) -> Result<()> {
        layout::check_body(self.body())
    }

    /// The body's bytes (spec §15.1), positions counting from its first byte.
    pub fn body(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.len]
    }

    /// A borrowed view.
    pub fn view(&self) -> TableRef<'_> {
        let buf = self.body();
        let block = TableBlock::parse_body(buf).expect("an owned table was checked when made");
        TableRef { buf, block }
    }

    pub fn rows(&self) -> usize {
        self.view().rows()
    }

    pub fn column_count(&self) -> usize {
        self.view().column_count()
    }
}

impl PartialEq for Table {
    fn eq(&self, other: &Table) -> bool {
        // Placement is fixed (spec §15.1), so equal tables have equal bodies.
        self.body() == other.body()
    }
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.view();
        let names: Vec<&str> =
            (0..v.column_count()).filter_map(|i| v.column(i).ok().and_then(|c| c.name().ok())).collect();
        f.debug_struct("Table").field("rows", &v.rows()).field("columns", &names).finish()
    }
}

/// A table read in place.
#[derive(Debug, Clone, Copy)]
pub struct TableRef<'a> {
    buf: &'a [u8],
    block: TableBlock,
}

impl<'a> TableRef<'a> {
    pub(crate) fn in_document(buf: &'a [u8], offset: u64) -> Result<TableRef<'a>> {
        Ok(TableRef { buf, block: TableBlock::parse(buf, offset)? })
    }

    pub fn rows(&self) -> usize {
        self.block.rows
    }

    pub fn column_count(&self) -> usize {
        self.block.columns
    }

    /// The body's bytes.
    pub fn body(&self) -> &'a [u8] {
        &self.buf[self.block.body..self.block.end()]
    }

    /// Column `i`.
    pub fn column(&self, i: usize) -> Result<ColumnRef<'a>> {
        if i >= self.block.columns {
            return Err(Error::not_found(format!("no column {i} in a table of {}", self.block.columns)));
        }
        Ok(ColumnRef { buf: self.buf, rows: self.block.rows, index: i, entry: self.block.entry(self.buf, i)? })
    }

    /// The column named `name`.
    pub fn get(&self, name: &str) -> Result<ColumnRef<'a>> {
        match self.block.find(self.buf, name.as_bytes())? {
            Some(i) => self.column(i),
            None => Err(Error::not_found(format!("no column {name:?} in the table")).at(self.block.pos as u64)),
        }
    }

    /// The columns, in order.
    pub fn columns(&self) -> impl Iterator<Item = Result<ColumnRef<'a>>> + '_ {
        (0..self.block.columns).map(|i| self.column(i))
    }

    /// The table as a value (spec §15.2): an object from column name to an array of its
    /// cells. Copies every cell; read columns in place where that matters.
    pub fn to_value(&self) -> Result<Value> {
        let mut map = crate::value::Map::default();
        for c in self.columns() {
            let c = c?;
            map.insert(c.name()?.to_owned(), c.to_value()?);
        }
        Ok(Value::Object(map))
    }

    /// An owned copy (the body, copied once).
    pub fn to_table(&self) -> Result<Table> {
        Table::from_body(self.body())
    }
}

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// Fixed-width numbers of this element type (bools as bytes 0/1).
    Numbers(ElementType),
    /// UTF-8 strings with offsets of 32 (`large` false) or 64 bits.
    Strings { large: bool },
}

/// One column of a table, read in place.
#[derive(Debug, Clone)]
pub struct ColumnRef<'a> {
    buf: &'a [u8],
    rows: usize,
    /// Its place in the table.
    index: usize,
    entry: Entry,
}

impl<'a> ColumnRef<'a> {
    pub fn name(&self) -> Result<&'a str> {
        self.entry.name(self.buf)
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    pub fn column_type(&self) -> ColumnType {
        match self.entry.kind {
            KIND_STRINGS => ColumnType::Strings { large: self.entry.element == ElementType::U64 },
            _ => ColumnType::Numbers(self.entry.element),
        }
    }

    pub fn unit(&self) -> Unit {
        self.entry.unit
    }

    /// The time zone of a date-time column; empty when naive.
    pub fn zone(&self) -> Result<&'a str> {
        self.entry.zone(self.buf)
    }

    /// The validity bitmap (bit i set when row i holds a value), if the column has one.
    pub fn validity(&self) -> Option<&'a [u8]> {
        self.entry.validity.clone().map(|r| &self.buf[r])
    }

    /// Whether row `i` holds a value.
    pub fn is_valid(&self, i: usize) -> bool {
        i < self.rows && self.entry.is_valid(self.buf, i)
    }

    /// How many rows are missing.
    pub fn null_count(&self) -> usize {
        self.validity().map_or(0, |v| self.rows - v.iter().map(|b| b.count_ones() as usize).sum::<usize>())
    }

    /// A numeric column's data bytes, or a string column's offsets.
    pub fn data(&self) -> &'a [u8] {
        &self.buf[self.entry.data.clone()]
    }

    /// A string column's bytes (the cells, back to back).
    pub fn string_data(&self) -> &'a [u8] {
        &self.buf[self.entry.bytes.clone()]
    }

    /// Where the data starts in the underlying buffer (for zero-copy hand-off checks).
    pub fn data_range(&self) -> std::ops::Range<usize> {
        self.entry.data.clone()
    }

    /// A numeric column's values as a slice (missing rows read as 0), without copying.
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        if self.entry.kind != KIND_NUMBERS || T::TYPE != self.entry.element {
            return Err(Error::new(
                Category::WrongType,
                format!("column holds {:?}, not {}", self.column_type(), T::TYPE.name()),
            ));
        }
        bytemuck::try_cast_slice(self.data())
            .map_err(|_| Error::new(Category::Misaligned, "column data is not aligned in memory for this type"))
    }

    /// String cell `i`; `None` when missing.
    pub fn str(&self, i: usize) -> Result<Option<&'a str>> {
        if self.entry.kind != KIND_STRINGS {
            return Err(Error::new(Category::WrongType, "not a string column"));
        }
        self.check_row(i)?;
        if !self.entry.is_valid(self.buf, i) {
            return Ok(None);
        }
        let bytes = self.entry.string_bytes(self.buf, i)?;
        crate::format::data::utf8(bytes).map(Some).ok_or_else(|| {
            Error::malformed(self.entry.bytes.start as u64, format!("string in row {i} is not valid UTF-8"))
        })
    }

    fn check_row(&self, i: usize) -> Result<()> {
        if i >= self.rows {
            return Err(Error::not_found(format!("row {i} is past the table's {} rows", self.rows)));
        }
        Ok(())
    }

    /// Checks this column's cells against spec §15.1 (string offsets and UTF-8, bools 0
    /// or 1, missing cells empty or zero): O(rows), for a reader about to hand the column
    /// to code that trusts it (Arrow, numpy bools) without validating the whole table.
    pub fn check(&self) -> Result<()> {
        crate::format::table::check_column(self.buf, self.rows, self.index, &self.entry)
    }

    /// The column as a value (spec §15.2): an array of its cells.
    pub fn to_value(&self) -> Result<Value> {
        (0..self.len()).map(|i| self.cell(i)).collect::<Result<Vec<Value>>>().map(Value::Array)
    }

    /// Cell `i` as a value: `Null` when missing, a number of the element type (dates and
    /// date-times as their counts), or a string.
    pub fn cell(&self, i: usize) -> Result<Value> {
        self.check_row(i)?;
        if !self.entry.is_valid(self.buf, i) {
            return Ok(Value::Null);
        }
        if self.entry.kind == KIND_STRINGS {
            return Ok(Value::String(self.str(i)?.unwrap_or_default().to_owned()));
        }
        let size = self.entry.element.size();
        let at = self.entry.data.start + i * size;
        Ok(crate::read::typed::element_value(self.entry.element, &self.buf[at..at + size]))
    }
}

/// A column being filled, row by row or from a whole vector.
#[derive(Debug, Clone)]
pub struct ColumnBuilder {
    name: String,
    data: ColumnData,
    /// One flag per row: whether it holds a value; `None` while every row does.
    valid: Option<Vec<bool>>,
    rows: usize,
    unit: Unit,
    zone: String,
}

#[derive(Debug, Clone)]
enum ColumnData {
    Numbers(ElementType, Vec<u8>),
    Strings { offsets: Vec<u64>, bytes: Vec<u8> },
}

impl ColumnBuilder {
    /// An empty numeric column of `element`.
    pub fn numbers(name: impl Into<String>, element: ElementType) -> ColumnBuilder {
        ColumnBuilder {
            name: name.into(),
            data: ColumnData::Numbers(element, Vec::new()),
            valid: None,
            rows: 0,
            unit: Unit::Plain,
            zone: String::new(),
        }
    }

    /// An empty string column.
    pub fn strings(name: impl Into<String>) -> ColumnBuilder {
        ColumnBuilder {
            name: name.into(),
            data: ColumnData::Strings { offsets: vec![0], bytes: Vec::new() },
            valid: None,
            rows: 0,
            unit: Unit::Plain,
            zone: String::new(),
        }
    }

    /// A numeric column from a vector, every row present.
    pub fn from_slice<T: Element>(name: impl Into<String>, values: &[T]) -> ColumnBuilder {
        let mut c = ColumnBuilder::numbers(name, T::TYPE);
        if let ColumnData::Numbers(_, data) = &mut c.data {
            data.extend_from_slice(bytemuck::cast_slice(values));
        }
        c.rows = values.len();
        c
    }

    /// Dates (days since 1970-01-01, i32) or date-times (i64 counts of `unit`) with a zone
    /// (empty for naive values). The column must have the unit's element type.
    pub fn with_unit(mut self, unit: Unit, zone: impl Into<String>) -> Result<ColumnBuilder> {
        let element = match &self.data {
            ColumnData::Numbers(e, _) => Some(*e),
            ColumnData::Strings { .. } => None,
        };
        let zone = zone.into();
        if unit != Unit::Plain && unit.element() != element {
            return Err(Error::new(
                Category::WrongType,
                format!("unit {unit:?} needs a column of {:?}", unit.element().unwrap()),
            ));
        }
        if !zone.is_empty() && !unit.is_datetime() {
            return Err(Error::new(Category::WrongType, "only date-time columns have a time zone"));
        }
        self.unit = unit;
        self.zone = zone;
        Ok(self)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    fn mark(&mut self, valid: bool) {
        if !valid && self.valid.is_none() {
            self.valid = Some(vec![true; self.rows]);
        }
        if let Some(flags) = &mut self.valid {
            flags.push(valid);
        }
        self.rows += 1;
    }

    /// Appends a number's little-endian bytes (the column's element size).
    pub fn push_number_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.data {
            ColumnData::Numbers(e, data) if e.size() == bytes.len() => data.extend_from_slice(bytes),
            _ => return Err(Error::new(Category::WrongType, "a number of another width, or a string column")),
        }
        self.mark(true);
        Ok(())
    }

    /// Appends a number.
    pub fn push<T: Element>(&mut self, value: T) -> Result<()> {
        match &self.data {
            ColumnData::Numbers(e, _) if *e == T::TYPE => {}
            _ => {
                return Err(Error::new(
                    Category::WrongType,
                    format!("column {:?} does not hold {}", self.name, T::TYPE.name()),
                ))
            }
        }
        self.push_number_bytes(bytemuck::bytes_of(&value))
    }

    /// Appends a string.
    pub fn push_str(&mut self, value: &str) -> Result<()> {
        match &mut self.data {
            ColumnData::Strings { offsets, bytes } => {
                bytes.extend_from_slice(value.as_bytes());
                offsets.push(bytes.len() as u64);
            }
            _ => return Err(Error::new(Category::WrongType, format!("column {:?} does not hold strings", self.name))),
        }
        self.mark(true);
        Ok(())
    }

    /// Appends a missing cell (zero, or the empty string).
    pub fn push_null(&mut self) {
        match &mut self.data {
            ColumnData::Numbers(e, data) => data.resize(data.len() + e.size(), 0),
            ColumnData::Strings { offsets, bytes } => offsets.push(bytes.len() as u64),
        }
        self.mark(false);
    }

    /// The element type (numbers) or `None` (strings).
    pub fn element(&self) -> Option<ElementType> {
        match &self.data {
            ColumnData::Numbers(e, _) => Some(*e),
            ColumnData::Strings { .. } => None,
        }
    }
}

/// Collects columns of equal length into a [`Table`].
#[derive(Debug, Clone, Default)]
pub struct TableBuilder {
    columns: Vec<ColumnBuilder>,
}

impl TableBuilder {
    pub fn new() -> TableBuilder {
        TableBuilder::default()
    }

    pub fn push_column(&mut self, column: ColumnBuilder) -> &mut TableBuilder {
        self.columns.push(column);
        self
    }

    /// The table, in canonical form (spec §15.1); fails on columns of different lengths
    /// or duplicate names.
    pub fn finish(self) -> Result<Table> {
        let rows = self.columns.first().map_or(0, |c| c.rows);
        let mut seen = std::collections::HashSet::new();
        for c in &self.columns {
            if c.rows != rows {
                return Err(Error::new(
                    Category::Custom,
                    format!("column {:?} has {} rows, column {:?} {rows}", c.name, c.rows, self.columns[0].name),
                ));
            }
            if !seen.insert(c.name.as_str()) {
                return Err(Error::new(Category::DuplicateKey, format!("two columns named {:?}", c.name)));
            }
        }
        struct Parts<'c> {
            shape: ColumnShape,
            /// Numbers as they are; string offsets narrowed to u32 when they fit.
            data: std::borrow::Cow<'c, [u8]>,
            validity: Option<Vec<u8>>,
        }
        let parts: Vec<Parts> = self
            .columns
            .iter()
            .map(|c| {
                let validity = c.valid.as_ref().filter(|flags| flags.iter().any(|v| !v)).map(|flags| {
                    let mut bits = vec![0u8; rows.div_ceil(8)];
                    for (i, _) in flags.iter().enumerate().filter(|(_, v)| **v) {
                        bits[i / 8] |= 1 << (i % 8);
                    }
                    bits
                });
                let (kind, element, data, bytes_len) = match &c.data {
                    ColumnData::Numbers(e, data) => (KIND_NUMBERS, *e, std::borrow::Cow::Borrowed(data.as_slice()), 0),
                    ColumnData::Strings { offsets, bytes } if bytes.len() < 1 << 32 => (
                        KIND_STRINGS,
                        ElementType::U32,
                        offsets.iter().flat_map(|&o| (o as u32).to_le_bytes()).collect::<Vec<u8>>().into(),
                        bytes.len(),
                    ),
                    ColumnData::Strings { offsets, bytes } => {
                        (KIND_STRINGS, ElementType::U64, bytemuck::cast_slice(offsets).into(), bytes.len())
                    }
                };
                let shape = ColumnShape {
                    kind,
                    element,
                    validity: validity.is_some(),
                    unit: c.unit,
                    name_len: c.name.len(),
                    zone_len: c.zone.len(),
                    bytes_len,
                };
                Parts { shape, data, validity }
            })
            .collect();
        let writes: Vec<ColumnWrite<'_>> = parts
            .iter()
            .zip(&self.columns)
            .map(|(p, c)| ColumnWrite {
                shape: p.shape,
                name: c.name.as_bytes(),
                zone: c.zone.as_bytes(),
                data: &p.data,
                bytes: match &c.data {
                    ColumnData::Strings { bytes, .. } => bytes,
                    ColumnData::Numbers(..) => &[],
                },
                validity: p.validity.as_deref(),
            })
            .collect();
        let (words, len) = layout::write_body(rows, &writes)?;
        Ok(Table { words, len })
    }
}

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian (H. Hinnant's
/// `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + (month <= 2) as i64, month, day)
}

/// (year, month, day) as days since 1970-01-01; `None` for a day the month lacks.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i64> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let last = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day == 0 || day > last[month as usize - 1] {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = month as i64;
    let doy = (153 * if m > 2 { m - 3 } else { m + 9 } + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The text of a date or date-time cell (spec §15.2): `YYYY-MM-DD`, or
/// `YYYY-MM-DDTHH:MM:SS[.f…]` with `Z` for a zoned column; the fraction has the unit's
/// digits (3, 6 or 9) when it is not zero.
pub fn write_time_text(out: &mut Vec<u8>, count: i64, unit: Unit, zoned: bool) {
    use std::io::Write;
    if unit == Unit::Date {
        let (y, m, d) = civil_from_days(count);
        let _ = write!(out, "{y:04}-{m:02}-{d:02}");
        return;
    }
    let per = unit.per_second();
    let (secs, frac) = (count.div_euclid(per), count.rem_euclid(per));
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let _ = write!(out, "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", sod / 3600, sod / 60 % 60, sod % 60);
    if frac != 0 {
        let digits = per.ilog10() as usize;
        let _ = write!(out, ".{frac:0digits$}");
    }
    if zoned {
        out.push(b'Z');
    }
}

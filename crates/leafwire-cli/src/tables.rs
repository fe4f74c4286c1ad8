//! `from-csv`, `pack` and `unpack`: CSV files and Frictionless Data Packages to and from
//! documents holding tables (spec §15.4).
//!
//! CSV is read record by record (the `csv` crate) into per-column buffers: memory holds the
//! output's columns, never a tree of the CSV. Every error names the file, the line of the
//! CSV record (1-based, counting the header as line 1), and for a cell its column (1-based
//! index and name). Output files are written to a temporary renamed on success.
//!
//! Without a schema, `from-csv` infers each column's type from all its non-empty cells
//! (empty cells are missing), by the first rule that every cell satisfies:
//!
//! 1. integer: an optional sign and decimal digits, within i64 → `integer`, stored in the
//!    narrowest of i8, i16, i32, i64 that holds every value;
//! 2. number: an optional sign, digits with an optional decimal point (at least one digit),
//!    an optional exponent (`1.5`, `-.5`, `2e-3`); no `inf`, `nan` or hexadecimal → `number`
//!    (f64);
//! 3. `true` / `false`, in any case → `boolean`;
//! 4. `YYYY-MM-DD` (a day that exists) → `date` (days since 1970-01-01);
//! 5. `YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|±HH:MM]` → `datetime`, in seconds, or in
//!    milliseconds, microseconds or nanoseconds when some fraction has up to 3, 6 or 9
//!    digits; zone `UTC` when the values carry `Z` or an offset (converted to UTC
//!    instants), naive when none does; a column mixing the two is strings. A naive column
//!    written `YYYY-MM-DD HH:MM:SS` throughout gets the format `%Y-%m-%d %H:%M:%S`, so that
//!    `unpack` writes it back as it was;
//! 6. anything else, and a column with no value at all → `string`.
//!
//! With a Table Schema (`--schema`, or a package's resources) each column has its declared
//! type (`integer`, `number`, `boolean`, `date`, `datetime`; every other type is kept as
//! strings); a cell listed in the schema's `missingValues` (default `[""]`) is missing, and
//! any other cell that does not parse as its type is an error. `number` also takes `NaN`,
//! `INF` and `-INF`; `boolean` takes the field's `trueValues`/`falseValues` (default
//! `true True TRUE 1` / `false False FALSE 0`); `date` and `datetime` take the field's
//! `format`: `default` or `any` (the grammar above), or a pattern (`fmt:` prefix optional)
//! of `%Y %m %d %H %M %S %f %z %%` and literal characters.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use leafwire::{ColumnBuilder, ColumnType, ElementType, Map, Table, TableBuilder, TableRef, Unit, Value};

use crate::failure::Failure;
use crate::files::{is_std, write_atomically};
use crate::progress::Progress;

/// The inference rules, for `from-csv --help`.
pub const INFERENCE_RULES: &str = "\
Column types, without --schema (empty cells are missing; the first rule every non-empty cell of the column meets wins):
  1. integer: [+-]digits within i64 -> integer, stored as the narrowest of i8/i16/i32/i64 holding every value
  2. number: [+-]digits[.digits][e[+-]digits] (also .5 and 5.; no inf/nan) -> number (f64)
  3. true/false, any case -> boolean
  4. YYYY-MM-DD -> date
  5. YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|+HH:MM] -> datetime: seconds, or milli/micro/nanoseconds for fractions of up to 3/6/9 digits; zone UTC when values carry Z or an offset (kept as UTC instants), naive otherwise; mixing zoned and naive values -> string
  6. anything else -> string
With --schema SCHEMA.json (a Frictionless Table Schema): the declared types (other types are strings), missingValues (default [\"\"]), date/datetime `format` (default, any, or a pattern of %Y %m %d %H %M %S %f %z); a cell that does not parse is an error naming its line and column.";

// ---------------------------------------------------------------------------------------
// Schemas

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FieldType {
    Integer,
    Number,
    Boolean,
    Date,
    DateTime,
    String,
}

impl FieldType {
    fn name(self) -> &'static str {
        match self {
            FieldType::Integer => "integer",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::Date => "date",
            FieldType::DateTime => "datetime",
            FieldType::String => "string",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Piece {
    Literal(char),
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Fraction,
    Zone,
}

#[derive(Clone, Debug)]
enum TimeFormat {
    /// The ISO grammar of the module's documentation.
    Default,
    Pattern(Vec<Piece>),
}

fn parse_pattern(pattern: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            pieces.push(Piece::Literal(c));
            continue;
        }
        pieces.push(match chars.next() {
            Some('Y') => Piece::Year,
            Some('m') => Piece::Month,
            Some('d') => Piece::Day,
            Some('H') => Piece::Hour,
            Some('M') => Piece::Minute,
            Some('S') => Piece::Second,
            Some('f') => Piece::Fraction,
            Some('z') => Piece::Zone,
            Some('%') => Piece::Literal('%'),
            Some(other) => {
                return Err(format!(
                    "format {pattern:?}: %{other} is not supported (only %Y %m %d %H %M %S %f %z %% and literal characters)"
                ))
            }
            None => return Err(format!("format {pattern:?} ends with a lone %")),
        });
    }
    Ok(pieces)
}

#[derive(Clone, Debug)]
struct Field {
    name: String,
    ty: FieldType,
    format: TimeFormat,
    true_values: Vec<String>,
    false_values: Vec<String>,
}

impl Field {
    fn new(name: &str, ty: FieldType, format: TimeFormat) -> Field {
        Field {
            name: name.to_owned(),
            ty,
            format,
            true_values: ["true", "True", "TRUE", "1"].map(String::from).to_vec(),
            false_values: ["false", "False", "FALSE", "0"].map(String::from).to_vec(),
        }
    }
}

struct Schema {
    fields: Vec<Field>,
    missing: Vec<String>,
}

fn strings(value: Option<&Value>, what: &str) -> Result<Option<Vec<String>>, String> {
    match value {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(format!("{what} must be a list of strings")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("{what} must be a list of strings")),
    }
}

/// A Table Schema (as a value) read into fields.
fn read_schema(value: &Value) -> Result<Schema, String> {
    let Value::Object(map) = value else { return Err("the table schema is not an object".into()) };
    let Some(Value::Array(fields)) = map.get("fields") else {
        return Err("the table schema has no \"fields\" list".into());
    };
    let missing = strings(map.get("missingValues"), "missingValues")?.unwrap_or_else(|| vec![String::new()]);
    let mut out = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let Value::Object(f) = f else { return Err(format!("field {} of the schema is not an object", i + 1)) };
        let Some(Value::String(name)) = f.get("name") else {
            return Err(format!("field {} of the schema has no name", i + 1));
        };
        let ty = match f.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "integer" => FieldType::Integer,
                "number" => FieldType::Number,
                "boolean" => FieldType::Boolean,
                "date" => FieldType::Date,
                "datetime" => FieldType::DateTime,
                _ => FieldType::String,
            },
            _ => FieldType::String,
        };
        let format = match (ty, f.get("format")) {
            (FieldType::Date | FieldType::DateTime, Some(Value::String(fmt))) if fmt != "default" && fmt != "any" => {
                let pattern = fmt.strip_prefix("fmt:").unwrap_or(fmt);
                TimeFormat::Pattern(parse_pattern(pattern).map_err(|e| format!("field {name:?}: {e}"))?)
            }
            _ => TimeFormat::Default,
        };
        let mut field = Field::new(name, ty, format);
        if let Some(t) = strings(f.get("trueValues"), "trueValues")? {
            field.true_values = t;
        }
        if let Some(t) = strings(f.get("falseValues"), "falseValues")? {
            field.false_values = t;
        }
        out.push(field);
    }
    Ok(Schema { fields: out, missing })
}

// ---------------------------------------------------------------------------------------
// Parsing cells

/// `[+-]digits` within i64, in one pass (the rule of inference 1, and the schema's
/// `integer`).
fn parse_integer(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (negative, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulated below zero, so that i64::MIN parses.
    let mut v: i64 = 0;
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_sub(i64::from(d))?;
    }
    if negative {
        Some(v)
    } else {
        v.checked_neg()
    }
}

/// `[+-]digits[.digits][e[+-]digits]`, at least one digit in the mantissa.
fn is_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

fn parse_number(s: &str, words: bool) -> Option<f64> {
    if is_number(s) {
        return s.parse().ok();
    }
    match (words, s) {
        (true, "NaN") => Some(f64::NAN),
        (true, "INF") => Some(f64::INFINITY),
        (true, "-INF") => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// A parsed date-time: seconds since the epoch (UTC for zoned values), nanoseconds, how
/// many fraction digits were written, and whether it carried a zone.
#[derive(Clone, Copy, Debug, Default)]
struct Instant {
    secs: i64,
    nanos: u32,
    digits: u8,
    zoned: bool,
    /// Written with a space between date and time.
    space: bool,
}

fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
}

fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    leafwire::table::days_from_civil(digits(&b[..4])?, digits(&b[5..7])? as u32, digits(&b[8..10])? as u32)
}

fn clock(h: i64, m: i64, s: i64) -> Option<i64> {
    (h < 24 && m < 60 && s < 60).then_some(h * 3600 + m * 60 + s)
}

/// The zone suffix `Z`, `±HH:MM` or `±HHMM` (or `±HH`) as seconds east of UTC.
fn parse_offset(b: &[u8]) -> Option<i64> {
    if b == b"Z" || b == b"z" {
        return Some(0);
    }
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &b[1..];
    let (h, m) = match rest.len() {
        2 => (digits(rest)?, 0),
        4 => (digits(&rest[..2])?, digits(&rest[2..])?),
        5 if rest[2] == b':' => (digits(&rest[..2])?, digits(&rest[3..])?),
        _ => return None,
    };
    (h < 24 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

fn parse_fraction(b: &[u8]) -> Option<(u32, u8)> {
    if b.is_empty() || b.len() > 9 {
        return None;
    }
    let n = digits(b)? as u32 * 10u32.pow(9 - b.len() as u32);
    Some((n, b.len() as u8))
}

fn parse_iso_datetime(s: &str) -> Option<Instant> {
    let b = s.as_bytes();
    if b.len() < 19 || !(b[10] == b'T' || b[10] == b' ') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let days = parse_date(std::str::from_utf8(&b[..10]).ok()?)?;
    let sod = clock(digits(&b[11..13])?, digits(&b[14..16])?, digits(&b[17..19])?)?;
    let mut at = 19;
    let (mut nanos, mut count) = (0, 0);
    if b.get(at) == Some(&b'.') {
        let end = b[at + 1..].iter().position(|c| !c.is_ascii_digit()).map_or(b.len(), |p| at + 1 + p);
        (nanos, count) = parse_fraction(&b[at + 1..end])?;
        at = end;
    }
    let (offset, zoned) = match &b[at..] {
        [] => (0, false),
        zone => (parse_offset(zone)?, true),
    };
    Some(Instant { secs: days * 86_400 + sod - offset, nanos, digits: count, zoned, space: b[10] == b' ' })
}

fn parse_with_pattern(s: &str, pieces: &[Piece]) -> Option<Instant> {
    let b = s.as_bytes();
    let mut at = 0;
    let (mut y, mut mo, mut d, mut h, mut mi, mut se) = (1970, 1, 1, 0, 0, 0);
    let (mut nanos, mut count, mut offset, mut zoned) = (0, 0, 0, false);
    let take = |at: &mut usize, n: usize| -> Option<i64> {
        let v = digits(b.get(*at..*at + n)?)?;
        *at += n;
        Some(v)
    };
    for piece in pieces {
        match *piece {
            Piece::Literal(c) => {
                let mut buf = [0u8; 4];
                let lit = c.encode_utf8(&mut buf).as_bytes();
                if !b[at..].starts_with(lit) {
                    return None;
                }
                at += lit.len();
            }
            Piece::Year => y = take(&mut at, 4)?,
            Piece::Month => mo = take(&mut at, 2)?,
            Piece::Day => d = take(&mut at, 2)?,
            Piece::Hour => h = take(&mut at, 2)?,
            Piece::Minute => mi = take(&mut at, 2)?,
            Piece::Second => se = take(&mut at, 2)?,
            Piece::Fraction => {
                let end = b[at..].iter().position(|c| !c.is_ascii_digit()).map_or(b.len(), |p| at + p);
                (nanos, count) = parse_fraction(&b[at..end])?;
                at = end;
            }
            Piece::Zone => {
                let end = b[at..].iter().position(|c| !matches!(c, b'0'..=b'9' | b'+' | b'-' | b':' | b'Z' | b'z'));
                let end = end.map_or(b.len(), |p| at + p);
                offset = parse_offset(&b[at..end])?;
                zoned = true;
                at = end;
            }
        }
    }
    if at != b.len() {
        return None;
    }
    let days = leafwire::table::days_from_civil(y, mo as u32, d as u32)?;
    let sod = clock(h, mi, se)?;
    Some(Instant { secs: days * 86_400 + sod - offset, nanos, digits: count, zoned, space: false })
}

fn parse_time(s: &str, format: &TimeFormat) -> Option<Instant> {
    match format {
        TimeFormat::Default => parse_iso_datetime(s),
        TimeFormat::Pattern(p) => parse_with_pattern(s, p),
    }
}

// ---------------------------------------------------------------------------------------
// Collecting a column's cells

enum Cells {
    Int(Vec<i64>),
    Builder(ColumnBuilder),
    Time { secs: Vec<i64>, nanos: Vec<u32>, digits: u8, zoned: Option<bool> },
}

struct Collector {
    field: Field,
    cells: Cells,
    /// Int and Time: one flag per row.
    valid: Vec<bool>,
}

impl Collector {
    fn new(field: Field) -> Collector {
        let cells = match field.ty {
            FieldType::Integer => Cells::Int(Vec::new()),
            FieldType::DateTime => Cells::Time { secs: Vec::new(), nanos: Vec::new(), digits: 0, zoned: None },
            FieldType::Number => Cells::Builder(ColumnBuilder::numbers(&field.name, ElementType::F64)),
            FieldType::Boolean => Cells::Builder(ColumnBuilder::numbers(&field.name, ElementType::Bool)),
            FieldType::Date => Cells::Builder(
                ColumnBuilder::numbers(&field.name, ElementType::I32).with_unit(Unit::Date, "").expect("i32 dates"),
            ),
            FieldType::String => Cells::Builder(ColumnBuilder::strings(&field.name)),
        };
        Collector { field, cells, valid: Vec::new() }
    }

    /// Appends a cell (`None`: missing); a cell that is not of the field's type is an error.
    fn push(&mut self, cell: Option<&str>) -> Result<(), String> {
        let ty = self.field.ty;
        let bad = |s: &str| format!("{s:?} is not a valid {}", ty.name());
        match (&mut self.cells, cell) {
            (Cells::Int(v), None) => {
                v.push(0);
                self.valid.push(false);
            }
            (Cells::Int(v), Some(s)) => {
                v.push(parse_integer(s).ok_or_else(|| bad(s))?);
                self.valid.push(true);
            }
            (Cells::Time { secs, nanos, .. }, None) => {
                secs.push(0);
                nanos.push(0);
                self.valid.push(false);
            }
            (Cells::Time { secs, nanos, digits, zoned }, Some(s)) => {
                let t = parse_time(s, &self.field.format).ok_or_else(|| bad(s))?;
                match zoned {
                    Some(z) if *z != t.zoned => {
                        return Err(format!(
                            "{s:?} {} a zone, unlike the column's first value (a column is all zoned or all naive)",
                            if t.zoned { "has" } else { "lacks" }
                        ))
                    }
                    _ => *zoned = Some(t.zoned),
                }
                *digits = (*digits).max(t.digits);
                secs.push(t.secs);
                nanos.push(t.nanos);
                self.valid.push(true);
            }
            (Cells::Builder(b), None) => b.push_null(),
            (Cells::Builder(b), Some(s)) => {
                let pushed = match ty {
                    FieldType::Number => b.push(parse_number(s, true).ok_or_else(|| bad(s))?),
                    FieldType::Boolean => {
                        let v = if self.field.true_values.iter().any(|t| t == s) {
                            1
                        } else if self.field.false_values.iter().any(|t| t == s) {
                            0
                        } else {
                            return Err(bad(s));
                        };
                        b.push_number_bytes(&[v])
                    }
                    FieldType::Date => {
                        let days = match &self.field.format {
                            TimeFormat::Default => parse_date(s),
                            TimeFormat::Pattern(p) => parse_with_pattern(s, p).map(|t| t.secs.div_euclid(86_400)),
                        };
                        let days = days.and_then(|d| i32::try_from(d).ok()).ok_or_else(|| bad(s))?;
                        b.push(days)
                    }
                    _ => b.push_str(s),
                };
                pushed.map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// The column, and its field in the output's Table Schema.
    fn finish(self) -> Result<ColumnBuilder, String> {
        let name = &self.field.name;
        Ok(match self.cells {
            Cells::Builder(b) => b,
            Cells::Int(v) => {
                let valid = &self.valid;
                let present = || v.iter().zip(valid).filter(|(_, ok)| **ok).map(|(x, _)| *x);
                let (lo, hi) = (present().min().unwrap_or(0), present().max().unwrap_or(0));
                let fits = |min: i64, max: i64| lo >= min && hi <= max;
                if fits(i8::MIN.into(), i8::MAX.into()) {
                    narrow::<i8>(name, &v, valid)
                } else if fits(i16::MIN.into(), i16::MAX.into()) {
                    narrow::<i16>(name, &v, valid)
                } else if fits(i32::MIN.into(), i32::MAX.into()) {
                    narrow::<i32>(name, &v, valid)
                } else {
                    narrow::<i64>(name, &v, valid)
                }
            }
            Cells::Time { secs, nanos, digits, zoned } => {
                let unit = match digits {
                    0 => Unit::Seconds,
                    1..=3 => Unit::Millis,
                    4..=6 => Unit::Micros,
                    _ => Unit::Nanos,
                };
                let per = unit.per_second();
                let step = 1_000_000_000 / per;
                let mut counts = Vec::with_capacity(secs.len());
                for (s, n) in secs.iter().zip(&nanos) {
                    let c = s.checked_mul(per).and_then(|c| c.checked_add(i64::from(*n) / step));
                    counts
                        .push(c.ok_or_else(|| format!("a date-time of column {name:?} is out of range for its unit"))?);
                }
                let zone = if zoned == Some(true) { "UTC" } else { "" };
                let b = narrow::<i64>(name, &counts, &self.valid);
                b.with_unit(unit, zone).map_err(|e| e.to_string())?
            }
        })
    }
}

fn narrow<T: leafwire::Element + TryFrom<i64> + Default>(name: &str, values: &[i64], valid: &[bool]) -> ColumnBuilder {
    column_of(name, values.iter().map(|v| T::try_from(*v).unwrap_or_default()).collect(), valid)
}

/// A numeric column of `values`, with the cells whose `valid` flag is false missing.
fn column_of<T: leafwire::Element>(name: &str, values: Vec<T>, valid: &[bool]) -> ColumnBuilder {
    if valid.iter().all(|v| *v) {
        return ColumnBuilder::from_slice(name, &values);
    }
    let mut b = ColumnBuilder::numbers(name, T::TYPE);
    for (v, ok) in values.into_iter().zip(valid) {
        match ok {
            true => b.push(v).expect("the column's type"),
            false => b.push_null(),
        }
    }
    b
}

// ---------------------------------------------------------------------------------------
// Inference

/// A column's cells as text, back to back, while the CSV is read. Kept as a `String` so
/// that a cell is a `&str` by slicing (the CSV reader checked the UTF-8 once).
#[derive(Default)]
struct RawColumn {
    text: String,
    ends: Vec<usize>,
}

impl RawColumn {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len());
    }

    fn cells(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let s = &self.text[start..end];
            start = end;
            s
        })
    }
}

/// Infers a column's type (`infer`) and converts its cells. Most columns are numbers: an
/// integer or number column is parsed while its type is being inferred, so that its cells
/// are read once; a column of another type is inferred, then converted.
fn infer_and_convert(name: &str, raw: &[RawColumn]) -> (Field, ColumnBuilder) {
    let cells = || raw.iter().flat_map(RawColumn::cells);
    let field = |ty| Field::new(name, ty, TimeFormat::Default);
    if let Some((values, valid)) = parse_all(cells(), parse_integer) {
        let c = Collector { field: field(FieldType::Integer), cells: Cells::Int(values), valid };
        let column = c.finish().expect("integer columns always finish");
        return (field(FieldType::Integer), column);
    }
    let number = |s: &str| if is_number(s) { s.parse::<f64>().ok() } else { None };
    if let Some((values, valid)) = parse_all(cells(), number) {
        return (field(FieldType::Number), column_of(name, values, &valid));
    }
    let inferred = infer(name, raw);
    let column = convert_raw(inferred.clone(), raw);
    (inferred, column)
}

/// Every cell parsed by `parse` (empty cells missing), or None when a non-empty cell does
/// not parse or no cell has a value (such a column is text: rule 6).
fn parse_all<'a, T: Default>(
    cells: impl Iterator<Item = &'a str>,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<(Vec<T>, Vec<bool>)> {
    let (mut values, mut valid) = (Vec::new(), Vec::new());
    for s in cells {
        if s.is_empty() {
            values.push(T::default());
            valid.push(false);
        } else {
            values.push(parse(s)?);
            valid.push(true);
        }
    }
    valid.contains(&true).then_some((values, valid))
}

fn infer(name: &str, raw: &[RawColumn]) -> Field {
    let (mut int, mut num, mut boolean, mut date, mut time) = (true, true, true, true, true);
    let (mut zoned, mut naive, mut all_space, mut fraction, mut any) = (false, false, true, false, false);
    for s in raw.iter().flat_map(RawColumn::cells).filter(|s| !s.is_empty()) {
        any = true;
        int = int && parse_integer(s).is_some();
        // An integer is a number: the number rule need only look at the others.
        num = num && (int || is_number(s));
        boolean = boolean && (s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false"));
        date = date && parse_date(s).is_some();
        if time {
            match parse_iso_datetime(s) {
                Some(t) => {
                    zoned |= t.zoned;
                    naive |= !t.zoned;
                    all_space &= t.space;
                    fraction |= t.digits > 0;
                }
                None => time = false,
            }
        }
        if !(int || num || boolean || date || time) {
            break;
        }
    }
    let field = |ty, format| Field::new(name, ty, format);
    match () {
        _ if !any => field(FieldType::String, TimeFormat::Default),
        _ if int => field(FieldType::Integer, TimeFormat::Default),
        _ if num => field(FieldType::Number, TimeFormat::Default),
        _ if boolean => {
            let mut f = field(FieldType::Boolean, TimeFormat::Default);
            f.true_values = vec!["true".into()];
            f.false_values = vec!["false".into()];
            f
        }
        _ if date => field(FieldType::Date, TimeFormat::Default),
        _ if time && !(zoned && naive) => {
            if naive && all_space && !fraction {
                field(FieldType::DateTime, TimeFormat::Pattern(parse_pattern(SPACED).expect("a valid pattern")))
            } else {
                field(FieldType::DateTime, TimeFormat::Default)
            }
        }
        _ => field(FieldType::String, TimeFormat::Default),
    }
}

const SPACED: &str = "%Y-%m-%d %H:%M:%S";

/// Converts an inferred column; a column whose date-times overflow their unit stays text.
fn convert_raw(field: Field, raw: &[RawColumn]) -> ColumnBuilder {
    let lower_bool = field.ty == FieldType::Boolean;
    let mut c = Collector::new(field.clone());
    let mut ok = true;
    for s in raw.iter().flat_map(RawColumn::cells) {
        let pushed = match s {
            "" => c.push(None),
            s if lower_bool => c.push(Some(if s.eq_ignore_ascii_case("true") { "true" } else { "false" })),
            s => c.push(Some(s)),
        };
        if pushed.is_err() {
            ok = false;
            break;
        }
    }
    match ok.then(|| c.finish()) {
        Some(Ok(b)) => b,
        _ => {
            let mut c = Collector::new(Field::new(&field.name, FieldType::String, TimeFormat::Default));
            for s in raw.iter().flat_map(RawColumn::cells) {
                c.push((!s.is_empty()).then_some(s)).expect("strings take anything");
            }
            c.finish().expect("strings")
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading CSV

/// Where a cell is, for messages: `line L column C (name)`.
fn at_cell(line: u64, index: usize, name: &str) -> String {
    format!("line {line} column {} ({name})", index + 1)
}

fn csv_failure(path: &Path, e: csv::Error, header: &[String]) -> Failure {
    csv_failure_at(path, e, header, 0)
}

/// As `csv_failure`, for a reader that started `lines` lines into the file.
fn csv_failure_at(path: &Path, e: csv::Error, header: &[String], lines: u64) -> Failure {
    match e.kind() {
        csv::ErrorKind::Utf8 { pos, err } => {
            let line = lines + pos.as_ref().map_or(0, |p| p.line());
            let name = header.get(err.field()).map_or("?", String::as_str);
            Failure::new(path, format!("{}: not valid UTF-8", at_cell(line, err.field(), name)))
        }
        csv::ErrorKind::Io(_) => Failure::new(path, e),
        _ => match e.position() {
            Some(p) => Failure::new(path, format!("line {}: {e}", lines + p.line())),
            None => Failure::new(path, e),
        },
    }
}

enum Row<'a> {
    Header(&'a [String]),
    Record(u64, &'a csv::StringRecord),
}

/// Reads a CSV file record by record: checks the header with `header`, then hands each
/// record (UTF-8, as long as the header) to `row` with its line.
fn read_csv(
    path: &Path,
    delimiter: u8,
    progress: &Progress,
    base: u64,
    mut visit: impl FnMut(Row<'_>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let source: Box<dyn Read> = if is_std(path) {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(fs::File::open(path).map_err(|e| Failure::new(path, e))?)
    };
    let mut reader = csv::ReaderBuilder::new().delimiter(delimiter).flexible(true).from_reader(source);
    let names: Vec<String> = match reader.headers() {
        Ok(h) => h
            .iter()
            .enumerate()
            .map(|(i, n)| if i == 0 { n.trim_start_matches('\u{feff}') } else { n }.to_owned())
            .collect(),
        Err(e) => return Err(csv_failure(path, e, &[])),
    };
    if names.is_empty() || (names.len() == 1 && names[0].is_empty()) {
        return Err(Failure::new(path, "no header line (the file is empty)"));
    }
    visit(Row::Header(&names))?;
    let mut record = csv::StringRecord::new();
    let mut count = 0u64;
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_failure(path, e, &names)),
        }
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != names.len() {
            // A blank line is one empty field: skip it, as CSV readers do, unless the
            // header has one column too (then it is a missing cell).
            return Err(Failure::new(
                path,
                format!("line {line}: {} fields, but the header has {}", record.len(), names.len()),
            ));
        }
        visit(Row::Record(line, &record))?;
        count += 1;
        if count % 4096 == 0 {
            progress.set_position(base + record.position().map_or(0, |p| p.byte()));
        }
    }
    Ok(())
}

/// Column `i`'s cells as text, chunk by chunk in file order.
type RawColumns = Vec<(usize, Vec<RawColumn>)>;

/// Runs `f` on every item on all cores (items taken in turn), keeping their order.
fn in_parallel<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len().max(1));
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let mut out: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                        match next {
                            Some((i, item)) => done.push((i, f(item))),
                            None => return done,
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    out.sort_unstable_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Reads a CSV file's cells as text, column by column. A regular file is mapped and cut
/// into chunks at record boundaries, which are parsed on all cores; stdin (or a file too
/// small to cut) is read as one chunk.
fn read_raw(input: &Path, progress: &Progress) -> Result<(Vec<String>, RawColumns), Failure> {
    let file = if is_std(input) { None } else { Some(fs::File::open(input).map_err(|e| Failure::new(input, e))?) };
    let mapped = match &file {
        // SAFETY: the file is only read, for the length of this call; a CSV changed by
        // another process while it is converted gives wrong cells or an error, not
        // unsafety beyond what reading a changing file gives (the map is private).
        Some(f) if f.metadata().map_or(false, |m| m.is_file() && m.len() >= 1 << 20) => {
            Some(unsafe { memmap2::MmapOptions::new().map_copy_read_only(f) }.map_err(|e| Failure::new(input, e))?)
        }
        _ => None,
    };
    let Some(bytes) = mapped.as_deref() else {
        // One chunk, streamed.
        let mut names = Vec::new();
        let mut raws: Vec<RawColumn> = Vec::new();
        read_csv(input, b',', progress, 0, |row| {
            match row {
                Row::Header(h) => {
                    names = h.to_vec();
                    raws = h.iter().map(|_| RawColumn::default()).collect();
                }
                Row::Record(_, r) => {
                    for (cell, raw) in r.iter().zip(&mut raws) {
                        raw.push(cell);
                    }
                }
            }
            Ok(())
        })?;
        return Ok((names, raws.into_iter().map(|r| vec![r]).enumerate().collect()));
    };
    // The header, as the streamed reader reads it (its errors included).
    let mut header_reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let names: Vec<String> = match header_reader.headers() {
        Ok(h) => h
            .iter()
            .enumerate()
            .map(|(i, n)| if i == 0 { n.trim_start_matches('\u{feff}') } else { n }.to_owned())
            .collect(),
        Err(e) => return Err(csv_failure(input, e, &[])),
    };
    if names.is_empty() || (names.len() == 1 && names[0].is_empty()) {
        return Err(Failure::new(input, "no header line (the file is empty)"));
    }
    let body = header_reader.position().byte() as usize;
    let chunks = record_chunks(bytes, body, 4 * std::thread::available_parallelism().map_or(1, |n| n.get()));
    let parsed =
        in_parallel(chunks, |(start, end, first_line)| parse_chunk(input, &bytes[start..end], first_line, &names));
    progress.set_position(bytes.len() as u64);
    let mut columns: Vec<Vec<RawColumn>> = names.iter().map(|_| Vec::new()).collect();
    for chunk in parsed {
        for (column, raw) in columns.iter_mut().zip(chunk?) {
            column.push(raw);
        }
    }
    Ok((names, columns.into_iter().enumerate().collect()))
}

/// Cuts `bytes[from..]` into about `n` pieces that end at record boundaries: a newline
/// outside quotes (an even number of `"` since `from`, which RFC 4180's doubled quotes
/// keep). Each piece comes with the line number of its first line.
fn record_chunks(bytes: &[u8], from: usize, n: usize) -> Vec<(usize, usize, u64)> {
    let step = ((bytes.len() - from) / n.max(1)).max(1 << 16);
    let mut chunks = Vec::new();
    let (mut start, mut line) = (from, 1 + memchr::memchr_iter(b'\n', &bytes[..from]).count() as u64);
    let mut quotes_odd = false;
    while start < bytes.len() {
        let mut end = (start + step).min(bytes.len());
        quotes_odd ^= memchr::memchr_iter(b'"', &bytes[start..end]).count() % 2 == 1;
        // Move to the end of the line, past newlines inside quotes.
        while end < bytes.len() {
            match memchr::memchr2(b'\n', b'"', &bytes[end..]) {
                Some(i) if bytes[end + i] == b'"' => {
                    quotes_odd = !quotes_odd;
                    end += i + 1;
                }
                Some(i) if quotes_odd => end += i + 1,
                Some(i) => {
                    end += i + 1;
                    break;
                }
                None => end = bytes.len(),
            }
        }
        chunks.push((start, end, line));
        line += memchr::memchr_iter(b'\n', &bytes[start..end]).count() as u64;
        start = end;
    }
    chunks
}

/// Parses one piece of records (no header) into a column of text per header column.
fn parse_chunk(path: &Path, bytes: &[u8], first_line: u64, names: &[String]) -> Result<Vec<RawColumn>, Failure> {
    let mut raws: Vec<RawColumn> = names.iter().map(|_| RawColumn::default()).collect();
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(bytes);
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(raws),
            Ok(true) => {}
            Err(e) => return Err(csv_failure_at(path, e, names, first_line - 1)),
        }
        let line = first_line - 1 + record.position().map_or(0, |p| p.line());
        if record.len() != names.len() {
            return Err(Failure::new(
                path,
                format!("line {line}: {} fields, but the header has {}", record.len(), names.len()),
            ));
        }
        for (cell, raw) in record.iter().zip(&mut raws) {
            raw.push(cell);
        }
    }
}

/// Reads a CSV into a table by a schema (its fields in the header's order).
struct Typed {
    columns: Vec<Collector>,
    missing: Vec<String>,
}

impl Typed {
    fn new(schema: &Schema) -> Typed {
        Typed { columns: schema.fields.iter().cloned().map(Collector::new).collect(), missing: schema.missing.clone() }
    }

    fn check_header(&self, path: &Path, names: &[String]) -> Result<(), Failure> {
        if names.len() != self.columns.len() {
            return Err(Failure::new(
                path,
                format!("line 1: the header has {} columns, the schema {} fields", names.len(), self.columns.len()),
            ));
        }
        for (i, (n, c)) in names.iter().zip(&self.columns).enumerate() {
            if *n != c.field.name {
                return Err(Failure::new(
                    path,
                    format!("line 1 column {}: the header names {n:?}, the schema {:?}", i + 1, c.field.name),
                ));
            }
        }
        Ok(())
    }

    fn push(&mut self, path: &Path, line: u64, record: &csv::StringRecord) -> Result<(), Failure> {
        for (i, (cell, c)) in record.iter().zip(&mut self.columns).enumerate() {
            let cell = (!self.missing.iter().any(|m| m == cell)).then_some(cell);
            c.push(cell).map_err(|e| Failure::new(path, format!("{}: {e}", at_cell(line, i, &c.field.name))))?;
        }
        Ok(())
    }

    fn finish(self, path: &Path) -> Result<Table, Failure> {
        let mut t = TableBuilder::new();
        for c in self.columns {
            t.push_column(c.finish().map_err(|e| Failure::new(path, e))?);
        }
        t.finish().map_err(|e| Failure::leafwire(path, e))
    }
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn read_json(path: &Path) -> Result<Value, Failure> {
    let text = fs::read(path).map_err(|e| Failure::new(path, e))?;
    leafwire::json::parse(&text).map_err(|e| Failure::json(path, e))
}

fn object(entries: Vec<(&str, Value)>) -> Value {
    Value::Object(entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

// ---------------------------------------------------------------------------------------
// from-csv

pub fn from_csv(input: &Path, output: &Path, schema: Option<&Path>) -> Result<(), Failure> {
    let progress = Progress::bar(file_len(input), "reading");
    let (table, schema_value) = match schema {
        Some(schema_path) => {
            let value = read_json(schema_path)?;
            let schema = read_schema(&value).map_err(|e| Failure::new(schema_path, e))?;
            let mut typed = Typed::new(&schema);
            read_csv(input, b',', &progress, 0, |row| match row {
                Row::Header(h) => typed.check_header(input, h),
                Row::Record(line, r) => typed.push(input, line, r),
            })?;
            (typed.finish(input)?, value)
        }
        None => {
            let (names, raws) = read_raw(input, &progress)?;
            // Columns are independent: infer and convert them on every core.
            let converted = in_parallel(raws, |raw| infer_and_convert(&names[raw.0], &raw.1));
            let mut t = TableBuilder::new();
            let mut fields = Vec::new();
            for (name, (field, column)) in names.iter().zip(converted) {
                let mut entries = vec![("name", string(name))];
                let ty = match column.element() {
                    None => FieldType::String,
                    Some(_) => field.ty,
                };
                entries.push(("type", string(ty.name())));
                if let (FieldType::DateTime, TimeFormat::Pattern(_)) = (ty, &field.format) {
                    entries.push(("format", string(SPACED)));
                }
                fields.push(object(entries));
                t.push_column(column);
            }
            let table = t.finish().map_err(|e| Failure::leafwire(input, e))?;
            (table, object(vec![("fields", Value::Array(fields))]))
        }
    };
    drop(progress);
    let name = if is_std(input) {
        "stdin".to_owned()
    } else {
        input.file_stem().map_or("data".into(), |s| s.to_string_lossy().into_owned())
    };
    let root = object(vec![("name", Value::String(name)), ("schema", schema_value), ("data", Value::Table(table))]);
    let doc = leafwire::encode(&root).map_err(|e| Failure::leafwire(output, e))?;
    crate::convert::write_document(&doc, output, Some(input), true)
}

// ---------------------------------------------------------------------------------------
// pack

/// A path inside a package: relative, with no `..`.
fn inside(base: &Path, rel: &str, what: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if rel.is_empty() || p.is_absolute() || rel.starts_with('/') || rel.starts_with('\\') {
        return Err(format!("{what} {rel:?} is not a relative path inside the package; refusing it"));
    }
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            _ => return Err(format!("{what} {rel:?} leaves the package's directory; refusing it")),
        }
    }
    Ok(base.join(p))
}

fn is_url(s: &str) -> bool {
    s.contains("://")
}

fn resource_paths(r: &Map) -> Option<Vec<String>> {
    match r.get("path")? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn dialect_delimiter(r: &Map) -> Result<u8, String> {
    match r.get("dialect") {
        // What this reader does not do is refused, not ignored: a file without a header
        // line, or quoted otherwise, would be read wrongly.
        Some(Value::Object(d)) if d.get("header").is_some_and(|h| !matches!(h, Value::Bool(true))) => {
            Err("dialect.header other than true is not supported".into())
        }
        Some(Value::Object(d)) if d.get("quoteChar").is_some_and(|q| !matches!(q, Value::String(c) if c == "\"")) => {
            Err("dialect.quoteChar other than '\"' is not supported".into())
        }
        Some(Value::Object(d)) => match d.get("delimiter") {
            Some(Value::String(s)) if s.len() == 1 => Ok(s.as_bytes()[0]),
            Some(_) => Err("dialect.delimiter must be one ASCII character".into()),
            None => Ok(b','),
        },
        _ => Ok(b','),
    }
}

fn is_tabular(r: &Map, paths: &[String]) -> bool {
    let csv_format = matches!(r.get("format"), Some(Value::String(f)) if f.eq_ignore_ascii_case("csv"))
        || matches!(r.get("mediatype"), Some(Value::String(m)) if m == "text/csv");
    let csv_path = paths.iter().all(|p| p.to_ascii_lowercase().ends_with(".csv"));
    !paths.is_empty() && !paths.iter().any(|p| is_url(p)) && (csv_format || csv_path) && r.contains_key("schema")
}

pub fn pack(descriptor: &Path, output: &Path) -> Result<(), Failure> {
    let mut root = read_json(descriptor)?;
    let base = descriptor.parent().unwrap_or(Path::new(".")).to_path_buf();
    let Value::Object(map) = &mut root else { return Err(Failure::new(descriptor, "the descriptor is not an object")) };
    let resources = match map.get_mut("resources") {
        Some(Value::Array(r)) => r,
        _ => return Err(Failure::new(descriptor, "the descriptor has no \"resources\" list")),
    };
    // The files to read, for one progress bar over all of them.
    let mut total = 0;
    for r in resources.iter() {
        if let Value::Object(r) = r {
            if let Some(paths) = resource_paths(r).filter(|p| is_tabular(r, p)) {
                total += paths.iter().filter_map(|p| inside(&base, p, "").ok()).map(|p| file_len(&p)).sum::<u64>();
            }
        }
    }
    let progress = Progress::bar(total, "reading");
    let mut done = 0;
    for (index, r) in resources.iter_mut().enumerate() {
        let Value::Object(res) = r else { continue };
        let Some(paths) = resource_paths(res).filter(|p| is_tabular(res, p)) else { continue };
        let name = match res.get("name") {
            Some(Value::String(n)) => n.clone(),
            _ => format!("#{}", index + 1),
        };
        let fail = |e: String| Failure::new(descriptor, format!("resource {name:?}: {e}"));
        let mut schema_path = None;
        if let Some(Value::String(rel)) = res.get("schema") {
            let p = inside(&base, rel, "schema").map_err(fail)?;
            schema_path = Some(rel.clone());
            let value = read_json(&p)?;
            res.insert("schema".into(), value);
        }
        let schema = read_schema(res.get("schema").expect("tabular resources have one")).map_err(fail)?;
        let delimiter = dialect_delimiter(res).map_err(fail)?;
        let mut typed = Typed::new(&schema);
        let mut rows = Vec::new();
        for rel in &paths {
            let file = inside(&base, rel, "path").map_err(fail)?;
            let before = typed.columns.first().map_or(0, |c| rows_of(c));
            read_csv(&file, delimiter, &progress, done, |row| match row {
                Row::Header(h) => typed.check_header(&file, h),
                Row::Record(line, rec) => typed.push(&file, line, rec),
            })?;
            done += file_len(&file);
            rows.push(typed.columns.first().map_or(0, |c| rows_of(c)) - before);
        }
        let table = typed.finish(Path::new(&paths[0]))?;
        // `path` becomes `leafwire:path` where it stood (spec §15.4); `data` is added last.
        let old = std::mem::take(res);
        for (k, v) in old {
            match k.as_str() {
                "path" => {
                    res.insert("leafwire:path".into(), v);
                }
                "schema" => {
                    res.insert(k, v);
                    if let Some(p) = schema_path.take() {
                        res.insert("leafwire:schema-path".into(), Value::String(p));
                    }
                }
                _ => {
                    res.insert(k, v);
                }
            }
        }
        if paths.len() > 1 {
            res.insert("leafwire:rows".into(), Value::Array(rows.into_iter().map(|n| Value::Int(n as i64)).collect()));
        }
        res.insert("data".into(), Value::Table(table));
    }
    drop(progress);
    let doc = leafwire::encode(&root).map_err(|e| Failure::leafwire(output, e))?;
    crate::convert::write_document(&doc, output, Some(descriptor), true)
}

fn rows_of(c: &Collector) -> usize {
    match &c.cells {
        Cells::Int(v) => v.len(),
        Cells::Time { secs, .. } => secs.len(),
        Cells::Builder(b) => b.len(),
    }
}

// ---------------------------------------------------------------------------------------
// unpack

/// How one column's cells are written.
struct CellWriter<'a> {
    column: leafwire::ColumnRef<'a>,
    format: Option<Vec<Piece>>,
    /// How true and false are written: the field's first `trueValues` and `falseValues`.
    bools: (String, String),
}

fn format_pattern(out: &mut Vec<u8>, pieces: &[Piece], count: i64, unit: Unit, zoned: bool) {
    let per = unit.per_second();
    let (secs, frac) =
        if unit == Unit::Date { (count * 86_400, 0) } else { (count.div_euclid(per), count.rem_euclid(per)) };
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = leafwire::table::civil_from_days(days);
    for p in pieces {
        let _ = match *p {
            Piece::Literal(c) => write!(out, "{c}"),
            Piece::Year => write!(out, "{y:04}"),
            Piece::Month => write!(out, "{m:02}"),
            Piece::Day => write!(out, "{d:02}"),
            Piece::Hour => write!(out, "{:02}", sod / 3600),
            Piece::Minute => write!(out, "{:02}", sod / 60 % 60),
            Piece::Second => write!(out, "{:02}", sod % 60),
            Piece::Fraction => match unit {
                Unit::Millis => write!(out, "{frac:03}"),
                Unit::Micros => write!(out, "{frac:06}"),
                Unit::Nanos => write!(out, "{frac:09}"),
                _ => write!(out, "0"),
            },
            Piece::Zone => write!(out, "{}", if zoned { "+0000" } else { "" }),
        };
    }
}

impl CellWriter<'_> {
    fn write(&self, out: &mut Vec<u8>, i: usize, ryu: &mut ryu::Buffer) -> leafwire::Result<()> {
        let c = &self.column;
        let data = c.data();
        macro_rules! num {
            ($t:ty) => {{
                let size = std::mem::size_of::<$t>();
                <$t>::from_le_bytes(data[i * size..(i + 1) * size].try_into().unwrap())
            }};
        }
        match c.column_type() {
            ColumnType::Strings { .. } => out.extend_from_slice(c.str(i)?.unwrap_or("").as_bytes()),
            ColumnType::Numbers(e) => match (e, c.unit()) {
                (ElementType::Bool, _) => {
                    out.extend_from_slice(if data[i] != 0 { self.bools.0.as_bytes() } else { self.bools.1.as_bytes() })
                }
                (ElementType::I32, Unit::Date) => {
                    let days = i64::from(num!(i32));
                    match &self.format {
                        Some(p) => format_pattern(out, p, days, Unit::Date, false),
                        None => leafwire::table::write_time_text(out, days, Unit::Date, false),
                    }
                }
                (ElementType::I64, unit) if unit.is_datetime() => {
                    let zoned = !c.zone()?.is_empty();
                    match &self.format {
                        Some(p) => format_pattern(out, p, num!(i64), unit, zoned),
                        None => leafwire::table::write_time_text(out, num!(i64), unit, zoned),
                    }
                }
                (ElementType::I8, _) => {
                    let _ = write!(out, "{}", num!(i8));
                }
                (ElementType::I16, _) => {
                    let _ = write!(out, "{}", num!(i16));
                }
                (ElementType::I32, _) => {
                    let _ = write!(out, "{}", num!(i32));
                }
                (ElementType::I64, _) => {
                    let _ = write!(out, "{}", num!(i64));
                }
                (ElementType::U8, _) => {
                    let _ = write!(out, "{}", num!(u8));
                }
                (ElementType::U16, _) => {
                    let _ = write!(out, "{}", num!(u16));
                }
                (ElementType::U32, _) => {
                    let _ = write!(out, "{}", num!(u32));
                }
                (ElementType::U64, _) => {
                    let _ = write!(out, "{}", num!(u64));
                }
                (ElementType::F32, _) => write_float(out, f64::from(num!(f32)), ryu),
                (ElementType::F64, _) => write_float(out, num!(f64), ryu),
            },
        }
        Ok(())
    }
}

fn write_float(out: &mut Vec<u8>, v: f64, ryu: &mut ryu::Buffer) {
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"INF" } else { b"-INF" });
    } else {
        out.extend_from_slice(ryu.format_finite(v).as_bytes());
    }
}

/// Writes rows `rows` of `table` as CSV (header first) to `path`.
fn write_csv(
    path: &Path,
    like: &Path,
    table: TableRef<'_>,
    rows: std::ops::Range<usize>,
    schema: Option<&Schema>,
    delimiter: u8,
    crlf: bool,
) -> Result<(), Failure> {
    let missing = schema.and_then(|s| s.missing.first().cloned()).unwrap_or_default();
    let columns = table
        .columns()
        .map(|c| {
            let column = c?;
            let name = column.name()?;
            let field = schema.and_then(|s| s.fields.iter().find(|f| f.name == name));
            let format = field.and_then(|f| match (&f.format, f.ty) {
                (TimeFormat::Pattern(p), FieldType::Date | FieldType::DateTime) => Some(p.clone()),
                _ => None,
            });
            let first =
                |v: Option<&Vec<String>>, default: &str| v.and_then(|v| v.first().cloned()).unwrap_or(default.into());
            let bools = (first(field.map(|f| &f.true_values), "true"), first(field.map(|f| &f.false_values), "false"));
            Ok(CellWriter { column, format, bools })
        })
        .collect::<leafwire::Result<Vec<_>>>()
        .map_err(|e| Failure::leafwire(like, e))?;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| Failure::new(parent, e))?;
    }
    write_atomically(path, Some(like), |w| {
        let terminator = if crlf { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') };
        let mut out = csv::WriterBuilder::new().delimiter(delimiter).terminator(terminator).from_writer(w);
        let io = |e: csv::Error| Failure::new(path, e);
        let mut record = csv::ByteRecord::new();
        for c in &columns {
            record.push_field(c.column.name().unwrap_or_default().as_bytes());
        }
        out.write_byte_record(&record).map_err(io)?;
        let mut cell = Vec::new();
        let mut ryu = ryu::Buffer::new();
        for i in rows {
            record.clear();
            for c in &columns {
                cell.clear();
                if c.column.is_valid(i) {
                    c.write(&mut cell, i, &mut ryu).map_err(|e| Failure::leafwire(like, e))?;
                    record.push_field(&cell);
                } else {
                    record.push_field(missing.as_bytes());
                }
            }
            out.write_byte_record(&record).map_err(io)?;
        }
        out.flush().map_err(|e| Failure::new(path, e))
    })
}

fn json_text(value: &Value, like: &Path) -> Result<Vec<u8>, Failure> {
    let doc = leafwire::encode(value).map_err(|e| Failure::leafwire(like, e))?;
    let doc = leafwire::Document::open(&doc).map_err(|e| Failure::leafwire(like, e))?;
    let mut text = Vec::new();
    leafwire::json::write_json_node_pretty_with(&doc.root(), &mut text, crate::READ_DEPTH)
        .map_err(|e| Failure::leafwire(like, e))?;
    Ok(text)
}

fn write_file(path: &Path, like: &Path, bytes: &[u8]) -> Result<(), Failure> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| Failure::new(parent, e))?;
    }
    write_atomically(path, Some(like), |w| w.write_all(bytes).map_err(|e| Failure::new(path, e)))
}

pub fn unpack(input: &Path, dir: &Path) -> Result<(), Failure> {
    let file = crate::files::open_mapped(input)?;
    let mut root = leafwire::decode(file.as_bytes()).map_err(|e| Failure::leafwire(input, e))?;
    drop(file);
    let Value::Object(map) = &mut root else { return Err(Failure::new(input, "the root is not an object")) };
    fs::create_dir_all(dir).map_err(|e| Failure::new(dir, e))?;
    // A from-csv document: one table and its schema.
    if !map.contains_key("resources") {
        let (Some(Value::Table(table)), Some(schema)) = (map.get("data"), map.get("schema")) else {
            return Err(Failure::new(input, "neither a data package (no \"resources\") nor a from-csv table"));
        };
        let schema = read_schema(schema).map_err(|e| Failure::new(input, e))?;
        let name = match map.get("name") {
            Some(Value::String(n)) => n.clone(),
            _ => "data".into(),
        };
        let path = inside(dir, &format!("{name}.csv"), "name").map_err(|e| Failure::new(input, e))?;
        if name.contains(['/', '\\']) {
            return Err(Failure::new(input, format!("name {name:?} is not a file name")));
        }
        let view = table.view();
        return write_csv(&path, input, view, 0..view.rows(), Some(&schema), b',', false);
    }
    let Some(Value::Array(resources)) = map.get_mut("resources") else {
        return Err(Failure::new(input, "\"resources\" is not a list"));
    };
    for (index, r) in resources.iter_mut().enumerate() {
        let Value::Object(res) = r else { continue };
        let Some(Value::Table(table)) = res.get("data") else { continue };
        let name = match res.get("name") {
            Some(Value::String(n)) => n.clone(),
            _ => format!("#{}", index + 1),
        };
        let fail = |e: String| Failure::new(input, format!("resource {name:?}: {e}"));
        let paths = match res.get("leafwire:path") {
            Some(Value::String(p)) => vec![p.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(fail("leafwire:path holds something other than strings".into())),
                })
                .collect::<Result<_, _>>()?,
            _ => vec![format!("{name}.csv")],
        };
        let counts: Vec<usize> = match res.get("leafwire:rows") {
            Some(Value::Array(n)) => n.iter().map(|v| if let Value::Int(n) = v { *n as usize } else { 0 }).collect(),
            _ => vec![table.rows()],
        };
        if counts.len() != paths.len() || counts.iter().sum::<usize>() != table.rows() {
            return Err(fail("leafwire:rows does not split the table's rows among its paths".into()));
        }
        let schema = match res.get("schema") {
            Some(s @ Value::Object(_)) => Some(read_schema(s).map_err(fail)?),
            _ => None,
        };
        let delimiter = dialect_delimiter(res).map_err(fail)?;
        let crlf = match res.get("dialect") {
            Some(Value::Object(d)) => !matches!(d.get("lineTerminator"), Some(Value::String(t)) if t == "\n"),
            _ => true,
        };
        let view = table.view();
        let mut start = 0;
        for (rel, n) in paths.iter().zip(&counts) {
            let path = inside(dir, rel, "path").map_err(fail)?;
            write_csv(&path, input, view, start..start + n, schema.as_ref(), delimiter, crlf)?;
            start += n;
        }
        // The descriptor as it was: `path` back where `leafwire:path` stands, no `data`.
        let old = std::mem::take(res);
        let mut schema_path = None;
        for (k, v) in old {
            match k.as_str() {
                "data" | "leafwire:rows" => {}
                "leafwire:path" => {
                    res.insert("path".into(), v);
                }
                "leafwire:schema-path" => {
                    if let Value::String(p) = v {
                        schema_path = Some(p);
                    }
                }
                _ => {
                    res.insert(k, v);
                }
            }
        }
        if let Some(rel) = schema_path {
            let path = inside(dir, &rel, "schema").map_err(fail)?;
            let schema = res.get("schema").cloned().unwrap_or_default();
            write_file(&path, input, &json_text(&schema, input)?)?;
            res.insert("schema".into(), Value::String(rel));
        }
    }
    let text = json_text(&root, input)?;
    write_file(&dir.join("datapackage.json"), input, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(cells: &[&str]) -> Vec<RawColumn> {
        // Two pieces, as a chunked read gives them.
        let (a, b) = cells.split_at(cells.len() / 2);
        [a, b]
            .iter()
            .map(|part| {
                let mut r = RawColumn::default();
                part.iter().for_each(|c| r.push(c));
                r
            })
            .collect()
    }

    fn body(column: ColumnBuilder) -> Vec<u8> {
        let mut t = TableBuilder::new();
        t.push_column(column);
        t.finish().unwrap().body().to_vec()
    }

    #[test]
    fn integers_parse_in_one_pass_to_the_edges_of_i64() {
        assert_eq!(parse_integer("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_integer("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_integer("+9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_integer("007"), Some(7));
        assert_eq!(parse_integer("-0"), Some(0));
        for bad in ["9223372036854775808", "-9223372036854775809", "", "+", "-", "1.0", "1e3", " 1", "1 ", "--1", "١"] {
            assert_eq!(parse_integer(bad), None, "{bad:?}");
        }
    }

    /// The fused path (numbers parsed while inferred) gives what inferring, then
    /// converting, gives: the same type and the same column, cell for cell.
    #[test]
    fn the_fused_path_equals_infer_then_convert() {
        let columns: &[&[&str]] = &[
            &["1", "-2", "", "300", "+4"],
            &["1", "2.5", "", "-.5", "3e2"],
            &["", "", ""],
            &["1", "inf", "2"],
            &["1", "NaN"],
            &["1e400", "1"],
            &["9223372036854775808", "1"],
            &["true", "FALSE", ""],
            &["2024-01-02", "", "1999-12-31"],
            &["2024-01-02 03:04:05", "2024-01-02 03:04:06"],
            &["x", "1", ""],
            &["5.", ".5", "+1", "-1"],
            &["-128", "127"],
            &["-129", "127"],
            &["40000", "-1"],
            &["3000000000", "0"],
        ];
        for cells in columns {
            let raw = raw(cells);
            let (field, column) = infer_and_convert("c", &raw);
            let inferred = infer("c", &raw);
            assert_eq!(field.ty, inferred.ty, "{cells:?}");
            assert_eq!(body(column), body(convert_raw(inferred, &raw)), "{cells:?}");
        }
    }
}

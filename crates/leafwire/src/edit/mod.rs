//! Editing a document on its bytes (spec §8): `Editor` changes values addressed by JSON
//! Pointer without decoding the document.
//!
//! Scalars that fit their container's slot width are rewritten in place; anything else
//! writes the changed block anew at `end` with spare capacity and points the parent's slot
//! (or the root record) at the copy, relocating parents in turn when the new offset needs
//! a wider slot. Old blocks are zeroed and counted in the root record's `garbage`. Every
//! check that can fail runs before the first byte is written, so an error leaves the
//! document unchanged.

mod bytes;
mod dictionary;
mod file;
mod integrity;
mod io;
mod write;

use std::borrow::Cow;

use smallvec::SmallVec;

use crate::error::{Category, Error, Result};
use crate::format::{hash, tag, ElementType, RECORD_A, RECORD_B, RECORD_LEN};
use crate::format::container::Geometry;
use crate::format::header::{read_header, RootRecord};
use crate::format::typed::TypedHeader;
use crate::read::{array_index, Document};
use crate::value::Value;

/// Default `garbage / end` ratio above which an edit compacts the document.
pub const DEFAULT_COMPACT_THRESHOLD: f64 = 0.5;

/// Default garbage, in bytes, below which no edit compacts automatically, whatever the
/// ratio: compaction rewrites the whole document, and on a small document a burst of
/// edits would otherwise pay for it again and again to reclaim a few kilobytes (the
/// base threshold plus scale factor rule of PostgreSQL's autovacuum).
pub const DEFAULT_COMPACT_MIN_GARBAGE: u64 = 64 << 10;

/// How much of a document an editor checks when it opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trust {
    /// Full validation (spec §9), in time proportional to the document: the default, for
    /// bytes from anywhere.
    #[default]
    Untrusted,
    /// The header, the active root record and the dictionary's geometry only, in O(1): for
    /// files this program or a trusted writer produced. A damaged document is still never
    /// a panic or unsafe (every read is checked); it gives errors, or wrong values, from
    /// the edits that reach the damage. Run [`crate::validate`] on files you do not trust.
    Trusted,
}

/// A number written into a typed array element by [`Editor::set_element`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    /// An integer above `i64::MAX` (for u64 arrays); `From<u64>` picks `Int` below that.
    UInt(u64),
    Float(f64),
}

impl From<i64> for Number {
    fn from(v: i64) -> Number {
        Number::Int(v)
    }
}

impl From<u64> for Number {
    fn from(v: u64) -> Number {
        i64::try_from(v).map_or(Number::UInt(v), Number::Int)
    }
}

impl From<f64> for Number {
    fn from(v: f64) -> Number {
        Number::Float(v)
    }
}

/// An in-memory document open for editing. Every operation leaves bytes that pass
/// [`crate::validate`]; a failed operation leaves them unchanged.
pub struct Editor {
    buf: bytes::EditBytes,
    record: RootRecord,
    record_at: usize,
    compact_threshold: f64,
    compact_min_garbage: u64,
    /// Set when editing a file (spec §8.4).
    file: Option<file::FileState>,
    /// Set when the document carries page checksums (spec §2.3).
    checksums: Option<integrity::Checksums>,
}

/// One step of a resolved path: child `index` of the container at `pos`.
#[derive(Debug, Clone, Copy)]
struct Step {
    pos: usize,
    tag: u8,
    index: usize,
}

/// The steps from the root to a container; paths are short, so they live on the stack.
type Chain = SmallVec<[Step; 8]>;

/// Where a pointer's last token lands inside its parent container.
enum Target<'k> {
    /// An existing child: its index and (tag, payload).
    Child(usize, (u8, u64)),
    /// A missing object key or intmap key, or `-` / `count` of an array: a new child.
    New(NewKey<'k>),
}

enum NewKey<'k> {
    Array,
    Object(&'k str),
    IntMap(i64),
}

impl Editor {
    /// Opens `bytes` for editing after validating them fully; an invalid document is
    /// refused with the validation error. An interrupted commit's journal (spec §8.5) is
    /// applied first.
    pub fn new(bytes: Vec<u8>) -> Result<Editor> {
        Editor::new_with(bytes, Trust::Untrusted)
    }

    /// [`Editor::new`], validating as `trust` says.
    pub fn new_with(bytes: Vec<u8>, trust: Trust) -> Result<Editor> {
        Editor::from_bytes(bytes::EditBytes::Owned(bytes), trust)
    }

    fn from_bytes(mut bytes: bytes::EditBytes, trust: Trust) -> Result<Editor> {
        crate::format::journal::finish(&mut bytes)?;
        if trust == Trust::Untrusted {
            crate::validate(&bytes)?;
        }
        let record = read_header(&bytes)?;
        // The dictionary's geometry is checked even when trusted: every key lookup needs it.
        Document::with_record(&bytes, record)?;
        let mut image = [0u8; RECORD_LEN];
        record.write(&mut image);
        let record_at = if bytes[RECORD_A..RECORD_A + RECORD_LEN] == image { RECORD_A } else { RECORD_B };
        crate::format::sink::ByteSink::truncate(&mut bytes, record.end as usize);
        let checksums = if crate::format::integrity::is_on(&bytes) { Some(integrity::Checksums::open(&bytes, bytes.len())?) } else { None };
        Ok(Editor { buf: bytes, record, record_at, compact_threshold: DEFAULT_COMPACT_THRESHOLD, compact_min_garbage: DEFAULT_COMPACT_MIN_GARBAGE, file: None, checksums })
    }

    /// Sets the `garbage / end` ratio above which edits compact automatically (0 disables),
    /// once at least [`Editor::set_compact_min_garbage`] bytes are garbage.
    pub fn set_compact_threshold(&mut self, threshold: f64) {
        self.compact_threshold = threshold;
    }

    /// Sets the garbage (in bytes) an edit must leave before the ratio of
    /// [`Editor::set_compact_threshold`] is considered (default
    /// [`DEFAULT_COMPACT_MIN_GARBAGE`]; 0 compacts on the ratio alone).
    pub fn set_compact_min_garbage(&mut self, bytes: u64) {
        self.compact_min_garbage = bytes;
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf.into_vec()
    }

    /// Whether the editor works on a private mapping of its file ([`Editor::map_file`])
    /// rather than on a copy in memory.
    pub fn is_mapped(&self) -> bool {
        self.buf.is_mapped()
    }

    /// A lazy reader over the current bytes.
    pub fn document(&self) -> Result<Document<'_>> {
        Document::with_record(&self.buf, self.record)
    }

    /// Bytes below `end` that no longer belong to the value.
    pub fn garbage(&self) -> u64 {
        self.record.garbage
    }

    /// Rewrites the document canonically (spec §7), dropping all garbage.
    pub fn compact(&mut self) -> Result<()> {
        let value = crate::decode(&self.buf[..self.record.end as usize])?;
        let mut compacted = crate::encode(&value)?;
        self.reseal_compacted(&mut compacted)?;
        self.buf = bytes::EditBytes::Owned(compacted);
        self.record = read_header(&self.buf)?;
        self.record_at = RECORD_A;
        self.compacted_file();
        Ok(())
    }

    /// Replaces the value at `pointer`, or adds it when the last token names a missing
    /// object or intmap key, or is `-` in an array.
    pub fn set(&mut self, pointer: &str, value: &Value) -> Result<()> {
        self.at_pointer(pointer, |ed, path| ed.set_in(path, value))
    }

    /// [`Editor::set`] at a path of unescaped tokens (`&["users", "7", "name"]`), for
    /// callers that hold keys rather than pointers: no escaping, no parsing.
    pub fn set_path(&mut self, path: &[&str], value: &Value) -> Result<()> {
        self.at_path(path, |ed, path| ed.set_in(path, value))
    }

    /// Inserts `value` into the array at `pointer`'s parent, before the index its last
    /// token names (`-` or the length appends).
    pub fn insert(&mut self, pointer: &str, value: &Value) -> Result<()> {
        self.at_pointer(pointer, |ed, path| ed.insert_in(path, value))
    }

    /// Appends `value` to the array at `pointer`.
    pub fn push(&mut self, pointer: &str, value: &Value) -> Result<()> {
        self.at_pointer(pointer, |ed, path| ed.push_in(path, value))
    }

    /// [`Editor::push`] to the array at a path of unescaped tokens.
    pub fn push_path(&mut self, path: &[&str], value: &Value) -> Result<()> {
        self.at_path(path, |ed, path| ed.push_in(path, value))
    }

    /// Removes an object or intmap key, or an array element (later ones shift down).
    pub fn delete(&mut self, pointer: &str) -> Result<()> {
        self.at_pointer(pointer, |ed, path| ed.delete_in(path))
    }

    /// [`Editor::delete`] at a path of unescaped tokens.
    pub fn delete_path(&mut self, path: &[&str]) -> Result<()> {
        self.at_path(path, |ed, path| ed.delete_in(path))
    }

    /// Renames the object key (or intmap key) that `pointer` names to `new_key`.
    pub fn rename(&mut self, pointer: &str, new_key: &str) -> Result<()> {
        self.at_pointer(pointer, |ed, path| ed.rename_in(path, new_key))
    }

    /// Writes element `index` (flat, row-major) of the typed array at `pointer` in place.
    /// Integer element types take `Number::Int` in their range (bool: 0 or 1); float types
    /// take `Number::Float`; an f64 array with an integer mask also takes exact integers.
    pub fn set_element(&mut self, pointer: &str, index: usize, value: impl Into<Number>) -> Result<()> {
        let value = value.into();
        self.at_pointer(pointer, |ed, path| ed.set_element_in(path, index, value))
    }

    /// Writes row `row` of the numeric column `column` of the table at `pointer` in place
    /// (spec §15.3): `Some(number)` of the column's element type (dates and date-times take
    /// their integer counts), or `None` to make the cell missing, which needs a column
    /// with a validity bitmap (one written with a missing cell). String cells and the
    /// table's shape change by setting a new table.
    pub fn set_cell(&mut self, pointer: &str, column: &str, row: usize, value: Option<Number>) -> Result<()> {
        self.at_pointer(pointer, |ed, path| ed.set_cell_in(path, column, row, value))
    }

    /// Runs an edit on the tokens of `pointer`; its errors carry the pointer.
    fn at_pointer<R>(&mut self, pointer: &str, edit: impl FnOnce(&mut Editor, &[&str]) -> Result<R>) -> Result<R> {
        let tokens = parse_pointer(pointer).map_err(|e| e.with_path(pointer))?;
        let path: SmallVec<[&str; 8]> = tokens.iter().map(|t| t.as_ref()).collect();
        edit(self, &path).map_err(|e| e.with_path(pointer))
    }

    /// Runs an edit on a path of tokens; its errors carry the path as a pointer.
    fn at_path<R>(&mut self, path: &[&str], edit: impl FnOnce(&mut Editor, &[&str]) -> Result<R>) -> Result<R> {
        edit(self, path).map_err(|e| e.with_path(pointer_of(path)))
    }

    fn set_in(&mut self, path: &[&str], value: &Value) -> Result<()> {
        let Some((last, parents)) = path.split_last() else {
            check_value(value, 0)?;
            let old = (self.record.root_tag, self.record.root);
            let (t, p) = self.write_value(value)?;
            self.write_slot(&[], t, p)?;
            self.free_value(old.0, old.1)?;
            return self.finish();
        };
        let (mut chain, ptag, ppay) = self.resolve(parents)?;
        let target = self.target(ptag, ppay, last)?;
        check_value(value, chain.len() + 1)?;
        let pos = ppay as usize;
        match target {
            Target::Child(index, old) => {
                chain.push(Step { pos, tag: ptag, index });
                if let Some(t) = self.overwrite_data(old, value)? {
                    if t != old.0 {
                        self.write_slot(&chain, t, old.1)?;
                    }
                    return self.finish();
                }
                let (t, p) = self.write_value(value)?;
                self.write_slot(&chain, t, p)?;
                self.free_value(old.0, old.1)?;
            }
            Target::New(key) => {
                let key = match key {
                    NewKey::Array => 0,
                    NewKey::Object(k) => self.ensure_key(k)?,
                    NewKey::IntMap(k) => k as u64,
                };
                let (t, p) = self.write_value(value)?;
                let count = self.geometry(pos, ptag)?.count;
                self.insert_child(&chain, Step { pos, tag: ptag, index: count }, key, t, p)?;
            }
        }
        self.finish()
    }

    fn insert_in(&mut self, path: &[&str], value: &Value) -> Result<()> {
        let Some((last, parents)) = path.split_last() else {
            return Err(Error::new(Category::WrongType, "cannot insert at the root"));
        };
        let (chain, ptag, ppay) = self.resolve(parents)?;
        if ptag != tag::ARRAY {
            return Err(wrong_kind("an array", ptag, ppay));
        }
        let count = self.geometry(ppay as usize, ptag)?.count;
        let index = if *last == "-" { count } else { array_index(last.as_bytes()).filter(|&i| i <= count).ok_or_else(|| missing("array index out of range"))? };
        check_value(value, chain.len() + 1)?;
        let (t, p) = self.write_value(value)?;
        self.insert_child(&chain, Step { pos: ppay as usize, tag: ptag, index }, 0, t, p)?;
        self.finish()
    }

    fn push_in(&mut self, path: &[&str], value: &Value) -> Result<()> {
        let mut to_end: SmallVec<[&str; 8]> = path.iter().copied().collect();
        to_end.push("-");
        self.insert_in(&to_end, value)
    }

    fn delete_in(&mut self, path: &[&str]) -> Result<()> {
        let Some((last, parents)) = path.split_last() else {
            return Err(Error::new(Category::WrongType, "cannot delete the root"));
        };
        let (chain, ptag, ppay) = self.resolve(parents)?;
        let Target::Child(index, old) = self.target(ptag, ppay, last)? else {
            return Err(missing("no such child"));
        };
        let g = self.geometry(ppay as usize, ptag)?;
        let mut entries = self.read_entries(&g)?;
        entries.remove(index);
        self.store_container(&chain, &g, entries)?;
        self.free_value(old.0, old.1)?;
        self.finish()
    }

    fn rename_in(&mut self, path: &[&str], new_key: &str) -> Result<()> {
        let Some((last, parents)) = path.split_last() else {
            return Err(Error::new(Category::WrongType, "the root has no key"));
        };
        let (chain, ptag, ppay) = self.resolve(parents)?;
        if ptag != tag::OBJECT && ptag != tag::INTMAP {
            return Err(wrong_kind("an object or intmap", ptag, ppay));
        }
        let Target::Child(index, _) = self.target(ptag, ppay, last)? else {
            return Err(missing("no such key"));
        };
        if new_key == *last {
            return Ok(());
        }
        if let Target::Child(..) = self.target(ptag, ppay, new_key)? {
            return Err(Error::new(Category::DuplicateKey, format!("key \"{new_key}\" already exists")));
        }
        let key = match ptag {
            tag::OBJECT => self.ensure_key(new_key)?,
            _ => new_key.parse::<i64>().map_err(|_| missing(&format!("\"{new_key}\" is not an integer key")))? as u64,
        };
        let g = self.geometry(ppay as usize, ptag)?;
        let mut entries = self.read_entries(&g)?;
        entries.keys[index] = key;
        self.store_container(&chain, &g, entries)?;
        self.finish()
    }

    fn set_element_in(&mut self, path: &[&str], index: usize, value: Number) -> Result<()> {
        let (_, t, p) = self.resolve(path)?;
        if t != tag::TYPED {
            return Err(wrong_kind("a typed array", t, p));
        }
        let h = TypedHeader::parse(&self.buf, p)?;
        if index >= h.count {
            return Err(missing(&format!("element {index} of a typed array of {}", h.count)));
        }
        let bytes = element_bytes(h.element, value, h.mask_pos.is_some()).ok_or_else(|| {
            Error::new(Category::WrongType, format!("{value:?} does not fit a {} element", h.element.name())).at(p)
        })?;
        let at = h.data_pos + index * h.element.size();
        self.touch(at, bytes.len());
        self.buf[at..at + bytes.len()].copy_from_slice(&bytes);
        if let Some(mask) = h.mask_pos {
            self.touch(mask + index / 8, 1);
            let bit = 1u8 << (index % 8);
            match value {
                Number::Int(_) | Number::UInt(_) => self.buf[mask + index / 8] |= bit,
                Number::Float(_) => self.buf[mask + index / 8] &= !bit,
            }
        }
        self.finish()
    }

    fn set_cell_in(&mut self, path: &[&str], column: &str, row: usize, value: Option<Number>) -> Result<()> {
        use crate::format::table::{TableBlock, KIND_NUMBERS};
        let (_, t, p) = self.resolve(path)?;
        if t != tag::TABLE {
            return Err(wrong_kind("a table", t, p));
        }
        let table = TableBlock::parse(&self.buf, p)?;
        let i = table.find(&self.buf, column.as_bytes())?.ok_or_else(|| missing(&format!("column \"{column}\"")))?;
        let entry = table.entry(&self.buf, i)?;
        if entry.kind != KIND_NUMBERS {
            return Err(Error::new(Category::WrongType, format!("column \"{column}\" holds strings: set a new table to change them")).at(p));
        }
        if row >= table.rows {
            return Err(missing(&format!("row {row} of a table of {}", table.rows)));
        }
        let size = entry.element.size();
        let bytes = match value {
            Some(v) => element_bytes(entry.element, v, false)
                .ok_or_else(|| Error::new(Category::WrongType, format!("{v:?} does not fit a {} cell", entry.element.name())).at(p))?,
            // A missing cell holds zero (spec §15.1).
            None => vec![0; size],
        };
        let bit = match (&entry.validity, value) {
            (Some(v), _) => Some(v.start + row / 8),
            (None, Some(_)) => None,
            (None, None) => {
                return Err(Error::new(Category::Unsupported, format!("column \"{column}\" has no validity bitmap: set a new table to make a cell missing")).at(p))
            }
        };
        let at = entry.data.start + row * size;
        self.touch(at, size);
        self.buf[at..at + size].copy_from_slice(&bytes);
        if let Some(b) = bit {
            self.touch(b, 1);
            match value {
                Some(_) => self.buf[b] |= 1 << (row % 8),
                None => self.buf[b] &= !(1 << (row % 8)),
            }
        }
        self.finish()
    }

    /// Writes the root record and compacts when garbage passes the threshold.
    fn finish(&mut self) -> Result<()> {
        self.note_change();
        self.reseal()?;
        self.record.end = self.buf.len() as u64;
        self.write_record();
        let ratio = self.record.garbage as f64 / self.record.end as f64;
        if self.compact_threshold > 0.0 && ratio > self.compact_threshold && self.record.garbage >= self.compact_min_garbage {
            self.compact()?;
        }
        Ok(())
    }

    fn write_record(&mut self) {
        let at = self.record_at;
        self.record.write(&mut self.buf[at..at + RECORD_LEN]);
    }

    /// Follows `path` from the root; returns the steps taken and the value reached.
    fn resolve(&self, path: &[&str]) -> Result<(Chain, u8, u64)> {
        let (mut t, mut p) = (self.record.root_tag, self.record.root);
        let mut chain = Chain::new();
        for token in path {
            if !is_container(t) {
                return Err(missing(&format!("cannot step into a value with tag {t:#04x}")));
            }
            let Target::Child(index, child) = self.target(t, p, token)? else {
                return Err(missing(&format!("no child \"{token}\"")));
            };
            chain.push(Step { pos: p as usize, tag: t, index });
            (t, p) = child;
        }
        Ok((chain, t, p))
    }

    /// Where `token` lands in the container (t, p).
    fn target<'k>(&self, t: u8, p: u64, token: &'k str) -> Result<Target<'k>> {
        let c = match t {
            tag::ARRAY | tag::OBJECT | tag::INTMAP => Geometry::parse(&self.buf, p, t)?,
            _ => return Err(wrong_kind("a container", t, p)),
        };
        let existing = |i: usize| Ok(Target::Child(i, c.child(&self.buf, i)?));
        match t {
            tag::ARRAY => {
                if token == "-" {
                    return Ok(Target::New(NewKey::Array));
                }
                match array_index(token.as_bytes()) {
                    Some(i) if i < c.count => existing(i),
                    Some(i) if i == c.count => Ok(Target::New(NewKey::Array)),
                    _ => Err(missing(&format!("no element \"{token}\" in an array of {}", c.count))),
                }
            }
            tag::INTMAP => {
                let key = token.parse::<i64>().map_err(|_| missing(&format!("\"{token}\" is not an integer key")))?;
                match c.find(&self.buf, key as u64, key as u64)? {
                    Some(i) => existing(i),
                    None => Ok(Target::New(NewKey::IntMap(key))),
                }
            }
            _ => match self.find_key(&c, token)? {
                Some(i) => existing(i),
                None => Ok(Target::New(NewKey::Object(token))),
            },
        }
    }

    /// The child of object `c` with key `key`.
    fn find_key(&self, c: &Geometry, key: &str) -> Result<Option<usize>> {
        let h = hash::key_hash(key.as_bytes());
        match self.dictionary()?.find(&self.buf, key.as_bytes(), h)? {
            Some(id) => c.find(&self.buf, id, h),
            None => Ok(None),
        }
    }
}

fn is_container(t: u8) -> bool {
    matches!(t, tag::ARRAY | tag::OBJECT | tag::INTMAP)
}

fn missing(what: &str) -> Error {
    Error::not_found(what.to_owned())
}

fn wrong_kind(expected: &str, t: u8, p: u64) -> Error {
    let err = Error::new(Category::WrongType, format!("expected {expected}, found a value with tag {t:#04x}"));
    if tag::is_pointer(t) { err.at(p) } else { err }
}

/// The unescaped tokens of a pointer; most pointers have a few short tokens, none escaped,
/// so tokens borrow from the pointer and the list lives on the stack.
type Tokens<'p> = SmallVec<[Cow<'p, str>; 8]>;

/// Splits an RFC 6901 pointer into unescaped tokens.
fn parse_pointer(pointer: &str) -> Result<Tokens<'_>> {
    let mut tokens = Tokens::new();
    if pointer.is_empty() {
        return Ok(tokens);
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(missing("a JSON Pointer must be empty or start with '/'"));
    };
    for token in rest.split('/') {
        if !token.contains('~') {
            tokens.push(Cow::Borrowed(token));
            continue;
        }
        let mut out = String::with_capacity(token.len());
        let mut chars = token.chars();
        while let Some(ch) = chars.next() {
            match ch {
                '~' => match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => return Err(missing("'~' must be followed by '0' or '1'")),
                },
                _ => out.push(ch),
            }
        }
        tokens.push(Cow::Owned(out));
    }
    Ok(tokens)
}

/// The JSON Pointer naming `path` (for error messages).
fn pointer_of(path: &[&str]) -> String {
    path.iter().map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1"))).collect()
}

/// Checks what `encode` would refuse or a validator reject, and the nesting depth, for a
/// value to be placed under `depth` containers.
fn check_value(v: &Value, depth: usize) -> Result<()> {
    match v {
        Value::BigNum(s) => {
            let out_of_range = s.parse::<i64>().is_err() && s.parse::<u64>().is_err();
            if !crate::format::is_bignum_text(s.as_bytes()) || !out_of_range {
                return Err(Error::new(Category::NotRepresentable, format!("\"{s}\" is not an integer outside the 64-bit range")));
            }
            Ok(())
        }
        Value::Array(_) | Value::Object(_) | Value::IntMap(_) => {
            if depth + 1 > crate::format::DEFAULT_MAX_DEPTH {
                return Err(Error::depth_limit(crate::format::DEFAULT_MAX_DEPTH));
            }
            let count = match v {
                Value::Array(a) => a.len(),
                Value::Object(m) => m.len(),
                Value::IntMap(m) => m.len(),
                _ => 0,
            };
            if count > u32::MAX as usize {
                return Err(Error::new(Category::LimitExceeded, "a container has more than 2^32-1 children"));
            }
            match v {
                Value::Array(a) => a.iter().try_for_each(|c| check_value(c, depth + 1)),
                Value::Object(m) => m.values().try_for_each(|c| check_value(c, depth + 1)),
                Value::IntMap(m) => m.values().try_for_each(|c| check_value(c, depth + 1)),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// The little-endian bytes of `value` as an element of type `t`, if it fits.
fn element_bytes(t: ElementType, value: Number, masked: bool) -> Option<Vec<u8>> {
    use ElementType::*;
    match (t, value) {
        (F64, Number::Float(v)) => Some(v.to_le_bytes().to_vec()),
        (F64, Number::Int(v)) if masked && v.unsigned_abs() <= 1 << 53 => Some((v as f64).to_le_bytes().to_vec()),
        (F32, Number::Float(v)) if !v.is_finite() || (v as f32).is_finite() => Some((v as f32).to_le_bytes().to_vec()),
        (Bool, Number::Int(v)) if v == 0 || v == 1 => Some(vec![v as u8]),
        (I8, Number::Int(v)) => i8::try_from(v).ok().map(|x| x.to_le_bytes().to_vec()),
        (I16, Number::Int(v)) => i16::try_from(v).ok().map(|x| x.to_le_bytes().to_vec()),
        (I32, Number::Int(v)) => i32::try_from(v).ok().map(|x| x.to_le_bytes().to_vec()),
        (I64, Number::Int(v)) => Some(v.to_le_bytes().to_vec()),
        (U8, Number::Int(v)) => u8::try_from(v).ok().map(|x| x.to_le_bytes().to_vec()),
        (U16, Number::Int(v)) => u16::try_from(v).ok().map(|x| x.to_le_bytes().to_vec()),
        (U32, Number::Int(v)) => u32::try_from(v).ok().map(|x| x.to_le_bytes().to_vec()),
        (U64, Number::Int(v)) => u64::try_from(v).ok().map(|x| x.to_le_bytes().to_vec()),
        (U64, Number::UInt(v)) => Some(v.to_le_bytes().to_vec()),
        _ => None,
    }
}

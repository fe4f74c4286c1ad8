//! The hot path of `Node::pointer` and `Node::get`: one object or array step computed
//! straight from the container header, reading only the bytes the step needs. It checks
//! what `Container::parse` checks, with errors built out of line so the common path
//! stays a few dozen instructions.

use super::container::Dict;
use crate::error::{Error, Result};
use crate::layout::{self, align, container, read_uint, sign_extend, tag, HEADER_LEN};

/// Where a container's arrays are, as far as a lookup needs.
#[derive(Debug, Clone, Copy)]
struct Header {
    count: usize,
    tags_at: usize,
    keys_at: usize,
    key_width: usize,
    slots_at: usize,
    width: usize,
    /// Start of the hash index, if the container has one.
    index_at: Option<usize>,
    /// The index's table size and entry width (spec §4.1), when there is one.
    index_table: usize,
    index_entry: usize,
}

#[inline(always)]
fn header(buf: &[u8], offset: u64, tag: u8) -> Result<Header> {
    if offset < HEADER_LEN as u64 || offset > (buf.len() as u64).saturating_sub(3) {
        return Err(bad_offset(offset));
    }
    let pos = offset as usize;
    let layout_byte = buf[pos];
    let (count, q) = match buf[pos + 1] {
        c if c < 0x80 && layout_byte & container::HAS_CAPACITY == 0 => (c as u64, pos + 2),
        _ => return header_slow(buf, offset, tag),
    };
    let key_code = (layout_byte >> container::KEY_WIDTH_SHIFT) & 3;
    let invalid = layout_byte & container::RESERVED != 0
        || match tag {
            tag::ARRAY => key_code != 0 || layout_byte & container::HAS_INDEX != 0,
            _ => key_code == 3,
        };
    if invalid {
        return Err(bad_layout(offset, layout_byte));
    }
    let count = count as usize;
    let width = 1usize << (layout_byte & container::WIDTH_MASK);
    let key_width = if tag == tag::ARRAY { 0 } else { 1usize << key_code };
    let keys_at = q + count;
    let slots_at = align(keys_at + count * key_width, width);
    let mut end = slots_at + count * width;
    let (mut index_at, mut index_table, mut index_entry) = (None, 0, 0);
    if layout_byte & container::HAS_INDEX != 0 {
        (index_table, index_entry) = layout::index_geometry(count);
        let at = align(end, index_entry);
        end = at + index_table * index_entry;
        index_at = Some(at);
    }
    if end > buf.len() {
        return Err(too_long(offset));
    }
    Ok(Header { count, tags_at: q, keys_at, key_width, slots_at, width, index_at, index_table, index_entry })
}

/// Headers with a capacity or a count of 128 and more: the general parser.
#[cold]
fn header_slow(buf: &[u8], offset: u64, tag: u8) -> Result<Header> {
    let c = super::container::Container::parse(buf, offset, tag)?;
    let (index_table, index_entry) = if c.has_index() { layout::index_geometry(c.capacity as usize) } else { (0, 0) };
    Ok(Header {
        index_table,
        index_entry,
        count: c.count,
        tags_at: c.tags_at(),
        keys_at: c.keys_at(),
        key_width: c.key_width as usize,
        slots_at: c.slots_at(),
        width: c.width as usize,
        index_at: c.has_index().then(|| c.index_at()),
    })
}

#[inline(always)]
fn child(buf: &[u8], h: &Header, offset: u64, i: usize) -> Result<(u8, u64)> {
    let t = buf[h.tags_at + i];
    let raw = read_uint(&buf[h.slots_at..], h.width, i);
    match t {
        tag::INT => Ok((t, sign_extend(raw, h.width) as u64)),
        tag::F64 | tag::UINT if h.width != 8 => Err(bad_child(offset, i, t)),
        tag::F32 if h.width < 4 => Err(bad_child(offset, i, t)),
        t if t > tag::LAST => Err(bad_child(offset, i, t)),
        _ => Ok((t, raw)),
    }
}

/// Child `i` of the array at `offset`.
#[inline]
pub(crate) fn array_child(buf: &[u8], offset: u64, i: usize) -> Result<(u8, u64)> {
    let h = header(buf, offset, tag::ARRAY)?;
    if i >= h.count {
        return Err(Error::not_found(format!("index {i} out of range for length {}", h.count)).at(offset));
    }
    child(buf, &h, offset, i)
}

/// The child under `key` in the object at `offset`.
#[inline]
pub(crate) fn object_child(buf: &[u8], dict: &Dict, offset: u64, key: &[u8]) -> Result<(u8, u64)> {
    let object = PreparedObject::parse(buf, offset)?;
    object.child(buf, dict, key)
}

/// An object whose header has been read once, for any number of key lookups.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PreparedObject {
    header: Header,
    offset: u64,
}

impl PreparedObject {
    #[inline]
    pub fn parse(buf: &[u8], offset: u64) -> Result<PreparedObject> {
        Ok(PreparedObject { header: header(buf, offset, tag::OBJECT)?, offset })
    }

    pub fn len(&self) -> usize {
        self.header.count
    }

    /// The (tag, payload) under `key`.
    #[inline]
    pub fn child(&self, buf: &[u8], dict: &Dict, key: &[u8]) -> Result<(u8, u64)> {
        let (h, offset) = (&self.header, self.offset);
        let hash = layout::key_hash(key);
        let Some(id) = dict.find(buf, key, hash)? else {
            return Err(absent(offset, key));
        };
        let found = match h.index_at {
            None if h.key_width == 1 => buf[h.keys_at..h.keys_at + h.count].iter().position(|&k| k as u64 == id),
            None => (0..h.count).find(|&i| read_uint(&buf[h.keys_at..], h.key_width, i) == id),
            Some(at) => probe(buf, h, at, hash, |i| read_uint(&buf[h.keys_at..], h.key_width, i) == id).map_err(|e| e.at(offset))?,
        };
        match found {
            Some(i) => child(buf, h, offset, i),
            None => Err(absent(offset, key)),
        }
    }
}

/// Linear probing in a container's hash index (spec §4.1).
fn probe(buf: &[u8], h: &Header, at: usize, hash: u64, matches: impl Fn(usize) -> bool) -> Result<Option<usize>> {
    let (table, entry) = (h.index_table, h.index_entry);
    let index = &buf[at..at + table * entry];
    let mut bucket = layout::home_bucket(hash, table);
    for _ in 0..table {
        let e = read_uint(index, entry, bucket) as usize;
        if e == 0 {
            return Ok(None);
        }
        if e > h.count {
            return Err(Error::malformed(at as u64, format!("hash index names child {} of {}", e - 1, h.count)));
        }
        if matches(e - 1) {
            return Ok(Some(e - 1));
        }
        bucket = (bucket + 1) & (table - 1);
    }
    Ok(None)
}

#[cold]
fn bad_offset(offset: u64) -> Error {
    Error::malformed(offset, format!("container offset {offset} outside the document"))
}

#[cold]
fn bad_layout(offset: u64, layout_byte: u8) -> Error {
    Error::malformed(offset, format!("invalid container layout byte {layout_byte:#04x}"))
}

#[cold]
fn too_long(offset: u64) -> Error {
    Error::malformed(offset, "container runs past the end of the document")
}

#[cold]
fn bad_child(offset: u64, i: usize, t: u8) -> Error {
    Error::malformed(offset, format!("child {i} has tag {t:#04x}, unknown or too wide for its slot width"))
}

#[cold]
fn absent(offset: u64, key: &[u8]) -> Error {
    Error::not_found(format!("no key \"{}\" in object", String::from_utf8_lossy(key))).at(offset)
}

//! Views of container blocks and of the key dictionary (spec §§4, 6): parsing a header
//! checks that every array the view hands out lies inside the document, so reading a
//! child afterwards is plain slice indexing.

use crate::error::{Error, Result};
use crate::layout::{self, align, checked_align, container, read_u32, read_uint, read_varint, sign_extend, tag};

/// Equality of short byte strings without a library call (keys are mostly short).
#[inline(always)]
fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 32 {
        return a == b;
    }
    let mut i = 0;
    while i + 8 <= a.len() {
        if a[i..i + 8] != b[i..i + 8] {
            return false;
        }
        i += 8;
    }
    a[i..].iter().zip(&b[i..]).all(|(x, y)| x == y)
}

/// A varint that is almost always one byte: that case inline, the rest out of line.
#[inline(always)]
fn small_varint(buf: &[u8], pos: usize) -> Result<(u64, usize)> {
    match buf.get(pos) {
        Some(&b) if b < 0x80 => Ok((b as u64, pos + 1)),
        _ => read_varint(buf, pos),
    }
}

/// The key dictionary: where its parts are, so keys can be read by id and found by text.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Dict {
    offsets_at: usize,
    bytes_at: usize,
    /// Where the table starts; key bytes end at or before it.
    table_at: usize,
    count: u32,
    table_size: u32,
}

impl Dict {
    pub fn parse(buf: &[u8], pos: u64) -> Result<Dict> {
        if pos == 0 {
            return Ok(Dict::default());
        }
        let malformed = |what: &str| Error::malformed(pos, format!("key dictionary: {what}"));
        let pos = usize::try_from(pos).map_err(|_| malformed("offset out of range"))?;
        if pos % 4 != 0 || pos < layout::HEADER_LEN {
            return Err(malformed("offset not a multiple of 4 past the header"));
        }
        let field = |i: usize| read_u32(buf, pos + 4 * i).ok_or_else(|| malformed("truncated"));
        let (count, capacity, bytes_len, table_size) = (field(0)?, field(1)?, field(2)?, field(3)? as usize);
        if count > capacity {
            return Err(malformed("count exceeds capacity"));
        }
        if table_size != 0 && (!table_size.is_power_of_two() || table_size < 2 * capacity as usize || table_size > u32::MAX as usize) {
            return Err(malformed("hash table size is not a power of two at least twice the capacity"));
        }
        let offsets_at = pos + 16;
        let layout_end = (capacity as usize + 1)
            .checked_mul(4)
            .and_then(|o| offsets_at.checked_add(o))
            .and_then(|bytes_at| Some((bytes_at, bytes_at.checked_add(bytes_len as usize)?)))
            .and_then(|(bytes_at, end)| Some((bytes_at, checked_align(end, 4)?)))
            .and_then(|(bytes_at, table_at)| Some((bytes_at, table_at, table_at.checked_add(table_size.checked_mul(4)?)?)));
        match layout_end {
            Some((bytes_at, table_at, end)) if end <= buf.len() => {
                Ok(Dict { offsets_at, bytes_at, table_at, count, table_size: table_size as u32 })
            }
            _ => Err(malformed("extends past the end of the document")),
        }
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn pos(&self) -> usize {
        self.offsets_at - 16
    }

    /// Byte range of the whole block.
    pub fn end(&self) -> usize {
        self.table_at + 4 * self.table_size as usize
    }

    pub fn table(&self) -> (usize, usize) {
        (self.table_at, self.table_size as usize)
    }

    /// The bytes of key `id`; checks the id and the offsets.
    #[inline]
    pub fn key<'a>(&self, buf: &'a [u8], id: u64) -> Result<&'a [u8]> {
        if id >= self.count as u64 {
            return Err(self.bad_id(id));
        }
        // In bounds: parse checked that capacity + 1 offsets fit, and id < count ≤ capacity.
        let at = self.offsets_at + 4 * id as usize;
        let start = u32::from_le_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
        let end = u32::from_le_bytes(buf[at + 4..at + 8].try_into().unwrap()) as usize;
        if start > end || self.bytes_at + end > self.table_at {
            return Err(bad_offsets(at, id, start, end));
        }
        Ok(&buf[self.bytes_at + start..self.bytes_at + end])
    }

    #[cold]
    fn bad_id(&self, id: u64) -> Error {
        Error::malformed(self.pos() as u64, format!("key id {id} is not in the dictionary of {} keys", self.count))
    }

    /// Key `id` as UTF-8 text.
    pub fn key_str<'a>(&self, buf: &'a [u8], id: u64) -> Result<&'a str> {
        let bytes = self.key(buf, id)?;
        super::utf8(bytes).ok_or_else(|| Error::malformed(self.pos() as u64, format!("key {id} is not valid UTF-8")))
    }

    /// The id of the key with these bytes and hash, or `None` if no object uses it.
    #[inline]
    pub fn find(&self, buf: &[u8], key: &[u8], hash: u64) -> Result<Option<u64>> {
        if self.table_size == 0 {
            for id in 0..self.count as u64 {
                if bytes_eq(self.key(buf, id)?, key) {
                    return Ok(Some(id));
                }
            }
            return Ok(None);
        }
        let size = self.table_size as usize;
        let mut bucket = layout::home_bucket(hash, size);
        for _ in 0..size {
            let at = self.table_at + 4 * bucket;
            let entry = u32::from_le_bytes(buf[at..at + 4].try_into().unwrap()) as u64;
            if entry == 0 {
                return Ok(None);
            }
            if bytes_eq(self.key(buf, entry - 1)?, key) {
                return Ok(Some(entry - 1));
            }
            bucket = (bucket + 1) & (size - 1);
        }
        Ok(None)
    }
}

#[cold]
fn bad_offsets(at: usize, id: u64, start: usize, end: usize) -> Error {
    Error::malformed(at as u64, format!("key {id} has offsets {start}..{end} outside the key bytes"))
}

/// A parsed container header: where its arrays are. `parse` proves every array lies
/// inside the document, so reading a child afterwards needs no further checks that can
/// fail (slice indexing still guards against a bug here).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Container<'a> {
    buf: &'a [u8],
    pub pos: usize,
    pub count: usize,
    tags_at: usize,
    keys_at: usize,
    slots_at: usize,
    index_at: usize,
    /// Hash table entries (0 when there is no index).
    index_size: usize,
    pub capacity: u32,
    pub tag: u8,
    pub width: u8,
    pub key_width: u8,
    pub index_entry: u8,
}

impl<'a> Container<'a> {
    #[inline]
    pub fn parse(buf: &'a [u8], offset: u64, tag: u8) -> Result<Container<'a>> {
        if offset < layout::HEADER_LEN as u64 || offset >= buf.len() as u64 {
            return Err(Error::malformed(offset, format!("container offset {offset} outside the document")));
        }
        let pos = offset as usize;
        let layout_byte = buf[pos];
        let key_code = (layout_byte >> container::KEY_WIDTH_SHIFT) & 3;
        let bad_keys = match tag {
            tag::ARRAY => key_code != 0 || layout_byte & container::HAS_INDEX != 0,
            tag::OBJECT => key_code == 3,
            _ => false,
        };
        if layout_byte & container::RESERVED != 0 || bad_keys {
            return Err(Error::malformed(offset, format!("invalid container layout byte {layout_byte:#04x} for tag {tag:#04x}")));
        }
        let width = 1usize << (layout_byte & container::WIDTH_MASK);
        let key_width = if tag == tag::ARRAY { 0 } else { 1usize << key_code };
        let (count, mut q) = small_varint(buf, pos + 1)?;
        let mut capacity = count;
        if layout_byte & container::HAS_CAPACITY != 0 {
            (capacity, q) = small_varint(buf, q)?;
        }
        if count > capacity || capacity > u32::MAX as u64 {
            return Err(Error::malformed(offset, format!("count {count} / capacity {capacity} are inconsistent or over 2^32-1")));
        }
        // No overflow below: q < 2^63 and every term is at most 2^32 × 16.
        let cap = capacity as usize;
        let keys_at = q + cap;
        let slots_at = align(keys_at + cap * key_width, width);
        let mut end = slots_at + cap * width;
        let (mut index_at, mut index_size, mut index_entry) = (end, 0, 0);
        if layout_byte & container::HAS_INDEX != 0 {
            let (table, entry) = layout::index_geometry(cap);
            index_at = align(end, entry);
            end = index_at + table * entry;
            (index_size, index_entry) = (table, entry as u8);
        }
        if end > buf.len() {
            return Err(Error::malformed(offset, format!("container of capacity {cap} runs past the end of the document")));
        }
        Ok(Container {
            buf,
            pos,
            count: count as usize,
            tags_at: q,
            keys_at,
            slots_at,
            index_at,
            index_size,
            capacity: capacity as u32,
            tag,
            width: width as u8,
            key_width: key_width as u8,
            index_entry,
        })
    }

    pub fn tags_at(&self) -> usize {
        self.tags_at
    }

    pub fn keys_at(&self) -> usize {
        self.keys_at
    }

    pub fn slots_at(&self) -> usize {
        self.slots_at
    }

    pub fn index_at(&self) -> usize {
        self.index_at
    }

    pub fn tags(&self) -> &'a [u8] {
        &self.buf[self.tags_at..self.tags_at + self.capacity as usize]
    }

    pub fn keys(&self) -> &'a [u8] {
        &self.buf[self.keys_at..self.keys_at + self.capacity as usize * self.key_width as usize]
    }

    pub fn slots(&self) -> &'a [u8] {
        &self.buf[self.slots_at..self.slots_at + self.capacity as usize * self.width as usize]
    }

    pub fn index(&self) -> &'a [u8] {
        &self.buf[self.index_at..self.index_at + self.index_size * self.index_entry as usize]
    }

    pub fn has_index(&self) -> bool {
        self.index_size != 0
    }

    /// Byte just past the block.
    pub fn end(&self) -> usize {
        if self.has_index() { self.index_at + self.index_size * self.index_entry as usize } else { self.slots_at + self.capacity as usize * self.width as usize }
    }

    /// Tag and payload of child `i` (< count), with the width rules of spec §3.2 checked.
    #[inline]
    pub fn child(&self, i: usize) -> Result<(u8, u64)> {
        let t = self.buf[self.tags_at + i];
        let width = self.width as usize;
        let raw = read_uint(&self.buf[self.slots_at..], width, i);
        let ok = match t {
            tag::INT => return Ok((t, sign_extend(raw, width) as u64)),
            tag::F64 | tag::UINT => width == 8,
            tag::F32 => width >= 4,
            _ => t <= tag::LAST,
        };
        if !ok {
            return Err(Error::malformed(self.pos as u64, format!("child {i} has tag {t:#04x}, unknown or too wide for slot width {width}")));
        }
        Ok((t, raw))
    }

    /// Raw key of child `i`: a key id for objects, a sign-extended integer for intmaps.
    #[inline]
    pub fn key(&self, i: usize) -> u64 {
        let width = self.key_width as usize;
        let raw = read_uint(&self.buf[self.keys_at..], width, i);
        if self.tag == tag::INTMAP {
            sign_extend(raw, width) as u64
        } else {
            raw
        }
    }

    /// Finds the child with integer key `key` in an intmap.
    pub fn find_int(&self, key: i64) -> Result<Option<usize>> {
        if !self.has_index() {
            return Ok((0..self.count).find(|&i| self.key(i) as i64 == key));
        }
        self.probe(key as u64, |i| Ok(self.key(i) as i64 == key))
    }

    fn probe(&self, hash: u64, mut matches: impl FnMut(usize) -> Result<bool>) -> Result<Option<usize>> {
        let table = self.index_size;
        let index = self.index();
        let mut bucket = layout::home_bucket(hash, table);
        for _ in 0..table {
            let entry = read_uint(index, self.index_entry as usize, bucket) as usize;
            if entry == 0 {
                return Ok(None);
            }
            if entry > self.count {
                return Err(Error::malformed(self.pos as u64, format!("hash index names child {} of {}", entry - 1, self.count)));
            }
            if matches(entry - 1)? {
                return Ok(Some(entry - 1));
            }
            bucket = (bucket + 1) & (table - 1);
        }
        Ok(None)
    }
}

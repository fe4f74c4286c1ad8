//! Views of container blocks and of the key dictionary (spec §§4, 6): parsing a header
//! checks that every array the view hands out lies inside the document, so reading a
//! child afterwards is plain slice indexing.

use crate::error::{Error, Result};
use crate::layout::{self, checked_align, container, read_u32, read_uint, read_varint, sign_extend, tag};

/// The key dictionary: where it is, so keys can be read by id.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Dict {
    pos: usize,
    count: u32,
    capacity: u32,
    bytes_len: u32,
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
        let (count, capacity, bytes_len) = (field(0)?, field(1)?, field(2)?);
        if count > capacity {
            return Err(malformed("count exceeds capacity"));
        }
        let end = (capacity as usize + 1)
            .checked_mul(4)
            .and_then(|o| (pos + 16).checked_add(o))
            .and_then(|o| o.checked_add(bytes_len as usize));
        if end.is_none_or(|e| e > buf.len()) {
            return Err(malformed("extends past the end of the document"));
        }
        Ok(Dict { pos, count, capacity, bytes_len })
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// The bytes of key `id`; checks the id and the offsets.
    #[inline]
    pub fn key<'a>(&self, buf: &'a [u8], id: u64) -> Result<&'a [u8]> {
        if id >= self.count as u64 {
            return Err(Error::malformed(self.pos as u64, format!("key id {id} is not in the dictionary of {} keys", self.count)));
        }
        let at = self.pos + 16 + 4 * id as usize;
        let start = read_u32(buf, at).unwrap_or(u32::MAX) as usize;
        let end = read_u32(buf, at + 4).unwrap_or(u32::MAX) as usize;
        let bytes_at = self.pos + 16 + 4 * (self.capacity as usize + 1);
        if start > end || end > self.bytes_len as usize {
            return Err(Error::malformed(at as u64, format!("key {id} has offsets {start}..{end} outside the key bytes")));
        }
        Ok(&buf[bytes_at + start..bytes_at + end])
    }

    /// Key `id` as UTF-8 text.
    pub fn key_str<'a>(&self, buf: &'a [u8], id: u64) -> Result<&'a str> {
        let bytes = self.key(buf, id)?;
        std::str::from_utf8(bytes).map_err(|e| Error::malformed(self.pos as u64, format!("key {id} is not valid UTF-8 ({e})")))
    }
}

/// A parsed container header with bounds-checked views of its arrays.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Container<'a> {
    pub pos: usize,
    pub tag: u8,
    pub count: usize,
    pub width: usize,
    pub key_width: usize,
    pub tags: &'a [u8],
    pub keys: &'a [u8],
    pub slots: &'a [u8],
    /// (table, entry width); empty table when there is no index.
    pub index: &'a [u8],
    pub index_entry: usize,
}

impl<'a> Container<'a> {
    pub fn parse(buf: &'a [u8], offset: u64, tag: u8) -> Result<Container<'a>> {
        let malformed = |what: String| Error::malformed(offset, what);
        let pos = usize::try_from(offset).ok().filter(|&p| p >= layout::HEADER_LEN && p < buf.len())
            .ok_or_else(|| malformed(format!("container offset {offset} outside the document")))?;
        let layout_byte = buf[pos];
        if layout_byte & container::RESERVED != 0 {
            return Err(malformed(format!("reserved bits set in container layout byte {layout_byte:#04x}")));
        }
        let width = 1usize << (layout_byte & container::WIDTH_MASK);
        let key_width = match tag {
            tag::ARRAY => 0,
            _ => 1usize << ((layout_byte >> container::KEY_WIDTH_SHIFT) & 3),
        };
        if (tag == tag::OBJECT && key_width == 8) || (tag == tag::ARRAY && (layout_byte >> container::KEY_WIDTH_SHIFT) & 3 != 0) {
            return Err(malformed("invalid key width for this container kind".into()));
        }
        let (count, mut q) = read_varint(buf, pos + 1)?;
        let mut capacity = count;
        if layout_byte & container::HAS_CAPACITY != 0 {
            (capacity, q) = read_varint(buf, q)?;
        }
        if count > capacity || capacity > u32::MAX as u64 {
            return Err(malformed(format!("count {count} / capacity {capacity} are inconsistent or over 2^32-1")));
        }
        let (count, cap) = (count as usize, capacity as usize);
        let too_short = || malformed(format!("container of capacity {cap} does not fit in the document"));
        let tags = buf.get(q..q.checked_add(cap).ok_or_else(too_short)?).ok_or_else(too_short)?;
        let keys_at = q + cap;
        let keys_len = cap.checked_mul(key_width).ok_or_else(too_short)?;
        let keys = buf.get(keys_at..keys_at.checked_add(keys_len).ok_or_else(too_short)?).ok_or_else(too_short)?;
        let slots_at = checked_align(keys_at + keys_len, width).ok_or_else(too_short)?;
        let slots_len = cap.checked_mul(width).ok_or_else(too_short)?;
        let slots_end = slots_at.checked_add(slots_len).ok_or_else(too_short)?;
        let slots = buf.get(slots_at..slots_end).ok_or_else(too_short)?;
        let (mut index, mut index_entry) = (&buf[0..0], 0);
        if layout_byte & container::HAS_INDEX != 0 {
            if tag == tag::ARRAY {
                return Err(malformed("an array cannot have a hash index".into()));
            }
            let (table, entry) = layout::index_geometry(cap);
            let at = checked_align(slots_end, entry).ok_or_else(too_short)?;
            index = buf.get(at..at.checked_add(table * entry).ok_or_else(too_short)?).ok_or_else(too_short)?;
            index_entry = entry;
        }
        Ok(Container { pos, tag, count, width, key_width, tags, keys, slots, index, index_entry })
    }

    /// Tag and payload of child `i` (< count), with the width rules of spec §3.2 checked.
    #[inline]
    pub fn child(&self, i: usize) -> Result<(u8, u64)> {
        let t = self.tags[i];
        let raw = read_uint(self.slots, self.width, i);
        let ok = match t {
            tag::INT => return Ok((t, sign_extend(raw, self.width) as u64)),
            tag::F64 | tag::UINT => self.width == 8,
            tag::F32 => self.width >= 4,
            _ => t <= tag::LAST,
        };
        if !ok {
            return Err(Error::malformed(self.pos as u64, format!("child {i} has tag {t:#04x}, unknown or too wide for slot width {}", self.width)));
        }
        Ok((t, raw))
    }

    /// Raw key of child `i`: a key id for objects, a sign-extended integer for intmaps.
    #[inline]
    pub fn key(&self, i: usize) -> u64 {
        let raw = read_uint(self.keys, self.key_width, i);
        if self.tag == tag::INTMAP {
            sign_extend(raw, self.key_width) as u64
        } else {
            raw
        }
    }

    /// Finds the child with key bytes `key` in an object.
    pub fn find_key(&self, buf: &[u8], dict: &Dict, key: &[u8]) -> Result<Option<usize>> {
        if self.index.is_empty() {
            for i in 0..self.count {
                if dict.key(buf, self.key(i))? == key {
                    return Ok(Some(i));
                }
            }
            return Ok(None);
        }
        self.probe(layout::fnv1a64(key), |i| Ok(dict.key(buf, self.key(i))? == key))
    }

    /// Finds the child with integer key `key` in an intmap.
    pub fn find_int(&self, key: i64) -> Result<Option<usize>> {
        if self.index.is_empty() {
            return Ok((0..self.count).find(|&i| self.key(i) as i64 == key));
        }
        self.probe(key as u64, |i| Ok(self.key(i) as i64 == key))
    }

    fn probe(&self, hash: u64, mut matches: impl FnMut(usize) -> Result<bool>) -> Result<Option<usize>> {
        let table = self.index.len() / self.index_entry;
        let mut bucket = layout::home_bucket(hash, table);
        for _ in 0..table {
            let entry = read_uint(self.index, self.index_entry, bucket) as usize;
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

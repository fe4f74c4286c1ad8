//! The key dictionary (spec §6): where its fields, offsets, key bytes and hash table lie,
//! reading keys by id and finding ids by key bytes.

use super::hash;
use super::numbers::{checked_align, read_u32};
use super::HEADER_LEN;
use crate::error::{Error, Result};

/// Where the dictionary's parts are. `Dict::default()` is the empty dictionary of a
/// document without keys.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dict {
    offsets_at: usize,
    bytes_at: usize,
    /// Where the table starts; key bytes end at or before it.
    table_at: usize,
    count: u32,
    capacity: u32,
    bytes_capacity: u32,
    table_size: u32,
}

/// Byte positions of a dictionary block at `pos` (a multiple of 4) with these fields:
/// (offsets, key bytes, table, end). `None` on overflow.
pub fn layout(pos: usize, capacity: usize, bytes_capacity: usize, table_size: usize) -> Option<(usize, usize, usize, usize)> {
    let offsets_at = pos.checked_add(16)?;
    let bytes_at = offsets_at.checked_add(capacity.checked_add(1)?.checked_mul(4)?)?;
    let table_at = checked_align(bytes_at.checked_add(bytes_capacity)?, 4)?;
    let end = table_at.checked_add(table_size.checked_mul(4)?)?;
    Some((offsets_at, bytes_at, table_at, end))
}

impl Dict {
    /// Parses the dictionary at `pos` (0: none) and proves the whole block lies inside `buf`.
    pub fn parse(buf: &[u8], pos: u64) -> Result<Dict> {
        if pos == 0 {
            return Ok(Dict::default());
        }
        let malformed = |what: &str| Error::malformed(pos, format!("key dictionary: {what}"));
        let pos = usize::try_from(pos).map_err(|_| malformed("offset out of range"))?;
        if pos % 4 != 0 || pos < HEADER_LEN {
            return Err(malformed("offset not a multiple of 4 past the header"));
        }
        let field = |i: usize| read_u32(buf, pos + 4 * i).ok_or_else(|| malformed("truncated"));
        let (count, capacity, bytes_capacity, table_size) = (field(0)?, field(1)?, field(2)?, field(3)?);
        if count > capacity {
            return Err(malformed("count exceeds capacity"));
        }
        if !hash::is_dictionary_table_size(table_size as u64, capacity as u64) {
            return Err(malformed("hash table size is neither 0 nor a power of two at least 2 and twice the capacity"));
        }
        match layout(pos, capacity as usize, bytes_capacity as usize, table_size as usize) {
            Some((offsets_at, bytes_at, table_at, end)) if end <= buf.len() => {
                Ok(Dict { offsets_at, bytes_at, table_at, count, capacity, bytes_capacity, table_size })
            }
            _ => Err(malformed("extends past the end of the document")),
        }
    }

    /// Number of keys K.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Ids reserved C.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Length B of the key-bytes region.
    pub fn bytes_capacity(&self) -> u32 {
        self.bytes_capacity
    }

    /// Offset of the block (0 for a document without keys).
    pub fn pos(&self) -> usize {
        self.offsets_at.saturating_sub(16)
    }

    pub fn offsets_at(&self) -> usize {
        self.offsets_at
    }

    pub fn bytes_at(&self) -> usize {
        self.bytes_at
    }

    /// Byte just past the block.
    pub fn end(&self) -> usize {
        self.table_at + 4 * self.table_size as usize
    }

    /// (table position, table size T).
    pub fn table(&self) -> (usize, usize) {
        (self.table_at, self.table_size as usize)
    }

    /// `offsets[i]` (i ≤ capacity), not checked against the key bytes.
    #[inline]
    pub fn offset(&self, buf: &[u8], i: usize) -> usize {
        let at = self.offsets_at + 4 * i;
        u32::from_le_bytes(buf[at..at + 4].try_into().unwrap()) as usize
    }

    /// The bytes of key `id`; checks the id and the offsets.
    #[inline]
    pub fn key<'a>(&self, buf: &'a [u8], id: u64) -> Result<&'a [u8]> {
        if id >= self.count as u64 {
            return Err(self.bad_id(id));
        }
        // In bounds: parse checked that capacity + 1 offsets fit, and id < count ≤ capacity.
        let (start, end) = (self.offset(buf, id as usize), self.offset(buf, id as usize + 1));
        if start > end || end > self.bytes_capacity as usize {
            return Err(bad_offsets(self.offsets_at + 4 * id as usize, id, start, end));
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
        super::data::utf8(bytes).ok_or_else(|| Error::malformed(self.pos() as u64, format!("key {id} is not valid UTF-8")))
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
        let table = &buf[self.table_at..self.end()];
        Ok(hash::probe(table, 4, hash, |id| Ok::<bool, Error>(bytes_eq(self.key(buf, id as u64)?, key)))?.map(|id| id as u64))
    }
}

#[cold]
fn bad_offsets(at: usize, id: u64, start: usize, end: usize) -> Error {
    Error::malformed(at as u64, format!("key {id} has offsets {start}..{end} outside the key bytes"))
}

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

/// Length of a canonical dictionary of `count` keys totalling `key_bytes` bytes (spec §7):
/// C = K, B = the bytes, T = the smallest legal table.
pub fn canonical_len(count: usize, key_bytes: usize) -> usize {
    if count == 0 {
        return 0;
    }
    let (_, _, _, end) = layout(0, count, key_bytes, hash::dictionary_table_size(count)).expect("sizes held in memory");
    end
}

/// Writes a canonical dictionary at `out[..canonical_len]` (a zeroed region starting at a
/// multiple of 4) from its keys in id order (sorted by bytes) and their key hashes. A
/// document without keys has no dictionary: nothing is written.
pub fn write_canonical<'k>(out: &mut [u8], keys: impl Iterator<Item = &'k [u8]> + Clone, hashes: impl Iterator<Item = u64>) {
    let count = keys.clone().count();
    if count == 0 {
        return;
    }
    let total: usize = keys.clone().map(<[u8]>::len).sum();
    let table_size = hash::dictionary_table_size(count);
    let (offsets_at, bytes_at, table_at, end) = layout(0, count, total, table_size).expect("sizes held in memory");
    for (i, field) in [count, count, total, table_size].into_iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&(field as u32).to_le_bytes());
    }
    let mut offset = 0usize;
    for (id, key) in keys.clone().enumerate() {
        out[offsets_at + 4 * id..offsets_at + 4 * id + 4].copy_from_slice(&(offset as u32).to_le_bytes());
        out[bytes_at + offset..bytes_at + offset + key.len()].copy_from_slice(key);
        offset += key.len();
    }
    out[offsets_at + 4 * count..offsets_at + 4 * count + 4].copy_from_slice(&(offset as u32).to_le_bytes());
    hash::fill(&mut out[table_at..end], 4, hashes);
}

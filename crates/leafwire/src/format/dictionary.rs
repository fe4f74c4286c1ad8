//! The key dictionary (spec §6): where its fields, offsets, key bytes and hash table lie,
//! reading keys by id and finding ids by key bytes.

use super::hash;
use super::numbers::checked_align;
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
#[inline]
pub fn layout(pos: usize, capacity: usize, bytes_capacity: usize, table_size: usize) -> Option<(usize, usize, usize, usize)> {
    let offsets_at = pos.checked_add(16)?;
    let bytes_at = offsets_at.checked_add(capacity.checked_add(1)?.checked_mul(4)?)?;
    let table_at = checked_align(bytes_at.checked_add(bytes_capacity)?, 4)?;
    let end = table_at.checked_add(table_size.checked_mul(4)?)?;
    Some((offsets_at, bytes_at, table_at, end))
}

impl Dict {
    /// Parses the dictionary at `pos` (0: none) and proves the whole block lies inside `buf`.
    #[inline(always)]
    pub fn parse(buf: &[u8], pos: u64) -> Result<Dict> {
        if pos == 0 {
            return Ok(Dict::default());
        }
        match usize::try_from(pos) {
            Ok(pos) if pos % 4 == 0 && pos >= HEADER_LEN => Dict::parse_fields(buf, pos),
            _ => Err(malformed(pos as usize, "offset not a multiple of 4 past the header")),
        }
    }

    /// The dictionary block at the start of `buf`, a buffer of its own: a stream's key
    /// table (spec §14.4).
    pub fn parse_table(buf: &[u8]) -> Result<Dict> {
        Dict::parse_fields(buf, 0)
    }

    #[inline(always)]
    fn parse_fields(buf: &[u8], pos: usize) -> Result<Dict> {
        let Some(fields) = pos.checked_add(16).and_then(|end| buf.get(pos..end)) else {
            return Err(malformed(pos, "truncated"));
        };
        let field = |i: usize| u32::from_le_bytes(fields[4 * i..4 * i + 4].try_into().unwrap());
        let (count, capacity, bytes_capacity, table_size) = (field(0), field(1), field(2), field(3));
        if count > capacity {
            return Err(malformed(pos, "count exceeds capacity"));
        }
        if !hash::is_dictionary_table_size(table_size as u64, capacity as u64) {
            return Err(malformed(pos, "hash table size is neither 0 nor a power of two at least 2 and twice the capacity"));
        }
        match layout(pos, capacity as usize, bytes_capacity as usize, table_size as usize) {
            Some((offsets_at, bytes_at, table_at, end)) if end <= buf.len() => {
                Ok(Dict { offsets_at, bytes_at, table_at, count, capacity, bytes_capacity, table_size })
            }
            _ => Err(malformed(pos, "extends past the end of the document")),
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
        let (start, end) = self.key_span(buf, id)?;
        Ok(&buf[self.bytes_at + start..self.bytes_at + end])
    }

    /// Where key `id` lies in the key bytes, `(start, end)`: the id and offsets checked.
    #[inline(always)]
    fn key_span(&self, buf: &[u8], id: u64) -> Result<(usize, usize)> {
        if id >= self.count as u64 {
            return Err(self.bad_id(id));
        }
        // `offsets[id]` and `offsets[id + 1]` in one read: parse proved that capacity + 1
        // offsets fit, and id < count ≤ capacity.
        let at = self.offsets_at + 4 * id as usize;
        let pair = u64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
        let (start, end) = (pair as u32 as usize, (pair >> 32) as usize);
        if start > end || end > self.bytes_capacity as usize {
            return Err(bad_offsets(at, id, start, end));
        }
        Ok((start, end))
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
    #[inline(always)]
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
        Ok(hash::probe(table, 4, hash, |id| self.key_is(buf, id as u64, key))?.map(|id| id as u64))
    }

    /// Whether key `id` is `key` (the id and offsets checked); the lengths are compared
    /// before any byte is.
    #[inline(always)]
    pub fn key_is(&self, buf: &[u8], id: u64, key: &[u8]) -> Result<bool> {
        let (start, end) = self.key_span(buf, id)?;
        Ok(end - start == key.len() && bytes_eq(&buf[self.bytes_at + start..self.bytes_at + end], key))
    }
}

#[cold]
fn malformed(pos: usize, what: &str) -> Error {
    Error::malformed(pos as u64, format!("key dictionary: {what}"))
}

#[cold]
fn bad_offsets(at: usize, id: u64, start: usize, end: usize) -> Error {
    Error::malformed(at as u64, format!("key {id} has offsets {start}..{end} outside the key bytes"))
}

/// The key texts a reader has resolved so far, by text: a dictionary may hold one text
/// under two ids (spec §6; decoders do not check it up front), which an object using both
/// would turn into a repeated key. Readers that build maps or write JSON resolve each id
/// once and claim its text here, so such a document is refused, not read as `{"a":1,"a":2}`.
#[derive(Default)]
pub(crate) struct DistinctTexts<'a> {
    ids: rustc_hash::FxHashMap<&'a str, u64>,
}

/// The most keys [`DistinctTexts::for_keys`] makes room for up front: a reader of a small
/// part of a document of many keys claims few of them.
const PRESIZE_KEYS: usize = 1024;

impl<'a> DistinctTexts<'a> {
    /// A record with room for the texts of a dictionary of `count` keys (up to
    /// `PRESIZE_KEYS`): whole-document readers claim them all, and growing the map
    /// from empty was about half the cost of claiming (github_events' 114 keys).
    pub fn for_keys(count: u32) -> DistinctTexts<'a> {
        let capacity = (count as usize).min(PRESIZE_KEYS);
        DistinctTexts { ids: rustc_hash::FxHashMap::with_capacity_and_hasher(capacity, Default::default()) }
    }

    /// Claims `text` for key `id`: an error if another id has it (`dictionary_pos`: where
    /// the error points).
    pub fn claim(&mut self, text: &'a str, id: u64, dictionary_pos: u64) -> Result<()> {
        match self.ids.insert(text, id) {
            Some(other) if other != id => {
                Err(Error::malformed(dictionary_pos, format!("the dictionary holds key \"{text}\" twice (ids {other} and {id})")))
            }
            _ => Ok(()),
        }
    }
}

/// Equality of byte strings, short ones (most keys) in at most two overlapping loads a
/// side and no library call.
#[inline(always)]
pub(crate) fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap());
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
    match n {
        0 => true,
        // Positions 0, n/2 and n-1 cover every byte of 1 to 3.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        9..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
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

/// A dictionary block (spec §6) at the start of a buffer of its own, growing a key at a
/// time: a stream reader's key table (§14.4). New keys go into spare room; when there is
/// none, the block is rebuilt with twice the room, so a key costs O(1) amortized.
#[derive(Debug, Default)]
pub struct GrowingDict {
    buf: Vec<u8>,
    dict: Dict,
    /// Key bytes in use (`offsets[count]`).
    used: usize,
}

impl GrowingDict {
    /// The block's bytes, which `dict()` describes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn dict(&self) -> Dict {
        self.dict
    }

    pub fn len(&self) -> usize {
        self.dict.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of all keys.
    pub fn key_bytes(&self) -> usize {
        self.used
    }

    /// Forgets every key (the memory is kept).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.dict = Dict::default();
        self.used = 0;
    }

    /// Whether `key` is in the table.
    pub fn contains(&self, key: &[u8]) -> bool {
        !self.is_empty() && matches!(self.dict.find(&self.buf, key, hash::key_hash(key)), Ok(Some(_)))
    }

    /// Adds `key` (not in the table: the caller checks) under the next id.
    pub fn push(&mut self, key: &[u8]) {
        let count = self.len();
        if count == self.dict.capacity as usize || self.used + key.len() > self.dict.bytes_capacity as usize {
            self.grow(key.len());
        }
        let d = self.dict;
        let at = d.bytes_at + self.used;
        self.buf[at..at + key.len()].copy_from_slice(key);
        self.used += key.len();
        let offset_at = d.offsets_at + 4 * (count + 1);
        self.buf[offset_at..offset_at + 4].copy_from_slice(&(self.used as u32).to_le_bytes());
        self.buf[..4].copy_from_slice(&(count as u32 + 1).to_le_bytes());
        let (table_at, table_size) = d.table();
        hash::insert(&mut self.buf[table_at..table_at + 4 * table_size], 4, hash::key_hash(key), count);
        self.dict.count += 1;
    }

    /// Rebuilds the block with room for twice the keys and key bytes (and `more` bytes).
    fn grow(&mut self, more: usize) {
        let count = self.len();
        let capacity = (2 * count).max(16);
        let bytes_capacity = (2 * (self.used + more)).max(256);
        let table_size = hash::dictionary_table_size(capacity);
        let (offsets_at, bytes_at, table_at, end) = layout(0, capacity, bytes_capacity, table_size).expect("a table held in memory");
        let mut buf = vec![0u8; end];
        for (i, field) in [count, capacity, bytes_capacity, table_size].into_iter().enumerate() {
            buf[4 * i..4 * i + 4].copy_from_slice(&(field as u32).to_le_bytes());
        }
        if count > 0 {
            let old = self.dict;
            buf[offsets_at..offsets_at + 4 * (count + 1)].copy_from_slice(&self.buf[old.offsets_at..old.offsets_at + 4 * (count + 1)]);
            buf[bytes_at..bytes_at + self.used].copy_from_slice(&self.buf[old.bytes_at..old.bytes_at + self.used]);
            let hashes = (0..count as u64).map(|id| hash::key_hash(old.key(&self.buf, id).expect("a key this table wrote")));
            hash::fill(&mut buf[table_at..end], 4, hashes);
        }
        self.buf = buf;
        self.dict = Dict::parse_table(&self.buf).expect("the block just written");
    }
}

#[cfg(test)]
mod growing_tests {
    use super::*;

    #[test]
    fn keys_keep_their_ids_through_growth() {
        let mut table = GrowingDict::default();
        let keys: Vec<String> = (0..1000).map(|i| format!("key{i}")).collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(!table.contains(k.as_bytes()));
            table.push(k.as_bytes());
            assert_eq!(table.len(), i + 1);
        }
        let d = Dict::parse_table(table.bytes()).unwrap();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(d.key(table.bytes(), i as u64).unwrap(), k.as_bytes());
            assert_eq!(d.find(table.bytes(), k.as_bytes(), hash::key_hash(k.as_bytes())).unwrap(), Some(i as u64));
        }
        assert_eq!(d.find(table.bytes(), b"absent", hash::key_hash(b"absent")).unwrap(), None);
        table.clear();
        assert!(table.is_empty() && !table.contains(b"key1"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_eq_sees_a_difference_at_every_position_and_length() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37)).collect();
            assert!(bytes_eq(&a, &a.clone()), "{n}");
            assert!(!bytes_eq(&a, &a[..n.saturating_sub(1)]) || n == 0, "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x40;
                assert!(!bytes_eq(&a, &b), "length {n}, byte {at}");
            }
        }
    }
}

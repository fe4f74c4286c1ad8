//! Container blocks (spec §4): where a container's tags, keys, slots and hash index lie.
//!
//! [`Geometry::parse`] is the one parser of a container header: the lazy reader, lookups,
//! `raw`, the validator and the editor all call it, so they agree on every header. It
//! proves that every array it describes lies inside the buffer, so reading a child
//! afterwards is plain slice indexing. [`Shape`] is the writer's side: from the widths and
//! counts a writer chose, the same geometry and the header bytes.

use super::hash;
use super::numbers::{log2_width, read_small_varint, read_uint, sign_extend, write_uint, put_varint};
use super::{tag, HEADER_LEN, INDEX_THRESHOLD};
use crate::error::{Error, Result};

/// Container layout byte bits (spec §4).
pub mod bits {
    pub const WIDTH_MASK: u8 = 0b0000_0011;
    pub const KEY_WIDTH_SHIFT: u8 = 2;
    pub const HAS_CAPACITY: u8 = 0b0001_0000;
    pub const HAS_INDEX: u8 = 0b0010_0000;
    pub const RESERVED: u8 = 0b1100_0000;
}

/// Where a container's parts lie, detached from the buffer (an editor keeps it across
/// writes). Positions are absolute byte offsets; `end` is the byte past the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub pos: usize,
    pub tag: u8,
    /// Number of children n.
    pub count: usize,
    /// Child positions reserved, c ≥ n (c = n without a capacity field).
    pub capacity: usize,
    /// Whether the header has a capacity field (layout bit 4).
    pub has_capacity: bool,
    /// Slot width w and key width k (0 for arrays), in bytes.
    pub width: u8,
    pub key_width: u8,
    /// Entry width of the hash index in bytes, 0 without an index.
    pub index_entry: u8,
    pub tags_at: usize,
    pub keys_at: usize,
    pub slots_at: usize,
    /// Start of the hash index (equal to `end` without one).
    pub index_at: usize,
    pub end: usize,
}

/// Whether a layout byte is legal for a container of tag `t` (spec §4): reserved bits zero;
/// arrays have key width code 0 and no index; objects have key widths 1, 2 or 4.
#[inline(always)]
pub fn layout_byte_fits(layout_byte: u8, t: u8) -> bool {
    let key_code = (layout_byte >> bits::KEY_WIDTH_SHIFT) & 3;
    layout_byte & bits::RESERVED == 0
        && match t {
            tag::ARRAY => key_code == 0 && layout_byte & bits::HAS_INDEX == 0,
            tag::OBJECT => key_code != 3,
            tag::INTMAP => true,
            _ => false,
        }
}

impl Geometry {
    /// Parses the header of the container of tag `t` at `offset` and proves the whole block
    /// lies inside `buf`. The common case (no capacity field, fewer than 128 children: a
    /// one-byte count) is computed inline in a few dozen instructions; everything else takes
    /// the general path, with checked arithmetic.
    #[inline(always)]
    pub fn parse(buf: &[u8], offset: u64, t: u8) -> Result<Geometry> {
        match Self::parse_plain(buf, offset, t) {
            Some(g) => Ok(g),
            None => Self::parse_general(buf, offset, t),
        }
    }

    /// The common case of [`Geometry::parse`] alone: `None` for every block it does not
    /// cover, which the general parser then reads (and refuses, if malformed).
    #[inline(always)]
    pub(crate) fn parse_plain(buf: &[u8], offset: u64, t: u8) -> Option<Geometry> {
        if offset >= HEADER_LEN as u64 && offset < (buf.len() as u64).saturating_sub(1) {
            let pos = offset as usize;
            let (layout_byte, first) = (buf[pos], buf[pos + 1] as usize);
            // A count of one varint byte, or of two (arrays of up to 16,383: common).
            let (count, header_len) = match buf.get(pos + 2) {
                _ if first < 0x80 => (first, 2),
                Some(&second) if second < 0x80 => (first & 0x7F | (second as usize) << 7, 3),
                _ => (usize::MAX, 0),
            };
            if header_len != 0 && layout_byte & bits::HAS_CAPACITY == 0 && layout_byte_fits(layout_byte, t) {
                let shape = Shape::from_layout_byte(layout_byte, t, count, None);
                // A count below 2^14 keeps every position within 2^19 bytes of `pos`, which
                // is below `buf.len()`: the parts are placed without overflow checks.
                let g = shape.place::<Plain>(pos, header_len).expect("plain arithmetic always places");
                if g.end <= buf.len() {
                    return Some(g);
                }
            }
        }
        None
    }

    /// Whether the block at `offset` is an empty container of tag `t` with a one-byte count
    /// and neither capacity nor index: exactly the blocks [`Geometry::parse`] accepts as
    /// such, told from their two header bytes (whole-value readers meet thousands of `[]`
    /// and skip the rest of the container walk for them; other empty blocks, such as a count
    /// written in two bytes, take that walk).
    #[inline(always)]
    pub fn is_plain_empty(buf: &[u8], offset: u64, t: u8) -> bool {
        if offset < HEADER_LEN as u64 || offset >= (buf.len() as u64).saturating_sub(1) {
            return false;
        }
        let pos = offset as usize;
        let layout_byte = buf[pos];
        // No tags, keys or slots: the block ends at its header, aligned to the slot width.
        let end = super::align(pos + 2, 1usize << (layout_byte & bits::WIDTH_MASK));
        buf[pos + 1] == 0
            && layout_byte & (bits::HAS_CAPACITY | bits::HAS_INDEX) == 0
            && layout_byte_fits(layout_byte, t)
            && end <= buf.len()
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn parse_general(buf: &[u8], offset: u64, t: u8) -> Result<Geometry> {
        let pos = usize::try_from(offset).ok().filter(|&p| p >= HEADER_LEN && p < buf.len())
            .ok_or_else(|| Error::malformed(offset, format!("container offset {offset} outside the document")))?;
        let layout_byte = buf[pos];
        if !layout_byte_fits(layout_byte, t) {
            return Err(Error::malformed(offset, format!("invalid container layout byte {layout_byte:#04x} for tag {t:#04x}")));
        }
        let (count, mut q) = read_small_varint(buf, pos + 1)?;
        let mut capacity = None;
        if layout_byte & bits::HAS_CAPACITY != 0 {
            let c;
            (c, q) = read_small_varint(buf, q)?;
            capacity = Some(c);
        }
        let cap = capacity.unwrap_or(count);
        if count > cap || cap > u32::MAX as u64 {
            return Err(Error::malformed(offset, format!("count {count} / capacity {cap} are inconsistent or over 2^32-1")));
        }
        let shape = Shape::from_layout_byte(layout_byte, t, count as usize, capacity.map(|c| c as usize));
        let too_long = || Error::malformed(offset, format!("container of capacity {cap} runs past the end of the document"));
        let g = shape.checked_geometry(pos, q - pos).ok_or_else(too_long)?;
        if g.end > buf.len() {
            return Err(too_long());
        }
        Ok(g)
    }

    /// Whether the container has a hash index.
    #[inline]
    pub fn has_index(&self) -> bool {
        self.index_entry != 0
    }

    /// Number of buckets of the hash index (0 without one).
    #[inline]
    pub fn index_table(&self) -> usize {
        (self.end - self.index_at).checked_div(self.index_entry as usize).unwrap_or(0)
    }

    /// Tags of all `capacity` positions.
    pub fn tags<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.tags_at..self.tags_at + self.capacity]
    }

    /// Keys of all `capacity` positions (`capacity × k` bytes).
    pub fn keys<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.keys_at..self.keys_at + self.capacity * self.key_width as usize]
    }

    /// Slots of all `capacity` positions (`capacity × w` bytes).
    pub fn slots<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.slots_at..self.slots_at + self.capacity * self.width as usize]
    }

    /// The hash index's bytes (empty without one).
    pub fn index_bytes<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.index_at..self.end]
    }

    /// Tag and payload of child `i` (< count), with the slot rule of spec §3.2 checked;
    /// `int` payloads are sign-extended.
    #[inline(always)]
    pub fn child(&self, buf: &[u8], i: usize) -> Result<(u8, u64)> {
        let (t, width) = (buf[self.tags_at + i], self.width as usize);
        let raw = read_uint(&buf[self.slots_at..], width, i);
        Ok((t, slot_payload(self.pos, i, t, raw, width)?))
    }

    /// Calls `f(i, tag, payload)` for every child in order, as [`Geometry::child`] reads it,
    /// in a container whose slots are `W` bytes wide (the caller has read the width): the
    /// walk of whole-value readers. Tags and slots are cut once, so each child costs a load
    /// and its slot rule (a per-child `child` re-checks the width and both bounds).
    #[inline(always)]
    pub fn each_child_of<const W: usize>(&self, buf: &[u8], mut f: impl FnMut(usize, u8, u64) -> Result<()>) -> Result<()> {
        let tags = &buf[self.tags_at..self.tags_at + self.count];
        let slots = &buf[self.slots_at..self.slots_at + self.count * W];
        for (i, (&t, slot)) in tags.iter().zip(slots.chunks_exact(W)).enumerate() {
            let mut word = [0u8; 8];
            word[..W].copy_from_slice(slot);
            let payload = slot_payload(self.pos, i, t, u64::from_le_bytes(word), W)?;
            f(i, t, payload)?;
        }
        Ok(())
    }

    /// Calls `f(key id, tag, payload)` for every entry of this object in order, as
    /// [`Geometry::each_child_of`] (slot width `W`) and [`Geometry::key`] read them.
    #[inline(always)]
    pub fn each_entry_of<const W: usize>(&self, buf: &[u8], mut f: impl FnMut(u64, u8, u64) -> Result<()>) -> Result<()> {
        debug_assert_eq!(self.tag, tag::OBJECT);
        let kw = self.key_width as usize;
        let keys = &buf[self.keys_at..self.keys_at + self.count * kw];
        self.each_child_of::<W>(buf, |i, t, payload| {
            // Object key ids are unsigned, 1, 2 or 4 bytes wide.
            let id = match kw {
                1 => keys[i] as u64,
                2 => u16::from_le_bytes([keys[2 * i], keys[2 * i + 1]]) as u64,
                _ => u32::from_le_bytes(keys[4 * i..4 * i + 4].try_into().unwrap()) as u64,
            };
            f(id, t, payload)
        })
    }

    /// The children with their keys, read one at a time and in order ([`Children`]).
    #[inline(always)]
    pub fn children<'a>(&self, buf: &'a [u8]) -> Children<'a> {
        let (w, kw) = (self.width as usize, self.key_width as usize);
        Children {
            tags: &buf[self.tags_at..self.tags_at + self.count],
            keys: &buf[self.keys_at..self.keys_at + self.count * kw],
            slots: &buf[self.slots_at..self.slots_at + self.count * w],
            width: self.width,
            key_width: self.key_width,
            signed_keys: self.tag == tag::INTMAP,
            pos: self.pos,
            next: 0,
        }
    }

    /// Key of child `i` (< count): a key id for objects, a sign-extended integer for
    /// intmaps, 0 for arrays.
    #[inline(always)]
    pub fn key(&self, buf: &[u8], i: usize) -> u64 {
        let width = self.key_width as usize;
        if width == 0 {
            return 0;
        }
        stored_key(read_uint(&buf[self.keys_at..], width, i), width, self.tag == tag::INTMAP)
    }

    /// The child whose key is `key` (a key id for objects, the integer for intmaps), found
    /// through the hash index when there is one (`hash`: the key's hash, spec §4.1), else by
    /// a scan of at most a few keys.
    #[inline(always)]
    pub fn find(&self, buf: &[u8], key: u64, hash: u64) -> Result<Option<usize>> {
        if !self.has_index() {
            if self.tag == tag::OBJECT {
                // Key ids are unsigned: compare them in their stored width, no per-key match.
                let keys = &buf[self.keys_at..self.keys_at + self.count * self.key_width as usize];
                return Ok(match self.key_width {
                    1 => keys.iter().position(|&k| k as u64 == key),
                    2 => keys.chunks_exact(2).position(|k| u16::from_le_bytes([k[0], k[1]]) as u64 == key),
                    _ => keys.chunks_exact(4).position(|k| u32::from_le_bytes([k[0], k[1], k[2], k[3]]) as u64 == key),
                });
            }
            // A plain loop: a closure over `self` run out of line would keep the whole
            // geometry in memory on every caller's path.
            for i in 0..self.count {
                if self.key(buf, i) == key {
                    return Ok(Some(i));
                }
            }
            return Ok(None);
        }
        self.probe_index(buf, hash, |i| Ok(self.key(buf, i) == key))
    }

    /// The child the hash index names for `hash` whose key `matches` (the index must be
    /// present); each candidate named is checked to be a child first.
    #[inline(always)]
    pub fn probe_index(&self, buf: &[u8], hash: u64, mut matches: impl FnMut(usize) -> Result<bool>) -> Result<Option<usize>> {
        for candidate in self.index_candidates(buf, hash) {
            let i = candidate?;
            if matches(i)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// The children the hash index names for `hash`, in probe order (the index must be
    /// present): an error for an entry naming no child.
    #[inline(always)]
    pub fn index_candidates<'b>(&self, buf: &'b [u8], hash: u64) -> impl Iterator<Item = Result<usize>> + 'b {
        debug_assert!(self.has_index());
        let (pos, count) = (self.pos, self.count);
        hash::probe_sequence(self.index_bytes(buf), self.index_entry as usize, hash)
            .map(move |i| if i < count { Ok(i) } else { Err(index_names_no_child(pos, i, count)) })
    }

    /// Writes child `i`'s tag, key (objects, intmaps) and slot payload.
    #[inline]
    pub fn write_child(&self, buf: &mut [u8], i: usize, t: u8, key: u64, payload: u64) {
        buf[self.tags_at + i] = t;
        let kw = self.key_width as usize;
        if kw > 0 {
            write_uint(buf, self.keys_at + i * kw, kw, key);
        }
        let w = self.width as usize;
        write_uint(buf, self.slots_at + i * w, w, payload);
    }
}

#[cold]
fn index_names_no_child(pos: usize, i: usize, count: usize) -> Error {
    Error::malformed(pos as u64, format!("hash index names child {i} of {count}"))
}

/// The payload of child `i`, of tag `t`, from its slot's `width` bytes `raw` (spec §3.2):
/// `int` sign-extended, other inline kinds as stored; a tag unknown or too wide for the
/// slot is malformed.
#[inline(always)]
fn slot_payload(pos: usize, i: usize, t: u8, raw: u64, width: usize) -> Result<u64> {
    if t == tag::INT {
        Ok(sign_extend(raw, width) as u64)
    } else if tag::fits_slot(t, width) {
        Ok(raw)
    } else {
        Err(bad_child(pos, i, t, width))
    }
}

/// A key as stored in `width` bytes `raw` (spec §4): intmap keys are signed integers,
/// object key ids unsigned.
#[inline(always)]
pub(crate) fn stored_key(raw: u64, width: usize, intmap: bool) -> u64 {
    if intmap { sign_extend(raw, width) as u64 } else { raw }
}

#[cold]
fn bad_child(pos: usize, i: usize, t: u8, width: usize) -> Error {
    Error::malformed(pos as u64, format!("child {i} has tag {t:#04x}, unknown or too wide for slot width {width}"))
}

/// The children of one container, each with its key, read in order one at a time, as
/// [`Geometry::child`] and [`Geometry::key`] read them: for readers that are handed one
/// child per call (serde's `SeqAccess` and `MapAccess`). Tags, keys and slots are cut
/// once, so a child costs its loads and its slot rule instead of re-deriving both from
/// the geometry.
#[derive(Clone, Copy)]
pub struct Children<'a> {
    tags: &'a [u8],
    keys: &'a [u8],
    slots: &'a [u8],
    width: u8,
    key_width: u8,
    /// Intmap keys are signed; object key ids are not.
    signed_keys: bool,
    pos: usize,
    next: usize,
}

impl Children<'_> {
    /// How many children are left.
    #[inline(always)]
    pub fn remaining(&self) -> usize {
        self.tags.len() - self.next
    }

    /// Where the container starts (for errors).
    #[inline(always)]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The next child as (key, tag, payload): the key as [`Geometry::key`] gives it, the
    /// rest as [`Geometry::child`]; `None` after the last.
    #[inline(always)]
    pub fn next_child(&mut self) -> Result<Option<(u64, u8, u64)>> {
        let i = self.next;
        let Some(&t) = self.tags.get(i) else { return Ok(None) };
        self.next = i + 1;
        let width = self.width as usize;
        let payload = slot_payload(self.pos, i, t, read_uint(self.slots, width, i), width)?;
        let key = match self.key_width as usize {
            0 => 0,
            kw => stored_key(read_uint(self.keys, kw, i), kw, self.signed_keys),
        };
        Ok(Some((key, t, payload)))
    }
}

/// What a writer decides about a container (spec §§4, 7); its [`Geometry`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub tag: u8,
    pub count: usize,
    /// A capacity field (spare positions for in-place growth, spec §8), or none (c = n).
    pub capacity: Option<usize>,
    pub width: usize,
    pub key_width: usize,
    pub indexed: bool,
}

impl Shape {
    /// The canonical shape (spec §7): no capacity field; objects and intmaps with more than
    /// `INDEX_THRESHOLD` children carry an index.
    pub fn canonical(t: u8, count: usize, width: usize, key_width: usize) -> Shape {
        Shape { tag: t, count, capacity: None, width, key_width, indexed: t != tag::ARRAY && count > INDEX_THRESHOLD }
    }

    /// A shape with a capacity field of `capacity` ≥ `count` positions; indexed when the
    /// capacity passes the threshold, so that growing within it keeps lookups O(1).
    pub fn with_capacity(t: u8, count: usize, capacity: usize, width: usize, key_width: usize) -> Shape {
        Shape { tag: t, count, capacity: Some(capacity), width, key_width, indexed: t != tag::ARRAY && capacity > INDEX_THRESHOLD }
    }

    #[inline(always)]
    fn from_layout_byte(layout_byte: u8, t: u8, count: usize, capacity: Option<usize>) -> Shape {
        let width = 1usize << (layout_byte & bits::WIDTH_MASK);
        let key_width = if t == tag::ARRAY { 0 } else { 1usize << ((layout_byte >> bits::KEY_WIDTH_SHIFT) & 3) };
        Shape { tag: t, count, capacity, width, key_width, indexed: layout_byte & bits::HAS_INDEX != 0 }
    }

    /// Reserved child positions c.
    #[inline]
    pub fn reserved(&self) -> usize {
        self.capacity.unwrap_or(self.count)
    }

    /// The layout byte (spec §4).
    #[inline]
    pub fn layout_byte(&self) -> u8 {
        let mut b = log2_width(self.width);
        if self.key_width > 0 {
            b |= log2_width(self.key_width) << bits::KEY_WIDTH_SHIFT;
        }
        if self.capacity.is_some() {
            b |= bits::HAS_CAPACITY;
        }
        if self.indexed {
            b |= bits::HAS_INDEX;
        }
        b
    }

    /// Length of the header: layout byte and varints.
    pub fn header_len(&self) -> usize {
        1 + super::varint_len(self.count as u64) + self.capacity.map_or(0, |c| super::varint_len(c as u64))
    }

    /// Where the parts lie when the block starts at `pos`, for sizes a writer holds in
    /// memory (positions that cannot overflow).
    #[inline(always)]
    pub fn geometry(&self, pos: usize) -> Geometry {
        if self.capacity.is_none() && self.count < 0x80 {
            // Most containers: a two-byte header and under 128 children keep every part
            // within 4 KiB of `pos`, a position in memory (below isize::MAX), so plain
            // arithmetic cannot overflow.
            return self.place::<Plain>(pos, 2).expect("plain arithmetic always places");
        }
        // Checked: a capacity a caller asked for may be absurd, and must fail loudly.
        self.checked_geometry(pos, self.header_len()).expect("a block held in memory has positions below usize::MAX")
    }

    /// Where the parts lie when the block starts at `pos` and its header is `header_len`
    /// bytes long: `None` if a position overflows (sizes read from a document).
    #[inline(always)]
    fn checked_geometry(&self, pos: usize, header_len: usize) -> Option<Geometry> {
        self.place::<Checked>(pos, header_len)
    }

    /// The one statement of where a container's parts lie (spec §4), in the arithmetic `A`:
    /// checked for sizes read from a document, plain where they cannot overflow.
    #[inline(always)]
    fn place<A: Arith>(&self, pos: usize, header_len: usize) -> Option<Geometry> {
        let cap = self.reserved();
        let (w, k) = (self.width, self.key_width);
        let tags_at = A::add(pos, header_len)?;
        let keys_at = A::add(tags_at, cap)?;
        let slots_at = A::align(A::add(keys_at, A::mul(cap, k)?)?, w)?;
        let mut end = A::add(slots_at, A::mul(cap, w)?)?;
        let (mut index_at, mut index_entry) = (end, 0);
        if self.indexed {
            let (table, entry) = hash::index_geometry(cap);
            index_at = A::align(end, entry)?;
            end = A::add(index_at, A::mul(table, entry)?)?;
            index_entry = entry as u8;
        }
        Some(Geometry {
            pos,
            tag: self.tag,
            count: self.count,
            capacity: cap,
            has_capacity: self.capacity.is_some(),
            width: w as u8,
            key_width: k as u8,
            index_entry,
            tags_at,
            keys_at,
            slots_at,
            index_at,
            end,
        })
    }

    /// Writes the header (layout byte, count, capacity) at `buf[pos..]`. Inline: writers
    /// call it once per container, and most headers are two bytes.
    #[inline]
    pub fn write_header(&self, buf: &mut [u8], pos: usize) {
        buf[pos] = self.layout_byte();
        let mut q = pos + 1;
        q += put_varint(&mut buf[q..], self.count as u64);
        if let Some(c) = self.capacity {
            put_varint(&mut buf[q..], c as u64);
        }
    }

    /// Appends a zeroed block of this shape to `out` (at its end) with the header written;
    /// returns the geometry, for the caller to fill children and index.
    pub fn append_to(&self, out: &mut (impl super::sink::ByteSink + ?Sized)) -> Geometry {
        let g = self.geometry(out.len());
        out.resize(g.end, 0);
        self.write_header(out, g.pos);
        g
    }
}

/// A canonical container without a count varint longer than one byte or a hash index
/// (spec §§4, 7): an array of fewer than 128 children, or an object or intmap of at most
/// `INDEX_THRESHOLD`: most containers. The same parts as
/// `Shape::canonical(tag, count, width, key_width).geometry(pos)` (tested), computed with
/// none of the general placement's branches, for writers that place and write many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmallContainer {
    count: usize,
    width: usize,
    key_width: usize,
}

impl SmallContainer {
    /// The shape of a container of `count` children in slots of `width` (1, 2, 4 or 8)
    /// with keys of `key_width` (0 for arrays), or `None` if it is not small.
    #[inline(always)]
    pub fn new(t: u8, count: usize, width: usize, key_width: usize) -> Option<SmallContainer> {
        debug_assert!(width.is_power_of_two() && width <= 8 && (key_width == 0) == (t == tag::ARRAY));
        let small = if t == tag::ARRAY { count < 0x80 } else { count <= INDEX_THRESHOLD };
        small.then_some(SmallContainer { count, width, key_width })
    }

    /// The slot width.
    #[inline(always)]
    pub fn width(&self) -> usize {
        self.width
    }

    /// The key width (0 for arrays).
    #[inline(always)]
    pub fn key_width(&self) -> usize {
        self.key_width
    }

    /// Where the tags start, for the block at `pos`.
    #[inline(always)]
    pub fn tags_at(&self, pos: usize) -> usize {
        pos + 2
    }

    /// Where the keys start, for the block at `pos`.
    #[inline(always)]
    pub fn keys_at(&self, pos: usize) -> usize {
        pos + 2 + self.count
    }

    /// Where the slots start, for the block at `pos`.
    #[inline(always)]
    pub fn slots_at(&self, pos: usize) -> usize {
        (self.keys_at(pos) + self.count * self.key_width + self.width - 1) & !(self.width - 1)
    }

    /// The byte past the block at `pos`.
    #[inline(always)]
    pub fn end(&self, pos: usize) -> usize {
        self.slots_at(pos) + self.count * self.width
    }

    /// Writes the header (layout byte and one-byte count) at `buf[pos..]`.
    #[inline(always)]
    pub fn write_header(&self, buf: &mut [u8], pos: usize) {
        let keys = if self.key_width == 0 { 0 } else { log2_width(self.key_width) << bits::KEY_WIDTH_SHIFT };
        buf[pos..pos + 2].copy_from_slice(&[log2_width(self.width) | keys, self.count as u8]);
    }
}

/// The arithmetic a geometry is computed in.
trait Arith {
    fn add(a: usize, b: usize) -> Option<usize>;
    fn mul(a: usize, b: usize) -> Option<usize>;
    /// `pos` rounded up to a multiple of `to`, a power of two.
    fn align(pos: usize, to: usize) -> Option<usize>;
}

/// Sizes read from a document: any step may overflow.
struct Checked;

impl Arith for Checked {
    #[inline(always)]
    fn add(a: usize, b: usize) -> Option<usize> {
        a.checked_add(b)
    }
    #[inline(always)]
    fn mul(a: usize, b: usize) -> Option<usize> {
        a.checked_mul(b)
    }
    #[inline(always)]
    fn align(pos: usize, to: usize) -> Option<usize> {
        super::checked_align(pos, to)
    }
}

/// Sizes that cannot overflow: a small count at a position inside a buffer (always `Some`).
struct Plain;

impl Arith for Plain {
    #[inline(always)]
    fn add(a: usize, b: usize) -> Option<usize> {
        Some(a + b)
    }
    #[inline(always)]
    fn mul(a: usize, b: usize) -> Option<usize> {
        Some(a * b)
    }
    #[inline(always)]
    fn align(pos: usize, to: usize) -> Option<usize> {
        Some(super::align(pos, to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two-byte test of an empty container agrees with the parser on every layout
    /// byte, tag and position near the end of a buffer.
    #[test]
    fn plain_empty_containers_are_what_the_parser_reads_as_empty() {
        for t in [tag::ARRAY, tag::OBJECT, tag::INTMAP, tag::STRING] {
            for layout_byte in 0..=255u8 {
                for count in [0u8, 1, 0x80] {
                    for len in HEADER_LEN..HEADER_LEN + 24 {
                        let mut buf = vec![0u8; len];
                        for offset in HEADER_LEN - 1..len + 1 {
                            if offset + 1 < len {
                                buf[offset] = layout_byte;
                                buf[offset + 1] = count;
                            }
                            let parsed = Geometry::parse(&buf, offset as u64, t)
                                .is_ok_and(|g| g.count == 0 && !g.has_capacity && !g.has_index() && g.tags_at == offset + 2);
                            assert_eq!(Geometry::is_plain_empty(&buf, offset as u64, t), parsed, "{t} {layout_byte:#04x} {count} {len} {offset}");
                            if offset + 1 < len {
                                buf[offset] = 0;
                                buf[offset + 1] = 0;
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn parse_reads_back_what_a_shape_writes() {
        for shape in [
            Shape::canonical(tag::ARRAY, 3, 2, 0),
            Shape::canonical(tag::OBJECT, 200, 8, 1),
            Shape::with_capacity(tag::INTMAP, 5, 300, 4, 8),
            Shape::canonical(tag::ARRAY, 0, 1, 0),
        ] {
            let mut buf = vec![0u8; HEADER_LEN + 3];
            let g = shape.append_to(&mut buf);
            assert_eq!(Geometry::parse(&buf, g.pos as u64, shape.tag).unwrap(), g, "{shape:?}");
            buf.truncate(g.end - 1);
            assert!(Geometry::parse(&buf, g.pos as u64, shape.tag).is_err());
        }
    }

    /// The plain placement of small canonical shapes is the checked one, for every tag,
    /// count, slot width and key width it covers, at positions of any alignment.
    #[test]
    fn small_shapes_place_as_the_checked_arithmetic_does() {
        for (t, count, width, key_width) in canonical_shapes(0x80) {
            let shape = Shape::canonical(t, count, width, key_width);
            for pos in HEADER_LEN..HEADER_LEN + 8 {
                let checked = shape.checked_geometry(pos, shape.header_len()).unwrap();
                assert_eq!(shape.geometry(pos), checked, "{shape:?} at {pos}");
            }
        }
    }

    /// Every (tag, count, slot width, key width) of a canonical container with fewer than
    /// `counts` children.
    fn canonical_shapes(counts: usize) -> impl Iterator<Item = (u8, usize, usize, usize)> {
        [tag::ARRAY, tag::OBJECT, tag::INTMAP].into_iter().flat_map(move |t| {
            let key_widths: &'static [usize] = match t {
                tag::ARRAY => &[0],
                tag::OBJECT => &[1, 2, 4],
                _ => &[1, 2, 4, 8],
            };
            (0..counts).flat_map(move |count| {
                [1, 2, 4, 8].into_iter().flat_map(move |width| key_widths.iter().map(move |&key_width| (t, count, width, key_width)))
            })
        })
    }

    #[test]
    fn small_containers_are_placed_and_headed_as_their_shapes() {
        for (t, count, width, key_width) in canonical_shapes(0x100) {
            let shape = Shape::canonical(t, count, width, key_width);
            let Some(small) = SmallContainer::new(t, count, width, key_width) else {
                assert!(shape.indexed || count >= 0x80, "{shape:?} is small");
                continue;
            };
            assert!(!shape.indexed && count < 0x80, "{shape:?} is not small");
            for pos in HEADER_LEN..HEADER_LEN + 8 {
                let g = shape.geometry(pos);
                let parts = (small.tags_at(pos), small.keys_at(pos), small.slots_at(pos), small.end(pos));
                assert_eq!(parts, (g.tags_at, g.keys_at, g.slots_at, g.end), "{shape:?} at {pos}");
                let (mut a, mut b) = (vec![0u8; pos + 2], vec![0u8; pos + 2]);
                shape.write_header(&mut a, pos);
                small.write_header(&mut b, pos);
                assert_eq!(a, b, "{shape:?}");
            }
        }
    }

    #[test]
    fn an_empty_container_may_end_the_document() {
        let mut buf = vec![0u8; HEADER_LEN];
        let g = Shape::canonical(tag::ARRAY, 0, 1, 0).append_to(&mut buf);
        assert_eq!(g.end, buf.len());
        assert_eq!(Geometry::parse(&buf, g.pos as u64, tag::ARRAY).unwrap().count, 0);
    }
}

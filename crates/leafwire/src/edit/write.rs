//! The byte-level half of editing: in-place rewrites, relocation to `end`, new blocks for
//! values, and turning old blocks into garbage. Where a container's parts lie comes from
//! `format::container`; the key dictionary's growth is in `dictionary.rs`.
//!
//! The editor only holds validated documents, so the parses here succeed; they still
//! return errors rather than assume it (a bug, or bytes changed behind the editor's back,
//! give an error, never a panic).

use crate::format::sink::ByteSink;
use super::{Editor, Step};
use crate::error::{Error, Result};
use crate::format::container::{Geometry, Shape};
use crate::format::numbers::{put_varint, read_varint, signed_width, unsigned_width};
use crate::format::typed::{self, TypedHeader};
use crate::format::{hash, tag, varint_len, write_varint, INDEX_THRESHOLD};
use crate::value::Value;

/// A container's children as plain vectors: tag, raw key (id or int) and payload.
pub(super) struct Entries {
    pub tags: Vec<u8>,
    pub keys: Vec<u64>,
    pub slots: Vec<u64>,
}

impl Entries {
    fn new() -> Entries {
        Entries { tags: Vec::new(), keys: Vec::new(), slots: Vec::new() }
    }

    fn push(&mut self, t: u8, key: u64, payload: u64) {
        self.tags.push(t);
        self.keys.push(key);
        self.slots.push(payload);
    }

    pub fn remove(&mut self, i: usize) {
        self.tags.remove(i);
        self.keys.remove(i);
        self.slots.remove(i);
    }

    fn len(&self) -> usize {
        self.tags.len()
    }

    /// The narrowest slot width holding every payload.
    fn width(&self) -> usize {
        (0..self.len()).map(|i| tag::payload_width(self.tags[i], self.slots[i])).max().unwrap_or(1)
    }
}

/// The narrowest key width holding `keys` for a container of tag `t` (spec §7).
fn key_width(t: u8, keys: &[u64]) -> usize {
    match t {
        tag::ARRAY => 0,
        tag::OBJECT => keys.iter().map(|&k| unsigned_width(k)).max().unwrap_or(1),
        _ => keys.iter().map(|&k| signed_width(k as i64)).max().unwrap_or(1),
    }
}

/// (tag, payload) of a value stored in its parent's slot, for scalars.
fn scalar(v: &Value) -> Option<(u8, u64)> {
    Some(match *v {
        Value::Null => (tag::NULL, 0),
        Value::Bool(b) => (if b { tag::TRUE } else { tag::FALSE }, 0),
        Value::Int(x) => (tag::INT, x as u64),
        Value::UInt(x) if x <= i64::MAX as u64 => (tag::INT, x),
        Value::UInt(x) => (tag::UINT, x),
        Value::F64(x) => (tag::F64, x.to_bits()),
        Value::F32(x) => (tag::F32, x.to_bits() as u64),
        _ => return None,
    })
}

/// The error of a broken invariant: the editor holds a validated document, so this means
/// a bug or bytes changed behind its back.
#[cold]
pub(super) fn broken(pos: usize, what: &str) -> Error {
    Error::malformed(pos as u64, format!("the document changed under the editor or an editor bug: {what}"))
}

impl Editor {
    pub(super) fn geometry(&self, pos: usize, t: u8) -> Result<Geometry> {
        Geometry::parse(&self.buf, pos as u64, t)
    }

    pub(super) fn read_entries(&self, g: &Geometry) -> Result<Entries> {
        let mut e = Entries::new();
        for i in 0..g.count {
            let (t, payload) = g.child(&self.buf, i)?;
            e.push(t, g.key(&self.buf, i), payload);
        }
        Ok(e)
    }

    /// Points the slot that `chain` ends at (the root record if empty) at (t, p),
    /// relocating the container when the payload needs a wider slot.
    pub(super) fn write_slot(&mut self, chain: &[Step], t: u8, p: u64) -> Result<()> {
        let Some((step, parents)) = chain.split_last() else {
            self.record.root_tag = t;
            self.record.root = p;
            return Ok(());
        };
        let g = self.geometry(step.pos, step.tag)?;
        if tag::payload_width(t, p) <= g.width as usize {
            let key = g.key(&self.buf, step.index);
            self.put_child(&g, step.index, t, key, p);
            return Ok(());
        }
        let mut entries = self.read_entries(&g)?;
        entries.tags[step.index] = t;
        entries.slots[step.index] = p;
        self.relocate(parents, &g, &entries)
    }

    /// Adds child (ct, key, p) at position `at.index` of the container `at` names; `chain`
    /// leads to that container.
    pub(super) fn insert_child(&mut self, chain: &[Step], at: Step, key: u64, ct: u8, p: u64) -> Result<()> {
        let Step { pos, tag: t, index } = at;
        let g = self.geometry(pos, t)?;
        let n = g.count;
        let fits_widths = tag::payload_width(ct, p) <= g.width as usize && key_width(t, &[key]) <= g.key_width as usize;
        let appendable = index == n
            && g.has_capacity
            && n < g.capacity
            && varint_len(n as u64 + 1) == varint_len(n as u64)
            && fits_widths
            && (t == tag::ARRAY || g.has_index() || n < INDEX_THRESHOLD);
        if appendable {
            self.put_child(&g, n, ct, key, p);
            self.touch(pos + 1, varint_len(n as u64 + 1));
            put_varint(&mut self.buf[pos + 1..], n as u64 + 1);
            if g.has_index() {
                let h = self.hash_of(t, key)?;
                let entry = g.index_entry as usize;
                let at = g.index_at + hash::insert(&mut self.buf[g.index_at..g.end], entry, h, n);
                self.touch(at, entry);
            }
            return Ok(());
        }
        if index == n && fits_widths {
            return self.grow_container(chain, &g, key, ct, p);
        }
        let mut entries = self.read_entries(&g)?;
        entries.tags.insert(index, ct);
        entries.keys.insert(index, key);
        entries.slots.insert(index, p);
        self.store_container(chain, &g, entries)
    }

    /// Stores new children for a container: in place when they fit its geometry, else
    /// relocated to `end`.
    pub(super) fn store_container(&mut self, parents: &[Step], g: &Geometry, e: Entries) -> Result<()> {
        let n = e.len();
        let fits = g.has_capacity
            && n <= g.capacity
            && varint_len(n as u64) == varint_len(g.count as u64)
            && e.width() <= g.width as usize
            && key_width(g.tag, &e.keys) <= g.key_width as usize
            && (g.tag == tag::ARRAY || g.has_index() || n <= INDEX_THRESHOLD);
        if !fits {
            return self.relocate(parents, g, &e);
        }
        self.touch(g.pos, g.end - g.pos);
        put_varint(&mut self.buf[g.pos + 1..], n as u64);
        // Clear every position first: the spare capacity must be zero (spec §8.1).
        let cleared = Geometry { count: g.capacity, ..*g };
        for i in 0..g.capacity {
            cleared.write_child(&mut self.buf, i, 0, 0, 0);
        }
        for i in 0..n {
            g.write_child(&mut self.buf, i, e.tags[i], e.keys[i], e.slots[i]);
        }
        if g.has_index() {
            let hashes = self.hashes(g.tag, &e.keys)?;
            let index = &mut self.buf[g.index_at..g.end];
            index.fill(0);
            hash::fill(index, g.index_entry as usize, hashes);
        }
        Ok(())
    }

    /// Writes the container anew at `end` with spare capacity, frees the old block and
    /// points the parent at the copy.
    fn relocate(&mut self, parents: &[Step], g: &Geometry, e: &Entries) -> Result<()> {
        let n = e.len();
        let new_pos = self.write_container(g.tag, e, Some((n + n / 2).max(4)))?;
        self.zero(g.pos, g.end);
        self.write_slot(parents, g.tag, new_pos as u64)
    }

    /// Appends child (ct, key, p) to a container whose widths already hold it by copying
    /// the container to `end` with spare capacity: its arrays move as three slices instead
    /// of being decoded into entries. Only the hash index is rebuilt.
    fn grow_container(&mut self, parents: &[Step], g: &Geometry, key: u64, ct: u8, p: u64) -> Result<()> {
        let (old_n, n) = (g.count, g.count + 1);
        let old_table = g.index_table();
        // A canonical container has no spare room, but its index table has room for up to
        // twice its count: while the table still fits the new child, keep its geometry and
        // copy it as it is instead of rehashing every key (the growth after that rehashes).
        let keep_index = g.has_index() && hash::largest_capacity(old_table, g.index_entry as usize) >= n;
        let cap = if keep_index { hash::largest_capacity(old_table, g.index_entry as usize) } else { (n + n / 2).max(4) };
        let (w, kw) = (g.width as usize, g.key_width as usize);
        let new = Shape::with_capacity(g.tag, n, cap, w, kw).append_to(&mut self.buf);
        self.buf.copy_within(g.tags_at..g.tags_at + old_n, new.tags_at);
        self.buf.copy_within(g.keys_at..g.keys_at + old_n * kw, new.keys_at);
        self.buf.copy_within(g.slots_at..g.slots_at + old_n * w, new.slots_at);
        new.write_child(&mut self.buf, old_n, ct, key, p);
        if keep_index {
            debug_assert_eq!(new.index_table(), old_table);
            self.buf.copy_within(g.index_at..g.end, new.index_at);
            let h = self.hash_of(g.tag, key)?;
            hash::insert(&mut self.buf[new.index_at..new.end], new.index_entry as usize, h, old_n);
        } else if new.has_index() {
            let keys: Vec<u64> = (0..n).map(|i| new.key(&self.buf, i)).collect();
            let hashes = self.hashes(g.tag, &keys)?;
            hash::fill(&mut self.buf[new.index_at..new.end], new.index_entry as usize, hashes);
        }
        self.zero(g.pos, g.end);
        self.write_slot(parents, g.tag, new.pos as u64)
    }

    /// The index hash of a child's key: the key hash of its dictionary key (objects), the
    /// integer itself (intmaps).
    fn hash_of(&self, t: u8, key: u64) -> Result<u64> {
        if t != tag::OBJECT {
            return Ok(key);
        }
        Ok(hash::key_hash(self.dictionary()?.key(&self.buf, key)?))
    }

    fn hashes(&self, t: u8, keys: &[u64]) -> Result<Vec<u64>> {
        keys.iter().map(|&k| self.hash_of(t, k)).collect()
    }

    /// Appends a container block; `cap` adds spare capacity (layout bit 4).
    fn write_container(&mut self, t: u8, e: &Entries, cap: Option<usize>) -> Result<usize> {
        let (n, w, kw) = (e.len(), e.width(), key_width(t, &e.keys));
        let shape = match cap {
            Some(c) => Shape::with_capacity(t, n, c, w, kw),
            None => Shape::canonical(t, n, w, kw),
        };
        let hashes = if shape.indexed { self.hashes(t, &e.keys)? } else { Vec::new() };
        let g = shape.append_to(&mut self.buf);
        for i in 0..n {
            g.write_child(&mut self.buf, i, e.tags[i], e.keys[i], e.slots[i]);
        }
        if g.has_index() {
            hash::fill(&mut self.buf[g.index_at..g.end], g.index_entry as usize, hashes);
        }
        Ok(g.pos)
    }

    /// Appends the blocks of a (checked) value; returns its (tag, payload).
    pub(super) fn write_value(&mut self, v: &Value) -> Result<(u8, u64)> {
        if let Some(s) = scalar(v) {
            return Ok(s);
        }
        let data = |this: &mut Editor, t: u8, bytes: &[u8]| {
            let pos = this.buf.len();
            write_varint(&mut this.buf, bytes.len() as u64);
            this.buf.extend_from_slice(bytes);
            Ok((t, pos as u64))
        };
        let mut e = Entries::new();
        let t = match v {
            Value::String(s) => return data(self, tag::STRING, s.as_bytes()),
            Value::Bytes(b) => return data(self, tag::BYTES, b),
            Value::BigNum(s) => return data(self, tag::BIGNUM, s.as_bytes()),
            Value::Table(t) => {
                // Its length, padding to 8 and the body as it is (spec §15.1).
                let pos = self.buf.len();
                let mut prefix = [0u8; 17];
                let n = crate::format::table::write_prefix(&mut prefix, pos, t.body().len());
                self.buf.extend_from_slice(&prefix[..n]);
                self.buf.extend_from_slice(t.body());
                return Ok((tag::TABLE, pos as u64));
            }
            Value::Typed(t) => {
                let pos = self.buf.len();
                let shape = t.shape_u64();
                self.buf.resize(pos + typed::header_len(shape.iter().copied()) + t.element_type().size(), 0);
                let mask = t.int_mask();
                let data_at = typed::write_header(&mut self.buf, pos, t.element_type(), &shape, mask.is_some());
                self.buf.truncate(data_at);
                self.buf.extend_from_slice(&t.data().le_bytes());
                if let Some(mask) = mask {
                    typed::pack_mask(mask.iter().copied(), &mut self.buf);
                }
                return Ok((tag::TYPED, pos as u64));
            }
            Value::Array(items) => {
                for item in items {
                    let (t, p) = self.write_value(item)?;
                    e.push(t, 0, p);
                }
                tag::ARRAY
            }
            Value::Object(map) => {
                for (k, item) in map {
                    let id = self.ensure_key(k)?;
                    let (t, p) = self.write_value(item)?;
                    e.push(t, id, p);
                }
                tag::OBJECT
            }
            Value::IntMap(map) => {
                for (&k, item) in map {
                    let (t, p) = self.write_value(item)?;
                    e.push(t, k as u64, p);
                }
                tag::INTMAP
            }
            _ => return Err(broken(0, "a scalar reached the block writer")),
        };
        Ok((t, self.write_container(t, &e, None)? as u64))
    }

    /// Rewrites the string, bytes or bignum block of `old` in place with the data value
    /// `v` when `v` is no longer: an update that fits writes only its own bytes. The unused tail is zeroed and counted
    /// as garbage. Returns the new tag (the payload, the block's offset, is unchanged).
    pub(super) fn overwrite_data(&mut self, old: (u8, u64), v: &Value) -> Result<Option<u8>> {
        let (t, content) = match v {
            Value::String(s) => (tag::STRING, s.as_bytes()),
            Value::Bytes(b) => (tag::BYTES, b.as_slice()),
            Value::BigNum(s) => (tag::BIGNUM, s.as_bytes()),
            _ => return Ok(None),
        };
        let pos = old.1 as usize;
        if !matches!(old.0, tag::STRING | tag::BYTES | tag::BIGNUM) {
            return Ok(None);
        }
        let (_, end) = crate::format::data::span(&self.buf, old.1)?;
        let mut head = [0u8; 10];
        let head_len = put_varint(&mut head, content.len() as u64);
        let new_end = pos + head_len + content.len();
        if new_end > end {
            return Ok(None);
        }
        self.touch(pos, new_end - pos);
        self.buf[pos..pos + head_len].copy_from_slice(&head[..head_len]);
        self.buf[pos + head_len..new_end].copy_from_slice(content);
        self.zero(new_end, end);
        Ok(Some(t))
    }

    /// Zeroes `start..end` and counts it as garbage.
    pub(super) fn zero(&mut self, start: usize, end: usize) {
        self.record.garbage += (end - start) as u64;
        self.touch(start, end - start);
        self.buf[start..end].fill(0);
    }

    /// Writes child `i` of container `g` in place.
    pub(super) fn put_child(&mut self, g: &Geometry, i: usize, t: u8, key: u64, p: u64) {
        let (kw, w) = (g.key_width as usize, g.width as usize);
        self.touch(g.tags_at + i, 1);
        self.touch(g.keys_at + i * kw, kw);
        self.touch(g.slots_at + i * w, w);
        g.write_child(&mut self.buf, i, t, key, p);
    }

    /// Turns the blocks of a value that is no longer reachable into garbage.
    pub(super) fn free_value(&mut self, t: u8, p: u64) -> Result<()> {
        let pos = p as usize;
        match t {
            tag::STRING | tag::BYTES | tag::BIGNUM => {
                let (len, at) = read_varint(&self.buf, pos)?;
                let end = usize::try_from(len).ok().and_then(|l| at.checked_add(l)).filter(|&e| e <= self.buf.len());
                self.zero(pos, end.ok_or_else(|| broken(pos, "a data block runs past the end"))?);
            }
            tag::TYPED => {
                let end = TypedHeader::parse(&self.buf, p)?.end();
                self.zero(pos, end);
            }
            tag::TABLE => {
                let end = crate::format::table::TableBlock::parse(&self.buf, p)?.end();
                self.zero(pos, end);
            }
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                let g = self.geometry(pos, t)?;
                let e = self.read_entries(&g)?;
                for i in 0..e.len() {
                    self.free_value(e.tags[i], e.slots[i])?;
                }
                self.zero(g.pos, g.end);
            }
            _ => {}
        }
        Ok(())
    }
}

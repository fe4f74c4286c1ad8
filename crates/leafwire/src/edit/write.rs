//! The byte-level half of editing: container geometry, in-place rewrites, relocation to
//! `end`, new blocks for values, the key dictionary, and turning old blocks into garbage.

use super::{Editor, Step};
use crate::error::Result;
use crate::from_value::typed_bytes;
use crate::layout::{self, align, container, read_u32, read_uint, read_varint, tag, varint_len, write_varint, INDEX_THRESHOLD};
use crate::read::container::{Container, Dict};
use crate::read::typed::TypedHeader;
use crate::value::Value;

/// What an edit needs to know about a container, detached from the buffer.
pub(super) struct Info {
    pub pos: usize,
    pub tag: u8,
    pub count: usize,
    cap: usize,
    width: usize,
    key_width: usize,
    has_capacity: bool,
    index_entry: usize,
    tags_at: usize,
    keys_at: usize,
    slots_at: usize,
    index_at: usize,
    end: usize,
}

/// A container's children as plain vectors: tag, raw key (id or int) and payload.
pub(super) struct Entries {
    pub tags: Vec<u8>,
    pub keys: Vec<u64>,
    pub slots: Vec<u64>,
}

impl Entries {
    pub fn remove(&mut self, i: usize) {
        self.tags.remove(i);
        self.keys.remove(i);
        self.slots.remove(i);
    }

    fn len(&self) -> usize {
        self.tags.len()
    }
}

/// The narrowest slot width that holds payload `p` of tag `t` (spec §3.2).
fn need_width(t: u8, p: u64) -> usize {
    match t {
        tag::NULL | tag::FALSE | tag::TRUE => 1,
        tag::INT => layout::signed_width(p as i64),
        tag::UINT | tag::F64 => 8,
        tag::F32 => 4,
        _ => layout::unsigned_width(p),
    }
}

fn key_width(t: u8, keys: &[u64]) -> usize {
    match t {
        tag::ARRAY => 0,
        tag::OBJECT => keys.iter().map(|&k| layout::unsigned_width(k)).max().unwrap_or(1),
        _ => keys.iter().map(|&k| layout::signed_width(k as i64)).max().unwrap_or(1),
    }
}

/// Writes the varint of `v` (spec §3.1) into `out`; returns its length.
fn varint_into(out: &mut [u8; 10], mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        out[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    n + 1
}

fn write_uint(buf: &mut [u8], at: usize, width: usize, v: u64) {
    buf[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
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

impl Editor {
    pub(super) fn info(&self, pos: usize, t: u8) -> Result<Info> {
        let c = Container::parse(&self.buf, pos as u64, t)?;
        Ok(Info {
            pos,
            tag: t,
            count: c.count,
            cap: c.capacity as usize,
            width: c.width as usize,
            key_width: c.key_width as usize,
            has_capacity: self.buf[pos] & container::HAS_CAPACITY != 0,
            index_entry: if c.has_index() { c.index_entry as usize } else { 0 },
            tags_at: c.tags_at(),
            keys_at: c.keys_at(),
            slots_at: c.slots_at(),
            index_at: c.index_at(),
            end: c.end(),
        })
    }

    pub(super) fn read_entries(&self, info: &Info) -> Entries {
        let n = info.count;
        let tags = self.buf[info.tags_at..info.tags_at + n].to_vec();
        let keys = (0..n)
            .map(|i| {
                let raw = if info.key_width == 0 { 0 } else { read_uint(&self.buf[info.keys_at..], info.key_width, i) };
                if info.tag == tag::INTMAP { layout::sign_extend(raw, info.key_width) as u64 } else { raw }
            })
            .collect();
        let slots = (0..n)
            .map(|i| {
                let raw = read_uint(&self.buf[info.slots_at..], info.width, i);
                if tags[i] == tag::INT { layout::sign_extend(raw, info.width) as u64 } else { raw }
            })
            .collect();
        Entries { tags, keys, slots }
    }

    /// Points the slot that `chain` ends at (the root record if empty) at (t, p),
    /// relocating the container when the payload needs a wider slot.
    pub(super) fn write_slot(&mut self, chain: &[Step], t: u8, p: u64) {
        let Some((step, parents)) = chain.split_last() else {
            self.record.root_tag = t;
            self.record.root = p;
            return;
        };
        let info = self.info(step.pos, step.tag).expect("a resolved container parses");
        if need_width(t, p) <= info.width && step.pos >= self.frozen() {
            self.buf[info.tags_at + step.index] = t;
            write_uint(&mut self.buf, info.slots_at + step.index * info.width, info.width, p);
            return;
        }
        let mut entries = self.read_entries(&info);
        entries.tags[step.index] = t;
        entries.slots[step.index] = p;
        self.relocate(parents, &info, &entries);
    }

    /// Adds child (ct, key, p) at position `at.index` of the container `at` names; `chain`
    /// leads to that container.
    pub(super) fn insert_child(&mut self, chain: &[Step], at: Step, key: u64, ct: u8, p: u64) -> Result<()> {
        let Step { pos, tag: t, index } = at;
        let info = self.info(pos, t)?;
        let n = info.count;
        let appendable = index == n
            && pos >= self.frozen()
            && info.has_capacity
            && n < info.cap
            && varint_len(n as u64 + 1) == varint_len(n as u64)
            && need_width(ct, p) <= info.width
            && key_width(t, &[key]) <= info.key_width
            && (t == tag::ARRAY || info.index_entry != 0 || n < INDEX_THRESHOLD);
        if appendable {
            self.buf[info.tags_at + n] = ct;
            if info.key_width > 0 {
                write_uint(&mut self.buf, info.keys_at + n * info.key_width, info.key_width, key);
            }
            write_uint(&mut self.buf, info.slots_at + n * info.width, info.width, p);
            let mut count = [0u8; 10];
            let count_len = varint_into(&mut count, n as u64 + 1);
            self.buf[pos + 1..pos + 1 + count_len].copy_from_slice(&count[..count_len]);
            if let Some(table) = (info.end - info.index_at).checked_div(info.index_entry) {
                let hash = self.hash_of(t, key);
                let mut bucket = layout::home_bucket(hash, table);
                while read_uint(&self.buf[info.index_at..], info.index_entry, bucket) != 0 {
                    bucket = (bucket + 1) & (table - 1);
                }
                write_uint(&mut self.buf, info.index_at + bucket * info.index_entry, info.index_entry, n as u64 + 1);
            }
            return Ok(());
        }
        if index == n && need_width(ct, p) <= info.width && key_width(t, &[key]) <= info.key_width {
            self.grow_container(chain, &info, key, ct, p);
            return Ok(());
        }
        let mut entries = self.read_entries(&info);
        entries.tags.insert(index, ct);
        entries.keys.insert(index, key);
        entries.slots.insert(index, p);
        self.store_container(chain, &info, entries);
        Ok(())
    }

    /// Stores new children for a container: in place when they fit its geometry, else
    /// relocated to `end`.
    pub(super) fn store_container(&mut self, parents: &[Step], info: &Info, e: Entries) {
        let n = e.len();
        let width = (0..n).map(|i| need_width(e.tags[i], e.slots[i])).max().unwrap_or(1);
        let fits = info.has_capacity
            && info.pos >= self.frozen()
            && n <= info.cap
            && varint_len(n as u64) == varint_len(info.count as u64)
            && width <= info.width
            && key_width(info.tag, &e.keys) <= info.key_width
            && (info.tag == tag::ARRAY || info.index_entry != 0 || n <= INDEX_THRESHOLD);
        if !fits {
            self.relocate(parents, info, &e);
            return;
        }
        let mut count = Vec::new();
        write_varint(&mut count, n as u64);
        self.buf[info.pos + 1..info.pos + 1 + count.len()].copy_from_slice(&count);
        let (kw, w) = (info.key_width, info.width);
        self.buf[info.tags_at..info.tags_at + n].copy_from_slice(&e.tags);
        self.buf[info.tags_at + n..info.tags_at + info.cap].fill(0);
        if kw > 0 {
            for (i, &k) in e.keys.iter().enumerate() {
                write_uint(&mut self.buf, info.keys_at + i * kw, kw, k);
            }
            self.buf[info.keys_at + n * kw..info.keys_at + info.cap * kw].fill(0);
        }
        for (i, &s) in e.slots.iter().enumerate() {
            write_uint(&mut self.buf, info.slots_at + i * w, w, s);
        }
        self.buf[info.slots_at + n * w..info.slots_at + info.cap * w].fill(0);
        if info.index_entry != 0 {
            let table = self.build_index(info.tag, &e.keys, info.cap);
            for (b, &entry) in table.iter().enumerate() {
                write_uint(&mut self.buf, info.index_at + b * info.index_entry, info.index_entry, entry as u64);
            }
        }
    }

    /// Writes the container anew at `end` with spare capacity, frees the old block and
    /// points the parent at the copy.
    fn relocate(&mut self, parents: &[Step], info: &Info, e: &Entries) {
        let n = e.len();
        let cap = (n + n / 2).max(4);
        let new_pos = self.write_container(info.tag, e, Some(cap));
        self.zero(info.pos, info.end);
        self.write_slot(parents, info.tag, new_pos as u64);
    }

    /// Appends child (ct, key, p) to a container whose widths already hold it by copying
    /// the container to `end` with spare capacity: its arrays move as three slices instead
    /// of being decoded into entries. Only the hash index is rebuilt.
    fn grow_container(&mut self, parents: &[Step], info: &Info, key: u64, ct: u8, p: u64) {
        let (old_n, n) = (info.count, info.count + 1);
        let old_table = (info.end - info.index_at).checked_div(info.index_entry).unwrap_or(0);
        // A canonical container has no spare room, but its index table has room for up to
        // twice its count: while the table still fits the new child, keep its geometry and
        // copy it as it is instead of rehashing every key (the growth after that rehashes).
        let keep_index = info.index_entry != 0 && largest_capacity(old_table, info.index_entry) >= n;
        let cap = if keep_index { largest_capacity(old_table, info.index_entry) } else { (n + n / 2).max(4) };
        let (w, kw) = (info.width, info.key_width);
        let has_index = info.tag != tag::ARRAY && cap > INDEX_THRESHOLD;
        let mut layout_byte = layout::log2_width(w) | container::HAS_CAPACITY;
        if kw > 0 {
            layout_byte |= layout::log2_width(kw) << container::KEY_WIDTH_SHIFT;
        }
        if has_index {
            layout_byte |= container::HAS_INDEX;
        }
        let pos = self.buf.len();
        self.buf.push(layout_byte);
        write_varint(&mut self.buf, n as u64);
        write_varint(&mut self.buf, cap as u64);
        self.buf.extend_from_within(info.tags_at..info.tags_at + old_n);
        self.buf.push(ct);
        self.buf.resize(self.buf.len() + cap - n, 0);
        let keys_at = self.buf.len();
        self.buf.extend_from_within(info.keys_at..info.keys_at + old_n * kw);
        self.buf.extend_from_slice(&key.to_le_bytes()[..kw]);
        self.buf.resize(self.buf.len() + (cap - n) * kw, 0);
        self.buf.resize(align(self.buf.len(), w), 0);
        self.buf.extend_from_within(info.slots_at..info.slots_at + old_n * w);
        self.buf.extend_from_slice(&p.to_le_bytes()[..w]);
        self.buf.resize(self.buf.len() + (cap - n) * w, 0);
        if keep_index {
            self.buf.resize(align(self.buf.len(), info.index_entry), 0);
            let index_at = self.buf.len();
            self.buf.extend_from_within(info.index_at..info.end);
            let mut bucket = layout::home_bucket(self.hash_of(info.tag, key), old_table);
            while read_uint(&self.buf[index_at..], info.index_entry, bucket) != 0 {
                bucket = (bucket + 1) & (old_table - 1);
            }
            write_uint(&mut self.buf, index_at + bucket * info.index_entry, info.index_entry, n as u64);
        } else if has_index {
            let keys: Vec<u64> = (0..n)
                .map(|i| {
                    let raw = read_uint(&self.buf[keys_at..], kw, i);
                    if info.tag == tag::INTMAP { layout::sign_extend(raw, kw) as u64 } else { raw }
                })
                .collect();
            let (_, entry) = layout::index_geometry(cap);
            self.buf.resize(align(self.buf.len(), entry), 0);
            for v in self.build_index(info.tag, &keys, cap) {
                self.buf.extend_from_slice(&(v as u64).to_le_bytes()[..entry]);
            }
        }
        self.zero(info.pos, info.end);
        self.write_slot(parents, info.tag, pos as u64);
    }

    fn hash_of(&self, t: u8, key: u64) -> u64 {
        if t == tag::OBJECT {
            let dict = Dict::parse(&self.buf, self.record.dictionary).expect("the dictionary parses");
            layout::key_hash(dict.key(&self.buf, key).expect("key ids in use are in the dictionary"))
        } else {
            key
        }
    }

    /// The hash index table (entries) of a container of capacity `cap` (spec §4.1).
    fn build_index(&self, t: u8, keys: &[u64], cap: usize) -> Vec<u32> {
        let (size, _) = layout::index_geometry(cap);
        let mut table = vec![0u32; size];
        let dict = Dict::parse(&self.buf, self.record.dictionary).expect("the dictionary parses");
        let hash = |k: u64| match t {
            tag::OBJECT => layout::key_hash(dict.key(&self.buf, k).expect("key ids in use are in the dictionary")),
            _ => k,
        };
        for (i, &k) in keys.iter().enumerate() {
            let mut bucket = layout::home_bucket(hash(k), size);
            while table[bucket] != 0 {
                bucket = (bucket + 1) & (size - 1);
            }
            table[bucket] = i as u32 + 1;
        }
        table
    }

    /// Appends a container block; `cap` adds spare capacity (layout bit 4).
    fn write_container(&mut self, t: u8, e: &Entries, cap: Option<usize>) -> usize {
        let n = e.len();
        let c = cap.unwrap_or(n);
        let w = (0..n).map(|i| need_width(e.tags[i], e.slots[i])).max().unwrap_or(1);
        let kw = key_width(t, &e.keys);
        let has_index = t != tag::ARRAY && c > INDEX_THRESHOLD;
        let pos = self.buf.len();
        let mut layout_byte = layout::log2_width(w);
        if kw > 0 {
            layout_byte |= layout::log2_width(kw) << container::KEY_WIDTH_SHIFT;
        }
        if cap.is_some() {
            layout_byte |= container::HAS_CAPACITY;
        }
        if has_index {
            layout_byte |= container::HAS_INDEX;
        }
        self.buf.push(layout_byte);
        write_varint(&mut self.buf, n as u64);
        if cap.is_some() {
            write_varint(&mut self.buf, c as u64);
        }
        self.buf.extend_from_slice(&e.tags);
        self.buf.resize(self.buf.len() + c - n, 0);
        for &k in &e.keys {
            self.buf.extend_from_slice(&k.to_le_bytes()[..kw]);
        }
        self.buf.resize(self.buf.len() + (c - n) * kw, 0);
        self.buf.resize(align(self.buf.len(), w), 0);
        for &s in &e.slots {
            self.buf.extend_from_slice(&s.to_le_bytes()[..w]);
        }
        self.buf.resize(self.buf.len() + (c - n) * w, 0);
        if has_index {
            let (_, entry) = layout::index_geometry(c);
            self.buf.resize(align(self.buf.len(), entry), 0);
            for v in self.build_index(t, &e.keys, c) {
                self.buf.extend_from_slice(&(v as u64).to_le_bytes()[..entry]);
            }
        }
        pos
    }

    /// Appends the blocks of a (checked) value; returns its (tag, payload).
    pub(super) fn write_value(&mut self, v: &Value) -> (u8, u64) {
        if let Some(s) = scalar(v) {
            return s;
        }
        let data = |this: &mut Editor, t: u8, bytes: &[u8]| {
            let pos = this.buf.len();
            write_varint(&mut this.buf, bytes.len() as u64);
            this.buf.extend_from_slice(bytes);
            (t, pos as u64)
        };
        match v {
            Value::String(s) => data(self, tag::STRING, s.as_bytes()),
            Value::Bytes(b) => data(self, tag::BYTES, b),
            Value::BigNum(s) => data(self, tag::BIGNUM, s.as_bytes()),
            Value::Typed(t) => {
                let size = t.element_type().size();
                let pos = self.buf.len();
                self.buf.push(t.element_type() as u8);
                let mask = t.int_mask();
                self.buf.push(t.shape().len() as u8 | if mask.is_some() { layout::rank::HAS_MASK } else { 0 });
                for &d in t.shape() {
                    write_varint(&mut self.buf, d as u64);
                }
                self.buf.resize(align(self.buf.len(), size), 0);
                self.buf.extend_from_slice(&typed_bytes(t.data()));
                if let Some(mask) = mask {
                    for chunk in mask.chunks(8) {
                        self.buf.push(chunk.iter().enumerate().fold(0u8, |acc, (i, &m)| acc | ((m as u8) << i)));
                    }
                }
                (tag::TYPED, pos as u64)
            }
            Value::Array(items) => {
                let mut e = Entries { tags: Vec::new(), keys: Vec::new(), slots: Vec::new() };
                for item in items {
                    let (t, p) = self.write_value(item);
                    e.tags.push(t);
                    e.keys.push(0);
                    e.slots.push(p);
                }
                (tag::ARRAY, self.write_container(tag::ARRAY, &e, None) as u64)
            }
            Value::Object(map) => {
                let mut e = Entries { tags: Vec::new(), keys: Vec::new(), slots: Vec::new() };
                for (k, item) in map {
                    let id = self.ensure_key(k);
                    let (t, p) = self.write_value(item);
                    e.tags.push(t);
                    e.keys.push(id);
                    e.slots.push(p);
                }
                (tag::OBJECT, self.write_container(tag::OBJECT, &e, None) as u64)
            }
            Value::IntMap(map) => {
                let mut e = Entries { tags: Vec::new(), keys: Vec::new(), slots: Vec::new() };
                for (&k, item) in map {
                    let (t, p) = self.write_value(item);
                    e.tags.push(t);
                    e.keys.push(k as u64);
                    e.slots.push(p);
                }
                (tag::INTMAP, self.write_container(tag::INTMAP, &e, None) as u64)
            }
            _ => unreachable!("scalars are handled above"),
        }
    }

    /// Rewrites the string, bytes or bignum block of `old` in place with the data value
    /// `v` when `v` is no longer and the block is not part of a committed file version:
    /// an update that fits writes only its own bytes. The unused tail is zeroed and counted
    /// as garbage. Returns the new tag (the payload, the block's offset, is unchanged).
    pub(super) fn overwrite_data(&mut self, old: (u8, u64), v: &Value) -> Option<u8> {
        let (t, content) = match v {
            Value::String(s) => (tag::STRING, s.as_bytes()),
            Value::Bytes(b) => (tag::BYTES, b.as_slice()),
            Value::BigNum(s) => (tag::BIGNUM, s.as_bytes()),
            _ => return None,
        };
        let pos = old.1 as usize;
        if !matches!(old.0, tag::STRING | tag::BYTES | tag::BIGNUM) || pos < self.frozen() {
            return None;
        }
        let (len, at) = read_varint(&self.buf, pos).expect("a validated block");
        let end = at + len as usize;
        let mut head = [0u8; 10];
        let head_len = varint_into(&mut head, content.len() as u64);
        let new_end = pos + head_len + content.len();
        if new_end > end {
            return None;
        }
        self.buf[pos..pos + head_len].copy_from_slice(&head[..head_len]);
        self.buf[pos + head_len..new_end].copy_from_slice(content);
        self.zero(new_end, end);
        Some(t)
    }

    /// Zeroes `start..end` and counts it as garbage.
    fn zero(&mut self, start: usize, end: usize) {
        self.record.garbage += (end - start) as u64;
        if start < self.frozen() {
            self.file.as_mut().unwrap().pending.push((start, end));
            return;
        }
        self.buf[start..end].fill(0);
    }

    /// Turns the blocks of a value that is no longer reachable into garbage.
    pub(super) fn free_value(&mut self, t: u8, p: u64) {
        let pos = p as usize;
        match t {
            tag::STRING | tag::BYTES | tag::BIGNUM => {
                let (len, at) = read_varint(&self.buf, pos).expect("a validated block");
                self.zero(pos, at + len as usize);
            }
            tag::TYPED => {
                let end = typed_end(&self.buf, pos);
                self.zero(pos, end);
            }
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                let info = self.info(pos, t).expect("a validated container");
                let e = self.read_entries(&info);
                for i in 0..e.len() {
                    self.free_value(e.tags[i], e.slots[i]);
                }
                self.zero(info.pos, info.end);
            }
            _ => {}
        }
    }

    /// The dictionary id of `key`, adding it (in place if there is room, else by
    /// relocating the dictionary with spare capacity) when it is new.
    pub(super) fn ensure_key(&mut self, key: &str) -> u64 {
        let at = self.record.dictionary as usize;
        let dict = Dict::parse(&self.buf, at as u64).expect("a validated dictionary");
        let hash = layout::key_hash(key.as_bytes());
        if let Some(id) = dict.find(&self.buf, key.as_bytes(), hash).expect("a validated dictionary") {
            return id;
        }
        let field = |i: usize| read_u32(&self.buf, at + 4 * i).unwrap() as usize;
        if at != 0 {
            let (count, cap, bytes_cap, table_size) = (field(0), field(1), field(2), field(3));
            let offsets_at = at + 16;
            let bytes_at = offsets_at + 4 * (cap + 1);
            let used = read_u32(&self.buf, offsets_at + 4 * count).unwrap() as usize;
            if at >= self.frozen() && count < cap && table_size != 0 && used + key.len() <= bytes_cap {
                let (table_at, _) = dict.table();
                self.buf[bytes_at + used..bytes_at + used + key.len()].copy_from_slice(key.as_bytes());
                let next = offsets_at + 4 * (count + 1);
                self.buf[next..next + 4].copy_from_slice(&((used + key.len()) as u32).to_le_bytes());
                self.buf[at..at + 4].copy_from_slice(&(count as u32 + 1).to_le_bytes());
                let mut bucket = layout::home_bucket(hash, table_size);
                while read_u32(&self.buf, table_at + 4 * bucket).unwrap() != 0 {
                    bucket = (bucket + 1) & (table_size - 1);
                }
                self.buf[table_at + 4 * bucket..table_at + 4 * bucket + 4].copy_from_slice(&(count as u32 + 1).to_le_bytes());
                return count as u64;
            }
        }
        let old_end = dict.end();
        let new_at = self.grow_dictionary(at, key.as_bytes());
        if at != 0 {
            self.zero(at, old_end);
        }
        self.record.dictionary = new_at as u64;
        dict.count() as u64
    }

    /// Appends a copy of the dictionary at `at` (0: none yet) with `key` added and spare
    /// room for half as many ids and bytes again; returns the copy's offset. Offsets and
    /// key bytes are copied as they are (ids keep their order); only the table is rebuilt.
    fn grow_dictionary(&mut self, at: usize, key: &[u8]) -> usize {
        let field = |i: usize| if at == 0 { 0 } else { read_u32(&self.buf, at + 4 * i).unwrap() as usize };
        let (count, old_cap) = (field(0), field(1));
        let old_offsets = at + 16;
        let old_bytes = old_offsets + 4 * (old_cap + 1);
        let used = if at == 0 { 0 } else { read_u32(&self.buf, old_offsets + 4 * count).unwrap() as usize };
        let (new_count, total) = (count + 1, used + key.len());
        // As for containers: a table with room for the new key is kept and copied.
        let old_table = field(3);
        let keep_table = old_table != 0 && old_table / 2 >= new_count;
        let cap = if keep_table { old_table / 2 } else { (new_count + new_count / 2).max(8) };
        let bytes_cap = (total + total / 2).max(64);
        let table_size = layout::dictionary_table_size(cap);
        let old_table_at = align(old_bytes + field(2), 4);

        self.buf.resize(align(self.buf.len(), 4), 0);
        let new_at = self.buf.len();
        for field in [new_count, cap, bytes_cap, table_size] {
            self.buf.extend_from_slice(&(field as u32).to_le_bytes());
        }
        if at != 0 {
            self.buf.extend_from_within(old_offsets..old_offsets + 4 * (count + 1));
        } else {
            self.buf.extend_from_slice(&0u32.to_le_bytes());
        }
        for _ in new_count..=cap {
            self.buf.extend_from_slice(&(total as u32).to_le_bytes());
        }
        let bytes_at = self.buf.len();
        self.buf.extend_from_within(old_bytes..old_bytes + used);
        self.buf.extend_from_slice(key);
        self.buf.resize(bytes_at + bytes_cap, 0);
        self.buf.resize(align(self.buf.len(), 4), 0);

        let table_at = self.buf.len();
        let offset = |buf: &[u8], id: usize| read_u32(buf, new_at + 16 + 4 * id).unwrap() as usize;
        if keep_table {
            self.buf.extend_from_within(old_table_at..old_table_at + 4 * old_table);
            let mut bucket = layout::home_bucket(layout::key_hash(key), table_size);
            while read_u32(&self.buf, table_at + 4 * bucket).unwrap() != 0 {
                bucket = (bucket + 1) & (table_size - 1);
            }
            self.buf[table_at + 4 * bucket..table_at + 4 * bucket + 4].copy_from_slice(&(new_count as u32).to_le_bytes());
            return new_at;
        }
        self.buf.resize(table_at + 4 * table_size, 0);
        for id in 0..new_count {
            let (start, end) = (offset(&self.buf, id), offset(&self.buf, id + 1));
            let mut bucket = layout::home_bucket(layout::key_hash(&self.buf[bytes_at + start..bytes_at + end]), table_size);
            while read_u32(&self.buf, table_at + 4 * bucket).unwrap() != 0 {
                bucket = (bucket + 1) & (table_size - 1);
            }
            self.buf[table_at + 4 * bucket..table_at + 4 * bucket + 4].copy_from_slice(&(id as u32 + 1).to_le_bytes());
        }
        new_at
    }
}
/// The largest capacity whose hash index has `table` entries of `entry` bytes (spec §4.1).
fn largest_capacity(table: usize, entry: usize) -> usize {
    let most = match entry {
        1 => (table / 2).min(254),
        2 => (table / 2).min(65534),
        _ => table / 2,
    };
    debug_assert!(most == 0 || layout::index_geometry(most) == (table, entry));
    most
}

/// Byte just past a (validated) typed array block, spare rows and mask included.
fn typed_end(buf: &[u8], pos: usize) -> usize {
    let h = TypedHeader::parse(buf, pos as u64).expect("a validated typed array");
    if let Some(mask) = h.mask_pos {
        return mask + h.count.div_ceil(8);
    }
    let mut q = pos + 2;
    for _ in 0..h.rank {
        q = read_varint(buf, q).expect("validated").1;
    }
    let spare_rows = if buf[pos + 1] & layout::rank::HAS_CAPACITY != 0 { read_varint(buf, q).expect("validated").0 as usize } else { 0 };
    let row = if h.shape[0] == 0 { 0 } else { h.count / h.shape[0] as usize };
    h.data_pos + (h.count + spare_rows * row) * h.element.size()
}

//! The builder's output: each container, as it closes, goes into the direct encoder's plan
//! (`direct::Levels`), and `encode`/`write_to` lay the plan out canonically (spec §7).
//!
//! A container closes before the next container of its nesting level opens, so the order
//! in which a level's containers close is the breadth-first order of that level.

use std::borrow::Cow;
use std::io::Write;

use super::{too_many, Builder, FrameKind, Item, NumTy, Span};
use crate::direct::{self, Child, Keys, Node, Source, TypedBlock, POINTER};
use crate::error::Result;
use crate::format::numbers::signed_width;
use crate::format::{hash, tag, varint_len, ElementType};

/// How many bytes `write_to` gathers before one write.
const WRITE_BUFFER: usize = 1 << 20;

impl Builder {
    /// Moves the children of a closed container (the stack from `start`) into the plan at
    /// nesting level `depth`; returns the container's index in its level.
    pub(super) fn emit_container(&mut self, start: usize, kind: FrameKind, depth: usize) -> Result<usize> {
        let len = u32::try_from(self.stack.len() - start).map_err(|_| too_many("a container has more than 2^32-1 children"))?;
        let t = match kind {
            FrameKind::Array => tag::ARRAY,
            FrameKind::Object => tag::OBJECT,
            FrameKind::IntMap => tag::INTMAP,
        };
        let mut node = Node::new(t, len);
        self.levels.reach(depth);
        let store = self.store_of(depth);
        for i in start..self.stack.len() {
            let (item, key) = (self.stack[i], self.stack_keys[i]);
            self.add_child(&mut node, depth, store, item, key);
        }
        Ok(self.levels.push_node(node, depth))
    }

    /// Records `item` under `key` as the next child of `node`, a container at nesting
    /// level `depth` whose children's blocks are in `store`.
    #[inline(always)]
    fn add_child(&mut self, node: &mut Node, depth: usize, store: usize, item: Item, key: u64) {
        let (mut child, need) = self.child_slot(item, store);
        note_child(node, &mut child, need, key);
        self.levels.push(depth, child);
    }

    /// The slot of `item` as its parent holds it (the key left 0), and the width it needs
    /// (spec §7); counts its data block, which is in `store`.
    pub(super) fn child_slot(&mut self, item: Item, store: usize) -> (Child, u8) {
        let scalar = |tag, value, need| (Child { tag, key: 0, value }, need);
        match item {
            Item::Null => scalar(tag::NULL, 0, 1),
            Item::Bool(v) => scalar(if v { tag::TRUE } else { tag::FALSE }, 0, 1),
            Item::Num(ty, bits) => {
                let (tag, value, need) = num_slot(ty, bits);
                scalar(tag, value, need)
            }
            Item::UInt(v) => scalar(tag::UINT, v, 8),
            Item::Str { start, len } => self.block_slot(tag::STRING, store, start, len),
            Item::Bytes { start, len } => self.block_slot(tag::BYTES, store, start, len),
            Item::BigNum { start, len } => self.block_slot(tag::BIGNUM, store, start, len),
            Item::Typed(i) => {
                let t = &self.typed[i];
                self.levels.add_typed(t.element, &t.shape, t.mask.is_some());
                scalar(tag::TYPED, i as u64, POINTER)
            }
            Item::Table(i) => {
                self.levels.add_table(self.tables[i].body().len());
                scalar(tag::TABLE, i as u64, POINTER)
            }
            Item::Array(i) => scalar(tag::ARRAY, i as u64, POINTER),
            Item::Object(i) => scalar(tag::OBJECT, i as u64, POINTER),
            Item::IntMap(i) => scalar(tag::INTMAP, i as u64, POINTER),
        }
    }

    fn block_slot(&mut self, t: u8, store: usize, start: u64, len: u32) -> (Child, u8) {
        let content_len = if len != u32::MAX {
            content_len(len as u64)
        } else {
            // Blocks of 4 GiB or more: a few at most.
            let huge = self.huge.iter().find(|&&(s, at, _)| (s, at) == (store, start));
            huge.expect("add_block recorded every huge block").2
        };
        let prefix = varint_len(content_len) as u64;
        (self.content_slot(t, Span { store, at: start + prefix, len: content_len }), POINTER)
    }

    /// The slot of a string, bytes or bignum whose content is at `span`; counts its block
    /// in the data section.
    #[inline]
    pub(super) fn content_slot(&mut self, t: u8, span: Span) -> Child {
        self.levels.add_block(span.len as usize);
        self.spans.push(span);
        Child { tag: t, key: 0, value: (self.spans.len() - 1) as u64 }
    }

    /// The canonical bytes of the finished document.
    pub fn encode(mut self) -> Result<Vec<u8>> {
        let bytes = self.lay_out(direct::write_document)?;
        self.recycle();
        Ok(bytes)
    }

    /// Writes the canonical bytes of the finished document into `writer`, a buffer's worth
    /// at a time: nothing of the output is held whole. Returns the length.
    pub fn write_to(self, writer: &mut dyn Write) -> Result<u64> {
        self.write_buffered(writer, WRITE_BUFFER)
    }

    /// `write_to` gathering about `buffer` bytes per write (small in tests, to cross every
    /// kind of block boundary).
    fn write_buffered(mut self, writer: &mut dyn Write, buffer: usize) -> Result<u64> {
        self.lay_out(|levels, keys, layout, b| direct::write_document_to(levels, keys, layout, b, writer, buffer))?
    }

    /// Hands the finished plan to `sink` instead of laying out a document.
    pub(crate) fn plan_into(mut self, sink: &mut impl direct::PlanSink) -> Result<()> {
        let mut levels = std::mem::take(&mut self.levels);
        let texts: Vec<&[u8]> = self.dict.iter().map(|k| k.as_bytes()).collect();
        let hashes: Vec<u64> = texts.iter().map(|k| hash::key_hash(k)).collect();
        let keys = Keys { texts: &texts, hashes: &hashes };
        let planned = sink.planned(&mut levels, keys, self.root.expect("finished"), &self);
        drop(texts);
        self.levels = levels;
        self.recycle();
        planned
    }

    /// Places the finished document (spec §7) and hands the plan to `write`.
    fn lay_out<R>(&mut self, write: impl FnOnce(&direct::Levels, Keys<'_>, &direct::Layout, &Builder) -> R) -> Result<R> {
        let mut levels = std::mem::take(&mut self.levels);
        let texts: Vec<&[u8]> = self.dict.iter().map(|k| k.as_bytes()).collect();
        let hashes: Vec<u64> = texts.iter().map(|k| hash::key_hash(k)).collect();
        let keys = Keys { texts: &texts, hashes: &hashes };
        let layout = levels.finish(keys, self.root.expect("finished"), self)?;
        let written = write(&levels, keys, &layout, self);
        drop(texts);
        self.levels = levels;
        Ok(written)
    }
}

/// The slot of a number: its tag, payload and the width it needs (spec §7: a value in
/// i64 is an `int` whatever its source type).
#[inline(always)]
pub(super) fn num_slot(ty: NumTy, bits: u64) -> (u8, u64, u8) {
    match ty {
        NumTy::JsonFloat | NumTy::Exact(ElementType::F64) => (tag::F64, bits, 8),
        NumTy::Exact(ElementType::F32) => (tag::F32, bits, 4),
        NumTy::Exact(ElementType::Bool) => (if bits != 0 { tag::TRUE } else { tag::FALSE }, 0, 1),
        NumTy::Exact(ElementType::U64) if bits > i64::MAX as u64 => (tag::UINT, bits, 8),
        _ => (tag::INT, bits, signed_width(bits as i64) as u8),
    }
}

/// Notes a child's slot in its container's record: the width it needs, and its key
/// (objects: the key id; intmaps: the key, whose width the record also notes).
#[inline(always)]
pub(super) fn note_child(node: &mut Node, child: &mut Child, need: u8, key: u64) {
    node.need(need);
    if node.tag == tag::INTMAP {
        node.key_width = node.key_width.max(signed_width(key as i64) as u8);
    }
    if node.tag != tag::ARRAY {
        child.key = key;
    }
}

/// The content length of a block of `block_len` bytes (its length varint, then the
/// content): `c + varint_len(c)` grows with c, so one c fits.
#[inline]
fn content_len(block_len: u64) -> u64 {
    // Content under 128 bytes has a one-byte varint: most strings.
    if block_len <= 128 {
        return block_len - 1;
    }
    (2..=10).map(|v| block_len.saturating_sub(v)).find(|&c| c + varint_len(c) as u64 == block_len).expect("a block the builder wrote")
}

impl Source for Builder {
    #[inline]
    fn content(&self, child: &Child) -> &[u8] {
        let span = self.spans[child.value as usize];
        self.stores[span.store].get(span.at, span.len as usize)
    }

    #[inline]
    fn block_len(&self, child: &Child) -> usize {
        let len = self.spans[child.value as usize].len;
        varint_len(len) + len as usize
    }

    fn level_blocks(&self, level: usize) -> Option<&[u8]> {
        if !self.stores_in_slot_order {
            return None;
        }
        Some(self.stores.get(level).map_or(&[][..], |store| store.in_memory()))
    }

    fn typed_block_end(&self, child: &Child, at: usize) -> usize {
        let t = &self.typed[child.value as usize];
        direct::typed_block_end(at, t.element, &t.shape, t.mask.is_some())
    }

    fn typed(&self, child: &Child) -> TypedBlock<'_> {
        let t = &self.typed[child.value as usize];
        TypedBlock {
            element: t.element,
            shape: Cow::Borrowed(&t.shape),
            data: Cow::Borrowed(&self.tdata[t.data.clone()]),
            mask: t.mask.clone().map(|m| Cow::Owned(self.tmask[m].iter().map(|&b| b != 0).collect())),
        }
    }

    fn table(&self, child: &Child) -> &[u8] {
        self.tables[child.value as usize].body()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::DuplicateKeys;

    fn built(json: &str) -> Builder {
        let mut b = Builder::new(crate::DEFAULT_MAX_DEPTH);
        crate::json::read_into_builder(json.as_bytes(), &mut b).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn spilled_strings_write_the_bytes_of_encode() {
        let json = format!(
            "[{}{{\"last\": [1.5, 2, 3]}}]",
            (0..60_000).map(|i| format!(r#"{{"n": {i}, "s": "{}"}},"#, "y".repeat(i % 200))).collect::<String>()
        );
        let expected = built(&json).encode().unwrap();
        let mut b = Builder::new(crate::DEFAULT_MAX_DEPTH);
        b.spill_blocks_over(0);
        crate::json::read_into_builder(json.as_bytes(), &mut b).unwrap();
        let mut out = Vec::new();
        b.finish().unwrap().write_to(&mut out).unwrap();
        assert!(out == expected);
    }

    /// The direct encoder's bytes for the same document: what the builder must write,
    /// whether it copies a level's blocks as one run or one at a time.
    fn direct(json: &str) -> Vec<u8> {
        crate::encode(&crate::decode(&built(json).encode().unwrap()).unwrap()).unwrap()
    }

    #[test]
    fn level_runs_are_cut_around_typed_blocks() {
        // Strings before, between and after typed arrays at several levels, a bignum among
        // them, and levels that hold only strings or only containers. (Table blocks cut the
        // run by the same test as typed ones.)
        let json = r#"{"a": "x", "t": [1, 2, 3], "b": "yy", "n": {"s": ["p", [1.5, 2.5], "q", 123456789012345678901234567890]},
            "deep": [[[["z"]]]], "f": [0.5, 1], "end": "last one, long enough to take more than a few bytes of the run"}"#;
        let b = built(json);
        assert!(b.stores_in_slot_order);
        assert!(b.encode().unwrap() == direct(json));
    }

    #[test]
    fn a_replaced_value_leaves_its_blocks_out_of_the_document() {
        // With `DuplicateKeys::Last` the first "a" goes after its blocks were stored: the
        // writer must not copy them.
        let replaced = |json: &str| {
            let mut b = Builder::new(crate::DEFAULT_MAX_DEPTH);
            b.duplicate_keys = DuplicateKeys::Last;
            crate::json::read_into_builder(json.as_bytes(), &mut b).unwrap();
            let b = b.finish().unwrap();
            assert!(!b.stores_in_slot_order);
            let bytes = b.encode().unwrap();
            crate::validate(&bytes).unwrap();
            bytes
        };
        let bytes = replaced(r#"{"a": "gone", "b": "kept", "a": "new", "c": ["x", "y"]}"#);
        assert!(bytes == crate::encode(&crate::decode(&bytes).unwrap()).unwrap());
        assert_eq!(crate::json::to_json(&bytes).unwrap(), r#"{"b":"kept","a":"new","c":["x","y"]}"#);
        // A replaced object (its record already in the plan) is not canonical yet: see the
        // note on `check_repeated`; its text is right.
        let bytes = replaced(r#"{"a": {"k": "gone", "l": ["gone too"]}, "m": "kept", "a": {"k": "new"}}"#);
        assert_eq!(crate::json::to_json(&bytes).unwrap(), r#"{"m":"kept","a":{"k":"new"}}"#);
    }

    #[test]
    fn small_buffers_write_the_bytes_of_encode() {
        let mut json = String::from(r#"{"text": "ab", "ints": [1, 2, 300], "mixed": [1, 2.5], "m": [[1, 2], [3, 4.5]], "objs": ["#);
        for i in 0..300 {
            json += &format!(r#"{{"k{}": {i}, "s": "{}", "f": {}.5, "u": 18446744073709551615, "big": 123456789012345678901234567890}},"#, i % 40, "x".repeat(i % 17), i);
        }
        json += r#"[]], "last": [true, null, "end"]}"#;
        let expected = built(&json).encode().unwrap();
        for buffer in [1, 3, 8, 64, 1000, 1 << 20] {
            let mut out = Vec::new();
            let len = built(&json).write_buffered(&mut out, buffer).unwrap();
            assert_eq!(len as usize, out.len());
            assert!(out == expected, "buffer of {buffer} bytes");
        }
    }
}

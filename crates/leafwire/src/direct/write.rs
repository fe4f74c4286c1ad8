//! The second walk of the direct encoder: writes a planned document (spec §7) in document
//! order, into one buffer (`write_document`) or a buffer's worth at a time to a writer
//! (`write_document_to`, whose memory then holds the plan, not the document).
//!
//! The structure section goes first, level by level; the data blocks' offsets follow from
//! their lengths, met in the order of the slots, and the blocks are written after, in that
//! same order.

use std::borrow::Cow;
use std::io::Write;

use smallvec::SmallVec;

use super::{Child, Layout, Levels, Node};
use crate::error::Result;
use crate::format::header::{self, RootRecord};
use crate::format::{self as c, dictionary, hash, tag, typed, ElementType, MAX_RANK};

/// Where the content of the planned data blocks comes from: the tree the planner walked.
pub trait Source {
    /// The content of a string, bytes or bignum child (without its length varint).
    fn content(&self, child: &Child) -> &[u8];
    /// The array of a typed child (sources without typed arrays are never asked).
    fn typed(&self, child: &Child) -> TypedBlock<'_>;
}

/// A typed array as the writer needs it.
pub struct TypedBlock<'a> {
    pub element: ElementType,
    pub shape: SmallVec<[u64; 4]>,
    /// The elements, little-endian.
    pub data: Cow<'a, [u8]>,
    /// One flag per element: whether it is an integer (f64 only, spec §5.2).
    pub mask: Option<Cow<'a, [bool]>>,
}

/// The distinct object keys by provisional id, and their key hashes (spec §4.2).
#[derive(Clone, Copy)]
pub struct Keys<'a> {
    pub texts: &'a [&'a [u8]],
    pub hashes: &'a [u64],
}

/// The document `layout` places, in one buffer of exactly its length.
pub fn write_document(levels: &Levels, keys: Keys<'_>, layout: &Layout, source: &impl Source) -> Vec<u8> {
    let mut sink = Sink { out: Vec::with_capacity(layout.end), base: 0, writer: None, buffer: usize::MAX };
    write(levels, keys, layout, source, &mut sink).expect("a buffer in memory does not fail");
    debug_assert_eq!(sink.out.len(), layout.end);
    sink.out
}

/// Writes the document `layout` places into `writer`, gathering about `buffer` bytes per
/// write (large blocks go through uncopied). Returns the length.
pub fn write_document_to(levels: &Levels, keys: Keys<'_>, layout: &Layout, source: &impl Source, writer: &mut dyn Write, buffer: usize) -> Result<u64> {
    let mut sink = Sink { out: Vec::with_capacity(2 * buffer), base: 0, writer: Some(writer), buffer };
    write(levels, keys, layout, source, &mut sink)?;
    sink.flush()?;
    Ok(layout.end as u64)
}

fn write(levels: &Levels, keys: Keys<'_>, layout: &Layout, source: &impl Source, sink: &mut Sink<'_>) -> Result<()> {
    let mut data = DataCursor { at: 0 };
    let root = root_payload(levels, layout, source, &mut data);
    let out = &mut sink.out;
    out.resize(c::HEADER_LEN + layout.dict_len, 0);
    let dictionary = if layout.dict_len == 0 { 0 } else { c::HEADER_LEN as u64 };
    let record = RootRecord { generation: 1, root, dictionary, end: layout.end as u64, garbage: 0, root_tag: layout.root.tag, journal: false };
    header::write_header(out, &record);
    if !keys.texts.is_empty() {
        let texts = layout.sorted.iter().map(|&id| keys.texts[id as usize]);
        let hashes = layout.sorted.iter().map(|&id| keys.hashes[id as usize]);
        dictionary::write_canonical(&mut out[c::HEADER_LEN..], texts, hashes);
    }
    let writer = Writer { keys, layout, source };
    for d in 0..levels.depth {
        let next: &[Node] = if d + 1 < levels.depth { &levels.levels[d + 1] } else { &[] };
        writer.level(sink, &mut data, &levels.levels[d], &levels.kids[d], next)?;
    }
    debug_assert_eq!(sink.base + sink.out.len() as u64, layout.structure_end as u64);
    sink.put(&[0u8; 8][..layout.data_start - layout.structure_end])?;
    // The data section: the blocks in the order the slots met them.
    if is_data(&layout.root) {
        write_block(&layout.root, source, sink)?;
    }
    for kids in &levels.kids[..levels.depth] {
        for child in kids.iter().filter(|ch| is_data(ch)) {
            write_block(child, source, sink)?;
        }
    }
    Ok(())
}

#[inline(always)]
fn is_data(child: &Child) -> bool {
    matches!(child.tag, tag::STRING | tag::BYTES | tag::BIGNUM | tag::TYPED)
}

/// Places the data blocks one after the other, in the order the slots meet them.
pub(super) struct DataCursor {
    /// Next free position, relative to the data start (a multiple of 8).
    pub at: usize,
}

impl DataCursor {
    /// Places a data child's block; returns its offset in the data section.
    #[inline]
    pub fn place(&mut self, child: &Child, source: &impl Source) -> usize {
        let at = self.at;
        self.at = if child.tag == tag::TYPED {
            let t = source.typed(child);
            super::typed_block_end(at, t.element, &t.shape, t.mask.is_some())
        } else {
            let len = source.content(child).len();
            at + c::varint_len(len as u64) + len
        };
        at
    }
}

/// The root's payload (spec §7: the root's block, if it has one, comes first).
fn root_payload(levels: &Levels, layout: &Layout, source: &impl Source, data: &mut DataCursor) -> u64 {
    let root = &layout.root;
    match root.tag {
        _ if is_data(root) => (layout.data_start + data.place(root, source)) as u64,
        tag::ARRAY | tag::OBJECT | tag::INTMAP => levels.levels[0][0].offset as u64,
        _ => root.value,
    }
}

/// Writes a data child's block.
fn write_block(child: &Child, source: &impl Source, sink: &mut Sink<'_>) -> Result<()> {
    if child.tag != tag::TYPED {
        let content = source.content(child);
        let mut varint = [0u8; 10];
        let n = c::numbers::put_varint(&mut varint, content.len() as u64);
        sink.put(&varint[..n])?;
        return sink.put(content);
    }
    let t = source.typed(child);
    // The header is laid out in a scratch buffer that starts at the same offset modulo 8
    // as the block, so the element alignment comes out as in the document.
    let skew = sink.position() % 8;
    let mut head = [0u8; 8 + 2 + 10 * MAX_RANK + 8];
    let head = &mut head[..skew + typed::header_len(t.shape.iter().copied()) + t.element.size()];
    let data_at = typed::write_header(head, skew, t.element, &t.shape, t.mask.is_some());
    sink.put(&head[skew..data_at])?;
    sink.put(&t.data)?;
    if let Some(mask) = &t.mask {
        let mut packed = Vec::with_capacity(mask.len().div_ceil(8));
        typed::pack_mask(mask.iter().copied(), &mut packed);
        sink.put(&packed)?;
    }
    Ok(())
}

struct Writer<'w, S> {
    keys: Keys<'w>,
    layout: &'w Layout,
    source: &'w S,
}

impl<S: Source> Writer<'_, S> {
    /// Writes the containers of one level; `kids` are their children, `next` the next
    /// level's containers (which the child containers are, in order).
    fn level(&self, sink: &mut Sink<'_>, data: &mut DataCursor, level: &[Node], kids: &[Child], next: &[Node]) -> Result<()> {
        let mut first = 0;
        for node in level {
            let children = &kids[first..first + node.len as usize];
            first += node.len as usize;
            debug_assert_eq!(sink.position(), node.offset);
            self.container(&mut sink.out, data, node, children, next);
            if sink.out.len() >= sink.buffer {
                sink.flush_aligned()?;
            }
        }
        Ok(())
    }

    /// Appends a container to `out`, which starts at a document offset that is a multiple
    /// of 8 (so that alignments in it are those in the document).
    fn container(&self, out: &mut Vec<u8>, data: &mut DataCursor, node: &Node, children: &[Child], next: &[Node]) {
        let len = children.len();
        let shape = node.shape(self.layout.pointer_width);
        let (width, key_width) = (shape.width, shape.key_width);
        let g = shape.append_to(out);
        for (out, child) in out[g.tags_at..g.tags_at + len].iter_mut().zip(children) {
            *out = child.tag;
        }
        let keys = &mut out[g.keys_at..g.keys_at + len * key_width];
        let rank = &self.layout.rank;
        match (node.tag, key_width) {
            (tag::ARRAY, _) => {}
            (tag::OBJECT, 1) => write_keys::<1>(keys, children.iter().map(|ch| rank[ch.key as usize] as u64)),
            (tag::OBJECT, 2) => write_keys::<2>(keys, children.iter().map(|ch| rank[ch.key as usize] as u64)),
            (tag::OBJECT, _) => write_keys::<4>(keys, children.iter().map(|ch| rank[ch.key as usize] as u64)),
            (_, 1) => write_keys::<1>(keys, children.iter().map(|ch| ch.key)),
            (_, 2) => write_keys::<2>(keys, children.iter().map(|ch| ch.key)),
            (_, 4) => write_keys::<4>(keys, children.iter().map(|ch| ch.key)),
            (_, _) => write_keys::<8>(keys, children.iter().map(|ch| ch.key)),
        }
        let slots = &mut out[g.slots_at..g.slots_at + len * width];
        match width {
            1 => self.slots::<1>(slots, children, data, next),
            2 => self.slots::<2>(slots, children, data, next),
            4 => self.slots::<4>(slots, children, data, next),
            _ => self.slots::<8>(slots, children, data, next),
        }
        if g.has_index() {
            let (index, entry) = (&mut out[g.index_at..g.end], g.index_entry as usize);
            if node.tag == tag::OBJECT {
                let hashes = self.keys.hashes;
                hash::fill(index, entry, children.iter().map(|ch| hashes[ch.key as usize]));
            } else {
                hash::fill(index, entry, children.iter().map(|ch| ch.key));
            }
        }
    }

    /// Stores each child's payload in `W` little-endian bytes, placing data blocks as they
    /// come.
    #[inline]
    fn slots<const W: usize>(&self, out: &mut [u8], children: &[Child], data: &mut DataCursor, next: &[Node]) {
        let data_start = self.layout.data_start;
        for (out, child) in out.chunks_exact_mut(W).zip(children) {
            let payload = if child.tag < tag::STRING {
                child.value
            } else if is_data(child) {
                (data_start + data.place(child, self.source)) as u64
            } else {
                next[child.value as usize].offset as u64
            };
            out.copy_from_slice(&payload.to_le_bytes()[..W]);
        }
    }
}

/// Stores each key in `K` little-endian bytes.
#[inline]
fn write_keys<const K: usize>(out: &mut [u8], keys: impl Iterator<Item = u64>) {
    for (out, key) in out.chunks_exact_mut(K).zip(keys) {
        out.copy_from_slice(&key.to_le_bytes()[..K]);
    }
}

/// Where the document's bytes go: appended to one buffer, or gathered a little at a time
/// and passed to a writer, large payloads directly, uncopied.
struct Sink<'w> {
    out: Vec<u8>,
    /// The document offset of `out[0]`.
    base: u64,
    writer: Option<&'w mut dyn Write>,
    /// How many bytes to gather before a write.
    buffer: usize,
}

impl Sink<'_> {
    /// The document offset of the next byte.
    fn position(&self) -> usize {
        self.base as usize + self.out.len()
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if self.writer.is_some() && self.out.len() + bytes.len() > self.buffer {
            self.flush()?;
            if bytes.len() >= self.buffer {
                self.writer.as_mut().expect("checked above").write_all(bytes)?;
                self.base += bytes.len() as u64;
                return Ok(());
            }
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.flush_up_to(self.out.len())
    }

    /// Flushes all but the last `len % 8` bytes, so that positions in `out` stay congruent
    /// to document offsets modulo 8: containers are laid out in `out` by their position,
    /// and their slots are aligned to their width (at most 8).
    fn flush_aligned(&mut self) -> Result<()> {
        self.flush_up_to(self.out.len() - self.out.len() % 8)
    }

    fn flush_up_to(&mut self, n: usize) -> Result<()> {
        if let Some(w) = self.writer.as_mut() {
            w.write_all(&self.out[..n])?;
            self.out.drain(..n);
            self.base += n as u64;
        }
        Ok(())
    }
}

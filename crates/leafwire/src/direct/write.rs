//! The second walk of the direct encoder: writes a planned document (spec §7) into memory
//! the caller provides, level by level, each byte once.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use smallvec::SmallVec;

use super::{Child, KeyTable, Layout, Levels, Node};
use crate::format::header::{self, RootRecord};
use crate::format::{self as c, dictionary, hash, tag, typed, ElementType, MAX_RANK};

/// Where the content of the planned data blocks comes from: the tree the planner walked.
pub trait Source {
    /// The content of a string, bytes or bignum child (without its length varint).
    fn content(&self, child: &Child) -> &[u8];
    /// The array of a typed child (sources without typed arrays never get asked).
    fn typed(&self, child: &Child) -> TypedBlock<'_>;
}

/// A typed array as the writer needs it.
pub struct TypedBlock<'a> {
    pub element: ElementType,
    pub shape: SmallVec<[u64; 4]>,
    /// The elements, little-endian.
    pub data: Cow<'a, [u8]>,
    /// One flag per element: whether it is an integer (f64 only, spec §5.2).
    pub mask: Option<&'a [bool]>,
}

/// Writes the document `layout` places into `out` (exactly `layout.end` bytes, which may
/// start uninitialized): every byte of it is written.
///
/// # Panics
/// If `out` is not `layout.end` bytes long, or the source's blocks are not those the
/// planner counted (a bug of the caller: the planner and the source disagree).
pub fn write_document(levels: &Levels, keys: &KeyTable<'_>, layout: &Layout, source: &impl Source, out: &mut [MaybeUninit<u8>]) {
    assert_eq!(out.len(), layout.end, "output not the planned length");
    let (structure, data) = out.split_at_mut(layout.data_start);
    // The structure section has padding: zero it all, then write the fields over it.
    structure.fill(MaybeUninit::new(0));
    // SAFETY: every element was just initialized, and `MaybeUninit<u8>` has the layout
    // of `u8`.
    let structure = unsafe { &mut *(structure as *mut [MaybeUninit<u8>] as *mut [u8]) };
    let mut data = Data { buf: data, at: 0 };
    let root = root_payload(levels, layout, source, &mut data);
    write_dictionary(keys, layout, structure);
    let writer = Writer { keys, layout, source };
    for d in 0..levels.depth {
        let next: &[Node] = if d + 1 < levels.depth { &levels.levels[d + 1] } else { &[] };
        writer.level(structure, &mut data, &levels.levels[d], &levels.kids[d], next);
    }
    assert_eq!(data.at, data.buf.len(), "data section not filled as planned");
    let dictionary = if layout.dict_len == 0 { 0 } else { c::HEADER_LEN as u64 };
    let record = RootRecord { generation: 1, root, dictionary, end: layout.end as u64, garbage: 0, root_tag: layout.root.tag, journal: false };
    header::write_header(&mut structure[..c::HEADER_LEN], &record);
}

/// The data section, filled front to back in breadth-first order of the slots. Its memory
/// starts uninitialized; `at` counts what is written.
struct Data<'b> {
    buf: &'b mut [MaybeUninit<u8>],
    /// Next free position, relative to the data start (a multiple of 8).
    at: usize,
}

impl Data<'_> {
    /// Appends a string, bytes or bignum block; returns its offset in the section.
    #[inline]
    fn block(&mut self, content: &[u8]) -> usize {
        let at = self.at;
        let mut varint = [0u8; 10];
        let n = c::numbers::put_varint(&mut varint, content.len() as u64);
        self.put(&varint[..n]);
        self.put(content);
        at
    }

    /// Appends a typed block; returns its offset in the section.
    fn typed(&mut self, t: &TypedBlock<'_>) -> usize {
        let at = self.at;
        // The header is laid out in a scratch buffer that starts at the same offset modulo
        // 8 as the block, so the element alignment comes out as in the document.
        let skew = at % 8;
        let mut head = [0u8; 8 + 2 + 10 * MAX_RANK + 8];
        let head = &mut head[..skew + typed::header_len(t.shape.iter().copied()) + t.element.size()];
        let data_at = typed::write_header(head, skew, t.element, &t.shape, t.mask.is_some());
        self.put(&head[skew..data_at]);
        self.put(&t.data);
        if let Some(mask) = t.mask {
            let mut packed = Vec::with_capacity(mask.len().div_ceil(8));
            typed::pack_mask(mask.iter().copied(), &mut packed);
            self.put(&packed);
        }
        at
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let out = &mut self.buf[self.at..self.at + bytes.len()];
        // SAFETY: `out` is exactly `bytes.len()` elements (the slicing checked it);
        // `MaybeUninit<u8>` has the layout of `u8`; the source does not overlap the output.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len()) };
        self.at += bytes.len();
    }

    /// The block of a data child; returns its offset in the section.
    #[inline]
    fn child(&mut self, child: &Child, source: &impl Source) -> usize {
        if child.tag == tag::TYPED {
            self.typed(&source.typed(child))
        } else {
            self.block(source.content(child))
        }
    }
}

/// The root's payload, writing its data block first if it has one (spec §7: the root's
/// block comes first).
fn root_payload(levels: &Levels, layout: &Layout, source: &impl Source, data: &mut Data<'_>) -> u64 {
    let root = layout.root;
    match root.tag {
        tag::STRING | tag::BYTES | tag::BIGNUM | tag::TYPED => (layout.data_start + data.child(&root, source)) as u64,
        tag::ARRAY | tag::OBJECT | tag::INTMAP => levels.levels[0][0].offset as u64,
        _ => root.value,
    }
}

fn write_dictionary(keys: &KeyTable<'_>, layout: &Layout, buf: &mut [u8]) {
    let (texts, hashes) = (keys.texts(), keys.hashes());
    if texts.is_empty() {
        return;
    }
    let sorted_texts = layout.sorted.iter().map(|&id| texts[id as usize]);
    let sorted_hashes = layout.sorted.iter().map(|&id| hashes[id as usize]);
    dictionary::write_canonical(&mut buf[c::HEADER_LEN..c::HEADER_LEN + layout.dict_len], sorted_texts, sorted_hashes);
}

struct Writer<'w, S> {
    keys: &'w KeyTable<'w>,
    layout: &'w Layout,
    source: &'w S,
}

impl<S: Source> Writer<'_, S> {
    /// Writes the containers of one level; `kids` are their children, `next` the next
    /// level's containers (which the child containers are, in order).
    fn level(&self, buf: &mut [u8], data: &mut Data<'_>, level: &[Node], kids: &[Child], next: &[Node]) {
        let mut first = 0;
        for node in level {
            if node.len == 0 {
                // Layout 0 (slot width 1, key width 1 or none, no index) and count 0: the
                // zeros already there.
                continue;
            }
            let children = &kids[first..first + node.len as usize];
            first += node.len as usize;
            self.container(buf, data, node, children, next);
        }
    }

    fn container(&self, buf: &mut [u8], data: &mut Data<'_>, node: &Node, children: &[Child], next: &[Node]) {
        let len = children.len();
        let shape = node.shape(self.layout.pointer_width);
        let (width, key_width) = (shape.width, shape.key_width);
        let g = shape.geometry(node.offset);
        shape.write_header(buf, g.pos);
        for (out, child) in buf[g.tags_at..g.tags_at + len].iter_mut().zip(children) {
            *out = child.tag;
        }
        let keys = &mut buf[g.keys_at..g.keys_at + len * key_width];
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
        let slots = &mut buf[g.slots_at..g.slots_at + len * width];
        match width {
            1 => self.slots::<1>(slots, children, data, next),
            2 => self.slots::<2>(slots, children, data, next),
            4 => self.slots::<4>(slots, children, data, next),
            _ => self.slots::<8>(slots, children, data, next),
        }
        if g.has_index() {
            let (index, entry) = (&mut buf[g.index_at..g.end], g.index_entry as usize);
            if node.tag == tag::OBJECT {
                let hashes = self.keys.hashes();
                hash::fill(index, entry, children.iter().map(|ch| hashes[ch.key as usize]));
            } else {
                hash::fill(index, entry, children.iter().map(|ch| ch.key));
            }
        }
    }

    /// Stores each child's payload in `W` little-endian bytes, writing data blocks as they
    /// come.
    #[inline]
    fn slots<const W: usize>(&self, out: &mut [u8], children: &[Child], data: &mut Data<'_>, next: &[Node]) {
        let data_start = self.layout.data_start;
        for (out, child) in out.chunks_exact_mut(W).zip(children) {
            let payload = if child.tag < tag::STRING {
                child.value
            } else if child.tag <= tag::BIGNUM || child.tag == tag::TYPED {
                (data_start + data.child(child, self.source)) as u64
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

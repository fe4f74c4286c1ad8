//! The direct encoder: a tree already in memory (a [`Value`](crate::Value), or Python
//! objects in the binding) → canonical bytes (spec §7) in two walks, with no tree in between.
//!
//! 1. A planner walks the tree depth-first. A container at nesting level d gets a record
//!    ([`Node`]: child count, the widths its slots need) appended to level d, and its
//!    children's records ([`Child`]: tag, key, payload) appended to the children of level
//!    d. A child container's own children go to level d + 1, so each container's children
//!    stay one run, and each level in depth-first order is already the breadth-first order
//!    of the canonical layout. The sizes of the data blocks are summed as they are met.
//! 2. [`Levels::finish`] ranks the keys, sets widths, and places every container; then
//!    [`write_document`] (or [`write_document_into`], into memory the caller provides, or
//!    [`write_document_to`], to a writer) goes through the levels and writes each byte of
//!    the document once, reading back from the tree ([`Source`]) only the content of data
//!    blocks.
//!
//! Widths, geometry, the dictionary and the hash indexes come from `format`: this module
//! only decides the order, as the spec's canonical rules say.

mod keys;
mod tree;
mod value;
mod write;

pub use keys::KeyTable;
pub(crate) use keys::KeyGuesses;
pub use tree::plan_to_value;
pub(crate) use tree::ValueSink;
pub(crate) use value::{encode_input, encode_value, plan_value};
pub use write::{write_document, write_document_into, write_document_to, write_section_into, Keys, Source, TypedBlock};

use crate::error::{Category, Error, Result};
use crate::format::container::{Shape, SmallContainer};
use crate::format::numbers::unsigned_width;
use crate::format::{self as c, dictionary, tag, typed, ElementType};

/// What a value needs from its parent's slot when it is not an inline scalar's width.
pub const POINTER: u8 = 0;

/// A container as the planner records it.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// Set by [`Levels::finish`].
    pub offset: usize,
    pub len: u32,
    pub tag: u8,
    /// The widest inline scalar among the children (1 when none).
    pub scalar_width: u8,
    pub has_pointer: bool,
    /// Objects: set once the key ranks are known; intmaps: the widest key; arrays: 0.
    pub key_width: u8,
}

impl Node {
    /// A container of `len` children, none seen yet.
    #[inline]
    pub fn new(tag: u8, len: u32) -> Node {
        let key_width = if tag == tag::ARRAY { 0 } else { 1 };
        Node { offset: 0, len, tag, scalar_width: 1, has_pointer: false, key_width }
    }

    /// Notes what a child's slot needs: a width, or [`POINTER`].
    #[inline(always)]
    pub fn need(&mut self, need: u8) {
        if need == POINTER {
            self.has_pointer = true;
        } else {
            self.scalar_width = self.scalar_width.max(need);
        }
    }

    #[inline(always)]
    fn slot_width(&self, pointer_width: usize) -> usize {
        let w = self.scalar_width as usize;
        if self.has_pointer {
            w.max(pointer_width)
        } else {
            w
        }
    }

    /// The container's canonical shape if it is small (most are), for a pointer width.
    #[inline(always)]
    pub fn small(&self, pointer_width: usize) -> Option<SmallContainer> {
        SmallContainer::new(self.tag, self.len as usize, self.slot_width(pointer_width), self.key_width as usize)
    }

    /// The container's canonical shape (spec §7) for a pointer width.
    pub fn shape(&self, pointer_width: usize) -> Shape {
        Shape::canonical(self.tag, self.len as usize, self.slot_width(pointer_width), self.key_width as usize)
    }
}

/// What a planned tree is handed to when it is not laid out as a document: a stream
/// writer, which lays it out as a frame (spec §14.3).
pub(crate) trait PlanSink {
    fn planned<S: Source>(&mut self, levels: &mut Levels, keys: Keys<'_>, root: Child, source: &S) -> Result<()>;
}

/// A child as the planner records it.
#[derive(Clone, Copy, Debug)]
pub struct Child {
    /// Scalars: the slot payload; data blocks: a handle the [`Source`] understands;
    /// containers: its index in the next level's list.
    pub value: u64,
    /// Provisional key id (objects) or the key (intmaps); 0 in arrays.
    pub key: u64,
    pub tag: u8,
}

/// The planner's record of a tree: containers and children level by level, and what the
/// data section holds. Kept between documents by callers that encode many (its lists
/// keep their memory).
#[derive(Default)]
pub struct Levels {
    /// Containers per nesting level, each level in depth-first order. Only the first
    /// `depth` lists belong to the current document.
    pub levels: Vec<Vec<Node>>,
    /// Children of the containers of each level, in the same order.
    pub kids: Vec<Vec<Child>>,
    pub depth: usize,
    /// The data section's length, alignment padding of typed blocks excluded.
    pub data_len: usize,
    /// How many typed blocks there are: each may need padding, which only their final
    /// places tell.
    typed_blocks: usize,
    /// What spec §5.2 bounds in typed arrays: their most rows, and their strides.
    max_rows: u64,
    strides_overflow: bool,
}

impl Levels {
    /// Forgets the document, keeping the lists' memory.
    pub fn clear(&mut self) {
        for (level, kids) in self.levels.iter_mut().zip(self.kids.iter_mut()).take(self.depth) {
            level.clear();
            kids.clear();
        }
        *self = Levels { levels: std::mem::take(&mut self.levels), kids: std::mem::take(&mut self.kids), ..Levels::default() };
    }

    /// Heap bytes held by the lists.
    pub fn heap_size(&self) -> usize {
        let nodes: usize = self.levels.iter().map(|l| l.capacity()).sum();
        let kids: usize = self.kids.iter().map(|k| k.capacity()).sum();
        nodes * size_of::<Node>() + kids * size_of::<Child>()
    }

    /// Starts a container at nesting level `depth` with a placeholder record (so that it
    /// keeps its place ahead of those met inside it); returns its index in the level.
    #[inline]
    pub fn open(&mut self, node: Node, depth: usize) -> usize {
        if depth >= self.levels.len() {
            self.levels.push(Vec::new());
            self.kids.push(Vec::new());
        }
        self.depth = self.depth.max(depth + 1);
        let level = &mut self.levels[depth];
        level.push(node);
        level.len() - 1
    }

    /// Records the finished container `node` at `index` of level `depth`.
    #[inline]
    pub fn close(&mut self, depth: usize, index: usize, node: Node) {
        self.levels[depth][index] = node;
    }

    /// Records a container at nesting level `depth` whose children were all pushed (a
    /// container is closed before the next one of its level opens, so the order of
    /// closing is the order of the level); returns its index in the level.
    #[inline]
    pub fn push_node(&mut self, node: Node, depth: usize) -> usize {
        self.open(node, depth)
    }

    /// Makes room for children of containers at level `depth`.
    #[inline]
    pub fn reach(&mut self, depth: usize) {
        while self.kids.len() <= depth {
            self.levels.push(Vec::new());
            self.kids.push(Vec::new());
        }
    }

    /// Records a child of a container at level `depth` (which `open` made).
    #[inline(always)]
    pub fn push(&mut self, depth: usize, child: Child) {
        // SAFETY: `open` made `kids` longer than `depth` before any child of a container
        // at `depth` is pushed, and the lists never shrink while a document is planned.
        debug_assert!(depth < self.kids.len());
        unsafe { self.kids.get_unchecked_mut(depth) }.push(child);
    }

    /// Counts a string, bytes or bignum block of `len` content bytes.
    #[inline(always)]
    pub fn add_block(&mut self, len: usize) {
        self.data_len += c::varint_len(len as u64) + len;
    }

    /// Counts a table block of a `len`-byte body; its padding, like a typed block's, is
    /// known once it is placed.
    pub fn add_table(&mut self, len: usize) {
        self.data_len += c::varint_len(len as u64) + 7 + len;
        self.typed_blocks += 1;
    }

    /// Counts a typed block, and notes what spec §5.2 bounds in its shape.
    pub fn add_typed(&mut self, element: ElementType, shape: &[u64], masked: bool) {
        self.data_len += typed_block_len(element, shape, masked);
        self.typed_blocks += 1;
        let mut rows = 1u64;
        let mut nonzero = 1u64;
        for &d in shape {
            rows = rows.saturating_mul(d);
            self.max_rows = self.max_rows.max(rows);
            nonzero = nonzero.saturating_mul(d.max(1));
        }
        if !typed::strides_fit(nonzero, element) {
            self.strides_overflow = true;
        }
    }

    /// Ranks the keys, sets each object's key width, and places every container and the
    /// data section (spec §7).
    pub fn finish(&mut self, keys: Keys<'_>, root: Child, source: &impl Source) -> Result<Layout> {
        let texts = keys.texts;
        let sorted = byte_order(texts);
        let mut rank = vec![0u32; texts.len()];
        for (r, &id) in sorted.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        let dict_len = dictionary::canonical_len(texts.len(), texts.iter().map(|k| k.len()).sum());
        self.finish_at(root, source, rank, sorted, dict_len, c::HEADER_LEN + dict_len)
    }

    /// Places a stream frame's section (spec §14.3): the structure from offset `start` of
    /// the section (past the frame's length and kind), the objects' keys given the stream
    /// ids `ids` (by provisional id), no dictionary.
    pub fn finish_frame(&mut self, ids: Vec<u32>, root: Child, source: &impl Source, start: usize) -> Result<Layout> {
        self.finish_at(root, source, ids, Vec::new(), 0, start)
    }

    /// Places everything from `front` on, objects' keys written as `rank` gives them.
    fn finish_at(&mut self, root: Child, source: &impl Source, rank: Vec<u32>, sorted: Vec<u32>, dict_len: usize, front: usize) -> Result<Layout> {
        // Ids below 256 fit one byte, so only larger ones need a look at each object's keys.
        if rank.iter().any(|&r| r > 255) {
            self.widen_keys(&rank);
        }
        if self.typed_blocks > 0 {
            self.data_len = self.aligned_data_len(root, source);
        }
        let (pointer_width, structure_end, end) = self.place(front);
        let data_start = c::align(structure_end, 8);
        if self.strides_overflow {
            return Err(Error::new(Category::LimitExceeded, "a typed array's non-zero dimensions describe more than 2^63 bytes (spec §5.2)"));
        }
        if self.max_rows > end as u64 {
            return Err(Error::new(
                Category::LimitExceeded,
                format!("a typed array's shape describes {} rows, more than the {end} bytes of its document (spec §5.2)", self.max_rows),
            ));
        }
        Ok(Layout { root, pointer_width, rank, sorted, dict_len, front, structure_end, data_start, end })
    }

    /// Sets each object's key width from the ranks of its keys.
    fn widen_keys(&mut self, rank: &[u32]) {
        for (level, kids) in self.levels.iter_mut().zip(&self.kids).take(self.depth) {
            let mut first = 0;
            for node in level.iter_mut() {
                let children = &kids[first..first + node.len as usize];
                first += node.len as usize;
                if node.tag == tag::OBJECT {
                    let widest = children.iter().map(|ch| rank[ch.key as usize]).max().unwrap_or(0);
                    node.key_width = (unsigned_width(widest as u64) as u8).min(4);
                }
            }
        }
    }

    /// The data section's length with the padding that aligns typed data: the blocks in
    /// their order (the root's, then level by level), each at its place.
    fn aligned_data_len(&self, root: Child, source: &impl Source) -> usize {
        let mut data = write::DataCursor { at: 0 };
        let mut place = |child: &Child| {
            if tag::is_data(child.tag) {
                data.place(child, source);
            }
        };
        place(&root);
        for kids in &self.kids[..self.depth] {
            kids.iter().for_each(&mut place);
        }
        data.at
    }

    /// Gives every container its offset, with the smallest pointer width that the
    /// document's length allows (spec §7): returns it, the structure's end and the
    /// document's end.
    fn place(&mut self, dict_end: usize) -> (usize, usize, usize) {
        let levels = &mut self.levels[..self.depth];
        // Every container takes at least 2 bytes and every child 2, so this bound on the
        // length skips widths that cannot fit without laying the document out for them.
        let nodes: usize = levels.iter().map(|l| l.len()).sum();
        let children: usize = self.kids[..self.depth].iter().map(|k| k.len()).sum();
        let lower = dict_end + 2 * nodes + 2 * children + self.data_len;
        let mut pointer_width = if (lower as u64) < 1 << 16 {
            2
        } else if (lower as u64) < 1 << 32 {
            4
        } else {
            8
        };
        loop {
            let mut pos = dict_end;
            for node in levels.iter_mut().flat_map(|l| l.iter_mut()) {
                node.offset = pos;
                if node.len == 0 {
                    // Layout byte and count: an empty container is two bytes whatever it is.
                    pos += 2;
                    continue;
                }
                pos = match node.small(pointer_width) {
                    Some(small) => small.end(pos),
                    None => node.shape(pointer_width).geometry(pos).end,
                };
            }
            let end = c::align(pos, 8) + self.data_len;
            if pointer_width == 8 || (end as u64) < 1u64 << (8 * pointer_width) {
                return (pointer_width, pos, end);
            }
            pointer_width *= 2;
        }
    }
}

/// The ids of `texts` in the byte order of the texts (the dictionary's order, spec §4.2).
/// Most comparisons are settled by the first 8 bytes read as one big-endian number
/// (zero-padded, so a key sorts before its extensions or ties with them); only ties
/// compare the bytes.
fn byte_order(texts: &[&[u8]]) -> Vec<u32> {
    let head = |t: &[u8]| t.iter().take(8).enumerate().fold(0u64, |h, (i, &b)| h | (b as u64) << (56 - 8 * i));
    let mut order: Vec<(u64, u32)> = texts.iter().enumerate().map(|(id, t)| (head(t), id as u32)).collect();
    order.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| texts[a.1 as usize].cmp(texts[b.1 as usize])));
    order.into_iter().map(|(_, id)| id).collect()
}

/// A placed document: everything the writer needs besides the levels and the source.
pub struct Layout {
    pub root: Child,
    pub pointer_width: usize,
    /// Provisional key id → rank in byte order (the canonical id), and the ids by rank.
    pub rank: Vec<u32>,
    pub sorted: Vec<u32>,
    pub dict_len: usize,
    /// Where the structure starts: past the header and dictionary of a document, past the
    /// length and kind of a stream frame.
    pub front: usize,
    pub structure_end: usize,
    pub data_start: usize,
    pub end: usize,
}

/// The length of a typed block placed at a multiple of 8, padding included.
fn typed_block_len(element: ElementType, shape: &[u64], masked: bool) -> usize {
    typed_block_end(0, element, shape, masked)
}

/// Where a typed block placed at `at` (relative to an 8-aligned start) ends.
#[inline]
pub(crate) fn typed_block_end(at: usize, element: ElementType, shape: &[u64], masked: bool) -> usize {
    // One dimension (most arrays) without the iterators' loops.
    let (count, header_len) = match *shape {
        [n] => (n as usize, typed::header_len([n])),
        _ => (shape.iter().product::<u64>() as usize, typed::header_len(shape.iter().copied())),
    };
    let data = c::align(at + header_len, element.size());
    data + count * element.size() + if masked { count.div_ceil(8) } else { 0 }
}

/// The error for a container too large for the format (spec §4: count < 2^32).
pub(crate) fn too_many_children() -> Error {
    Error::new(Category::LimitExceeded, "a container has more than 2^32-1 children")
}

/// Asks the processor to bring the cache line at `at` in: the encoders walk trees whose
/// strings are scattered over the heap, and a copy or hash waiting on each one's first line
/// is most of their time. A hint only (no effect off x86-64).
#[inline(always)]
pub(crate) fn prefetch(at: *const u8) {
    // SAFETY: a prefetch does not fault, whatever the address.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    let _ = at;
}

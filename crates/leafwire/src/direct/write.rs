//! The second walk of the direct encoder: writes a planned document (spec §7) in document
//! order, into memory of exactly its length (`write_document_into`, which
//! `write_document` calls with a new `Vec`), or a buffer's worth at a time to a writer
//! (`write_document_to`, whose memory then holds the plan, not the document).
//!
//! The structure section goes first, level by level; the data blocks' offsets follow from
//! their lengths, met in the order of the slots. In memory, each block is written where
//! its slot places it; to a writer, the blocks are written after the structure, in that
//! same order. Both fill each container with the same code (`Writer::fill`).

use std::borrow::Cow;
use std::io::Write;
use std::mem::MaybeUninit;


use super::{Child, Layout, Levels, Node};
use crate::error::Result;
use crate::format::container::{Geometry, Shape, SmallContainer};
use crate::format::header::{self, RootRecord};
use crate::format::{self as c, dictionary, hash, tag, typed, ElementType, MAX_RANK};

/// Where the content of the planned data blocks comes from: the tree the planner walked.
pub trait Source {
    /// The content of a string, bytes or bignum child (without its length varint).
    fn content(&self, child: &Child) -> &[u8];
    /// The array of a typed child (sources without typed arrays are never asked).
    fn typed(&self, child: &Child) -> TypedBlock<'_>;

    /// Where the block of a typed child, placed at `at`, ends. A source that knows the
    /// shape without making a [`TypedBlock`] may say so directly: blocks are placed once
    /// more than they are written.
    fn typed_block_end(&self, child: &Child, at: usize) -> usize {
        let t = self.typed(child);
        super::typed_block_end(at, t.element, &t.shape, t.mask.is_some())
    }

    /// The body of a table child (spec §15.1; sources without tables are never asked).
    fn table(&self, _child: &Child) -> &[u8] {
        unreachable!("this source has no tables")
    }

    /// The length of a string, bytes or bignum child's block: its length varint and content.
    fn block_len(&self, child: &Child) -> usize {
        let len = self.content(child).len();
        c::varint_len(len as u64) + len
    }

    /// The blocks of the string, bytes and bignum children of nesting level `level` (those
    /// of `Levels::kids[level]`), one after the other in the children's order, if the
    /// source holds them so: the writer then copies them as one run (or a few, around the
    /// level's typed and table blocks) instead of one block at a time.
    fn level_blocks(&self, _level: usize) -> Option<&[u8]> {
        None
    }

    /// Whether the writers ask for each string-like block's first cache line ahead of its
    /// copy, for a data section of `data_len` bytes. Blocks are written level by level,
    /// but a tree's strings lie in memory in the order it was built, so in a large
    /// document each copy waits on a line not touched lately. Measured (`examples/encloop`
    /// on the corpus files and on four of them concatenated 2, 4 and 12 times): with under
    /// 1 MiB of blocks they are still in cache and the prefetches cost 5-8 % of an encode;
    /// from about 2.5 MiB they save 5-15 %. A source whose walk has just read each
    /// block's memory has no use for them.
    fn prefetch_blocks(&self, data_len: usize) -> bool {
        data_len >= PREFETCH_FROM
    }
}

/// The data section's length from which `Source::prefetch_blocks` says yes by default.
const PREFETCH_FROM: usize = 1 << 20;

/// A typed array as the writer needs it.
pub struct TypedBlock<'a> {
    pub element: ElementType,
    pub shape: Cow<'a, [u64]>,
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
    let mut out = Vec::with_capacity(layout.end);
    write_document_into(levels, keys, layout, source, &mut out.spare_capacity_mut()[..layout.end]);
    // SAFETY: `write_document_into` initialized all `layout.end` bytes (the capacity is at
    // least that).
    unsafe { out.set_len(layout.end) };
    out
}

/// Writes the document `layout` places into `out`, which must be exactly `layout.end`
/// bytes long and may be uninitialized (the memory of a new buffer, say); every byte of it
/// is written, and it is returned as bytes.
///
/// # Panics
/// If `out` is not `layout.end` bytes long, or the source's blocks do not have the lengths
/// the planner counted (then nothing uninitialized is handed out).
pub fn write_document_into<'o>(levels: &Levels, keys: Keys<'_>, layout: &Layout, source: &impl Source, out: &'o mut [MaybeUninit<u8>]) -> &'o mut [u8] {
    assert_eq!(out.len(), layout.end, "the output is the document's length");
    let root = write_section_into(levels, keys, layout, source, out);
    let front = &mut out[..layout.front];
    // SAFETY: the front (header and dictionary) is zeroed before a `&mut [u8]` is made of
    // it; `MaybeUninit<u8>` has the layout of `u8`.
    let front = unsafe {
        std::ptr::write_bytes(front.as_mut_ptr(), 0, front.len());
        &mut *(front as *mut [MaybeUninit<u8>] as *mut [u8])
    };
    write_front(front, keys, layout, root);
    // SAFETY: the front was zeroed just above, and `write_section_into` wrote every byte
    // from `layout.front` to the end.
    unsafe { &mut *(out as *mut [MaybeUninit<u8>] as *mut [u8]) }
}

/// Writes the structure and data sections `layout` places, `out[layout.front..]`, and
/// returns the root's payload; `out` is `layout.end` bytes long, and its first
/// `layout.front` bytes are neither read nor written (a document's header and dictionary,
/// or the length and kind of a stream frame and whatever precedes them).
///
/// # Panics
/// If `out` is not `layout.end` bytes long, or the source's blocks do not have the lengths
/// the planner counted (then nothing uninitialized is handed out).
pub fn write_section_into(levels: &Levels, keys: Keys<'_>, layout: &Layout, source: &impl Source, out: &mut [MaybeUninit<u8>]) -> u64 {
    assert_eq!(out.len(), layout.end, "the output is the section's length");
    let (structure, data) = out.split_at_mut(layout.data_start);
    // Containers are laid out in a slice that starts at a multiple of 8 (at or before
    // `front`), so that their slots' alignment there is their alignment in the output; the
    // up to 7 bytes before `front` that it covers are not ours, and are put back after.
    let base = layout.front - layout.front % 8;
    let mut kept = [MaybeUninit::<u8>::uninit(); 8];
    kept[..layout.front - base].copy_from_slice(&structure[base..layout.front]);
    let structure = &mut structure[base..];
    // SAFETY: every byte of the slice (padding included) is zeroed before a `&mut [u8]` is
    // made of it; `MaybeUninit<u8>` has the layout of `u8`.
    let structure = unsafe {
        std::ptr::write_bytes(structure.as_mut_ptr(), 0, structure.len());
        &mut *(structure as *mut [MaybeUninit<u8>] as *mut [u8])
    };
    let mut data = DataWriter { buf: data, at: 0, start: layout.data_start };
    let root = root_payload(levels, layout, source, &mut data);
    let writer = Writer { keys, layout, source };
    let prefetch = source.prefetch_blocks(layout.end - layout.data_start);
    for d in 0..levels.depth {
        match source.level_blocks(d) {
            Some(run) => {
                let mut level_data = LevelData { data: &mut data, run, taken: 0, copied: 0 };
                write_level(&writer, levels, d, base, structure, &mut level_data, false);
                level_data.finish();
            }
            None => write_level(&writer, levels, d, base, structure, &mut data, prefetch),
        }
    }
    assert_eq!(data.at, data.buf.len(), "the data blocks fill the data section as planned");
    out[base..layout.front].copy_from_slice(&kept[..layout.front - base]);
    root
}

/// Writes the containers of nesting level `d` into `structure` (which starts at document
/// offset `base`), placing their data blocks in `data`; `prefetch`: ask for each string's
/// first line ahead of its copy (blocks scattered over the source's memory).
#[inline(always)]
fn write_level<S: Source>(writer: &Writer<'_, S>, levels: &Levels, d: usize, base: usize, structure: &mut [u8], data: &mut impl Blocks, prefetch: bool) {
    let (level, kids) = (&levels.levels[d], &levels.kids[d]);
    let next: &[Node] = if d + 1 < levels.depth { &levels.levels[d + 1] } else { &[] };
    let mut first = 0;
    let mut prefetched = 0;
    for node in level {
        if node.tag == tag::ARRAY && !node.has_pointer && node.len != 0 {
            // Numbers, booleans and nulls only (most numeric lists): no keys, no index and
            // no data blocks, each slot its child's value. Tested first, on the node's own
            // fields: folded into the match below, canada's `dumps` took 15 % more
            // instructions (callgrind).
            let children = &kids[first..first + node.len as usize];
            first += node.len as usize;
            let pos = node.offset - base;
            match SmallContainer::new(tag::ARRAY, children.len(), node.scalar_width as usize, 0) {
                Some(small) => writer.fill_small(structure, pos, small, data, tag::ARRAY, children, next),
                None => write_scalar_array(structure, pos, node.shape(writer.layout.pointer_width), children),
            }
            continue;
        }
        if prefetch {
            prefetch_blocks(kids, &mut prefetched, first + node.len as usize, writer.source);
        }
        if node.len == 0 {
            // Layout byte 0 (slot width 1, key width 1 or none, no index) and count 0:
            // the zeros already there.
            debug_assert_eq!(node.shape(writer.layout.pointer_width).layout_byte(), 0);
            continue;
        }
        let children = &kids[first..first + node.len as usize];
        first += node.len as usize;
        let pos = node.offset - base;
        match node.small(writer.layout.pointer_width) {
            Some(small) => writer.fill_small(structure, pos, small, data, node.tag, children, next),
            None => {
                let shape = node.shape(writer.layout.pointer_width);
                let g = shape.geometry(pos);
                shape.write_header(structure, g.pos);
                writer.fill(structure, &g, data, node, children, next);
            }
        }
    }
}

/// Writes an array whose children are all inline scalars (`shape`, placed at `pos` of
/// `structure`, which is zeroed): header, tags and slots.
#[inline(never)]
fn write_scalar_array(structure: &mut [u8], pos: usize, shape: Shape, children: &[Child]) {
    let g = shape.geometry(pos);
    shape.write_header(structure, g.pos);
    for (out, child) in structure[g.tags_at..g.tags_at + children.len()].iter_mut().zip(children) {
        *out = child.tag;
    }
    let slots = &mut structure[g.slots_at..g.slots_at + children.len() * g.width as usize];
    match g.width {
        1 => scalar_slots::<1>(slots, children),
        2 => scalar_slots::<2>(slots, children),
        4 => scalar_slots::<4>(slots, children),
        _ => scalar_slots::<8>(slots, children),
    }
}

/// Stores each inline scalar child's payload in `W` little-endian bytes.
#[inline(always)]
fn scalar_slots<const W: usize>(out: &mut [u8], children: &[Child]) {
    for (out, child) in out.chunks_exact_mut(W).zip(children) {
        debug_assert!(child.tag < tag::STRING);
        out.copy_from_slice(&child.value.to_le_bytes()[..W]);
    }
}

/// Writes the document `layout` places into `writer`, gathering about `buffer` bytes per
/// write (large blocks go through uncopied). Returns the length.
pub fn write_document_to(levels: &Levels, keys: Keys<'_>, layout: &Layout, source: &impl Source, writer: &mut dyn Write, buffer: usize) -> Result<u64> {
    let mut sink = Sink { out: Vec::with_capacity(2 * buffer), base: 0, writer, buffer };
    let mut data = DataCursor { at: 0 };
    let root = root_payload(levels, layout, source, &mut data);
    sink.out.resize(c::HEADER_LEN + layout.dict_len, 0);
    write_front(&mut sink.out, keys, layout, root);
    let writer = Writer { keys, layout, source };
    let prefetch = source.prefetch_blocks(layout.end - layout.data_start);
    for d in 0..levels.depth {
        let (level, kids) = (&levels.levels[d], &levels.kids[d]);
        let next: &[Node] = if d + 1 < levels.depth { &levels.levels[d + 1] } else { &[] };
        let mut first = 0;
        let mut prefetched = 0;
        for node in level {
            if prefetch {
                prefetch_blocks(kids, &mut prefetched, first + node.len as usize, source);
            }
            let children = &kids[first..first + node.len as usize];
            first += node.len as usize;
            debug_assert_eq!(sink.position(), node.offset);
            // `out` starts at a document offset that is a multiple of 8, so alignments in
            // it are those in the document.
            let g = node.shape(layout.pointer_width).append_to(&mut sink.out);
            writer.fill(&mut sink.out, &g, &mut data, node, children, next);
            if sink.out.len() >= sink.buffer {
                sink.flush_aligned()?;
            }
        }
    }
    debug_assert_eq!(sink.position(), layout.structure_end);
    sink.put(&[0u8; 8][..layout.data_start - layout.structure_end])?;
    // The data section: the blocks in the order the slots met them.
    if is_data(&layout.root) {
        write_block(&layout.root, source, &mut sink)?;
    }
    for kids in &levels.kids[..levels.depth] {
        for child in kids.iter().filter(|ch| is_data(ch)) {
            write_block(child, source, &mut sink)?;
        }
    }
    sink.flush()?;
    Ok(layout.end as u64)
}

/// Writes the header and the dictionary into `out`, the document's first
/// `HEADER_LEN + dict_len` bytes, zeroed.
fn write_front(out: &mut [u8], keys: Keys<'_>, layout: &Layout, root: u64) {
    let dictionary = if layout.dict_len == 0 { 0 } else { c::HEADER_LEN as u64 };
    let record = RootRecord { generation: 1, root, dictionary, end: layout.end as u64, garbage: 0, root_tag: layout.root.tag, journal: false };
    header::write_header(out, &record);
    if !keys.texts.is_empty() {
        let texts = layout.sorted.iter().map(|&id| keys.texts[id as usize]);
        let hashes = layout.sorted.iter().map(|&id| keys.hashes[id as usize]);
        dictionary::write_canonical(&mut out[c::HEADER_LEN..], texts, hashes);
    }
}

/// How many children ahead of those being written the writers prefetch.
const PREFETCH_AHEAD: usize = 16;

/// Blocks are written level by level, but a tree's strings lie in memory in the order it
/// was built (depth first): before a container's children up to `kids[..end]` are written,
/// asks for the first line of each string-like block up to `PREFETCH_AHEAD` children
/// further, continuing from `*prefetched`.
#[inline(always)]
fn prefetch_blocks(kids: &[Child], prefetched: &mut usize, end: usize, source: &impl Source) {
    let until = (end + PREFETCH_AHEAD).min(kids.len());
    for child in &kids[(*prefetched).min(until)..until] {
        if is_data(child) && child.tag != tag::TYPED && child.tag != tag::TABLE {
            super::prefetch(source.content(child).as_ptr());
        }
    }
    *prefetched = until.max(*prefetched);
}

#[inline(always)]
fn is_data(child: &Child) -> bool {
    tag::is_data(child.tag)
}

/// What the slots ask of the data section: where a data child's block goes.
trait Blocks {
    /// Places a data child's block after the previous one; returns its offset in the data
    /// section.
    fn block(&mut self, child: &Child, source: &impl Source) -> usize;
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
            source.typed_block_end(child, at)
        } else if child.tag == tag::TABLE {
            at + c::table::block_len(at, source.table(child).len())
        } else {
            let len = source.content(child).len();
            at + c::varint_len(len as u64) + len
        };
        at
    }
}

impl Blocks for DataCursor {
    #[inline(always)]
    fn block(&mut self, child: &Child, source: &impl Source) -> usize {
        self.place(child, source)
    }
}

/// The data section in memory, filled front to back as the slots meet the blocks. Its
/// memory starts uninitialized.
struct DataWriter<'b> {
    buf: &'b mut [MaybeUninit<u8>],
    /// Next free position, relative to the data start.
    at: usize,
    /// The document offset of the data start (a multiple of 8).
    start: usize,
}

impl Blocks for DataWriter<'_> {
    #[inline(always)]
    fn block(&mut self, child: &Child, source: &impl Source) -> usize {
        let at = self.at;
        match write_block(child, source, self) {
            Ok(()) => at,
            Err(_) => unreachable!("writing to memory does not fail"),
        }
    }
}

/// The data section in memory while one level's slots are filled, from a source that holds
/// the level's string-like blocks as one run in slot order (`Source::level_blocks`): such a
/// block is only counted as its slot meets it, and the run is copied in whole pieces, cut
/// only where a typed or table block goes between.
struct LevelData<'d, 'b, 'r> {
    data: &'d mut DataWriter<'b>,
    run: &'r [u8],
    /// Bytes of `run` placed so far, and of those, copied.
    taken: usize,
    copied: usize,
}

impl LevelData<'_, '_, '_> {
    /// Copies the blocks placed since the last copy: they end at the data writer's position.
    #[inline]
    fn copy_placed(&mut self) {
        let pending = &self.run[self.copied..self.taken];
        let at = self.data.at - pending.len();
        let out = &mut self.data.buf[at..self.data.at];
        // SAFETY: `out` is exactly `pending.len()` elements (the slicing checked it);
        // `MaybeUninit<u8>` has the layout of `u8`; the run is not in the output.
        unsafe { std::ptr::copy_nonoverlapping(pending.as_ptr(), out.as_mut_ptr().cast::<u8>(), pending.len()) };
        self.copied = self.taken;
    }

    /// Copies what is left; the level's slots must have met every block of the run.
    fn finish(mut self) {
        self.copy_placed();
        assert_eq!(self.taken, self.run.len(), "the level's slots meet all its blocks");
    }
}

impl Blocks for LevelData<'_, '_, '_> {
    #[inline(always)]
    fn block(&mut self, child: &Child, source: &impl Source) -> usize {
        if child.tag == tag::TYPED || child.tag == tag::TABLE {
            self.copy_placed();
            return self.data.block(child, source);
        }
        let (at, len) = (self.data.at, source.block_len(child));
        assert!(self.taken + len <= self.run.len(), "a level's blocks are in its run");
        debug_assert!(self.run[self.taken..self.taken + len].ends_with(source.content(child)), "the run is in slot order");
        self.data.at += len;
        self.taken += len;
        at
    }
}

/// What data blocks are written to.
trait Out {
    /// The document offset of the next byte.
    fn position(&self) -> usize;
    fn put(&mut self, bytes: &[u8]) -> Result<()>;

    fn put_byte(&mut self, byte: u8) -> Result<()> {
        self.put(&[byte])
    }
}

impl Out for DataWriter<'_> {
    #[inline(always)]
    fn position(&self) -> usize {
        self.start + self.at
    }

    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let out = &mut self.buf[self.at..self.at + bytes.len()];
        // SAFETY: `out` is exactly `bytes.len()` elements (the slicing checked it);
        // `MaybeUninit<u8>` has the layout of `u8`; `bytes` is not in the output. Most
        // blocks are short strings, whose copy is a few moves rather than a call.
        unsafe {
            if bytes.len() <= 64 {
                c::numbers::copy_short(out.as_mut_ptr().cast::<u8>(), bytes);
            } else {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len());
            }
        }
        self.at += bytes.len();
        Ok(())
    }

    #[inline(always)]
    fn put_byte(&mut self, byte: u8) -> Result<()> {
        self.buf[self.at] = MaybeUninit::new(byte);
        self.at += 1;
        Ok(())
    }
}

/// The root's payload (spec §7: the root's block, if it has one, comes first).
fn root_payload(levels: &Levels, layout: &Layout, source: &impl Source, data: &mut impl Blocks) -> u64 {
    let root = &layout.root;
    match root.tag {
        _ if is_data(root) => (layout.data_start + data.block(root, source)) as u64,
        tag::ARRAY | tag::OBJECT | tag::INTMAP => levels.levels[0][0].offset as u64,
        _ => root.value,
    }
}

/// Writes a data child's block.
#[inline(always)]
fn write_block(child: &Child, source: &impl Source, out: &mut impl Out) -> Result<()> {
    if child.tag == tag::TABLE {
        return write_table_block(child, source, out);
    }
    if child.tag != tag::TYPED {
        let content = source.content(child);
        if content.len() < 0x80 {
            // A one-byte varint (most strings): stored, not copied.
            out.put_byte(content.len() as u8)?;
        } else {
            let mut varint = [0u8; 10];
            let n = c::numbers::put_varint(&mut varint, content.len() as u64);
            out.put(&varint[..n])?;
        }
        return out.put(content);
    }
    write_typed_block(child, source, out)
}

/// A table block: its length, padding to 8, and the body as it is (spec §15.1).
#[inline(never)]
fn write_table_block(child: &Child, source: &impl Source, out: &mut impl Out) -> Result<()> {
    let body = source.table(child);
    let mut prefix = [0u8; 17];
    let n = c::table::write_prefix(&mut prefix, out.position(), body.len());
    out.put(&prefix[..n])?;
    out.put(body)
}

#[inline(never)]
fn write_typed_block(child: &Child, source: &impl Source, out: &mut impl Out) -> Result<()> {
    let t = source.typed(child);
    // The header and its alignment padding are laid out in a scratch buffer that starts
    // at the same offset modulo 8 as the block, so the element alignment comes out as in
    // the document. Most arrays have a rank of 1 or 2: their scratch is small enough that
    // zeroing it costs no library call.
    let skew = out.position() % 8;
    let len = skew + typed::header_len(t.shape.iter().copied()) + t.element.size();
    let mut small = [0u8; 48];
    let mut large;
    let head = if len <= small.len() {
        &mut small[..len]
    } else {
        large = [0u8; 8 + 2 + 10 * MAX_RANK + 8];
        &mut large[..len]
    };
    let data_at = typed::write_header(head, skew, t.element, &t.shape, t.mask.is_some());
    out.put(&head[skew..data_at])?;
    out.put(&t.data)?;
    if let Some(mask) = &t.mask {
        let mut packed = Vec::with_capacity(mask.len().div_ceil(8));
        typed::pack_mask(mask.iter().copied(), &mut packed);
        out.put(&packed)?;
    }
    Ok(())
}

struct Writer<'w, S> {
    keys: Keys<'w>,
    layout: &'w Layout,
    source: &'w S,
}

impl<S: Source> Writer<'_, S> {
    /// Fills the container `node` in `buf`, where `g` places it with its header written and
    /// the rest zeroed: tags, keys, slots (placing data blocks as they come) and index.
    /// `next` is the next level's containers (which the child containers are, in order).
    #[inline]
    fn fill(&self, buf: &mut [u8], g: &Geometry, data: &mut impl Blocks, node: &Node, children: &[Child], next: &[Node]) {
        let len = children.len();
        let (width, key_width) = (g.width as usize, g.key_width as usize);
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
    fn slots<const W: usize>(&self, out: &mut [u8], children: &[Child], data: &mut impl Blocks, next: &[Node]) {
        for (out, child) in out.chunks_exact_mut(W).zip(children) {
            out.copy_from_slice(&self.payload(child, data, next).to_le_bytes()[..W]);
        }
    }

    /// A child's slot payload: a scalar's value, the offset of its container (in the next
    /// level, `next`), or that of its data block, placed now.
    #[inline(always)]
    fn payload(&self, child: &Child, data: &mut impl Blocks, next: &[Node]) -> u64 {
        if child.tag < tag::STRING {
            child.value
        } else if is_data(child) {
            (self.layout.data_start + data.block(child, self.source)) as u64
        } else {
            next[child.value as usize].offset as u64
        }
    }

    /// `fill` for a small container (`small`, of kind `t`, at `pos` of `structure`, which
    /// is zeroed), header included, in one pass over the children after one bounds check
    /// of the block: the general fill's setup (a geometry, and a loop each for tags, keys
    /// and slots) was most of the cost of the many objects of two to eight entries and of
    /// short numeric lists.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn fill_small(&self, structure: &mut [u8], pos: usize, small: SmallContainer, data: &mut impl Blocks, t: u8, children: &[Child], next: &[Node]) {
        let block = &mut structure[pos..small.end(pos)];
        small.write_header(block, 0);
        let at = Parts { tags: small.tags_at(pos) - pos, keys: small.keys_at(pos) - pos, slots: small.slots_at(pos) - pos, key_width: small.key_width() };
        let n = children.len();
        assert!(at.keys == at.tags + n && at.slots >= at.keys + n * at.key_width && block.len() == at.slots + n * small.width());
        let out = block.as_mut_ptr();
        // SAFETY (each call): the assertion puts the tags, keys and slots of the `n`
        // children inside `block`.
        unsafe {
            match small.width() {
                8 => self.small_children::<8>(out, at, t, children, data, next),
                4 => self.small_children::<4>(out, at, t, children, data, next),
                2 => self.small_children::<2>(out, at, t, children, data, next),
                _ => self.small_children::<1>(out, at, t, children, data, next),
            }
        }
    }

    /// Stores each child's tag, key and payload (`W` bytes) where `at` places them in the
    /// block at `out`.
    ///
    /// # Safety
    /// Those bytes must be valid for writes.
    #[inline(always)]
    unsafe fn small_children<const W: usize>(&self, out: *mut u8, at: Parts, t: u8, children: &[Child], data: &mut impl Blocks, next: &[Node]) {
        let rank = &self.layout.rank;
        for (i, child) in children.iter().enumerate() {
            let key = if t == tag::OBJECT { rank[child.key as usize] as u64 } else { child.key };
            let payload = self.payload(child, data, next).to_le_bytes();
            // SAFETY: the caller's.
            unsafe {
                *out.add(at.tags + i) = child.tag;
                let key_at = out.add(at.keys + i * at.key_width);
                match at.key_width {
                    0 => {}
                    1 => *key_at = key as u8,
                    2 => key_at.cast::<[u8; 2]>().write_unaligned((key as u16).to_le_bytes()),
                    4 => key_at.cast::<[u8; 4]>().write_unaligned((key as u32).to_le_bytes()),
                    _ => key_at.cast::<[u8; 8]>().write_unaligned(key.to_le_bytes()),
                }
                std::ptr::copy_nonoverlapping(payload.as_ptr(), out.add(at.slots + i * W), W);
            }
        }
    }
}

/// Where a small container's tags, keys and slots start in its block, and its key width.
#[derive(Clone, Copy)]
struct Parts {
    tags: usize,
    keys: usize,
    slots: usize,
    key_width: usize,
}

/// Stores each key in `K` little-endian bytes.
#[inline]
fn write_keys<const K: usize>(out: &mut [u8], keys: impl Iterator<Item = u64>) {
    for (out, key) in out.chunks_exact_mut(K).zip(keys) {
        out.copy_from_slice(&key.to_le_bytes()[..K]);
    }
}

/// Where a streamed document's bytes go: gathered a little at a time and passed to a
/// writer, large payloads directly, uncopied.
struct Sink<'w> {
    out: Vec<u8>,
    /// The document offset of `out[0]`.
    base: u64,
    writer: &'w mut dyn Write,
    /// How many bytes to gather before a write.
    buffer: usize,
}

impl Sink<'_> {
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
        self.writer.write_all(&self.out[..n])?;
        self.out.drain(..n);
        self.base += n as u64;
        Ok(())
    }
}

impl Out for Sink<'_> {
    fn position(&self) -> usize {
        self.base as usize + self.out.len()
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if self.out.len() + bytes.len() > self.buffer {
            self.flush()?;
            if bytes.len() >= self.buffer {
                self.writer.write_all(bytes)?;
                self.base += bytes.len() as u64;
                return Ok(());
            }
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }
}

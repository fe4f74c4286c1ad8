//! Canonical layout (spec §7): turns a finished `Builder` into document bytes.
//!
//! Pass 1 walks the containers breadth-first, records each one's widths, and assigns the
//! data blocks their places in the order their slots are met. The pointer width is then
//! the smallest that addresses the whole document, container offsets follow from it, and
//! pass 2 writes every byte once.
//!
//! Every offset is known before the first byte is written, so the output can also be
//! streamed (`write_to`) a buffer at a time, in document order: memory then holds the
//! builder and the layout, not the document.

use std::io::Write;

use crate::builder::{Builder, Item, NumTy};
use crate::error::{Category, Error, Result};
use crate::format::container::Shape;
use crate::format::header::{self, RootRecord};
use crate::format::numbers::{signed_width, unsigned_width};
use crate::format::{align, dictionary, hash, tag, typed, ElementType, HEADER_LEN, MAX_RANK};

/// What pass 1 learns about one container: kept small, there is one per container.
struct Plan {
    item: usize,
    /// Children (at most 2^32-1, checked when planned); they start at the item's `first`.
    len: u32,
    tag: u8,
    /// Slot width needed by the scalar children.
    scalar_width: u8,
    has_pointer: bool,
    key_width: u8,
}

/// The layout: containers in breadth-first order, each placed by the pointer width.
///
/// No per-item offsets are kept (they would cost 8 bytes a value): the writer meets the
/// children in the order the planner did, so the k-th container child met is `plans[k]`
/// (after the root's) and the data blocks come one after the other (`DataCursor`).
struct Layout {
    plans: Vec<Plan>,
    /// Parallel to `plans`: each container's offset, once the pointer width is known.
    container_offsets: Vec<u64>,
    /// The length of the data section.
    data_len: usize,
    /// Sorted rank of each provisional key id.
    key_rank: Vec<u32>,
    /// Provisional key ids in sorted order.
    sorted_keys: Vec<u32>,
    dict_len: usize,
    /// The most rows any typed array's shape describes (spec §5.2 bounds it by `end`).
    max_rows: u64,
    /// Whether a typed array's non-zero dimensions describe 2^63 bytes or more (spec §5.2).
    strides_overflow: bool,
}

pub(crate) fn encode(b: &Builder) -> Result<Vec<u8>> {
    let placed = place(b)?;
    let mut sink = Sink { out: Vec::with_capacity(placed.end as usize), base: 0, writer: None, buffer: usize::MAX };
    write_head(b, &placed, &mut sink)?;
    write_data(b, &placed, &mut sink)?;
    Ok(sink.out)
}

/// Encodes into `writer` with the bytes of `encode`, a buffer's worth at a time: nothing
/// of the output is held whole, only the builder and the layout. Returns the length.
pub(crate) fn write_to(b: &Builder, writer: &mut dyn Write) -> Result<u64> {
    write_buffered(b, writer, SINK_BUFFER)
}

/// `write_to` gathering about `buffer` bytes per write (small in tests, to cross every
/// kind of block boundary).
fn write_buffered(b: &Builder, writer: &mut dyn Write, buffer: usize) -> Result<u64> {
    let placed = place(b)?;
    let mut sink = Sink { out: Vec::with_capacity(2 * buffer), base: 0, writer: Some(writer), buffer };
    write_head(b, &placed, &mut sink)?;
    write_data(b, &placed, &mut sink)?;
    sink.flush()?;
    Ok(placed.end)
}

/// A finished layout: every offset known, so any part can be written in any order.
struct Placed {
    layout: Layout,
    pointer_width: usize,
    structure_end: usize,
    data_start: usize,
    end: u64,
}

fn place(b: &Builder) -> Result<Placed> {
    let mut layout = plan(b)?;
    let dict_end = HEADER_LEN + layout.dict_len;
    let mut pointer_width = 2;
    let (structure_end, data_start) = loop {
        let structure_end = place_containers(&mut layout, dict_end, pointer_width);
        let data_start = align(structure_end, 8);
        let end = data_start + layout.data_len;
        if pointer_width == 8 || (end as u64) < 1u64 << (8 * pointer_width) {
            break (structure_end, data_start);
        }
        pointer_width *= 2;
    };
    let end = (data_start + layout.data_len) as u64;
    if layout.strides_overflow {
        return Err(Error::new(Category::LimitExceeded, "a typed array's non-zero dimensions describe more than 2^63 bytes (spec §5.2)"));
    }
    if layout.max_rows > end {
        return Err(Error::new(
            Category::LimitExceeded,
            format!("a typed array's shape describes {} rows, more than the {end} bytes of its document (spec §5.2)", layout.max_rows),
        ));
    }
    Ok(Placed { layout, pointer_width, structure_end, data_start, end })
}

/// Writes everything before the data section: header, dictionary, structure section, and
/// the padding up to the data. Every offset is known, so the header goes first.
fn write_head(b: &Builder, placed: &Placed, sink: &mut Sink<'_>) -> Result<()> {
    let layout = &placed.layout;
    let out = &mut sink.out;
    out.resize(HEADER_LEN + layout.dict_len, 0);
    let (root_tag, root) = Walk { next_plan: 0, ..Walk::new(placed.data_start) }.slot(b, layout, &b.items[b.items.len() - 1]);
    let dictionary = if b.dict.is_empty() { 0 } else { HEADER_LEN as u64 };
    let record = RootRecord { generation: 1, root, dictionary, end: placed.end, garbage: 0, root_tag, journal: false };
    header::write_header(out, &record);
    let keys = layout.sorted_keys.iter().map(|&id| b.dict[id as usize].as_bytes());
    dictionary::write_canonical(&mut out[HEADER_LEN..], keys.clone(), keys.map(hash::key_hash));
    let mut walk = Walk::new(placed.data_start);
    for plan in 0..layout.plans.len() {
        write_container(b, layout, plan, placed.pointer_width, &mut walk, sink);
        if sink.out.len() >= sink.buffer {
            sink.flush_aligned()?;
        }
    }
    debug_assert_eq!(sink.base + sink.out.len() as u64, placed.structure_end as u64);
    let padding = placed.data_start - placed.structure_end;
    sink.put(&[0u8; 8][..padding])
}

/// Writes the data blocks in the order the structure met them (as `Walk` placed them).
fn write_data(b: &Builder, placed: &Placed, sink: &mut Sink<'_>) -> Result<()> {
    let mut pos = placed.data_start as u64;
    let root = &b.items[b.items.len() - 1];
    if is_data_block(root) {
        pos = write_data_block(b, root, pos, sink)?;
    }
    for p in &placed.layout.plans {
        let first = first_child(&b.items[p.item]);
        for item in b.items[first..first + p.len as usize].iter().filter(|item| is_data_block(item)) {
            pos = write_data_block(b, item, pos, sink)?;
        }
    }
    debug_assert_eq!(pos, placed.end);
    Ok(())
}

/// How many bytes `write_to` gathers before one write.
const SINK_BUFFER: usize = 1 << 20;

/// Where the document's bytes go: appended to one buffer (`encode`), or gathered a little
/// at a time and passed to a writer (`write_to`), large payloads directly, uncopied.
struct Sink<'w> {
    out: Vec<u8>,
    /// The document offset of `out[0]`.
    base: u64,
    writer: Option<&'w mut dyn Write>,
    /// How many bytes to gather before a write.
    buffer: usize,
}

impl Sink<'_> {
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

fn plan(b: &Builder) -> Result<Layout> {
    let n = b.items.len();
    let mut sorted_keys: Vec<u32> = (0..b.dict.len() as u32).collect();
    sorted_keys.sort_unstable_by(|&x, &y| b.dict[x as usize].as_bytes().cmp(b.dict[y as usize].as_bytes()));
    let mut key_rank = vec![0u32; b.dict.len()];
    for (rank, &id) in sorted_keys.iter().enumerate() {
        key_rank[id as usize] = rank as u32;
    }
    let dict_len = dictionary::canonical_len(b.dict.len(), b.dict.iter().map(|k| k.len()).sum());

    let mut layout = Layout { plans: Vec::new(), container_offsets: Vec::new(), data_len: 0, key_rank, sorted_keys, dict_len, max_rows: 0, strides_overflow: false };
    let mut data = DataCursor::default();
    let root = n - 1;
    let mut queue = std::collections::VecDeque::new();
    if is_container(&b.items[root]) {
        queue.push_back(root);
    } else {
        check_data_block(b, &mut layout, root);
        data.place(b, &b.items[root]);
    }
    while let Some(i) = queue.pop_front() {
        let (tag, first, len) = match b.items[i] {
            Item::Array { first, len } => (tag::ARRAY, first, len as usize),
            Item::Object { first, len } => (tag::OBJECT, first, len as usize),
            Item::IntMap { first, len } => (tag::INTMAP, first, len as usize),
            _ => unreachable!(),
        };
        if len > u32::MAX as usize {
            return Err(Error::new(Category::LimitExceeded, "a container has more than 2^32-1 children"));
        }
        let mut scalar_width = 1;
        let mut has_pointer = false;
        let mut key_width = if tag == tag::ARRAY { 0 } else { 1 };
        for c in first..first + len {
            let item = &b.items[c];
            if is_container(item) {
                has_pointer = true;
                queue.push_back(c);
            } else if data.place(b, item).is_some() {
                check_data_block(b, &mut layout, c);
                has_pointer = true;
            } else {
                scalar_width = scalar_width.max(scalar_need(item));
            }
            if tag == tag::OBJECT {
                key_width = key_width.max(unsigned_width(layout.key_rank[b.object_key(c)] as u64));
            } else if tag == tag::INTMAP {
                key_width = key_width.max(signed_width(b.int_key(c) as i64));
            }
        }
        layout.plans.push(Plan { item: i, len: len as u32, tag, scalar_width: scalar_width as u8, has_pointer, key_width: key_width as u8 });
    }
    layout.data_len = data.len;
    layout.container_offsets = vec![0; layout.plans.len()];
    Ok(layout)
}

/// Where a container's children start in `Builder::items`.
fn first_child(item: &Item) -> usize {
    match *item {
        Item::Array { first, .. } | Item::Object { first, .. } | Item::IntMap { first, .. } => first,
        _ => unreachable!("not a container"),
    }
}

fn is_data_block(item: &Item) -> bool {
    matches!(item, Item::Str { .. } | Item::Bytes { .. } | Item::BigNum { .. } | Item::Typed(_))
}

fn is_container(item: &Item) -> bool {
    matches!(item, Item::Array { .. } | Item::Object { .. } | Item::IntMap { .. })
}

/// Notes what spec §5.2 bounds in a typed array: its rows, and its strides.
fn check_data_block(b: &Builder, layout: &mut Layout, i: usize) {
    if let Item::Typed(t) = b.items[i] {
        let t = &b.typed[t];
        let rows = t.shape.iter().scan(1u64, |acc, &d| {
            *acc = acc.saturating_mul(d);
            Some(*acc)
        });
        layout.max_rows = layout.max_rows.max(rows.max().unwrap_or(0));
        let nonzero = t.shape.iter().fold(1u64, |acc, &d| acc.saturating_mul(d.max(1)));
        if !typed::strides_fit(nonzero, t.element) {
            layout.strides_overflow = true;
        }
    }
}

/// Places data blocks one after the other in the data section, in the order they are met.
#[derive(Default)]
struct DataCursor {
    /// The data section's length so far.
    len: usize,
}

impl DataCursor {
    /// Places the data block of `item`, if it has one: returns its offset in the data
    /// section (which starts 8-aligned, so alignments within it are those in the document).
    fn place(&mut self, b: &Builder, item: &Item) -> Option<usize> {
        let at = self.len;
        self.len = match *item {
            Item::Str { start, len } | Item::Bytes { start, len } | Item::BigNum { start, len } => at + b.block(start, len).len(),
            Item::Typed(t) => {
                let t = &b.typed[t];
                let header = typed::header_len(t.shape.iter().copied());
                let data = align(at + header, t.element.size());
                let count = t.data.len() / t.element.size();
                let mask = if t.mask.is_some() { count.div_ceil(8) } else { 0 };
                data + t.data.len() + mask
            }
            _ => return None,
        };
        Some(at)
    }
}

/// Slot width a scalar needs (spec §7).
fn scalar_need(item: &Item) -> usize {
    match *item {
        Item::Num(ty, bits) => match ty {
            NumTy::JsonFloat | NumTy::Exact(ElementType::F64) => 8,
            NumTy::Exact(ElementType::F32) => 4,
            NumTy::Exact(ElementType::Bool) => 1,
            NumTy::Exact(ElementType::U64) if bits > i64::MAX as u64 => 8,
            _ => signed_width(bits as i64),
        },
        Item::UInt(_) => 8,
        _ => 1,
    }
}

/// The canonical shape of a planned container for a pointer width.
fn shape(p: &Plan, pointer_width: usize) -> Shape {
    Shape::canonical(p.tag, p.len as usize, slot_width(p, pointer_width), p.key_width as usize)
}

fn slot_width(p: &Plan, pointer_width: usize) -> usize {
    if p.has_pointer {
        (p.scalar_width as usize).max(pointer_width)
    } else {
        p.scalar_width as usize
    }
}

/// Gives every container its offset for a pointer width; returns the structure's end.
fn place_containers(layout: &mut Layout, start: usize, pointer_width: usize) -> usize {
    let mut pos = start;
    for (p, offset) in layout.plans.iter().zip(&mut layout.container_offsets) {
        *offset = pos as u64;
        pos = shape(p, pointer_width).geometry(pos).end;
    }
    pos
}

/// Where the writer is in the breadth-first order: the next container child to meet
/// and the next data block's place.
struct Walk {
    next_plan: usize,
    data: DataCursor,
    data_start: u64,
}

impl Walk {
    fn new(data_start: usize) -> Walk {
        Walk { next_plan: 1, data: DataCursor::default(), data_start: data_start as u64 }
    }

    /// The (tag, payload) of `item`, met next, as its parent's slot holds it.
    fn slot(&mut self, b: &Builder, layout: &Layout, item: &Item) -> (u8, u64) {
        if is_container(item) {
            let offset = layout.container_offsets[self.next_plan];
            self.next_plan += 1;
            return (container_tag(item), offset);
        }
        match self.data.place(b, item) {
            Some(at) => (data_tag(item), self.data_start + at as u64),
            None => scalar_slot(item),
        }
    }
}

fn container_tag(item: &Item) -> u8 {
    match item {
        Item::Array { .. } => tag::ARRAY,
        Item::Object { .. } => tag::OBJECT,
        _ => tag::INTMAP,
    }
}

fn data_tag(item: &Item) -> u8 {
    match item {
        Item::Str { .. } => tag::STRING,
        Item::Bytes { .. } => tag::BYTES,
        Item::BigNum { .. } => tag::BIGNUM,
        _ => tag::TYPED,
    }
}

/// The (tag, payload) of a scalar, held in its slot.
fn scalar_slot(item: &Item) -> (u8, u64) {
    match *item {
        Item::Null => (tag::NULL, 0),
        Item::Bool(v) => (if v { tag::TRUE } else { tag::FALSE }, 0),
        Item::Num(ty, bits) => match ty {
            NumTy::JsonFloat | NumTy::Exact(ElementType::F64) => (tag::F64, bits),
            NumTy::Exact(ElementType::F32) => (tag::F32, bits),
            NumTy::Exact(ElementType::Bool) => (if bits != 0 { tag::TRUE } else { tag::FALSE }, 0),
            NumTy::Exact(ElementType::U64) if bits > i64::MAX as u64 => (tag::UINT, bits),
            _ => (tag::INT, bits),
        },
        Item::UInt(v) => (tag::UINT, v),
        _ => unreachable!("not a scalar"),
    }
}

fn write_container(b: &Builder, layout: &Layout, plan: usize, pointer_width: usize, walk: &mut Walk, sink: &mut Sink<'_>) {
    let p = &layout.plans[plan];
    debug_assert_eq!(sink.base + sink.out.len() as u64, layout.container_offsets[plan]);
    // `out` may start anywhere in the document, but at an offset that is a multiple of 8.
    debug_assert_eq!(sink.base % 8, 0);
    let out = &mut sink.out;
    let shape = shape(p, pointer_width);
    let g = shape.append_to(out);
    let children = first_child(&b.items[p.item])..first_child(&b.items[p.item]) + p.len as usize;
    for (i, c) in children.clone().enumerate() {
        let key = match p.tag {
            tag::OBJECT => layout.key_rank[b.object_key(c)] as u64,
            tag::INTMAP => b.int_key(c),
            _ => 0,
        };
        let (t, payload) = walk.slot(b, layout, &b.items[c]);
        g.write_child(out, i, t, key, payload);
    }
    if g.has_index() {
        let hashes = children.map(|c| if p.tag == tag::OBJECT { hash::key_hash(b.dict[b.object_key(c)].as_bytes()) } else { b.int_key(c) });
        hash::fill(&mut out[g.index_at..g.end], g.index_entry as usize, hashes);
    }
}

/// Writes the data block of `item`, which starts at document offset `pos`; returns
/// where the next block starts.
fn write_data_block(b: &Builder, item: &Item, pos: u64, sink: &mut Sink<'_>) -> Result<u64> {
    match *item {
        Item::Str { start, len } | Item::Bytes { start, len } | Item::BigNum { start, len } => {
            let block = b.block(start, len);
            sink.put(block)?;
            Ok(pos + block.len() as u64)
        }
        Item::Typed(t) => {
            let t = &b.typed[t];
            // The header is laid out in a scratch buffer that starts at the same offset
            // modulo 8 as the block, so the element alignment comes out as in the document.
            let skew = (pos % 8) as usize;
            // On the stack: a header is at most 2 + 32 ten-byte varints, plus skew and
            // padding (there is one per typed array, and most are small).
            let mut head = [0u8; 8 + 2 + 10 * MAX_RANK + 8];
            let head = &mut head[..skew + typed::header_len(t.shape.iter().copied()) + t.element.size()];
            let data_at = typed::write_header(head, skew, t.element, &t.shape, t.mask.is_some());
            sink.put(&head[skew..data_at])?;
            sink.put(&b.tdata[t.data.clone()])?;
            let mut written = (data_at - skew + t.data.len()) as u64;
            if let Some(mask) = &t.mask {
                let mut packed = Vec::with_capacity(mask.len().div_ceil(8));
                typed::pack_mask(b.tmask[mask.clone()].iter().map(|&m| m != 0), &mut packed);
                sink.put(&packed)?;
                written += packed.len() as u64;
            }
            Ok(pos + written)
        }
        _ => unreachable!("not a data block"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let expected = encode(&built(&json)).unwrap();
        let mut b = Builder::new(crate::DEFAULT_MAX_DEPTH);
        b.spill_blocks_over(0);
        crate::json::read_into_builder(json.as_bytes(), &mut b).unwrap();
        let mut out = Vec::new();
        write_to(&b.finish().unwrap(), &mut out).unwrap();
        assert!(out == expected);
    }

    #[test]
    fn small_buffers_write_the_bytes_of_encode() {
        let mut json = String::from(r#"{"text": "ab", "ints": [1, 2, 300], "mixed": [1, 2.5], "m": [[1, 2], [3, 4.5]], "objs": ["#);
        for i in 0..300 {
            json += &format!(r#"{{"k{}": {i}, "s": "{}", "f": {}.5, "u": 18446744073709551615, "big": 123456789012345678901234567890}},"#, i % 40, "x".repeat(i % 17), i);
        }
        json += r#"[]], "last": [true, null, "end"]}"#;
        let b = built(&json);
        let expected = encode(&b).unwrap();
        for buffer in [1, 3, 8, 64, 1000, 1 << 20] {
            let mut out = Vec::new();
            let len = write_buffered(&b, &mut out, buffer).unwrap();
            assert_eq!(len as usize, out.len());
            assert!(out == expected, "buffer of {buffer} bytes");
        }
    }
}

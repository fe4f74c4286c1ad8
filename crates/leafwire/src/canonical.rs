//! Canonical layout (spec §7): turns a finished `Builder` into document bytes.
//!
//! Pass 1 walks the containers breadth-first, records each one's widths, and assigns the
//! data blocks their places in the order their slots are met. The pointer width is then
//! the smallest that addresses the whole document, container offsets follow from it, and
//! pass 2 writes every byte once.

use crate::builder::{Builder, Item, NumTy};
use crate::error::{Category, Error, Result};
use crate::format::container::Shape;
use crate::format::header::{self, RootRecord};
use crate::format::numbers::{signed_width, unsigned_width};
use crate::format::{align, dictionary, hash, tag, typed, varint_len, write_varint, ElementType, HEADER_LEN};

/// What pass 1 learns about one container.
struct Plan {
    item: usize,
    tag: u8,
    first: usize,
    len: usize,
    /// Slot width needed by the scalar children.
    scalar_width: usize,
    has_pointer: bool,
    key_width: usize,
}

struct Layout {
    plans: Vec<Plan>,
    /// Data items in the order their blocks are written.
    data_order: Vec<usize>,
    /// Per item: data offset relative to the data section (data items) or absolute
    /// offset (containers, filled once the pointer width is known).
    offsets: Vec<u64>,
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
    let mut layout = plan(b)?;
    let dict_end = HEADER_LEN + layout.dict_len;
    let mut pointer_width = 2;
    let (structure_end, data_start) = loop {
        let structure_end = place_containers(b, &mut layout, dict_end, pointer_width);
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
    for &i in &layout.data_order {
        layout.offsets[i] += data_start as u64;
    }
    let mut out = Vec::with_capacity(data_start + layout.data_len);
    out.resize(HEADER_LEN + layout.dict_len, 0);
    let keys = layout.sorted_keys.iter().map(|&id| b.dict[id as usize].as_bytes());
    dictionary::write_canonical(&mut out[HEADER_LEN..], keys.clone(), keys.map(hash::key_hash));
    for p in &layout.plans {
        write_container(b, &layout, p, pointer_width, &mut out);
    }
    debug_assert_eq!(out.len(), structure_end);
    out.resize(data_start, 0);
    for &i in &layout.data_order {
        write_data_block(b, &b.items[i], &mut out);
    }
    let (root_tag, root) = slot_of(b, &layout, b.items.len() - 1);
    let dictionary = if b.dict.is_empty() { 0 } else { HEADER_LEN as u64 };
    let record = RootRecord { generation: 1, root, dictionary, end: out.len() as u64, garbage: 0, root_tag, journal: false };
    header::write_header(&mut out, &record);
    Ok(out)
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

    let mut layout = Layout { plans: Vec::new(), data_order: Vec::new(), offsets: vec![0; n], data_len: 0, key_rank, sorted_keys, dict_len, max_rows: 0, strides_overflow: false };
    let root = n - 1;
    let mut queue = std::collections::VecDeque::new();
    if is_container(&b.items[root]) {
        queue.push_back(root);
    } else {
        add_data_block(b, &mut layout, root);
    }
    while let Some(i) = queue.pop_front() {
        let (tag, first, len) = match b.items[i] {
            Item::Array { first, len } => (tag::ARRAY, first, len),
            Item::Object { first, len } => (tag::OBJECT, first, len),
            Item::IntMap { first, len } => (tag::INTMAP, first, len),
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
            } else if add_data_block(b, &mut layout, c) {
                has_pointer = true;
            } else {
                scalar_width = scalar_width.max(scalar_need(item));
            }
            if tag == tag::OBJECT {
                key_width = key_width.max(unsigned_width(layout.key_rank[b.keys[c] as usize] as u64));
            } else if tag == tag::INTMAP {
                key_width = key_width.max(signed_width(b.keys[c] as i64));
            }
        }
        layout.plans.push(Plan { item: i, tag, first, len, scalar_width, has_pointer, key_width });
    }
    Ok(layout)
}

fn is_container(item: &Item) -> bool {
    matches!(item, Item::Array { .. } | Item::Object { .. } | Item::IntMap { .. })
}

/// Assigns a data block its place if the item has one; returns whether it did.
fn add_data_block(b: &Builder, layout: &mut Layout, i: usize) -> bool {
    let size = match b.items[i] {
        Item::Str { len, .. } | Item::Bytes { len, .. } | Item::BigNum { len, .. } => varint_len(len as u64) + len,
        Item::Typed(t) => {
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
            let header = typed::header_len(t.shape.iter().copied());
            let start = align(layout.data_len + header, t.element.size());
            let count = t.data.len() / t.element.size();
            let mask = if t.mask.is_some() { count.div_ceil(8) } else { 0 };
            layout.offsets[i] = layout.data_len as u64;
            layout.data_order.push(i);
            layout.data_len = start + t.data.len() + mask;
            return true;
        }
        _ => return false,
    };
    layout.offsets[i] = layout.data_len as u64;
    layout.data_order.push(i);
    layout.data_len += size;
    true
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
    Shape::canonical(p.tag, p.len, slot_width(p, pointer_width), p.key_width)
}

fn slot_width(p: &Plan, pointer_width: usize) -> usize {
    if p.has_pointer {
        p.scalar_width.max(pointer_width)
    } else {
        p.scalar_width
    }
}

/// Gives every container its offset for a pointer width; returns the structure's end.
fn place_containers(_b: &Builder, layout: &mut Layout, start: usize, pointer_width: usize) -> usize {
    let mut pos = start;
    for p in &layout.plans {
        layout.offsets[p.item] = pos as u64;
        pos = shape(p, pointer_width).geometry(pos).end;
    }
    pos
}

/// The (tag, payload) of item `i` as its parent's slot holds it.
fn slot_of(b: &Builder, layout: &Layout, i: usize) -> (u8, u64) {
    match b.items[i] {
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
        Item::Str { .. } => (tag::STRING, layout.offsets[i]),
        Item::Bytes { .. } => (tag::BYTES, layout.offsets[i]),
        Item::BigNum { .. } => (tag::BIGNUM, layout.offsets[i]),
        Item::Array { .. } => (tag::ARRAY, layout.offsets[i]),
        Item::Object { .. } => (tag::OBJECT, layout.offsets[i]),
        Item::IntMap { .. } => (tag::INTMAP, layout.offsets[i]),
        Item::Typed(_) => (tag::TYPED, layout.offsets[i]),
    }
}

fn write_container(b: &Builder, layout: &Layout, p: &Plan, pointer_width: usize, out: &mut Vec<u8>) {
    debug_assert_eq!(out.len() as u64, layout.offsets[p.item]);
    let shape = shape(p, pointer_width);
    let g = shape.append_to(out);
    let children = p.first..p.first + p.len;
    for (i, c) in children.clone().enumerate() {
        let key = match p.tag {
            tag::OBJECT => layout.key_rank[b.keys[c] as usize] as u64,
            _ => b.keys[c],
        };
        let (t, payload) = slot_of(b, layout, c);
        g.write_child(out, i, t, key, payload);
    }
    if g.has_index() {
        let hashes = children.map(|c| if p.tag == tag::OBJECT { hash::key_hash(b.dict[b.keys[c] as usize].as_bytes()) } else { b.keys[c] });
        hash::fill(&mut out[g.index_at..g.end], g.index_entry as usize, hashes);
    }
}

fn write_data_block(b: &Builder, item: &Item, out: &mut Vec<u8>) {
    match *item {
        Item::Str { start, len } | Item::Bytes { start, len } | Item::BigNum { start, len } => {
            write_varint(out, len as u64);
            out.extend_from_slice(&b.strings[start..start + len]);
        }
        Item::Typed(t) => {
            let t = &b.typed[t];
            let pos = out.len();
            out.resize(pos + typed::header_len(t.shape.iter().copied()) + t.element.size(), 0);
            let data_at = typed::write_header(out, pos, t.element, &t.shape, t.mask.is_some());
            out.truncate(data_at);
            out.extend_from_slice(&b.tdata[t.data.clone()]);
            if let Some(mask) = &t.mask {
                typed::pack_mask(b.tmask[mask.clone()].iter().map(|&m| m != 0), out);
            }
        }
        _ => unreachable!("not a data block"),
    }
}

//! The second walk of the direct encoder: writes a planned document (spec §7) into a new
//! Python `bytes` object, level by level, each byte once.

use std::mem::MaybeUninit;

use leafwire::format::header::{self, RootRecord};
use leafwire::format::{self as c, dictionary, hash, tag};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::{utf8, Child, Node, Plan};

/// The document `plan` describes.
pub(super) fn document<'py>(py: Python<'py>, plan: &Plan<'py>) -> PyResult<Bound<'py, PyBytes>> {
    // SAFETY: a null source asks CPython for an uninitialized `bytes` of that length; the
    // new reference is owned by `bytes` (and so released if anything below panics).
    let bytes = unsafe {
        let ptr = ffi::PyBytes_FromStringAndSize(std::ptr::null(), plan.end as ffi::Py_ssize_t);
        Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked::<PyBytes>()
    };
    // SAFETY: the object is a fresh `bytes` of `plan.end` bytes that nothing else refers
    // to yet. The structure section (which has padding) is zeroed before a `&mut [u8]` is
    // made of it; the data section is only written through `MaybeUninit`, and `Data::finish`
    // checks that every byte of it was written before the object is returned.
    let (structure, data) = unsafe {
        let base = ffi::PyBytes_AS_STRING(bytes.as_ptr()).cast::<u8>().cast_mut();
        std::ptr::write_bytes(base, 0, plan.data_start);
        (
            std::slice::from_raw_parts_mut(base, plan.data_start),
            std::slice::from_raw_parts_mut(base.add(plan.data_start).cast::<MaybeUninit<u8>>(), plan.end - plan.data_start),
        )
    };
    let mut data = Data { buf: data, at: 0 };
    let root = root_payload(plan, &mut data);
    write_dictionary(plan, structure);
    let planner = &plan.planner;
    for d in 0..planner.depth {
        let next: &[Node] = if d + 1 < planner.depth { &planner.levels[d + 1] } else { &[] };
        write_level(plan, structure, &mut data, &planner.levels[d], &planner.kids[d], next);
    }
    data.finish();
    write_header(plan, root, &mut structure[..c::HEADER_LEN]);
    Ok(bytes)
}

/// The data section, filled front to back in breadth-first order of the slots. Its memory
/// starts uninitialized.
struct Data<'b> {
    buf: &'b mut [MaybeUninit<u8>],
    /// Next free position, relative to the data start.
    at: usize,
}

impl Data<'_> {
    /// Appends the block of a str or bytes object; returns its offset in the section.
    #[inline]
    fn block(&mut self, child: Child) -> usize {
        let obj = child.value as *mut ffi::PyObject;
        // SAFETY: the planner recorded this live str (its UTF-8 known to exist) or bytes
        // object; its content is valid for its length while the object lives, and no
        // Python code has run since.
        let content = unsafe {
            let (ptr, len) = if child.tag == tag::STRING {
                utf8(obj).expect("UTF-8 of a str checked by the planner")
            } else {
                (ffi::PyBytes_AS_STRING(obj).cast::<u8>() as *const u8, ffi::PyBytes_Size(obj) as usize)
            };
            std::slice::from_raw_parts(ptr, len)
        };
        let at = self.at;
        let mut varint = [0u8; 10];
        let n = c::numbers::put_varint(&mut varint, content.len() as u64);
        self.put(&varint[..n]);
        self.put(content);
        at
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let out = &mut self.buf[self.at..self.at + bytes.len()];
        // SAFETY: `out` is exactly `bytes.len()` elements (the slicing checked it);
        // `MaybeUninit<u8>` has the layout of `u8`; the source is another object's memory.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len()) };
        self.at += bytes.len();
    }

    /// Checks that the blocks filled the section (the plan summed their sizes), so that no
    /// uninitialized byte reaches Python.
    fn finish(self) {
        assert_eq!(self.at, self.buf.len(), "data section not filled as planned");
    }
}

/// The root's payload, writing its data block first if it has one (spec §7: the root's
/// block comes first).
fn root_payload(plan: &Plan<'_>, data: &mut Data<'_>) -> u64 {
    let root = plan.root;
    match root.tag {
        tag::STRING | tag::BYTES => (plan.data_start + data.block(root)) as u64,
        tag::ARRAY | tag::OBJECT | tag::INTMAP => plan.planner.levels[0][0].offset as u64,
        _ => root.value,
    }
}

fn write_header(plan: &Plan<'_>, root: u64, out: &mut [u8]) {
    let dictionary = if plan.dict_len == 0 { 0 } else { c::HEADER_LEN as u64 };
    let record = RootRecord { generation: 1, root, dictionary, end: plan.end as u64, garbage: 0, root_tag: plan.root.tag, journal: false };
    header::write_header(out, &record);
}

fn write_dictionary(plan: &Plan<'_>, buf: &mut [u8]) {
    let texts = plan.planner.keys.texts();
    if texts.is_empty() {
        return;
    }
    let keys = plan.sorted.iter().map(|&id| texts[id as usize]);
    let hashes = plan.sorted.iter().map(|&id| plan.hashes[id as usize]);
    dictionary::write_canonical(&mut buf[c::HEADER_LEN..c::HEADER_LEN + plan.dict_len], keys, hashes);
}

/// Writes the containers of one level; `kids` are their children, `next` the next level's
/// containers (which the child containers are, in order).
fn write_level(plan: &Plan<'_>, buf: &mut [u8], data: &mut Data<'_>, level: &[Node], kids: &[Child], next: &[Node]) {
    let mut first = 0;
    for node in level {
        if node.len == 0 {
            // Layout 0 (slot width 1, key width 1 or none, no index) and count 0: the
            // zeros already there.
            continue;
        }
        let children = &kids[first..first + node.len as usize];
        first += node.len as usize;
        write_container(plan, buf, data, node, children, next);
    }
}

fn write_container(plan: &Plan<'_>, buf: &mut [u8], data: &mut Data<'_>, node: &Node, children: &[Child], next: &[Node]) {
    let len = children.len();
    let shape = node.shape(plan.pointer_width);
    let (width, key_width) = (shape.width, shape.key_width);
    let g = shape.geometry(node.offset);
    shape.write_header(buf, g.pos);
    for (out, child) in buf[g.tags_at..g.tags_at + len].iter_mut().zip(children) {
        *out = child.tag;
    }
    let keys = &mut buf[g.keys_at..g.keys_at + len * key_width];
    match (node.tag, key_width) {
        (tag::ARRAY, _) => {}
        (tag::OBJECT, 1) => write_keys::<1>(keys, children.iter().map(|ch| plan.rank[ch.key as usize] as u64)),
        (tag::OBJECT, 2) => write_keys::<2>(keys, children.iter().map(|ch| plan.rank[ch.key as usize] as u64)),
        (tag::OBJECT, _) => write_keys::<4>(keys, children.iter().map(|ch| plan.rank[ch.key as usize] as u64)),
        (_, 1) => write_keys::<1>(keys, children.iter().map(|ch| ch.key)),
        (_, 2) => write_keys::<2>(keys, children.iter().map(|ch| ch.key)),
        (_, 4) => write_keys::<4>(keys, children.iter().map(|ch| ch.key)),
        (_, _) => write_keys::<8>(keys, children.iter().map(|ch| ch.key)),
    }
    let slots = &mut buf[g.slots_at..g.slots_at + len * width];
    let data_start = plan.data_start;
    match width {
        1 => write_slots::<1>(slots, children, data, data_start, next),
        2 => write_slots::<2>(slots, children, data, data_start, next),
        4 => write_slots::<4>(slots, children, data, data_start, next),
        _ => write_slots::<8>(slots, children, data, data_start, next),
    }
    if g.has_index() {
        let (index, entry) = (&mut buf[g.index_at..g.end], g.index_entry as usize);
        if node.tag == tag::OBJECT {
            hash::fill(index, entry, children.iter().map(|ch| plan.hashes[ch.key as usize]));
        } else {
            hash::fill(index, entry, children.iter().map(|ch| ch.key));
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

/// Stores each child's payload in `W` little-endian bytes, writing data blocks as they come.
#[inline]
fn write_slots<const W: usize>(out: &mut [u8], children: &[Child], data: &mut Data<'_>, data_start: usize, next: &[Node]) {
    for (out, &child) in out.chunks_exact_mut(W).zip(children) {
        let payload = if child.tag < tag::STRING {
            child.value
        } else if child.tag <= tag::BYTES {
            (data_start + data.block(child)) as u64
        } else {
            next[child.value as usize].offset as u64
        };
        out.copy_from_slice(&payload.to_le_bytes()[..W]);
    }
}

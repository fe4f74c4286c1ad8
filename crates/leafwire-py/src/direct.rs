//! The fast path of `dumps`: Python objects → canonical Leafwire bytes (spec §7) in two
//! walks over the objects, with no tree in between.
//!
//! 1. `Planner` walks the objects depth-first. Each container gets a record (child count,
//!    the widths its slots need) in a list per nesting level, and a contiguous run of child
//!    records (tag, key, payload) reserved before its children are visited; the sizes of
//!    the data blocks are summed. Concatenated, the level lists are the breadth-first order
//!    of the canonical layout (within a level, depth-first order is breadth-first order).
//!    Dict keys are interned by object address.
//! 2. With the key ranks, widths and offsets then known, `Writer` goes through the
//!    containers in that order and writes each byte of the document once, straight into
//!    the Python `bytes` object. It reads no Python object again, except to copy the
//!    content of strings and bytes.
//!
//! Only exact built-in types are handled: dict (keys all `str`, or all `int`), list,
//! tuple, str, int (up to u64), float, bool, None and bytes. Anything else — subclasses,
//! numpy, big integers, non-UTF-8 text, the depth limit — makes `dumps` return `None` and
//! the caller falls back to the general streaming path (`encode.rs`), which also owns every
//! error message. The planner runs no Python code (no `default`, no `__eq__`, no
//! allocation of tracked objects that could start the garbage collector), so the objects
//! cannot change before the writer has copied the strings.

use leafwire::RootRecord;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rustc_hash::FxHashMap;

use crate::canonical::{self as c, tag};

/// Serializes `obj` if every object in it has a fast form; `None` otherwise (nothing is
/// raised then: the general path redoes the work and reports any error).
pub fn dumps<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, max_depth: usize) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let mut planner = Planner::new(py, max_depth, SCRATCH.take());
    // SAFETY: obj is a live object; the planner only reads it through the C API.
    let Some((tag, value, _)) = (unsafe { planner.visit(obj.as_ptr(), 0) }) else {
        return Ok(None);
    };
    let plan = planner.finish();
    let root = Child { tag, key: 0, value };
    let bytes = PyBytes::new_with(py, plan.end, |buf| {
        Writer::new(&plan, buf).write(root);
        Ok(())
    });
    SCRATCH.set(plan.into_scratch());
    Ok(Some(bytes?))
}

/// The planner's largest buffers, kept between calls (per thread) so that a document does
/// not pay for growing them again; dropped when they exceed `SCRATCH_LIMIT` bytes.
#[derive(Default)]
struct Scratch {
    children: Vec<Child>,
    order: Vec<Container>,
    offsets: Vec<usize>,
}

const SCRATCH_LIMIT: usize = 16 << 20;

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// What a value needs from its parent's slot: a width for an inline scalar, or a pointer.
const POINTER: u8 = 0;

/// One value as both walks see it.
enum Class {
    Scalar { tag: u8, payload: u64, width: u8 },
    /// A string or bytes block: its tag and content length (the writer copies the content).
    Block { tag: u8, len: usize },
    Container { tag: u8, len: usize },
}

/// Classifies `obj`, or `None` if it has no fast form.
///
/// # Safety
/// `obj` must be a live object.
#[inline]
unsafe fn classify(obj: *mut ffi::PyObject) -> Option<Class> {
    unsafe {
        let ty = ffi::Py_TYPE(obj);
        if ty == &raw mut ffi::PyUnicode_Type {
            let (_, len) = utf8(obj)?;
            return Some(Class::Block { tag: tag::STRING, len });
        }
        if ty == &raw mut ffi::PyLong_Type {
            return int(obj);
        }
        if ty == &raw mut ffi::PyFloat_Type {
            return Some(Class::Scalar { tag: tag::F64, payload: ffi::PyFloat_AS_DOUBLE(obj).to_bits(), width: 8 });
        }
        if ty == &raw mut ffi::PyDict_Type {
            return Some(Class::Container { tag: dict_tag(obj)?, len: ffi::PyDict_Size(obj) as usize });
        }
        if ty == &raw mut ffi::PyList_Type {
            return Some(Class::Container { tag: tag::ARRAY, len: ffi::PyList_GET_SIZE(obj) as usize });
        }
        if ty == &raw mut ffi::PyBool_Type {
            let t = if obj == ffi::Py_True() { tag::TRUE } else { tag::FALSE };
            return Some(Class::Scalar { tag: t, payload: 0, width: 1 });
        }
        if obj == ffi::Py_None() {
            return Some(Class::Scalar { tag: tag::NULL, payload: 0, width: 1 });
        }
        if ty == &raw mut ffi::PyTuple_Type {
            return Some(Class::Container { tag: tag::ARRAY, len: ffi::PyTuple_GET_SIZE(obj) as usize });
        }
        if ty == &raw mut ffi::PyBytes_Type {
            return Some(Class::Block { tag: tag::BYTES, len: ffi::PyBytes_Size(obj) as usize });
        }
        None
    }
}

/// The UTF-8 of an exact `str` (CPython caches it in the object; for ASCII it is the
/// object's own data), or `None` for text with lone surrogates.
///
/// # Safety
/// `obj` must be a live `str`.
#[inline]
unsafe fn utf8(obj: *mut ffi::PyObject) -> Option<(*const u8, usize)> {
    let mut len: ffi::Py_ssize_t = 0;
    let ptr = unsafe { ffi::PyUnicode_AsUTF8AndSize(obj, &mut len) };
    if ptr.is_null() {
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    Some((ptr.cast(), len as usize))
}

/// An exact int as an `int` or `uint` scalar (spec §7: i64 is `int`, above is `uint`);
/// `None` beyond u64 (a bignum, left to the general path).
///
/// # Safety
/// `obj` must be a live exact int.
#[inline]
unsafe fn int(obj: *mut ffi::PyObject) -> Option<Class> {
    unsafe {
        let mut overflow = 0;
        let v = ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow);
        if overflow == 0 {
            return Some(Class::Scalar { tag: tag::INT, payload: v as u64, width: c::signed_width(v) });
        }
        if overflow > 0 {
            let u = ffi::PyLong_AsUnsignedLongLong(obj);
            if u != u64::MAX || ffi::PyErr_Occurred().is_null() {
                return Some(Class::Scalar { tag: tag::UINT, payload: u, width: 8 });
            }
            ffi::PyErr_Clear();
        }
        None
    }
}

/// An exact dict's container tag: an object when its first key is an exact `str` (or it is
/// empty), an intmap when it is an exact int. Every other key is checked during the walk.
///
/// # Safety
/// `obj` must be a live exact dict.
unsafe fn dict_tag(obj: *mut ffi::PyObject) -> Option<u8> {
    unsafe {
        let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        if ffi::PyDict_Next(obj, &mut pos, &mut key, &mut value) == 0 {
            return Some(tag::OBJECT);
        }
        match ffi::Py_TYPE(key) {
            t if t == &raw mut ffi::PyUnicode_Type => Some(tag::OBJECT),
            t if t == &raw mut ffi::PyLong_Type => Some(tag::INTMAP),
            _ => None,
        }
    }
}

/// An intmap key (an exact int in i64), or `None`.
///
/// # Safety
/// `key` must be a live object.
#[inline]
unsafe fn int_key(key: *mut ffi::PyObject) -> Option<i64> {
    unsafe {
        if ffi::Py_TYPE(key) != &raw mut ffi::PyLong_Type {
            return None;
        }
        let mut overflow = 0;
        let v = ffi::PyLong_AsLongLongAndOverflow(key, &mut overflow);
        (overflow == 0).then_some(v)
    }
}

/// A container as the planner records it.
#[derive(Clone, Copy)]
struct Container {
    tag: u8,
    len: usize,
    /// Where its children's records start in `Planner::children`.
    first: usize,
    /// The widest inline scalar among the children (1 when none).
    scalar_width: u8,
    has_pointer: bool,
    /// Objects: set once the key ranks are known; intmaps: the widest key; arrays: 0.
    key_width: u8,
}

/// A child as the planner records it.
#[derive(Clone, Copy, Default)]
struct Child {
    tag: u8,
    /// Provisional key id (objects) or the key (intmaps); unused in arrays.
    key: u64,
    /// Scalars: the slot payload; strings and bytes: the object (its content is copied by
    /// the writer); containers: unused (they follow in breadth-first order).
    value: u64,
}

impl Container {
    fn slot_width(&self, pointer_width: usize) -> usize {
        let w = self.scalar_width as usize;
        if self.has_pointer { w.max(pointer_width) } else { w }
    }

    fn indexed(&self) -> bool {
        self.tag != tag::ARRAY && self.len > c::INDEX_THRESHOLD
    }
}

struct Planner<'py> {
    py: Python<'py>,
    max_depth: usize,
    /// Containers per nesting level, each level in depth-first order.
    levels: Vec<Vec<Container>>,
    /// Children of every container, each container's children in one run.
    children: Vec<Child>,
    /// Reused buffers for `Plan::order` and `Plan::offsets`.
    order: Vec<Container>,
    offsets: Vec<usize>,
    /// Key texts by id (first-seen order), borrowed from the key objects in `keep`.
    dict: Vec<&'static [u8]>,
    by_text: FxHashMap<&'static [u8], u64>,
    /// Key ids by key object address: records of one shape share their key objects, and a
    /// pointer lookup is cheaper than hashing the text.
    by_address: FxHashMap<usize, u64>,
    /// A reference to each key object interned, so that its address is not reused and its
    /// UTF-8 stays valid until the document is written.
    keep: Vec<Bound<'py, PyAny>>,
    data_len: usize,
}

/// Everything the writer needs.
struct Plan<'py> {
    planner: Planner<'py>,
    /// Containers in breadth-first order, with their offsets.
    order: Vec<Container>,
    offsets: Vec<usize>,
    pointer_width: usize,
    /// Provisional key id → rank in byte order (the canonical id), and the ids by rank.
    rank: Vec<u32>,
    sorted: Vec<u32>,
    /// The key hash (spec §4.2) of each provisional key id, for the dictionary and indexes.
    hashes: Vec<u64>,
    dict_len: usize,
    data_start: usize,
    end: usize,
}

impl Plan<'_> {
    fn into_scratch(self) -> Scratch {
        let Plan { mut planner, order, offsets, .. } = self;
        let scratch = Scratch { children: std::mem::take(&mut planner.children), order, offsets };
        let bytes = scratch.children.capacity() * size_of::<Child>()
            + scratch.order.capacity() * size_of::<Container>()
            + scratch.offsets.capacity() * size_of::<usize>();
        if bytes > SCRATCH_LIMIT { Scratch::default() } else { scratch }
    }
}

impl<'py> Planner<'py> {
    fn new(py: Python<'py>, max_depth: usize, scratch: Scratch) -> Self {
        let Scratch { mut children, mut order, mut offsets } = scratch;
        children.clear();
        order.clear();
        offsets.clear();
        Planner {
            py,
            max_depth,
            levels: Vec::new(),
            children,
            order,
            offsets,
            dict: Vec::new(),
            by_text: FxHashMap::default(),
            by_address: FxHashMap::default(),
            keep: Vec::new(),
            data_len: 0,
        }
    }

    /// Records `obj` (the root at depth 0, or a child of a container at depth `depth` - 1):
    /// returns its slot as the writer needs it, and the width it needs (or `POINTER`).
    ///
    /// # Safety
    /// `obj` must be a live object.
    #[inline]
    unsafe fn visit(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Option<(u8, u64, u8)> {
        match unsafe { classify(obj)? } {
            Class::Scalar { tag, payload, width } => Some((tag, payload, width)),
            Class::Block { tag, len, .. } => {
                self.data_len += c::varint_len(len as u64) + len;
                Some((tag, obj as u64, POINTER))
            }
            Class::Container { tag, len } => {
                unsafe { self.container(tag, obj, len, depth)? };
                Some((tag, 0, POINTER))
            }
        }
    }

    /// # Safety
    /// `obj` must be a live container of the kind `tag` says, with `len` children.
    unsafe fn container(&mut self, tag: u8, obj: *mut ffi::PyObject, len: usize, depth: usize) -> Option<()> {
        if depth >= self.max_depth || len > u32::MAX as usize {
            return None;
        }
        if self.levels.len() == depth {
            self.levels.push(Vec::new());
        }
        let at = self.levels[depth].len();
        // The children's own children follow this run, so it is reserved up front.
        let first = self.children.len();
        self.children.resize(first + len, Child::default());
        let mut record = Container { tag, len, first, scalar_width: 1, has_pointer: false, key_width: 0 };
        self.levels[depth].push(record);
        unsafe {
            match tag {
                tag::ARRAY if ffi::Py_TYPE(obj) == &raw mut ffi::PyList_Type => {
                    for i in 0..len {
                        self.child(ffi::PyList_GET_ITEM(obj, i as ffi::Py_ssize_t), 0, first + i, depth, &mut record)?;
                    }
                }
                tag::ARRAY => {
                    for i in 0..len {
                        self.child(ffi::PyTuple_GET_ITEM(obj, i as ffi::Py_ssize_t), 0, first + i, depth, &mut record)?;
                    }
                }
                _ => {
                    record.key_width = 1;
                    let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
                    let mut j = first;
                    while ffi::PyDict_Next(obj, &mut pos, &mut key, &mut value) != 0 {
                        let key = if tag == tag::OBJECT {
                            self.key_id(key)?
                        } else {
                            let k = int_key(key)?;
                            record.key_width = record.key_width.max(c::signed_width(k));
                            k as u64
                        };
                        self.child(value, key, j, depth, &mut record)?;
                        j += 1;
                    }
                }
            }
        }
        self.levels[depth][at] = record;
        Some(())
    }

    /// Visits the child stored at `children[at]` of the container `record` (at `depth`),
    /// noting what its slot needs.
    ///
    /// # Safety
    /// `value` must be a live object.
    #[inline]
    unsafe fn child(&mut self, value: *mut ffi::PyObject, key: u64, at: usize, depth: usize, record: &mut Container) -> Option<()> {
        let (tag, payload, need) = unsafe { self.visit(value, depth + 1)? };
        match need {
            POINTER => record.has_pointer = true,
            w => record.scalar_width = record.scalar_width.max(w),
        }
        self.children[at] = Child { tag, key, value: payload };
        Some(())
    }

    /// The provisional id of an object key: `None` unless it is an exact `str` of UTF-8.
    ///
    /// # Safety
    /// `key` must be a live object.
    #[inline]
    unsafe fn key_id(&mut self, key: *mut ffi::PyObject) -> Option<u64> {
        if let Some(&id) = self.by_address.get(&(key as usize)) {
            return Some(id);
        }
        unsafe {
            if ffi::Py_TYPE(key) != &raw mut ffi::PyUnicode_Type {
                return None;
            }
            let (ptr, len) = utf8(key)?;
            // SAFETY: the text lives in the key object, which `keep` holds until the plan is
            // dropped (after the document is written); it is never handed out.
            let text: &'static [u8] = std::slice::from_raw_parts(ptr, len);
            self.keep.push(Bound::from_borrowed_ptr(self.py, key));
            let next = self.dict.len() as u64;
            let id = *self.by_text.entry(text).or_insert(next);
            if id == next {
                self.dict.push(text);
            }
            self.by_address.insert(key as usize, id);
            Some(id)
        }
    }

    /// Ranks the keys, sizes the dictionary and places every container (spec §7).
    fn finish(mut self) -> Plan<'py> {
        let mut sorted: Vec<u32> = (0..self.dict.len() as u32).collect();
        sorted.sort_unstable_by(|&a, &b| self.dict[a as usize].cmp(self.dict[b as usize]));
        let mut rank = vec![0u32; self.dict.len()];
        for (r, &id) in sorted.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        let dict_len = if self.dict.is_empty() {
            0
        } else {
            let bytes: usize = self.dict.iter().map(|k| k.len()).sum();
            c::align(16 + 4 * (self.dict.len() + 1) + bytes, 4) + 4 * c::dictionary_table_size(self.dict.len())
        };
        let mut order = std::mem::take(&mut self.order);
        for level in self.levels.drain(..) {
            order.extend_from_slice(&level);
        }
        // Ranks below 256 fit one byte, so only dictionaries larger than that need a look
        // at each object's keys.
        if self.dict.len() > 256 {
            for node in order.iter_mut().filter(|n| n.tag == tag::OBJECT) {
                let children = &self.children[node.first..node.first + node.len];
                node.key_width = children.iter().map(|ch| c::unsigned_width(rank[ch.key as usize] as u64)).max().unwrap_or(1).min(4);
            }
        }
        let dict_end = c::HEADER_LEN + dict_len;
        let mut offsets = std::mem::take(&mut self.offsets);
        offsets.resize(order.len(), 0);
        let mut pointer_width = 2;
        let (data_start, end) = loop {
            let mut pos = dict_end;
            for (node, offset) in order.iter().zip(offsets.iter_mut()) {
                *offset = pos;
                pos = c::container_geometry(pos, node.len, node.slot_width(pointer_width), node.key_width as usize, node.indexed()).end;
            }
            let data_start = c::align(pos, 8);
            let end = data_start + self.data_len;
            if pointer_width == 8 || (end as u64) < 1u64 << (8 * pointer_width) {
                break (data_start, end);
            }
            pointer_width *= 2;
        };
        let hashes = self.dict.iter().map(|k| c::key_hash(k)).collect();
        Plan { planner: self, order, offsets, pointer_width, rank, sorted, hashes, dict_len, data_start, end }
    }
}

/// Stores the low `width` bytes of `v` at `out[at..]`, little-endian: fixed-size stores
/// rather than a `memcpy` call per slot.
#[inline(always)]
fn put_uint(out: &mut [u8], at: usize, width: usize, v: u64) {
    match width {
        1 => out[at] = v as u8,
        2 => out[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        4 => out[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        _ => out[at..at + 8].copy_from_slice(&v.to_le_bytes()),
    }
}

/// Writes a planned document into a zeroed buffer of exactly `plan.end` bytes.
struct Writer<'p, 'py, 'b> {
    plan: &'p Plan<'py>,
    buf: &'b mut [u8],
    /// Index in `plan.order` of the next container met as a child.
    next_container: usize,
    /// Where the next data block goes.
    data: usize,
}

impl<'p, 'py, 'b> Writer<'p, 'py, 'b> {
    fn new(plan: &'p Plan<'py>, buf: &'b mut [u8]) -> Self {
        Writer { plan, buf, next_container: 0, data: plan.data_start }
    }

    fn write(mut self, root: Child) {
        let root_payload = self.payload(root);
        self.write_dictionary();
        for i in 0..self.plan.order.len() {
            self.write_container(i);
        }
        debug_assert_eq!(self.data, self.plan.end);
        debug_assert_eq!(self.next_container, self.plan.order.len());
        let buf = &mut *self.buf;
        buf[..8].copy_from_slice(b"LEAFWIRE");
        buf[8] = 1; // major version
        buf[9] = 0; // minor version
        let dictionary = if self.plan.dict_len == 0 { 0 } else { c::HEADER_LEN as u64 };
        let record = RootRecord { generation: 1, root: root_payload, dictionary, end: self.plan.end as u64, garbage: 0, root_tag: root.tag };
        record.write(&mut buf[16..64]);
    }

    /// The slot payload of a child, writing its data block if it has one.
    #[inline]
    fn payload(&mut self, child: Child) -> u64 {
        match child.tag {
            tag::STRING | tag::BYTES => {
                let obj = child.value as *mut ffi::PyObject;
                // SAFETY: the planner recorded this live str (UTF-8 known to exist) or bytes
                // object; its content is valid for its length while the object lives, and
                // no Python code has run since.
                let content = unsafe {
                    let (ptr, len) = if child.tag == tag::STRING {
                        utf8(obj).expect("UTF-8 of a str checked by the planner")
                    } else {
                        (ffi::PyBytes_AS_STRING(obj).cast::<u8>() as *const u8, ffi::PyBytes_Size(obj) as usize)
                    };
                    std::slice::from_raw_parts(ptr, len)
                };
                let at = self.data;
                let n = c::put_varint(&mut self.buf[at..], content.len() as u64);
                self.buf[at + n..at + n + content.len()].copy_from_slice(content);
                self.data = at + n + content.len();
                at as u64
            }
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                let offset = self.plan.offsets[self.next_container];
                self.next_container += 1;
                offset as u64
            }
            _ => child.value,
        }
    }

    fn write_dictionary(&mut self) {
        let plan = self.plan;
        let dict = &plan.planner.dict;
        if dict.is_empty() {
            return;
        }
        let count = dict.len() as u32;
        let total: usize = dict.iter().map(|k| k.len()).sum();
        let table_size = c::dictionary_table_size(dict.len());
        let mut at = c::HEADER_LEN;
        for field in [count, count, total as u32, table_size as u32] {
            put_uint(self.buf, at, 4, field as u64);
            at += 4;
        }
        let mut offset = 0u32;
        for &id in &plan.sorted {
            put_uint(self.buf, at, 4, offset as u64);
            at += 4;
            offset += dict[id as usize].len() as u32;
        }
        put_uint(self.buf, at, 4, offset as u64);
        at += 4;
        for &id in &plan.sorted {
            let key = dict[id as usize];
            self.buf[at..at + key.len()].copy_from_slice(key);
            at += key.len();
        }
        at = c::HEADER_LEN + c::align(at - c::HEADER_LEN, 4);
        for entry in c::hash_table(plan.sorted.iter().map(|&id| plan.hashes[id as usize]), table_size) {
            put_uint(self.buf, at, 4, entry as u64);
            at += 4;
        }
        debug_assert_eq!(at, c::HEADER_LEN + plan.dict_len);
    }

    fn write_container(&mut self, i: usize) {
        let plan = self.plan;
        let node = plan.order[i];
        let pos = plan.offsets[i];
        let width = node.slot_width(plan.pointer_width);
        let key_width = node.key_width as usize;
        let g = c::container_geometry(pos, node.len, width, key_width, node.indexed());
        let mut layout = c::log2_width(width);
        if key_width > 0 {
            layout |= c::log2_width(key_width) << c::KEY_WIDTH_SHIFT;
        }
        if node.indexed() {
            layout |= c::HAS_INDEX;
        }
        self.buf[pos] = layout;
        c::put_varint(&mut self.buf[pos + 1..], node.len as u64);
        let children = &plan.planner.children[node.first..node.first + node.len];
        for (j, &child) in children.iter().enumerate() {
            let payload = self.payload(child);
            self.buf[g.tags + j] = child.tag;
            put_uint(self.buf, g.slots + j * width, width, payload);
            if key_width > 0 {
                let key = if node.tag == tag::OBJECT { plan.rank[child.key as usize] as u64 } else { child.key };
                put_uint(self.buf, g.keys + j * key_width, key_width, key);
            }
        }
        if node.indexed() {
            let (table, entry) = c::index_geometry(node.len);
            let slots = if node.tag == tag::OBJECT {
                c::hash_table(children.iter().map(|ch| plan.hashes[ch.key as usize]), table)
            } else {
                c::hash_table(children.iter().map(|ch| ch.key), table)
            };
            for (k, s) in slots.into_iter().enumerate() {
                put_uint(self.buf, g.index + k * entry, entry, s as u64);
            }
        }
    }
}

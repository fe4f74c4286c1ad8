//! The fast path of `dumps`: Python objects → canonical Leafwire bytes (spec §7) in two
//! walks, with no tree in between.
//!
//! 1. `Planner` walks the objects depth-first. A container at nesting level d gets a record
//!    (`Node`: child count, the widths its slots need) appended to `levels[d]`, and its
//!    children's records (`Child`: tag, key, payload) appended to `kids[d]`. A child
//!    container's own children go to `kids[d + 1]`, so each container's children stay one
//!    run, and each level list in depth-first order is already the breadth-first order of
//!    the canonical layout. The sizes of the data blocks are summed.
//! 2. With the key ranks, widths and offsets then known, the writer (`dumps_fast/write.rs`) goes
//!    through the levels and writes each byte of the document once, straight into the
//!    Python `bytes` object. It reads no Python object again, except to copy the content of
//!    strings and bytes.
//!
//! Only exact built-in types are handled: dict (keys all `str`, or all `int`), list,
//! tuple, str, int (up to u64), float, bool, None and bytes. Anything else — subclasses,
//! numpy, big integers, non-UTF-8 text, the depth limit — makes `dumps` return `None` and
//! the caller falls back to the general streaming path (`dumps_general.rs`), which also owns every
//! error message. (A cycle ends at the depth limit too; `dumps_general.rs` then names it, so
//! nothing here looks for cycles.) The planner runs no Python code (no `default`, no `__eq__`, no
//! allocation of tracked objects that could start the garbage collector), so the objects
//! cannot change before the writer has copied the strings.

mod keys;
mod write;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use leafwire::format::container::Shape;
use leafwire::format::{self as c, dictionary, hash, numbers, tag};
use keys::Keys;

/// Serializes `obj` if every object in it has a fast form; `None` otherwise (nothing is
/// raised then: the general path redoes the work and reports any error).
pub fn dumps<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, max_depth: usize) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let mut planner = Planner::new(py, max_depth, SCRATCH.take());
    // SAFETY: obj is a live object; the planner only reads it through the C API.
    let root = unsafe { planner.visit(obj.as_ptr(), 0) };
    let bytes = match root {
        Some((tag, value, _)) => {
            let plan = planner.finish(Child { tag, key: 0, value });
            let bytes = write::document(py, &plan);
            planner = plan.planner;
            Some(bytes?)
        }
        None => None,
    };
    SCRATCH.set(planner.into_scratch());
    Ok(bytes)
}

/// The planner's buffers, kept between calls (per thread) so that a document does not pay
/// for growing them again; dropped when they exceed `SCRATCH_LIMIT` bytes.
#[derive(Default)]
struct Scratch {
    levels: Vec<Vec<Node>>,
    kids: Vec<Vec<Child>>,
    keys: Keys,
}

const SCRATCH_LIMIT: usize = 16 << 20;

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// What a value needs from its parent's slot: a width for an inline scalar, or a pointer.
const POINTER: u8 = 0;

/// A container as the planner records it.
#[derive(Clone, Copy)]
struct Node {
    /// Set by `Planner::finish`.
    offset: usize,
    len: u32,
    tag: u8,
    /// The widest inline scalar among the children (1 when none).
    scalar_width: u8,
    has_pointer: bool,
    /// Objects: set once the key ranks are known; intmaps: the widest key; arrays: 0.
    key_width: u8,
}

impl Node {
    fn slot_width(&self, pointer_width: usize) -> usize {
        let w = self.scalar_width as usize;
        if self.has_pointer { w.max(pointer_width) } else { w }
    }

    /// The container's canonical shape (spec §7) for a pointer width.
    fn shape(&self, pointer_width: usize) -> Shape {
        Shape::canonical(self.tag, self.len as usize, self.slot_width(pointer_width), self.key_width as usize)
    }
}

/// A child as the planner records it.
#[derive(Clone, Copy)]
struct Child {
    /// Scalars: the slot payload; strings and bytes: the object (its content is copied by
    /// the writer); containers: its index in the next level's list.
    value: u64,
    /// Provisional key id (objects) or the key (intmaps); 0 in arrays.
    key: u64,
    tag: u8,
}

/// Everything the writer needs.
struct Plan<'py> {
    planner: Planner<'py>,
    root: Child,
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

struct Planner<'py> {
    py: Python<'py>,
    max_depth: usize,
    /// Containers per nesting level, each level in depth-first order. Only the first
    /// `depth` lists belong to this call (the rest are empty buffers kept from earlier calls).
    levels: Vec<Vec<Node>>,
    /// Children of the containers of each level, in the same order.
    kids: Vec<Vec<Child>>,
    depth: usize,
    keys: Keys,
    /// A reference to each key object interned, so that its address is not reused and its
    /// UTF-8 stays valid until the document is written.
    keep: Vec<Bound<'py, PyAny>>,
    data_len: usize,
}

/// The UTF-8 length of an exact `str`, or `None` for text with lone surrogates.
///
/// # Safety
/// `obj` must be a live `str`.
#[inline]
unsafe fn str_len(obj: *mut ffi::PyObject) -> Option<usize> {
    unsafe { utf8(obj) }.map(|(_, len)| len)
}

/// The UTF-8 of an exact `str` (CPython caches it in the object; for ASCII it is the
/// object's own data), or `None` for text with lone surrogates.
///
/// # Safety
/// `obj` must be a live `str`.
#[inline]
unsafe fn utf8(obj: *mut ffi::PyObject) -> Option<(*const u8, usize)> {
    // A compact ASCII str (most keys and values) is its own UTF-8, right after the object
    // header: read in line, where the call below was an eighth of the time on text-heavy
    // documents (it is made twice per string, by the planner and by the writer). Python
    // 3.14 hides these fields, so there it is the call.
    #[cfg(not(any(Py_3_14, PyPy, GraalPy)))]
    unsafe {
        if ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0 {
            return Some((ffi::PyUnicode_DATA(obj).cast::<u8>().cast_const(), ffi::PyUnicode_GET_LENGTH(obj) as usize));
        }
    }
    let mut len: ffi::Py_ssize_t = 0;
    let ptr = unsafe { ffi::PyUnicode_AsUTF8AndSize(obj, &mut len) };
    if ptr.is_null() {
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    Some((ptr.cast(), len as usize))
}

/// An exact int as an `int` or `uint` slot (spec §7: i64 is `int`, above is `uint`);
/// `None` beyond u64 (a bignum, left to the general path).
///
/// # Safety
/// `obj` must be a live exact int.
#[inline]
unsafe fn int(obj: *mut ffi::PyObject) -> Option<(u8, u64, u8)> {
    unsafe {
        let mut overflow = 0;
        let v = ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow);
        if overflow == 0 {
            return Some((tag::INT, v as u64, numbers::signed_width(v) as u8));
        }
        if overflow > 0 {
            let u = ffi::PyLong_AsUnsignedLongLong(obj);
            if u != u64::MAX || ffi::PyErr_Occurred().is_null() {
                return Some((tag::UINT, u, 8));
            }
            ffi::PyErr_Clear();
        }
        None
    }
}

/// The entries of a dict, by `PyDict_Next`; the caller knows their number, so the call
/// that would report the end is never made.
struct Entries {
    dict: *mut ffi::PyObject,
    pos: ffi::Py_ssize_t,
}

impl Entries {
    /// The next (key, value), or `None` if there is none.
    ///
    /// # Safety
    /// `dict` must be a live dict.
    #[inline]
    unsafe fn next(&mut self) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        let (mut key, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
        (unsafe { ffi::PyDict_Next(self.dict, &mut self.pos, &mut key, &mut value) } != 0).then_some((key, value))
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

impl<'py> Planner<'py> {
    fn new(py: Python<'py>, max_depth: usize, scratch: Scratch) -> Self {
        let Scratch { levels, kids, keys } = scratch;
        Planner { py, max_depth, levels, kids, depth: 0, keys, keep: Vec::new(), data_len: 0 }
    }

    fn into_scratch(self) -> Scratch {
        let Planner { mut levels, mut kids, depth, mut keys, .. } = self;
        let mut bytes = keys.heap_size();
        for (level, kid) in levels.iter_mut().zip(kids.iter_mut()).take(depth) {
            level.clear();
            kid.clear();
        }
        for (level, kid) in levels.iter().zip(&kids) {
            bytes += level.capacity() * size_of::<Node>() + kid.capacity() * size_of::<Child>();
        }
        if bytes > SCRATCH_LIMIT {
            return Scratch::default();
        }
        keys.clear();
        Scratch { levels, kids, keys }
    }

    /// Records `obj` (the root at depth 0, or a child of a container at depth `depth` - 1):
    /// returns its tag, its slot value as `Child::value` holds it, and the width it needs
    /// (or `POINTER`).
    ///
    /// # Safety
    /// `obj` must be a live object.
    #[inline]
    unsafe fn visit(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Option<(u8, u64, u8)> {
        unsafe {
            let ty = ffi::Py_TYPE(obj);
            if ty == &raw mut ffi::PyLong_Type {
                return int(obj);
            }
            if ty == &raw mut ffi::PyUnicode_Type {
                let len = str_len(obj)?;
                self.data_len += c::varint_len(len as u64) + len;
                return Some((tag::STRING, obj as u64, POINTER));
            }
            if ty == &raw mut ffi::PyDict_Type {
                return self.container(tag::OBJECT, obj, ffi::PyDict_Size(obj) as usize, depth);
            }
            if ty == &raw mut ffi::PyList_Type {
                return self.container(tag::ARRAY, obj, ffi::PyList_GET_SIZE(obj) as usize, depth);
            }
            if obj == ffi::Py_None() {
                return Some((tag::NULL, 0, 1));
            }
            if ty == &raw mut ffi::PyFloat_Type {
                return Some((tag::F64, ffi::PyFloat_AS_DOUBLE(obj).to_bits(), 8));
            }
            if ty == &raw mut ffi::PyBool_Type {
                return Some((if obj == ffi::Py_True() { tag::TRUE } else { tag::FALSE }, 0, 1));
            }
            if ty == &raw mut ffi::PyTuple_Type {
                return self.container(tag::ARRAY, obj, ffi::PyTuple_GET_SIZE(obj) as usize, depth);
            }
            if ty == &raw mut ffi::PyBytes_Type {
                let len = ffi::PyBytes_Size(obj) as usize;
                self.data_len += c::varint_len(len as u64) + len;
                return Some((tag::BYTES, obj as u64, POINTER));
            }
            None
        }
    }

    /// Records a container at nesting level `depth` and, recursively, its children.
    /// Returns its slot as `visit` does.
    ///
    /// # Safety
    /// `obj` must be a live container of the kind `tag` says (a dict for `OBJECT`, which
    /// becomes `INTMAP` if its first key is an int), with `len` children.
    unsafe fn container(&mut self, tag: u8, obj: *mut ffi::PyObject, len: usize, depth: usize) -> Option<(u8, u64, u8)> {
        if depth >= self.max_depth || len > u32::MAX as usize {
            return None;
        }
        if depth >= self.levels.len() {
            self.levels.push(Vec::new());
            self.kids.push(Vec::new());
        }
        self.depth = self.depth.max(depth + 1);
        let key_width = if tag == tag::ARRAY { 0 } else { 1 };
        let mut node = Node { offset: 0, len: len as u32, tag, scalar_width: 1, has_pointer: false, key_width };
        // SAFETY: `levels` was made longer than `depth` just above.
        let level = unsafe { self.levels.get_unchecked_mut(depth) };
        let index = level.len();
        // A placeholder keeps this container's place ahead of those met inside it (an
        // empty container is final at once).
        level.push(node);
        if len == 0 {
            return Some((tag, index as u64, POINTER));
        }
        unsafe {
            if tag != tag::ARRAY {
                self.dict(obj, len, depth, &mut node)?;
            } else if ffi::Py_TYPE(obj) == &raw mut ffi::PyList_Type {
                for i in 0..len {
                    self.child(ffi::PyList_GET_ITEM(obj, i as ffi::Py_ssize_t), 0, depth, &mut node)?;
                }
            } else {
                for i in 0..len {
                    self.child(ffi::PyTuple_GET_ITEM(obj, i as ffi::Py_ssize_t), 0, depth, &mut node)?;
                }
            }
        }
        self.levels[depth][index] = node;
        Some((node.tag, index as u64, POINTER))
    }

    /// Visits the `len` (> 0) entries of a dict at `depth`: an object if its first key is a
    /// `str`, an intmap if it is an int (`node.tag` is set accordingly).
    ///
    /// # Safety
    /// `obj` must be a live exact dict of `len` entries.
    unsafe fn dict(&mut self, obj: *mut ffi::PyObject, len: usize, depth: usize, node: &mut Node) -> Option<()> {
        let mut entries = Entries { dict: obj, pos: 0 };
        // SAFETY (all calls below): the dict is live and nothing runs that could change
        // it, so it yields exactly `len` entries; running short is still checked.
        let (key, value) = unsafe { entries.next()? };
        unsafe {
            if ffi::Py_TYPE(key) == &raw mut ffi::PyUnicode_Type {
                let id = self.key_id(key)?;
                self.child(value, id as u64, depth, node)?;
                for _ in 1..len {
                    let (key, value) = entries.next()?;
                    let id = self.key_id(key)?;
                    self.child(value, id as u64, depth, node)?;
                }
            } else {
                node.tag = tag::INTMAP;
                let (mut key, mut value) = (key, value);
                for i in 0..len {
                    if i > 0 {
                        (key, value) = entries.next()?;
                    }
                    let k = int_key(key)?;
                    node.key_width = node.key_width.max(numbers::signed_width(k) as u8);
                    self.child(value, k as u64, depth, node)?;
                }
            }
        }
        Some(())
    }

    /// Visits a child of the container `node` (at `depth`), noting what its slot needs.
    ///
    /// # Safety
    /// `value` must be a live object.
    #[inline]
    unsafe fn child(&mut self, value: *mut ffi::PyObject, key: u64, depth: usize, node: &mut Node) -> Option<()> {
        // Floats are tested here, inline, before the call to `visit`: numeric lists are
        // long runs of them, where the call and `visit`'s earlier type tests (int, str,
        // dict, list, None) were half of the time per element.
        let (tag, value, need) = unsafe {
            if ffi::Py_TYPE(value) == &raw mut ffi::PyFloat_Type {
                (tag::F64, ffi::PyFloat_AS_DOUBLE(value).to_bits(), 8)
            } else {
                self.visit(value, depth + 1)?
            }
        };
        if need == POINTER {
            node.has_pointer = true;
        } else {
            node.scalar_width = node.scalar_width.max(need);
        }
        // SAFETY: `container` made `kids` longer than `depth` before visiting the children
        // of a container at `depth`, and the list of levels never shrinks during a walk.
        unsafe { self.kids.get_unchecked_mut(depth) }.push(Child { tag, key, value });
        Some(())
    }

    /// The provisional id of an object key: `None` unless it is an exact `str` of UTF-8.
    ///
    /// # Safety
    /// `key` must be a live object.
    #[inline(always)]
    unsafe fn key_id(&mut self, key: *mut ffi::PyObject) -> Option<u32> {
        match self.keys.by_address(key as usize) {
            Some(id) => Some(id),
            None => unsafe { self.new_key(key) },
        }
    }

    /// Interns a key object not seen before.
    ///
    /// # Safety
    /// `key` must be a live object.
    #[inline(never)]
    unsafe fn new_key(&mut self, key: *mut ffi::PyObject) -> Option<u32> {
        unsafe {
            if ffi::Py_TYPE(key) != &raw mut ffi::PyUnicode_Type {
                return None;
            }
            let (ptr, len) = utf8(key)?;
            // SAFETY: the text lives in the key object, which `keep` holds until the planner
            // is dropped (after the document is written); it is never handed out.
            let text: &'static [u8] = std::slice::from_raw_parts(ptr, len);
            self.keep.push(Bound::from_borrowed_ptr(self.py, key));
            Some(self.keys.insert(key as usize, text))
        }
    }

    /// Ranks the keys, sizes the dictionary and places every container (spec §7).
    fn finish(mut self, root: Child) -> Plan<'py> {
        let texts = self.keys.texts();
        let mut sorted: Vec<u32> = (0..texts.len() as u32).collect();
        sorted.sort_unstable_by(|&a, &b| texts[a as usize].cmp(texts[b as usize]));
        let mut rank = vec![0u32; texts.len()];
        for (r, &id) in sorted.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        let dict_len = dictionary::canonical_len(texts.len(), texts.iter().map(|k| k.len()).sum());
        let hashes = texts.iter().map(|k| hash::key_hash(k)).collect();
        // Ranks below 256 fit one byte, so only dictionaries larger than that need a look
        // at each object's keys.
        if rank.len() > 256 {
            self.widen_keys(&rank);
        }
        let (pointer_width, data_start, end) = self.place(c::HEADER_LEN + dict_len);
        Plan { planner: self, root, pointer_width, rank, sorted, hashes, dict_len, data_start, end }
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
                    node.key_width = (numbers::unsigned_width(widest as u64) as u8).min(4);
                }
            }
        }
    }

    /// Gives every container its offset, with the smallest pointer width that the
    /// document's length allows (spec §7): returns it, the data start and the end.
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
                    pos += 2;
                    continue;
                }
                pos = node.shape(pointer_width).geometry(pos).end;
            }
            let data_start = c::align(pos, 8);
            let end = data_start + self.data_len;
            if pointer_width == 8 || (end as u64) < 1u64 << (8 * pointer_width) {
                return (pointer_width, data_start, end);
            }
            pointer_width *= 2;
        }
    }
}

//! The fast path of `loads`: Leafwire bytes → Python objects, walking the container arrays
//! straight from the bytes (spec §§3–6) through `leafwire::raw`, with no `Node` per value.
//!
//! What makes it fast: each child is a tag byte and a slot read from two arrays whose
//! bounds were proven once per container; each dictionary key becomes an interned Python
//! string once per call, kept in a table indexed by key id (no hashing, no UTF-8 check on
//! reuse); lists are built at their final size, dicts presized; strings are made at their
//! final size and kind (`strings.rs`).
//!
//! It never reports an error. Everything it reads is bounds-checked by the core's parsers
//! (header, dictionary, container headers, data blocks), child tags and slot widths are
//! checked as the core's `Container::child` does, the nesting depth is limited as in
//! `loads_general.rs`, and the work is charged to the same `Budget`, so a document that shares
//! subtrees cannot make it run for ever. When anything is off (malformed bytes, invalid
//! UTF-8, a repeated key, the depth limit, the budget, a failed allocation), it gives up,
//! leaving no exception set, and `loads` runs the general decoder (`loads_general.rs`) from the
//! start, which reports the error with its byte offset. It accepts nothing the general
//! decoder rejects and builds the same value, so both paths give the same value or error.

use std::ptr;

use leafwire::raw::{read_uint, sign_extend, tag, RawContainer, RawDocument};
use leafwire::Node;
use pyo3::ffi;
use pyo3::prelude::*;

use crate::arrays;
use crate::key_cache::{self, KeyCache};
use crate::loads_general::{typed_list, Arrays, Budget, Decoder};
use crate::strings::new_str;

extern "C" {
    /// A new dict with room for `minused` items without resizing (an empty one for five or
    /// fewer). Declared by CPython 3.9 to 3.14 in `Include/cpython/dictobject.h` with
    /// `PyAPI_FUNC` (so exported), but left out of pyo3's bindings as private.
    fn _PyDict_NewPresized(minused: ffi::Py_ssize_t) -> *mut ffi::PyObject;
}

/// Decodes a whole document, or returns `None` (with no exception set) when the general
/// decoder must do it.
pub fn loads<'py>(py: Python<'py>, bytes: &[u8], arrays: Arrays, max_depth: usize) -> Option<Bound<'py, PyAny>> {
    let doc = RawDocument::open(bytes).ok()?;
    key_cache::with_cache(|cache| {
        let walk = Walk {
            py,
            doc,
            arrays,
            max_depth,
            budget: Budget::for_document(doc.bytes().len()),
            keys: KeyStrings(vec![ptr::null_mut(); doc.key_count()]),
            scratch: Vec::new(),
            cache,
        };
        walk_root(walk)
    })
}

/// Walks the whole document from its root.
fn walk_root<'py>(mut walk: Walk<'_, 'py, '_>) -> Option<Bound<'py, PyAny>> {
    let (py, doc) = (walk.py, walk.doc);
    let (t, payload) = doc.root();
    // The root is a value like any other (cost 1); containers charge for their children.
    if !walk.budget.charge(1) {
        return None;
    }
    let _paused = CollectorPause::new();
    // SAFETY: we hold the GIL (`py`); the walk returns a new reference or null.
    unsafe {
        let obj = walk.value(t, payload, 8, 0, Origin::Root);
        if obj.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        Some(Bound::from_owned_ptr(py, obj))
    }
}

/// Holds CPython's cyclic garbage collector off while a walk builds its tree, and turns
/// it back on (if it was on) when dropped, on every way out.
///
/// A tree being built holds no cycles and none of it is garbage, yet every 700 new lists
/// and dicts start a collection that traverses the young objects, and survivors are
/// traversed again by older generations: on canada.json that was more than half of
/// `loads`. With the collector off the walk allocates the same objects; the count of new
/// objects is kept, so the first allocation after a call that keeps its result makes one
/// collection of them (one traversal instead of several), and a result dropped before then
/// is never traversed. No Python code runs during the walk, so nothing can see the pause.
struct CollectorPause {
    resume: bool,
}

impl CollectorPause {
    fn new() -> CollectorPause {
        // SAFETY (both calls): the caller holds the GIL; the calls only flip the flag.
        #[cfg(Py_3_10)]
        return CollectorPause { resume: unsafe { ffi::PyGC_Disable() } == 1 };
        #[cfg(not(Py_3_10))]
        CollectorPause { resume: false }
    }
}

impl Drop for CollectorPause {
    fn drop(&mut self) {
        #[cfg(Py_3_10)]
        if self.resume {
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

/// The Python string of each dictionary key, by key id: a new (owned) reference, or null
/// until the key is first used.
struct KeyStrings(Vec<*mut ffi::PyObject>);

impl Drop for KeyStrings {
    fn drop(&mut self) {
        for &key in &self.0 {
            // SAFETY: each non-null entry is a reference this table owns; the walk runs
            // (and is dropped) with the GIL held.
            unsafe { ffi::Py_XDECREF(key) };
        }
    }
}

/// Where a value sits, for the rare kinds handed to the node API (typed arrays, bignums).
#[derive(Clone, Copy)]
enum Origin<'c, 'a> {
    Root,
    Child(&'c RawContainer<'a>, usize),
}

struct Walk<'a, 'py, 'c> {
    py: Python<'py>,
    doc: RawDocument<'a>,
    arrays: Arrays,
    max_depth: usize,
    budget: Budget,
    keys: KeyStrings,
    /// Working memory of `new_str`.
    scratch: Vec<u32>,
    /// Keys kept from earlier calls, if this walk has the cache.
    cache: Option<&'c mut KeyCache>,
}

/// A new reference to an object we hold a reference to (the singletons here).
///
/// # Safety
/// `obj` must be a live object and the GIL held.
#[inline(always)]
unsafe fn new_ref(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    unsafe { ffi::Py_INCREF(obj) };
    obj
}

impl<'a, 'py> Walk<'a, 'py, '_> {
    /// The value with tag `t` and slot `raw` (`width` bytes, zero-extended), `depth`
    /// containers deep: a new reference, or null to give up (an exception may be set).
    ///
    /// # Safety
    /// The GIL must be held (it is: `self.py`).
    #[inline(always)]
    unsafe fn value(&mut self, t: u8, raw: u64, width: usize, depth: usize, origin: Origin<'_, 'a>) -> *mut ffi::PyObject {
        // SAFETY: each constructor returns a new reference or null with an exception set.
        unsafe {
            // The guards are the width rules of spec §3.2, as `Container::child` checks them;
            // a tag breaking one falls through to `rare`, which gives up.
            match t {
                tag::NULL => new_ref(ffi::Py_None()),
                tag::FALSE => new_ref(ffi::Py_False()),
                tag::TRUE => new_ref(ffi::Py_True()),
                tag::INT => ffi::PyLong_FromLongLong(sign_extend(raw, width)),
                tag::F64 if width == 8 => ffi::PyFloat_FromDouble(f64::from_bits(raw)),
                tag::STRING => self.string(raw),
                tag::ARRAY => self.array(raw, depth),
                tag::OBJECT => self.object(raw, depth),
                _ => self.rare(t, raw, width, depth, origin),
            }
        }
    }

    /// The kinds that are uncommon in JSON-like data, and the tags that break a rule.
    #[inline(never)]
    unsafe fn rare(&mut self, t: u8, raw: u64, width: usize, depth: usize, origin: Origin<'_, 'a>) -> *mut ffi::PyObject {
        // SAFETY: as in `value`.
        unsafe {
            match t {
                tag::UINT if width == 8 => ffi::PyLong_FromUnsignedLongLong(raw),
                tag::F32 if width >= 4 => ffi::PyFloat_FromDouble(f32::from_bits(raw as u32) as f64),
                tag::BYTES => match self.doc.data_block(raw) {
                    Ok(b) if self.budget.charge(Budget::block_cost(b.len()) - 1) => {
                        ffi::PyBytes_FromStringAndSize(b.as_ptr().cast(), b.len() as ffi::Py_ssize_t)
                    }
                    _ => ptr::null_mut(),
                },
                tag::INTMAP => self.intmap(raw, depth),
                tag::BIGNUM | tag::TYPED => self.via_node(t, raw, origin),
                _ => ptr::null_mut(),
            }
        }
    }

    /// Bignums and typed arrays, through the general decoder's code for them.
    fn via_node(&mut self, t: u8, raw: u64, origin: Origin<'_, 'a>) -> *mut ffi::PyObject {
        let node: Option<Node<'a>> = match origin {
            Origin::Root => Some(self.doc.root_node()),
            Origin::Child(c, i) => self.doc.child_node(c, i).ok(),
        };
        let Some(node) = node else { return ptr::null_mut() };
        let (py, buf) = (self.py, self.doc.bytes());
        let obj = if t == tag::BIGNUM {
            let Ok(text) = self.doc.data_block(raw) else { return ptr::null_mut() };
            if !self.budget.charge(Budget::block_cost(text.len()) - 1) {
                return ptr::null_mut();
            }
            Decoder::scalar(py, &node, buf).ok().flatten()
        } else {
            let Ok(typed) = node.typed() else { return ptr::null_mut() };
            if !self.budget.charge(Budget::typed_cost(&typed) - 1) {
                return ptr::null_mut();
            }
            match self.arrays {
                Arrays::Numpy => arrays::copy(py, &typed, raw),
                Arrays::List => typed_list(py, &typed, raw, buf.len()),
            }
            .ok()
        };
        obj.map_or(ptr::null_mut(), Bound::into_ptr)
    }

    /// A string block (spec §5.1) as a `str`.
    #[inline]
    unsafe fn string(&mut self, offset: u64) -> *mut ffi::PyObject {
        match self.doc.data_block(offset) {
            // SAFETY: the GIL is held.
            Ok(bytes) if self.budget.charge(Budget::block_cost(bytes.len()) - 1) => unsafe { new_str(bytes, &mut self.scratch) },
            _ => ptr::null_mut(),
        }
    }

    /// The container of kind `t` at `offset`, entered at `depth`; `None` past the depth limit,
    /// when malformed, or over budget (each child costs 1).
    #[inline(always)]
    fn enter(&mut self, t: u8, offset: u64, depth: usize) -> Option<RawContainer<'a>> {
        if depth >= self.max_depth {
            return None;
        }
        let c = self.doc.container(t, offset).ok()?;
        self.budget.charge(c.len() as u64).then_some(c)
    }

    unsafe fn array(&mut self, offset: u64, depth: usize) -> *mut ffi::PyObject {
        let Some(c) = self.enter(tag::ARRAY, offset, depth) else { return ptr::null_mut() };
        // SAFETY: PyList_New returns a list of `len` null items (or null); `array_items` sets
        // each once with a new reference, which the list steals. A list given up on early
        // still has null items, which list deallocation allows.
        unsafe {
            let list = ffi::PyList_New(c.len() as ffi::Py_ssize_t);
            if list.is_null() {
                return list;
            }
            let filled = match c.slot_width() {
                1 => self.array_items::<1>(list, &c, depth),
                2 => self.array_items::<2>(list, &c, depth),
                4 => self.array_items::<4>(list, &c, depth),
                _ => self.array_items::<8>(list, &c, depth),
            };
            if !filled {
                ffi::Py_DECREF(list);
                return ptr::null_mut();
            }
            list
        }
    }

    /// Sets the items of `list` (of `c.len()` null items) from the children of `c`, whose
    /// slots are `W` bytes wide: one loop per width, so that reading a slot is one load and
    /// the width rules of `value` are settled when it is compiled, not per child. `false`
    /// to give up.
    ///
    /// # Safety
    /// The GIL must be held; `list` must be a new list of `c.len()` items.
    #[inline(always)]
    unsafe fn array_items<const W: usize>(&mut self, list: *mut ffi::PyObject, c: &RawContainer<'a>, depth: usize) -> bool {
        for (i, (&t, slot)) in c.tags().iter().zip(c.slots().chunks_exact(W)).enumerate() {
            // SAFETY: as in `array`.
            unsafe {
                let item = self.value(t, read_uint(slot, W, 0), W, depth + 1, Origin::Child(c, i));
                if item.is_null() {
                    return false;
                }
                ffi::PyList_SET_ITEM(list, i as ffi::Py_ssize_t, item);
            }
        }
        true
    }

    unsafe fn object(&mut self, offset: u64, depth: usize) -> *mut ffi::PyObject {
        let Some(c) = self.enter(tag::OBJECT, offset, depth) else { return ptr::null_mut() };
        // SAFETY: a new dict, filled by `object_entries`.
        unsafe {
            let dict = _PyDict_NewPresized(c.len() as ffi::Py_ssize_t);
            if dict.is_null() {
                return dict;
            }
            // Key ids are 1, 2 or 4 bytes wide (spec §4); others are refused by the header
            // parser, and reach the last arm only if that changed (which would then give up).
            let filled = match (c.slot_width(), c.key_width()) {
                (1, 1) => self.object_entries::<1, 1>(dict, &c, depth),
                (2, 1) => self.object_entries::<2, 1>(dict, &c, depth),
                (4, 1) => self.object_entries::<4, 1>(dict, &c, depth),
                (8, 1) => self.object_entries::<8, 1>(dict, &c, depth),
                (1, 2) => self.object_entries::<1, 2>(dict, &c, depth),
                (2, 2) => self.object_entries::<2, 2>(dict, &c, depth),
                (4, 2) => self.object_entries::<4, 2>(dict, &c, depth),
                (8, 2) => self.object_entries::<8, 2>(dict, &c, depth),
                (1, 4) => self.object_entries::<1, 4>(dict, &c, depth),
                (2, 4) => self.object_entries::<2, 4>(dict, &c, depth),
                (4, 4) => self.object_entries::<4, 4>(dict, &c, depth),
                (8, 4) => self.object_entries::<8, 4>(dict, &c, depth),
                _ => false,
            };
            if !filled {
                ffi::Py_DECREF(dict);
                return ptr::null_mut();
            }
            distinct_keys(dict, c.len())
        }
    }

    /// Inserts the children of `c` into `dict`, with slots `W` and key ids `K` bytes wide
    /// (one loop per pair of widths, as `array_items`). `false` to give up.
    ///
    /// # Safety
    /// The GIL must be held; `dict` must be a dict we own.
    #[inline(always)]
    unsafe fn object_entries<const W: usize, const K: usize>(&mut self, dict: *mut ffi::PyObject, c: &RawContainer<'a>, depth: usize) -> bool {
        let children = c.tags().iter().zip(c.slots().chunks_exact(W)).zip(c.keys().chunks_exact(K));
        for (i, ((&t, slot), key)) in children.enumerate() {
            // SAFETY: PyDict_SetItem takes its own references to the key and value, so the
            // value's is released after it; the key is borrowed from `self.keys`.
            unsafe {
                let key = self.key(read_uint(key, K, 0));
                if key.is_null() {
                    return false;
                }
                let value = self.value(t, read_uint(slot, W, 0), W, depth + 1, Origin::Child(c, i));
                if value.is_null() {
                    return false;
                }
                let status = ffi::PyDict_SetItem(dict, key, value);
                ffi::Py_DECREF(value);
                if status < 0 {
                    return false;
                }
            }
        }
        true
    }

    unsafe fn intmap(&mut self, offset: u64, depth: usize) -> *mut ffi::PyObject {
        let Some(c) = self.enter(tag::INTMAP, offset, depth) else { return ptr::null_mut() };
        let (tags, slots, width) = (c.tags(), c.slots(), c.slot_width());
        let (keys, key_width) = (c.keys(), c.key_width());
        // SAFETY: as in `object`; the key is a new reference, released after the insertion.
        unsafe {
            let dict = _PyDict_NewPresized(tags.len() as ffi::Py_ssize_t);
            if dict.is_null() {
                return dict;
            }
            for (i, &t) in tags.iter().enumerate() {
                let value = self.value(t, read_uint(slots, width, i), width, depth + 1, Origin::Child(&c, i));
                if value.is_null() {
                    ffi::Py_DECREF(dict);
                    return value;
                }
                let key = ffi::PyLong_FromLongLong(sign_extend(read_uint(keys, key_width, i), key_width));
                let status = if key.is_null() { -1 } else { ffi::PyDict_SetItem(dict, key, value) };
                ffi::Py_XDECREF(key);
                ffi::Py_DECREF(value);
                if status < 0 {
                    ffi::Py_DECREF(dict);
                    return ptr::null_mut();
                }
            }
            distinct_keys(dict, tags.len())
        }
    }

    /// The interned `str` of dictionary key `id` (a borrowed reference), or null.
    #[inline(always)]
    fn key(&mut self, id: u64) -> *mut ffi::PyObject {
        match self.keys.0.get(id as usize) {
            Some(&key) if !key.is_null() => key,
            _ => self.first_use_of_key(id),
        }
    }

    #[inline(never)]
    fn first_use_of_key(&mut self, id: u64) -> *mut ffi::PyObject {
        // An id past the dictionary fails here (`self.keys` has one entry per key).
        let Ok(bytes) = self.doc.key(id) else { return ptr::null_mut() };
        // SAFETY: the GIL is held; interning replaces the new reference by one to the equal
        // interned string, if there is one; the cache gives and takes new references.
        unsafe {
            let slot = self.cache.as_deref().and_then(|cache| cache.slot(bytes));
            if let (Some(cache), Some(slot)) = (self.cache.as_deref(), slot) {
                let key = cache.get(slot, bytes);
                if !key.is_null() {
                    self.keys.0[id as usize] = key;
                    return key;
                }
            }
            let mut key = new_str(bytes, &mut self.scratch);
            if key.is_null() {
                return key;
            }
            ffi::PyUnicode_InternInPlace(&mut key);
            if let (Some(cache), Some(slot)) = (self.cache.as_deref_mut(), slot) {
                cache.put(slot, key);
            }
            self.keys.0[id as usize] = key;
            key
        }
    }
}

/// `dict` if it has `expected` entries; otherwise (a key was repeated, spec §4) null, the
/// dict released: the general decoder reports the repeated key.
///
/// # Safety
/// `dict` must be a dict we own a reference to, and the GIL held.
unsafe fn distinct_keys(dict: *mut ffi::PyObject, expected: usize) -> *mut ffi::PyObject {
    unsafe {
        if ffi::PyDict_Size(dict) as usize != expected {
            ffi::Py_DECREF(dict);
            return ptr::null_mut();
        }
    }
    dict
}

//! The fast path of `dumps`: Python objects → canonical Leafwire bytes (spec §7) through
//! the core's direct encoder (`leafwire::direct`), with no tree in between.
//!
//! `Planner` walks the objects depth-first and records each container and child in the
//! core's per-level plan (`Levels`); `Levels::finish` places everything, and
//! `write_document_into` writes each byte of the document once, straight into a new Python
//! `bytes` object. The writer reads no Python object again, except to copy the content of
//! strings and bytes (the `Source` here).
//!
//! Only exact built-in types are handled: dict (keys all `str`, or all `int`), list,
//! tuple, str, int (up to u64), float, bool, None and bytes. Anything else — subclasses,
//! numpy, big integers, non-UTF-8 text, the depth limit — makes `dumps` return `None` and
//! the caller falls back to the general streaming path (`dumps_general.rs`), which also owns every
//! error message. (A cycle ends at the depth limit too; `dumps_general.rs` then names it, so
//! nothing here looks for cycles.) The planner runs no Python code (no `default`, no `__eq__`, no
//! allocation of tracked objects that could start the garbage collector), so the objects
//! cannot change before the writer has copied the strings.

mod entries;
mod keys;

use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use leafwire::direct::{self, Child, Levels, Node, Source, TypedBlock, POINTER};
use leafwire::format::{numbers, tag};
use entries::Entries;
use keys::Keys;

use crate::strings::compact_ascii;

/// Serializes `obj` if every object in it has a fast form; `None` otherwise (nothing is
/// raised then: the general path redoes the work and reports any error).
pub fn dumps<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, max_depth: usize) -> PyResult<Option<Bound<'py, PyBytes>>> {
    planned(py, obj, max_depth, |planner, root| planner.write(root)).unwrap_or(Ok(None))
}

/// Plans `obj` and hands the planner and the root's slot to `then`; `None` if some object
/// in it has no fast form. The planner's buffers go back to the thread's scratch after.
fn planned<'py, R>(py: Python<'py>, obj: &Bound<'py, PyAny>, max_depth: usize, then: impl FnOnce(&mut Planner<'py>, Child) -> R) -> Option<R> {
    let mut planner = Planner::new(py, max_depth, SCRATCH.take());
    // SAFETY: obj is a live object; the planner only reads it through the C API. A list
    // of numbers at the root takes the scalar lists' loop, as it does anywhere else.
    let root = unsafe {
        let ptr = obj.as_ptr();
        let scalars = (ffi::Py_TYPE(ptr) == &raw mut ffi::PyList_Type).then(|| planner.scalar_list(ptr, 0)).flatten();
        scalars.or_else(|| planner.visit(ptr, 0))
    };
    let result = root.map(|(tag, value, _)| then(&mut planner, Child { tag, key: 0, value }));
    SCRATCH.set(planner.into_scratch());
    result
}

/// The planner's buffers, kept between calls (per thread) so that a document does not pay
/// for growing them again; dropped when they exceed `SCRATCH_LIMIT` bytes.
#[derive(Default)]
struct Scratch {
    levels: Levels,
    keys: Keys,
}

const SCRATCH_LIMIT: usize = 16 << 20;

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

struct Planner<'py> {
    py: Python<'py>,
    max_depth: usize,
    levels: Levels,
    keys: Keys,
    /// A reference to each key object interned, so that its address is not reused and its
    /// UTF-8 stays valid until the document is written.
    keep: Vec<Bound<'py, PyAny>>,
}

/// The content of the str and bytes objects the planner recorded (`Child::value` is the
/// object's address).
struct Objects;

impl Source for Objects {
    #[inline(always)]
    fn content(&self, child: &Child) -> &[u8] {
        let obj = child.value as *mut ffi::PyObject;
        // SAFETY: the planner recorded this live str (its UTF-8 known to exist) or bytes
        // object; its content is valid for its length while the object lives, which is
        // until the document is written, and no Python code runs until then.
        unsafe {
            let (ptr, len) = if child.tag == tag::STRING {
                utf8(obj).expect("UTF-8 of a str checked by the planner")
            } else {
                (ffi::PyBytes_AS_STRING(obj).cast::<u8>(), ffi::PyBytes_Size(obj) as usize)
            };
            std::slice::from_raw_parts(ptr, len)
        }
    }

    fn typed(&self, _: &Child) -> TypedBlock<'_> {
        unreachable!("the fast path records no typed arrays")
    }

    /// The planner has just read each str object's header, and a compact str's content
    /// follows it: the prefetches only cost (5-7 % of `dumps` on the corpus files; even on
    /// 5-29 MB documents they gained nothing). Copying each string's block into a run per
    /// level as the planner meets it (so that the writer copies runs and reads no object
    /// again, as the core's builder does) cost more than the second read: on the GraphQL
    /// orders 5.66 M -> 6.72 M instructions a call and 72.5 k -> 77.5 k D1 misses
    /// (cachegrind), the runs and their spans being new memory written and read back.
    fn prefetch_blocks(&self, _data_len: usize) -> bool {
        false
    }
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
    if let Some(text) = unsafe { compact_ascii(obj) } {
        return Some((text.as_ptr(), text.len()));
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
        if let Some(v) = compact_int(obj) {
            return Some((tag::INT, v as u64, numbers::signed_width(v) as u8));
        }
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

/// An int in u64, None or a boolean as its slot (as `Planner::visit` records it); `None`
/// for anything else (floats are tested before).
///
/// # Safety
/// `obj` must be a live object.
#[inline(always)]
unsafe fn other_scalar(obj: *mut ffi::PyObject) -> Option<(u8, u64, u8)> {
    unsafe {
        let ty = ffi::Py_TYPE(obj);
        if ty == &raw mut ffi::PyLong_Type {
            int(obj)
        } else if obj == ffi::Py_None() {
            Some((tag::NULL, 0, 1))
        } else if ty == &raw mut ffi::PyBool_Type {
            Some((if obj == ffi::Py_True() { tag::TRUE } else { tag::FALSE }, 0, 1))
        } else {
            None
        }
    }
}

/// The value of an exact int of at most one digit (30 bits: most ints, such as counts,
/// indices and small ids), read from the object in line, where the C API's call was most of
/// the cost of an int in a numeric list; `None` for a larger one, or where the layout is
/// not known here (the C API then decides). CPython's layouts: before 3.12, `ob_size` (the
/// digit count, negative for a negative int) and the digits; from 3.12, `lv_tag` (the sign
/// in bits 0-1: 0 positive, 1 zero, 2 negative; the digit count from bit 3) and the digits.
///
/// # Safety
/// `obj` must be a live exact int.
#[inline(always)]
unsafe fn compact_int(obj: *mut ffi::PyObject) -> Option<i64> {
    #[cfg(not(any(Py_3_12, PyPy, GraalPy)))]
    unsafe {
        let size = (*obj.cast::<ffi::PyVarObject>()).ob_size;
        let digit = || *obj.cast::<u8>().add(size_of::<ffi::PyVarObject>()).cast::<u32>() as i64;
        return match size {
            0 => Some(0),
            1 => Some(digit()),
            -1 => Some(-digit()),
            _ => None,
        };
    }
    #[cfg(all(Py_3_12, not(any(PyPy, GraalPy, Py_GIL_DISABLED))))]
    unsafe {
        let value = obj.cast::<u8>().add(size_of::<ffi::PyObject>());
        let tag = *value.cast::<usize>();
        if tag >= 2 << 3 {
            return None;
        }
        let digit = *value.add(size_of::<usize>()).cast::<u32>() as i64;
        return Some((1 - (tag & 3) as i64) * digit);
    }
    #[allow(unreachable_code)]
    None
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
        let Scratch { levels, keys } = scratch;
        Planner { py, max_depth, levels, keys, keep: Vec::new() }
    }

    fn into_scratch(self) -> Scratch {
        let Planner { mut levels, mut keys, .. } = self;
        if levels.heap_size() + keys.heap_size() > SCRATCH_LIMIT {
            return Scratch::default();
        }
        levels.clear();
        keys.clear();
        Scratch { levels, keys }
    }

    /// Places the planned document and writes it into a new `bytes` object; `None` if the
    /// core refuses the plan (it cannot for what is planned here: its limits are on typed
    /// arrays; the general path would report it).
    fn write(&mut self, root: Child) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let keys = self.keys.as_direct();
        let Ok(layout) = self.levels.finish(keys, root, &Objects) else {
            return Ok(None);
        };
        // SAFETY: a null source asks CPython for an uninitialized `bytes` of that length; the
        // new reference is owned by `bytes` (and so released if anything below panics).
        let bytes = unsafe {
            let ptr = ffi::PyBytes_FromStringAndSize(std::ptr::null(), layout.end as ffi::Py_ssize_t);
            Bound::from_owned_ptr_or_err(self.py, ptr)?.cast_into_unchecked::<PyBytes>()
        };
        // SAFETY: the object is a fresh `bytes` of `layout.end` bytes that nothing else
        // refers to yet; its memory is only written through `MaybeUninit`, and
        // `write_document_into` writes every byte of it (or panics, and the object is
        // released unseen).
        let out = unsafe {
            let base = ffi::PyBytes_AS_STRING(bytes.as_ptr()).cast::<MaybeUninit<u8>>().cast_mut();
            std::slice::from_raw_parts_mut(base, layout.end)
        };
        direct::write_document_into(&self.levels, keys, &layout, &Objects, out);
        Ok(Some(bytes))
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
                self.levels.add_block(str_len(obj)?);
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
                self.levels.add_block(ffi::PyBytes_Size(obj) as usize);
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
        let mut node = Node::new(tag, len as u32);
        // A placeholder keeps this container's place ahead of those met inside it (an
        // empty container is final at once).
        let index = self.levels.open(node, depth);
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
        self.levels.close(depth, index, node);
        Some((node.tag, index as u64, POINTER))
    }

    /// Visits the `len` (> 0) entries of a dict at `depth`: an object if its first key is a
    /// `str`, an intmap if it is an int (`node.tag` is set accordingly).
    ///
    /// # Safety
    /// `obj` must be a live exact dict of `len` entries.
    unsafe fn dict(&mut self, obj: *mut ffi::PyObject, len: usize, depth: usize, node: &mut Node) -> Option<()> {
        // SAFETY: `obj` is a live exact dict, and nothing runs that could change it.
        let mut entries = unsafe { Entries::new(obj) };
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
            let ty = ffi::Py_TYPE(value);
            if ty == &raw mut ffi::PyFloat_Type {
                (tag::F64, ffi::PyFloat_AS_DOUBLE(value).to_bits(), 8)
            } else if let Some(list) = (ty == &raw mut ffi::PyList_Type).then(|| self.scalar_list(value, depth + 1)).flatten() {
                list
            } else {
                self.visit(value, depth + 1)?
            }
        };
        node.need(need);
        self.levels.push(depth, Child { tag, key, value });
        Some(())
    }

    /// Records a list at nesting level `depth` whose items are all inline scalars (floats,
    /// ints up to u64, booleans, None: most numeric lists, such as coordinates) in one tight
    /// loop, with its final record at once: no placeholder, no recursion. `None`, with
    /// nothing recorded, at the first item of another kind (or at the depth limit); the
    /// caller then takes the general path, which redoes the list.
    ///
    /// # Safety
    /// `obj` must be a live exact list.
    #[inline]
    unsafe fn scalar_list(&mut self, obj: *mut ffi::PyObject, depth: usize) -> Option<(u8, u64, u8)> {
        let len = unsafe { ffi::PyList_GET_SIZE(obj) } as usize;
        if depth >= self.max_depth || len > u32::MAX as usize {
            return None;
        }
        self.levels.reach(depth);
        let kids = &mut self.levels.kids[depth];
        kids.reserve(len);
        let out = kids.spare_capacity_mut();
        let mut node = Node::new(tag::ARRAY, len as u32);
        // SAFETY: `obj` is a live list of `len` items (its size just read; nothing runs that
        // could change it), so `ob_item` holds `len` live objects.
        let items = unsafe { std::slice::from_raw_parts((*obj.cast::<ffi::PyListObject>()).ob_item, len) };
        for (out, &item) in out[..len].iter_mut().zip(items) {
            // SAFETY: `item` is a live object of the list.
            let (tag, value, need) = unsafe {
                if ffi::Py_TYPE(item) == &raw mut ffi::PyFloat_Type {
                    (tag::F64, ffi::PyFloat_AS_DOUBLE(item).to_bits(), 8)
                } else {
                    // Nothing is recorded until the loop ends: there is nothing to undo.
                    other_scalar(item)?
                }
            };
            node.need(need);
            out.write(Child { tag, key: 0, value });
        }
        // SAFETY: the loop initialized the `len` reserved children after the list's end.
        unsafe { kids.set_len(kids.len() + len) };
        let index = self.levels.push_node(node, depth);
        Some((tag::ARRAY, index as u64, POINTER))
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
}

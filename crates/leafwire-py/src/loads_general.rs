//! Leafwire → Python objects, walking the lazy reader's nodes directly (no intermediate
//! `Value`): the fast path of `loads` and of `to_python()`.
//!
//! Object keys repeat (the document stores each once in its dictionary), so each distinct
//! key becomes one interned Python string per call, found again by the address of its
//! bytes in the dictionary.
//!
//! `loads` tries the faster walk of `loads_fast.rs` first and comes here when that walk
//! gives up; errors are reported from here only. Both charge the same `Budget`.

use std::ffi::CString;

use leafwire::{ElementType, Kind, Node, TypedRef};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use rustc_hash::FxHashMap;

use crate::arrays;
use crate::errors::{decode_depth, decode_error, to_py, Side};

/// How typed arrays come out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Arrays {
    Numpy,
    List,
}

impl Arrays {
    pub fn parse(mode: &str) -> PyResult<Arrays> {
        match mode {
            "numpy" => Ok(Arrays::Numpy),
            "list" => Ok(Arrays::List),
            other => Err(crate::errors::bad_argument(format!("arrays must be \"numpy\" or \"list\", not {other:?}"))),
        }
    }
}

pub struct Decoder<'o, 'py> {
    pub py: Python<'py>,
    pub arrays: Arrays,
    pub max_depth: usize,
    /// Set for documents opened lazily: typed arrays become read-only views whose base is
    /// this object (which keeps the bytes alive). Without it they are copied.
    pub owner: Option<&'o Bound<'py, PyAny>>,
    /// The document's bytes (for the string fast path); their length bounds how many empty
    /// lists a typed array of shape `[n, 0]` may ask for.
    pub buf: &'o [u8],
    keys: FxHashMap<(usize, usize), Bound<'py, PyString>>,
    budget: Budget,
}

/// The work allowance of one decode: the core's rule for whole-value readers (a value
/// costs 1, a data block its length, a typed array its bytes and rows), so both decoders
/// stop on documents that share subtrees exactly where the core's `decode` does.
pub struct Budget(leafwire::format::budget::Budget);

impl Budget {
    pub fn for_document(len: usize) -> Budget {
        Budget(leafwire::format::budget::Budget::for_document(len))
    }

    /// Takes `cost` from the allowance; `false` when it is exhausted.
    #[inline(always)]
    pub fn charge(&mut self, cost: u64) -> bool {
        self.0.charge(cost, 0).is_ok()
    }

    /// What a data block of `len` bytes costs.
    #[inline(always)]
    pub fn block_cost(len: usize) -> u64 {
        leafwire::format::budget::Budget::block_cost(len)
    }

    /// What a whole typed array costs.
    pub fn typed_cost(typed: &TypedRef<'_>) -> u64 {
        let shape: Vec<u64> = typed.shape().iter().map(|&d| d as u64).collect();
        leafwire::format::budget::Budget::typed_cost(&shape, typed.bytes().len())
    }
}

/// The error of an exhausted `Budget` (the core's message).
#[cold]
pub fn budget_error(py: Python<'_>, offset: u64) -> PyErr {
    decode_error(py, "the document describes more values than it has bytes (a shared subtree or cycle)", Some(offset))
}

/// Converts a core error met while decoding.
pub fn err(py: Python<'_>, e: leafwire::Error) -> PyErr {
    to_py(py, e, Side::Decode)
}

/// Takes ownership of a new reference returned by the C API (null means an exception is set).
///
/// # Safety
/// `ptr` must be a new reference or null.
unsafe fn owned<'py>(py: Python<'py>, ptr: *mut ffi::PyObject) -> PyResult<Bound<'py, PyAny>> {
    unsafe { Bound::from_owned_ptr_or_err(py, ptr) }
}

fn py_bool(py: Python<'_>, b: bool) -> Bound<'_, PyAny> {
    // SAFETY: the singletons are immortal or kept alive by the new reference.
    unsafe { Bound::from_borrowed_ptr(py, if b { ffi::Py_True() } else { ffi::Py_False() }) }
}

impl<'o, 'py> Decoder<'o, 'py> {
    pub fn new(py: Python<'py>, arrays: Arrays, max_depth: usize, owner: Option<&'o Bound<'py, PyAny>>, buf: &'o [u8]) -> Self {
        Decoder { py, arrays, max_depth, owner, buf, keys: FxHashMap::default(), budget: Budget::for_document(buf.len()) }
    }

    /// A scalar as a Python object; `None` for containers and typed arrays. `buf` is the
    /// document the node belongs to. Not inlined (nor is `typed`): the recursion of `value`
    /// keeps its stack frame small without them.
    #[inline(never)]
    pub fn scalar(py: Python<'py>, node: &Node<'_>, buf: &[u8]) -> PyResult<Option<Bound<'py, PyAny>>> {
        // SAFETY: each constructor returns a new reference or null with an exception set.
        let obj = unsafe {
            match node.kind() {
                Kind::Null => Bound::from_borrowed_ptr(py, ffi::Py_None()),
                Kind::Bool => py_bool(py, node.as_bool().map_err(|e| err(py, e))?),
                Kind::Int => owned(py, ffi::PyLong_FromLongLong(node.as_i64().map_err(|e| err(py, e))?))?,
                Kind::UInt => owned(py, ffi::PyLong_FromUnsignedLongLong(node.as_u64().map_err(|e| err(py, e))?))?,
                Kind::F64 | Kind::F32 => owned(py, ffi::PyFloat_FromDouble(node.as_f64().map_err(|e| err(py, e))?))?,
                Kind::String => string(py, node, buf)?,
                Kind::Bytes => {
                    let b = node.as_bytes().map_err(|e| err(py, e))?;
                    owned(py, ffi::PyBytes_FromStringAndSize(b.as_ptr().cast(), b.len() as ffi::Py_ssize_t))?
                }
                Kind::BigNum => {
                    let text = node.as_bignum().map_err(|e| err(py, e))?;
                    // The core checked the text is '-'? digits, so it has no NUL.
                    let c = CString::new(text).map_err(|_| decode_error(py, "bignum with a NUL byte", Some(node.offset())))?;
                    owned(py, ffi::PyLong_FromString(c.as_ptr(), std::ptr::null_mut(), 10)).map_err(|e| {
                        let wrapped = decode_error(py, format!("bignum of {} digits: {e}", text.len()), Some(node.offset()));
                        wrapped.set_cause(py, Some(e));
                        wrapped
                    })?
                }
                _ => return Ok(None),
            }
        };
        Ok(Some(obj))
    }

    /// The whole value under `node`, `depth` containers deep.
    pub fn value(&mut self, node: &Node<'_>, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        if !self.budget.charge(self.cost(node)) {
            return Err(budget_error(self.py, node.offset()));
        }
        if let Some(obj) = Self::scalar(self.py, node, self.buf)? {
            return Ok(obj);
        }
        match node.kind() {
            Kind::Array => self.array(node, depth),
            Kind::Object => self.object(node, depth),
            Kind::IntMap => self.intmap(node, depth),
            Kind::Table => crate::table::value(self.py, node, self.arrays, self.owner, self.buf),
            _ => self.typed(node),
        }
    }

    /// What visiting `node` costs against the budget; a block that cannot be read costs 1
    /// (reading it fails next, with the precise error).
    fn cost(&self, node: &Node<'_>) -> u64 {
        match node.kind() {
            Kind::String | Kind::Bytes | Kind::BigNum => string_block(self.buf, node.offset()).map_or(1, |b| Budget::block_cost(b.len())),
            Kind::TypedArray => node.typed().map_or(1, |t| Budget::typed_cost(&t)),
            Kind::Table => crate::table::cost(self.buf, node),
            _ => 1,
        }
    }

    fn enter(&self, node: &Node<'_>, depth: usize) -> PyResult<usize> {
        if depth >= self.max_depth {
            return Err(decode_depth(self.py, self.max_depth, node.offset()));
        }
        Ok(depth + 1)
    }

    fn array(&mut self, node: &Node<'_>, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let depth = self.enter(node, depth)?;
        let children = node.iter().map_err(|e| err(py, e))?;
        let n = children.size_hint().0;
        // SAFETY: PyList_New returns a list of n null slots (or null); each slot is set once
        // below with a stolen new reference. On an early return the list is dropped with
        // some slots still null, which list deallocation allows.
        let list = unsafe { owned(py, ffi::PyList_New(n as ffi::Py_ssize_t))? };
        for (i, child) in children.enumerate() {
            let item = self.value(&child.map_err(|e| err(py, e))?, depth)?;
            unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) };
        }
        Ok(list)
    }

    fn key(&mut self, key: &str) -> &Bound<'py, PyString> {
        let py = self.py;
        self.keys.entry((key.as_ptr() as usize, key.len())).or_insert_with(|| PyString::intern(py, key))
    }

    fn object(&mut self, node: &Node<'_>, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let depth = self.enter(node, depth)?;
        let entries = node.entries().map_err(|e| err(py, e))?;
        let n = entries.size_hint().0;
        // SAFETY: a new dict; PyDict_SetItem does not steal its arguments.
        let dict = unsafe { owned(py, ffi::PyDict_New())? };
        for entry in entries {
            let (key, child) = entry.map_err(|e| err(py, e))?;
            let value = self.value(&child, depth)?;
            let key = self.key(key);
            if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
                return Err(PyErr::fetch(py));
            }
        }
        self.check_distinct(&dict, n, node)?;
        Ok(dict)
    }

    fn intmap(&mut self, node: &Node<'_>, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let depth = self.enter(node, depth)?;
        let mut n = 0;
        let dict = unsafe { owned(py, ffi::PyDict_New())? };
        for entry in node.int_entries().map_err(|e| err(py, e))? {
            let (key, child) = entry.map_err(|e| err(py, e))?;
            let value = self.value(&child, depth)?;
            // SAFETY: new references, released at the end of the scope.
            let key = unsafe { owned(py, ffi::PyLong_FromLongLong(key))? };
            if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
                return Err(PyErr::fetch(py));
            }
            n += 1;
        }
        self.check_distinct(&dict, n, node)?;
        Ok(dict)
    }

    /// Keys must be distinct (spec §4); a document breaking that would silently lose values.
    fn check_distinct(&self, dict: &Bound<'py, PyAny>, expected: usize, node: &Node<'_>) -> PyResult<()> {
        // SAFETY: dict is a dict.
        if unsafe { ffi::PyDict_Size(dict.as_ptr()) } as usize != expected {
            return Err(decode_error(self.py, "object or intmap has a repeated key", Some(node.offset())));
        }
        Ok(())
    }

    #[inline(never)]
    fn typed(&mut self, node: &Node<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let typed = node.typed().map_err(|e| err(py, e))?;
        match (self.arrays, self.owner) {
            (Arrays::Numpy, Some(owner)) => arrays::view(py, &typed, owner, node.offset()),
            (Arrays::Numpy, None) => arrays::copy(py, &typed, node.offset()),
            (Arrays::List, _) => typed_list(py, &typed, node.offset(), self.buf.len()),
        }
    }
}

/// A string value. Its block (spec §5.1: a varint length, then the bytes) is read here and
/// handed to CPython, which checks the UTF-8 while decoding it: the core's `as_str` would
/// check it first, doubling the cost on text-heavy documents. Anything unexpected (a bad
/// offset or length, invalid UTF-8) falls back to `as_str` for the core's precise error.
fn string<'py>(py: Python<'py>, node: &Node<'_>, buf: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    if let Some(bytes) = string_block(buf, node.offset()) {
        // SAFETY: a new reference or null with an exception set.
        let decoded = unsafe {
            ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), bytes.len() as ffi::Py_ssize_t, c"strict".as_ptr())
        };
        if !decoded.is_null() {
            return Ok(unsafe { Bound::from_owned_ptr(py, decoded) });
        }
        PyErr::fetch(py);
    }
    let s = node.as_str().map_err(|e| err(py, e))?;
    // SAFETY: as above.
    unsafe { owned(py, ffi::PyUnicode_FromStringAndSize(s.as_ptr().cast(), s.len() as ffi::Py_ssize_t)) }
}

/// The content of the data block at `offset`, by the core's reader.
#[inline]
pub fn string_block(buf: &[u8], offset: u64) -> Option<&[u8]> {
    leafwire::format::data::block(buf, offset).ok()
}

/// A typed array as nested lists of Python scalars; masked f64 elements become ints.
pub fn typed_list<'py>(py: Python<'py>, typed: &TypedRef<'_>, offset: u64, doc_len: usize) -> PyResult<Bound<'py, PyAny>> {
    let shape = typed.shape();
    // Lists to create: one per row prefix. With a zero dimension there are no elements to
    // bound that by, so a hostile shape like [2^40, 0] is refused here.
    let mut lists: usize = 1;
    for &d in &shape[..shape.len() - 1] {
        lists = lists.saturating_mul(d);
        if lists > doc_len.max(1 << 20) {
            return Err(decode_error(py, format!("typed array shape {shape:?} asks for more lists than the document has bytes"), Some(offset)));
        }
    }
    let mut flat = 0;
    rows(py, typed, &shape, offset, &mut flat)
}

fn rows<'py>(py: Python<'py>, typed: &TypedRef<'_>, shape: &[usize], offset: u64, flat: &mut usize) -> PyResult<Bound<'py, PyAny>> {
    let n = shape[0];
    // SAFETY: as in Decoder::array.
    let list = unsafe { owned(py, ffi::PyList_New(n as ffi::Py_ssize_t))? };
    for i in 0..n {
        let item = if shape.len() > 1 {
            rows(py, typed, &shape[1..], offset, flat)?
        } else {
            let v = element(py, typed, *flat, offset)?;
            *flat += 1;
            v
        };
        unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) };
    }
    Ok(list)
}

/// Element `i` (flat) of a typed array as a Python scalar.
pub fn element<'py>(py: Python<'py>, typed: &TypedRef<'_>, i: usize, offset: u64) -> PyResult<Bound<'py, PyAny>> {
    let et = typed.element_type();
    let size = et.size();
    let b = &typed.bytes()[i * size..(i + 1) * size];
    let array = |b: &[u8]| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..b.len()].copy_from_slice(b);
        a
    };
    // SAFETY: each constructor returns a new reference or null with an exception set.
    unsafe {
        match et {
            ElementType::Bool => match b[0] {
                0 | 1 => Ok(py_bool(py, b[0] == 1)),
                x => Err(decode_error(py, format!("bool typed array element {i} is {x}, not 0 or 1"), Some(offset))),
            },
            ElementType::I8 => owned(py, ffi::PyLong_FromLong(b[0] as i8 as _)),
            ElementType::U8 => owned(py, ffi::PyLong_FromLong(b[0] as _)),
            ElementType::I16 => owned(py, ffi::PyLong_FromLong(i16::from_le_bytes([b[0], b[1]]) as _)),
            ElementType::U16 => owned(py, ffi::PyLong_FromLong(u16::from_le_bytes([b[0], b[1]]) as _)),
            ElementType::I32 => owned(py, ffi::PyLong_FromLongLong(i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64)),
            ElementType::U32 => owned(py, ffi::PyLong_FromLongLong(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64)),
            ElementType::I64 => owned(py, ffi::PyLong_FromLongLong(i64::from_le_bytes(array(b)))),
            ElementType::U64 => owned(py, ffi::PyLong_FromUnsignedLongLong(u64::from_le_bytes(array(b)))),
            ElementType::F32 => owned(py, ffi::PyFloat_FromDouble(f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)),
            ElementType::F64 => {
                let v = f64::from_le_bytes(array(b));
                if typed.is_masked_int(i) {
                    owned(py, ffi::PyLong_FromLongLong(v as i64))
                } else {
                    owned(py, ffi::PyFloat_FromDouble(v))
                }
            }
        }
    }
}

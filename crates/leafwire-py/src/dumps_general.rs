//! Python objects → Leafwire bytes: the objects are walked depth-first straight into the
//! core's streaming `leafwire::Encoder`, with no `Value` tree in between.
//!
//! Exact built-in types are tested first (the common case, one pointer comparison each),
//! then numpy arrays and scalars, then subclasses of the built-ins, then the `default` hook.

mod host;

use leafwire::KeyId;
use numpy::PyUntypedArray;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple};

use rustc_hash::FxHashMap;

use crate::arrays;
use crate::errors::{encode_depth, encode_error, to_py, wrap_encode, EncodeError, Side};

pub struct Encoder<'a, 'py> {
    pub py: Python<'py>,
    pub default: Option<&'a Bound<'py, PyAny>>,
    pub max_depth: usize,
    /// The largest partial product of the shape of an empty typed array seen, which the
    /// document's length must reach (spec §5.2) — known only once it is encoded.
    pub empty_rows: u64,
    /// The core's streaming encoder the objects are written to.
    pub out: leafwire::Encoder,
    /// Key ids of the exact `str` dict keys met so far, by object address: documents repeat
    /// their keys (records of one shape), and one pointer lookup is cheaper than hashing the
    /// text. `keep` holds a reference to each, so no address is reused during the call.
    keys: FxHashMap<usize, KeyId>,
    keep: Vec<Bound<'py, PyString>>,
    /// The address of the object whose nesting passed `max_depth`, while that error
    /// unwinds: a container met on the way up with the same address contains itself.
    too_deep: usize,
    /// The field names of each dataclass met, by type address (the type is kept alive).
    dataclasses: FxHashMap<usize, (Py<pyo3::types::PyType>, Vec<Py<PyString>>)>,
    /// The keys and indexes from the failing value up to the root, gathered while an
    /// `EncodeError` unwinds (so nothing is spent on paths until something fails).
    err_path: Vec<String>,
}

/// What an int key or value becomes.
enum Int {
    Small(i64),
    Unsigned(u64),
    Big(String),
}

impl<'a, 'py> Encoder<'a, 'py> {
    pub fn new(py: Python<'py>, default: Option<&'a Bound<'py, PyAny>>, max_depth: usize) -> Self {
        // The core counts containers only, the glue containers and `default` calls: the
        // glue's own check is always the one that fires.
        Encoder {
            py,
            default,
            max_depth,
            empty_rows: 0,
            out: leafwire::Encoder::new(max_depth),
            keys: FxHashMap::default(),
            keep: Vec::new(),
            too_deep: 0,
            dataclasses: FxHashMap::default(),
            err_path: Vec::new(),
        }
    }

    /// Maps a core error (duplicate key, typed array shape...) to the Python one.
    #[inline]
    fn core(&self, r: leafwire::Result<()>) -> PyResult<()> {
        match r {
            Ok(()) => Ok(()),
            Err(e) => Err(to_py(self.py, e, Side::Encode)),
        }
    }

    pub fn value(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<()> {
        // SAFETY (all ffi calls below): obj is a live object and the type checks precede the
        // matching accessors.
        let ty = unsafe { ffi::Py_TYPE(obj.as_ptr()) };
        unsafe {
            if ty == &raw mut ffi::PyUnicode_Type {
                return self.string(obj.cast_unchecked::<PyString>());
            }
            if ty == &raw mut ffi::PyLong_Type {
                return self.int_value(obj);
            }
            if ty == &raw mut ffi::PyFloat_Type {
                let r = self.out.f64(ffi::PyFloat_AS_DOUBLE(obj.as_ptr()));
                return self.core(r);
            }
            if ty == &raw mut ffi::PyDict_Type {
                return self.dict(obj.cast_unchecked::<PyDict>(), depth);
            }
            if ty == &raw mut ffi::PyList_Type {
                return self.list(obj.cast_unchecked::<PyList>(), depth);
            }
            if ty == &raw mut ffi::PyBool_Type {
                let r = self.out.bool(obj.as_ptr() == ffi::Py_True());
                return self.core(r);
            }
            if obj.is_none() {
                let r = self.out.null();
                return self.core(r);
            }
            if ty == &raw mut ffi::PyTuple_Type {
                return self.tuple(obj.cast_unchecked::<PyTuple>(), depth);
            }
            if ty == &raw mut ffi::PyBytes_Type {
                let r = self.out.bytes(obj.cast_unchecked::<PyBytes>().as_bytes());
                return self.core(r);
            }
        }
        if self.numpy(obj)? {
            return Ok(());
        }
        self.subclass(obj, depth)
    }

    /// numpy arrays and scalars of the supported dtypes; `false` (nothing written) for
    /// anything else, and for everything while numpy has not been imported.
    #[inline(never)]
    fn numpy(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<bool> {
        let py = self.py;
        if !arrays::numpy_imported(py) {
            return Ok(false);
        }
        if let Ok(array) = obj.cast::<PyUntypedArray>() {
            return arrays::encode_array(py, array, &mut self.out, &mut self.empty_rows);
        }
        if arrays::is_numpy_scalar(py, obj) {
            // numpy.str_ and numpy.float64 subclass str and float: `false` sends them on.
            return arrays::encode_scalar(py, obj, &mut self.out);
        }
        Ok(false)
    }

    /// Subclasses of the built-in types, then the `default` hook. Kept out of `value` (as
    /// `numpy` is) so that the recursion's stack frames stay small.
    #[inline(never)]
    fn subclass(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<()> {
        if obj.is_instance_of::<PyBool>() {
            let v = obj.is_truthy()?;
            let r = self.out.bool(v);
            return self.core(r);
        }
        if obj.is_instance_of::<PyInt>() {
            return self.int_value(obj);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            let r = self.out.f64(f.value());
            return self.core(r);
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return self.string(s);
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            return self.dict(d, depth);
        }
        if let Ok(l) = obj.cast::<PyList>() {
            return self.list(l, depth);
        }
        if let Ok(t) = obj.cast::<PyTuple>() {
            return self.tuple(t, depth);
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            let r = self.out.bytes(b.as_bytes());
            return self.core(r);
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            let bytes = b.to_vec();
            let r = self.out.bytes(&bytes);
            return self.core(r);
        }
        if obj.is_instance_of::<PyMemoryView>() {
            let bytes = obj.call_method0("tobytes")?;
            let r = self.out.bytes(bytes.cast::<PyBytes>()?.as_bytes());
            return self.core(r);
        }
        self.fallback(obj, depth)
    }

    /// The `default` hook: its result is encoded in place of `obj`, one level deeper (so a
    /// hook that keeps returning unsupported objects ends at the depth limit).
    #[inline(never)]
    fn fallback(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<()> {
        let type_name = obj.get_type().qualname().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        if self.host(obj, depth)? {
            return Ok(());
        }
        let Some(default) = self.default else {
            return Err(encode_error(self.py, format!("Type is not Leafwire serializable: {type_name}"), "wrong_type"));
        };
        let depth = self.enter(obj, depth)?;
        let replacement = default.call1((obj,)).map_err(|e| wrap_encode(self.py, e, &format!("default() failed on {type_name}")))?;
        self.value(&replacement, depth).map_err(|e| self.unwind(obj, e))
    }

    /// The depth of the children of `obj`, a container (or an object given to `default`)
    /// at `depth`; the depth error past `max_depth`.
    #[inline]
    fn enter(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<usize> {
        if depth >= self.max_depth {
            self.too_deep = obj.as_ptr() as usize;
            return Err(encode_depth(self.py, self.max_depth));
        }
        Ok(depth + 1)
    }

    /// `e`, an error from inside `obj`, on its way up. If it is the depth error and `obj`
    /// is the object that went too deep, `obj` contains itself: that is reported instead.
    /// Checking only here, as the error unwinds through the objects being encoded, keeps
    /// cycle detection off the path of every document that has none.
    #[cold]
    #[inline(never)]
    fn unwind(&mut self, obj: &Bound<'py, PyAny>, e: PyErr) -> PyErr {
        if self.too_deep != obj.as_ptr() as usize {
            return e;
        }
        self.too_deep = 0;
        let type_name = obj.get_type().qualname().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        encode_error(self.py, format!("cycle: a {type_name} contains itself, so it has no finite encoding"), "cycle")
    }

    /// Notes the key or index `segment` of the child `e` comes from, if `e` is an
    /// `EncodeError` (other exceptions, from a `default` hook..., pass through untouched).
    #[cold]
    #[inline(never)]
    fn at(&mut self, e: PyErr, segment: impl FnOnce() -> String) -> PyErr {
        if e.is_instance_of::<EncodeError>(self.py) {
            self.err_path.push(segment());
        }
        e
    }

    /// `e` with the JSON Pointer (RFC 6901) of the value that failed: its `path` attribute,
    /// and " (at /a/0)" added to the message when it is not the root.
    #[cold]
    #[inline(never)]
    pub fn with_path(&mut self, e: PyErr) -> PyErr {
        if !e.is_instance_of::<EncodeError>(self.py) {
            return e;
        }
        let pointer: String = self.err_path.drain(..).rev().map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect();
        let value = e.value(self.py);
        let _ = value.setattr("path", &pointer);
        if !pointer.is_empty() {
            if let Ok(message) = value.str() {
                let _ = value.setattr("args", (format!("{message} (at {pointer})"),));
            }
        }
        e
    }

    fn string(&mut self, s: &Bound<'py, PyString>) -> PyResult<()> {
        match s.to_str() {
            Ok(text) => {
                let r = self.out.string(text);
                self.core(r)
            }
            Err(e) => Err(wrap_encode(self.py, e, "str is not valid UTF-8 (a lone surrogate?)")),
        }
    }

    fn int_value(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<()> {
        let r = match self.int(obj)? {
            Int::Small(v) => self.out.int(v),
            Int::Unsigned(v) => self.out.uint(v),
            Int::Big(text) => self.out.bignum(&text),
        };
        self.core(r)
    }

    fn int(&self, obj: &Bound<'py, PyAny>) -> PyResult<Int> {
        let mut overflow = 0;
        // SAFETY: obj is an int (or subclass); the call only reads it.
        let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj.as_ptr(), &mut overflow) };
        if overflow == 0 {
            if v == -1 {
                if let Some(e) = PyErr::take(self.py) {
                    return Err(e);
                }
            }
            return Ok(Int::Small(v));
        }
        if overflow > 0 {
            if let Ok(u) = obj.extract::<u64>() {
                return Ok(Int::Unsigned(u));
            }
        }
        // Beyond 64 bits: decimal text. `int(obj)` first, so an int subclass's __str__ (an
        // IntEnum's name) does not leak in.
        // SAFETY: obj is an int; PyNumber_Long returns a new reference or null.
        let exact = unsafe { Bound::from_owned_ptr_or_err(self.py, ffi::PyNumber_Long(obj.as_ptr()))? };
        let text = exact.str().map_err(|e| wrap_encode(self.py, e, "int too large to convert to decimal"))?;
        Ok(Int::Big(text.to_str()?.to_owned()))
    }

    fn list(&mut self, list: &Bound<'py, PyList>, depth: usize) -> PyResult<()> {
        let depth = self.enter(list, depth)?;
        let r = self.out.begin_array();
        self.core(r)?;
        // The iterator re-reads the length at every step, so a `default` hook that mutates
        // the list cannot make it read out of bounds.
        for (i, item) in list.iter().enumerate() {
            if let Err(e) = self.value(&item, depth) {
                let e = self.at(e, || i.to_string());
                return Err(self.unwind(list, e));
            }
        }
        let r = self.out.end();
        self.core(r)
    }

    fn tuple(&mut self, tuple: &Bound<'py, PyTuple>, depth: usize) -> PyResult<()> {
        let depth = self.enter(tuple, depth)?;
        let r = self.out.begin_array();
        self.core(r)?;
        for (i, item) in tuple.iter_borrowed().enumerate() {
            if let Err(e) = self.value(&item, depth) {
                let e = self.at(e, || i.to_string());
                return Err(self.unwind(tuple, e));
            }
        }
        let r = self.out.end();
        self.core(r)
    }

    fn dict(&mut self, dict: &Bound<'py, PyDict>, depth: usize) -> PyResult<()> {
        let depth = self.enter(dict, depth)?;
        self.entries(dict, depth).map_err(|e| self.unwind(dict, e))
    }

    /// The entries of a dict whose children are at `depth`.
    #[inline]
    fn entries(&mut self, dict: &Bound<'py, PyDict>, depth: usize) -> PyResult<()> {
        let mut iter = dict.iter();
        let Some((k0, v0)) = iter.next() else {
            let r = self.out.begin_object().and_then(|()| self.out.end());
            return self.core(r);
        };
        if k0.is_instance_of::<PyString>() {
            let r = self.out.begin_object();
            self.core(r)?;
            self.str_key(&k0)?;
            self.value(&v0, depth).map_err(|e| self.at(e, || k0.to_string()))?;
            for (k, v) in iter {
                self.str_key(&k).map_err(|e| self.at(e, || k.to_string()))?;
                self.value(&v, depth).map_err(|e| self.at(e, || k.to_string()))?;
            }
        } else if k0.is_instance_of::<PyInt>() {
            let r = self.out.begin_intmap();
            self.core(r)?;
            self.int_key(&k0)?;
            self.value(&v0, depth).map_err(|e| self.at(e, || k0.to_string()))?;
            for (k, v) in iter {
                self.int_key(&k).map_err(|e| self.at(e, || k.to_string()))?;
                self.value(&v, depth).map_err(|e| self.at(e, || k.to_string()))?;
            }
        } else {
            return Err(self.bad_key(&k0));
        }
        let r = self.out.end();
        self.core(r)
    }

    fn str_key(&mut self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        // SAFETY: reads the type pointer of a live object.
        if unsafe { ffi::Py_TYPE(key.as_ptr()) == &raw mut ffi::PyUnicode_Type } {
            let addr = key.as_ptr() as usize;
            let id = match self.keys.get(&addr) {
                Some(&id) => id,
                None => {
                    // SAFETY: the type was checked just above.
                    let s = unsafe { key.cast_unchecked::<PyString>() };
                    let text = s.to_str().map_err(|e| wrap_encode(self.py, e, "dict key is not valid UTF-8 (a lone surrogate?)"))?;
                    let id = self.out.intern(text);
                    self.keys.insert(addr, id);
                    self.keep.push(s.clone());
                    id
                }
            };
            let r = self.out.key_interned(id);
            return self.core(r);
        }
        let Ok(s) = key.cast::<PyString>() else { return Err(self.bad_key(key)) };
        match s.to_str() {
            Ok(text) => {
                let r = self.out.key(text);
                self.core(r)
            }
            Err(e) => Err(wrap_encode(self.py, e, "dict key is not valid UTF-8 (a lone surrogate?)")),
        }
    }

    fn int_key(&mut self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        if !key.is_instance_of::<PyInt>() {
            return Err(self.bad_key(key));
        }
        match self.int(key)? {
            Int::Small(v) => {
                let r = self.out.int_key(v);
                self.core(r)
            }
            _ => Err(encode_error(self.py, format!("int dict key {key} does not fit in 64-bit signed (intmap keys are i64)"), "limit_exceeded")),
        }
    }

    fn bad_key(&self, key: &Bound<'py, PyAny>) -> PyErr {
        let name = key.get_type().qualname().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        encode_error(
            self.py,
            format!("dict keys must be all str (an object) or all int (an intmap), found a key of type {name}"),
            "wrong_type",
        )
    }
}

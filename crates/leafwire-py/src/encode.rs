//! Python objects → `leafwire::Value`, the first half of `dumps` (the core encodes the value).
//!
//! Exact built-in types are tested first (the common case, one pointer comparison each),
//! then numpy arrays and scalars, then subclasses of the built-ins, then the `default` hook.

use std::cell::Cell;

use leafwire::{IntMap, Map, Value};
use numpy::PyUntypedArray;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple};

use crate::arrays;
use crate::errors::{encode_depth, encode_error, wrap_encode};

pub struct Encoder<'a, 'py> {
    pub py: Python<'py>,
    pub default: Option<&'a Bound<'py, PyAny>>,
    pub max_depth: usize,
    /// The largest partial product of the shape of an empty typed array seen, which the
    /// document's length must reach (spec §5.2) — known only once it is encoded.
    pub empty_rows: Cell<u64>,
}

/// What an int key or value becomes.
enum Int {
    Small(i64),
    Unsigned(u64),
    Big(String),
}

impl<'py> Encoder<'_, 'py> {
    pub fn value(&self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<Value> {
        // SAFETY (all ffi calls below): obj is a live object and the type checks precede the
        // matching accessors.
        let ty = unsafe { ffi::Py_TYPE(obj.as_ptr()) };
        unsafe {
            if ty == &raw mut ffi::PyUnicode_Type {
                return self.string(obj.cast_unchecked::<PyString>());
            }
            if ty == &raw mut ffi::PyLong_Type {
                return self.int(obj).map(int_value);
            }
            if ty == &raw mut ffi::PyFloat_Type {
                return Ok(Value::F64(ffi::PyFloat_AS_DOUBLE(obj.as_ptr())));
            }
            if ty == &raw mut ffi::PyDict_Type {
                return self.dict(obj.cast_unchecked::<PyDict>(), depth);
            }
            if ty == &raw mut ffi::PyList_Type {
                return self.list(obj.cast_unchecked::<PyList>(), depth);
            }
            if ty == &raw mut ffi::PyBool_Type {
                return Ok(Value::Bool(obj.as_ptr() == ffi::Py_True()));
            }
            if obj.is_none() {
                return Ok(Value::Null);
            }
            if ty == &raw mut ffi::PyTuple_Type {
                return self.tuple(obj.cast_unchecked::<PyTuple>(), depth);
            }
            if ty == &raw mut ffi::PyBytes_Type {
                return Ok(Value::Bytes(obj.cast_unchecked::<PyBytes>().as_bytes().to_vec()));
            }
        }
        if let Some(v) = self.numpy(obj)? {
            return Ok(v);
        }
        self.subclass(obj, depth)
    }

    /// numpy arrays and scalars of the supported dtypes; `None` for anything else.
    #[inline(never)]
    fn numpy(&self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Value>> {
        let py = self.py;
        if let Ok(array) = obj.cast::<PyUntypedArray>() {
            let v = arrays::array_to_value(py, array)?;
            if let Some(Value::Typed(t)) = &v {
                if t.is_empty() {
                    let rows = t.shape().iter().scan(1u64, |p, &d| {
                        *p = p.saturating_mul(d as u64);
                        Some(*p)
                    });
                    self.empty_rows.set(self.empty_rows.get().max(rows.max().unwrap_or(0)));
                }
            }
            return Ok(v);
        }
        if arrays::is_numpy_scalar(py, obj) {
            // numpy.str_ and numpy.float64 subclass str and float: `None` sends them on.
            return arrays::scalar_to_value(py, obj);
        }
        Ok(None)
    }

    /// Subclasses of the built-in types, then the `default` hook. Kept out of `value` (as
    /// `numpy` is) so that the recursion's stack frames stay small.
    #[inline(never)]
    fn subclass(&self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<Value> {
        if obj.is_instance_of::<PyBool>() {
            return Ok(Value::Bool(obj.is_truthy()?));
        }
        if obj.is_instance_of::<PyInt>() {
            return self.int(obj).map(int_value);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return Ok(Value::F64(f.value()));
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
            return Ok(Value::Bytes(b.as_bytes().to_vec()));
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            return Ok(Value::Bytes(b.to_vec()));
        }
        if obj.is_instance_of::<PyMemoryView>() {
            let bytes = obj.call_method0("tobytes")?;
            return Ok(Value::Bytes(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
        }
        self.fallback(obj, depth)
    }

    /// The `default` hook: its result is encoded in place of `obj`, one level deeper (so a
    /// hook that keeps returning unsupported objects ends at the depth limit).
    #[inline(never)]
    fn fallback(&self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<Value> {
        let type_name = obj.get_type().qualname().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        let Some(default) = self.default else {
            return Err(encode_error(self.py, format!("Type is not Leafwire serializable: {type_name}"), "wrong_type"));
        };
        let depth = self.enter(depth)?;
        let replacement = default.call1((obj,)).map_err(|e| wrap_encode(self.py, e, &format!("default() failed on {type_name}")))?;
        self.value(&replacement, depth)
    }

    fn enter(&self, depth: usize) -> PyResult<usize> {
        if depth >= self.max_depth {
            return Err(encode_depth(self.py, self.max_depth));
        }
        Ok(depth + 1)
    }

    fn string(&self, s: &Bound<'py, PyString>) -> PyResult<Value> {
        match s.to_str() {
            Ok(text) => Ok(Value::String(text.to_owned())),
            Err(e) => Err(wrap_encode(self.py, e, "str is not valid UTF-8 (a lone surrogate?)")),
        }
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

    fn list(&self, list: &Bound<'py, PyList>, depth: usize) -> PyResult<Value> {
        let depth = self.enter(depth)?;
        let mut out = Vec::with_capacity(list.len());
        // The iterator re-reads the length at every step, so a `default` hook that mutates
        // the list cannot make it read out of bounds.
        for item in list.iter() {
            out.push(self.value(&item, depth)?);
        }
        Ok(Value::Array(out))
    }

    fn tuple(&self, tuple: &Bound<'py, PyTuple>, depth: usize) -> PyResult<Value> {
        let depth = self.enter(depth)?;
        let mut out = Vec::with_capacity(tuple.len());
        for item in tuple.iter_borrowed() {
            out.push(self.value(&item, depth)?);
        }
        Ok(Value::Array(out))
    }

    fn dict(&self, dict: &Bound<'py, PyDict>, depth: usize) -> PyResult<Value> {
        let depth = self.enter(depth)?;
        let mut iter = dict.iter();
        let Some((k0, v0)) = iter.next() else {
            return Ok(Value::Object(Map::default()));
        };
        if k0.is_instance_of::<PyString>() {
            let mut map = Map::with_capacity_and_hasher(dict.len(), Default::default());
            map.insert(self.str_key(&k0)?, self.value(&v0, depth)?);
            for (k, v) in iter {
                map.insert(self.str_key(&k)?, self.value(&v, depth)?);
            }
            Ok(Value::Object(map))
        } else if k0.is_instance_of::<PyInt>() {
            let mut map = IntMap::with_capacity_and_hasher(dict.len(), Default::default());
            map.insert(self.int_key(&k0)?, self.value(&v0, depth)?);
            for (k, v) in iter {
                map.insert(self.int_key(&k)?, self.value(&v, depth)?);
            }
            Ok(Value::IntMap(map))
        } else {
            Err(self.bad_key(&k0))
        }
    }

    fn str_key(&self, key: &Bound<'py, PyAny>) -> PyResult<String> {
        let Ok(s) = key.cast::<PyString>() else { return Err(self.bad_key(key)) };
        match s.to_str() {
            Ok(text) => Ok(text.to_owned()),
            Err(e) => Err(wrap_encode(self.py, e, "dict key is not valid UTF-8 (a lone surrogate?)")),
        }
    }

    fn int_key(&self, key: &Bound<'py, PyAny>) -> PyResult<i64> {
        if !key.is_instance_of::<PyInt>() {
            return Err(self.bad_key(key));
        }
        match self.int(key)? {
            Int::Small(v) => Ok(v),
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

fn int_value(i: Int) -> Value {
    match i {
        Int::Small(v) => Value::Int(v),
        Int::Unsigned(v) => Value::from_u64(v),
        Int::Big(text) => Value::BigNum(text),
    }
}

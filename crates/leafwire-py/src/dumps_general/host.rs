//! Python types that have no Leafwire type of their own, written by the conventions of
//! spec §12 (no new tags: any reader of the format reads them): datetimes, dates and times
//! as RFC 3339 / ISO 8601 text, UUIDs as their canonical hyphenated text, an `Enum` member
//! as its value, a dataclass as an object of its fields, numpy string and object arrays as
//! nested arrays, numpy `datetime64`/`timedelta64` as `{"$dtype": ..., "$data": i64}`, and
//! float16 as f32.
//!
//! Reached only from `Encoder::fallback`, after every built-in and numeric numpy type has
//! been tried, so these checks (a few `isinstance` calls) cost nothing on the common path.

use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDate, PyDateTime, PyString, PyTime, PyType};

use super::Encoder;
use crate::arrays;

static UUID: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ENUM: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The field names of a dataclass type, as `dataclasses.fields` gives them (declaration
/// order; `ClassVar` and `InitVar` pseudo-fields left out).
pub(super) fn dataclass_fields<'py>(py: Python<'py>, ty: &Bound<'py, PyType>) -> PyResult<Vec<Py<PyString>>> {
    let fields = py.import("dataclasses")?.getattr("fields")?.call1((ty,))?;
    let mut names = Vec::new();
    for field in fields.try_iter()? {
        let name = field?.getattr("name")?;
        // Interned, so that records of one class share their key objects (one dictionary
        // lookup per key by address in `str_key`).
        names.push(PyString::intern(py, name.cast::<PyString>()?.to_str()?).unbind());
    }
    Ok(names)
}

impl<'py> Encoder<'_, 'py> {
    /// Writes `obj` by a convention of spec §12 if it is one of those types; `false`
    /// (nothing written) otherwise.
    pub(super) fn host(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<bool> {
        let py = self.py;
        // datetime is a subclass of date: both are written by `isoformat()`, which gives
        // RFC 3339 for an aware datetime ("2024-05-06T07:08:09.123456+02:00") and leaves
        // the offset out for a naive one.
        if obj.is_instance_of::<PyDateTime>() || obj.is_instance_of::<PyDate>() || obj.is_instance_of::<PyTime>() {
            let text = obj.call_method0("isoformat")?;
            self.string(text.cast::<PyString>()?)?;
            return Ok(true);
        }
        let uuid = UUID.import(py, "uuid", "UUID")?;
        if obj.is_instance(uuid)? {
            // str(UUID) is the canonical lowercase 8-4-4-4-12 form (RFC 9562).
            self.string(&obj.str()?)?;
            return Ok(true);
        }
        let enum_type = ENUM.import(py, "enum", "Enum")?;
        if obj.is_instance(enum_type)? {
            let depth = self.enter(obj, depth)?;
            let value = obj.getattr("value")?;
            self.value(&value, depth).map_err(|e| self.unwind(obj, e))?;
            return Ok(true);
        }
        let ty = obj.get_type();
        if ty.hasattr("__dataclass_fields__")? && !obj.is_instance_of::<PyType>() {
            self.dataclass(obj, &ty, depth)?;
            return Ok(true);
        }
        if arrays::numpy_imported(py) {
            return self.numpy_other(obj, depth);
        }
        Ok(false)
    }

    /// A dataclass instance: an object of its fields in declaration order.
    fn dataclass(&mut self, obj: &Bound<'py, PyAny>, ty: &Bound<'py, PyType>, depth: usize) -> PyResult<()> {
        let depth = self.enter(obj, depth)?;
        let address = ty.as_ptr() as usize;
        if !self.dataclasses.contains_key(&address) {
            let names = dataclass_fields(self.py, ty)?;
            self.dataclasses.insert(address, (ty.clone().unbind(), names));
        }
        let names: Vec<Bound<'py, PyString>> = self.dataclasses[&address].1.iter().map(|n| n.bind(self.py).clone()).collect();
        let r = self.out.begin_object();
        self.core(r)?;
        for name in &names {
            let value = obj.getattr(name)?;
            self.str_key(name.as_any())?;
            if let Err(e) = self.value(&value, depth) {
                let e = self.at(e, || name.to_string());
                return Err(self.unwind(obj, e));
            }
        }
        let r = self.out.end();
        self.core(r)
    }

    /// numpy arrays and scalars with no typed-array element type.
    fn numpy_other(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<bool> {
        let py = self.py;
        let (descr, is_array) = if let Ok(array) = obj.cast::<PyUntypedArray>() {
            (array.dtype(), true)
        } else if arrays::is_numpy_scalar(py, obj) {
            (obj.getattr("dtype")?.cast_into::<PyArrayDescr>()?, false)
        } else {
            return Ok(false);
        };
        match (descr.kind(), descr.itemsize()) {
            // Strings, bytes and Python objects: nested lists, as `tolist()` makes them
            // (numpy's trailing NULs dropped), each element by the usual rules.
            (b'U' | b'S' | b'O', _) if is_array => {
                let list = obj.call_method0("tolist")?;
                self.value(&list, depth)?;
            }
            (b'M' | b'm', _) => self.numpy_time(obj, &descr, depth)?,
            // float16 has no element type: widened to f32 (exact).
            (b'f', 2) => {
                let wide = obj.call_method1("astype", ("float32",))?;
                self.value(&wide, depth)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `datetime64`/`timedelta64` (array or scalar): `{"$dtype": "datetime64[ns]", "$data":
    /// the i64 counts}` (spec §12.6), the counts an i64 typed array (shape kept) or an int.
    fn numpy_time(&mut self, obj: &Bound<'py, PyAny>, descr: &Bound<'py, PyArrayDescr>, depth: usize) -> PyResult<()> {
        let py = self.py;
        let numpy = py.import("numpy")?;
        let (unit, count): (String, i64) = numpy.getattr("datetime_data")?.call1((descr,))?.extract()?;
        let kind = if descr.kind() == b'M' { "datetime64" } else { "timedelta64" };
        let name = match (unit.as_str(), count) {
            ("generic", _) => kind.to_string(),
            (unit, 1) => format!("{kind}[{unit}]"),
            (unit, n) => format!("{kind}[{n}{unit}]"),
        };
        // The same bytes as int64 in the array's own byte order (the typed-array writer
        // makes them little-endian).
        let order = descr.getattr("byteorder")?;
        let int64 = numpy.getattr("dtype")?.call1(("i8",))?.call_method1("newbyteorder", (order,))?;
        let counts = obj.call_method1("view", (int64,))?;
        let depth = self.enter(obj, depth)?;
        let r = self.out.begin_object().and_then(|()| self.out.key("$dtype")).and_then(|()| self.out.string(&name)).and_then(|()| self.out.key("$data"));
        self.core(r)?;
        self.value(&counts, depth)?;
        let r = self.out.end();
        self.core(r)
    }
}

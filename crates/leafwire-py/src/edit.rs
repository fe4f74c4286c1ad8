//! `leafwire.edit`: a document open for editing on its bytes (the core `Editor`, spec §8),
//! from a file (copy-on-write, atomic commits) or from a bytearray (an edited copy that
//! commits write back into the same object).
//!
//! Values written go through the conversion of `dumps` (the core editor then takes them as
//! a `Value`); values read come out as `loads` gives them, typed arrays as numpy copies,
//! since a view would point into bytes that the next edit may move or zero.

use std::path::PathBuf;

use leafwire::{Category, ColumnType, ElementType, Kind, Number, Unit, Value};
use pyo3::exceptions::{PyIndexError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyFloat, PyInt, PyList, PySlice, PyString, PyTuple};

use crate::errors::{to_py, NotFoundError, Side};
use crate::guard::guarded;
use crate::loads_general::{err, Arrays, Decoder};

/// Where `commit()` makes the edits visible.
enum Target {
    /// The file the core editor holds (its path, for `repr`).
    File(PathBuf),
    /// This bytearray, overwritten with the edited bytes.
    ByteArray(Py<PyByteArray>),
}

/// A Leafwire document open for editing, made by `leafwire.edit()`. Unlike `Document`,
/// nothing it returns points into its bytes: reads are copies.
#[pyclass(module = "leafwire", name = "Editor")]
pub struct Editor {
    /// `None` once closed.
    core: Option<leafwire::Editor>,
    target: Target,
}

guarded! {
/// Opens a path or a bytearray for editing.
#[pyfunction]
#[pyo3(signature = (source, /, *, compact_threshold = None, compact_min_garbage = None, trusted = false))]
pub fn edit(source: &Bound<'_, PyAny>, compact_threshold: Option<f64>, compact_min_garbage: Option<u64>, trusted: bool) -> PyResult<Editor> {
    let py = source.py();
    let trust = if trusted { leafwire::Trust::Trusted } else { leafwire::Trust::Untrusted };
    let (mut core, target) = if let Some(path) = crate::document::file_path(source)? {
        // SAFETY: the package documents, as for `open(path)`, that no other program may
        // change a file while it is open (spec §9.1).
        let core = py.detach(|| unsafe { leafwire::Editor::map_file(&path, trust) }).map_err(|e| err(py, e))?;
        (core, Target::File(path))
    } else if let Ok(array) = source.cast::<PyByteArray>() {
        let core = leafwire::Editor::new_with(array.to_vec(), trust).map_err(|e| err(py, e))?;
        (core, Target::ByteArray(array.clone().unbind()))
    } else if source.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "edit() cannot write back into bytes, which are immutable: pass bytearray(data) to edit a copy in memory",
        ));
    } else {
        return Err(PyTypeError::new_err(format!(
            "edit() expects a path (str or os.PathLike) or a bytearray, not {}",
            source.get_type().qualname()?
        )));
    };
    if let Some(threshold) = compact_threshold {
        if threshold.is_nan() || threshold < 0.0 {
            return Err(crate::errors::bad_argument(format!("compact_threshold must be a number >= 0, not {threshold}")));
        }
        core.set_compact_threshold(threshold);
    }
    if let Some(bytes) = compact_min_garbage {
        core.set_compact_min_garbage(bytes);
    }
    Ok(Editor { core: Some(core), target })
}
}

/// Maps a core error from an edit. Errors about the value being written (too deep, too
/// many children, not representable) are encode-side; a rename onto an existing key is a
/// plain ValueError; the rest map as for reads (NotFoundError, TypeError...).
fn edit_err(py: Python<'_>, e: leafwire::Error) -> PyErr {
    match e.category() {
        Category::DepthLimit | Category::LimitExceeded | Category::NotRepresentable => to_py(py, e, Side::Encode),
        Category::DuplicateKey => PyValueError::new_err(e.to_string()),
        _ => to_py(py, e, Side::Decode),
    }
}

/// A Python value as the core editor takes it: encoded exactly as `dumps` does, then
/// decoded to a `Value`.
fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let py = obj.py();
    let bytes = crate::dumps_plain(py, obj, None, leafwire::DEFAULT_MAX_DEPTH)?;
    leafwire::decode(bytes.as_bytes()).map_err(|e| err(py, e))
}

/// A JSON Pointer token (RFC 6901) for an object key: '~' and '/' are escaped.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The number written by `set_element`: ints (also bool and numpy integers and bools) as
/// integers, anything else that converts to float as a float.
fn number(obj: &Bound<'_, PyAny>) -> PyResult<Number> {
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Number::Float(obj.extract()?));
    }
    // numpy.bool_ has no __index__, but is the element of bool arrays.
    if crate::arrays::numpy_imported(obj.py()) && obj.is_instance(&obj.py().import("numpy")?.getattr("bool_")?)? {
        return Ok(Number::Int(obj.is_truthy()? as i64));
    }
    if obj.is_instance_of::<PyInt>() || obj.hasattr("__index__")? {
        return obj.extract::<i64>().map(Number::Int).or_else(|_| obj.extract::<u64>().map(Number::from)).map_err(
            |_| {
                PyOverflowError::new_err(format!(
                    "{obj} does not fit in a 64-bit integer, the range set_element writes"
                ))
            },
        );
    }
    obj.extract::<f64>().map(Number::Float).map_err(|_| {
        PyTypeError::new_err(format!(
            "set_element() writes an int or a float, not {}",
            obj.get_type().qualname().map(|n| n.to_string()).unwrap_or_default()
        ))
    })
}

/// The number `set_cell` writes into a cell of a numeric column; `None` for a missing cell.
/// Floats go into float columns only; ints into float columns become floats when exact.
fn cell_number(obj: &Bound<'_, PyAny>, element: ElementType, unit: Unit) -> PyResult<Option<Number>> {
    let py = obj.py();
    if obj.is_none() {
        return Ok(None);
    }
    let is_float = matches!(element, ElementType::F32 | ElementType::F64);
    if unit != Unit::Plain && !obj.is_instance_of::<PyFloat>() && !obj.hasattr("__index__")? {
        return time_count(obj, unit).map(|c| c.map(Number::Int));
    }
    let n = number(obj).map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(py) {
            PyOverflowError::new_err(format!("{obj} does not fit in a 64-bit integer, the range set_cell writes"))
        } else {
            PyTypeError::new_err(format!(
                "set_cell() writes an int, float, bool or None, not {}",
                obj.get_type().qualname().map(|n| n.to_string()).unwrap_or_default()
            ))
        }
    })?;
    let exact = |v: f64, back: bool| {
        if back {
            Ok(Number::Float(v))
        } else {
            Err(PyTypeError::new_err(format!("{obj} does not fit a {} cell exactly", element.name())))
        }
    };
    Ok(Some(match n {
        Number::Int(v) if is_float => exact(v as f64, (v as f64) as i128 == v as i128)?,
        Number::UInt(v) if is_float => exact(v as f64, (v as f64) as i128 == v as i128)?,
        other => other,
    }))
}

/// The count of a date or date-time column (days, or its unit since 1970-01-01) for a
/// `numpy.datetime64`, a `datetime.date` or `datetime.datetime` (an aware one as its UTC
/// instant), or ISO text; `None` for NaT. A value finer than the unit does not fit.
fn time_count(obj: &Bound<'_, PyAny>, unit: Unit) -> PyResult<Option<i64>> {
    let py = obj.py();
    let numpy = py.import("numpy")?;
    let mut value = obj.clone();
    let datetime = py.import("datetime")?;
    if value.is_instance(&datetime.getattr("datetime")?)? && !value.getattr("tzinfo")?.is_none() {
        let utc = datetime.getattr("timezone")?.getattr("utc")?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("tzinfo", py.None())?;
        value = value.call_method1("astimezone", (utc,))?.call_method("replace", (), Some(&kwargs))?;
    }
    let given = numpy.call_method1("datetime64", (&value,)).map_err(|_| {
        PyTypeError::new_err(format!(
            "set_cell() writes a date or date-time cell from an int count, numpy.datetime64, datetime.date, datetime.datetime or ISO text, not {}",
            obj.get_type().qualname().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    if numpy.call_method1("isnat", (&given,))?.is_truthy()? {
        return Ok(None);
    }
    let unit_name = match unit {
        Unit::Date => "D",
        Unit::Seconds => "s",
        Unit::Millis => "ms",
        Unit::Micros => "us",
        _ => "ns",
    };
    let converted = given.call_method1("astype", (format!("datetime64[{unit_name}]"),))?;
    let back = converted.call_method1("astype", (given.getattr("dtype")?,))?;
    if !back.eq(&given)? || numpy.call_method1("isnat", (&converted,))?.is_truthy()? {
        return Err(PyTypeError::new_err(format!("{given} does not fit a cell of unit {unit_name} exactly")));
    }
    Ok(Some(converted.call_method1("astype", ("int64",))?.extract()?))
}

/// What `[]` does with the key; it decides the exception for a key of a type the root
/// cannot hold: KeyError for a lookup or deletion (the key is simply absent), TypeError
/// for a store (the key could never be added).
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyUse {
    Lookup,
    Store,
}

/// A key error carrying the key, as a dict raises it, with the pointer as `.path`.
fn missing_key(py: Python<'_>, key: &Bound<'_, PyAny>, pointer: &str) -> PyErr {
    let e = NotFoundError::new_err((key.clone().unbind(),));
    let _ = e.value(py).setattr("path", pointer);
    e
}

impl Editor {
    fn core(&self) -> PyResult<&leafwire::Editor> {
        self.core.as_ref().ok_or_else(closed)
    }

    fn core_mut(&mut self) -> PyResult<&mut leafwire::Editor> {
        self.core.as_mut().ok_or_else(closed)
    }

    /// Runs a change on the core editor, without the GIL. A panic there (a bug) may leave
    /// the bytes half-edited, so the editor closes before the panic is raised as
    /// `DecodeError` (guard.rs): nothing half-done can be committed.
    fn change<R: Send>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&mut leafwire::Editor) -> leafwire::Result<R> + Send,
    ) -> PyResult<leafwire::Result<R>> {
        let core = self.core_mut()?;
        let result = crate::guard::catch(|| py.detach(|| f(core)));
        if result.is_err() {
            self.core = None;
        }
        result
    }

    /// The value at `pointer` as `loads` gives it; `None` when the pointer names nothing.
    /// The core validated the document at its own depth limit, which the cap exceeds.
    fn value<'py>(&self, py: Python<'py>, pointer: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.read(py, pointer, Arrays::Numpy, crate::MAX_DEPTH_CAP)
    }

    /// The value at `pointer` as Python objects; `None` when the pointer names nothing.
    fn read<'py>(
        &self,
        py: Python<'py>,
        pointer: &str,
        arrays: Arrays,
        max_depth: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let doc = self.core()?.document().map_err(|e| err(py, e))?;
        let node = match doc.pointer(pointer) {
            Ok(node) => node,
            Err(e) if e.category() == Category::NotFound => return Ok(None),
            Err(e) => return Err(to_py(py, e, Side::Decode)),
        };
        // No owner: typed arrays are copied, never views of bytes that edits move.
        let mut decoder = Decoder::new(py, arrays, max_depth, None, doc.as_bytes());
        decoder.value(&node, 0).map(Some)
    }

    fn exists(&self, py: Python<'_>, pointer: &str) -> PyResult<bool> {
        let doc = self.core()?.document().map_err(|e| err(py, e))?;
        match doc.pointer(pointer) {
            Ok(_) => Ok(true),
            Err(e) if e.category() == Category::NotFound => Ok(false),
            Err(e) => Err(to_py(py, e, Side::Decode)),
        }
    }

    fn root_kind(&self, py: Python<'_>) -> PyResult<Kind> {
        Ok(self.core()?.document().map_err(|e| err(py, e))?.root().kind())
    }

    fn root_len(&self, py: Python<'_>) -> PyResult<usize> {
        let doc = self.core()?.document().map_err(|e| err(py, e))?;
        doc.root().len().map_err(|e| to_py(py, e, Side::Decode))
    }

    /// The pointer of the root's child that `key` names, checked the way a dict (object,
    /// intmap) or a list (array, negative indexes from the end) checks it.
    fn child_pointer(&self, key: &Bound<'_, PyAny>, key_use: KeyUse) -> PyResult<String> {
        let py = key.py();
        let wrong_key = |expected: &str| -> PyErr {
            if key_use == KeyUse::Store {
                let name = key.get_type().qualname().map(|n| n.to_string()).unwrap_or_default();
                PyTypeError::new_err(format!("the root is {expected}, not {name}"))
            } else {
                NotFoundError::new_err((key.clone().unbind(),))
            }
        };
        match self.root_kind(py)? {
            Kind::Object => match key.cast::<PyString>() {
                Ok(s) => Ok(format!("/{}", escape(s.to_str()?))),
                Err(_) => Err(wrong_key("an object: its keys are str")),
            },
            Kind::IntMap => match key.cast::<PyInt>().ok().and_then(|k| k.extract::<i64>().ok()) {
                Some(k) => Ok(format!("/{k}")),
                None => Err(wrong_key("an intmap: its keys are 64-bit ints")),
            },
            Kind::Array => {
                if key.is_instance_of::<PySlice>() {
                    return Err(PyTypeError::new_err("Editor indexes take one int, not a slice"));
                }
                let i: isize = key.extract().map_err(|_| {
                    let name = key.get_type().qualname().map(|n| n.to_string()).unwrap_or_default();
                    PyTypeError::new_err(format!("array indices must be integers, not {name}"))
                })?;
                let len = self.root_len(py)?;
                let resolved = if i < 0 { i + len as isize } else { i };
                if resolved < 0 || resolved as usize >= len {
                    return Err(PyIndexError::new_err(format!("index {i} out of range for array of length {len}")));
                }
                Ok(format!("/{resolved}"))
            }
            kind => Err(PyTypeError::new_err(format!(
                "the root is a {kind}, not an object, intmap or array; use set(\"\", value)"
            ))),
        }
    }

    fn write_back(&self, py: Python<'_>, array: &Py<PyByteArray>) -> PyResult<()> {
        let bytes = self.core()?.as_bytes();
        let array = array.bind(py);
        array.resize(bytes.len())?;
        // SAFETY: the slice is used only for this copy, with the GIL held and no Python
        // code running in between, so nothing can resize or free the bytearray meanwhile.
        unsafe { array.as_bytes_mut() }.copy_from_slice(bytes);
        Ok(())
    }
}

fn closed() -> PyErr {
    PyValueError::new_err("operation on a closed Editor")
}

guarded! {
#[pymethods]
impl Editor {
    // ---- reads ----

    /// The value at a JSON Pointer (RFC 6901; "" is the whole document) as Python values,
    /// typed arrays as numpy copies. Raises NotFoundError (a KeyError) when it names nothing.
    fn pointer<'py>(&self, py: Python<'py>, pointer: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.value(py, pointer)? {
            Some(value) => Ok(value),
            None => Err(missing_key(py, &PyString::new(py, pointer), pointer)),
        }
    }

    /// The value at a JSON Pointer, or `default` when the pointer names nothing. Unlike
    /// `Document.get`, the argument is a pointer, as for every other method of the editor.
    #[pyo3(signature = (pointer, default = None))]
    fn get<'py>(&self, py: Python<'py>, pointer: &str, default: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        match self.value(py, pointer)? {
            Some(value) => Ok(value),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    /// The whole document as Python values (as `loads` gives it; typed arrays are copies).
    #[pyo3(signature = (*, arrays = "numpy", max_depth = 128))]
    fn to_python<'py>(&self, py: Python<'py>, arrays: &str, max_depth: usize) -> PyResult<Bound<'py, PyAny>> {
        let found = self.read(py, "", Arrays::parse(arrays)?, crate::check_depth(max_depth)?)?;
        Ok(found.expect("the root always exists"))
    }

    /// The current bytes: a valid document that any reader reads as it is.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.core()?.as_bytes()))
    }

    /// Length of the document in bytes.
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        Ok(self.core()?.as_bytes().len())
    }

    /// Bytes that no longer belong to the value (reclaimed by `compact()`).
    #[getter]
    fn garbage(&self) -> PyResult<u64> {
        Ok(self.core()?.garbage())
    }

    #[getter]
    fn closed(&self) -> PyResult<bool> {
        Ok(self.core.is_none())
    }

    fn __getitem__<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = key.py();
        let pointer = self.child_pointer(key, KeyUse::Lookup)?;
        self.value(py, &pointer)?.ok_or_else(|| missing_key(py, key, &pointer))
    }

    /// A key of an object or intmap root; an element of an array root (as `in` on a list).
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = key.py();
        if self.root_kind(py)? == Kind::Array {
            return self.value(py, "")?.expect("the root always exists").contains(key);
        }
        match self.child_pointer(key, KeyUse::Lookup) {
            Ok(pointer) => self.exists(py, &pointer),
            Err(e) if e.is_instance_of::<NotFoundError>(py) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.root_len(py)
    }

    /// The keys of an object or intmap root, or the elements of an array root, as they
    /// are when iteration starts (edits during the loop do not change what it yields).
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let doc = self.core()?.document().map_err(|e| err(py, e))?;
        let root = doc.root();
        let snapshot = match root.kind() {
            Kind::Object => {
                let keys = root.entries().map_err(|e| err(py, e))?.map(|e| e.map(|(k, _)| k)).collect::<Result<Vec<_>, _>>();
                PyList::new(py, keys.map_err(|e| err(py, e))?)?.into_any()
            }
            Kind::IntMap => {
                let keys = root.int_entries().map_err(|e| err(py, e))?.map(|e| e.map(|(k, _)| k)).collect::<Result<Vec<_>, _>>();
                PyList::new(py, keys.map_err(|e| err(py, e))?)?.into_any()
            }
            Kind::Array => self.value(py, "")?.expect("the root always exists"),
            kind => return Err(PyTypeError::new_err(format!("the root is a {kind}, which is not iterable"))),
        };
        Ok(snapshot.try_iter()?.into_any())
    }

    // ---- edits ----

    /// Replaces the value at a JSON Pointer, or adds it when the last token is a missing
    /// object key (or intmap key), or `-` (or the length) of an array.
    fn set(&mut self, pointer: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = value.py();
        let value = to_value(value)?;
        self.change(py, |core| core.set(pointer, &value))?.map_err(|e| edit_err(py, e))
    }

    /// Inserts into an array before the index that the pointer's last token names
    /// (`-` or the length appends).
    fn insert(&mut self, pointer: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = value.py();
        let value = to_value(value)?;
        self.change(py, |core| core.insert(pointer, &value))?.map_err(|e| edit_err(py, e))
    }

    /// Appends to the array at `at` (a JSON Pointer; the root by default).
    #[pyo3(signature = (value, /, *, at = ""))]
    fn append(&mut self, value: &Bound<'_, PyAny>, at: &str) -> PyResult<()> {
        let py = value.py();
        let value = to_value(value)?;
        self.change(py, |core| core.push(at, &value))?.map_err(|e| edit_err(py, e))
    }

    /// Removes an object or intmap key, or an array element (later ones shift down).
    fn delete(&mut self, py: Python<'_>, pointer: &str) -> PyResult<()> {
        self.change(py, |core| core.delete(pointer))?.map_err(|e| edit_err(py, e))
    }

    /// Renames the key that the pointer names (a str, or an int in an intmap).
    fn rename(&mut self, pointer: &str, new_key: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = new_key.py();
        let new_key = if let Ok(s) = new_key.cast::<PyString>() {
            s.to_str()?.to_owned()
        } else if let Ok(k) = new_key.cast::<PyInt>() {
            k.extract::<i64>()?.to_string()
        } else {
            return Err(PyTypeError::new_err("rename() takes a str key (an object) or an int key (an intmap)"));
        };
        self.change(py, |core| core.rename(pointer, &new_key))?.map_err(|e| edit_err(py, e))
    }

    /// Writes element `index` (flat, row-major; negative counts from the end) of the typed
    /// array at a pointer, in place. The number must fit the element type; an int written
    /// into a float array becomes a float (as in numpy), unless the array has an integer
    /// mask (spec §5.2), which records it as an integer.
    fn set_element(&mut self, pointer: &str, index: isize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = value.py();
        let value = number(value)?;
        let (count, element) = {
            let doc = self.core()?.document().map_err(|e| err(py, e))?;
            let node = doc.pointer(pointer).map_err(|e| to_py(py, e, Side::Decode))?;
            let typed = node.typed().map_err(|e| to_py(py, e, Side::Decode))?;
            (typed.element_count(), typed.element_type())
        };
        let resolved = if index < 0 { index + count as isize } else { index };
        if resolved < 0 || resolved as usize >= count {
            return Err(PyIndexError::new_err(format!("index {index} out of range for a typed array of {count} elements")));
        }
        let index = resolved as usize;
        let is_float = matches!(element, ElementType::F32 | ElementType::F64);
        self.change(py, |core| match core.set_element(pointer, index, value) {
            // Only a masked f64 array takes an integer as such; a failed write changed
            // nothing, so it is retried as the float the other float arrays hold.
            Err(e) if is_float && e.category() == Category::WrongType => match value {
                Number::Int(v) => core.set_element(pointer, index, Number::Float(v as f64)),
                Number::UInt(v) => core.set_element(pointer, index, Number::Float(v as f64)),
                Number::Float(_) => Err(e),
            },
            other => other,
        })?
        .map_err(|e| edit_err(py, e))
    }

    /// Writes cell `row` (negative counts from the end) of the numeric column `column` of
    /// the table at a pointer, in place (spec §15.3). `value` is an int, float or bool that
    /// the column's element type holds exactly (an int into a float column becomes a
    /// float); for a date or date-time column, its count (days, or seconds... since 1970)
    /// or a `numpy.datetime64`, `datetime.date`, `datetime.datetime` (an aware one as its
    /// UTC instant) or ISO text, which must not be finer than the column's unit. `None`
    /// (or NaT) makes the cell missing, which needs a column with a validity bitmap (one
    /// that had a missing cell when written). String cells are not edited in place: set a
    /// new table. Errors leave the document unchanged: NotFoundError (the pointer or the
    /// column), IndexError (the row), TypeError (a string column, a value that does not
    /// fit), ValueError (None in a column without a validity bitmap).
    fn set_cell(&mut self, pointer: &str, column: &str, row: isize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = value.py();
        let (rows, column_type, unit) = {
            let doc = self.core()?.document().map_err(|e| err(py, e))?;
            let node = doc.pointer(pointer).map_err(|e| to_py(py, e, Side::Decode))?;
            if node.kind() != Kind::Table {
                return Err(PyTypeError::new_err(format!("set_cell() edits a table, not the {} at {pointer:?}", node.kind())));
            }
            let table = node.table().map_err(|e| err(py, e))?;
            let c = match table.get(column) {
                Ok(c) => c,
                Err(e) if e.category() == Category::NotFound => {
                    return Err(missing_key(py, &PyString::new(py, column), pointer));
                }
                Err(e) => return Err(err(py, e)),
            };
            (table.rows(), c.column_type(), c.unit())
        };
        let ColumnType::Numbers(element) = column_type else {
            return Err(PyTypeError::new_err(format!(
                "column {column:?} holds strings, which are not edited in place: set a new table to change them"
            )));
        };
        let resolved = if row < 0 { row + rows as isize } else { row };
        if resolved < 0 || resolved as usize >= rows {
            return Err(PyIndexError::new_err(format!("row {row} out of range for a table of {rows} rows")));
        }
        let row = resolved as usize;
        let value = cell_number(value, element, unit)?;
        self.change(py, |core| core.set_cell(pointer, column, row, value))?.map_err(|e| match e.category() {
            Category::Unsupported => {
                let message = e.to_string();
                let e = PyValueError::new_err(message);
                let _ = e.value(py).setattr("category", "unsupported");
                let _ = e.value(py).setattr("path", pointer);
                e
            }
            _ => edit_err(py, e),
        })
    }

    fn __setitem__(&mut self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let pointer = self.child_pointer(key, KeyUse::Store)?;
        self.set(&pointer, value)
    }

    fn __delitem__(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = key.py();
        let pointer = self.child_pointer(key, KeyUse::Lookup)?;
        match self.delete(py, &pointer) {
            Err(e) if e.is_instance_of::<NotFoundError>(py) => Err(missing_key(py, key, &pointer)),
            other => other,
        }
    }

    /// Rewrites the document canonically, dropping all garbage. For a file, the next
    /// commit writes a new file and renames it over the old one.
    fn compact(&mut self, py: Python<'_>) -> PyResult<()> {
        self.change(py, |core| core.compact())?.map_err(|e| edit_err(py, e))
    }

    /// Makes the edits visible: for a file, durably and atomically (spec §8.4); for a
    /// bytearray, by overwriting it with the edited bytes (resizing it).
    fn commit(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Target::ByteArray(array) = &self.target {
            return self.write_back(py, array);
        }
        self.change(py, |core| core.commit())?.map_err(|e| to_py(py, e, Side::Decode))
    }

    /// The same as `commit()`.
    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        self.commit(py)
    }

    /// Drops the editor (and the file handle) without committing.
    fn close(&mut self) -> PyResult<()> {
        self.core = None;
        Ok(())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        slf.core()?;
        Ok(slf)
    }

    /// Commits on a clean exit, not after an exception; closes either way.
    #[pyo3(signature = (*exc_info))]
    fn __exit__(&mut self, py: Python<'_>, exc_info: &Bound<'_, PyTuple>) -> PyResult<bool> {
        let clean = exc_info.get_item(0).map_or(true, |t| t.is_none());
        let result = if clean && self.core.is_some() { self.commit(py) } else { Ok(()) };
        self.core = None;
        result.map(|()| false)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let target = match &self.target {
            Target::File(path) => format!("file {}", path.display()),
            Target::ByteArray(_) => "bytearray".to_owned(),
        };
        let Some(core) = &self.core else { return Ok(format!("<leafwire.Editor of a {target} (closed)>")) };
        Ok(format!(
            "<leafwire.Editor of a {target}: {} bytes, {} garbage, root: {}>",
            core.as_bytes().len(),
            core.garbage(),
            self.root_kind(py)?
        ))
    }
}
}

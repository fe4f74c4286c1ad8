//! Tables (spec §15) in Python: `leafwire.Table`, a table inside an open document whose
//! columns come out as numpy arrays over the document's bytes and as a `pyarrow.Table`
//! over the same buffers (and through the Arrow PyCapsule stream protocol); what `loads`
//! and `to_python` make of a table; `Document.tables()`; `Table.from_columns`.
//!
//! A `Table` checks the table's layout (§15.1: head, entries, where every buffer is; O(columns))
//! when it is made, and a string or bool column's cells (offsets, UTF-8, bytes 0/1; O(rows)
//! of that column) before handing that column out: numpy and Arrow trust them, so a
//! malformed table is a `DecodeError` here, never a wrong read later. Numbers need no check
//! to be read safely, so reading one column of a big table touches that column only.
//! `loads` and `to_python`, which read every cell anyway, check the whole table.

use leafwire::format::table::{check_layout, check_table, TableBlock};
use leafwire::{ColumnBuilder, ColumnRef, ColumnType, ElementType, Kind, Node, TableBuilder, TablePart, TableRef, Unit, Value};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::arrays;
use crate::document::Document;
use crate::errors::decode_error;
use crate::guard::guarded;
use crate::loads_general::{err, Arrays, Budget};

/// The table of `node`, checked against every rule of §15.1.
fn checked<'a>(py: Python<'_>, buf: &'a [u8], node: &Node<'a>) -> PyResult<TableRef<'a>> {
    check_table(buf, node.offset()).map_err(|e| err(py, e))?;
    node.table().map_err(|e| err(py, e))
}

/// Checks the cells of a column that numpy or Arrow would trust: strings (offsets and
/// UTF-8) and bools (bytes 0 or 1).
fn trusted(py: Python<'_>, c: &ColumnRef<'_>) -> PyResult<()> {
    if matches!(c.column_type(), ColumnType::Strings { .. } | ColumnType::Numbers(ElementType::Bool)) {
        c.check().map_err(|e| err(py, e))?;
    }
    Ok(())
}

/// What reading the whole table costs against a decoder's budget (its body's length).
pub fn cost(buf: &[u8], node: &Node<'_>) -> u64 {
    TableBlock::parse(buf, node.offset()).map_or(1, |t| Budget::block_cost(t.len))
}

/// Cell `i` of a column as a Python value: None when missing, bool, int, float or str
/// (dates and date-times as their counts, the value of §15.2).
fn cell<'py>(py: Python<'py>, c: &ColumnRef<'_>, i: usize) -> PyResult<Bound<'py, PyAny>> {
    if !c.is_valid(i) {
        return Ok(py.None().into_bound(py));
    }
    if let ColumnType::Strings { .. } = c.column_type() {
        let s = c.str(i).map_err(|e| err(py, e))?.unwrap_or_default();
        return Ok(PyString::new(py, s).into_any());
    }
    Ok(match c.cell(i).map_err(|e| err(py, e))? {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Int(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt(v) => v.into_pyobject(py)?.into_any(),
        Value::F64(v) => v.into_pyobject(py)?.into_any(),
        Value::F32(v) => (v as f64).into_pyobject(py)?.into_any(),
        Value::Null => py.None().into_bound(py),
        other => return Err(decode_error(py, format!("unexpected table cell {other:?}"), None)),
    })
}

fn cells<'py>(py: Python<'py>, c: &ColumnRef<'_>) -> PyResult<Bound<'py, PyAny>> {
    let list = PyList::empty(py);
    for i in 0..c.len() {
        list.append(cell(py, c, i)?)?;
    }
    Ok(list.into_any())
}

/// A numeric column's data as a flat numpy array of its element type (a view when `owner`
/// keeps the bytes alive, else a copy).
fn numbers<'py>(
    py: Python<'py>,
    c: &ColumnRef<'_>,
    owner: Option<&Bound<'py, PyAny>>,
    offset: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let ColumnType::Numbers(et) = c.column_type() else { unreachable!("numbers() of a string column") };
    arrays::flat(py, et, c.data(), owner, offset)
}

/// A table as `loads` and `to_python` give it: a dict from column name to its cells. With
/// `arrays="numpy"`, a numeric column without missing cells is a one-dimensional numpy
/// array of its element type (dates and date-times as their int32/int64 counts); every
/// other column is a list (None for a missing cell). With `arrays="list"`, all are lists.
pub fn value<'py>(
    py: Python<'py>,
    node: &Node<'_>,
    mode: Arrays,
    owner: Option<&Bound<'py, PyAny>>,
    buf: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    let t = checked(py, buf, node)?;
    let dict = PyDict::new(py);
    for c in t.columns() {
        let c = c.map_err(|e| err(py, e))?;
        let name = c.name().map_err(|e| err(py, e))?;
        let column = match c.column_type() {
            ColumnType::Numbers(_) if mode == Arrays::Numpy && c.null_count() == 0 => {
                numbers(py, &c, owner, node.offset())?
            }
            _ => cells(py, &c)?,
        };
        dict.set_item(name, column)?;
    }
    Ok(dict.into_any())
}

/// The numpy datetime64 unit of a date or date-time column.
fn numpy_unit(unit: Unit) -> &'static str {
    match unit {
        Unit::Date => "D",
        Unit::Seconds => "s",
        Unit::Millis => "ms",
        Unit::Micros => "us",
        Unit::Nanos => "ns",
        Unit::Plain => "",
    }
}

fn arrow_unit(unit: Unit) -> &'static str {
    match unit {
        Unit::Millis => "ms",
        Unit::Micros => "us",
        Unit::Nanos => "ns",
        _ => "s",
    }
}

/// The pyarrow type factory of an element type.
fn arrow_type(et: ElementType) -> &'static str {
    match et {
        ElementType::Bool => "bool_",
        ElementType::I8 => "int8",
        ElementType::I16 => "int16",
        ElementType::I32 => "int32",
        ElementType::I64 => "int64",
        ElementType::U8 => "uint8",
        ElementType::U16 => "uint16",
        ElementType::U32 => "uint32",
        ElementType::U64 => "uint64",
        ElementType::F32 => "float32",
        ElementType::F64 => "float64",
    }
}

/// A table inside an open document (spec §15).
#[pyclass(frozen, module = "leafwire", name = "Table")]
pub struct Table {
    doc: Py<Document>,
    node: Node<'static>,
}

impl Table {
    /// The `Table` of a table node of `doc`, its layout checked (§15.1; cells are checked
    /// column by column as they are handed out).
    pub fn new<'py>(py: Python<'py>, doc: &Bound<'py, Document>, node: Node<'static>) -> PyResult<Bound<'py, Table>> {
        check_layout(doc.get().bytes(), node.offset()).map_err(|e| err(py, e))?;
        Bound::new(py, Table { doc: doc.clone().unbind(), node })
    }

    /// What a JSON Pointer names inside a table (spec §15.2), as the table's own indexing
    /// gives it: the column (`t["col"]`: a numpy view, datetime64, masked, or a list), or
    /// one cell of it (None when missing).
    pub fn part<'py>(py: Python<'py>, doc: &Bound<'py, Document>, part: TablePart<'static>) -> PyResult<Bound<'py, PyAny>> {
        let table = Table::new(py, doc, part.table)?;
        let column = table.get().column(py, &part.column)?;
        match part.row {
            None => Ok(column),
            Some(row) if !part.column.is_valid(row) => Ok(py.None().into_bound(py)),
            Some(row) => column.get_item(row),
        }
    }

    fn view(&self, py: Python<'_>) -> PyResult<TableRef<'static>> {
        self.node.table().map_err(|e| err(py, e))
    }

    fn column_ref(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<ColumnRef<'static>> {
        let t = self.view(py)?;
        if let Ok(name) = key.cast::<PyString>() {
            let name = name.to_str()?;
            return match t.get(name) {
                Ok(c) => Ok(c),
                Err(e) if e.category() == leafwire::Category::NotFound => Err(PyKeyError::new_err(name.to_owned())),
                Err(e) => Err(err(py, e)),
            };
        }
        let i: isize =
            key.extract().map_err(|_| PyTypeError::new_err("a column is named by a str or numbered by an int"))?;
        let n = t.column_count() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "column {i} out of range for a table of {n} columns"
            )));
        }
        t.column(j as usize).map_err(|e| err(py, e))
    }

    /// A column as numpy (numbers) or a list (strings); see `__getitem__`.
    fn column<'py>(&self, py: Python<'py>, c: &ColumnRef<'static>) -> PyResult<Bound<'py, PyAny>> {
        trusted(py, c)?;
        let ColumnType::Numbers(_) = c.column_type() else { return cells(py, c) };
        let doc = self.doc.bind(py).as_any();
        let mut array = numbers(py, c, Some(doc), self.node.offset())?;
        match c.unit() {
            Unit::Plain => {}
            // numpy's datetime64 is 64-bit: the int32 days are widened (a copy).
            Unit::Date => array = array.call_method1("astype", ("datetime64[D]",))?,
            unit => array = array.call_method1("view", (format!("datetime64[{}]", numpy_unit(unit)),))?,
        }
        if let Some(bits) = c.validity().filter(|_| c.null_count() > 0) {
            let numpy = py.import("numpy")?;
            let packed = PyBytes::new(py, bits);
            let unpacked = numpy.call_method1("frombuffer", (packed, "u1"))?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("bitorder", "little")?;
            kwargs.set_item("count", c.len())?;
            let valid = numpy.call_method("unpackbits", (unpacked,), Some(&kwargs))?;
            let mask = numpy.call_method1("logical_not", (valid,))?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("mask", mask)?;
            array = numpy.getattr("ma")?.call_method("masked_array", (array,), Some(&kwargs))?;
        }
        Ok(array)
    }

    fn arrow_column<'py>(
        &self,
        py: Python<'py>,
        pa: &Bound<'py, PyModule>,
        c: &ColumnRef<'static>,
    ) -> PyResult<Bound<'py, PyAny>> {
        trusted(py, c)?;
        let doc = self.doc.bind(py);
        let buffer = |s: &[u8]| pa.call_method1("foreign_buffer", (s.as_ptr() as usize, s.len(), doc));
        let validity = match c.validity() {
            Some(bits) => buffer(bits)?,
            None => py.None().into_bound(py),
        };
        let (ty, buffers) = match c.column_type() {
            ColumnType::Strings { large } => {
                let ty = pa.call_method0(if large { "large_string" } else { "string" })?;
                (ty, vec![validity, buffer(c.data())?, buffer(c.string_data())?])
            }
            ColumnType::Numbers(ElementType::Bool) => {
                // Arrow's booleans are bits: the bytes 0/1 are packed (a copy).
                let numpy = py.import("numpy")?;
                let bytes = numpy.call_method1("frombuffer", (PyBytes::new(py, c.data()), "u1"))?;
                let kwargs = PyDict::new(py);
                kwargs.set_item("bitorder", "little")?;
                let bits = numpy.call_method("packbits", (bytes,), Some(&kwargs))?;
                (pa.call_method0("bool_")?, vec![validity, pa.call_method1("py_buffer", (bits,))?])
            }
            ColumnType::Numbers(et) => {
                let ty = match c.unit() {
                    Unit::Plain => pa.call_method0(arrow_type(et))?,
                    Unit::Date => pa.call_method0("date32")?,
                    unit => {
                        let zone = c.zone().map_err(|e| err(py, e))?;
                        let kwargs = PyDict::new(py);
                        if !zone.is_empty() {
                            kwargs.set_item("tz", zone)?;
                        }
                        pa.call_method("timestamp", (arrow_unit(unit),), Some(&kwargs))?
                    }
                };
                (ty, vec![validity, buffer(c.data())?])
            }
        };
        let kwargs = PyDict::new(py);
        kwargs.set_item("null_count", c.null_count())?;
        pa.getattr("Array")?.call_method("from_buffers", (ty, c.len(), buffers), Some(&kwargs))
    }
}

guarded! {
#[pymethods]
impl Table {
    /// The number of rows.
    #[getter]
    fn rows(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.view(py)?.rows())
    }

    /// The column names, in order.
    #[getter]
    fn columns(&self, py: Python<'_>) -> PyResult<Vec<&'static str>> {
        let t = self.view(py)?;
        t.columns().map(|c| c.and_then(|c| c.name())).collect::<leafwire::Result<Vec<_>>>().map_err(|e| err(py, e))
    }

    /// Byte offset of the table block in the document.
    #[getter]
    fn offset(&self) -> PyResult<u64> {
        Ok(self.node.offset())
    }

    #[getter]
    fn document(&self, py: Python<'_>) -> PyResult<Py<Document>> {
        Ok(self.doc.clone_ref(py))
    }

    /// The number of rows (as for a pandas DataFrame).
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.view(py)?.rows())
    }

    fn __contains__(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        Ok(self.columns(py)?.contains(&name))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, self.columns(py)?)?.try_iter()?.into_any())
    }

    fn keys(&self, py: Python<'_>) -> PyResult<Vec<&'static str>> {
        self.columns(py)
    }

    /// A column, by name or number. Numbers: a read-only numpy array over the document's
    /// bytes (no copy), of the column's element type; date-times are `datetime64[s|ms|us|ns]`
    /// views of the same bytes (the counts; a zoned column's are UTC instants), dates
    /// `datetime64[D]` (a copy: numpy's datetime64 is 64-bit, the column's days 32-bit).
    /// A column with missing cells comes as a `numpy.ma.MaskedArray` whose data is that
    /// view and whose mask is True where a cell is missing. Strings: a list of str, None
    /// where missing.
    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.column_ref(py, key)?;
        self.column(py, &c)
    }

    /// The kind of a column: its element type name (`"f64"`, `"i32"`, `"bool"`...) for
    /// numbers, `"date"`, `"timestamp[ms]"`... for dates and date-times, `"string"` or
    /// `"large_string"`; and its time zone (empty when naive or not a date-time).
    fn column_type(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<(String, &'static str)> {
        let c = self.column_ref(py, key)?;
        let zone = c.zone().map_err(|e| err(py, e))?;
        let kind = match (c.column_type(), c.unit()) {
            (ColumnType::Strings { large: false }, _) => "string".to_owned(),
            (ColumnType::Strings { large: true }, _) => "large_string".to_owned(),
            (ColumnType::Numbers(et), Unit::Plain) => et.name().to_owned(),
            (_, Unit::Date) => "date".to_owned(),
            (_, unit) => format!("timestamp[{}]", numpy_unit(unit)),
        };
        Ok((kind, zone))
    }

    /// How many cells of a column are missing.
    fn null_count(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.column_ref(py, key)?.null_count())
    }

    /// The table as `loads` gives it: a dict from column name to a numpy array (numeric
    /// columns without missing cells, views of the document) or a list of cells.
    #[pyo3(signature = (*, arrays = "numpy"))]
    fn to_python<'py>(&self, py: Python<'py>, arrays: &str) -> PyResult<Bound<'py, PyAny>> {
        let doc = self.doc.bind(py);
        value(py, &self.node, Arrays::parse(arrays)?, Some(doc.as_any()), doc.get().bytes())
    }

    /// The table as a `pyarrow.Table` over the document's buffers, without copying: each
    /// column's data, offsets, string bytes and validity bitmap become
    /// `pyarrow.foreign_buffer`s kept alive by the document. Bool columns are the
    /// exception: their bytes are packed into Arrow's bits (a copy). Dates are `date32`,
    /// date-times `timestamp(unit, tz)` (tz None when naive), strings `string` (u32
    /// offsets) or `large_string`.
    ///
    /// `columns` (names or numbers) reads only those columns, in that order: the others
    /// are not touched, not even to check their strings.
    #[pyo3(signature = (columns = None))]
    fn to_arrow<'py>(&self, py: Python<'py>, columns: Option<Vec<Bound<'py, PyAny>>>) -> PyResult<Bound<'py, PyAny>> {
        let pa = py.import("pyarrow")?;
        let picked: Vec<ColumnRef<'static>> = match columns {
            Some(keys) => keys.iter().map(|k| self.column_ref(py, k)).collect::<PyResult<_>>()?,
            None => self.view(py)?.columns().collect::<Result<_, _>>().map_err(|e| err(py, e))?,
        };
        let mut arrays = Vec::with_capacity(picked.len());
        let mut names = Vec::with_capacity(picked.len());
        for c in &picked {
            names.push(c.name().map_err(|e| err(py, e))?);
            arrays.push(self.arrow_column(py, &pa, c)?);
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("names", names)?;
        pa.getattr("Table")?.call_method("from_arrays", (arrays,), Some(&kwargs))
    }

    /// The Arrow PyCapsule stream protocol: `pyarrow.table(t)`, `polars.DataFrame(t)`,
    /// DuckDB and other Arrow consumers read the table through it (see `to_arrow`).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(&self, py: Python<'py>, requested_schema: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        self.to_arrow(py, None)?.call_method1("__arrow_c_stream__", (requested_schema,))
    }

    /// A `pandas.DataFrame` (through `to_arrow`, with its `columns`).
    #[pyo3(signature = (columns = None))]
    fn to_pandas<'py>(&self, py: Python<'py>, columns: Option<Vec<Bound<'py, PyAny>>>) -> PyResult<Bound<'py, PyAny>> {
        self.to_arrow(py, columns)?.call_method0("to_pandas")
    }

    /// Leafwire bytes of a new document holding one table made from `columns`, a dict from
    /// column name to a one-dimensional numpy array (bool, int, uint, float of any width;
    /// `datetime64[D]` → dates, `datetime64[s|ms|us|ns]` → date-times; a masked array's
    /// masked cells and NaT are missing) or a list (of str and None → a string column; of
    /// bools, ints or floats and None → bool, i64 or f64). `zones` gives date-time columns
    /// a time zone (`"UTC"`, an IANA name, `"+01:00"`). The root is the table, or
    /// `{"name": name, "data": table}` when `name` is given.
    #[staticmethod]
    #[pyo3(signature = (columns, /, *, name = None, zones = None))]
    fn from_columns<'py>(py: Python<'py>, columns: &Bound<'py, PyDict>, name: Option<&str>, zones: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyBytes>> {
        let mut builder = TableBuilder::new();
        for (key, column) in columns.iter() {
            let key: String = key.extract().map_err(|_| PyTypeError::new_err("column names are str"))?;
            let zone: String = match zones.map(|z| z.get_item(&key)).transpose()?.flatten() {
                Some(z) => z.extract()?,
                None => String::new(),
            };
            builder.push_column(build_column(py, &key, &column, zone)?);
        }
        let table = builder.finish().map_err(|e| crate::errors::to_py(py, e, crate::errors::Side::Encode))?;
        let value = match name {
            Some(name) => {
                let mut map = leafwire::Map::default();
                map.insert("name".to_owned(), Value::String(name.to_owned()));
                map.insert("data".to_owned(), Value::Table(table));
                Value::Object(map)
            }
            None => Value::Table(table),
        };
        let bytes = leafwire::encode(&value).map_err(|e| crate::errors::to_py(py, e, crate::errors::Side::Encode))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("<leafwire.Table of {} rows, columns {:?}>", self.view(py)?.rows(), self.columns(py)?))
    }
}
}

/// One column of `Table.from_columns`.
fn build_column(py: Python<'_>, name: &str, column: &Bound<'_, PyAny>, zone: String) -> PyResult<ColumnBuilder> {
    let bad = |e: leafwire::Error| PyValueError::new_err(format!("column {name:?}: {e}"));
    if let Ok(list) = column.cast::<PyList>() {
        return list_column(name, list, zone).map_err(|e| PyValueError::new_err(format!("column {name:?}: {e}")));
    }
    let numpy = py.import("numpy")?;
    let ma = numpy.getattr("ma")?;
    let mask = ma.call_method1("getmaskarray", (column,))?;
    let data = numpy.call_method1("asarray", (ma.call_method1("getdata", (column,))?,))?;
    if data.getattr("ndim")?.extract::<usize>()? != 1 {
        return Err(PyValueError::new_err(format!("column {name:?}: a column is one-dimensional")));
    }
    let dtype = data.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let (et, unit, data, mask) = if kind == "M" {
        let unit_name: String = numpy.call_method1("datetime_data", (&dtype,))?.get_item(0)?.extract()?;
        let unit = match unit_name.as_str() {
            "D" => Unit::Date,
            "s" => Unit::Seconds,
            "ms" => Unit::Millis,
            "us" => Unit::Micros,
            "ns" => Unit::Nanos,
            other => {
                return Err(PyValueError::new_err(format!(
                    "column {name:?}: datetime64[{other}] has no Leafwire unit (D, s, ms, us, ns)"
                )))
            }
        };
        let nat = numpy.call_method1("isnat", (&data,))?;
        let mask = numpy.call_method1("logical_or", (mask, nat))?;
        let counts = data.call_method1("astype", ("<i8",))?;
        let counts = numpy.call_method1("where", (&mask, 0, counts))?;
        if unit == Unit::Date {
            let info = numpy.call_method1("iinfo", ("i4",))?;
            let (lo, hi): (i64, i64) = (info.getattr("min")?.extract()?, info.getattr("max")?.extract()?);
            let (min, max): (i64, i64) = if counts.len()? == 0 {
                (0, 0)
            } else {
                (counts.call_method0("min")?.extract()?, counts.call_method0("max")?.extract()?)
            };
            if min < lo || max > hi {
                return Err(PyValueError::new_err(format!(
                    "column {name:?}: a date outside the i32 days of spec §15.1"
                )));
            }
            (ElementType::I32, unit, counts.call_method1("astype", ("<i4",))?, mask)
        } else {
            (ElementType::I64, unit, counts, mask)
        }
    } else {
        let size: usize = dtype.getattr("itemsize")?.extract()?;
        let et = match (kind.as_str(), size) {
            ("b", 1) => ElementType::Bool,
            ("i", 1) => ElementType::I8,
            ("i", 2) => ElementType::I16,
            ("i", 4) => ElementType::I32,
            ("i", 8) => ElementType::I64,
            ("u", 1) => ElementType::U8,
            ("u", 2) => ElementType::U16,
            ("u", 4) => ElementType::U32,
            ("u", 8) => ElementType::U64,
            ("f", 4) => ElementType::F32,
            ("f", 8) => ElementType::F64,
            ("U", _) | ("O", _) => {
                let list = data.call_method0("tolist")?;
                return list_column(name, list.cast::<PyList>()?, zone)
                    .map_err(|e| PyValueError::new_err(format!("column {name:?}: {e}")));
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "column {name:?}: numpy dtype {dtype} has no Leafwire element type"
                )))
            }
        };
        (et, Unit::Plain, data, mask)
    };
    let le = arrays::dtype_str(et);
    let data = numpy.call_method1("ascontiguousarray", (data, le))?;
    let bytes = data.call_method0("tobytes")?;
    let bytes = bytes.cast::<PyBytes>()?.as_bytes();
    let mask: Vec<bool> = mask.call_method0("tolist")?.extract()?;
    let mut c = ColumnBuilder::numbers(name, et);
    for (i, chunk) in bytes.chunks_exact(et.size()).enumerate() {
        if mask[i] {
            c.push_null();
        } else {
            c.push_number_bytes(chunk).map_err(bad)?;
        }
    }
    if unit != Unit::Plain || !zone.is_empty() {
        c = c.with_unit(unit, zone).map_err(bad)?;
    }
    Ok(c)
}

/// A column from a list: str/None → strings; bool/None → bool; int/None → i64; numbers
/// (some float)/None → f64.
fn list_column(name: &str, list: &Bound<'_, PyList>, zone: String) -> Result<ColumnBuilder, String> {
    if !zone.is_empty() {
        return Err("only a datetime64 array can have a time zone".into());
    }
    let items: Vec<Bound<'_, PyAny>> = list.iter().collect();
    let present = || items.iter().filter(|v| !v.is_none());
    let all = |f: fn(&Bound<'_, PyAny>) -> bool| present().all(|v| f(v));
    let is_bool = |v: &Bound<'_, PyAny>| v.is_instance_of::<pyo3::types::PyBool>();
    let is_int =
        |v: &Bound<'_, PyAny>| v.is_instance_of::<pyo3::types::PyInt>() && !v.is_instance_of::<pyo3::types::PyBool>();
    let is_number = |v: &Bound<'_, PyAny>| {
        v.is_instance_of::<pyo3::types::PyFloat>()
            || (v.is_instance_of::<pyo3::types::PyInt>() && !v.is_instance_of::<pyo3::types::PyBool>())
    };
    let e = |e: leafwire::Error| e.to_string();
    let py_err = |e: PyErr| e.to_string();
    if all(|v| v.is_instance_of::<PyString>()) && present().next().is_some() || present().next().is_none() {
        let mut c = ColumnBuilder::strings(name);
        for v in &items {
            if v.is_none() {
                c.push_null();
            } else {
                c.push_str(v.cast::<PyString>().map_err(|e| e.to_string())?.to_str().map_err(py_err)?).map_err(e)?;
            }
        }
        return Ok(c);
    }
    let et = if all(is_bool) {
        ElementType::Bool
    } else if all(is_int) {
        ElementType::I64
    } else if all(is_number) {
        ElementType::F64
    } else {
        return Err("a list column holds str and None, or bools, ints or floats and None".into());
    };
    let mut c = ColumnBuilder::numbers(name, et);
    for v in &items {
        if v.is_none() {
            c.push_null();
            continue;
        }
        match et {
            ElementType::Bool => c.push_number_bytes(&[v.extract::<bool>().map_err(py_err)? as u8]),
            ElementType::I64 => c.push::<i64>(v.extract().map_err(py_err)?),
            _ => c.push::<f64>(v.extract().map_err(py_err)?),
        }
        .map_err(e)?;
    }
    Ok(c)
}

/// `Document.tables()`: the tables of a document by name. A Data Package (a root object
/// whose `resources` are objects with a `name` and a table under `data`, spec §15.4) maps
/// each resource name to its table; a root object with a `name` and a table under `data`
/// (what `leafwire from-csv` writes) maps that name; otherwise every table reachable
/// through objects and arrays is listed under its JSON Pointer.
pub fn tables<'py>(py: Python<'py>, doc: &Bound<'py, Document>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let root = doc.get().root_node();
    let named = |obj: &Node<'static>| -> Option<(&'static str, Node<'static>)> {
        let name = obj.get("name").ok()?.as_str().ok()?;
        let data = obj.get("data").ok().filter(|d| d.kind() == Kind::Table)?;
        Some((name, data))
    };
    if root.kind() == Kind::Object {
        if let Ok(resources) = root.get("resources") {
            if resources.kind() == Kind::Array {
                for r in resources.iter().map_err(|e| err(py, e))? {
                    let r = r.map_err(|e| err(py, e))?;
                    if let Some((name, data)) = (r.kind() == Kind::Object).then(|| named(&r)).flatten() {
                        out.set_item(name, Table::new(py, doc, data)?)?;
                    }
                }
                if !out.is_empty() {
                    return Ok(out);
                }
            }
        }
        if let Some((name, data)) = named(&root) {
            out.set_item(name, Table::new(py, doc, data)?)?;
            return Ok(out);
        }
    }
    // Every node costs 1 of a budget the document's length bounds (a malformed document
    // may share or loop subtrees).
    let mut budget = doc.get().bytes().len() as u64 * 2 + 4096;
    let mut stack: Vec<(Node<'static>, String, usize)> = vec![(root, String::new(), 0)];
    let mut found = Vec::new();
    while let Some((node, path, depth)) = stack.pop() {
        if budget == 0 || depth > crate::MAX_DEPTH_CAP {
            return Err(decode_error(
                py,
                "the document nests or shares more containers than it has bytes",
                Some(node.offset()),
            ));
        }
        budget -= 1;
        let mut children = Vec::new();
        match node.kind() {
            Kind::Table => found.push((path, node)),
            Kind::Array => {
                for (i, child) in node.iter().map_err(|e| err(py, e))?.enumerate() {
                    children.push((child.map_err(|e| err(py, e))?, format!("{path}/{i}"), depth + 1));
                }
            }
            Kind::Object => {
                for entry in node.entries().map_err(|e| err(py, e))? {
                    let (key, child) = entry.map_err(|e| err(py, e))?;
                    children.push((child, format!("{path}/{}", key.replace('~', "~0").replace('/', "~1")), depth + 1));
                }
            }
            Kind::IntMap => {
                for entry in node.int_entries().map_err(|e| err(py, e))? {
                    let (key, child) = entry.map_err(|e| err(py, e))?;
                    children.push((child, format!("{path}/{key}"), depth + 1));
                }
            }
            _ => {}
        }
        // Depth first, in document order.
        stack.extend(children.into_iter().rev());
    }
    for (path, node) in found {
        out.set_item(path, Table::new(py, doc, node)?)?;
    }
    Ok(out)
}

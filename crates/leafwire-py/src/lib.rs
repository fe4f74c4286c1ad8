//! `leafwire._leafwire`: the compiled half of the `leafwire` Python package — thin glue
//! between Python objects and the `leafwire` core crate. The public API is re-exported
//! (and documented) by `python/leafwire/__init__.py`.
// `guarded!` (guard.rs) takes one step per token of the signatures of an impl block.
#![recursion_limit = "1024"]

mod arrays;
mod document;
mod dumps_fast;
mod dumps_general;
mod edit;
mod errors;
mod guard;
mod key_cache;
mod loads_fast;
mod loads_general;
mod node_iter;
mod stream;
mod strings;
mod table;

use leafwire::json::JsonOptions;
use leafwire::DuplicateKeys;
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use errors::{to_py, Side};
use guard::guarded;
use loads_general::{Arrays, Decoder};

/// Encoding builds many small vectors and strings (the core's builder, decoded trees);
/// mimalloc serves them several times faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The deepest `max_depth` accepted (orjson's parser limit too). Conversion here and in the
/// core recurses on the native stack, about 0.7 KiB per level in a release build: 1024
/// levels fit the main thread and default thread stacks of Linux (8 MiB) and Windows
/// (1 MiB); macOS's 512 KiB secondary threads hold about 700 levels.
pub const MAX_DEPTH_CAP: usize = 1024;

pub fn check_depth(max_depth: usize) -> PyResult<usize> {
    if max_depth > MAX_DEPTH_CAP {
        return Err(errors::bad_argument(format!("max_depth must be at most {MAX_DEPTH_CAP}")));
    }
    Ok(max_depth)
}

/// Runs `f` over the bytes of a bytes-like object (bytes, bytearray, memoryview, any
/// C-contiguous buffer).
fn with_bytes<R>(data: &Bound<'_, PyAny>, what: &str, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return f(bytes.as_bytes());
    }
    match PyUntypedBuffer::get(data) {
        Ok(buffer) => f(document::buffer_bytes(&buffer)?),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} expects a bytes-like object, not {}",
            data.get_type().qualname()?
        ))),
    }
}

guarded! {
/// Serializes `obj` to Leafwire bytes.
#[pyfunction]
#[pyo3(signature = (obj, /, *, default = None, max_depth = 128, packed = false, zstd = None, lossy_float_step = None, columns_only = false))]
#[allow(clippy::too_many_arguments)]
fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    default: Option<&Bound<'py, PyAny>>,
    max_depth: usize,
    packed: bool,
    zstd: Option<i32>,
    lossy_float_step: Option<i8>,
    columns_only: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    if !packed {
        if zstd.is_some() || lossy_float_step.is_some() || columns_only {
            return Err(errors::bad_argument("zstd, lossy_float_step and columns_only apply to packed=True only"));
        }
        return dumps_plain(py, obj, default, max_depth);
    }
    if zstd.is_some_and(|l| !(1..=22).contains(&l)) || lossy_float_step.is_some_and(|t| !(-60..=60).contains(&t)) {
        return Err(errors::bad_argument("zstd must be 1-22 and lossy_float_step -60..60"));
    }
    // Packed mode (spec §13) shreds the ordinary document's borrowed tree (`leafwire::pack`:
    // no value with a `String` per key and per string in between).
    let plain = dumps_plain(py, obj, default, max_depth)?;
    let options = leafwire::PackOptions { zstd_level: zstd, lossy_step: lossy_float_step, columns_only };
    let plain = plain.as_bytes();
    let bytes = py.detach(|| leafwire::pack_with(plain, max_depth, &options)).map_err(|e| to_py(py, e, Side::Encode))?;
    Ok(PyBytes::new(py, &bytes))
}

fn dumps_plain<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, default: Option<&Bound<'py, PyAny>>, max_depth: usize) -> PyResult<Bound<'py, PyBytes>> {
    if let Some(bytes) = dumps_fast::dumps(py, obj, check_depth(max_depth)?)? {
        return Ok(bytes);
    }
    let mut encoder = dumps_general::Encoder::new(py, default, check_depth(max_depth)?);
    encoder.value(obj, 0).map_err(|e| encoder.with_path(e))?;
    let empty_rows = encoder.empty_rows;
    let out = encoder.out;
    let bytes = py.detach(|| out.finish()).map_err(|e| to_py(py, e, Side::Encode))?;
    // Spec §5.2 bounds an empty array's rows by the document length, so a reader need not
    // trust `[2^40, 0]`; the core encoder does not check it, so it is checked here.
    if empty_rows > bytes.len() as u64 {
        return Err(errors::encode_error(
            py,
            format!(
                "an empty numpy array's shape describes {} rows, more than the {} bytes of the document (spec §5.2)",
                empty_rows,
                bytes.len()
            ),
            "limit_exceeded",
        ));
    }
    Ok(PyBytes::new(py, &bytes))
}

/// Serializes `obj` as Leafwire into the binary file object `fp`. The fast path writes
/// the `bytes` it makes; the general path streams the document into `fp` a megabyte at a
/// time, holding neither a `Vec` of the whole output nor a `bytes` copy of it.
#[pyfunction]
#[pyo3(signature = (obj, fp, /, *, default = None, max_depth = 128, checksums = true))]
fn dump<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, fp: &Bound<'py, PyAny>, default: Option<&Bound<'py, PyAny>>, max_depth: usize, checksums: bool) -> PyResult<()> {
    if let Some(bytes) = dumps_fast::dumps(py, obj, check_depth(max_depth)?)? {
        if !checksums {
            fp.call_method1("write", (bytes,))?;
            return Ok(());
        }
        let mut doc = bytes.as_bytes().to_vec();
        drop(bytes);
        leafwire::add_checksums(&mut doc).map_err(|e| to_py(py, e, Side::Encode))?;
        fp.call_method1("write", (PyBytes::new(py, &doc),))?;
        return Ok(());
    }
    let mut encoder = dumps_general::Encoder::new(py, default, check_depth(max_depth)?);
    encoder.value(obj, 0).map_err(|e| encoder.with_path(e))?;
    // The core checks the rows of empty arrays (spec §5.2) while laying the document
    // out, before the first byte is written.
    let mut writer = FileWriter { fp, failed: None };
    let written = if checksums {
        let mut sealer = leafwire::format::integrity::Sealer::new(&mut writer);
        encoder.out.finish_to(&mut sealer).and_then(|_| sealer.finish().map(drop).map_err(leafwire::Error::from))
    } else {
        encoder.out.finish_to(&mut writer).map(drop)
    };
    match written {
        Ok(()) => Ok(()),
        Err(e) => Err(writer.failed.take().unwrap_or_else(|| to_py(py, e, Side::Encode))),
    }
}

/// Deserializes Leafwire bytes to Python objects.
#[pyfunction]
#[pyo3(signature = (data, /, *, arrays = "numpy", max_depth = 128))]
fn loads(py: Python<'_>, data: &Bound<'_, PyAny>, arrays: &str, max_depth: usize) -> PyResult<Py<PyAny>> {
    let arrays = Arrays::parse(arrays)?;
    let max_depth = check_depth(max_depth)?;
    with_bytes(data, "loads()", |bytes| {
        if leafwire::is_packed_document(bytes) {
            // Packed arrays (spec §13) decode in the core; the rest as for any document.
            let plain = py.detach(|| leafwire::unpack(bytes)).map_err(|e| loads_general::err(py, e))?;
            let aligned = leafwire::AlignedBytes::new(&plain);
            return loads_aligned(py, aligned.as_bytes(), arrays, max_depth);
        }
        loads_aligned(py, bytes, arrays, max_depth)
    })
}

/// `loads` of an ordinary document.
fn loads_aligned(py: Python<'_>, bytes: &[u8], arrays: Arrays, max_depth: usize) -> PyResult<Py<PyAny>> {
    if let Some(obj) = loads_fast::loads(py, bytes, arrays, max_depth) {
        return Ok(obj.unbind());
    }
    let doc = leafwire::Document::open(bytes).map_err(|e| loads_general::err(py, e))?;
    let mut decoder = Decoder::new(py, arrays, max_depth, None, doc.as_bytes());
    Ok(decoder.value(&doc.root(), 0)?.unbind())
}

/// Converts JSON text (str or UTF-8 bytes) to Leafwire bytes.
#[pyfunction]
#[pyo3(signature = (text, /, *, max_depth = 128, duplicate_keys = "error"))]
fn from_json<'py>(py: Python<'py>, text: &Bound<'py, PyAny>, max_depth: usize, duplicate_keys: &str) -> PyResult<Bound<'py, PyBytes>> {
    let duplicate_keys = match duplicate_keys {
        "error" => DuplicateKeys::Error,
        "last" => DuplicateKeys::Last,
        other => return Err(errors::bad_argument(format!("duplicate_keys must be \"error\" or \"last\", not {other:?}"))),
    };
    let options = JsonOptions { max_depth: check_depth(max_depth)?, duplicate_keys };
    let result = if let Ok(s) = text.cast::<PyString>() {
        let s = s.to_str()?;
        py.detach(|| leafwire::json::from_json_with(s.as_bytes(), &options))
    } else if let Ok(b) = text.cast::<PyBytes>() {
        let b = b.as_bytes();
        py.detach(|| leafwire::json::from_json_with(b, &options))
    } else {
        with_bytes(text, "from_json()", |b| Ok(leafwire::json::from_json_with(b, &options)))?
    };
    let bytes = result.map_err(|e| to_py(py, e, Side::Decode))?;
    Ok(PyBytes::new(py, &bytes))
}

/// Converts a Leafwire document (bytes-like) to compact JSON text.
#[pyfunction]
#[pyo3(signature = (data, /))]
fn to_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
    let result = if let Ok(b) = data.cast::<PyBytes>() {
        let b = b.as_bytes();
        py.detach(|| leafwire::json::to_json(b))
    } else {
        with_bytes(data, "to_json()", |b| Ok(leafwire::json::to_json(b)))?
    };
    result.map_err(|e| to_py(py, e, Side::Decode))
}

/// Validates a whole document (spec §9).
#[pyfunction]
#[pyo3(signature = (data, /, *, max_depth = 128))]
fn validate(py: Python<'_>, data: &Bound<'_, PyAny>, max_depth: usize) -> PyResult<()> {
    let options = leafwire::ValidateOptions { max_depth: check_depth(max_depth)? };
    with_bytes(data, "validate()", |b| leafwire::validate_with(b, &options).map(|_| ()).map_err(|e| loads_general::err(py, e)))
}

/// The document with page checksums added (spec §2.3), for files.
#[pyfunction]
#[pyo3(signature = (data, /))]
fn add_checksums(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
    with_bytes(data, "add_checksums()", |b| {
        let mut doc = b.to_vec();
        leafwire::add_checksums(&mut doc).map_err(|e| loads_general::err(py, e))?;
        Ok(PyBytes::new(py, &doc).unbind())
    })
}

/// Opens a document lazily: memory-mapped for a path, or over a bytes-like object.
#[pyfunction]
#[pyo3(signature = (source, /))]
fn open(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<document::Document> {
    document::Document::open(py, source)
}

}

/// A Python binary file object as a `Write`: each chunk becomes one `fp.write(bytes)`. The
/// Python exception of a failed write is kept, to be raised as it is.
struct FileWriter<'a, 'py> {
    fp: &'a Bound<'py, PyAny>,
    failed: Option<PyErr>,
}

impl std::io::Write for FileWriter<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.fp.call_method1("write", (PyBytes::new(self.fp.py(), buf),)) {
            Ok(_) => Ok(buf.len()),
            Err(e) => {
                self.failed = Some(e);
                Err(std::io::Error::other("the file object's write() raised"))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[pymodule]
fn _leafwire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::init_classes(py)?;
    m.add("DecodeError", py.get_type::<errors::DecodeError>())?;
    m.add("EncodeError", py.get_type::<errors::EncodeError>())?;
    m.add("NotFoundError", py.get_type::<errors::NotFoundError>())?;
    m.add("MAX_DEPTH_CAP", MAX_DEPTH_CAP)?;
    m.add("DEFAULT_MAX_DEPTH", leafwire::DEFAULT_MAX_DEPTH)?;
    m.add_function(wrap_pyfunction!(dumps, m)?)?;
    m.add_function(wrap_pyfunction!(dump, m)?)?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(from_json, m)?)?;
    m.add_function(wrap_pyfunction!(to_json, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(add_checksums, m)?)?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_class::<document::Document>()?;
    m.add_class::<document::MapNode>()?;
    m.add_class::<document::ArrayNode>()?;
    m.add_class::<table::Table>()?;
    m.add_function(wrap_pyfunction!(edit::edit, m)?)?;
    m.add_class::<edit::Editor>()?;
    m.add_class::<stream::StreamWriter>()?;
    m.add_class::<stream::StreamIterator>()?;
    m.add_class::<stream::StreamFrame>()?;
    m.add_function(wrap_pyfunction!(stream::iter_stream, m)?)?;
    m.add_function(wrap_pyfunction!(guard::_panic_for_test, m)?)?;
    Ok(())
}

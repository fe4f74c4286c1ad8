//! The Python exceptions of the package and the mapping from core errors to them.
//!
//! Each class subclasses the standard exception an existing `except` clause would catch:
//! `DecodeError` is a `ValueError` (as `json.JSONDecodeError`), `EncodeError` a `TypeError`
//! (as orjson's), `NotFoundError` a `KeyError`. Positions travel as attributes (`offset`
//! in a Leafwire buffer, `line`/`column` in JSON text, `path` for pointer lookups), all
//! `None` when unknown.

use leafwire::{Category, Position};
use pyo3::exceptions::{PyKeyError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    leafwire,
    DecodeError,
    PyValueError,
    "Leafwire bytes (or JSON text) that cannot be decoded: malformed, unsupported version, nesting \
     beyond max_depth. `offset` is the byte offset in the document, `line`/`column` the position \
     in JSON text, `category` the core error category; unknown ones are None. An internal error \
     (a bug in leafwire, never expected) is raised as DecodeError too, with category \"internal\"."
);
pyo3::create_exception!(
    leafwire,
    EncodeError,
    PyTypeError,
    "A Python value that cannot be encoded: an unsupported type (without a `default` hook), a \
     non-str/int dict key, nesting beyond max_depth, a list, tuple or dict that contains itself \
     (category \"cycle\"), NaN or infinity in to_json."
);
pyo3::create_exception!(
    leafwire,
    NotFoundError,
    PyKeyError,
    "A key or JSON Pointer that names nothing in the document. `path` is the pointer being \
     resolved, when there is one."
);

/// Gives the exception classes their attributes (all `None`) so that every instance has them.
pub fn init_classes(py: Python<'_>) -> PyResult<()> {
    for class in [py.get_type::<DecodeError>(), py.get_type::<EncodeError>(), py.get_type::<NotFoundError>()] {
        for attr in ["offset", "line", "column", "path", "category"] {
            class.setattr(attr, py.None())?;
        }
    }
    Ok(())
}

/// The side of the conversion an error happened on, which picks the exception class for the
/// categories that could be either.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Decode,
    Encode,
}

fn category_name(c: Category) -> &'static str {
    match c {
        Category::Malformed => "malformed",
        Category::Unsupported => "unsupported",
        Category::WrongType => "wrong_type",
        Category::NotFound => "not_found",
        Category::DepthLimit => "depth_limit",
        Category::LimitExceeded => "limit_exceeded",
        Category::InvalidJson => "invalid_json",
        Category::DuplicateKey => "duplicate_key",
        Category::NotRepresentable => "not_representable",
        Category::Misaligned => "misaligned",
        Category::Io => "io",
        _ => "custom",
    }
}

/// Converts a core error to the matching Python exception, with its position attached.
#[cold]
#[inline(never)]
pub fn to_py(py: Python<'_>, e: leafwire::Error, side: Side) -> PyErr {
    let message = e.to_string();
    let err = match e.category() {
        Category::NotFound => NotFoundError::new_err(message),
        Category::Io => PyOSError::new_err(message),
        Category::NotRepresentable => EncodeError::new_err(message),
        Category::WrongType if side == Side::Decode => PyTypeError::new_err(message),
        _ if side == Side::Encode => EncodeError::new_err(message),
        _ => DecodeError::new_err(message),
    };
    let value = err.value(py);
    // Attributes on a fresh exception instance cannot fail short of memory exhaustion;
    // the exception is still the right one if they do.
    let _ = value.setattr("category", category_name(e.category()));
    match e.position() {
        Some(Position::Offset(offset)) => {
            let _ = value.setattr("offset", offset);
        }
        Some(Position::LineColumn { line, column }) => {
            let _ = value.setattr("line", line);
            let _ = value.setattr("column", column);
        }
        None => {}
    }
    if let Some(path) = e.path() {
        let _ = value.setattr("path", path);
    }
    err
}

/// A decode-side error raised by the glue itself.
#[cold]
#[inline(never)]
pub fn decode_error(py: Python<'_>, message: impl Into<String>, offset: Option<u64>) -> PyErr {
    let err = DecodeError::new_err(message.into());
    let value = err.value(py);
    let _ = value.setattr("category", "malformed");
    if let Some(offset) = offset {
        let _ = value.setattr("offset", offset);
    }
    err
}

/// An encode-side error raised by the glue itself.
#[cold]
#[inline(never)]
pub fn encode_error(py: Python<'_>, message: impl Into<String>, category: &'static str) -> PyErr {
    let err = EncodeError::new_err(message.into());
    let _ = err.value(py).setattr("category", category);
    err
}

/// The error of a nesting limit reached while encoding.
#[cold]
#[inline(never)]
pub fn encode_depth(py: Python<'_>, limit: usize) -> PyErr {
    encode_error(py, format!("nesting deeper than the limit of {limit} (raise max_depth)"), "depth_limit")
}

/// The error of a nesting limit reached while decoding.
#[cold]
#[inline(never)]
pub fn decode_depth(py: Python<'_>, limit: usize, offset: u64) -> PyErr {
    let err = decode_error(py, format!("nesting deeper than the limit of {limit} (raise max_depth)"), Some(offset));
    let _ = err.value(py).setattr("category", "depth_limit");
    err
}

/// Wraps a Python exception raised while converting (a `default` hook, `str()` of a huge
/// int...) so the caller sees the documented class, with the original as `__cause__`.
#[cold]
#[inline(never)]
pub fn wrap_encode(py: Python<'_>, cause: PyErr, what: &str) -> PyErr {
    if cause.is_instance_of::<EncodeError>(py) {
        return cause;
    }
    let err = encode_error(py, format!("{what}: {cause}"), "custom");
    err.set_cause(py, Some(cause));
    err
}

/// A value error for a bad argument (an unknown `arrays=` mode...).
pub fn bad_argument(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

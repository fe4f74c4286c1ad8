//! Typed arrays ↔ numpy: zero-copy read-only views over a document's bytes, owned copies,
//! and numpy arrays and scalars → the streaming `leafwire::Encoder`.
//!
//! numpy is optional, as for orjson, and imported lazily. Encoding looks for numpy objects
//! only once something has imported numpy (no numpy object can exist before), and reading a
//! typed array as a numpy array imports it, raising `ModuleNotFoundError` with what to do
//! instead when it is not installed. Nothing here touches numpy's C API before one of
//! those checks: rust-numpy panics when the API cannot be loaded.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use leafwire::{ElementType, TypedRef};
use numpy::npyffi::{self, npy_intp, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyModuleNotFoundError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

use crate::errors::{decode_error, encode_error};

const ELEMENT_TYPES: [ElementType; 11] = [
    ElementType::Bool,
    ElementType::I8,
    ElementType::I16,
    ElementType::I32,
    ElementType::I64,
    ElementType::U8,
    ElementType::U16,
    ElementType::U32,
    ElementType::U64,
    ElementType::F32,
    ElementType::F64,
];

/// numpy dtype strings of the element types, little-endian as the format stores them (so the
/// views are right on any machine; on little-endian ones these are the native dtypes).
pub(crate) fn dtype_str(et: ElementType) -> &'static str {
    match et {
        ElementType::Bool => "|b1",
        ElementType::I8 => "|i1",
        ElementType::I16 => "<i2",
        ElementType::I32 => "<i4",
        ElementType::I64 => "<i8",
        ElementType::U8 => "|u1",
        ElementType::U16 => "<u2",
        ElementType::U32 => "<u4",
        ElementType::U64 => "<u8",
        ElementType::F32 => "<f4",
        ElementType::F64 => "<f8",
    }
}

/// Set once numpy has been imported successfully (it cannot be unloaded).
static NUMPY_READY: AtomicBool = AtomicBool::new(false);

/// Whether numpy has been imported (by anyone). Imports nothing, so encoding values
/// without numpy objects never loads numpy.
pub fn numpy_imported(py: Python<'_>) -> bool {
    if NUMPY_READY.load(Ordering::Relaxed) {
        return true;
    }
    let imported = py.import("sys").and_then(|sys| sys.getattr("modules")).and_then(|m| m.contains("numpy")).unwrap_or(false);
    imported && require_numpy(py).is_ok()
}

/// Imports numpy for reading typed arrays as numpy arrays; without it, a
/// `ModuleNotFoundError` that says how to read them without numpy.
pub fn require_numpy(py: Python<'_>) -> PyResult<()> {
    if NUMPY_READY.load(Ordering::Relaxed) {
        return Ok(());
    }
    match py.import("numpy") {
        Ok(_) => {
            NUMPY_READY.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(cause) => Err(no_numpy(py, cause)),
    }
}

#[cold]
fn no_numpy(py: Python<'_>, cause: PyErr) -> PyErr {
    let err = PyModuleNotFoundError::new_err(
        "reading a typed array as a numpy array needs numpy, which could not be imported: install numpy, \
         or read typed arrays as lists (loads(data, arrays=\"list\"), .to_python(arrays=\"list\"))",
    );
    let _ = err.value(py).setattr("name", "numpy");
    err.set_cause(py, Some(cause));
    err
}

static DESCRIPTORS: PyOnceLock<Vec<Py<PyArrayDescr>>> = PyOnceLock::new();

fn descr(py: Python<'_>, et: ElementType) -> PyResult<Bound<'_, PyArrayDescr>> {
    let all = DESCRIPTORS.get_or_try_init(py, || {
        ELEMENT_TYPES.iter().map(|&t| Ok(PyArrayDescr::new(py, dtype_str(t))?.unbind())).collect::<PyResult<Vec<_>>>()
    })?;
    Ok(all[et as usize].bind(py).clone())
}

/// The shape as numpy dimensions, refusing shapes numpy cannot hold (a malformed document
/// can declare `[0, 2^63]`: no elements, but dimensions past `isize`).
fn dims(py: Python<'_>, shape: &[usize], item: usize, offset: u64) -> PyResult<Vec<npy_intp>> {
    let mut bytes: usize = item;
    for &d in shape.iter().filter(|&&d| d != 0) {
        bytes = bytes.checked_mul(d).filter(|&b| b <= isize::MAX as usize).ok_or_else(|| {
            decode_error(py, format!("typed array shape {shape:?} is too large for numpy"), Some(offset))
        })?;
    }
    Ok(shape.iter().map(|&d| d as npy_intp).collect())
}

/// A new numpy array of `et` and `shape`; `data` null allocates, otherwise the array views
/// `data` read-only with `base` as its owner.
///
/// # Safety
/// A non-null `data` must point to `product(shape)` elements that stay valid and unchanged
/// as long as `base` is alive.
unsafe fn new_array<'py>(
    py: Python<'py>,
    et: ElementType,
    dims: &mut [npy_intp],
    data: *mut c_void,
    base: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    require_numpy(py)?;
    let descr = descr(py, et)?;
    // SAFETY: the descriptor reference is stolen (hence into_dtype_ptr's new reference); dims
    // has ndim entries; null strides mean C order; the caller vouches for data.
    unsafe {
        let array = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type),
            descr.into_dtype_ptr(),
            dims.len() as i32,
            dims.as_mut_ptr(),
            ptr::null_mut(),
            data,
            // With null data, a non-zero flag would ask for Fortran order.
            if data.is_null() { 0 } else { npyffi::NPY_ARRAY_C_CONTIGUOUS },
            ptr::null_mut(),
        );
        let array = Bound::from_owned_ptr_or_err(py, array)?;
        if let Some(base) = base {
            // Steals the new reference: the array now keeps `base` (and so the bytes) alive.
            if PY_ARRAY_API.PyArray_SetBaseObject(py, array.as_ptr().cast(), base.clone().into_ptr()) < 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(array)
    }
}

fn data_ptr(array: &Bound<'_, PyAny>) -> *mut u8 {
    // SAFETY: `array` was just created by `new_array`, so it is an ndarray.
    unsafe { (*npyffi::objects::_PyArray_GET_ITEM_DATA(array.as_ptr().cast())).data.cast() }
}

/// Bool elements must be 0 or 1 for numpy; the lazy reader does not check them.
fn check_bools(py: Python<'_>, bytes: &[u8], offset: u64) -> PyResult<()> {
    match bytes.iter().position(|&b| b > 1) {
        Some(i) => Err(decode_error(py, format!("bool typed array element {i} is {}, not 0 or 1", bytes[i]), Some(offset))),
        None => Ok(()),
    }
}

/// An owned numpy array holding a copy of the typed array (masked f64 arrays are float64).
pub fn copy<'py>(py: Python<'py>, typed: &TypedRef<'_>, offset: u64) -> PyResult<Bound<'py, PyAny>> {
    let et = typed.element_type();
    let bytes = typed.bytes();
    if et == ElementType::Bool {
        check_bools(py, bytes, offset)?;
    }
    let mut dims = dims(py, &typed.shape(), et.size(), offset)?;
    // SAFETY: a null data pointer makes numpy allocate.
    let array = unsafe { new_array(py, et, &mut dims, ptr::null_mut(), None)? };
    // SAFETY: the new C-contiguous array holds exactly bytes.len() bytes.
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data_ptr(&array), bytes.len()) };
    Ok(array)
}

/// A read-only numpy view of the typed array, whose base is `owner` (the object keeping the
/// bytes alive). Falls back to a copy when the data is not aligned in memory for its
/// element type (only possible in a caller's buffer that is not 8-aligned).
pub fn view<'py>(py: Python<'py>, typed: &TypedRef<'_>, owner: &Bound<'py, PyAny>, offset: u64) -> PyResult<Bound<'py, PyAny>> {
    let et = typed.element_type();
    let bytes = typed.bytes();
    if (bytes.as_ptr() as usize) % et.size() != 0 {
        return copy(py, typed, offset);
    }
    if et == ElementType::Bool {
        check_bools(py, bytes, offset)?;
    }
    let mut dims = dims(py, &typed.shape(), et.size(), offset)?;
    // SAFETY: `bytes` lies in memory owned by `owner` (a mapped file or a held buffer that
    // the document never writes), and the view is read-only.
    unsafe { new_array(py, et, &mut dims, bytes.as_ptr() as *mut c_void, Some(owner)) }
}

/// A one-dimensional numpy array over `bytes` (whole elements of `et`, e.g. a table
/// column's data, spec §15): a read-only view whose base is `owner` when given and the
/// bytes are aligned for `et`, else an owned copy.
pub fn flat<'py>(py: Python<'py>, et: ElementType, bytes: &[u8], owner: Option<&Bound<'py, PyAny>>, offset: u64) -> PyResult<Bound<'py, PyAny>> {
    if et == ElementType::Bool {
        check_bools(py, bytes, offset)?;
    }
    let mut dims = dims(py, &[bytes.len() / et.size()], et.size(), offset)?;
    match owner {
        Some(owner) if (bytes.as_ptr() as usize) % et.size() == 0 => {
            // SAFETY: as in `view`: `bytes` lies in memory owned by `owner`, never written
            // while it is alive; the view is read-only.
            unsafe { new_array(py, et, &mut dims, bytes.as_ptr() as *mut c_void, Some(owner)) }
        }
        _ => {
            // SAFETY: a null data pointer makes numpy allocate; the new C-contiguous array
            // holds exactly bytes.len() bytes.
            let array = unsafe { new_array(py, et, &mut dims, ptr::null_mut(), None)? };
            unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data_ptr(&array), bytes.len()) };
            Ok(array)
        }
    }
}

// ---- numpy → Encoder ----

fn element_type_of(descr: &Bound<'_, PyArrayDescr>) -> Option<ElementType> {
    Some(match (descr.kind(), descr.itemsize()) {
        (b'b', 1) => ElementType::Bool,
        (b'i', 1) => ElementType::I8,
        (b'i', 2) => ElementType::I16,
        (b'i', 4) => ElementType::I32,
        (b'i', 8) => ElementType::I64,
        (b'u', 1) => ElementType::U8,
        (b'u', 2) => ElementType::U16,
        (b'u', 4) => ElementType::U32,
        (b'u', 8) => ElementType::U64,
        (b'f', 4) => ElementType::F32,
        (b'f', 8) => ElementType::F64,
        _ => return None,
    })
}

/// Whether the array's elements are stored little-endian, the format's byte order.
fn little_endian(descr: &Bound<'_, PyArrayDescr>) -> bool {
    match descr.byteorder() {
        b'<' | b'|' => true,
        b'>' => false,
        _ => cfg!(target_endian = "little"),
    }
}

/// Writes a numpy array as a typed array to `out`, raising `*empty_rows` to the largest
/// partial product of an empty array's shape; `false` (nothing written) when its dtype has
/// no Leafwire element type (the caller then tries the `default` hook). 0-d arrays are
/// scalars.
pub fn encode_array(py: Python<'_>, array: &Bound<'_, PyUntypedArray>, out: &mut leafwire::Encoder, empty_rows: &mut u64) -> PyResult<bool> {
    let descr = array.dtype();
    let Some(et) = element_type_of(&descr) else { return Ok(false) };
    if array.ndim() == 0 {
        let scalar = array.get_item(PyTuple::empty(py))?;
        return encode_scalar(py, &scalar, out);
    }
    if !array.is_c_contiguous() || !little_endian(&descr) {
        let numpy = py.import("numpy")?;
        let le = descr.call_method1("newbyteorder", ("<",))?;
        let contiguous = numpy.call_method1("ascontiguousarray", (array, le))?;
        return encode_array(py, contiguous.cast::<PyUntypedArray>()?, out, empty_rows);
    }
    let shape = array.shape();
    if shape.len() > 32 {
        return Err(encode_error(py, format!("a numpy array of {} dimensions has no Leafwire form (at most 32)", shape.len()), "limit_exceeded"));
    }
    let n = array.len();
    if n == 0 {
        let rows = shape.iter().scan(1u64, |p, &d| {
            *p = p.saturating_mul(d as u64);
            Some(*p)
        });
        *empty_rows = (*empty_rows).max(rows.max().unwrap_or(0));
    }
    let len = n * et.size();
    // SAFETY: an ndarray, C-contiguous and little-endian (checked), whose data pointer is
    // valid for n elements; the array is alive (and not resized: we hold the GIL) while
    // the bytes are copied into the encoder.
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts((*npyffi::objects::_PyArray_GET_ITEM_DATA(array.as_array_ptr())).data as *const u8, len) }
    };
    let normalized;
    let bytes = if et == ElementType::Bool && bytes.iter().any(|&b| b > 1) {
        normalized = bytes.iter().map(|&b| (b != 0) as u8).collect::<Vec<u8>>();
        &normalized[..]
    } else {
        bytes
    };
    out.typed(et, shape, bytes, None).map_err(|e| crate::errors::to_py(py, e, crate::errors::Side::Encode))?;
    Ok(true)
}

/// Whether `obj` is a numpy scalar (an instance of `numpy.generic`).
pub fn is_numpy_scalar(py: Python<'_>, obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: the type object pointer comes from numpy's C API table.
    unsafe {
        let generic = npyffi::get_type_object(py, npyffi::NpyTypes::PyGenericArrType_Type);
        pyo3::ffi::PyObject_TypeCheck(obj.as_ptr(), generic) != 0
    }
}

/// Writes a numpy scalar of a supported type to `out`; `false` (nothing written) for other
/// numpy scalars.
pub fn encode_scalar(py: Python<'_>, obj: &Bound<'_, PyAny>, out: &mut leafwire::Encoder) -> PyResult<bool> {
    // SAFETY: obj is a numpy scalar (checked by the caller or produced by numpy); the
    // descriptor is a new reference we own.
    let descr = unsafe {
        let d = PY_ARRAY_API.PyArray_DescrFromScalar(py, obj.as_ptr());
        Bound::from_owned_ptr_or_err(py, d.cast())?.cast_into_unchecked::<PyArrayDescr>()
    };
    let Some(et) = element_type_of(&descr) else { return Ok(false) };
    let mut raw = [0u64; 2];
    // SAFETY: the scalar's value is copied in its own (native) format; 16 bytes hold any
    // supported type.
    unsafe { PY_ARRAY_API.PyArray_ScalarAsCtype(py, obj.as_ptr(), raw.as_mut_ptr().cast()) };
    let p = raw.as_ptr().cast::<u8>();
    // SAFETY: p points to the value just written, of the type named by et.
    let r = unsafe {
        match et {
            ElementType::Bool => out.bool(*p != 0),
            ElementType::I8 => out.int(*p.cast::<i8>() as i64),
            ElementType::I16 => out.int(*p.cast::<i16>() as i64),
            ElementType::I32 => out.int(*p.cast::<i32>() as i64),
            ElementType::I64 => out.int(*p.cast::<i64>()),
            ElementType::U8 => out.int(*p as i64),
            ElementType::U16 => out.int(*p.cast::<u16>() as i64),
            ElementType::U32 => out.int(*p.cast::<u32>() as i64),
            ElementType::U64 => out.uint(*p.cast::<u64>()),
            ElementType::F32 => out.f32(*p.cast::<f32>()),
            ElementType::F64 => out.f64(*p.cast::<f64>()),
        }
    };
    r.map_err(|e| crate::errors::to_py(py, e, crate::errors::Side::Encode))?;
    Ok(true)
}

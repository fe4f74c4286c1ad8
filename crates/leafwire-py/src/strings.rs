//! UTF-8 bytes → a new Python `str`, for the decoders: the `str` is created at its final
//! size and kind and filled once, where `PyUnicode_DecodeUTF8` grows a writer and widens
//! it (UCS1 → UCS2 → UCS4) as it meets wider characters, and reallocates it at the end.
//!
//! ASCII text (most keys and strings) is copied as is. Other text is decoded and checked
//! in one pass into a scratch buffer of code points, whose bitwise OR gives the kind: CPython
//! requires every string in its canonical form, the narrowest kind that holds its widest
//! character (equality compares kinds first).

use std::ptr;

use pyo3::ffi;

/// The text of `obj` if it is a compact ASCII `str`, the form whose text is its own
/// bytes, right after the object header (most keys and values); `None` for any other, and
/// on Python 3.14, PyPy and GraalPy, which hide the fields that tell.
///
/// # Safety
/// `obj` must be a live `str`, which outlives the slice; the GIL must be held.
#[inline(always)]
pub unsafe fn compact_ascii<'s>(obj: *mut ffi::PyObject) -> Option<&'s [u8]> {
    #[cfg(not(any(Py_3_14, PyPy, GraalPy)))]
    // SAFETY: the caller's; CPython's macros read the object's state bits, data and length.
    unsafe {
        if ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0 {
            let data = ffi::PyUnicode_DATA(obj).cast::<u8>().cast_const();
            return Some(std::slice::from_raw_parts(data, ffi::PyUnicode_GET_LENGTH(obj) as usize));
        }
    }
    let _ = obj;
    None
}

/// A new `str` with the text of `bytes`, or null with an exception set if they are not
/// UTF-8. Invalid bytes (by the rules of CPython's strict decoder, which are UTF-8's: no
/// surrogates, no overlong forms, nothing past U+10FFFF) go to that decoder, which raises
/// its usual `UnicodeDecodeError`. `scratch` is working memory, reused between calls.
///
/// # Safety
/// The GIL must be held.
#[inline]
pub unsafe fn new_str(bytes: &[u8], scratch: &mut Vec<u32>) -> *mut ffi::PyObject {
    let len = bytes.len();
    // SAFETY: the GIL is held; PyUnicode_New(n, 127) returns a compact ASCII string with
    // room for n characters (it writes the terminating NUL), or null.
    unsafe {
        // One-character and empty strings go through the decoder, which returns its cached
        // singletons for them.
        if len > 1 && bytes.is_ascii() {
            let s = ffi::PyUnicode_New(len as ffi::Py_ssize_t, 127);
            if !s.is_null() {
                ptr::copy_nonoverlapping(bytes.as_ptr(), ffi::PyUnicode_DATA(s).cast::<u8>(), len);
            }
            return s;
        }
        if len > 1 {
            if let Some(widest) = decode(bytes, scratch) {
                return from_code_points(scratch, widest);
            }
        }
        ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), len as ffi::Py_ssize_t, c"strict".as_ptr())
    }
}

/// Decodes UTF-8 into `out` (replacing its content), checking it; returns the bitwise OR of
/// its non-ASCII code points, or `None` if the bytes are not UTF-8.
#[inline(never)]
fn decode(bytes: &[u8], out: &mut Vec<u32>) -> Option<u32> {
    out.clear();
    out.reserve(bytes.len());
    let dst = out.as_mut_ptr();
    let (n, mut i, mut k, mut any) = (bytes.len(), 0, 0, 0u32);
    // Every character takes at least one byte and writes one code point, so k ≤ i ≤ n, within
    // the capacity reserved above: that is what makes each `dst.add(k).write` sound.
    while i < n {
        let b0 = bytes[i];
        if b0 < 0x80 {
            // SAFETY: k ≤ i < n (see above).
            unsafe { dst.add(k).write(b0 as u32) };
            (i, k) = (i + 1, k + 1);
            // The rest of an ASCII run, eight bytes at a time.
            while let Some(chunk) = bytes.get(i..i + 8) {
                let chunk: [u8; 8] = chunk.try_into().unwrap();
                if u64::from_le_bytes(chunk) & 0x8080_8080_8080_8080 != 0 {
                    break;
                }
                for (j, &b) in chunk.iter().enumerate() {
                    // SAFETY: k + j < i + 8 ≤ n (see above).
                    unsafe { dst.add(k + j).write(b as u32) };
                }
                (i, k) = (i + 8, k + 8);
            }
            continue;
        }
        let continuation = |b: u8| b & 0xC0 == 0x80;
        let (c, len) = match *bytes.get(i..).unwrap_or_default() {
            [0xC2..=0xDF, b1, ..] if continuation(b1) => ((b0 as u32 & 0x1F) << 6 | (b1 as u32 & 0x3F), 2),
            [0xE1..=0xEC | 0xEE..=0xEF, b1, b2, ..] if continuation(b1) && continuation(b2) => {
                // Leads E1-EC and EE-EF cannot start an overlong form or a surrogate.
                ((b0 as u32 & 0x0F) << 12 | (b1 as u32 & 0x3F) << 6 | (b2 as u32 & 0x3F), 3)
            }
            _ => wide(&bytes[i..])?,
        };
        // SAFETY: k ≤ i < n (see above).
        unsafe { dst.add(k).write(c) };
        any |= c;
        (i, k) = (i + len, k + 1);
    }
    // SAFETY: the first k code points were written above.
    unsafe { out.set_len(k) };
    Some(any)
}

/// The three- or four-byte character at the start of `bytes` and its length, or `None` if
/// it is not one (a bad lead or continuation byte, an overlong form, a surrogate, a code
/// point past U+10FFFF, or a truncated sequence).
#[inline]
fn wide(bytes: &[u8]) -> Option<(u32, usize)> {
    let continuation = |b: u8| b & 0xC0 == 0x80;
    match *bytes {
        [b0 @ 0xE0..=0xEF, b1, b2, ..] if continuation(b1) && continuation(b2) => {
            let c = (b0 as u32 & 0x0F) << 12 | (b1 as u32 & 0x3F) << 6 | (b2 as u32 & 0x3F);
            (c >= 0x800 && !(0xD800..=0xDFFF).contains(&c)).then_some((c, 3))
        }
        [b0 @ 0xF0..=0xF4, b1, b2, b3, ..] if continuation(b1) && continuation(b2) && continuation(b3) => {
            let c = (b0 as u32 & 0x07) << 18 | (b1 as u32 & 0x3F) << 12 | (b2 as u32 & 0x3F) << 6 | (b3 as u32 & 0x3F);
            (0x10000..=0x10FFFF).contains(&c).then_some((c, 4))
        }
        _ => None,
    }
}

/// A `str` of the code points in `chars`, the bitwise OR of whose non-ASCII ones is `any`.
///
/// # Safety
/// The code points must be Unicode scalar values; the GIL must be held.
unsafe fn from_code_points(chars: &[u32], any: u32) -> *mut ffi::PyObject {
    // The OR reaches 2^8 (2^16) exactly when some code point does: it fixes the kind (ASCII
    // code points, left out of it, cannot change the kind).
    let maxchar: ffi::Py_UCS4 = match any {
        0..=0x7F => 0x7F,
        0x80..=0xFF => 0xFF,
        0x100..=0xFFFF => 0xFFFF,
        _ => 0x10FFFF,
    };
    // SAFETY: PyUnicode_New(n, maxchar) returns a compact string with room for n code units
    // of the kind maxchar implies, or null; every code point fits that kind.
    unsafe {
        let s = ffi::PyUnicode_New(chars.len() as ffi::Py_ssize_t, maxchar);
        if s.is_null() {
            return s;
        }
        let data = ffi::PyUnicode_DATA(s);
        match maxchar {
            0x7F | 0xFF => narrow(data.cast::<u8>(), chars, |c| c as u8),
            0xFFFF => narrow(data.cast::<u16>(), chars, |c| c as u16),
            _ => ptr::copy_nonoverlapping(chars.as_ptr(), data.cast::<u32>(), chars.len()),
        }
        s
    }
}

/// Copies `chars` to `out`, each converted by `unit`.
///
/// # Safety
/// `out` must have room for `chars.len()` units.
#[inline(always)]
unsafe fn narrow<T>(out: *mut T, chars: &[u32], unit: impl Fn(u32) -> T) {
    for (i, &c) in chars.iter().enumerate() {
        // SAFETY: i < chars.len(), within the caller's room.
        unsafe { out.add(i).write(unit(c)) };
    }
}

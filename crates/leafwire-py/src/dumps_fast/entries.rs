//! A dict's entries in order, for the planner.
//!
//! `PyDict_Next` costs a call and its checks per entry: on documents of many small dicts it
//! was an eighth of `dumps`. Where CPython's layout is known here (3.11 to 3.13, with the
//! GIL), a dict whose keys and values share one table (every dict `json.loads` or a literal
//! makes) is read from that table, as `PyDict_Next` itself reads it: the entries after the
//! index, in insertion order, skipping the deleted ones (a null value). Any other dict
//! (split tables of instance dicts, other versions and implementations) goes through
//! `PyDict_Next`.

use pyo3::ffi;

/// The head of CPython's `PyDictKeysObject` (Include/internal/pycore_dict.h, the same in
/// 3.11, 3.12 and 3.13 without `Py_GIL_DISABLED`); the index (`dk_indices`, of
/// `1 << dk_log2_index_bytes` bytes) follows it, and the entries follow the index.
#[cfg(all(Py_3_11, not(any(Py_3_14, PyPy, GraalPy, Py_GIL_DISABLED))))]
#[repr(C)]
struct KeysHead {
    dk_refcnt: ffi::Py_ssize_t,
    dk_log2_size: u8,
    dk_log2_index_bytes: u8,
    dk_kind: u8,
    dk_version: u32,
    dk_usable: ffi::Py_ssize_t,
    dk_nentries: ffi::Py_ssize_t,
}

/// `dk_kind` of a table whose keys may be any objects: entries are (hash, key, value).
#[cfg(all(Py_3_11, not(any(Py_3_14, PyPy, GraalPy, Py_GIL_DISABLED))))]
const KEYS_GENERAL: u8 = 0;
/// `dk_kind` of a table whose keys are all `str`: entries are (key, value).
#[cfg(all(Py_3_11, not(any(Py_3_14, PyPy, GraalPy, Py_GIL_DISABLED))))]
const KEYS_UNICODE: u8 = 1;

/// The entries of one dict; the caller knows their number (`PyDict_Size`), so the step
/// that would report the end is never taken.
pub struct Entries {
    dict: *mut ffi::PyObject,
    pos: ffi::Py_ssize_t,
    /// The first entry's key field, the words per entry and the entries' number (used and
    /// deleted) when the table is read directly; `None`: through `PyDict_Next`.
    table: Option<(*const *mut ffi::PyObject, usize, usize)>,
}

impl Entries {
    /// # Safety
    /// `dict` must be a live exact dict, unchanged while its entries are read.
    #[inline]
    pub unsafe fn new(dict: *mut ffi::PyObject) -> Entries {
        Entries { dict, pos: 0, table: unsafe { table(dict) } }
    }

    /// The next (key, value), or `None` if there is none.
    ///
    /// # Safety
    /// As for `new`.
    #[inline]
    pub unsafe fn next(&mut self) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        if let Some((first, words, count)) = self.table {
            while (self.pos as usize) < count {
                // SAFETY: `pos` < the table's entry count, so the entry is inside it; its
                // key and value fields are the words `table` located.
                let (key, value) = unsafe {
                    let entry = first.add(self.pos as usize * words);
                    (*entry, *entry.add(1))
                };
                self.pos += 1;
                if !value.is_null() {
                    return Some((key, value));
                }
            }
            return None;
        }
        let (mut key, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
        (unsafe { ffi::PyDict_Next(self.dict, &mut self.pos, &mut key, &mut value) } != 0).then_some((key, value))
    }
}

/// Where a combined table's entries are: the first entry's key field, the words per entry
/// and the number of entries; `None` for a split table or a layout not known here.
///
/// # Safety
/// `dict` must be a live exact dict.
#[inline(always)]
unsafe fn table(dict: *mut ffi::PyObject) -> Option<(*const *mut ffi::PyObject, usize, usize)> {
    #[cfg(all(Py_3_11, not(any(Py_3_14, PyPy, GraalPy, Py_GIL_DISABLED))))]
    unsafe {
        let dict = dict.cast::<ffi::PyDictObject>();
        if !(*dict).ma_values.is_null() {
            return None;
        }
        let keys = (*dict).ma_keys.cast::<KeysHead>();
        let (words, key_word) = match (*keys).dk_kind {
            KEYS_UNICODE => (2, 0),
            KEYS_GENERAL => (3, 1),
            _ => return None,
        };
        let entries = keys.add(1).cast::<u8>().add(1usize << (*keys).dk_log2_index_bytes);
        let first = entries.cast::<*mut ffi::PyObject>().add(key_word);
        return Some((first, words, (*keys).dk_nentries as usize));
    }
    #[allow(unreachable_code)]
    {
        let _ = dict;
        None
    }
}

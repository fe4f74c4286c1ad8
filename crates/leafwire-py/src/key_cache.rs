//! Dictionary keys made into Python strings, kept from one `loads` to the next (as orjson
//! keeps its keys): documents of one kind repeat their keys, and making each key's `str`,
//! interning it, and freeing it with the result (a mortal interned string leaves the
//! interpreter's table when it dies) was about a tenth of loading a small document
//! (github_events.json, callgrind).
//!
//! The cache is a table of `SLOTS` ASCII keys of at most `MAX_KEY` bytes, each slot found
//! by a hash of the key's bytes and holding one interned `str` (a reference the cache
//! owns): a hit is the same key (lengths and bytes compared), a miss makes the key as
//! before and takes the slot. It is used only with the GIL (free-threaded builds go
//! without it), by one walk at a time; its strings live until the interpreter ends, as
//! interned strings often do.

use std::sync::Mutex;

use pyo3::ffi;

use crate::strings::compact_ascii;

/// Slots in the table (a power of two).
const SLOTS: usize = 1024;

/// The longest key kept: longer ones are rarely repeated names.
const MAX_KEY: usize = 64;

/// The table: slot i holds an interned ASCII `str` whose hash selects slot i, or null.
pub struct KeyCache {
    slots: Vec<*mut ffi::PyObject>,
}

// SAFETY: the cache's references are only used (read, increfed, replaced) by a `loads`
// holding both the GIL and the mutex around the cache; builds without a GIL do not use it.
unsafe impl Send for KeyCache {}

static CACHE: Mutex<Option<KeyCache>> = Mutex::new(None);

/// Runs `walk` with the cache, or with `None` when it is in use (another thread's `loads`,
/// possible only without the GIL) or this build has none.
pub fn with_cache<R>(walk: impl FnOnce(Option<&mut KeyCache>) -> R) -> R {
    #[cfg(not(Py_GIL_DISABLED))]
    if let Ok(mut guard) = CACHE.try_lock() {
        let cache = guard.get_or_insert_with(|| KeyCache { slots: vec![std::ptr::null_mut(); SLOTS] });
        return walk(Some(cache));
    }
    walk(None)
}

impl KeyCache {
    /// The slot of `bytes` (hashed once for a look-up and the `put` that may follow it),
    /// or `None` for a key the cache does not keep.
    #[inline]
    pub fn slot(&self, bytes: &[u8]) -> Option<usize> {
        slot_of(bytes)
    }

    /// A new reference to the cached `str` of `bytes` (whose slot is `slot`), or null if
    /// it is not cached.
    ///
    /// # Safety
    /// The GIL must be held.
    #[inline]
    pub unsafe fn get(&self, slot: usize, bytes: &[u8]) -> *mut ffi::PyObject {
        let key = self.slots[slot];
        // SAFETY: a non-null slot holds a live compact ASCII `str` the cache owns.
        unsafe {
            if !key.is_null() && compact_ascii(key) == Some(bytes) {
                ffi::Py_INCREF(key);
                return key;
            }
        }
        std::ptr::null_mut()
    }

    /// Keeps `key`, an interned `str` whose text has slot `slot`, if it is compact ASCII,
    /// in place of the slot's key.
    ///
    /// # Safety
    /// The GIL must be held and `key` a live `str`.
    #[inline]
    pub unsafe fn put(&mut self, slot: usize, key: *mut ffi::PyObject) {
        // SAFETY: `key` is a live `str`; the slot's old key is a reference the cache owns.
        unsafe {
            if compact_ascii(key).is_none() {
                return;
            }
            ffi::Py_INCREF(key);
            let old = std::mem::replace(&mut self.slots[slot], key);
            ffi::Py_XDECREF(old);
        }
    }
}

/// The slot of a key's bytes, or `None` for a key the cache does not keep.
#[inline(always)]
fn slot_of(bytes: &[u8]) -> Option<usize> {
    if bytes.is_empty() || bytes.len() > MAX_KEY {
        return None;
    }
    let hash = std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, bytes);
    // Fx's high bits are its best mixed.
    Some((hash >> 40) as usize & (SLOTS - 1))
}

//! The hot path of `Node::pointer` and `Node::get`: one object or array step computed
//! straight from the container's geometry, reading only the bytes the step needs, with
//! errors built out of line so the common path stays a few dozen instructions.

use crate::error::{Error, Result};
use crate::format::container::Geometry;
use crate::format::dictionary::Dict;
use crate::format::{hash, tag};

/// Child `i` of the array at `offset`.
#[inline]
pub(crate) fn array_child(buf: &[u8], offset: u64, i: usize) -> Result<(u8, u64)> {
    let g = Geometry::parse(buf, offset, tag::ARRAY)?;
    if i >= g.count {
        return Err(out_of_range(i, g.count, offset));
    }
    g.child(buf, i)
}

/// The child under `key` in the object at `offset`.
#[inline]
pub(crate) fn object_child(buf: &[u8], keys: &[u8], dict: &Dict, offset: u64, key: &[u8]) -> Result<(u8, u64)> {
    object_child_hashed(buf, keys, dict, offset, key, hash::key_hash(key))
}

/// The child under `key`, whose hash (spec §4.2) the caller computed (a prepared pointer
/// hashes its tokens once). Out of line: one compact step the walk calls.
#[inline(never)]
pub(crate) fn object_child_hashed(buf: &[u8], keys: &[u8], dict: &Dict, offset: u64, key: &[u8], hash: u64) -> Result<(u8, u64)> {
    // `Geometry::parse` split in two here: through its `Result` the geometry went to the
    // stack, 2–8% of a lookup's instructions (measured on the corpus pointers).
    let geometry = match Geometry::parse_plain(buf, offset, tag::OBJECT) {
        Some(g) => g,
        None => Geometry::parse_general(buf, offset, tag::OBJECT)?,
    };
    PreparedObject { geometry }.child_hashed(buf, keys, dict, key, hash)
}

/// An object whose header has been read once, for any number of key lookups.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PreparedObject {
    geometry: Geometry,
}

impl PreparedObject {
    #[inline]
    pub fn parse(buf: &[u8], offset: u64) -> Result<PreparedObject> {
        Ok(PreparedObject { geometry: Geometry::parse(buf, offset, tag::OBJECT)? })
    }

    pub fn len(&self) -> usize {
        self.geometry.count
    }

    /// The (tag, payload) under `key`.
    #[inline]
    pub fn child(&self, buf: &[u8], keys: &[u8], dict: &Dict, key: &[u8]) -> Result<(u8, u64)> {
        self.child_hashed(buf, keys, dict, key, hash::key_hash(key))
    }

    /// `keys` holds the dictionary `dict` describes (the document's bytes, or a stream's
    /// key table). An indexed object is probed by the key's hash (spec §4.1) and each
    /// candidate named is checked by its key's text, so the dictionary's own table is not
    /// probed; a small object's few key ids are scanned for the id the dictionary gives.
    #[inline(always)]
    pub fn child_hashed(&self, buf: &[u8], keys: &[u8], dict: &Dict, key: &[u8], hash: u64) -> Result<(u8, u64)> {
        let g = &self.geometry;
        let found = if g.has_index() {
            g.probe_index(buf, hash, |i| dict.key_is(keys, g.key(buf, i), key))?
        } else {
            match dict.find(keys, key, hash)? {
                Some(id) => g.find(buf, id, hash)?,
                None => None,
            }
        };
        match found {
            Some(i) => g.child(buf, i),
            None => Err(absent(g.pos, key)),
        }
    }
}

#[cold]
pub(crate) fn out_of_range(i: usize, len: usize, offset: u64) -> Error {
    Error::not_found(format!("index {i} out of range for length {len}")).at(offset)
}

#[cold]
fn absent(pos: usize, key: &[u8]) -> Error {
    Error::not_found(format!("no key \"{}\" in object", String::from_utf8_lossy(key))).at(pos as u64)
}

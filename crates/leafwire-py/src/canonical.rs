//! The arithmetic of the canonical layout (spec §§3–7) that the direct encoder needs. The
//! format's constants, key hash and table geometry come from the core (`leafwire::raw`);
//! what is here is the writer's own: alignment by mask, varints written into a slice,
//! widths as bytes, and the container geometry of a fresh (c = n) layout.
//! `tests/python/test_dumps_bytes.py` checks the result against the core's encoder byte for
//! byte.

pub use leafwire::raw::{dictionary_table_size, home_bucket, index_geometry, key_hash, tag, HAS_INDEX, HEADER_LEN, INDEX_THRESHOLD, KEY_WIDTH_SHIFT};

/// `pos` rounded up to a multiple of `to`, a power of two (every alignment of the format
/// is one): a mask, not a division.
#[inline]
pub fn align(pos: usize, to: usize) -> usize {
    debug_assert!(to.is_power_of_two());
    (pos + to - 1) & !(to - 1)
}

#[inline]
pub fn varint_len(mut value: u64) -> usize {
    let mut n = 1;
    while value >= 0x80 {
        value >>= 7;
        n += 1;
    }
    n
}

/// Writes a varint at `out[0..]`; returns its length.
#[inline]
pub fn put_varint(out: &mut [u8], mut value: u64) -> usize {
    let mut n = 0;
    while value >= 0x80 {
        out[n] = (value as u8) | 0x80;
        value >>= 7;
        n += 1;
    }
    out[n] = value as u8;
    n + 1
}

/// The smallest width in {1, 2, 4, 8} holding `v` as a signed integer.
#[inline]
pub fn signed_width(v: i64) -> u8 {
    if v == v as i8 as i64 {
        1
    } else if v == v as i16 as i64 {
        2
    } else if v == v as i32 as i64 {
        4
    } else {
        8
    }
}

/// The smallest width in {1, 2, 4, 8} holding `v` as an unsigned integer.
#[inline]
pub fn unsigned_width(v: u64) -> u8 {
    if v <= u8::MAX as u64 {
        1
    } else if v <= u16::MAX as u64 {
        2
    } else if v <= u32::MAX as u64 {
        4
    } else {
        8
    }
}

#[inline]
pub fn log2_width(w: usize) -> u8 {
    w.trailing_zeros() as u8
}

/// Where a container's parts lie when it starts at `pos` (spec §4, c = n).
pub struct Geometry {
    pub tags: usize,
    pub keys: usize,
    pub slots: usize,
    /// Start of the hash index (equal to `end` without one).
    pub index: usize,
    pub end: usize,
}

pub fn container_geometry(pos: usize, len: usize, width: usize, key_width: usize, indexed: bool) -> Geometry {
    let tags = pos + 1 + varint_len(len as u64);
    let keys = tags + len;
    let slots = align(keys + len * key_width, width);
    let mut end = slots + len * width;
    let index = if indexed {
        let (table, entry) = index_geometry(len);
        let at = align(end, entry);
        end = at + table * entry;
        at
    } else {
        end
    };
    Geometry { tags, keys, slots, index, end }
}

//! The arithmetic of the canonical layout (spec §§3–7) that the direct encoder needs: tags,
//! widths, varints, key hash, hash-index and dictionary geometry. The core keeps the same
//! rules in its private `layout` module; they are repeated here because the core does not
//! export them, and `tests/python/test_dumps_bytes.py` checks the two agree byte for byte.

pub const HEADER_LEN: usize = 112;
/// Objects and intmaps with more children than this carry a hash index (spec §7).
pub const INDEX_THRESHOLD: usize = 8;

/// Type tags (spec §3.1).
pub mod tag {
    pub const NULL: u8 = 0x00;
    pub const FALSE: u8 = 0x01;
    pub const TRUE: u8 = 0x02;
    pub const INT: u8 = 0x03;
    pub const UINT: u8 = 0x04;
    pub const F64: u8 = 0x05;
    pub const STRING: u8 = 0x07;
    pub const BYTES: u8 = 0x08;
    pub const ARRAY: u8 = 0x0A;
    pub const OBJECT: u8 = 0x0B;
    pub const INTMAP: u8 = 0x0C;
}

/// Container layout byte bits (spec §4).
pub const KEY_WIDTH_SHIFT: u8 = 2;
pub const HAS_INDEX: u8 = 0b0010_0000;

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

/// The key hash of spec §4.2.
pub fn key_hash(key: &[u8]) -> u64 {
    let mix = |h: u64, chunk: u64| {
        let h = (h ^ chunk).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^ (h >> 31)
    };
    let mut h = (key.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        h = mix(h, u64::from_le_bytes(chunk.try_into().unwrap()));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = mix(h, u64::from_le_bytes(last));
    }
    h
}

/// Table size of the key dictionary's hash table for `count` keys (spec §6).
pub fn dictionary_table_size(count: usize) -> usize {
    (2 * count).max(2).next_power_of_two()
}

/// Hash index geometry for a container of `count` children: (table size, entry width).
pub fn index_geometry(count: usize) -> (usize, usize) {
    let table = (2 * count).max(2).next_power_of_two();
    let entry = if count < 255 {
        1
    } else if count < 65535 {
        2
    } else {
        4
    };
    (table, entry)
}

/// Home bucket of hash `h` in a table of `table` (a power of two) entries (spec §4.1).
#[inline]
pub fn home_bucket(h: u64, table: usize) -> usize {
    let bits = table.trailing_zeros();
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// Fills a linear-probing hash table of `table` entries (spec §§4.1, 6): entry i + 1 for
/// the i-th hash, 0 for empty.
pub fn hash_table(hashes: impl Iterator<Item = u64>, table: usize) -> Vec<u32> {
    let mut slots = vec![0u32; table];
    for (i, h) in hashes.enumerate() {
        let mut bucket = home_bucket(h, table);
        while slots[bucket] != 0 {
            bucket = (bucket + 1) & (table - 1);
        }
        slots[bucket] = i as u32 + 1;
    }
    slots
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

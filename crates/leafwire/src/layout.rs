//! The constants and byte-level helpers of the format (spec §§1–6): tags, element types,
//! header fields, varints, alignment and the hash-index arithmetic. Reader, writer and
//! validator all take their numbers from here.

use crate::error::{Error, Result};

pub const MAGIC: &[u8; 8] = b"LEAFWIRE";
pub const MAJOR_VERSION: u8 = 1;
pub const MINOR_VERSION: u8 = 0;
pub const HEADER_LEN: usize = 112;
pub const RECORD_A: usize = 16;
pub const RECORD_B: usize = 64;
pub const RECORD_LEN: usize = 48;
/// Feature flags this reader understands (none in 1.0).
pub const KNOWN_FLAGS: u16 = 0;

/// Objects and intmaps with more children than this carry a hash index (spec §7).
pub const INDEX_THRESHOLD: usize = 8;
pub const DEFAULT_MAX_DEPTH: usize = 128;
pub const MAX_RANK: usize = 32;

/// Type tags (spec §3.1).
pub mod tag {
    pub const NULL: u8 = 0x00;
    pub const FALSE: u8 = 0x01;
    pub const TRUE: u8 = 0x02;
    pub const INT: u8 = 0x03;
    pub const UINT: u8 = 0x04;
    pub const F64: u8 = 0x05;
    pub const F32: u8 = 0x06;
    pub const STRING: u8 = 0x07;
    pub const BYTES: u8 = 0x08;
    pub const BIGNUM: u8 = 0x09;
    pub const ARRAY: u8 = 0x0A;
    pub const OBJECT: u8 = 0x0B;
    pub const INTMAP: u8 = 0x0C;
    pub const TYPED: u8 = 0x0D;
    pub const LAST: u8 = TYPED;

    /// Whether the payload of this tag is an offset to a block.
    pub fn is_pointer(t: u8) -> bool {
        (STRING..=TYPED).contains(&t)
    }
}

/// Container layout byte bits (spec §4).
pub mod container {
    pub const WIDTH_MASK: u8 = 0b0000_0011;
    pub const KEY_WIDTH_SHIFT: u8 = 2;
    pub const HAS_CAPACITY: u8 = 0b0001_0000;
    pub const HAS_INDEX: u8 = 0b0010_0000;
    pub const RESERVED: u8 = 0b1100_0000;
}

/// Typed array rank byte bits (spec §5.2).
pub mod rank {
    pub const DIMS_MASK: u8 = 0b0011_1111;
    pub const HAS_MASK: u8 = 0b0100_0000;
    pub const HAS_CAPACITY: u8 = 0b1000_0000;
}

/// Element types of typed arrays (spec §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ElementType {
    Bool = 0,
    I8 = 1,
    I16 = 2,
    I32 = 3,
    I64 = 4,
    U8 = 5,
    U16 = 6,
    U32 = 7,
    U64 = 8,
    F32 = 9,
    F64 = 10,
}

impl ElementType {
    pub fn from_code(code: u8) -> Option<ElementType> {
        use ElementType::*;
        Some(match code {
            0 => Bool,
            1 => I8,
            2 => I16,
            3 => I32,
            4 => I64,
            5 => U8,
            6 => U16,
            7 => U32,
            8 => U64,
            9 => F32,
            10 => F64,
            _ => return None,
        })
    }

    /// Size of one element in bytes; also its alignment.
    pub fn size(self) -> usize {
        use ElementType::*;
        match self {
            Bool | I8 | U8 => 1,
            I16 | U16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        use ElementType::*;
        match self {
            Bool => "bool",
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F32 => "f32",
            F64 => "f64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ElementType::F32 | ElementType::F64)
    }
}

pub fn align(pos: usize, to: usize) -> usize {
    pos.div_ceil(to) * to
}

/// Checked `align`, for positions read from untrusted bytes.
pub fn checked_align(pos: usize, to: usize) -> Option<usize> {
    pos.checked_add(to - 1).map(|p| p / to * to)
}

/// Reads an unsigned LEB128 varint at `pos`; returns the value and the position after it.
pub fn read_varint(buf: &[u8], pos: usize) -> Result<(u64, usize)> {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    let mut p = pos;
    loop {
        let byte = *buf.get(p).ok_or_else(|| Error::malformed(p as u64, "truncated varint"))?;
        p += 1;
        let low = (byte & 0x7F) as u64;
        if shift == 63 && low > 1 {
            return Err(Error::malformed(pos as u64, "varint overflows 64 bits"));
        }
        value |= low << shift;
        if byte & 0x80 == 0 {
            return Ok((value, p));
        }
        shift += 7;
        if shift > 63 {
            return Err(Error::malformed(pos as u64, "varint longer than 10 bytes"));
        }
    }
}

pub fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub fn varint_len(mut value: u64) -> usize {
    let mut n = 1;
    while value >= 0x80 {
        value >>= 7;
        n += 1;
    }
    n
}

/// Reads a little-endian unsigned integer of `width` bytes (1, 2, 4 or 8) from `bytes`
/// at element index `i`. The caller has checked the bounds of the whole array.
#[inline(always)]
pub fn read_uint(bytes: &[u8], width: usize, i: usize) -> u64 {
    match width {
        1 => bytes[i] as u64,
        2 => u16::from_le_bytes(bytes[i * 2..i * 2 + 2].try_into().unwrap()) as u64,
        4 => u32::from_le_bytes(bytes[i * 4..i * 4 + 4].try_into().unwrap()) as u64,
        _ => u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap()),
    }
}

/// Sign-extends the low `width` bytes of `raw`.
#[inline(always)]
pub fn sign_extend(raw: u64, width: usize) -> i64 {
    let shift = 64 - 8 * width as u32;
    ((raw << shift) as i64) >> shift
}

pub fn read_u32(buf: &[u8], pos: usize) -> Option<u32> {
    Some(u32::from_le_bytes(buf.get(pos..pos.checked_add(4)?)?.try_into().ok()?))
}

/// The smallest width in {1, 2, 4, 8} holding `v` as a signed integer.
pub fn signed_width(v: i64) -> usize {
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
pub fn unsigned_width(v: u64) -> usize {
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

pub fn log2_width(w: usize) -> u8 {
    w.trailing_zeros() as u8
}

/// The key hash of spec §4.2: eight bytes per step.
#[inline]
pub fn key_hash(key: &[u8]) -> u64 {
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

#[inline(always)]
fn mix(h: u64, chunk: u64) -> u64 {
    let h = (h ^ chunk).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 31)
}

/// Table size of the key dictionary's hash table for `count` keys (spec §6).
pub fn dictionary_table_size(count: usize) -> usize {
    (2 * count).max(2).next_power_of_two()
}

/// Hash index geometry for a container of capacity `c`: (table size, entry width).
pub fn index_geometry(capacity: usize) -> (usize, usize) {
    let table = (2 * capacity).max(2).next_power_of_two();
    let entry = if capacity < 255 {
        1
    } else if capacity < 65535 {
        2
    } else {
        4
    };
    (table, entry)
}

/// Home bucket of hash `h` in a table of `table` (a power of two) entries.
#[inline]
pub fn home_bucket(h: u64, table: usize) -> usize {
    let bits = table.trailing_zeros();
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// Byte length of the hash index region (without leading alignment).
pub fn index_len(capacity: usize) -> usize {
    let (table, entry) = index_geometry(capacity);
    table * entry
}

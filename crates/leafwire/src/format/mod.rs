//! The one home of the byte layout (spec §§1–7, 9–10). Every rule of the format that more
//! than one place needs lives here, once, with checked arithmetic: the constants and tags,
//! varints and widths ([`numbers`]), the key hash and hash-table geometry ([`hash`]), the
//! header and its root records ([`header`]), where a container's tags, keys, slots and index
//! are and how a writer lays one out ([`container`]), the key dictionary ([`dictionary`]),
//! data blocks ([`data`]), typed-array headers ([`typed`]), table blocks ([`table`]) and the work budget of whole-value
//! readers ([`budget`]). The lazy reader, `raw`, the validator, the canonical encoder, the
//! editor and the Python binding all call it; none of them computes a position itself.

pub mod budget;
pub mod container;
pub mod data;
pub mod dictionary;
pub mod hash;
pub mod header;
pub mod integrity;
pub mod journal;
pub mod numbers;
pub mod sink;
pub mod stream;
pub mod table;
pub mod typed;

pub use numbers::{align, checked_align, read_u32, read_uint, read_varint, sign_extend, varint_len, write_uint, write_varint};

pub const MAGIC: &[u8; 8] = b"LEAFWIRE";
pub const MAJOR_VERSION: u8 = 1;
pub const MINOR_VERSION: u8 = 0;
pub const HEADER_LEN: usize = 112;
pub const RECORD_A: usize = 16;
pub const RECORD_B: usize = 64;
pub const RECORD_LEN: usize = 48;
/// Feature bit 0: the document holds packed arrays or objects (tags 0x0E and 0x10, spec §13).
pub const FLAG_PACKED: u16 = 1;
/// Feature flags this reader understands: packed arrays (§13) and page checksums (§2.3).
pub const KNOWN_FLAGS: u16 = FLAG_PACKED | integrity::FLAG;

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
    /// A packed array: the offset of a packed block holding a column group (spec §13).
    pub const PACKED: u8 = 0x0E;
    /// A table: the offset of a table block of named, equally long columns (spec §15).
    pub const TABLE: u8 = 0x0F;
    /// A packed object: the offset of a packed block holding its entries (spec §13.7).
    pub const PACKED_OBJECT: u8 = 0x10;
    pub const LAST: u8 = PACKED_OBJECT;

    /// Whether the tag is a packed array or object (its values live in a column group).
    #[inline]
    pub fn is_packed(t: u8) -> bool {
        t == PACKED || t == PACKED_OBJECT
    }

    /// Whether the payload of this tag is an offset to a block.
    #[inline]
    pub fn is_pointer(t: u8) -> bool {
        (STRING..=LAST).contains(&t)
    }

    /// Whether the payload of this tag is the offset of a data block (spec §5, §13) rather
    /// than of a container.
    #[inline(always)]
    pub fn is_data(t: u8) -> bool {
        matches!(t, STRING | BYTES | BIGNUM | TYPED | PACKED | TABLE | PACKED_OBJECT)
    }

    /// Whether a child with tag `t` may sit in a slot of `width` bytes (spec §3.2): the tag
    /// is known, `uint` and `f64` need 8 bytes, `f32` needs 4.
    #[inline(always)]
    pub fn fits_slot(t: u8, width: usize) -> bool {
        match t {
            F64 | UINT => width == 8,
            F32 => width >= 4,
            _ => t <= LAST,
        }
    }

    /// The narrowest slot width that holds payload `p` of tag `t` (spec §§3.2, 7): 1 for
    /// null and booleans, the smallest signed width for `int`, 8 for `uint` and `f64`, 4 for
    /// `f32`, the smallest unsigned width for an offset.
    #[inline]
    pub fn payload_width(t: u8, p: u64) -> usize {
        match t {
            NULL | FALSE | TRUE => 1,
            INT => super::numbers::signed_width(p as i64),
            UINT | F64 => 8,
            F32 => 4,
            _ => super::numbers::unsigned_width(p),
        }
    }
}

/// Whether `text` is an optional `-` and decimal digits without a leading zero (the text
/// of a bignum block, spec §5.1).
pub fn is_bignum_text(text: &[u8]) -> bool {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) && (digits[0] != b'0' || digits.len() == 1)
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


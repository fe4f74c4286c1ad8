//! Typed arrays as borrowed views: zero-copy slices and elements (spec §5.2). Where their
//! parts lie is `format::typed`'s business.

use crate::error::{Category, Error, Result};
use crate::format::typed::TypedHeader;
use crate::format::{tag, ElementType};
use crate::value::{TypedArray, Value};

/// The numbers of a whole one-dimensional typed array of `T` whose block is at `offset` in
/// `buf`, in place: what most typed arrays are, read without a header struct. `None` for
/// anything else (another type or shape, misaligned data, a big-endian machine), which the
/// caller reads the general way.
#[inline(always)]
pub(crate) fn rank1_slice<T: Element>(buf: &[u8], offset: u64) -> Option<&[T]> {
    if cfg!(target_endian = "big") {
        return None;
    }
    let (at, n) = crate::format::typed::rank1_of(buf, offset, T::TYPE)?;
    bytemuck::try_cast_slice(&buf[at..at + n * T::TYPE.size()]).ok()
}

/// A Rust type a typed array can be borrowed as.
pub trait Element: bytemuck::Pod {
    const TYPE: ElementType;
}

macro_rules! impl_element {
    ($($t:ty => $e:ident),*) => { $(impl Element for $t { const TYPE: ElementType = ElementType::$e; })* };
}
impl_element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

/// A borrowed view of a typed array, or of one row of a higher-rank one.
#[derive(Debug, Clone)]
pub struct TypedRef<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) header: TypedHeader,
    /// First axis this view covers, and its first element (flat index).
    pub(crate) level: usize,
    pub(crate) start: usize,
}

impl<'a> TypedRef<'a> {
    pub fn element_type(&self) -> ElementType {
        self.header.element
    }

    /// The dimensions of this view.
    pub fn shape(&self) -> Vec<usize> {
        self.header.shape[self.level..self.header.rank].iter().map(|&d| d as usize).collect()
    }

    /// Number of elements in the view (all axes).
    pub fn element_count(&self) -> usize {
        self.header.shape[self.level] as usize * self.header.stride(self.level)
    }

    /// The elements' bytes, little-endian.
    pub fn bytes(&self) -> &'a [u8] {
        let size = self.header.element.size();
        let at = self.header.data_pos + self.start * size;
        &self.buf[at..at + self.element_count() * size]
    }

    /// The elements as a Rust slice, without copying. Fails on another element type, on a
    /// big-endian machine, or when the buffer is not aligned for `T` in memory (map or
    /// allocate the document 8-aligned, as `MappedFile` and `AlignedBytes` do).
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        if T::TYPE != self.header.element {
            return Err(Error::new(
                Category::WrongType,
                format!("typed array holds {}, not {}", self.header.element.name(), T::TYPE.name()),
            ));
        }
        if cfg!(target_endian = "big") {
            return Err(Error::new(
                Category::Unsupported,
                "zero-copy slices need a little-endian machine; use to_typed_array",
            ));
        }
        bytemuck::try_cast_slice(self.bytes()).map_err(|_| {
            Error::new(
                Category::Misaligned,
                format!("typed array data is not {}-byte aligned in memory", T::TYPE.size()),
            )
            .at((self.header.data_pos + self.start * T::TYPE.size()) as u64)
        })
    }

    /// Whether the array has an integer mask (f64 arrays that mix integers in).
    pub(crate) fn has_mask(&self) -> bool {
        self.header.mask_pos.is_some()
    }

    /// Whether element `i` of the view is an integer (f64 arrays with a mask).
    pub fn is_masked_int(&self, i: usize) -> bool {
        self.header.mask_pos.is_some_and(|m| mask_bit(self.buf, m, self.start + i))
    }

    /// Element `i` of the view (flat, row-major) as a scalar value.
    pub fn element(&self, i: usize) -> Value {
        slot_value(self.element_slot(i))
    }

    /// Element `i`'s inline slot, a masked f64 read as the integer it stands for.
    pub(crate) fn element_slot(&self, i: usize) -> (u8, u64) {
        let size = self.header.element.size();
        let at = self.header.data_pos + (self.start + i) * size;
        masked_slot(element_slot(self.header.element, &self.buf[at..at + size]), self.is_masked_int(i))
    }

    /// The integer mask of the view's elements, one bool each (all false without a mask).
    fn mask(&self) -> Vec<bool> {
        let n = self.element_count();
        let Some(at) = self.header.mask_pos else { return vec![false; n] };
        // Byte by byte rather than a bounds-checked bit read per element: the view's bits
        // start at bit `start` of the mask.
        let first = self.start;
        let bytes = &self.buf[at + first / 8..at + (first + n).div_ceil(8)];
        let mut mask = Vec::with_capacity(n + 8);
        for &byte in bytes {
            mask.extend((0..8).map(|bit| byte >> bit & 1 == 1));
        }
        mask.drain(..first % 8);
        mask.truncate(n);
        mask
    }

    /// Copies the view into an owned `TypedArray` (works at any alignment).
    pub fn to_typed_array(&self) -> TypedArray {
        let data = crate::value::typed_data_from_le(self.header.element, self.bytes());
        let mask = self.header.mask_pos.map(|_| self.mask()).filter(|m| m.iter().any(|&b| b));
        TypedArray::from_parts(self.shape(), data, mask)
    }
}

/// Whether the integer mask at `mask_pos` marks flat element `flat` as an integer (spec
/// §5.2: bit `flat % 8` of byte `flat / 8`).
#[inline(always)]
pub(crate) fn mask_bit(buf: &[u8], mask_pos: usize, flat: usize) -> bool {
    buf[mask_pos + flat / 8] >> (flat % 8) & 1 == 1
}

/// An f64 element's slot as read: the integer it holds where the mask marks it as one.
#[inline(always)]
pub(crate) fn masked_slot(slot: (u8, u64), is_int: bool) -> (u8, u64) {
    match slot {
        (tag::F64, bits) if is_int => (tag::INT, f64::from_bits(bits) as i64 as u64),
        slot => slot,
    }
}

/// The inline slot (tag, payload, spec §3) of one element's little-endian bytes `b`: the
/// form an element takes as a node of its own (f64 as `F64`: an integer mask is the
/// caller's business, [`masked_slot`]).
#[inline]
pub(crate) fn element_slot(element: ElementType, b: &[u8]) -> (u8, u64) {
    use ElementType::*;
    let int = |v: i64| (tag::INT, v as u64);
    match element {
        Bool => (if b[0] != 0 { tag::TRUE } else { tag::FALSE }, 0),
        I8 => int(b[0] as i8 as i64),
        U8 => int(b[0] as i64),
        I16 => int(i16::from_le_bytes([b[0], b[1]]) as i64),
        U16 => int(u16::from_le_bytes([b[0], b[1]]) as i64),
        I32 => int(i32::from_le_bytes(b.try_into().unwrap()) as i64),
        U32 => int(u32::from_le_bytes(b.try_into().unwrap()) as i64),
        I64 => int(i64::from_le_bytes(b.try_into().unwrap())),
        U64 => match u64::from_le_bytes(b.try_into().unwrap()) {
            v if v <= i64::MAX as u64 => (tag::INT, v),
            v => (tag::UINT, v),
        },
        F32 => (tag::F32, f32::from_le_bytes(b.try_into().unwrap()).to_bits() as u64),
        F64 => (tag::F64, u64::from_le_bytes(b.try_into().unwrap())),
    }
}

/// One element's little-endian bytes `b` as a value: its [`element_slot`] read back.
pub(crate) fn element_value(element: ElementType, b: &[u8]) -> Value {
    slot_value(element_slot(element, b))
}

/// The value of an element's inline slot.
fn slot_value((t, payload): (u8, u64)) -> Value {
    match t {
        tag::TRUE => Value::Bool(true),
        tag::FALSE => Value::Bool(false),
        tag::INT => Value::Int(payload as i64),
        tag::UINT => Value::UInt(payload),
        tag::F32 => Value::F32(f32::from_bits(payload as u32)),
        _ => Value::F64(f64::from_bits(payload)),
    }
}

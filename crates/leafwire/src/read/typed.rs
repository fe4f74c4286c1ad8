//! Typed array blocks (spec §5.2): header parsing and zero-copy slices.

use crate::error::{Category, Error, Result};
use crate::layout::{checked_align, rank, read_varint, ElementType, MAX_RANK};
use crate::value::{TypedArray, TypedData, Value};

/// A Rust type a typed array can be borrowed as.
pub trait Element: bytemuck::Pod {
    const TYPE: ElementType;
}

macro_rules! impl_element {
    ($($t:ty => $e:ident),*) => { $(impl Element for $t { const TYPE: ElementType = ElementType::$e; })* };
}
impl_element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

/// A parsed typed array header.
#[derive(Debug, Clone)]
pub(crate) struct TypedHeader {
    pub element: ElementType,
    pub rank: usize,
    /// The dimensions (`rank` of them); most arrays have one or two, kept inline.
    pub shape: smallvec::SmallVec<[u64; 3]>,
    /// Element count (product of the shape).
    pub count: usize,
    pub data_pos: usize,
    pub mask_pos: Option<usize>,
}

impl TypedHeader {
    pub fn parse(buf: &[u8], offset: u64) -> Result<TypedHeader> {
        let malformed = |what: String| Error::malformed(offset, format!("typed array: {what}"));
        let pos = usize::try_from(offset).ok().filter(|&p| p >= crate::layout::HEADER_LEN && p + 2 <= buf.len())
            .ok_or_else(|| malformed(format!("offset {offset} outside the document")))?;
        let element = ElementType::from_code(buf[pos]).ok_or_else(|| malformed(format!("unknown element type {}", buf[pos])))?;
        let rank_byte = buf[pos + 1];
        let rank = (rank_byte & rank::DIMS_MASK) as usize;
        if rank == 0 || rank > MAX_RANK {
            return Err(malformed(format!("rank {rank} outside 1..=32")));
        }
        let has_mask = rank_byte & rank::HAS_MASK != 0;
        if has_mask && (element != ElementType::F64 || rank_byte & rank::HAS_CAPACITY != 0) {
            return Err(malformed("an integer mask needs element type f64 and no capacity".into()));
        }
        let mut shape = smallvec::SmallVec::<[u64; 3]>::new();
        let mut q = pos + 2;
        let mut count: u64 = 1;
        let mut rows: u64 = 1;
        for _ in 0..rank {
            let d;
            (d, q) = read_varint(buf, q)?;
            count = count.checked_mul(d).ok_or_else(|| malformed("element count overflows".into()))?;
            // Bounds the rows a reader may walk even when a later dimension is zero.
            rows = rows.saturating_mul(d);
            if rows > buf.len() as u64 {
                return Err(malformed(format!("shape has more rows than the document has bytes (dimension {d})")));
            }
            shape.push(d);
        }
        let mut spare_rows = 0;
        if rank_byte & rank::HAS_CAPACITY != 0 {
            (spare_rows, q) = read_varint(buf, q)?;
        }
        let size = element.size() as u64;
        let data_pos = checked_align(q, element.size()).ok_or_else(|| malformed("truncated".into()))?;
        let available = (buf.len() - data_pos.min(buf.len())) as u64;
        let row = if shape[0] == 0 { 0 } else { count / shape[0] };
        let reserved = spare_rows.checked_mul(row).and_then(|r| r.checked_add(count));
        let data_len = reserved.and_then(|n| n.checked_mul(size));
        let mask_len = if has_mask { count.div_ceil(8) } else { 0 };
        if data_len.and_then(|l| l.checked_add(mask_len)).is_none_or(|l| l > available) {
            return Err(malformed(format!("{count} elements of {} do not fit in the document", element.name())));
        }
        let mask_pos = has_mask.then(|| data_pos + data_len.unwrap() as usize);
        Ok(TypedHeader { element, rank, shape, count: count as usize, data_pos, mask_pos })
    }

    /// Element count of one row at `level` (the product of the dimensions after it).
    pub fn stride(&self, level: usize) -> usize {
        self.shape[level + 1..self.rank].iter().product::<u64>() as usize
    }
}

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
            return Err(Error::new(Category::WrongType, format!("typed array holds {}, not {}", self.header.element.name(), T::TYPE.name())));
        }
        if cfg!(target_endian = "big") {
            return Err(Error::new(Category::Unsupported, "zero-copy slices need a little-endian machine; use to_typed_array"));
        }
        bytemuck::try_cast_slice(self.bytes()).map_err(|_| {
            Error::new(Category::Misaligned, format!("typed array data is not {}-byte aligned in memory", T::TYPE.size()))
                .at((self.header.data_pos + self.start * T::TYPE.size()) as u64)
        })
    }

    /// Whether element `i` of the view is an integer (f64 arrays with a mask).
    pub fn is_masked_int(&self, i: usize) -> bool {
        self.header.mask_pos.is_some_and(|m| {
            let flat = self.start + i;
            self.buf[m + flat / 8] >> (flat % 8) & 1 == 1
        })
    }

    /// Element `i` of the view (flat, row-major) as a scalar value.
    pub fn element(&self, i: usize) -> Value {
        let size = self.header.element.size();
        let at = self.header.data_pos + (self.start + i) * size;
        let b = &self.buf[at..at + size];
        use ElementType::*;
        match self.header.element {
            Bool => Value::Bool(b[0] != 0),
            I8 => Value::Int(b[0] as i8 as i64),
            U8 => Value::Int(b[0] as i64),
            I16 => Value::Int(i16::from_le_bytes([b[0], b[1]]) as i64),
            U16 => Value::Int(u16::from_le_bytes([b[0], b[1]]) as i64),
            I32 => Value::Int(i32::from_le_bytes(b.try_into().unwrap()) as i64),
            U32 => Value::Int(u32::from_le_bytes(b.try_into().unwrap()) as i64),
            I64 => Value::Int(i64::from_le_bytes(b.try_into().unwrap())),
            U64 => Value::from_u64(u64::from_le_bytes(b.try_into().unwrap())),
            F32 => Value::F32(f32::from_le_bytes(b.try_into().unwrap())),
            F64 => {
                let v = f64::from_le_bytes(b.try_into().unwrap());
                if self.is_masked_int(i) { Value::Int(v as i64) } else { Value::F64(v) }
            }
        }
    }

    /// Copies the view into an owned `TypedArray` (works at any alignment).
    pub fn to_typed_array(&self) -> TypedArray {
        let bytes = self.bytes();
        fn collect<T, const N: usize>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            bytes.chunks_exact(N).map(|c| f(c.try_into().unwrap())).collect()
        }
        let data = match self.header.element {
            ElementType::Bool => TypedData::Bool(bytes.iter().map(|&b| b != 0).collect()),
            ElementType::I8 => TypedData::I8(bytes.iter().map(|&b| b as i8).collect()),
            ElementType::U8 => TypedData::U8(bytes.to_vec()),
            ElementType::I16 => TypedData::I16(collect(bytes, i16::from_le_bytes)),
            ElementType::U16 => TypedData::U16(collect(bytes, u16::from_le_bytes)),
            ElementType::I32 => TypedData::I32(collect(bytes, i32::from_le_bytes)),
            ElementType::U32 => TypedData::U32(collect(bytes, u32::from_le_bytes)),
            ElementType::I64 => TypedData::I64(collect(bytes, i64::from_le_bytes)),
            ElementType::U64 => TypedData::U64(collect(bytes, u64::from_le_bytes)),
            ElementType::F32 => TypedData::F32(collect(bytes, f32::from_le_bytes)),
            ElementType::F64 => TypedData::F64(collect(bytes, f64::from_le_bytes)),
        };
        let mask = self.header.mask_pos
            .map(|_| (0..self.element_count()).map(|i| self.is_masked_int(i)).collect::<Vec<bool>>())
            .filter(|m| m.iter().any(|&b| b));
        TypedArray::from_parts(self.shape(), data, mask)
    }
}

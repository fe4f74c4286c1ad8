//! serde access to a typed array (spec §5.2) from one parsed header: rows and elements are
//! read straight from the element bytes, so a `Vec<f64>` or `Vec<(f64, f64)>` costs a
//! header parse per array, not one per element (which made `from_slice` on coordinate
//! arrays tens of times slower than decoding them to a `Value`).

use serde::de::{self, DeserializeSeed, Visitor};

use crate::de::check_tuple_len;
use crate::error::{Error, Result};
use crate::format::typed::TypedHeader;
use crate::format::ElementType;

/// The `Deserializer` methods a typed array and a row of its last axis share: beside
/// `deserialize_any`, `deserialize_bytes` and `deserialize_tuple`, which each defines, a
/// view is an array whatever serde asks for.
macro_rules! view_methods {
    () => {
        fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.deserialize_bytes(visitor)
        }

        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            visitor.visit_some(self)
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
            visitor.visit_newtype_struct(self)
        }

        fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            visitor.visit_unit()
        }

        fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, len: usize, visitor: V) -> Result<V::Value> {
            self.deserialize_tuple(len, visitor)
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            unit unit_struct seq map struct enum identifier
        }
    };
}

/// A typed array, or one row of it at axis `level` starting at flat element `start`.
/// The header was parsed (and the array's budget charged) once, by the caller.
pub(crate) struct TypedDeserializer<'a, 'h> {
    pub buf: &'a [u8],
    pub header: &'h TypedHeader,
    pub level: usize,
    pub start: usize,
}

impl<'a> TypedDeserializer<'a, '_> {
    /// The element bytes of this view when it is the last axis, little-endian.
    fn last_axis_bytes(&self) -> Option<&'a [u8]> {
        let h = self.header;
        if self.level + 1 != h.rank {
            return None;
        }
        Some(element_bytes(self.buf, h, self.start, h.shape[self.level] as usize))
    }
}

/// The bytes of `count` elements of `header`'s array from flat element `start`.
#[inline(always)]
fn element_bytes<'a>(buf: &'a [u8], header: &TypedHeader, start: usize, count: usize) -> &'a [u8] {
    let size = header.element.size();
    let at = header.data_pos + start * size;
    // The header proved the whole data section lies inside the buffer.
    &buf[at..at + count * size]
}

impl<'de> de::Deserializer<'de> for TypedDeserializer<'de, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let h = self.header;
        let dim = h.shape[self.level] as usize;
        if self.level + 1 < h.rank {
            return visitor.visit_seq(Rows::new(self.buf, h, self.level + 1, self.start, dim));
        }
        let bytes = self.last_axis_bytes().expect("the last axis");
        match h.mask_pos {
            None => LastAxis { bytes, element: h.element }.deserialize_any(visitor),
            Some(m) => visitor.visit_seq(Elements { bytes, element: h.element, mask: Some((self.buf, m)), flat: self.start, size: h.element.size() }),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.last_axis_bytes() {
            Some(bytes) if self.header.element == ElementType::U8 => visitor.visit_borrowed_bytes(bytes),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        check_tuple_len(self.header.shape[self.level] as usize, len)?;
        self.deserialize_any(visitor)
    }

    view_methods!();
}

/// Hands the unmasked elements in `bytes` (of type `element`, little-endian) to `visitor`
/// as a sequence, or, when `as_bytes` and they are `u8`, as borrowed bytes. One loop per
/// element type, chosen once: the common arrays then cost a fixed-size read and a visit
/// per element.
#[inline]
pub(crate) fn visit_vector<'de, V: Visitor<'de>>(bytes: &'de [u8], element: ElementType, as_bytes: bool, visitor: V) -> Result<V::Value> {
    use ElementType::*;
    match element {
        U8 if as_bytes => visitor.visit_borrowed_bytes(bytes),
        F64 => visitor.visit_seq(Plain::<8, _>::new(bytes, |b| Num::F64(f64::from_le_bytes(b)))),
        F32 => visitor.visit_seq(Plain::<4, _>::new(bytes, |b| Num::F32(f32::from_le_bytes(b)))),
        I64 => visitor.visit_seq(Plain::<8, _>::new(bytes, |b| Num::Int(i64::from_le_bytes(b)))),
        I32 => visitor.visit_seq(Plain::<4, _>::new(bytes, |b| Num::Int(i32::from_le_bytes(b) as i64))),
        _ => visitor.visit_seq(Elements { bytes, element, mask: None, flat: 0, size: element.size() }),
    }
}

/// The rows of an axis that is not the last.
struct Rows<'a, 'h> {
    buf: &'a [u8],
    header: &'h TypedHeader,
    /// The axis of the rows handed out.
    level: usize,
    /// Flat index of the next row's first element.
    next: usize,
    stride: usize,
    left: usize,
    /// Whether the rows are unmasked rows of the last axis (points, colours): each is then
    /// handed out as its `stride` elements' bytes, with no header or shape read per row.
    plain_last: bool,
}

impl<'a, 'h> Rows<'a, 'h> {
    /// The `count` rows at axis `level` of `header`'s array from flat element `start`.
    fn new(buf: &'a [u8], header: &'h TypedHeader, level: usize, start: usize, count: usize) -> Self {
        let plain_last = level + 1 == header.rank && header.mask_pos.is_none();
        Rows { buf, header, level, next: start, stride: header.stride(level - 1), left: count, plain_last }
    }
}

impl<'de> de::SeqAccess<'de> for Rows<'de, '_> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let start = self.next;
        self.next += self.stride;
        if self.plain_last {
            let bytes = element_bytes(self.buf, self.header, start, self.stride);
            return seed.deserialize(LastAxis { bytes, element: self.header.element }).map(Some);
        }
        seed.deserialize(TypedDeserializer { buf: self.buf, header: self.header, level: self.level, start }).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// An unmasked row of the last axis, as its elements' bytes (little-endian): what
/// [`TypedDeserializer`] reads there, without the header.
struct LastAxis<'a> {
    bytes: &'a [u8],
    element: ElementType,
}

impl<'de> de::Deserializer<'de> for LastAxis<'de> {
    type Error = Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        // Rows of f64 (points) are read inline: the call to `visit_vector` was a fifth of
        // reading a point (countries into the bench's structs, callgrind), and inlining it
        // everywhere made whole vectors, read through it once each, 2 % slower.
        match self.element {
            ElementType::F64 => visitor.visit_seq(Plain::<8, _>::new(self.bytes, |b| Num::F64(f64::from_le_bytes(b)))),
            element => visit_vector(self.bytes, element, false, visitor),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visit_vector(self.bytes, self.element, true, visitor)
    }

    #[inline]
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        check_tuple_len(self.bytes.len() / self.element.size(), len)?;
        self.deserialize_any(visitor)
    }

    view_methods!();
}

/// The elements of the last axis.
struct Elements<'a> {
    /// The elements not yet handed out.
    bytes: &'a [u8],
    element: ElementType,
    /// The document and where the integer mask starts (masked f64 arrays).
    mask: Option<(&'a [u8], usize)>,
    /// Flat index of the next element (the mask is indexed by it).
    flat: usize,
    size: usize,
}

impl<'de> de::SeqAccess<'de> for Elements<'de> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let (b, rest) = self.bytes.split_at(self.size);
        self.bytes = rest;
        let masked = self.mask.is_some_and(|(buf, m)| buf[m + self.flat / 8] >> (self.flat % 8) & 1 == 1);
        self.flat += 1;
        seed.deserialize(Scalar(scalar(self.element, b, masked))).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.bytes.len() / self.size)
    }
}

/// The elements of an unmasked last axis of `N`-byte elements, read by `read`.
struct Plain<'a, const N: usize, F> {
    chunks: std::slice::ChunksExact<'a, u8>,
    read: F,
}

impl<'a, const N: usize, F: Fn([u8; N]) -> Num> Plain<'a, N, F> {
    fn new(bytes: &'a [u8], read: F) -> Self {
        Plain { chunks: bytes.chunks_exact(N), read }
    }
}

impl<'de, const N: usize, F: Fn([u8; N]) -> Num> de::SeqAccess<'de> for Plain<'de, N, F> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.chunks.next() {
            None => Ok(None),
            Some(b) => seed.deserialize(Scalar((self.read)(b.try_into().expect("chunks of N bytes")))).map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.chunks.len())
    }
}

/// One element, as the lazy reader reads it (`TypedRef::element`): narrow integers widen to
/// i64, u64 above i64::MAX stays unsigned, masked f64 elements are integers.
#[derive(Clone, Copy)]
enum Num {
    Bool(bool),
    Int(i64),
    UInt(u64),
    F32(f32),
    F64(f64),
}

#[inline(always)]
fn scalar(t: ElementType, b: &[u8], masked: bool) -> Num {
    use ElementType::*;
    match t {
        Bool => Num::Bool(b[0] != 0),
        I8 => Num::Int(b[0] as i8 as i64),
        U8 => Num::Int(b[0] as i64),
        I16 => Num::Int(i16::from_le_bytes([b[0], b[1]]) as i64),
        U16 => Num::Int(u16::from_le_bytes([b[0], b[1]]) as i64),
        I32 => Num::Int(i32::from_le_bytes(b.try_into().unwrap()) as i64),
        U32 => Num::Int(u32::from_le_bytes(b.try_into().unwrap()) as i64),
        I64 => Num::Int(i64::from_le_bytes(b.try_into().unwrap())),
        U64 => {
            let v = u64::from_le_bytes(b.try_into().unwrap());
            if v <= i64::MAX as u64 { Num::Int(v as i64) } else { Num::UInt(v) }
        }
        F32 => Num::F32(f32::from_le_bytes(b.try_into().unwrap())),
        F64 => {
            let v = f64::from_le_bytes(b.try_into().unwrap());
            if masked { Num::Int(v as i64) } else { Num::F64(v) }
        }
    }
}

/// A typed array element.
struct Scalar(Num);

impl<'de> de::Deserializer<'de> for Scalar {
    type Error = Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Num::Bool(b) => visitor.visit_bool(b),
            Num::Int(i) => visitor.visit_i64(i),
            Num::UInt(u) => visitor.visit_u64(u),
            Num::F32(f) => visitor.visit_f32(f),
            Num::F64(f) => visitor.visit_f64(f),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

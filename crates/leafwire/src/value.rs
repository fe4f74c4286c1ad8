//! The dynamic value: every Leafwire value as an owned Rust tree.

use std::fmt;

use crate::format::ElementType;
use crate::map::OrderedMap;

/// An object: string keys in insertion order.
pub type Map = OrderedMap<String>;
/// An integer-keyed map, in insertion order.
pub type IntMap = OrderedMap<i64>;

/// The type of a value, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Null,
    Bool,
    Int,
    UInt,
    F64,
    F32,
    String,
    Bytes,
    BigNum,
    Array,
    Object,
    IntMap,
    TypedArray,
    Table,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Kind::Null => "null",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::UInt => "uint",
            Kind::F64 => "f64",
            Kind::F32 => "f32",
            Kind::String => "string",
            Kind::Bytes => "bytes",
            Kind::BigNum => "bignum",
            Kind::Array => "array",
            Kind::Object => "object",
            Kind::IntMap => "intmap",
            Kind::TypedArray => "typed array",
            Kind::Table => "table",
        };
        f.write_str(name)
    }
}

/// Any Leafwire value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    /// Only for values above `i64::MAX`; smaller ones are `Int`.
    UInt(u64),
    F64(f64),
    F32(f32),
    String(String),
    Bytes(Vec<u8>),
    /// An integer outside the 64-bit range, as decimal text (`-` and digits).
    BigNum(String),
    Array(Vec<Value>),
    Object(Map),
    IntMap(IntMap),
    Typed(TypedArray),
    /// Named columns of one length (spec §15), kept as their block's body.
    Table(crate::table::Table),
}

impl Value {
    pub fn kind(&self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::UInt(_) => Kind::UInt,
            Value::F64(_) => Kind::F64,
            Value::F32(_) => Kind::F32,
            Value::String(_) => Kind::String,
            Value::Bytes(_) => Kind::Bytes,
            Value::BigNum(_) => Kind::BigNum,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
            Value::IntMap(_) => Kind::IntMap,
            Value::Typed(_) => Kind::TypedArray,
            Value::Table(_) => Kind::Table,
        }
    }

    /// An unsigned integer, stored as `Int` when it fits (the canonical form).
    pub fn from_u64(v: u64) -> Value {
        if v <= i64::MAX as u64 {
            Value::Int(v as i64)
        } else {
            Value::UInt(v)
        }
    }
}

/// A homogeneous N-dimensional array of numbers, row-major.
///
/// Boxed, so that a typed array takes one pointer inside a `Value`: the other variants are
/// at most 40 bytes, and every element of every array pays for the largest.
#[derive(Clone, PartialEq)]
pub struct TypedArray(Box<TypedParts>);

#[derive(Clone, PartialEq)]
struct TypedParts {
    shape: Vec<usize>,
    data: TypedData,
    /// For f64 data only: which elements are integers (spec §5.2).
    int_mask: Option<Vec<bool>>,
}

impl fmt::Debug for TypedArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let TypedParts { shape, data, int_mask } = &*self.0;
        f.debug_struct("TypedArray").field("shape", shape).field("data", data).field("int_mask", int_mask).finish()
    }
}

/// The elements of a typed array.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedData {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// The elements of `element` type whose little-endian bytes are `bytes` (any alignment).
pub(crate) fn typed_data_from_le(element: ElementType, bytes: &[u8]) -> TypedData {
    fn collect<T, const N: usize>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        bytes.chunks_exact(N).map(|c| f(c.try_into().unwrap())).collect()
    }
    match element {
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
    }
}

/// Applies `$body` to the vector inside a `TypedData`, whatever its element type.
macro_rules! with_typed_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            TypedData::Bool($v) => $body,
            TypedData::I8($v) => $body,
            TypedData::I16($v) => $body,
            TypedData::I32($v) => $body,
            TypedData::I64($v) => $body,
            TypedData::U8($v) => $body,
            TypedData::U16($v) => $body,
            TypedData::U32($v) => $body,
            TypedData::U64($v) => $body,
            TypedData::F32($v) => $body,
            TypedData::F64($v) => $body,
        }
    };
}

impl TypedData {
    pub fn len(&self) -> usize {
        with_typed_data!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn element_type(&self) -> ElementType {
        match self {
            TypedData::Bool(_) => ElementType::Bool,
            TypedData::I8(_) => ElementType::I8,
            TypedData::I16(_) => ElementType::I16,
            TypedData::I32(_) => ElementType::I32,
            TypedData::I64(_) => ElementType::I64,
            TypedData::U8(_) => ElementType::U8,
            TypedData::U16(_) => ElementType::U16,
            TypedData::U32(_) => ElementType::U32,
            TypedData::U64(_) => ElementType::U64,
            TypedData::F32(_) => ElementType::F32,
            TypedData::F64(_) => ElementType::F64,
        }
    }

    /// The elements as little-endian bytes, as a typed block stores them: the vector's
    /// own memory on a little-endian machine.
    pub(crate) fn le_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        #[cfg(target_endian = "little")]
        {
            std::borrow::Cow::Borrowed(with_typed_data!(self, v => bytemuck::cast_slice(v.as_slice())))
        }
        #[cfg(not(target_endian = "little"))]
        {
            fn le<T: Copy, const N: usize>(v: &[T], to_le: impl Fn(T) -> [u8; N]) -> Vec<u8> {
                v.iter().flat_map(|&x| to_le(x)).collect()
            }
            std::borrow::Cow::Owned(match self {
                TypedData::Bool(v) => v.iter().map(|&x| x as u8).collect(),
                TypedData::I8(v) => le(v, i8::to_le_bytes),
                TypedData::I16(v) => le(v, i16::to_le_bytes),
                TypedData::I32(v) => le(v, i32::to_le_bytes),
                TypedData::I64(v) => le(v, i64::to_le_bytes),
                TypedData::U8(v) => v.clone(),
                TypedData::U16(v) => le(v, u16::to_le_bytes),
                TypedData::U32(v) => le(v, u32::to_le_bytes),
                TypedData::U64(v) => le(v, u64::to_le_bytes),
                TypedData::F32(v) => le(v, f32::to_le_bytes),
                TypedData::F64(v) => le(v, f64::to_le_bytes),
            })
        }
    }

    /// Element `i` as a scalar value (masking is the caller's business).
    pub fn element(&self, i: usize) -> Value {
        match self {
            TypedData::Bool(v) => Value::Bool(v[i]),
            TypedData::I8(v) => Value::Int(v[i] as i64),
            TypedData::I16(v) => Value::Int(v[i] as i64),
            TypedData::I32(v) => Value::Int(v[i] as i64),
            TypedData::I64(v) => Value::Int(v[i]),
            TypedData::U8(v) => Value::Int(v[i] as i64),
            TypedData::U16(v) => Value::Int(v[i] as i64),
            TypedData::U32(v) => Value::Int(v[i] as i64),
            TypedData::U64(v) => Value::from_u64(v[i]),
            TypedData::F32(v) => Value::F32(v[i]),
            TypedData::F64(v) => Value::F64(v[i]),
        }
    }
}

impl TypedArray {
    /// A one-dimensional typed array.
    pub fn new(data: TypedData) -> TypedArray {
        TypedArray(Box::new(TypedParts { shape: vec![data.len()], data, int_mask: None }))
    }

    /// An N-dimensional typed array; the product of `shape` must equal the element count.
    pub fn with_shape(data: TypedData, shape: Vec<usize>) -> crate::Result<TypedArray> {
        let count = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if shape.is_empty() || shape.len() > crate::format::MAX_RANK || count != Some(data.len()) {
            return Err(crate::Error::new(
                crate::Category::LimitExceeded,
                format!("shape {shape:?} does not fit {} elements (rank 1..=32)", data.len()),
            ));
        }
        Ok(TypedArray(Box::new(TypedParts { shape, data, int_mask: None })))
    }

    /// An f64 array whose masked elements are integers (spec §5.2). Each masked element
    /// must be integral with magnitude at most 2^53.
    pub fn with_int_mask(data: Vec<f64>, shape: Vec<usize>, mask: Vec<bool>) -> crate::Result<TypedArray> {
        let valid = mask.len() == data.len()
            && data.iter().zip(&mask).all(|(v, &m)| !m || is_exact_integer(*v));
        if !valid {
            return Err(crate::Error::new(
                crate::Category::LimitExceeded,
                "integer mask must have one flag per element, set only on integral values within ±2^53",
            ));
        }
        let mut array = TypedArray::with_shape(TypedData::F64(data), shape)?;
        array.0.int_mask = mask.iter().any(|&m| m).then_some(mask);
        Ok(array)
    }

    pub(crate) fn from_parts(shape: Vec<usize>, data: TypedData, int_mask: Option<Vec<bool>>) -> TypedArray {
        TypedArray(Box::new(TypedParts { shape, data, int_mask }))
    }

    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    /// The shape as the format writes it (u64 dimensions): borrowed where `usize` is
    /// 64 bits, so writers pay no allocation per array.
    pub(crate) fn shape_u64(&self) -> std::borrow::Cow<'_, [u64]> {
        #[cfg(target_pointer_width = "64")]
        return std::borrow::Cow::Borrowed(bytemuck::cast_slice(&self.0.shape));
        #[cfg(not(target_pointer_width = "64"))]
        return std::borrow::Cow::Owned(self.0.shape.iter().map(|&d| d as u64).collect());
    }

    pub fn data(&self) -> &TypedData {
        &self.0.data
    }

    pub fn into_data(self) -> TypedData {
        self.0.data
    }

    pub fn int_mask(&self) -> Option<&[bool]> {
        self.0.int_mask.as_deref()
    }

    pub fn element_type(&self) -> ElementType {
        self.0.data.element_type()
    }

    pub fn len(&self) -> usize {
        self.0.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.data.is_empty()
    }

    /// Element `i` (flat, row-major) as a scalar value, honoring the integer mask.
    pub fn element(&self, i: usize) -> Value {
        match (&self.0.data, &self.0.int_mask) {
            (TypedData::F64(v), Some(mask)) if mask[i] => Value::Int(v[i] as i64),
            (data, _) => data.element(i),
        }
    }

    /// The array as nested generic arrays of scalars, as JSON would see it.
    pub fn to_nested(&self) -> Value {
        self.nested_at(0, 0)
    }

    /// The sub-array along `axis` whose first element is element `start` (flat), as nested
    /// generic arrays; `to_nested` is the one at axis 0.
    pub(crate) fn nested_at(&self, axis: usize, start: usize) -> Value {
        let dim = self.0.shape[axis];
        if axis + 1 == self.0.shape.len() {
            return Value::Array((start..start + dim).map(|i| self.element(i)).collect());
        }
        let stride = self.stride(axis);
        Value::Array((0..dim).map(|r| self.nested_at(axis + 1, start + r * stride)).collect())
    }

    /// How many elements one step along `axis` skips (row-major).
    pub(crate) fn stride(&self, axis: usize) -> usize {
        self.0.shape[axis + 1..].iter().product()
    }
}

/// Whether `v` is an integer that f64 represents exactly (|v| ≤ 2^53), as a masked
/// element must be. `-0.0` is not: it is a float with a sign.
pub(crate) fn is_exact_integer(v: f64) -> bool {
    v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0 && !(v == 0.0 && v.is_sign_negative())
}

macro_rules! impl_from_scalar {
    ($($t:ty => $variant:ident as $conv:ty),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from(v: $t) -> Value { Value::$variant(v as $conv) }
        })*
    };
}
impl_from_scalar!(i8 => Int as i64, i16 => Int as i64, i32 => Int as i64, i64 => Int as i64,
    u8 => Int as i64, u16 => Int as i64, u32 => Int as i64, f64 => F64 as f64, f32 => F32 as f32);

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::from_u64(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::String(v.to_owned())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::String(v)
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Value {
        Value::Array(v)
    }
}
impl From<Map> for Value {
    fn from(v: Map) -> Value {
        Value::Object(v)
    }
}
impl From<TypedArray> for Value {
    fn from(v: TypedArray) -> Value {
        Value::Typed(v)
    }
}

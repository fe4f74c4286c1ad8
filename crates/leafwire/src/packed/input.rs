//! What the packed encoder reads: a value tree it only looks at, owned (`Value`) or
//! borrowed from a document (`ValueRef`). `to_vec_packed` reads the borrowed tree of the
//! ordinary document serde writes, so that no `String` is made per key and per string
//! and none freed after (they were a third of a packed encode, spec/design/packed.md §7.3).

use std::borrow::Cow;

use serde::Serialize;

use crate::format::ElementType;
use crate::read::TypedRef;
use crate::table::{Table, TableRef};
use crate::value::{TypedArray, TypedData, Value};
use crate::value_ref::ValueRef;

/// A value the encoder can look at; its views borrow from it.
pub(crate) trait Input: Serialize + Sized {
    /// An object key as the tree keeps it.
    type Key: AsRef<str>;

    fn view(&self) -> View<'_, Self>;

    /// An owned copy, for what is kept whole (residual values) or packed through the
    /// owned encoders (packed objects).
    fn as_value(&self) -> Cow<'_, Value>;
}

/// One node of an [`Input`]: scalars by value, the rest borrowed.
pub(crate) enum View<'a, T: Input> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    F64(f64),
    F32(f32),
    String(&'a str),
    Bytes(&'a [u8]),
    BigNum(&'a str),
    Array(&'a [T]),
    Object(&'a [(T::Key, T)]),
    IntMap(&'a [(i64, T)]),
    Typed(TypedView<'a>),
    Table(TableView<'a>),
}

/// A table of an [`Input`]: the owned table, or a borrowed tree's view of its document,
/// copied only when read ([`TableView::table`]).
#[derive(Clone, Copy)]
pub(crate) enum TableView<'a> {
    Owned(&'a Table),
    Borrowed(&'a TableRef<'a>),
}

impl<'a> TableView<'a> {
    /// The table, as the encoder reads it. A borrowed tree's tables were checked when read,
    /// so their copy cannot fail; if it did, the error says so rather than lose the table.
    pub fn table(self) -> crate::Result<Cow<'a, Table>> {
        match self {
            TableView::Owned(t) => Ok(Cow::Borrowed(t)),
            TableView::Borrowed(t) => t.to_table().map(Cow::Owned),
        }
    }
}

/// A typed array of an [`Input`]: the owned array, or a borrowed tree's view of its
/// document, copied only when its elements are read ([`TypedView::array`]).
#[derive(Clone, Copy)]
pub(crate) enum TypedView<'a> {
    Owned(&'a TypedArray),
    Borrowed(&'a TypedRef<'a>),
}

impl<'a> TypedView<'a> {
    /// Its number of elements (all axes).
    pub fn len(self) -> usize {
        match self {
            TypedView::Owned(t) => t.len(),
            TypedView::Borrowed(t) => t.element_count(),
        }
    }

    pub fn element_type(self) -> ElementType {
        match self {
            TypedView::Owned(t) => t.element_type(),
            TypedView::Borrowed(t) => t.element_type(),
        }
    }

    /// [`retyped_as_is`](super::shred::retyped_as_is) without a copy for f64 arrays (the
    /// common case: it then needs only their length).
    pub fn retyped_as_is(self) -> bool {
        match self.element_type() {
            ElementType::F64 => self.len() > 0,
            _ => super::shred::retyped_as_is(&self.array()),
        }
    }

    /// Whether every element is finite (has a JSON form), read in place.
    pub fn all_finite(self) -> bool {
        match self {
            TypedView::Owned(t) => match t.data() {
                TypedData::F64(xs) => none_all_ones(xs.iter().map(|x| x.to_bits()), F64_EXPONENT),
                TypedData::F32(xs) => none_all_ones(xs.iter().map(|x| x.to_bits() as u64), F32_EXPONENT),
                _ => true,
            },
            TypedView::Borrowed(t) => match t.element_type() {
                ElementType::F64 => {
                    none_all_ones(t.bytes().chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))), F64_EXPONENT)
                }
                ElementType::F32 => {
                    none_all_ones(t.bytes().chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64), F32_EXPONENT)
                }
                _ => true,
            },
        }
    }

    /// The shape and f64 elements of a borrowed tree's f64 array without an integer mask,
    /// read in place (`None` for the rest, and where the document is not 8-aligned in
    /// memory: [`TypedView::array`] then copies).
    pub fn f64_in_place(self) -> Option<(Vec<usize>, &'a [f64])> {
        match self {
            TypedView::Borrowed(t) if !t.has_mask() => Some((t.shape(), t.as_slice::<f64>().ok()?)),
            _ => None,
        }
    }

    /// The array, as the encoder reads it.
    pub fn array(self) -> Cow<'a, TypedArray> {
        match self {
            TypedView::Owned(t) => Cow::Borrowed(t),
            TypedView::Borrowed(t) => Cow::Owned(t.to_typed_array()),
        }
    }
}

impl Input for Value {
    type Key = String;

    #[inline(always)]
    fn view(&self) -> View<'_, Value> {
        match self {
            Value::Null => View::Null,
            Value::Bool(b) => View::Bool(*b),
            Value::Int(x) => View::Int(*x),
            Value::UInt(x) => View::UInt(*x),
            Value::F64(x) => View::F64(*x),
            Value::F32(x) => View::F32(*x),
            Value::String(s) => View::String(s),
            Value::Bytes(b) => View::Bytes(b),
            Value::BigNum(s) => View::BigNum(s),
            Value::Array(items) => View::Array(items),
            Value::Object(map) => View::Object(map.as_slice()),
            Value::IntMap(map) => View::IntMap(map.as_slice()),
            Value::Typed(t) => View::Typed(TypedView::Owned(t)),
            Value::Table(t) => View::Table(TableView::Owned(t)),
        }
    }

    fn as_value(&self) -> Cow<'_, Value> {
        Cow::Borrowed(self)
    }
}

impl<'d> Input for ValueRef<'d> {
    type Key = &'d str;

    #[inline]
    fn view(&self) -> View<'_, ValueRef<'d>> {
        match *self {
            ValueRef::Null => View::Null,
            ValueRef::Bool(b) => View::Bool(b),
            ValueRef::Int(x) => View::Int(x),
            ValueRef::UInt(x) => View::UInt(x),
            ValueRef::F64(x) => View::F64(x),
            ValueRef::F32(x) => View::F32(x),
            ValueRef::String(s) => View::String(s),
            ValueRef::Bytes(b) => View::Bytes(b),
            ValueRef::BigNum(s) => View::BigNum(s),
            ValueRef::Array(items) => View::Array(items),
            ValueRef::Object(entries) => View::Object(entries),
            ValueRef::IntMap(entries) => View::IntMap(entries),
            ValueRef::Typed(t) => View::Typed(TypedView::Borrowed(t)),
            ValueRef::Table(t) => View::Table(TableView::Borrowed(t)),
        }
    }

    fn as_value(&self) -> Cow<'_, Value> {
        Cow::Owned(self.to_value())
    }
}

/// The exponent fields of f64 and f32: all ones in an infinity or a NaN, the numbers
/// without a JSON form.
const F64_EXPONENT: u64 = 0x7FF0_0000_0000_0000;
const F32_EXPONENT: u64 = 0x7F80_0000;

/// Whether no value has every bit of `exponent` set (every float is finite). A fold with
/// no early exit, so that it is vectorized: `all`'s loop took twice the instructions on the
/// countries' coordinates (2.4 million numbers, all finite).
#[inline]
fn none_all_ones(bits: impl Iterator<Item = u64>, exponent: u64) -> bool {
    !bits.fold(false, |any, b| any | (b & exponent == exponent))
}


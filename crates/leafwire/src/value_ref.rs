//! The borrowed value: a whole document (or subtree) decoded into a tree whose strings,
//! keys, bytes and typed arrays point into the document's bytes and whose containers are
//! slices of an [`crate::Arena`]. Decoding it allocates nothing per string and nothing per
//! container (the arena grows by large chunks), and dropping it is dropping the arena,
//! which makes it the fast way to read a whole document; [`ValueRef::to_value`] makes an
//! owned [`Value`] from it.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::arena::{Arena, Filling};
use crate::read::TypedRef;
use crate::value::{IntMap, Kind, Map, Value};

/// Any Leafwire value, borrowing from the document it was decoded from.
///
/// A plain `Copy` enum to match on: containers are slices (of the arena the tree was
/// decoded into), strings and typed arrays point into the document.
///
/// Objects keep their entries in insertion order as a slice: [`ValueRef::get`] scans it,
/// which is what small objects want; for repeated lookups in a big object, read that
/// object lazily through [`crate::Node::object`] instead.
#[derive(Debug, Clone, Copy)]
pub enum ValueRef<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// Only for values above `i64::MAX`; smaller ones are `Int`.
    UInt(u64),
    F64(f64),
    F32(f32),
    String(&'a str),
    Bytes(&'a [u8]),
    /// An integer outside the 64-bit range, as decimal text.
    BigNum(&'a str),
    Array(&'a [ValueRef<'a>]),
    Object(&'a [(&'a str, ValueRef<'a>)]),
    IntMap(&'a [(i64, ValueRef<'a>)]),
    /// A typed array, as a zero-copy view (its header kept in the arena).
    Typed(&'a TypedRef<'a>),
    /// A table (spec §15), read in place.
    Table(&'a crate::table::TableRef<'a>),
}

impl<'a> ValueRef<'a> {
    pub fn kind(&self) -> Kind {
        match self {
            ValueRef::Null => Kind::Null,
            ValueRef::Bool(_) => Kind::Bool,
            ValueRef::Int(_) => Kind::Int,
            ValueRef::UInt(_) => Kind::UInt,
            ValueRef::F64(_) => Kind::F64,
            ValueRef::F32(_) => Kind::F32,
            ValueRef::String(_) => Kind::String,
            ValueRef::Bytes(_) => Kind::Bytes,
            ValueRef::BigNum(_) => Kind::BigNum,
            ValueRef::Array(_) => Kind::Array,
            ValueRef::Object(_) => Kind::Object,
            ValueRef::IntMap(_) => Kind::IntMap,
            ValueRef::Typed(_) => Kind::TypedArray,
            ValueRef::Table(_) => Kind::Table,
        }
    }

    /// The value under `key` in an object (a scan of its entries), if any.
    pub fn get(&self, key: &str) -> Option<&ValueRef<'a>> {
        match self {
            ValueRef::Object(entries) => entries.iter().find(|(k, _)| *k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            ValueRef::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ValueRef::Int(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            ValueRef::F64(v) => Some(v),
            ValueRef::F32(v) => Some(v as f64),
            ValueRef::Int(v) if v.unsigned_abs() <= 1 << 53 => Some(v as f64),
            _ => None,
        }
    }

    /// An owned copy.
    pub fn to_value(&self) -> Value {
        match self {
            ValueRef::Null => Value::Null,
            ValueRef::Bool(v) => Value::Bool(*v),
            ValueRef::Int(v) => Value::Int(*v),
            ValueRef::UInt(v) => Value::UInt(*v),
            ValueRef::F64(v) => Value::F64(*v),
            ValueRef::F32(v) => Value::F32(*v),
            ValueRef::String(s) => Value::String((*s).to_owned()),
            ValueRef::Bytes(b) => Value::Bytes(b.to_vec()),
            ValueRef::BigNum(d) => Value::BigNum((*d).to_owned()),
            ValueRef::Array(items) => Value::Array(items.iter().map(ValueRef::to_value).collect()),
            ValueRef::Object(entries) => {
                let mut map = Map::with_capacity(entries.len());
                map.extend(entries.iter().map(|(k, v)| ((*k).to_owned(), v.to_value())));
                Value::Object(map)
            }
            ValueRef::IntMap(entries) => {
                let mut map = IntMap::with_capacity(entries.len());
                map.extend(entries.iter().map(|(k, v)| (*k, v.to_value())));
                Value::IntMap(map)
            }
            ValueRef::Typed(t) => Value::Typed(t.to_typed_array()),
            // Checked when read: the copy is of a valid body.
            ValueRef::Table(t) => t.to_table().map(Value::Table).unwrap_or(Value::Null),
        }
    }
}

impl PartialEq<Value> for ValueRef<'_> {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (ValueRef::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y),
            (ValueRef::Object(a), Value::Object(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && va == vb)
            }
            (ValueRef::IntMap(a), Value::IntMap(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && va == vb)
            }
            (ValueRef::String(a), Value::String(b)) => a == b,
            _ => &self.to_value() == other,
        }
    }
}

impl Serialize for ValueRef<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        match self {
            ValueRef::Null => ser.serialize_unit(),
            ValueRef::Bool(v) => ser.serialize_bool(*v),
            ValueRef::Int(v) => ser.serialize_i64(*v),
            ValueRef::UInt(v) => ser.serialize_u64(*v),
            ValueRef::F64(v) => ser.serialize_f64(*v),
            ValueRef::F32(v) => ser.serialize_f32(*v),
            ValueRef::String(v) => ser.serialize_str(v),
            ValueRef::Bytes(v) => ser.serialize_bytes(v),
            ValueRef::Array(items) => {
                let mut seq = ser.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            ValueRef::Object(entries) => {
                let mut m = ser.serialize_map(Some(entries.len()))?;
                for (k, v) in entries.iter() {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            ValueRef::IntMap(entries) => {
                let mut m = ser.serialize_map(Some(entries.len()))?;
                for (k, v) in entries.iter() {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            // Big numbers and typed arrays serialize as their owned forms do.
            ValueRef::BigNum(_) | ValueRef::Typed(_) | ValueRef::Table(_) => self.to_value().serialize(ser),
        }
    }
}

type Items<'a> = Filling<'a, ValueRef<'a>>;
type Entries<'a> = Filling<'a, (&'a str, ValueRef<'a>)>;
type IntEntries<'a> = Filling<'a, (i64, ValueRef<'a>)>;

impl<'a> crate::decode::Tree<'a> for ValueRef<'a> {
    type Arena = &'a Arena;
    type Array = Items<'a>;
    type Object = Entries<'a>;
    type IntMap = IntEntries<'a>;

    fn null() -> Self {
        ValueRef::Null
    }
    fn bool(v: bool) -> Self {
        ValueRef::Bool(v)
    }
    fn int(v: i64) -> Self {
        ValueRef::Int(v)
    }
    fn uint(v: u64) -> Self {
        ValueRef::UInt(v)
    }
    fn f64(v: f64) -> Self {
        ValueRef::F64(v)
    }
    fn f32(v: f32) -> Self {
        ValueRef::F32(v)
    }
    fn string(s: &'a str) -> Self {
        ValueRef::String(s)
    }
    fn bytes(b: &'a [u8]) -> Self {
        ValueRef::Bytes(b)
    }
    fn bignum(digits: &'a str) -> Self {
        ValueRef::BigNum(digits)
    }
    fn typed(arena: &'a Arena, t: TypedRef<'a>) -> Self {
        ValueRef::Typed(arena.typed(t))
    }
    #[inline]
    fn array_with_capacity(arena: &'a Arena, n: usize) -> Items<'a> {
        Filling::new(arena, n)
    }
    fn empty_array() -> Self {
        ValueRef::Array(&[])
    }
    fn empty_object() -> Self {
        ValueRef::Object(&[])
    }
    #[inline(always)]
    fn array_push(a: &mut Items<'a>, value: Self) {
        a.push(value);
    }
    fn array(a: Items<'a>) -> Self {
        ValueRef::Array(a.finish())
    }
    #[inline]
    fn object_with_capacity(arena: &'a Arena, n: usize) -> Entries<'a> {
        Filling::new(arena, n)
    }
    #[inline(always)]
    fn object_insert(o: &mut Entries<'a>, key: &'a str, value: Self) {
        o.push((key, value));
    }
    fn object(o: Entries<'a>) -> Self {
        ValueRef::Object(o.finish())
    }
    fn intmap_with_capacity(arena: &'a Arena, n: usize) -> IntEntries<'a> {
        Filling::new(arena, n)
    }
    fn intmap_insert(m: &mut IntEntries<'a>, key: i64, value: Self) {
        m.push((key, value));
    }
    fn intmap(m: IntEntries<'a>) -> Self {
        ValueRef::IntMap(m.finish())
    }

    fn table(arena: &'a Arena, t: crate::table::TableRef<'a>) -> crate::error::Result<Self> {
        t.to_table()?;
        Ok(ValueRef::Table(arena.table(t)))
    }

    /// A packed array's values are decoded, not in the document: nothing to borrow.
    fn packed(_array: crate::Value, offset: u64) -> crate::error::Result<Self> {
        Err(crate::error::Error::new(
            crate::error::Category::Unsupported,
            "a packed array (spec §13) has no bytes to borrow: decode it with `decode` or `Node::to_value`",
        )
        .at(offset))
    }
}

// The tree is freed by freeing its arena, never walked: nothing in it may need dropping.
const _: () = assert!(!std::mem::needs_drop::<ValueRef<'static>>());
const _: () = assert!(!std::mem::needs_drop::<crate::table::TableRef<'static>>());

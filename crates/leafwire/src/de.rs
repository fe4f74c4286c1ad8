//! serde `Deserializer` over a lazy `Node`: `from_slice` for any `Deserialize` type.
//! Strings and bytes are borrowed from the document; fields a type does not ask for are
//! skipped without being read (`IgnoredAny` touches no child).

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use crate::error::{Category, Error, Result};
use crate::format::DEFAULT_MAX_DEPTH;
use crate::format::budget::Budget;
use crate::read::{Children, Entries, IntEntries, Node, TypedRef};
use crate::value::{Kind, Value};

pub(crate) struct NodeDeserializer<'a, 'b> {
    pub node: Node<'a>,
    pub depth_left: usize,
    pub budget: &'b Budget,
}

impl<'a, 'b> NodeDeserializer<'a, 'b> {
    pub fn new(node: Node<'a>, budget: &'b Budget) -> Self {
        NodeDeserializer { node, depth_left: DEFAULT_MAX_DEPTH, budget }
    }

    fn nested(&self) -> Result<usize> {
        self.depth_left.checked_sub(1).ok_or_else(|| Error::depth_limit(DEFAULT_MAX_DEPTH).at(self.node.offset()))
    }
}

fn visit_scalar<'de, V: Visitor<'de>>(v: Value, visitor: V) -> Result<V::Value> {
    match v {
        Value::Bool(b) => visitor.visit_bool(b),
        Value::Int(i) => visitor.visit_i64(i),
        Value::UInt(u) => visitor.visit_u64(u),
        Value::F32(f) => visitor.visit_f32(f),
        Value::F64(f) => visitor.visit_f64(f),
        _ => unreachable!("typed elements are scalars"),
    }
}

impl<'de> de::Deserializer<'de> for NodeDeserializer<'de, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let node = self.node;
        self.budget.charge(node.visit_cost(), node.offset())?;
        match node.kind() {
            Kind::Null => visitor.visit_unit(),
            Kind::Bool => visitor.visit_bool(node.as_bool()?),
            Kind::Int => visitor.visit_i64(node.as_i64()?),
            Kind::UInt => visitor.visit_u64(node.as_u64()?),
            Kind::F64 => visitor.visit_f64(node.as_f64()?),
            Kind::F32 => visitor.visit_f32(node.as_f32()?),
            Kind::String => visitor.visit_borrowed_str(node.as_str()?),
            Kind::Bytes => visitor.visit_borrowed_bytes(node.as_bytes()?),
            Kind::BigNum => {
                let digits = node.as_bignum()?;
                match (digits.parse::<i128>(), digits.parse::<u128>()) {
                    (Ok(v), _) => visitor.visit_i128(v),
                    (_, Ok(v)) => visitor.visit_u128(v),
                    _ => visitor.visit_borrowed_str(digits),
                }
            }
            Kind::Array | Kind::TypedArray => {
                let depth_left = self.nested()?;
                visitor.visit_seq(SeqAccess { children: node.iter()?, depth_left, typed: node.typed().ok(), budget: self.budget })
            }
            Kind::Object => {
                let depth_left = self.nested()?;
                visitor.visit_map(MapAccess { entries: node.entries()?, value: None, depth_left, budget: self.budget })
            }
            Kind::IntMap => {
                let depth_left = self.nested()?;
                visitor.visit_map(IntMapAccess { entries: node.int_entries()?, value: None, depth_left, budget: self.budget })
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.node.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.node.kind() == Kind::TypedArray {
            if let Ok(bytes) = self.node.as_slice::<u8>() {
                return visitor.visit_borrowed_bytes(bytes);
            }
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_enum<V: Visitor<'de>>(self, _: &'static str, _: &'static [&'static str], visitor: V) -> Result<V::Value> {
        match self.node.kind() {
            Kind::String => visitor.visit_enum(self.node.as_str()?.into_deserializer()),
            Kind::Object => {
                let mut entries = self.node.entries()?;
                let (Some(first), None) = (entries.next(), entries.next()) else {
                    return Err(Error::new(Category::WrongType, "an enum variant must be an object with exactly one key"));
                };
                let (variant, value) = first?;
                visitor.visit_enum(EnumAccess { variant, value: NodeDeserializer { node: value, depth_left: self.nested()?, budget: self.budget } })
            }
            kind => Err(Error::wrong_type("an enum (string or one-key object)", kind)),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

struct SeqAccess<'a, 'b> {
    children: Children<'a>,
    depth_left: usize,
    /// Set for typed arrays: elements are read straight from the view.
    typed: Option<TypedRef<'a>>,
    budget: &'b Budget,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'de, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.children.next() {
            None => Ok(None),
            Some(child) => {
                let child = child?;
                if let (Some(_), true) = (&self.typed, child.kind() != Kind::TypedArray) {
                    // A scalar element: no nesting, no depth spent.
                    return seed.deserialize(ScalarDeserializer(child)).map(Some);
                }
                seed.deserialize(NodeDeserializer { node: child, depth_left: self.depth_left, budget: self.budget }).map(Some)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.children.size_hint().0)
    }
}

/// A typed array element.
struct ScalarDeserializer<'a>(Node<'a>);

impl<'de> de::Deserializer<'de> for ScalarDeserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let v = match self.0.kind() {
            Kind::Bool => Value::Bool(self.0.as_bool()?),
            Kind::Int => Value::Int(self.0.as_i64()?),
            Kind::UInt => Value::UInt(self.0.as_u64()?),
            Kind::F32 => Value::F32(self.0.as_f32()?),
            _ => Value::F64(self.0.as_f64()?),
        };
        visit_scalar(v, visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct MapAccess<'a, 'b> {
    entries: Entries<'a>,
    value: Option<Node<'a>>,
    depth_left: usize,
    budget: &'b Budget,
}

impl<'de> de::MapAccess<'de> for MapAccess<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.entries.next() {
            None => Ok(None),
            Some(entry) => {
                let (key, value) = entry?;
                self.value = Some(value);
                seed.deserialize(BorrowedStr(key)).map(Some)
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let node = self.value.take().ok_or_else(|| Error::new(Category::Custom, "value requested before key"))?;
        seed.deserialize(NodeDeserializer { node, depth_left: self.depth_left, budget: self.budget })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.size_hint().0)
    }
}

struct IntMapAccess<'a, 'b> {
    entries: IntEntries<'a>,
    value: Option<Node<'a>>,
    depth_left: usize,
    budget: &'b Budget,
}

impl<'de> de::MapAccess<'de> for IntMapAccess<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.entries.next() {
            None => Ok(None),
            Some(entry) => {
                let (key, value) = entry?;
                self.value = Some(value);
                seed.deserialize(IntKey(key)).map(Some)
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let node = self.value.take().ok_or_else(|| Error::new(Category::Custom, "value requested before key"))?;
        seed.deserialize(NodeDeserializer { node, depth_left: self.depth_left, budget: self.budget })
    }
}

/// An object key, borrowed from the dictionary.
struct BorrowedStr<'a>(&'a str);

impl<'de> de::Deserializer<'de> for BorrowedStr<'de> {
    type Error = Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_borrowed_str(self.0)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// An intmap key: an integer, also accepted by types that want string keys.
struct IntKey(i64);

impl<'de> de::Deserializer<'de> for IntKey {
    type Error = Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_i64(self.0)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.0.to_string())
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.0.to_string())
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct EnumAccess<'a, 'b> {
    variant: &'a str,
    value: NodeDeserializer<'a, 'b>,
}

impl<'de, 'b> de::EnumAccess<'de> for EnumAccess<'de, 'b> {
    type Error = Error;
    type Variant = NodeDeserializer<'de, 'b>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self::Variant)> {
        let v = seed.deserialize(BorrowedStr(self.variant))?;
        Ok((v, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for NodeDeserializer<'de, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        if self.node.is_null() {
            Ok(())
        } else {
            Err(Error::wrong_type("null for a unit variant", self.node.kind()))
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }
}

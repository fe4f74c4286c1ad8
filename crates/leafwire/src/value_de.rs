//! serde's `Deserializer` for an owned [`Value`]: [`crate::from_value`], and the packed
//! mode's way into serde types (its columns decode to a `Value`, which then moves into
//! the caller's type: strings, byte strings and vectors are handed over, not copied).
//!
//! The conventions are those the serializer writes (`ser.rs`): `None` and `()` are null,
//! an enum's unit variant is its name as a string and any other variant an object of one
//! entry (the variant's name, its content), big integers are read back as i128/u128, and
//! a typed array is the (nested) sequence of numbers it stands for.

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeSeed, EnumAccess, IntoDeserializer, VariantAccess, Visitor};
use serde::forward_to_deserialize_any;

use crate::error::{Error, Result};
use crate::value::Value;

impl<'de> IntoDeserializer<'de, Error> for Value {
    type Deserializer = Value;

    fn into_deserializer(self) -> Value {
        self
    }
}

impl<'de> de::Deserializer<'de> for Value {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            Value::Null => visitor.visit_unit(),
            Value::Bool(v) => visitor.visit_bool(v),
            Value::Int(v) => visitor.visit_i64(v),
            Value::UInt(v) => visitor.visit_u64(v),
            Value::F64(v) => visitor.visit_f64(v),
            Value::F32(v) => visitor.visit_f32(v),
            Value::String(v) => visitor.visit_string(v),
            Value::Bytes(v) => visitor.visit_byte_buf(v),
            // As `Serialize for Value` writes it: the integer when it has a Rust type.
            Value::BigNum(digits) => match (digits.parse::<i128>(), digits.parse::<u128>()) {
                (Ok(v), _) => visitor.visit_i128(v),
                (_, Ok(v)) => visitor.visit_u128(v),
                _ => visitor.visit_string(digits),
            },
            Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Value::Object(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            Value::IntMap(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            Value::Typed(t) => t.to_nested().deserialize_any(visitor),
            // As a value, a table is an object of columns (spec §15.2).
            Value::Table(t) => t.view().to_value()?.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self {
            Value::String(name) => visitor.visit_enum(IntoDeserializer::<Error>::into_deserializer(name)),
            Value::Object(entries) if entries.len() == 1 => {
                let (name, content) = entries.into_iter().next().expect("one entry");
                visitor.visit_enum(Variant { name, content })
            }
            other => Err(Error::wrong_type("an enum (string or one-key object)", other.kind())),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// A variant written as an object of one entry: `{name: content}`.
struct Variant {
    name: String,
    content: Value,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = Value;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Value)> {
        let name = seed.deserialize(IntoDeserializer::<Error>::into_deserializer(self.name))?;
        Ok((name, self.content))
    }
}

impl<'de> VariantAccess<'de> for Value {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        match self {
            Value::Null => Ok(()),
            other => Err(Error::wrong_type("null for a unit variant", other.kind())),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }
}

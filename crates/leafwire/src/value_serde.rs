//! serde support for `Value`, so it moves through any serde format.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::value::{IntMap, Map, TypedArray, Value};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => ser.serialize_unit(),
            Value::Bool(v) => ser.serialize_bool(*v),
            Value::Int(v) => ser.serialize_i64(*v),
            Value::UInt(v) => ser.serialize_u64(*v),
            Value::F64(v) => ser.serialize_f64(*v),
            Value::F32(v) => ser.serialize_f32(*v),
            Value::String(v) => ser.serialize_str(v),
            Value::Bytes(v) => ser.serialize_bytes(v),
            Value::BigNum(digits) => match (digits.parse::<i128>(), digits.parse::<u128>()) {
                (Ok(v), _) => ser.serialize_i128(v),
                (_, Ok(v)) => ser.serialize_u128(v),
                _ => ser.serialize_str(digits),
            },
            // As a value, a table is an object of columns (spec §15.2).
            Value::Table(t) => t.view().to_value().map_err(serde::ser::Error::custom)?.serialize(ser),
            Value::Array(items) => {
                let mut seq = ser.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut m = ser.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Value::IntMap(map) => {
                let mut m = ser.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Value::Typed(t) => serialize_typed(t, 0, 0, ser),
        }
    }
}

fn serialize_typed<S: Serializer>(t: &TypedArray, axis: usize, start: usize, ser: S) -> Result<S::Ok, S::Error> {
    struct Row<'t>(&'t TypedArray, usize, usize);
    impl Serialize for Row<'_> {
        fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
            serialize_typed(self.0, self.1, self.2, ser)
        }
    }
    let dim = t.shape()[axis];
    let mut seq = ser.serialize_seq(Some(dim))?;
    if axis + 1 == t.shape().len() {
        for i in start..start + dim {
            seq.serialize_element(&t.element(i))?;
        }
    } else {
        let stride: usize = t.shape()[axis + 1..].iter().product();
        for r in 0..dim {
            seq.serialize_element(&Row(t, axis + 1, start + r * stride))?;
        }
    }
    seq.end()
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Value, D::Error> {
        de.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any Leafwire value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        Value::deserialize(de)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from_u64(v))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(match (i64::try_from(v), u64::try_from(v)) {
            (Ok(x), _) => Value::Int(x),
            (_, Ok(x)) => Value::UInt(x),
            _ => Value::BigNum(v.to_string()),
        })
    }
    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(match u64::try_from(v) {
            Ok(x) => Value::from_u64(x),
            _ => Value::BigNum(v.to_string()),
        })
    }
    fn visit_f32<E>(self, v: f32) -> Result<Value, E> {
        Ok(Value::F32(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::F64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Bytes(v.to_vec()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Bytes(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut strings = Map::default();
        let mut ints = IntMap::default();
        while let Some(key) = access.next_key::<Key>()? {
            let value: Value = access.next_value()?;
            let duplicate = match key {
                Key::Str(k) if ints.is_empty() => strings.insert(k, value).is_some(),
                Key::Int(k) if strings.is_empty() => ints.insert(k, value).is_some(),
                _ => return Err(de::Error::custom("a map mixes string and integer keys")),
            };
            if duplicate {
                return Err(de::Error::custom("duplicate key in map"));
            }
        }
        Ok(if ints.is_empty() { Value::Object(strings) } else { Value::IntMap(ints) })
    }
}

enum Key {
    Str(String),
    Int(i64),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(Key::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Key, E> {
                Ok(Key::Str(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Key, E> {
                Ok(Key::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
                i64::try_from(v).map(Key::Int).map_err(|_| E::custom("integer key above i64::MAX"))
            }
        }
        de.deserialize_any(KeyVisitor)
    }
}

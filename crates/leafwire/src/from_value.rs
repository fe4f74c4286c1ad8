//! `Value` → builder, the first half of `encode`.

use crate::builder::{Builder, FrameKind, Item, NumTy};
use crate::error::Result;
use crate::format::ElementType;
use crate::value::{with_typed_data, TypedData, Value};

pub(crate) fn push_value(b: &mut Builder, key: u64, v: &Value) -> Result<()> {
    match v {
        Value::Null => b.push(key, Item::Null),
        Value::Bool(x) => b.push(key, Item::Bool(*x)),
        Value::Int(x) => b.push(key, Item::Num(NumTy::Exact(ElementType::I64), *x as u64)),
        Value::UInt(x) => b.push(key, Item::UInt(*x)),
        Value::F64(x) => b.push(key, Item::Num(NumTy::Exact(ElementType::F64), x.to_bits())),
        Value::F32(x) => b.push(key, Item::Num(NumTy::Exact(ElementType::F32), x.to_bits() as u64)),
        Value::String(s) => b.push_str(key, s.as_bytes()),
        Value::Bytes(s) => b.push_bytes(key, s),
        Value::BigNum(s) => b.push_bignum(key, s.as_bytes()),
        Value::Array(items) => {
            b.open(FrameKind::Array)?;
            for item in items {
                push_value(b, 0, item)?;
            }
            // A `Value` says exactly what it is: a generic array stays generic.
            b.close_generic(key)
        }
        Value::Object(map) => {
            b.open(FrameKind::Object)?;
            for (k, item) in map {
                let id = b.key_id(k);
                push_value(b, id, item)?;
            }
            b.close(key)
        }
        Value::IntMap(map) => {
            b.open(FrameKind::IntMap)?;
            for (k, item) in map {
                push_value(b, *k as u64, item)?;
            }
            b.close(key)
        }
        Value::Typed(t) => {
            let shape = t.shape().iter().map(|&d| d as u64).collect();
            let bytes = typed_bytes(t.data());
            b.push_typed(key, t.element_type(), shape, &bytes, t.int_mask())
        }
    }
}

pub(crate) fn typed_bytes(data: &TypedData) -> Vec<u8> {
    match data {
        TypedData::Bool(v) => v.iter().map(|&x| x as u8).collect(),
        other => with_typed_data!(other, v => bytemuck_le(v)),
    }
}

fn bytemuck_le<T: ToLe>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for x in v {
        x.extend_le(&mut out);
    }
    out
}

trait ToLe {
    fn extend_le(&self, out: &mut Vec<u8>);
}
macro_rules! impl_to_le {
    ($($t:ty),*) => { $(impl ToLe for $t { fn extend_le(&self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) } })* };
}
impl_to_le!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
impl ToLe for bool {
    fn extend_le(&self, out: &mut Vec<u8>) {
        out.push(*self as u8)
    }
}

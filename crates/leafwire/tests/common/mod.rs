//! Helpers shared by the integration tests: NaN-aware value equality and a proptest
//! strategy for arbitrary values.
#![allow(dead_code)] // each test binary uses its own subset

pub mod corpus;

/// (name, JSON text) of every file of `corpus`, gzipped ones decompressed (the name is the
/// corpus's and the file's, without `.gz`).
pub fn json_texts(corpus: &corpus::Corpus) -> Vec<(String, Vec<u8>)> {
    corpus
        .files
        .iter()
        .map(|rel| {
            let bytes = corpus.read(rel);
            let text = if rel.ends_with(".gz") {
                let mut text = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
                    .unwrap_or_else(|e| panic!("{} corpus: gunzip {rel}: {e}", corpus.name));
                text
            } else {
                bytes
            };
            (format!("{}/{}", corpus.name, rel.trim_end_matches(".gz")), text)
        })
        .collect()
}

use leafwire::{IntMap, Map, TypedArray, TypedData, Value};
use proptest::prelude::*;

pub fn typed_array() -> impl Strategy<Value = Value> {
    let data = prop_oneof![
        prop::collection::vec(any::<bool>(), 0..6).prop_map(TypedData::Bool),
        prop::collection::vec(any::<i8>(), 0..6).prop_map(TypedData::I8),
        prop::collection::vec(any::<i16>(), 0..6).prop_map(TypedData::I16),
        prop::collection::vec(any::<i32>(), 0..6).prop_map(TypedData::I32),
        prop::collection::vec(any::<i64>(), 0..6).prop_map(TypedData::I64),
        prop::collection::vec(any::<u8>(), 0..6).prop_map(TypedData::U8),
        prop::collection::vec(any::<u16>(), 0..6).prop_map(TypedData::U16),
        prop::collection::vec(any::<u32>(), 0..6).prop_map(TypedData::U32),
        prop::collection::vec(any::<u64>(), 0..6).prop_map(TypedData::U64),
        prop::collection::vec(any::<f32>(), 0..6).prop_map(TypedData::F32),
        prop::collection::vec(any::<f64>(), 0..6).prop_map(TypedData::F64),
    ];
    (data, any::<bool>()).prop_map(|(data, matrix)| {
        let n = data.len();
        if matrix && n % 2 == 0 {
            Value::Typed(TypedArray::with_shape(data, vec![2, n / 2]).unwrap())
        } else {
            Value::Typed(TypedArray::new(data))
        }
    })
}

pub fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        ((i64::MAX as u64 + 1)..=u64::MAX).prop_map(Value::UInt),
        any::<f64>().prop_map(Value::F64),
        any::<f32>().prop_map(Value::F32),
        ".{0,12}".prop_map(Value::String),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Value::Bytes),
        (any::<bool>(), "[1-9][0-9]{20,30}").prop_map(|(neg, d)| Value::BigNum(if neg { format!("-{d}") } else { d })),
        typed_array(),
    ]
}

pub fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{0,3}|[^/~]{0,5}", inner.clone()), 0..14)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map>())),
            prop::collection::vec((any::<i64>(), inner), 0..12).prop_map(|pairs| Value::IntMap(pairs.into_iter().collect::<IntMap>())),
        ]
    })
}

/// Equality where NaN equals NaN (bit for bit) and -0.0 differs from 0.0.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && same(a, b)),
        (Value::IntMap(x), Value::IntMap(y)) => x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && same(a, b)),
        (Value::Typed(x), Value::Typed(y)) => {
            x.shape() == y.shape() && x.int_mask() == y.int_mask() && x.len() == y.len() && (0..x.len()).all(|i| same(&x.element(i), &y.element(i)))
        }
        _ => a == b,
    }
}

//! Arbitrary bytes through `leafwire::from_slice` into a few serde types (owned and
//! borrowed strings, options, number vectors, nested vectors, maps, enums of every variant
//! kind, byte strings). It must never panic; whatever it accepts must survive
//! `to_vec` → `from_slice` unchanged.

#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};

mod common;
use common::same;

/// An f64 compared bit for bit (NaN equals itself, -0.0 differs from 0.0); serialized
/// exactly as an f64.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
struct F64(f64);

impl PartialEq for F64 {
    fn eq(&self, other: &F64) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

/// The same for f32.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
struct F32(f32);

impl PartialEq for F32 {
    fn eq(&self, other: &F32) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum Shape {
    Empty,
    Circle(F64),
    Rect { w: F64, h: u32 },
    Pair(i8, String),
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Record<'a> {
    name: String,
    #[serde(borrow)]
    tag: &'a str,
    note: Option<String>,
    xs: Vec<F64>,
    ids: Vec<i64>,
    rows: Vec<Vec<F64>>,
    counts: HashMap<String, u32>,
    shape: Shape,
    #[serde(default)]
    shapes: Option<Vec<Shape>>,
    #[serde(default, with = "serde_bytes")]
    blob: Option<Vec<u8>>,
    #[serde(default)]
    small: Option<(u8, i16, F32)>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Blob<'a>(#[serde(borrow, with = "serde_bytes")] &'a [u8]);

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Flat {
    #[serde(default)]
    a: Option<u64>,
    #[serde(default)]
    b: Option<bool>,
    #[serde(default)]
    c: Vec<Option<i32>>,
}

/// `from_slice` into a type; on success, `to_vec` of the value validates and `from_slice`
/// of it gives an equal value.
macro_rules! round_trip {
    ($data:expr, $t:ty) => {
        round_trip_with!($data, $t, |a: &$t, b: &$t| a == b)
    };
}

/// A macro, so that the re-read value may borrow from the re-encoded bytes.
macro_rules! round_trip_with {
    ($data:expr, $t:ty, $eq:expr) => {{
        if let Ok(value) = leafwire::from_slice::<$t>($data) {
            let bytes = leafwire::to_vec(&value)
                .unwrap_or_else(|e| panic!("to_vec of a value from_slice returned failed: {e}\n  value {value:?}"));
            leafwire::validate(&bytes).unwrap_or_else(|e| panic!("to_vec wrote an invalid document: {e}\n  value {value:?}"));
            match leafwire::from_slice::<$t>(&bytes) {
                Ok(again) => assert!(($eq)(&value, &again), "to_vec → from_slice changed the value\n  first {value:?}\n  again {again:?}"),
                Err(e) => panic!("from_slice refused what to_vec wrote: {e}\n  value {value:?}"),
            }
        }
    }};
}

fuzz_target!(|data: &[u8]| common::guard(|| check(data)));

fn check(data: &[u8]) {
    round_trip!(data, Record<'_>);
    round_trip!(data, Shape);
    round_trip!(data, Vec<Shape>);
    round_trip!(data, Flat);
    round_trip!(data, Blob<'_>);
    round_trip!(data, Option<String>);
    round_trip!(data, Vec<F64>);
    round_trip!(data, Vec<i64>);
    round_trip!(data, Vec<Vec<F64>>);
    round_trip!(data, HashMap<String, u32>);
    round_trip!(data, HashMap<i64, Vec<&str>>);
    round_trip!(data, (bool, Option<u8>, String));
    round_trip!(data, serde_json::Value);
    round_trip_with!(data, leafwire::Value, same);
}

//! simd-json: owned value for encoding, borrowed value (in-place parse) for decoding.

use std::borrow::Cow;

use serde_json::Value;
use simd_json::prelude::*;
use simd_json::{BorrowedValue, OwnedValue, ValueType};

use super::peer::{CorpusPeer, Path, Step};
use crate::harness::{Fail, Scalar};

pub struct SimdJson;

fn write<V: Writable>(v: &V) -> Result<Vec<u8>, Fail> {
    let mut out = Vec::new();
    v.write(&mut out).map_err(Fail::error)?;
    Ok(out)
}

impl CorpusPeer for SimdJson {
    const NAME: &'static str = "simd-json";
    const API: &'static str = "to_borrowed_value (decode, in place), OwnedValue + Writable::write (encode)";
    const NOTE: &'static str =
        "parses in place: decode gets a fresh input copy made outside the clock; from_json pays the copy";
    const LAZY: bool = false;
    const MUTATES_INPUT: bool = true;
    type Value = OwnedValue;
    type Decoded<'a> = BorrowedValue<'a>;

    fn value_from_text(text: &[u8]) -> Result<OwnedValue, Fail> {
        simd_json::to_owned_value(&mut text.to_vec()).map_err(Fail::error)
    }

    fn value_to_json(v: &OwnedValue) -> Result<Value, Fail> {
        serde_json::to_value(v).map_err(Fail::error)
    }

    fn encode(v: &OwnedValue) -> Result<Vec<u8>, Fail> {
        write(v)
    }

    fn decode(bytes: &mut [u8]) -> Result<BorrowedValue<'_>, Fail> {
        simd_json::to_borrowed_value(bytes).map_err(Fail::error)
    }

    fn decoded_to_json(d: &BorrowedValue<'_>) -> Result<Value, Fail> {
        serde_json::to_value(d).map_err(Fail::error)
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        let mut copy = text.to_vec();
        let v = simd_json::to_borrowed_value(&mut copy).map_err(Fail::error)?;
        write(&v)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let root = simd_json::to_borrowed_value(bytes).map_err(Fail::error)?;
        let missing = || Fail::Wrong(format!("nothing at {}", path.pointer));
        let mut at = &root;
        for step in &path.steps {
            at = match step {
                Step::Key(k) => at.get(k.as_str()).ok_or_else(missing)?,
                Step::Index(i) => at.get_idx(*i).ok_or_else(missing)?,
            };
        }
        Ok(match at.value_type() {
            ValueType::Null => Scalar::Null,
            ValueType::Bool => Scalar::Bool(at.as_bool().ok_or_else(missing)?),
            ValueType::I64 => Scalar::I64(at.as_i64().ok_or_else(missing)?),
            ValueType::U64 => Scalar::U64(at.as_u64().ok_or_else(missing)?),
            ValueType::F64 => Scalar::F64(at.as_f64().ok_or_else(missing)?),
            ValueType::String => Scalar::Str(Cow::Owned(at.as_str().ok_or_else(missing)?.to_string())),
            _ => return Err(Fail::Wrong(format!("not a scalar at {}", path.pointer))),
        })
    }
}

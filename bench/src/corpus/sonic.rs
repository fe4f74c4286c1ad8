//! sonic-rs: SIMD JSON with a lazy `get_from_slice` (skips what it does not need).

use std::borrow::Cow;

use serde_json::Value;
use sonic_rs::{JsonType, JsonValueTrait, PointerNode};

use super::peer::{CorpusPeer, Path, Step};
use crate::harness::{Fail, Scalar};

pub struct Sonic;

impl CorpusPeer for Sonic {
    const NAME: &'static str = "sonic-rs";
    const API: &'static str = "from_slice::<sonic_rs::Value>, to_vec; lookup: get_from_slice (lazy)";
    const NOTE: &'static str = "from_json re-emits compact JSON (parse + to_vec)";
    const LAZY: bool = true;
    type Value = sonic_rs::Value;
    type Decoded<'a> = sonic_rs::Value;

    fn value_from_text(text: &[u8]) -> Result<sonic_rs::Value, Fail> {
        sonic_rs::from_slice(text).map_err(Fail::error)
    }

    fn value_to_json(v: &sonic_rs::Value) -> Result<Value, Fail> {
        serde_json::to_value(v).map_err(Fail::error)
    }

    fn encode(v: &sonic_rs::Value) -> Result<Vec<u8>, Fail> {
        sonic_rs::to_vec(v).map_err(Fail::error)
    }

    fn to_json(v: &sonic_rs::Value, _bytes: &[u8]) -> Option<Result<Vec<u8>, Fail>> {
        Some(Self::encode(v))
    }

    fn decode(bytes: &mut [u8]) -> Result<sonic_rs::Value, Fail> {
        sonic_rs::from_slice(bytes).map_err(Fail::error)
    }

    fn decoded_to_json(d: &sonic_rs::Value) -> Result<Value, Fail> {
        serde_json::to_value(d).map_err(Fail::error)
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        let v: sonic_rs::Value = sonic_rs::from_slice(text).map_err(Fail::error)?;
        sonic_rs::to_vec(&v).map_err(Fail::error)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let nodes: Vec<PointerNode> = path
            .steps
            .iter()
            .map(|s| match s {
                Step::Key(k) => PointerNode::from(k.as_str()),
                Step::Index(i) => PointerNode::from(*i),
            })
            .collect();
        let lazy = sonic_rs::get_from_slice(bytes, &nodes).map_err(Fail::error)?;
        let wrong = || Fail::Wrong(format!("unreadable scalar at {}", path.pointer));
        Ok(match lazy.get_type() {
            JsonType::Null => Scalar::Null,
            JsonType::Boolean => Scalar::Bool(lazy.as_bool().ok_or_else(wrong)?),
            JsonType::String => Scalar::Str(Cow::Owned(lazy.as_str().ok_or_else(wrong)?.to_string())),
            JsonType::Number => {
                if let Some(u) = lazy.as_u64() {
                    Scalar::U64(u)
                } else if let Some(i) = lazy.as_i64() {
                    Scalar::I64(i)
                } else {
                    Scalar::F64(lazy.as_f64().ok_or_else(wrong)?)
                }
            }
            _ => return Err(Fail::Wrong(format!("not a scalar at {}", path.pointer))),
        })
    }
}

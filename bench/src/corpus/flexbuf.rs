//! flexbuffers: serde for whole values (serde_json::Value in memory), and
//! its `Reader` for lazy lookups in the buffer.

use std::borrow::Cow;

use flexbuffers::{FlexBufferType, Reader};
use serde_json::Value;

use super::peer::{Path, Step};
use super::serdejson::SerdeValueCodec;
use crate::harness::{Fail, Scalar};

pub struct Flexbuffers;

pub fn scalar<'a>(r: &Reader<&'a [u8]>, pointer: &str) -> Result<Scalar<'a>, Fail> {
    use FlexBufferType as T;
    Ok(match r.flexbuffer_type() {
        T::Null => Scalar::Null,
        T::Bool => Scalar::Bool(r.get_bool().map_err(Fail::error)?),
        T::Int | T::IndirectInt => Scalar::I64(r.get_i64().map_err(Fail::error)?),
        T::UInt | T::IndirectUInt => Scalar::U64(r.get_u64().map_err(Fail::error)?),
        T::Float | T::IndirectFloat => Scalar::F64(r.get_f64().map_err(Fail::error)?),
        T::String | T::Key => Scalar::Str(Cow::Borrowed(r.get_str().map_err(Fail::error)?)),
        other => return Err(Fail::Wrong(format!("{other:?} is not a scalar at {pointer}"))),
    })
}

impl SerdeValueCodec for Flexbuffers {
    const NAME: &'static str = "flexbuffers";
    const API: &'static str = "flexbuffers::to_vec / from_slice::<serde_json::Value>; lookup: Reader (lazy)";
    const LAZY: bool = true;

    fn to_bytes<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, Fail> {
        flexbuffers::to_vec(v).map_err(Fail::error)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Value, Fail> {
        flexbuffers::from_slice(bytes).map_err(Fail::error)
    }

    fn lookup<'a>(bytes: &'a [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let mut at = Reader::get_root(bytes).map_err(Fail::error)?;
        for step in &path.steps {
            at = match step {
                Step::Key(k) => at.get_map().map_err(Fail::error)?.index(k.as_str()).map_err(Fail::error)?,
                Step::Index(i) => at.get_vector().map_err(Fail::error)?.index(*i).map_err(Fail::error)?,
            };
        }
        scalar(&at, &path.pointer)
    }
}

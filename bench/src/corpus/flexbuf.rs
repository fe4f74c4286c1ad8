//! flexbuffers: serde for whole values (serde_json::Value in memory), and
//! its `Reader` for lazy lookups in the buffer.

use std::borrow::Cow;

use flexbuffers::{FlexBufferType, Reader};
use serde_json::Value;
use serde_transcode::Transcoder;

use super::peer::{CorpusPeer, Path, Step};
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

impl CorpusPeer for Flexbuffers {
    const NAME: &'static str = "flexbuffers";
    const API: &'static str = "flexbuffers::to_vec / from_slice::<serde_json::Value>; lookup: Reader (lazy)";
    const NOTE: &'static str = "dynamic value: serde_json::Value";
    const LAZY: bool = true;
    type Value = Value;
    type Decoded<'a> = Value;

    fn value_from_text(text: &[u8]) -> Result<Value, Fail> {
        serde_json::from_slice(text).map_err(Fail::error)
    }

    fn value_to_json(v: &Value) -> Result<Value, Fail> {
        Ok(v.clone())
    }

    fn encode(v: &Value) -> Result<Vec<u8>, Fail> {
        flexbuffers::to_vec(v).map_err(Fail::error)
    }

    fn decode(bytes: &mut [u8]) -> Result<Value, Fail> {
        flexbuffers::from_slice(bytes).map_err(Fail::error)
    }

    fn decoded_to_json(d: &Value) -> Result<Value, Fail> {
        Ok(d.clone())
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        let mut de = serde_json::Deserializer::from_slice(text);
        let out = flexbuffers::to_vec(Transcoder::new(&mut de)).map_err(Fail::error)?;
        de.end().map_err(Fail::error)?;
        Ok(out)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let bytes: &'a [u8] = bytes;
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

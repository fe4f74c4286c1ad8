//! serde_json (float_roundtrip): the baseline. Compact JSON is its encoding.

use serde_json::Value;

use super::peer::{CorpusPeer, Path};
use crate::harness::{Fail, Scalar};

pub struct SerdeJson;

pub fn scalar_at(v: &Value, path: &Path) -> Result<Scalar<'static>, Fail> {
    let found = v.pointer(&path.pointer).ok_or_else(|| Fail::Wrong(format!("nothing at {}", path.pointer)))?;
    Scalar::of_json(found)
        .map(Scalar::into_owned)
        .ok_or_else(|| Fail::Wrong(format!("not a scalar at {}", path.pointer)))
}

/// A peer whose in-memory value is `serde_json::Value`: it states its serializer and
/// deserializer, and the blanket `CorpusPeer` impl below does the rest.
pub trait SerdeValueCodec {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "dynamic value: serde_json::Value";
    const LAZY: bool = false;
    /// The encoding is JSON text: `to_json` times writing the value.
    const WRITES_JSON: bool = false;

    fn to_bytes<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, Fail>;
    fn from_bytes(bytes: &[u8]) -> Result<Value, Fail>;

    /// JSON text streamed into the peer's serializer (serde-transcode, no tree).
    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        let mut de = serde_json::Deserializer::from_slice(text);
        let out = Self::to_bytes(&serde_transcode::Transcoder::new(&mut de))?;
        de.end().map_err(Fail::error)?;
        Ok(out)
    }

    /// Without a lazy reader: decode everything, then follow the pointer.
    fn lookup<'a>(bytes: &'a [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        scalar_at(&Self::from_bytes(bytes)?, path)
    }
}

impl<C: SerdeValueCodec> CorpusPeer for C {
    const NAME: &'static str = C::NAME;
    const API: &'static str = C::API;
    const NOTE: &'static str = C::NOTE;
    const LAZY: bool = C::LAZY;
    type Value = Value;
    type Decoded<'a> = Value;

    fn value_from_text(text: &[u8]) -> Result<Value, Fail> {
        serde_json::from_slice(text).map_err(Fail::error)
    }

    fn value_to_json(v: &Value) -> Result<Value, Fail> {
        Ok(v.clone())
    }

    fn encode(v: &Value) -> Result<Vec<u8>, Fail> {
        C::to_bytes(v)
    }

    fn decode(bytes: &mut [u8]) -> Result<Value, Fail> {
        C::from_bytes(bytes)
    }

    fn decoded_to_json(d: &Value) -> Result<Value, Fail> {
        Ok(d.clone())
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        C::from_json_text(text)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        C::lookup(bytes, path)
    }

    fn to_json(v: &Value, _bytes: &[u8]) -> Option<Result<Vec<u8>, Fail>> {
        C::WRITES_JSON.then(|| C::to_bytes(v))
    }
}

impl SerdeValueCodec for SerdeJson {
    const NAME: &'static str = "serde_json";
    const WRITES_JSON: bool = true;
    const API: &'static str = "from_slice::<Value>, to_vec; from_json: serde_transcode to a compact Serializer";
    const NOTE: &'static str = "feature float_roundtrip";

    fn to_bytes<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, Fail> {
        serde_json::to_vec(v).map_err(Fail::error)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Value, Fail> {
        serde_json::from_slice(bytes).map_err(Fail::error)
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        let mut out = Vec::with_capacity(text.len());
        let mut de = serde_json::Deserializer::from_slice(text);
        serde_transcode::transcode(&mut de, &mut serde_json::Serializer::new(&mut out)).map_err(Fail::error)?;
        de.end().map_err(Fail::error)?;
        Ok(out)
    }
}

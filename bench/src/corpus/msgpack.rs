//! rmp-serde (MessagePack), with serde_json::Value as the in-memory value.

use serde_json::Value;
use serde_transcode::Transcoder;

use super::peer::{CorpusPeer, Path};
use super::serdejson::scalar_at;
use crate::harness::{Fail, Scalar};

pub struct MsgPack;

impl CorpusPeer for MsgPack {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str = "rmp_serde::to_vec / from_slice::<serde_json::Value>; from_json: serde_transcode";
    const NOTE: &'static str = "dynamic value: serde_json::Value";
    const LAZY: bool = false;
    type Value = Value;
    type Decoded<'a> = Value;

    fn value_from_text(text: &[u8]) -> Result<Value, Fail> {
        serde_json::from_slice(text).map_err(Fail::error)
    }

    fn value_to_json(v: &Value) -> Result<Value, Fail> {
        Ok(v.clone())
    }

    fn encode(v: &Value) -> Result<Vec<u8>, Fail> {
        rmp_serde::to_vec(v).map_err(Fail::error)
    }

    fn decode(bytes: &mut [u8]) -> Result<Value, Fail> {
        rmp_serde::from_slice(bytes).map_err(Fail::error)
    }

    fn decoded_to_json(d: &Value) -> Result<Value, Fail> {
        Ok(d.clone())
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        let mut de = serde_json::Deserializer::from_slice(text);
        let out = rmp_serde::to_vec(&Transcoder::new(&mut de)).map_err(Fail::error)?;
        de.end().map_err(Fail::error)?;
        Ok(out)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let v: Value = rmp_serde::from_slice(bytes).map_err(Fail::error)?;
        scalar_at(&v, path)
    }
}

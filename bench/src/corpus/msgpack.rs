//! rmp-serde (MessagePack), with serde_json::Value as the in-memory value.

use serde_json::Value;

use super::serdejson::SerdeValueCodec;
use crate::harness::Fail;

pub struct MsgPack;

impl SerdeValueCodec for MsgPack {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str = "rmp_serde::to_vec / from_slice::<serde_json::Value>; from_json: serde_transcode";

    fn to_bytes<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, Fail> {
        rmp_serde::to_vec(v).map_err(Fail::error)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Value, Fail> {
        rmp_serde::from_slice(bytes).map_err(Fail::error)
    }
}

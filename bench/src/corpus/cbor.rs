//! ciborium (CBOR), with serde_json::Value as the in-memory value.

use serde_json::Value;

use super::serdejson::SerdeValueCodec;
use crate::harness::Fail;

pub struct Cbor;

impl SerdeValueCodec for Cbor {
    const NAME: &'static str = "ciborium";
    const API: &'static str = "ciborium::into_writer / from_reader::<serde_json::Value>; from_json: serde_transcode";

    fn to_bytes<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, Fail> {
        let mut out = Vec::new();
        ciborium::into_writer(v, &mut out).map_err(Fail::error)?;
        Ok(out)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Value, Fail> {
        ciborium::from_reader(bytes).map_err(Fail::error)
    }
}

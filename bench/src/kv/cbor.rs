//! ciborium: HashMap<String, String>.

use super::serdejson::{HashMapCodec, Map};
use crate::harness::Fail;

pub struct Cbor;

impl HashMapCodec for Cbor {
    const NAME: &'static str = "ciborium";
    const API: &'static str = "ciborium::into_writer / from_reader";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        let mut out = Vec::new();
        ciborium::into_writer(m, &mut out).map_err(Fail::error)?;
        Ok(out)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        ciborium::from_reader(bytes).map_err(Fail::error)
    }
}

//! rmp-serde: HashMap<String, String>.

use super::serdejson::{HashMapCodec, Map};
use crate::harness::Fail;

pub struct MsgPack;

impl HashMapCodec for MsgPack {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str = "rmp_serde::to_vec / from_slice";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        rmp_serde::to_vec(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        rmp_serde::from_slice(bytes).map_err(Fail::error)
    }
}

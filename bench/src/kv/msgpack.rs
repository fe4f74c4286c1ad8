//! rmp-serde: HashMap<String, String>.

use super::peer::KvPeer;
use super::serdejson::{build, get, pairs, set, Map};
use crate::harness::Fail;

pub struct MsgPack;

impl KvPeer for MsgPack {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str = "rmp_serde::to_vec / from_slice";
    type Map = Map;

    fn build(p: &[(String, String)]) -> Map {
        build(p)
    }
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        rmp_serde::to_vec(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        rmp_serde::from_slice(bytes).map_err(Fail::error)
    }
    fn get<'m>(m: &'m Map, key: &str) -> Option<&'m str> {
        get(m, key)
    }
    fn set(m: &mut Map, key: &str, value: &str) {
        set(m, key, value)
    }
    fn pairs(m: &Map) -> Vec<(String, String)> {
        pairs(m)
    }
}

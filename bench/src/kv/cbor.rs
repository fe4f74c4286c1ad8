//! ciborium: HashMap<String, String>.

use super::peer::KvPeer;
use super::serdejson::{build, get, pairs, set, Map};
use crate::harness::Fail;

pub struct Cbor;

impl KvPeer for Cbor {
    const NAME: &'static str = "ciborium";
    const API: &'static str = "ciborium::into_writer / from_reader";
    type Map = Map;

    fn build(p: &[(String, String)]) -> Map {
        build(p)
    }
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        let mut out = Vec::new();
        ciborium::into_writer(m, &mut out).map_err(Fail::error)?;
        Ok(out)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        ciborium::from_reader(bytes).map_err(Fail::error)
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

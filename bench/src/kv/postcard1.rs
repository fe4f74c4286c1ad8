//! postcard: HashMap<String, String>.

use super::peer::KvPeer;
use super::serdejson::{build, get, pairs, set, Map};
use crate::harness::Fail;

pub struct Postcard;

impl KvPeer for Postcard {
    const NAME: &'static str = "postcard";
    const API: &'static str = "postcard::to_stdvec / from_bytes";
    type Map = Map;

    fn build(p: &[(String, String)]) -> Map {
        build(p)
    }
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        postcard::to_stdvec(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        postcard::from_bytes(bytes).map_err(Fail::error)
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

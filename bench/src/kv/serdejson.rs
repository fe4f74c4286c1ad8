//! serde_json: HashMap<String, String> as a JSON object (the baseline).

use std::collections::HashMap;

use super::peer::KvPeer;
use crate::harness::Fail;

pub type Map = HashMap<String, String>;

pub fn build(pairs: &[(String, String)]) -> Map {
    pairs.iter().cloned().collect()
}

pub fn get<'m>(m: &'m Map, key: &str) -> Option<&'m str> {
    m.get(key).map(String::as_str)
}

pub fn set(m: &mut Map, key: &str, value: &str) {
    m.insert(key.to_string(), value.to_string());
}

pub fn pairs(m: &Map) -> Vec<(String, String)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A peer whose in-memory map is `Map`: it only says how to encode and decode; the
/// blanket `KvPeer` impl below supplies the map operations they all share.
pub trait HashMapCodec {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail>;
    fn decode(bytes: &[u8]) -> Result<Map, Fail>;
}

impl<C: HashMapCodec> KvPeer for C {
    const NAME: &'static str = C::NAME;
    const API: &'static str = C::API;
    const NOTE: &'static str = C::NOTE;
    type Map = Map;

    fn build(p: &[(String, String)]) -> Map {
        build(p)
    }
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        C::encode(m)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        C::decode(bytes)
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

pub struct SerdeJson;

impl HashMapCodec for SerdeJson {
    const NAME: &'static str = "serde_json";
    const API: &'static str = "from_slice / to_vec on HashMap<String, String>";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        serde_json::to_vec(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        serde_json::from_slice(bytes).map_err(Fail::error)
    }
}

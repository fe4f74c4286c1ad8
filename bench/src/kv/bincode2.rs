//! bincode: HashMap<String, String>.

use super::peer::KvPeer;
use super::serdejson::{build, get, pairs, set, Map};
use crate::harness::Fail;

pub struct Bincode;

impl KvPeer for Bincode {
    const NAME: &'static str = "bincode";
    const API: &'static str = "bincode::encode_to_vec / decode_from_slice (config::standard, native Encode/Decode)";
    type Map = Map;

    fn build(p: &[(String, String)]) -> Map {
        build(p)
    }
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        bincode::encode_to_vec(m, bincode::config::standard()).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        let (m, _) = bincode::decode_from_slice(bytes, bincode::config::standard()).map_err(Fail::error)?;
        Ok(m)
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

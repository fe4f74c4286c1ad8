//! bincode: HashMap<String, String>.

use super::serdejson::{HashMapCodec, Map};
use crate::harness::Fail;

pub struct Bincode;

impl HashMapCodec for Bincode {
    const NAME: &'static str = "bincode";
    const API: &'static str = "bincode::encode_to_vec / decode_from_slice (config::standard, native Encode/Decode)";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        bincode::encode_to_vec(m, bincode::config::standard()).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        let (m, _) = bincode::decode_from_slice(bytes, bincode::config::standard()).map_err(Fail::error)?;
        Ok(m)
    }
}

//! postcard: HashMap<String, String>.

use super::serdejson::{HashMapCodec, Map};
use crate::harness::Fail;

pub struct Postcard;

impl HashMapCodec for Postcard {
    const NAME: &'static str = "postcard";
    const API: &'static str = "postcard::to_stdvec / from_bytes";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        postcard::to_stdvec(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        postcard::from_bytes(bytes).map_err(Fail::error)
    }
}

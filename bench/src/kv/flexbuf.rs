//! flexbuffers: HashMap<String, String> through serde, and its lazy Reader.

use super::serdejson::{build, HashMapCodec, Map};
use crate::harness::Fail;

pub struct Flexbuffers;

impl HashMapCodec for Flexbuffers {
    const NAME: &'static str = "flexbuffers";
    const API: &'static str = "flexbuffers::to_vec / from_slice";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        flexbuffers::to_vec(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        flexbuffers::from_slice(bytes).map_err(Fail::error)
    }
}

/// flexbuffers' `Reader`: key lookups in the buffer (keys are sorted; binary search).
pub struct FlexbuffersReader;

impl super::peer::KvLazy for FlexbuffersReader {
    const NAME: &'static str = "flexbuffers (Reader)";
    const API: &'static str = "Reader::get_root, MapReader::index(key)";

    fn encode(p: &[(String, String)]) -> Result<Vec<u8>, Fail> {
        flexbuffers::to_vec(build(p)).map_err(Fail::error)
    }

    fn read(bytes: &[u8], keys: &[String]) -> Result<(usize, usize), Fail> {
        let map = flexbuffers::Reader::get_root(bytes).map_err(Fail::error)?.get_map().map_err(Fail::error)?;
        let mut found = (0, 0);
        for k in keys {
            if let Ok(v) = map.index(k.as_str()) {
                found.0 += 1;
                found.1 += v.get_str().map_err(Fail::error)?.len();
            }
        }
        Ok(found)
    }
}

//! rkyv 0.8: HashMap<String, String> serialized zero-copy; the whole-map peer
//! deserializes (with validation), the reader uses the archived map in place.

use rkyv::rancor::Error as RkyvError;
use rkyv::util::AlignedVec;

use super::peer::KvLazy;
use super::serdejson::{build, HashMapCodec, Map};
use crate::harness::Fail;

/// rkyv reads from 16-byte aligned buffers; copy if the caller's is not.
fn aligned(bytes: &[u8], f: impl FnOnce(&[u8]) -> Result<usize, Fail>) -> Result<usize, Fail> {
    if bytes.as_ptr() as usize % 16 == 0 {
        f(bytes)
    } else {
        let mut copy = AlignedVec::<16>::with_capacity(bytes.len());
        copy.extend_from_slice(bytes);
        f(&copy)
    }
}

pub struct Rkyv;

impl HashMapCodec for Rkyv {
    const NAME: &'static str = "rkyv";
    const API: &'static str = "rkyv::to_bytes / from_bytes (validated) on HashMap<String, String>";
    fn encode(m: &Map) -> Result<Vec<u8>, Fail> {
        Ok(rkyv::to_bytes::<RkyvError>(m).map_err(Fail::error)?.into_vec())
    }
    fn decode(bytes: &[u8]) -> Result<Map, Fail> {
        if bytes.as_ptr() as usize % 16 != 0 {
            return Err(Fail::Error("input buffer not 16-byte aligned".into()));
        }
        rkyv::from_bytes::<Map, RkyvError>(bytes).map_err(Fail::error)
    }
}

/// `rkyv::access`: validate the archive, then hash lookups in place.
pub struct RkyvArchived;

impl KvLazy for RkyvArchived {
    const NAME: &'static str = "rkyv (archived, validated)";
    const API: &'static str = "rkyv::access::<ArchivedHashMap>, get(key)";
    const NOTE: &'static str = "access validates the whole archive (bytecheck) before any lookup";

    fn encode(p: &[(String, String)]) -> Result<Vec<u8>, Fail> {
        Rkyv::encode(&build(p))
    }

    fn read(bytes: &[u8], keys: &[String]) -> Result<(usize, usize), Fail> {
        let mut found = 0;
        let len = aligned(bytes, |b| {
            let map = rkyv::access::<rkyv::Archived<Map>, RkyvError>(b).map_err(Fail::error)?;
            let mut len = 0;
            for k in keys {
                if let Some(v) = map.get(k.as_str()) {
                    found += 1;
                    len += v.len();
                }
            }
            Ok(len)
        })?;
        Ok((found, len))
    }
}

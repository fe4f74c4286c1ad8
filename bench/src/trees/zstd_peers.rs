//! Compressed text and MessagePack: zstd (levels 3 and 19) over compact JSON and over
//! rmp-serde's output, the compressors a user reaches for before a columnar format.
//! Decoding is decompression, then the fastest parser of the format (sonic-rs for JSON).

use super::model::{CollectionProps, Model, Properties};
use super::peer::TreePeer;
use crate::harness::Fail;

fn unzstd(bytes: &[u8]) -> Result<Vec<u8>, Fail> {
    zstd::bulk::decompress(bytes, 1 << 30).map_err(Fail::error)
}

macro_rules! json_zstd {
    ($name:ident, $level:expr, $label:expr) => {
        pub struct $name;

        impl TreePeer for $name {
            const NAME: &'static str = $label;
            const API: &'static str =
                "serde_json::to_vec + zstd::bulk::compress; zstd::bulk::decompress + sonic_rs::from_slice";
            const SELECT: &'static str = "decompresses and parses everything; geometry skipped with IgnoredAny";

            fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
                zstd::bulk::compress(&serde_json::to_vec(m).map_err(Fail::error)?, $level).map_err(Fail::error)
            }
            fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
                sonic_rs::from_slice(&unzstd(bytes)?).map_err(Fail::error)
            }
            fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
                let c: CollectionProps = sonic_rs::from_slice(&unzstd(bytes)?).map_err(Fail::error)?;
                Ok(c.features.into_iter().map(|f| f.properties).collect())
            }
        }
    };
}

macro_rules! msgpack_zstd {
    ($name:ident, $level:expr, $label:expr) => {
        pub struct $name;

        impl TreePeer for $name {
            const NAME: &'static str = $label;
            const API: &'static str =
                "rmp_serde::to_vec + zstd::bulk::compress; zstd::bulk::decompress + rmp_serde::from_slice";
            const SELECT: &'static str = "decompresses and reads everything; geometry skipped with IgnoredAny";

            fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
                zstd::bulk::compress(&rmp_serde::to_vec(m).map_err(Fail::error)?, $level).map_err(Fail::error)
            }
            fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
                rmp_serde::from_slice(&unzstd(bytes)?).map_err(Fail::error)
            }
            fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
                let c: CollectionProps = rmp_serde::from_slice(&unzstd(bytes)?).map_err(Fail::error)?;
                Ok(c.features.into_iter().map(|f| f.properties).collect())
            }
        }
    };
}

json_zstd!(JsonZstd3, 3, "JSON + zstd -3");
json_zstd!(JsonZstd19, 19, "JSON + zstd -19");
msgpack_zstd!(MsgPackZstd3, 3, "rmp-serde + zstd -3");
msgpack_zstd!(MsgPackZstd19, 19, "rmp-serde + zstd -19");

//! rmp-serde on the model structs, in both of its struct encodings.

use super::model::{CollectionProps, Model, Properties};
use super::peer::TreePeer;
use crate::harness::Fail;

fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
    let c: CollectionProps = rmp_serde::from_slice(bytes).map_err(Fail::error)?;
    Ok(c.features.into_iter().map(|f| f.properties).collect())
}

const SELECT: &str = "reads everything; geometry skipped with IgnoredAny";

/// `rmp_serde::to_vec`: structs as arrays (no field names), its most compact form.
pub struct MsgPack;

impl TreePeer for MsgPack {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str = "rmp_serde::to_vec / from_slice (structs as arrays)";
    const SELECT: &'static str = SELECT;

    fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
        rmp_serde::to_vec(m).map_err(Fail::error)
    }
    fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
        rmp_serde::from_slice(bytes).map_err(Fail::error)
    }
    fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
        select(bytes)
    }
}

/// `rmp_serde::to_vec_named`: structs as maps with field names (self-describing).
pub struct MsgPackNamed;

impl TreePeer for MsgPackNamed {
    const NAME: &'static str = "rmp-serde (named)";
    const API: &'static str = "rmp_serde::to_vec_named / from_slice (structs as maps)";
    const SELECT: &'static str = SELECT;

    fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
        rmp_serde::to_vec_named(m).map_err(Fail::error)
    }
    fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
        rmp_serde::from_slice(bytes).map_err(Fail::error)
    }
    fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
        select(bytes)
    }
}

//! serde_json on the model structs (compact JSON).

use super::model::{CollectionProps, Model, Properties};
use super::peer::TreePeer;
use crate::harness::Fail;

pub struct SerdeJson;

impl TreePeer for SerdeJson {
    const NAME: &'static str = "serde_json";
    const API: &'static str = "to_vec / from_slice on the structs";
    const NOTE: &'static str = "feature float_roundtrip";
    const SELECT: &'static str = "parses everything; geometry skipped with IgnoredAny";

    fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
        serde_json::to_vec(m).map_err(Fail::error)
    }
    fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
        serde_json::from_slice(bytes).map_err(Fail::error)
    }
    fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
        let c: CollectionProps = serde_json::from_slice(bytes).map_err(Fail::error)?;
        Ok(c.features.into_iter().map(|f| f.properties).collect())
    }
}

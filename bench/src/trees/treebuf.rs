//! Tree-Buf 0.10 with derived Encode/Decode on the same structs.

use super::model::{Model, Properties, TbCollectionProps};
use super::peer::TreePeer;
use crate::harness::Fail;

pub struct TreeBuf;

impl TreePeer for TreeBuf {
    const NAME: &'static str = "tree-buf";
    const API: &'static str = "tree_buf::encode / decode (derive Encode, Decode; default options, lossless)";
    const SELECT: &'static str = "selective load: decodes a schema without geometry";

    fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
        Ok(tree_buf::encode(m))
    }
    fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
        tree_buf::decode(bytes).map_err(|e| Fail::Error(format!("{e:?}")))
    }
    fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
        let c: TbCollectionProps = tree_buf::decode(bytes).map_err(|e| Fail::Error(format!("{e:?}")))?;
        Ok(c.features.into_iter().map(|f| f.properties).collect())
    }
}

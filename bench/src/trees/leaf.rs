//! Leafwire: serde `to_vec` / `from_slice` on the structs; selective load
//! with lazy `Document` navigation (geometry never read).

use leafwire::Document;

use super::model::{Model, Properties};
use super::peer::TreePeer;
use crate::harness::Fail;

pub struct Leafwire;

impl TreePeer for Leafwire {
    const NAME: &'static str = "leafwire";
    const API: &'static str =
        "leafwire::to_vec / from_slice (serde); select: Document::pointer(\"/features\"), at(i).get(..)";
    const SELECT: &'static str = "lazy Document navigation; geometry not read";

    fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
        leafwire::to_vec(m).map_err(Fail::error)
    }
    fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
        leafwire::from_slice(bytes).map_err(Fail::error)
    }
    fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
        let doc = Document::open(bytes).map_err(Fail::error)?;
        let features = doc.pointer("/features").map_err(Fail::error)?;
        let n = features.len().map_err(Fail::error)?;
        let text = |node: &leafwire::Node<'_>, key: &str| -> Result<String, Fail> {
            Ok(node.get(key).map_err(Fail::error)?.as_str().map_err(Fail::error)?.to_string())
        };
        (0..n)
            .map(|i| {
                let p = features.at(i).map_err(Fail::error)?.get("properties").map_err(Fail::error)?;
                Ok(Properties { ADMIN: text(&p, "ADMIN")?, ISO_A3: text(&p, "ISO_A3")?, ISO_A2: text(&p, "ISO_A2")? })
            })
            .collect()
    }
}

/// Packed mode (spec §13), lossless, without and with the zstd stage. Select reads each
/// feature's properties through the packed array (decoding the stripe that holds it).
macro_rules! packed_peer {
    ($name:ident, $label:expr, $zstd:expr) => {
        pub struct $name;

        impl TreePeer for $name {
            const NAME: &'static str = $label;
            const API: &'static str = "leafwire::to_vec_packed / from_slice_owned; select: Node::packed_element(i)";
            const SELECT: &'static str = "decodes every stripe once per element it holds (no column projection yet)";

            fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
                leafwire::to_vec_packed(m, &leafwire::PackOptions { zstd_level: $zstd, lossy_step: None })
                    .map_err(Fail::error)
            }
            fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
                leafwire::from_slice_owned(bytes).map_err(Fail::error)
            }
            fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
                let doc = Document::open(bytes).map_err(Fail::error)?;
                let features = doc.pointer("/features").map_err(Fail::error)?;
                let n = features.len().map_err(Fail::error)?;
                let text = |v: &leafwire::Value, key: &str| -> Result<String, Fail> {
                    match v {
                        leafwire::Value::Object(m) => match m.get(key) {
                            Some(leafwire::Value::String(s)) => Ok(s.clone()),
                            _ => Err(Fail::Wrong(format!("no string {key}"))),
                        },
                        _ => Err(Fail::Wrong("properties is not an object".into())),
                    }
                };
                (0..n)
                    .map(|i| {
                        let f = features.packed_element(i).map_err(Fail::error)?;
                        let leafwire::Value::Object(f) = f else {
                            return Err(Fail::Wrong("feature is not an object".into()));
                        };
                        let p = f.get("properties").ok_or_else(|| Fail::Wrong("no properties".into()))?;
                        Ok(Properties {
                            ADMIN: text(p, "ADMIN")?,
                            ISO_A3: text(p, "ISO_A3")?,
                            ISO_A2: text(p, "ISO_A2")?,
                        })
                    })
                    .collect()
            }
        }
    };
}

packed_peer!(LeafwirePacked, "leafwire (packed)", None);
packed_peer!(LeafwirePackedZstd, "leafwire (packed, zstd -19)", Some(19));

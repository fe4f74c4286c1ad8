//! Leafwire: serde `to_vec` / `from_slice` on the structs; selective load
//! with lazy `Document` navigation (geometry never read).

use leafwire::Document;

use super::model::{FeatureCollection as FeatureCollectionModel, Model, Properties};
use super::peer::TreePeer;
use super::ELEMENT;
use crate::harness::{Case, Fail, Row, Session};

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

/// Packed mode (spec §13), lossless, without and with the zstd stage. Select deserializes
/// each feature's properties from a projection of the packed array's columns.
macro_rules! packed_peer {
    ($name:ident, $label:expr, $zstd:expr) => {
        pub struct $name;

        impl TreePeer for $name {
            const NAME: &'static str = $label;
            const API: &'static str =
                "leafwire::to_vec_packed / from_slice_owned; select: Node::packed_select_as::<Properties>([\"properties\"])";
            const SELECT: &'static str =
                "deserializes the struct from the columns under properties only (and the structure above them)";

            fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail> {
                leafwire::to_vec_packed(m, &leafwire::PackOptions { zstd_level: $zstd, lossy_step: None, ..Default::default() })
                    .map_err(Fail::error)
            }
            fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail> {
                leafwire::from_slice_owned(bytes).map_err(Fail::error)
            }
            fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail> {
                let doc = Document::open(bytes).map_err(Fail::error)?;
                let features = doc.pointer("/features").map_err(Fail::error)?;
                features.packed_select_as(&["properties"]).map_err(Fail::error)
            }
        }
    };
}

packed_peer!(LeafwirePacked, "leafwire (packed)", None);
packed_peer!(LeafwirePackedZstd, "leafwire (packed, zstd -19)", Some(19));

/// Open + read one value of one element, ordinary (a lazy pointer) and packed (the
/// element's stripe, only the columns on the path).
pub fn element_rows<'a>(dataset: &'a str, model: &'a FeatureCollectionModel, s: &mut Session<'a>) {
    let expected = model.features[17].properties.ADMIN.clone();
    let ordinary = leafwire::to_vec(model).expect("encodes");
    let check = |got: Result<String, leafwire::Error>| match got {
        Ok(v) if v == expected => Ok(()),
        Ok(v) => Err(Fail::Wrong(format!("read {v:?}"))),
        Err(e) => Err(Fail::error(e)),
    };
    let read_ordinary = move |b: &[u8]| -> Result<String, leafwire::Error> {
        Ok(Document::open(b)?.pointer(ELEMENT)?.as_str()?.to_string())
    };
    let read_packed = move |b: &[u8]| -> Result<String, leafwire::Error> {
        match Document::open(b)?.pointer_value(ELEMENT)? {
            leafwire::Value::String(s) => Ok(s),
            other => Ok(format!("{other:?}")),
        }
    };
    let ok = check(read_ordinary(&ordinary));
    s.checked(Row::new(dataset, "element", Leafwire::NAME), ok, move || {
        Case::new(move || read_ordinary(&ordinary).expect("checked"))
    });
    for (name, zstd) in [(LeafwirePacked::NAME, None), (LeafwirePackedZstd::NAME, Some(19))] {
        let packed = leafwire::to_vec_packed(model, &leafwire::PackOptions { zstd_level: zstd, lossy_step: None, ..Default::default() })
            .expect("encodes");
        let ok = check(read_packed(&packed));
        s.checked(Row::new(dataset, "element", name), ok, move || {
            Case::new(move || read_packed(&packed).expect("checked"))
        });
    }
}

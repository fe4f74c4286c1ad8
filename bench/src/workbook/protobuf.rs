//! prost: types generated from proto/workbook.proto (maps as BTreeMap).

use prost::Message;

use super::model::{Page, Row, Workbook};
use super::peer::WorkbookPeer;
use crate::harness::Fail;

pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/workbook.rs"));
}

pub struct Prost;

impl WorkbookPeer for Prost {
    const NAME: &'static str = "prost";
    const API: &'static str = "Message::encode_to_vec / decode on generated types";
    const NOTE: &'static str = "schema proto/workbook.proto; map<int32, Doubles> for the map of lists";
    type Native = pb::Workbook;

    fn to_native(w: &Workbook) -> pb::Workbook {
        let row = |r: &Row| pb::Row {
            key: r.key.clone(),
            label: r.label.clone(),
            value: r.value,
            values: r.values.clone(),
            weights: r.weights.clone(),
            series: r.series.iter().map(|(k, v)| (*k, pb::Doubles { values: v.clone() })).collect(),
        };
        pb::Workbook {
            pages: w
                .pages
                .iter()
                .map(|p| pb::Page { name: p.name.clone(), rows: p.rows.iter().map(row).collect() })
                .collect(),
        }
    }

    fn from_native(n: pb::Workbook) -> Workbook {
        let row = |r: pb::Row| Row {
            key: r.key,
            label: r.label,
            value: r.value,
            values: r.values,
            weights: r.weights,
            series: r.series.into_iter().map(|(k, v)| (k, v.values)).collect(),
        };
        Workbook {
            pages: n
                .pages
                .into_iter()
                .map(|p| Page { name: p.name, rows: p.rows.into_iter().map(row).collect() })
                .collect(),
        }
    }

    fn encode(n: &pb::Workbook) -> Result<Vec<u8>, Fail> {
        Ok(n.encode_to_vec())
    }

    fn decode(bytes: &[u8]) -> Result<pb::Workbook, Fail> {
        pb::Workbook::decode(bytes).map_err(Fail::error)
    }
}

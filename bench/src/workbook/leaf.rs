//! Leafwire: serde `to_vec` / `from_slice` on the model structs.

use super::model::Workbook;
use super::peer::WorkbookPeer;
use crate::harness::Fail;

pub struct Leafwire;

impl WorkbookPeer for Leafwire {
    const NAME: &'static str = "leafwire";
    const API: &'static str = "leafwire::to_vec / from_slice (serde)";
    type Native = Workbook;

    fn to_native(w: &Workbook) -> Workbook {
        w.clone()
    }
    fn from_native(n: Workbook) -> Workbook {
        n
    }
    fn encode(m: &Workbook) -> Result<Vec<u8>, Fail> {
        leafwire::to_vec(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Workbook, Fail> {
        leafwire::from_slice(bytes).map_err(Fail::error)
    }
}

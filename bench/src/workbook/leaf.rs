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

/// Packed mode (spec §13), lossless, without and with the zstd stage.
macro_rules! packed_peer {
    ($name:ident, $label:expr, $zstd:expr) => {
        pub struct $name;

        impl WorkbookPeer for $name {
            const NAME: &'static str = $label;
            const API: &'static str = "leafwire::to_vec_packed / from_slice_owned (serde)";
            type Native = Workbook;

            fn to_native(w: &Workbook) -> Workbook {
                w.clone()
            }
            fn from_native(n: Workbook) -> Workbook {
                n
            }
            fn encode(m: &Workbook) -> Result<Vec<u8>, Fail> {
                leafwire::to_vec_packed(m, &leafwire::PackOptions { zstd_level: $zstd, lossy_step: None, ..Default::default() })
                    .map_err(Fail::error)
            }
            fn decode(bytes: &[u8]) -> Result<Workbook, Fail> {
                leafwire::from_slice_owned(bytes).map_err(Fail::error)
            }
        }
    };
}

packed_peer!(LeafwirePacked, "leafwire (packed)", None);
packed_peer!(LeafwirePackedZstd, "leafwire (packed, zstd -19)", Some(19));

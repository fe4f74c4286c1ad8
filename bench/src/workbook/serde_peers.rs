//! Peers that encode the model structs directly: serde_json, rmp-serde,
//! ciborium (serde) and bincode (its own derive).

use super::model::Workbook;
use super::peer::WorkbookPeer;
use crate::harness::Fail;

macro_rules! direct {
    ($ty:ident, $name:literal, $api:literal, |$m:ident| $enc:expr, |$b:ident| $dec:expr) => {
        pub struct $ty;

        impl WorkbookPeer for $ty {
            const NAME: &'static str = $name;
            const API: &'static str = $api;
            type Native = Workbook;

            fn to_native(w: &Workbook) -> Workbook {
                w.clone()
            }
            fn from_native(n: Workbook) -> Workbook {
                n
            }
            fn encode($m: &Workbook) -> Result<Vec<u8>, Fail> {
                $enc
            }
            fn decode($b: &[u8]) -> Result<Workbook, Fail> {
                $dec
            }
        }
    };
}

direct!(
    SerdeJson,
    "serde_json",
    "to_vec / from_slice (float_roundtrip; int map keys as strings)",
    |m| serde_json::to_vec(m).map_err(Fail::error),
    |b| serde_json::from_slice(b).map_err(Fail::error)
);

direct!(
    MsgPack,
    "rmp-serde",
    "rmp_serde::to_vec / from_slice (structs as arrays)",
    |m| rmp_serde::to_vec(m).map_err(Fail::error),
    |b| rmp_serde::from_slice(b).map_err(Fail::error)
);

direct!(
    Cbor,
    "ciborium",
    "ciborium::into_writer / from_reader",
    |m| {
        let mut out = Vec::new();
        ciborium::into_writer(m, &mut out).map_err(Fail::error)?;
        Ok(out)
    },
    |b| ciborium::from_reader(b).map_err(Fail::error)
);

direct!(
    Bincode,
    "bincode",
    "encode_to_vec / decode_from_slice (config::standard, derive Encode/Decode)",
    |m| bincode::encode_to_vec(m, bincode::config::standard()).map_err(Fail::error),
    |b| Ok(bincode::decode_from_slice(b, bincode::config::standard()).map_err(Fail::error)?.0)
);

//! rmp-serde: MessagePack with field names; the reader walks it all
//! (keeping only the wanted columns), then aggregates.

use std::path::Path;

use serde::de::DeserializeSeed;
use serde::Serialize;

use super::peer::{create, finish, map, ColumnsPeer};
use super::selective::Root;
use super::table::{sum_slices, Query, Table, PREDICATE, VALUE};
use crate::harness::Fail;

pub struct MsgPack;

impl ColumnsPeer for MsgPack {
    const NAME: &'static str = "rmp-serde";
    const API: &'static str =
        "mmap + Deserializer::from_read_ref with a visitor keeping the wanted columns (IgnoredAny for the rest)";
    const EXT: &'static str = "msgpack";

    fn write(t: &Table, path: &Path) -> Result<(), Fail> {
        let mut w = create(path)?;
        t.serialize(&mut rmp_serde::Serializer::new(&mut w).with_struct_map()).map_err(Fail::error)?;
        finish(w)
    }

    fn query(path: &Path, q: Query) -> Result<f64, Fail> {
        let bytes = map(path)?;
        let wanted: &[&str] = if q.below.is_some() { &[VALUE, PREDICATE] } else { &[VALUE] };
        let mut de = rmp_serde::Deserializer::from_read_ref(&bytes[..]);
        let cols = Root(wanted).deserialize(&mut de).map_err(Fail::error)?;
        Ok(sum_slices(&cols[0], cols.get(1).map(Vec::as_slice), q))
    }
}

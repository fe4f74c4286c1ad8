//! serde_json: compact JSON text; the reader parses it all (keeping only the
//! wanted columns), then aggregates.

use std::path::Path;

use serde::de::DeserializeSeed;

use super::peer::{create, finish, map, ColumnsPeer};
use super::selective::Root;
use super::table::{sum_slices, Query, Table, PREDICATE, VALUE};
use crate::harness::Fail;

pub struct Json;

impl ColumnsPeer for Json {
    const NAME: &'static str = "serde_json";
    const API: &'static str =
        "mmap + Deserializer::from_slice with a visitor keeping the wanted columns (IgnoredAny for the rest)";
    const NOTE: &'static str = "run up to the 100 MB table only: the 1 GB table is ~2.3 GB of JSON text";
    const EXT: &'static str = "json";
    const MAX_ROWS: usize = 200_000;

    fn write(t: &Table, path: &Path) -> Result<(), Fail> {
        let mut w = create(path)?;
        serde_json::to_writer(&mut w, t).map_err(Fail::error)?;
        finish(w)
    }

    fn query(path: &Path, q: Query) -> Result<f64, Fail> {
        let bytes = map(path)?;
        let wanted: &[&str] = if q.below.is_some() { &[VALUE, PREDICATE] } else { &[VALUE] };
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        let cols = Root(wanted).deserialize(&mut de).map_err(Fail::error)?;
        de.end().map_err(Fail::error)?;
        Ok(sum_slices(&cols[0], cols.get(1).map(Vec::as_slice), q))
    }
}

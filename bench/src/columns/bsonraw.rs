//! bson: one document; the reader uses `RawDocument` in the mapped file,
//! skipping other columns by their length prefix (no parse of their elements).

use std::path::Path;

use bson::raw::{RawArray, RawDocument};

use super::peer::{map, write_bytes, ColumnsPeer};
use super::table::{sum_where, Query, Table, PREDICATE, VALUE};
use crate::harness::Fail;

pub struct Bson;

fn doubles(a: &RawArray) -> impl Iterator<Item = Result<f64, Fail>> + '_ {
    a.into_iter().map(|e| e.map_err(Fail::error)?.as_f64().ok_or_else(|| Fail::Wrong("element is not a double".into())))
}

impl ColumnsPeer for Bson {
    const NAME: &'static str = "bson";
    const API: &'static str = "mmap + RawDocument::from_bytes, get_document(\"columns\"), get_array(name), iterate";
    const EXT: &'static str = "bson";

    fn write(t: &Table, path: &Path) -> Result<(), Fail> {
        write_bytes(path, &bson::serialize_to_vec(t).map_err(Fail::error)?)
    }

    fn query(path: &Path, q: Query) -> Result<f64, Fail> {
        let bytes = map(path)?;
        let columns =
            RawDocument::from_bytes(&bytes[..]).map_err(Fail::error)?.get_document("columns").map_err(Fail::error)?;
        let value = columns.get_array(VALUE).map_err(Fail::error)?;
        let mut bad = None;
        let mut ok = |r: Result<f64, Fail>| {
            r.unwrap_or_else(|e| {
                bad.get_or_insert(e);
                f64::NAN
            })
        };
        let sum = if q.below.is_some() {
            let pred = columns.get_array(PREDICATE).map_err(Fail::error)?;
            sum_where(doubles(value).zip(doubles(pred)).map(|(v, p)| (ok(v), ok(p))), q)
        } else {
            sum_where(doubles(value).map(|v| (ok(v), 0.0)), q)
        };
        match bad {
            Some(e) => Err(e),
            None => Ok(sum),
        }
    }
}

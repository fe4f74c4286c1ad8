//! Leafwire: `leafwire::to_vec` of the table (f64 columns become typed
//! arrays); the reader maps the file and borrows the columns as &[f64].

use std::path::Path;

use leafwire::MappedFile;

use super::peer::{write_bytes, ColumnsPeer};
use super::table::{sum_slices, Query, Table, PREDICATE, VALUE};
use crate::harness::Fail;

pub struct Leafwire;

impl ColumnsPeer for Leafwire {
    const NAME: &'static str = "leafwire";
    const API: &'static str = "MappedFile::open, document, pointer(\"/columns/<name>\"), as_slice::<f64>";
    const EXT: &'static str = "leafwire";

    fn write(t: &Table, path: &Path) -> Result<(), Fail> {
        write_bytes(path, &leafwire::to_vec(t).map_err(Fail::error)?)
    }

    fn query(path: &Path, q: Query) -> Result<f64, Fail> {
        // SAFETY: the benchmark's own file, not modified while it runs.
        let file = unsafe { MappedFile::open(path) }.map_err(Fail::error)?;
        let doc = file.document().map_err(Fail::error)?;
        let column = |name: &str| -> Result<&[f64], Fail> {
            doc.pointer(&format!("/columns/{name}")).map_err(Fail::error)?.as_slice::<f64>().map_err(Fail::error)
        };
        let value = column(VALUE)?;
        let predicate = match q.below {
            Some(_) => Some(column(PREDICATE)?),
            None => None,
        };
        Ok(sum_slices(value, predicate, q))
    }
}

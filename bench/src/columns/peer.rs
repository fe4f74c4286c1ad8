//! What a peer provides to the columns workload: write the table to a file
//! once, then answer a query from the file in a fresh process.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use memmap2::Mmap;

use super::table::{Query, Table};
use crate::harness::{Fail, PeerInfo};

pub trait ColumnsPeer {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "";
    const EXT: &'static str;
    /// Tables with more rows are not run for this peer (say why in NOTE).
    const MAX_ROWS: usize = usize::MAX;

    fn write(t: &Table, path: &Path) -> Result<(), Fail>;
    /// Open the file and answer `q`: everything a real reader would do.
    fn query(path: &Path, q: Query) -> Result<f64, Fail>;

    fn info() -> PeerInfo {
        PeerInfo::new(Self::NAME, Self::API, Self::NOTE)
    }
}

pub fn map(path: &Path) -> Result<Mmap, Fail> {
    let file = File::open(path).map_err(Fail::error)?;
    // SAFETY: the benchmark wrote this file before starting and nothing
    // modifies it while children read it.
    unsafe { Mmap::map(&file) }.map_err(Fail::error)
}

pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), Fail> {
    std::fs::write(path, bytes).map_err(Fail::error)
}

pub fn create(path: &Path) -> Result<BufWriter<File>, Fail> {
    Ok(BufWriter::with_capacity(1 << 20, File::create(path).map_err(Fail::error)?))
}

pub fn finish(mut w: BufWriter<File>) -> Result<(), Fail> {
    w.flush().map_err(Fail::error)
}

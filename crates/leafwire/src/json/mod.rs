//! JSON interchange: JSON text → Leafwire bytes (spec §11), and back.

mod read;
mod write;

use crate::builder::{Builder, DuplicateKeys};
use crate::error::Result;
use crate::format::DEFAULT_MAX_DEPTH;
use crate::read::Document;
use crate::value::Value;

pub use write::{
    table_part_to_json, to_json_node, write_json_node, write_json_node_pretty, write_json_node_pretty_with, write_json_node_with,
};

/// Options of the JSON → Leafwire conversion.
#[derive(Debug, Clone, Copy)]
pub struct JsonOptions {
    /// Deepest nesting accepted; deeper input fails with `Category::DepthLimit`.
    pub max_depth: usize,
    /// What an object with a repeated key does.
    pub duplicate_keys: DuplicateKeys,
}

impl Default for JsonOptions {
    fn default() -> Self {
        JsonOptions { max_depth: DEFAULT_MAX_DEPTH, duplicate_keys: DuplicateKeys::Error }
    }
}

/// Converts JSON text to a Leafwire document with the default options.
pub fn from_json(json: &[u8]) -> Result<Vec<u8>> {
    from_json_with(json, &JsonOptions::default())
}

/// Converts JSON text to a Leafwire document.
pub fn from_json_with(json: &[u8], options: &JsonOptions) -> Result<Vec<u8>> {
    let mut b = Builder::reused(options.max_depth);
    b.duplicate_keys = options.duplicate_keys;
    read::parse_into(json, &mut b)?;
    b.finish()?.encode()
}

/// Converts JSON text to a packed Leafwire document (spec §13): its large arrays of records
/// or numbers shredded into compressed columns.
pub fn from_json_packed(json: &[u8], options: &JsonOptions, pack: &crate::PackOptions) -> Result<Vec<u8>> {
    crate::pack(&from_json_with(json, options)?, pack)
}

/// Converts JSON text to a Leafwire document written into `writer`, the bytes of
/// `from_json_with`; returns the document's length.
///
/// Memory: the parsed tree is held, in about 20 bytes a value, but not the output; strings
/// past 16 MB in all are spilled to an anonymous temporary file (in `TMPDIR`) until written. `progress` is called with the number of input bytes parsed so far, about
/// every `progress_step` bytes (a progress bar; a reader of a mapped input may also release
/// the pages behind that point, since they are not read again unless an error is reported).
pub fn from_json_to_writer(
    json: &[u8],
    options: &JsonOptions,
    writer: &mut dyn std::io::Write,
    progress_step: usize,
    progress: &mut dyn FnMut(usize),
) -> Result<u64> {
    let mut b = Builder::new(options.max_depth);
    b.duplicate_keys = options.duplicate_keys;
    b.spill_blocks_over(crate::builder::STREAMING_SPILL_OVER);
    read::parse_with_progress(json, &mut b, &mut read::Progress::new(progress_step, progress))?;
    b.finish()?.write_to(writer)
}

/// Parses JSON text into a builder (a stream writer's messages, the layout's own tests).
pub(crate) fn read_into_builder(json: &[u8], b: &mut Builder) -> Result<()> {
    read::parse_into(json, b)
}

/// Parses JSON text into a `Value` (numeric arrays become typed arrays, as in `from_json`).
pub fn parse(json: &[u8]) -> Result<Value> {
    crate::decode(&from_json(json)?)
}

/// Writes a Leafwire document as compact JSON text.
pub fn to_json(leafwire: &[u8]) -> Result<String> {
    to_json_node(&Document::open(leafwire)?.root())
}

/// Writes a Leafwire document as compact JSON text, nesting up to `options.max_depth`.
pub fn to_json_with(leafwire: &[u8], options: &JsonOptions) -> Result<String> {
    let mut out = Vec::with_capacity(leafwire.len() * 3 / 2);
    write_json_node_with(&Document::open(leafwire)?.root(), &mut out, options.max_depth)?;
    Ok(crate::format::data::into_string(out).expect("the JSON writer writes UTF-8"))
}

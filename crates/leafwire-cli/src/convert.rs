//! `from-json`, `to-json` and `get`: moving values between JSON text and Leafwire.

use std::io::{BufWriter, Write};
use std::path::Path;

use leafwire::json::{write_json_node_pretty_with, write_json_node_with, JsonOptions};
use leafwire::{Category, Node};

use crate::failure::Failure;
use crate::files::{with_checksums, is_std, open_mapped, open_text, refuse_binary_terminal, stream_stdout, write_atomically, write_stdout};
use crate::progress::{Progress, REPORT_STEP};
use crate::pointer;

/// JSON text (a file or stdin) to a Leafwire file (or stdout). The input file is mapped
/// and given back behind the parser; the output streams from the parsed tree, so memory
/// holds the tree and the output's structure section, not the input or the whole output.
/// A file output is written to a temporary renamed on success.
pub fn from_json(input: &Path, output: &Path, options: &JsonOptions, checksums: bool) -> Result<(), Failure> {
    let text = open_text(input)?;
    let json = text.as_bytes();
    let progress = Progress::bar(json.len() as u64, "parsing");
    let mut released = 0;
    let mut on_progress = |at: usize| {
        progress.set_position(at as u64);
        // Pages behind the parser are not read again (but for an error's line number,
        // which maps them back): give them back a few megabytes at a time.
        if at - released >= RELEASE_STEP {
            released = at - RELEASE_STEP / 2;
            text.release_before(released);
        }
    };
    let mut convert = |w: &mut dyn Write| {
        with_checksums(w, checksums, output, |w| {
            let converted = leafwire::json::from_json_to_writer(json, options, w, REPORT_STEP, &mut on_progress);
            converted.map(drop).map_err(|e| match e.category() {
                Category::Io => Failure::leafwire(output, e),
                _ => Failure::json(input, e),
            })
        })
    };
    if is_std(output) {
        refuse_binary_terminal()?;
        return stream_stdout(|w| convert(w));
    }
    write_atomically(output, Some(input), |w| convert(w))
}

/// JSON text to a packed Leafwire file (spec §13). The whole value is held in memory: the
/// shredder needs every element of a group before it writes one column.
pub fn from_json_packed(input: &Path, output: &Path, options: &JsonOptions, pack: &leafwire::PackOptions, checksums: bool) -> Result<(), Failure> {
    let text = open_text(input)?;
    let doc = leafwire::json::from_json_packed(text.as_bytes(), options, pack).map_err(|e| Failure::json(input, e))?;
    write_document(&doc, output, Some(input), checksums)
}

/// Writes a whole document to `output` (`-`: stdout), atomically for a file.
pub fn write_document(doc: &[u8], output: &Path, like: Option<&Path>, checksums: bool) -> Result<(), Failure> {
    let write = |w: &mut dyn Write| with_checksums(w, checksums, output, |w| w.write_all(doc).map_err(|e| Failure::new(output, e)));
    if is_std(output) {
        refuse_binary_terminal()?;
        return stream_stdout(|w| write(w));
    }
    write_atomically(output, like, |w| write(w))
}

/// How much input is read (from-json), or output written (to-json), between giving the
/// input's mapped pages back to the system.
const RELEASE_STEP: usize = 8 << 20;

/// A Leafwire file to JSON text, streamed from the mapped file into the output. To stdout
/// (no `-o`, or `-o -`), a document that fails halfway (a NaN, a bad offset) leaves the text
/// written so far there, and the command fails; `-o FILE` writes a temporary renamed on
/// success.
pub fn to_json(input: &Path, output: Option<&Path>, pretty: bool) -> Result<(), Failure> {
    let file = open_mapped(input)?;
    let doc = file.document().map_err(|e| Failure::leafwire(input, e))?;
    let root = doc.root();
    let progress = Progress::counter(file.as_bytes().len() as u64, "writing");
    // The walk reads each page of the document about once: give them back now and then.
    let mut released = 0;
    let mut release = |written: u64| {
        if written - released >= RELEASE_STEP as u64 {
            file.release();
            released = written;
        }
    };
    // The JSON writer makes many tiny writes: buffer them before the counting and the
    // output's own layers, so that each costs a copy, not a chain of calls.
    let mut emit = |w: &mut dyn Write, output: &Path| {
        let mut buffered = BufWriter::with_capacity(1 << 16, progress.writer_then(w, &mut release));
        write_json(&root, &mut buffered, pretty, input, output)?;
        buffered.flush().map_err(|e| Failure::new(output, e))
    };
    match output.filter(|o| !is_std(o)) {
        Some(output) => write_atomically(output, Some(input), |w| emit(w, output)),
        None => stream_stdout(|w| emit(w, Path::new("<stdout>"))),
    }
}

/// The value at a JSON Pointer, as JSON. Only the blocks on the pointer's path, and the
/// value's own subtree, are read.
pub fn get(input: &Path, pointer: &str) -> Result<(), Failure> {
    let file = open_mapped(input)?;
    let doc = file.document().map_err(|e| Failure::leafwire(input, e))?;
    if leafwire::is_packed_document(file.as_bytes()) {
        // Values inside packed arrays have no nodes: the lookup decodes what it needs.
        let value = doc.pointer_value(pointer).map_err(|e| Failure::leafwire(input, e))?;
        let bytes = leafwire::encode_with(&value, crate::READ_DEPTH).map_err(|e| Failure::leafwire(input, e))?;
        let inner = leafwire::Document::open(&bytes).map_err(|e| Failure::leafwire(input, e))?;
        let mut text = Vec::new();
        write_json(&inner.root(), &mut text, false, input, Path::new("<stdout>"))?;
        return write_stdout(&text);
    }
    let node = match doc.pointer(pointer) {
        Ok(node) => node,
        Err(_) => {
            pointer::tokens(input, pointer)?; // a malformed pointer, in this command's words
            // A table's columns and cells have no nodes: they are read from the column in
            // place, and written as the table's JSON writes them (dates as text).
            if let Some(part) = doc.pointer_in_table(pointer).map_err(|e| Failure::leafwire(input, e))? {
                let mut text =
                    leafwire::json::table_part_to_json(&part.column, part.row).map_err(|e| Failure::leafwire(input, e))?;
                text.push('\n');
                return write_stdout(text.as_bytes());
            }
            // Names the first token that is missing.
            pointer::resolve(&doc, input, pointer)?
        }
    };
    let mut text = Vec::new();
    write_json(&node, &mut text, false, input, Path::new("<stdout>"))?;
    write_stdout(&text)
}

/// Writes `node` as JSON plus a final newline. Errors in the document name `input`;
/// errors while writing name `output`.
fn write_json<W: Write>(node: &Node<'_>, writer: &mut W, pretty: bool, input: &Path, output: &Path) -> Result<(), Failure> {
    // Whatever depth `from-json` may write, the reading commands read back (issue #10).
    let depth = crate::READ_DEPTH;
    let written = if pretty { write_json_node_pretty_with(node, &mut *writer, depth) } else { write_json_node_with(node, &mut *writer, depth) };
    written.map_err(|e| match e.category() {
        Category::Io => Failure::leafwire(output, e),
        _ => Failure::leafwire(input, e),
    })?;
    writer.write_all(b"\n").map_err(|e| Failure::new(output, e))
}

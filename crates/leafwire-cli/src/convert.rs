//! `from-json`, `to-json` and `get`: moving values between JSON text and Leafwire.

use std::io::Write;
use std::path::Path;

use leafwire::json::{write_json_node, write_json_node_pretty, JsonOptions};
use leafwire::{Category, Node};

use crate::failure::Failure;
use crate::files::{is_std, open_mapped, read_input, write_atomically, write_output, write_stdout};
use crate::pointer;

/// JSON text (a file or stdin) to a Leafwire file (or stdout). The whole conversion happens before
/// the output file is created.
pub fn from_json(input: &Path, output: &Path, options: &JsonOptions) -> Result<(), Failure> {
    let json = read_input(input)?;
    let bytes = leafwire::json::from_json_with(&json, options).map_err(|e| Failure::json(input, e))?;
    write_output(output, Some(input), &bytes, true)
}

/// A Leafwire file to JSON text, streamed from the mapped file. With no output file (or
/// `-o -`), the text is collected first, so a document that fails halfway (a NaN, a bad offset)
/// prints nothing.
pub fn to_json(input: &Path, output: Option<&Path>, pretty: bool) -> Result<(), Failure> {
    let file = open_mapped(input)?;
    let doc = file.document().map_err(|e| Failure::leafwire(input, e))?;
    let root = doc.root();
    match output.filter(|o| !is_std(o)) {
        Some(output) => write_atomically(output, Some(input), |w| write_json(&root, w, pretty, input, output)),
        None => {
            let mut text = Vec::new();
            write_json(&root, &mut text, pretty, input, Path::new("<stdout>"))?;
            write_stdout(&text)
        }
    }
}

/// The value at a JSON Pointer, as JSON. Only the blocks on the pointer's path, and the
/// value's own subtree, are read.
pub fn get(input: &Path, pointer: &str) -> Result<(), Failure> {
    let file = open_mapped(input)?;
    let doc = file.document().map_err(|e| Failure::leafwire(input, e))?;
    let node = pointer::resolve(&doc, input, pointer)?;
    let mut text = Vec::new();
    write_json(&node, &mut text, false, input, Path::new("<stdout>"))?;
    write_stdout(&text)
}

/// Writes `node` as JSON plus a final newline. Errors in the document name `input`;
/// errors while writing name `output`.
fn write_json<W: Write>(node: &Node<'_>, writer: &mut W, pretty: bool, input: &Path, output: &Path) -> Result<(), Failure> {
    let written = if pretty { write_json_node_pretty(node, &mut *writer) } else { write_json_node(node, &mut *writer) };
    written.map_err(|e| match e.category() {
        Category::Io => Failure::leafwire(output, e),
        _ => Failure::leafwire(input, e),
    })?;
    writer.write_all(b"\n").map_err(|e| Failure::new(output, e))
}

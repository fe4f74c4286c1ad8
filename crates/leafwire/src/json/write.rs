//! Leafwire → JSON text, through serde_json's writer (shortest round-trip floats).

use std::io::Write;

use crate::error::Result;
use crate::node_serde::Owned;
use crate::read::Node;

/// Writes the value at `node` as compact JSON text into a string.
pub fn to_json_node(node: &Node<'_>) -> Result<String> {
    let mut out = Vec::with_capacity(node.buf().len() + node.buf().len() / 2);
    write_json_node(node, &mut out)?;
    // serde_json writes only valid UTF-8.
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// Writes the value at `node` as compact JSON text into `writer`.
pub fn write_json_node<W: Write>(node: &Node<'_>, writer: W) -> Result<()> {
    write_json_node_with(node, writer, crate::DEFAULT_MAX_DEPTH)
}

/// Writes the value at `node` as compact JSON text, accepting nesting up to `max_depth`.
pub fn write_json_node_with<W: Write>(node: &Node<'_>, writer: W, max_depth: usize) -> Result<()> {
    let mut ser = serde_json::Serializer::new(writer);
    Owned::new(*node, true, max_depth).serialize_into(&mut ser)
}

/// Writes the value at `node` as JSON text indented by two spaces into `writer`.
pub fn write_json_node_pretty<W: Write>(node: &Node<'_>, writer: W) -> Result<()> {
    write_json_node_pretty_with(node, writer, crate::DEFAULT_MAX_DEPTH)
}

/// [`write_json_node_pretty`], accepting nesting up to `max_depth`.
pub fn write_json_node_pretty_with<W: Write>(node: &Node<'_>, writer: W, max_depth: usize) -> Result<()> {
    let mut ser = serde_json::Serializer::pretty(writer);
    Owned::new(*node, true, max_depth).serialize_into(&mut ser)
}

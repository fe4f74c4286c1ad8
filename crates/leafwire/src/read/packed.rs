//! Reading packed arrays (spec §13) through a document: their length, one element (which
//! decodes only the stripe that holds it), and pointers that go inside them. Their values
//! are decoded, not in the document's bytes, so they come out owned: a [`Node`] cannot
//! stand for them.

use super::pointer::{walk, Token};
use super::{Document, Node, Pointer};
use crate::error::{Category, Error, Result};
use crate::format::tag;
use crate::packed;
use crate::value::Value;

impl<'a> Node<'a> {
    /// Whether this is a packed array (it reads as an array; its elements are decoded).
    pub fn is_packed(&self) -> bool {
        self.tag == tag::PACKED
    }

    /// Element `i` of a packed array, decoded (with the rest of its stripe, §13.4).
    pub fn packed_element(&self, i: usize) -> Result<Value> {
        if self.tag != tag::PACKED {
            return Err(Error::wrong_type("a packed array", self.kind()));
        }
        let group = packed::open_block(self.buf, self.payload)?;
        if i >= group.len() {
            return Err(super::lookup::out_of_range(i, group.len(), self.payload));
        }
        let element = group.element(i, &mut packed::decode_budget(self.buf.len()))?;
        packed::as_decoded(element, crate::DEFAULT_MAX_DEPTH)
    }

    /// The columns of a packed array with their sizes: (path below the elements, column).
    pub fn packed_columns(&self) -> Result<Vec<(Vec<packed::PathStep>, packed::ColumnSize)>> {
        if self.tag != tag::PACKED {
            return Err(Error::wrong_type("a packed array", self.kind()));
        }
        let group = packed::open_block(self.buf, self.payload)?;
        Ok(group.column_sizes()?.into_iter().map(|c| (group.path(c.node), c)).collect())
    }

    pub(super) fn packed_len(&self) -> Result<usize> {
        Ok(packed::open_block(self.buf, self.payload)?.len())
    }
}

impl Document<'_> {
    /// The value at a JSON Pointer, decoded: the lookup that also reaches inside packed
    /// arrays, decoding only the stripe of the element on the path. In documents without
    /// them, [`Document::pointer`] is the cheaper call.
    pub fn pointer_value(&self, pointer: &str) -> Result<Value> {
        let prepared = Pointer::parse(pointer)?;
        let mut node = self.root();
        let mut steps = prepared.steps().iter();
        while let Some(step) = steps.next() {
            if node.is_packed() {
                let i = step.index().ok_or_else(|| not_an_index(step.bytes()))?;
                let mut value = node.packed_element(i)?;
                for step in steps {
                    value = step_into(value, step.bytes())?;
                }
                return Ok(value);
            }
            node = walk(node, std::iter::once(step)).map_err(|e| e.with_path(pointer))?;
        }
        node.to_value()
    }
}

/// The child of a decoded value under one pointer token.
fn step_into(value: Value, token: &[u8]) -> Result<Value> {
    let text = String::from_utf8_lossy(token);
    let missing = || Error::not_found(format!("no \"{text}\" in the decoded value"));
    match value {
        Value::Object(mut m) => m.swap_remove(text.as_ref()).ok_or_else(missing),
        Value::IntMap(mut m) => text.parse::<i64>().ok().and_then(|k| m.swap_remove(&k)).ok_or_else(missing),
        Value::Array(items) => {
            let i = super::array_index(token).ok_or_else(|| not_an_index(token))?;
            items.into_iter().nth(i).ok_or_else(missing)
        }
        Value::Typed(t) => step_into(t.to_nested(), token),
        other => Err(Error::not_found(format!("cannot step into {} with \"{text}\"", other.kind()))),
    }
}

fn not_an_index(token: &[u8]) -> Error {
    Error::not_found(format!("\"{}\" is not an array index", String::from_utf8_lossy(token)))
}

/// The error of a lazy step into a packed array.
#[cold]
pub(super) fn inside_packed(offset: u64) -> Error {
    Error::new(
        Category::Unsupported,
        "the value lies inside a packed array (spec §13), which has no nodes: read it with `Document::pointer_value` or `Node::packed_element`",
    )
    .at(offset)
}

//! Reading packed arrays and objects (spec §13) through a document: their length, one
//! element or entry (which decodes only the stripe that holds it), and pointers that go
//! inside them. Their values are decoded, not in the document's bytes, so they come out
//! owned: a [`Node`] cannot stand for them.

use super::pointer::{not_an_index, walk, Token};
use super::table_pointer::table_part;
use super::{Document, Node, Pointer};
use crate::error::{Category, Error, Result};
use crate::format::tag;
use crate::packed;
use crate::value::{Kind, Value};

impl<'a> Node<'a> {
    /// Whether this is a packed array or object (it reads as an array or an object; its
    /// values are decoded).
    pub fn is_packed(&self) -> bool {
        tag::is_packed(self.tag)
    }

    /// The keys of a packed object, in order, decoding only its key column (§13.7).
    pub fn packed_keys(&self) -> Result<Vec<String>> {
        if self.tag != tag::PACKED_OBJECT {
            return Err(Error::wrong_type("a packed object", self.kind()));
        }
        packed::entries::keys(self.buf, self.payload)
    }

    /// The value under `key` in a packed object, decoded (with the rest of its stripe):
    /// the key column is searched, then the entry's stripe read.
    pub fn packed_entry(&self, key: &str) -> Result<Value> {
        if self.tag != tag::PACKED_OBJECT {
            return Err(Error::wrong_type("a packed object", self.kind()));
        }
        match packed::entries::entry(self.buf, self.payload, key)? {
            Some(value) => packed::as_decoded(value, crate::DEFAULT_MAX_DEPTH, self.payload),
            None => Err(Error::not_found(format!("no key {key:?} in the packed object")).at(self.payload)),
        }
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
        packed::as_decoded(element, crate::DEFAULT_MAX_DEPTH, self.payload)
    }

    /// The value under the object keys `keys` in every element of a packed array (`Null`
    /// where an element lacks them), decoding only the columns below those keys: how to
    /// read one field of all records without touching the rest.
    pub fn packed_select(&self, keys: &[&str]) -> Result<Vec<Value>> {
        if self.tag != tag::PACKED {
            return Err(Error::wrong_type("a packed array", self.kind()));
        }
        let group = packed::open_block(self.buf, self.payload)?;
        let (values, used) = group.select(keys, &mut packed::decode_budget(self.buf.len()))?;
        values
            .into_iter()
            .map(|v| {
                let mut v = packed::as_decoded(v, crate::DEFAULT_MAX_DEPTH, self.payload)?;
                for key in &keys[used..] {
                    v = match v {
                        Value::Object(mut m) => m.swap_remove(*key).unwrap_or(Value::Null),
                        _ => Value::Null,
                    };
                }
                Ok(v)
            })
            .collect()
    }

    /// As [`Node::packed_select`], each element's value deserialized as `T` straight from
    /// the columns (no `Value` objects built): the selective load into a struct, as
    /// Tree-Buf's schema without the other fields. Where an element lacks the keys, `T` is
    /// read from `Null` (an `Option<T>` gives `None`).
    pub fn packed_select_as<T: serde::de::DeserializeOwned>(&self, keys: &[&str]) -> Result<Vec<T>> {
        if self.tag != tag::PACKED {
            return Err(Error::wrong_type("a packed array", self.kind()));
        }
        packed::de::select_packed(self.buf, self.payload, keys)
    }

    /// The columns of a packed array or object with their sizes: (path below the elements,
    /// column). A packed object's elements are its `[key, value]` entries (§13.7).
    pub fn packed_columns(&self) -> Result<Vec<(Vec<packed::PathStep>, packed::ColumnSize)>> {
        if !self.is_packed() {
            return Err(Error::wrong_type("a packed array or object", self.kind()));
        }
        if self.tag == tag::PACKED_OBJECT {
            let (group, _) = packed::entries::open_object(self.buf, self.payload)?;
            let columns = group.column_sizes()?.into_iter();
            return Ok(columns.map(|c| (packed::entries::path(&group, c.node), c)).collect());
        }
        let group = packed::open_block(self.buf, self.payload)?;
        Ok(group.column_sizes()?.into_iter().map(|c| (group.path(c.node), c)).collect())
    }

    /// Element `i`'s value under the leading object keys of `tokens`, decoding only the
    /// columns on that path in its stripe; with how many tokens were followed.
    fn packed_element_below(&self, i: usize, tokens: &[&[u8]]) -> Result<(Value, usize)> {
        let group = packed::open_block(self.buf, self.payload)?;
        if i >= group.len() {
            return Err(super::lookup::out_of_range(i, group.len(), self.payload));
        }
        let keys: Vec<&str> = tokens.iter().map_while(|t| std::str::from_utf8(t).ok()).collect();
        let (value, used) = group.element_select(i, &keys, &mut packed::decode_budget(self.buf.len()))?;
        Ok((packed::as_decoded(value, crate::DEFAULT_MAX_DEPTH, self.payload)?, used))
    }

    pub(super) fn packed_len(&self) -> Result<usize> {
        if self.tag == tag::PACKED_OBJECT {
            return packed::entries::entry_count(self.buf, self.payload);
        }
        Ok(packed::open_block(self.buf, self.payload)?.len())
    }
}

impl Document<'_> {
    /// The value at a JSON Pointer, decoded: the lookup that also reaches inside packed
    /// arrays, decoding only the stripe of the element on the path, and inside tables
    /// (`/table/column` is the column's cells, `/table/column/7` one cell, read in place;
    /// spec §15.2). In documents without them, [`Document::pointer`] is the cheaper call.
    pub fn pointer_value(&self, pointer: &str) -> Result<Value> {
        let prepared = Pointer::parse(pointer)?;
        let mut node = self.root();
        let mut steps = prepared.steps().iter();
        while let Some(step) = steps.next() {
            if node.tag == tag::PACKED_OBJECT {
                let key = String::from_utf8_lossy(step.key());
                let mut value = node.packed_entry(&key).map_err(|e| e.with_path(pointer))?;
                for step in steps {
                    value = step_into(value, step.key())?;
                }
                return Ok(value);
            }
            if node.is_packed() {
                let i = step.index().ok_or_else(|| not_an_index(step.bytes()))?;
                let rest: Vec<&[u8]> = steps.map(|s| s.key()).collect();
                let mut value = node.packed_element_below(i, &rest)?;
                for token in &rest[value.1..] {
                    value.0 = step_into(value.0, token)?;
                }
                return Ok(value.0);
            }
            if node.kind() == Kind::Table {
                let part = table_part(node.table()?, step, &mut steps).map_err(|e| e.with_path(pointer))?;
                return match part {
                    (column, None) => column.to_value(),
                    (column, Some(row)) => column.cell(row),
                };
            }
            node = walk(&node, std::iter::once(step)).map_err(|e| e.with_path(pointer))?;
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

/// The error of a lazy step into a packed array.
#[cold]
pub(super) fn inside_packed(offset: u64) -> Error {
    Error::new(
        Category::Unsupported,
        "the value lies inside a packed array or object (spec §13), which has no nodes: read it with `Document::pointer_value`, `Node::packed_element` or `Node::packed_entry`",
    )
    .at(offset)
}

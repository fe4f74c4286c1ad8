//! Full decoding: a `Node` and everything under it into an owned `Value`.

use crate::error::{Error, Result};
use crate::format::budget::Budget;
use crate::format::{tag, DEFAULT_MAX_DEPTH};
use crate::read::Node;
use crate::value::{IntMap, Map, Value};

impl Node<'_> {
    /// Decodes this value and everything under it (nesting up to `DEFAULT_MAX_DEPTH`).
    pub fn to_value(&self) -> Result<Value> {
        self.to_value_with(DEFAULT_MAX_DEPTH)
    }

    /// Decodes this value and everything under it, accepting nesting up to `max_depth`.
    pub fn to_value_with(&self, max_depth: usize) -> Result<Value> {
        node_to_value(self, max_depth, max_depth, &Budget::for_document(self.buf().len()))
    }
}

/// Counts come from the document: reserve at most this much up front, grow past it.
const PREALLOCATE_LIMIT: usize = 1 << 16;

pub(crate) fn node_to_value(node: &Node<'_>, depth_left: usize, limit: usize, budget: &Budget) -> Result<Value> {
    budget.charge(node.visit_cost(), node.offset())?;
    Ok(match node.kind() {
        crate::Kind::Null => Value::Null,
        crate::Kind::Bool => Value::Bool(node.as_bool()?),
        crate::Kind::Int => Value::Int(node.as_i64()?),
        crate::Kind::UInt => Value::from_u64(node.as_u64()?),
        crate::Kind::F64 => Value::F64(node.as_f64()?),
        crate::Kind::F32 => Value::F32(node.as_f32()?),
        crate::Kind::String => Value::String(node.as_str()?.to_owned()),
        crate::Kind::Bytes => Value::Bytes(node.as_bytes()?.to_vec()),
        crate::Kind::BigNum => Value::BigNum(node.as_bignum()?.to_owned()),
        crate::Kind::TypedArray => Value::Typed(node.typed()?.to_typed_array()),
        kind => {
            let depth_left = depth_left.checked_sub(1).ok_or_else(|| Error::depth_limit(limit).at(node.offset()))?;
            let c = node.container()?;
            match kind {
                crate::Kind::Array => {
                    let mut out = Vec::with_capacity(c.count.min(PREALLOCATE_LIMIT));
                    for child in node.iter()? {
                        out.push(node_to_value(&child?, depth_left, limit, budget)?);
                    }
                    Value::Array(out)
                }
                crate::Kind::Object => {
                    let mut map = Map::with_capacity_and_hasher(c.count.min(PREALLOCATE_LIMIT), Default::default());
                    for entry in node.entries()? {
                        let (key, child) = entry?;
                        if map.insert(key.to_owned(), node_to_value(&child, depth_left, limit, budget)?).is_some() {
                            return Err(Error::malformed(node.offset(), format!("duplicate key \"{key}\" in object")));
                        }
                    }
                    Value::Object(map)
                }
                _ => {
                    debug_assert_eq!(c.tag, tag::INTMAP);
                    let mut map = IntMap::with_capacity_and_hasher(c.count.min(PREALLOCATE_LIMIT), Default::default());
                    for entry in node.int_entries()? {
                        let (key, child) = entry?;
                        if map.insert(key, node_to_value(&child, depth_left, limit, budget)?).is_some() {
                            return Err(Error::malformed(node.offset(), format!("duplicate key {key} in intmap")));
                        }
                    }
                    Value::IntMap(map)
                }
            }
        }
    })
}

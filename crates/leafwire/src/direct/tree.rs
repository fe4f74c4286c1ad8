//! A plan (`Levels`) read back as a [`Value`] instead of being laid out: what decoding
//! the planned document would give, without writing or reading it. `to_value`,
//! `to_vec_packed` and Python's `dumps(packed=True)` take their input this way; before,
//! they encoded a document and decoded it again.
//!
//! Each level's containers are built from the deepest level up, so a container's child
//! containers are finished values when it is built. The values are those `decode` makes
//! of the same slots: a `uint` that fits i64 is an `Int`, an integer mask with no integer
//! in it is none.

use super::{Child, Keys, Levels, Node, PlanSink, Source, TypedBlock};
use crate::error::{Category, Error, Result};
use crate::format::data::utf8;
use crate::format::tag;
use crate::value::{typed_data_from_le, IntMap, Map, TypedArray, Value};

/// A [`PlanSink`] that keeps the planned value.
#[derive(Default)]
pub(crate) struct ValueSink {
    pub value: Option<Value>,
}

impl PlanSink for ValueSink {
    fn planned<S: Source>(&mut self, levels: &mut Levels, keys: Keys<'_>, root: Child, source: &S) -> Result<()> {
        self.value = Some(plan_to_value(levels, keys, root, source)?);
        Ok(())
    }
}

/// The value `root` (with the containers `levels` plans) stands for: what decoding the
/// document the plan lays out would give. The plan need not be placed (`Levels::finish`).
pub fn plan_to_value(levels: &Levels, keys: Keys<'_>, root: Child, source: &impl Source) -> Result<Value> {
    let mut below: Vec<Option<Value>> = Vec::new();
    for d in (0..levels.depth).rev() {
        let (level, kids) = (&levels.levels[d], &levels.kids[d]);
        let mut built = Vec::with_capacity(level.len());
        let mut first = 0;
        for node in level {
            let children = &kids[first..first + node.len as usize];
            first += node.len as usize;
            built.push(Some(container(node, children, keys, source, &mut below)?));
        }
        below = built;
    }
    slot_value(&root, source, &mut below)
}

/// The container `node` with `children`, whose own child containers are in `below`.
fn container(node: &Node, children: &[Child], keys: Keys<'_>, source: &impl Source, below: &mut [Option<Value>]) -> Result<Value> {
    Ok(match node.tag {
        tag::ARRAY => Value::Array(children.iter().map(|ch| slot_value(ch, source, below)).collect::<Result<_>>()?),
        // A plan's containers have distinct keys, as the document it would write must.
        tag::OBJECT => {
            let mut map = Map::with_capacity(children.len());
            for ch in children {
                let key = text(keys.texts[ch.key as usize])?;
                map.push_distinct(key, slot_value(ch, source, below)?);
            }
            Value::Object(map)
        }
        _ => {
            let mut map = IntMap::with_capacity(children.len());
            for ch in children {
                map.push_distinct(ch.key as i64, slot_value(ch, source, below)?);
            }
            Value::IntMap(map)
        }
    })
}

/// The value of one slot; a container's is taken from `below` (each is the child of one
/// parent).
#[inline]
fn slot_value(child: &Child, source: &impl Source, below: &mut [Option<Value>]) -> Result<Value> {
    Ok(match child.tag {
        tag::NULL => Value::Null,
        tag::FALSE => Value::Bool(false),
        tag::TRUE => Value::Bool(true),
        tag::INT => Value::Int(child.value as i64),
        tag::UINT if child.value <= i64::MAX as u64 => Value::Int(child.value as i64),
        tag::UINT => Value::UInt(child.value),
        tag::F64 => Value::F64(f64::from_bits(child.value)),
        tag::F32 => Value::F32(f32::from_bits(child.value as u32)),
        tag::STRING => Value::String(text(source.content(child))?),
        tag::BYTES => Value::Bytes(source.content(child).to_vec()),
        tag::BIGNUM => Value::BigNum(text(source.content(child))?),
        tag::TYPED => Value::Typed(typed_array(source.typed(child))),
        tag::TABLE => Value::Table(crate::table::Table::from_body(source.table(child))?),
        _ => below[child.value as usize].take().expect("a planned container is the child of one parent"),
    })
}

/// Text the planner took from a `&str` (so UTF-8; checked all the same, as every reader
/// checks it).
fn text(bytes: &[u8]) -> Result<String> {
    match utf8(bytes) {
        Some(text) => Ok(text.to_owned()),
        None => Err(Error::new(Category::Malformed, "planned text is not UTF-8")),
    }
}

fn typed_array(block: TypedBlock<'_>) -> TypedArray {
    let shape = block.shape.iter().map(|&n| n as usize).collect();
    let data = typed_data_from_le(block.element, &block.data);
    let mask = block.mask.map(|m| m.into_owned()).filter(|m| m.iter().any(|&b| b));
    TypedArray::from_parts(shape, data, mask)
}

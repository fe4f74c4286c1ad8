//! Document → canonical document, node by node straight into the builder: the bytes of
//! `encode(&decode(bytes)?)` without the `Value` tree in between, so compacting a big file
//! holds its parsed structure once instead of a `Value` and a builder and the output.
//!
//! Each kind goes into the builder so that the bytes are those `encode` writes for the
//! `Value` that `decode` makes of it; `tests/recode.rs` checks that they are.

use std::io::Write;

use crate::builder::{Builder, FrameKind, Item, NumTy};
use crate::error::{Error, Result};
use crate::format::budget::Budget;
use crate::format::ElementType;
use crate::read::{Document, Node};
use crate::{Kind, Value};

/// Rewrites `doc` canonically into `writer` (nesting up to `max_depth`); returns the new
/// document's length. Like `decode`, the walk is charged against the document's work
/// budget, so a crafted file whose slots share subtrees cannot make it run without end.
/// Check untrusted input with `validate` first, as for `decode`. Memory: as for
/// `json::from_json_to_writer` (strings spill to a temporary file).
///
/// `progress` is called with the number of values read so far, every `progress_step`
/// values: a progress display, or a reader of a mapped file that gives its pages back
/// now and then (`MappedFile::release`), since a walk reads each live page about once.
pub fn recode_to_writer(doc: &Document<'_>, max_depth: usize, writer: &mut dyn Write, progress_step: u64, progress: &mut dyn FnMut(u64)) -> Result<u64> {
    let mut b = Builder::new(max_depth);
    b.spill_blocks_over(crate::builder::STREAMING_SPILL_OVER);
    let budget = Budget::for_document(doc.as_bytes().len());
    let mut visits = Visits { count: 0, next: progress_step.max(1), step: progress_step.max(1), report: progress };
    push_node(&mut b, 0, &doc.root(), &budget, &mut visits)?;
    b.finish()?.write_to(writer)
}

/// Counts the values read, for the progress callback.
struct Visits<'p> {
    count: u64,
    next: u64,
    step: u64,
    report: &'p mut dyn FnMut(u64),
}

impl Visits<'_> {
    #[inline]
    fn one(&mut self) {
        self.count += 1;
        if self.count >= self.next {
            (self.report)(self.count);
            self.next = self.count.saturating_add(self.step);
        }
    }
}

fn push_node(b: &mut Builder, key: u64, node: &Node<'_>, budget: &Budget, visits: &mut Visits<'_>) -> Result<()> {
    budget.charge(node.visit_cost(), node.offset())?;
    visits.one();
    let at = |e: Error| if e.position().is_some() { e } else { e.at(node.offset()) };
    match node.kind() {
        Kind::Null => b.push(key, Item::Null),
        Kind::Bool => b.push(key, Item::Bool(node.as_bool()?)),
        Kind::Int => b.push(key, int(node.as_i64()?)),
        // As `Value::from_u64`: a uint small enough is an int.
        Kind::UInt => match node.as_u64()? {
            v if v <= i64::MAX as u64 => b.push(key, int(v as i64)),
            v => b.push(key, Item::UInt(v)),
        },
        Kind::F64 => b.push(key, Item::Num(NumTy::Exact(ElementType::F64), node.as_f64()?.to_bits())),
        Kind::F32 => b.push(key, Item::Num(NumTy::Exact(ElementType::F32), node.as_f32()?.to_bits() as u64)),
        Kind::String => b.push_str(key, node.as_str()?.as_bytes()),
        Kind::Bytes => b.push_bytes(key, node.as_bytes()?),
        Kind::BigNum => b.push_bignum(key, node.as_bignum()?.as_bytes()),
        Kind::TypedArray => {
            let t = node.typed()?;
            let count = t.element_count();
            // A mask with no integer in it is no mask (as `TypedArray::from_parts` makes it).
            let mask: Option<Vec<bool>> = Some((0..count).map(|i| t.is_masked_int(i)).collect::<Vec<bool>>()).filter(|m| m.iter().any(|&x| x));
            let shape = t.shape().iter().map(|&d| d as u64).collect();
            b.push_typed(key, t.element_type(), shape, t.bytes(), mask.as_deref())
        }
        Kind::Table => b.push_table(key, node.table()?.to_table()?),
        // A packed array or object comes out ordinary: decoded, laid out as a container,
        // and recoded like any other (so `compact --unpacked` is this walk).
        Kind::Array | Kind::Object if node.is_packed() => {
            let value = crate::packed::decode_packed(node.buf(), node.tag(), node.offset()).map_err(at)?;
            let doc = encode_as_json_would(&value, b.max_depth)?;
            let root = Document::open(&doc)?.root();
            push_node(b, key, &root, &Budget::for_document(doc.len()), visits)
        }
        Kind::Array => {
            b.open(FrameKind::Array).map_err(at)?;
            for child in node.iter()? {
                push_node(b, 0, &child?, budget, visits)?;
            }
            // As for a `Value`: a generic array stays generic.
            b.close_generic(key)
        }
        Kind::Object => {
            b.open(FrameKind::Object).map_err(at)?;
            for entry in node.entries()? {
                let (name, child) = entry?;
                let id = b.key_id(name);
                push_node(b, id, &child, budget, visits)?;
            }
            b.close(key).map_err(at)
        }
        Kind::IntMap => {
            b.open(FrameKind::IntMap).map_err(at)?;
            for entry in node.int_entries()? {
                let (k, child) = entry?;
                push_node(b, k as u64, &child, budget, visits)?;
            }
            b.close(key).map_err(at)
        }
    }
}

/// Encodes `value` with its numbers typed as JSON text would type them (spec §11): arrays
/// of integers narrow to the smallest integer type, arrays of floats become f64 typed
/// arrays, equal rows merge. A packed array's elements decode this way (spec §13), so that
/// packing and unpacking a document converted from JSON gives back the same bytes.
pub(crate) fn encode_as_json_would(value: &Value, max_depth: usize) -> Result<Vec<u8>> {
    let mut b = Builder::new(max_depth);
    push_json_like(&mut b, 0, value)?;
    b.finish()?.encode()
}

fn push_json_like(b: &mut Builder, key: u64, v: &Value) -> Result<()> {
    match v {
        Value::Null => b.push(key, Item::Null),
        Value::Bool(x) => b.push(key, Item::Bool(*x)),
        Value::Int(x) => b.push(key, Item::Num(NumTy::JsonInt, *x as u64)),
        Value::UInt(x) if *x <= i64::MAX as u64 => b.push(key, Item::Num(NumTy::JsonInt, *x)),
        Value::UInt(x) => b.push(key, Item::UInt(*x)),
        Value::F64(x) => b.push(key, Item::Num(NumTy::JsonFloat, x.to_bits())),
        Value::F32(x) => b.push(key, Item::Num(NumTy::Exact(ElementType::F32), x.to_bits() as u64)),
        Value::String(s) => b.push_str(key, s.as_bytes()),
        Value::Bytes(x) => b.push_bytes(key, x),
        Value::BigNum(d) => b.push_bignum(key, d.as_bytes()),
        Value::Table(t) => b.push_table(key, t.clone()),
        Value::Typed(t) => {
            let shape = t.shape().iter().map(|&d| d as u64).collect();
            b.push_typed(key, t.element_type(), shape, &t.data().le_bytes(), t.int_mask())
        }
        Value::Array(items) => {
            b.open(FrameKind::Array)?;
            items.iter().try_for_each(|item| push_json_like(b, 0, item))?;
            b.close(key)
        }
        Value::Object(map) => {
            b.open(FrameKind::Object)?;
            for (k, item) in map {
                let id = b.key_id(k);
                push_json_like(b, id, item)?;
            }
            b.close(key)
        }
        Value::IntMap(map) => {
            b.open(FrameKind::IntMap)?;
            map.iter().try_for_each(|(&k, item)| push_json_like(b, k as u64, item))?;
            b.close(key)
        }
    }
}

fn int(v: i64) -> Item {
    Item::Num(NumTy::Exact(ElementType::I64), v as u64)
}

//! Arbitrary bytes through the raw access API (`leafwire::raw`): every value reachable
//! from the root is visited through `RawDocument::container`, `RawContainer::child`/`key`,
//! `RawDocument::key`, `data_block` and `child_node`, with a work budget. It must never
//! panic; on a document `validate` accepts, no raw access may fail and the value built
//! from raw access must equal `decode`'s.

#![no_main]

use leafwire::raw::{tag, RawContainer, RawDocument};
use leafwire::{IntMap, Map, Node, Value};
use libfuzzer_sys::fuzz_target;

mod common;
use common::same;

/// Work units (values, bytes of data blocks) one walk may spend.
const BUDGET: usize = 50_000;
const MAX_DEPTH: usize = 128;

fuzz_target!(|data: &[u8]| common::guard(|| check(data)));

fn check(data: &[u8]) {
    let Ok(doc) = RawDocument::open(data) else { return };
    let _ = (doc.bytes().len(), doc.key_count());
    // Key ids in and out of range (also without a dictionary:
    // regressions/raw_walk/dict-pos-underflow.lw).
    for id in [0, 1, doc.key_count() as u64, u64::MAX] {
        let _ = doc.key(id);
    }
    // Probes at offsets the input names: its last 8 bytes, read as an offset.
    if data.len() >= 8 {
        let offset = u64::from_le_bytes(data[data.len() - 8..].try_into().unwrap()) % (data.len() as u64 + 16);
        for t in [tag::ARRAY, tag::OBJECT, tag::INTMAP] {
            if let Ok(c) = doc.container(t, offset) {
                touch(&c);
            }
        }
        let _ = doc.data_block(offset);
    }

    let validated = leafwire::validate(data).is_ok();
    let mut walk = Walk { doc, budget: BUDGET, failed: None };
    let (t, payload) = doc.root();
    let raw = walk.value(t, payload, None, 0);
    if validated {
        if let Some(e) = &walk.failed {
            panic!("raw access failed on a validated document: {e}");
        }
        if walk.budget > 0 {
            let raw = raw.expect("raw walk of a validated document");
            let decoded = leafwire::decode(data).expect("decode a validated document");
            assert!(same(&raw, &decoded), "raw walk and decode disagree\n  raw     {raw:?}\n  decoded {decoded:?}");
        }
    }
}

/// Reads every field of a container without interpreting it.
fn touch(c: &RawContainer<'_>) {
    let _ = (c.len(), c.is_empty(), c.tags(), c.slots(), c.keys(), c.slot_width(), c.key_width());
    for i in 0..c.len().min(64) {
        // `key` on an array (key width 0) too: regressions/raw_walk/array-key.lw.
        let _ = (c.child(i), c.key(i));
    }
}

struct Walk<'a> {
    doc: RawDocument<'a>,
    budget: usize,
    /// The first raw-access error (a validated document must have none).
    failed: Option<String>,
}

impl<'a> Walk<'a> {
    fn spend(&mut self, units: usize) -> bool {
        self.budget = self.budget.saturating_sub(units.max(1));
        self.budget > 0
    }

    fn fail(&mut self, what: String) -> Option<Value> {
        self.failed.get_or_insert(what);
        None
    }

    /// Child `i` of `parent` (the root if `None`) through the node API, for the blocks the
    /// raw API does not read (typed arrays, packed arrays and objects, tables).
    fn node_at(&self, parent: Option<(&RawContainer<'a>, usize)>) -> leafwire::Result<Node<'a>> {
        match parent {
            None => Ok(self.doc.root_node()),
            Some((c, i)) => self.doc.child_node(c, i),
        }
    }

    /// The value (t, payload), child `i` of `parent` (the root if `None`). `None` when
    /// raw access failed or the budget ran out.
    fn value(&mut self, t: u8, payload: u64, parent: Option<(&RawContainer<'a>, usize)>, depth: usize) -> Option<Value> {
        if !self.spend(1) {
            return None;
        }
        Some(match t {
            tag::NULL => Value::Null,
            tag::FALSE => Value::Bool(false),
            tag::TRUE => Value::Bool(true),
            tag::INT => Value::Int(payload as i64),
            tag::UINT => Value::from_u64(payload),
            tag::F64 => Value::F64(f64::from_bits(payload)),
            tag::F32 => Value::F32(f32::from_bits(payload as u32)),
            tag::STRING | tag::BYTES | tag::BIGNUM => {
                let block = match self.doc.data_block(payload) {
                    Ok(b) => b,
                    Err(e) => return self.fail(format!("data_block({payload}): {e}")),
                };
                if !self.spend(block.len()) {
                    return None;
                }
                match t {
                    tag::BYTES => Value::Bytes(block.to_vec()),
                    _ => match std::str::from_utf8(block) {
                        Ok(s) if t == tag::STRING => Value::String(s.to_owned()),
                        Ok(s) => Value::BigNum(s.to_owned()),
                        Err(_) => return self.fail(format!("block at {payload} is not UTF-8")),
                    },
                }
            }
            tag::TYPED => {
                let node = self.node_at(parent);
                let node = match node {
                    Ok(n) => n,
                    Err(e) => return self.fail(format!("child_node of a typed array: {e}")),
                };
                let view = match node.typed() {
                    Ok(v) => v,
                    Err(e) => return self.fail(format!("typed(): {e}")),
                };
                if !self.spend(view.element_count()) {
                    return None;
                }
                match node.to_value() {
                    Ok(v) => v,
                    Err(e) => return self.fail(format!("typed array to_value: {e}")),
                }
            }
            // A packed array or object (spec §13) is decoded, not walked: the raw API has no
            // reader of column groups, so it goes through the node API.
            tag::PACKED | tag::PACKED_OBJECT => {
                let node = self.node_at(parent);
                match node.and_then(|n| n.to_value()) {
                    Ok(v) => v,
                    Err(e) => return self.fail(format!("packed value at {payload}: {e}")),
                }
            }
            // A table (spec §15) is one block: read through the node API, as typed arrays.
            tag::TABLE => {
                let node = self.node_at(parent);
                let table = match node.and_then(|n| n.table().map(|t| (n, t))) {
                    Ok(x) => x,
                    Err(e) => return self.fail(format!("table at {payload}: {e}")),
                };
                if !self.spend(table.1.body().len()) {
                    return None;
                }
                match table.0.to_value() {
                    Ok(v) => v,
                    Err(e) => return self.fail(format!("table to_value: {e}")),
                }
            }
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                if depth >= MAX_DEPTH {
                    return self.fail("too deep".into());
                }
                let c = match self.doc.container(t, payload) {
                    Ok(c) => c,
                    Err(e) => return self.fail(format!("container({t:#04x}, {payload}): {e}")),
                };
                touch(&c);
                let mut array = Vec::new();
                let mut object = Map::default();
                let mut intmap = IntMap::default();
                for i in 0..c.len() {
                    if self.budget == 0 {
                        return None;
                    }
                    let (ct, cp) = match c.child(i) {
                        Ok(x) => x,
                        Err(e) => return self.fail(format!("child {i} of {payload}: {e}")),
                    };
                    let child = self.value(ct, cp, Some((&c, i)), depth + 1)?;
                    match t {
                        tag::ARRAY => array.push(child),
                        tag::OBJECT => {
                            let id = c.key(i);
                            let key = match self.doc.key(id).map(std::str::from_utf8) {
                                Ok(Ok(k)) => k.to_owned(),
                                Ok(Err(_)) => return self.fail(format!("key {id} is not UTF-8")),
                                Err(e) => return self.fail(format!("key {id}: {e}")),
                            };
                            if object.insert(key, child).is_some() {
                                return self.fail(format!("duplicate key in object at {payload}"));
                            }
                        }
                        _ => {
                            if intmap.insert(c.key(i) as i64, child).is_some() {
                                return self.fail(format!("duplicate key in intmap at {payload}"));
                            }
                        }
                    }
                }
                match t {
                    tag::ARRAY => Value::Array(array),
                    tag::OBJECT => Value::Object(object),
                    _ => Value::IntMap(intmap),
                }
            }
            _ => return self.fail(format!("unknown tag {t:#04x}")),
        })
    }
}

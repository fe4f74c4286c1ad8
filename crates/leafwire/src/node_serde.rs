//! `Serialize` for `Node`: transcodes a document to any serde format (JSON among them)
//! without decoding it into a `Value` first.

use std::cell::RefCell;

use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::error::{Category, Error, Result};
use crate::format::DEFAULT_MAX_DEPTH;
use crate::format::ElementType;
use crate::format::budget::Budget;
use crate::read::{Node, TypedRef};
use crate::value::{Kind, Value};

/// A node being serialized, with the depth budget and the first real error (serde's error
/// types only carry text, so the typed error travels beside them).
pub(crate) struct SerializeNode<'a, 'e> {
    node: Node<'a>,
    /// The dictionary's keys, checked once per write instead of at every occurrence.
    keys: &'e [&'a str],
    depth_left: usize,
    max_depth: usize,
    /// Refuse NaN and infinities (JSON has no form for them).
    finite_only: bool,
    error: &'e RefCell<Option<Error>>,
    budget: &'e Budget,
}

/// The entry point: owns the error cell.
pub(crate) struct Owned<'a> {
    node: Node<'a>,
    finite_only: bool,
    max_depth: usize,
    error: RefCell<Option<Error>>,
}

impl<'a> Owned<'a> {
    pub fn new(node: Node<'a>, finite_only: bool, max_depth: usize) -> Owned<'a> {
        Owned { node, finite_only, max_depth, error: RefCell::new(None) }
    }

    pub fn serialize_into<S: Serializer>(&self, ser: S) -> Result<()>
    where
        S::Error: std::fmt::Display,
    {
        let keys = self.node.dictionary_keys()?;
        let budget = Budget::for_document(self.node.buf().len());
        let inner = SerializeNode { node: self.node, keys: &keys, depth_left: self.max_depth, max_depth: self.max_depth, finite_only: self.finite_only, error: &self.error, budget: &budget };
        match inner.serialize(ser) {
            Ok(_) => Ok(()),
            Err(e) => Err(self.error.borrow_mut().take().unwrap_or_else(|| Error::new(Category::Io, e.to_string()))),
        }
    }
}

impl<'a, 'e> SerializeNode<'a, 'e> {
    fn fail<E: serde::ser::Error>(&self, e: Error) -> E {
        let message = e.to_string();
        self.error.borrow_mut().get_or_insert(e);
        E::custom(message)
    }

    fn child(&self, node: Node<'a>) -> SerializeNode<'a, 'e> {
        SerializeNode { node, keys: self.keys, depth_left: self.depth_left - 1, max_depth: self.max_depth, finite_only: self.finite_only, error: self.error, budget: self.budget }
    }

    /// Prefixes the recorded error's path with one step.
    fn in_step<T, E, D: std::fmt::Display>(&self, step: impl FnOnce() -> D, r: std::result::Result<T, E>) -> std::result::Result<T, E> {
        if r.is_err() {
            if let Some(e) = self.error.borrow_mut().as_mut() {
                let path = format!("/{}{}", step(), e.path().unwrap_or(""));
                e.set_path(path);
            }
        }
        r
    }

    fn float<S: Serializer>(&self, v: f64, ser: S) -> std::result::Result<S::Ok, S::Error> {
        if self.finite_only && !v.is_finite() {
            return Err(self.fail(Error::new(Category::NotRepresentable, format!("{v} has no JSON form")).at(self.node.offset())));
        }
        ser.serialize_f64(v)
    }

    fn typed<S: Serializer>(&self, view: &TypedRef<'a>, ser: S) -> std::result::Result<S::Ok, S::Error> {
        TypedRows { view, level: view.level, start: view.start, owner: self }.serialize(ser)
    }
}

/// One row (at any axis) of a typed array, serialized from a header parsed once.
struct TypedRows<'v, 'a, 'e> {
    view: &'v TypedRef<'a>,
    level: usize,
    start: usize,
    owner: &'v SerializeNode<'a, 'e>,
}

impl Serialize for TypedRows<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        let h = &self.view.header;
        let dim = h.shape[self.level] as usize;
        let mut seq = ser.serialize_seq(Some(dim))?;
        if self.level + 1 < h.rank {
            let stride = h.stride(self.level);
            for i in 0..dim {
                let row = TypedRows { view: self.view, level: self.level + 1, start: self.start + i * stride, owner: self.owner };
                self.owner.in_step(|| i, seq.serialize_element(&row))?;
            }
            return seq.end();
        }
        let size = h.element.size();
        let at = h.data_pos + self.start * size;
        let bytes = &self.view.buf[at..at + dim * size];
        let masked = |i: usize| h.mask_pos.is_some_and(|m| {
            let flat = self.start + i;
            self.view.buf[m + flat / 8] >> (flat % 8) & 1 == 1
        });
        let finite = self.owner.finite_only;
        let not_finite = |i: usize, v: f64| {
            let e = Error::new(Category::NotRepresentable, format!("{v} has no JSON form")).at(self.owner.node.offset());
            self.owner.in_step(|| i, Err(self.owner.fail::<S::Error>(e)))
        };
        match h.element {
            ElementType::F64 => {
                for (i, chunk) in bytes.chunks_exact(8).enumerate() {
                    let v = f64::from_le_bytes(chunk.try_into().unwrap());
                    if masked(i) {
                        seq.serialize_element(&(v as i64))?;
                    } else if finite && !v.is_finite() {
                        return not_finite(i, v);
                    } else {
                        seq.serialize_element(&v)?;
                    }
                }
            }
            ElementType::F32 => {
                for (i, chunk) in bytes.chunks_exact(4).enumerate() {
                    let v = f32::from_le_bytes(chunk.try_into().unwrap());
                    if finite && !v.is_finite() {
                        return not_finite(i, v as f64);
                    }
                    seq.serialize_element(&v)?;
                }
            }
            _ => {
                let row = TypedRef { buf: self.view.buf, header: h.clone(), level: self.level, start: self.start };
                for i in 0..dim {
                    match row.element(i) {
                        Value::Int(v) => seq.serialize_element(&v)?,
                        Value::UInt(v) => seq.serialize_element(&v)?,
                        Value::Bool(v) => seq.serialize_element(&v)?,
                        _ => unreachable!("integer and bool elements"),
                    }
                }
            }
        }
        seq.end()
    }
}

impl Serialize for SerializeNode<'_, '_> {
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        let node = &self.node;
        let e = |err: Error| self.fail::<S::Error>(err);
        self.budget.charge(node.visit_cost(), node.offset()).map_err(e)?;
        match node.kind() {
            Kind::Null => ser.serialize_unit(),
            Kind::Bool => ser.serialize_bool(node.as_bool().map_err(e)?),
            Kind::Int => ser.serialize_i64(node.as_i64().map_err(e)?),
            Kind::UInt => ser.serialize_u64(node.as_u64().map_err(e)?),
            Kind::F64 => self.float(node.as_f64().map_err(e)?, ser),
            Kind::F32 => {
                let v = node.as_f32().map_err(e)?;
                if self.finite_only && !v.is_finite() {
                    return Err(e(Error::new(Category::NotRepresentable, format!("{v} has no JSON form"))));
                }
                ser.serialize_f32(v)
            }
            Kind::String => ser.serialize_str(node.as_str().map_err(e)?),
            Kind::Bytes => ser.serialize_bytes(node.as_bytes().map_err(e)?),
            Kind::BigNum => {
                let digits = node.as_bignum().map_err(e)?;
                if let Ok(v) = digits.parse::<i128>() {
                    ser.serialize_i128(v)
                } else if let Ok(v) = digits.parse::<u128>() {
                    ser.serialize_u128(v)
                } else {
                    let raw = serde_json::value::RawValue::from_string(digits.to_owned()).map_err(S::Error::custom)?;
                    raw.serialize(ser)
                }
            }
            Kind::TypedArray => {
                let view = node.typed().map_err(e)?;
                self.typed(&view, ser)
            }
            kind => {
                if self.depth_left == 0 {
                    return Err(e(Error::depth_limit(self.max_depth).at(node.offset())));
                }
                match kind {
                    Kind::Array => {
                        let c = node.container().map_err(e)?;
                        let mut seq = ser.serialize_seq(Some(c.count))?;
                        for i in 0..c.count {
                            let child = node.child(&c, i).map_err(e)?;
                            self.in_step(|| i, seq.serialize_element(&self.child(child)))?;
                        }
                        seq.end()
                    }
                    Kind::Object => {
                        let c = node.container().map_err(e)?;
                        let mut map = ser.serialize_map(Some(c.count))?;
                        for i in 0..c.count {
                            let id = c.key(node.buf(), i) as usize;
                            let key = *self.keys.get(id).ok_or_else(|| e(Error::malformed(c.pos as u64, format!("key id {id} is not in the dictionary"))))?;
                            let child = node.child(&c, i).map_err(e)?;
                            let r = map.serialize_entry(key, &self.child(child));
                            self.in_step(|| escape_token(key), r)?;
                        }
                        map.end()
                    }
                    _ => {
                        let c = node.container().map_err(e)?;
                        let mut map = ser.serialize_map(Some(c.count))?;
                        for i in 0..c.count {
                            let key = c.key(node.buf(), i) as i64;
                            let child = node.child(&c, i).map_err(e)?;
                            let r = map.serialize_entry(&key, &self.child(child));
                            self.in_step(|| key, r)?;
                        }
                        map.end()
                    }
                }
            }
        }
    }
}

/// Escapes a key as a JSON Pointer token (RFC 6901).
fn escape_token(key: &str) -> std::borrow::Cow<'_, str> {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1").into()
    } else {
        key.into()
    }
}

impl Serialize for Node<'_> {
    /// Serializes the value at this node into any serde format. Non-finite floats are
    /// passed through; JSON serializers decide what to do with them.
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        let cell = RefCell::new(None);
        let keys = self.dictionary_keys().map_err(|e| S::Error::custom(e.to_string()))?;
        let budget = Budget::for_document(self.buf().len());
        let inner = SerializeNode { node: *self, keys: &keys, depth_left: DEFAULT_MAX_DEPTH, max_depth: DEFAULT_MAX_DEPTH, finite_only: false, error: &cell, budget: &budget };
        inner.serialize(ser)
    }
}

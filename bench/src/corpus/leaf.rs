//! Leafwire: `json::parse` / `encode` / `decode` / `json::from_json`, and
//! `Document::pointer` for lazy lookups. Numeric JSON arrays become typed arrays.

use std::borrow::Cow;

use leafwire::{Document, Kind, Node};
use serde_json::Value;

use super::peer::{CorpusPeer, Path};
use crate::harness::{json_eq, Fail, Scalar};

pub struct Leafwire;

pub fn scalar<'a>(node: &Node<'a>, pointer: &str) -> Result<Scalar<'a>, Fail> {
    Ok(match node.kind() {
        Kind::Null => Scalar::Null,
        Kind::Bool => Scalar::Bool(node.as_bool().map_err(Fail::error)?),
        Kind::Int => Scalar::I64(node.as_i64().map_err(Fail::error)?),
        Kind::UInt => Scalar::U64(node.as_u64().map_err(Fail::error)?),
        Kind::F64 | Kind::F32 => Scalar::F64(node.as_f64().map_err(Fail::error)?),
        Kind::String => Scalar::Str(Cow::Borrowed(node.as_str().map_err(Fail::error)?)),
        other => return Err(Fail::Wrong(format!("{other} is not a scalar at {pointer}"))),
    })
}

impl CorpusPeer for Leafwire {
    const NAME: &'static str = "leafwire";
    const API: &'static str = "json::parse, encode, decode, json::from_json, json::to_json; lookup: Document::open + pointer (lazy)";
    const LAZY: bool = true;
    type Value = leafwire::Value;
    type Decoded<'a> = leafwire::Value;

    fn value_from_text(text: &[u8]) -> Result<leafwire::Value, Fail> {
        leafwire::json::parse(text).map_err(Fail::error)
    }

    fn value_to_json(v: &leafwire::Value) -> Result<Value, Fail> {
        serde_json::to_value(v).map_err(Fail::error)
    }

    fn encode(v: &leafwire::Value) -> Result<Vec<u8>, Fail> {
        leafwire::encode(v).map_err(Fail::error)
    }

    fn decode(bytes: &mut [u8]) -> Result<leafwire::Value, Fail> {
        leafwire::decode(bytes).map_err(Fail::error)
    }

    fn decoded_to_json(d: &leafwire::Value) -> Result<Value, Fail> {
        serde_json::to_value(d).map_err(Fail::error)
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        leafwire::json::from_json(text).map_err(Fail::error)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let bytes: &'a [u8] = bytes;
        let node = Document::open(bytes).map_err(Fail::error)?.pointer(&path.pointer).map_err(Fail::error)?;
        scalar(&node, &path.pointer)
    }

    fn to_json(_v: &leafwire::Value, bytes: &[u8]) -> Option<Result<Vec<u8>, Fail>> {
        Some(leafwire::json::to_json(bytes).map(String::into_bytes).map_err(Fail::error))
    }

    /// Leafwire's own JSON writer must give back the same data too.
    fn extra_check(bytes: &[u8], reference: &Value) -> Result<(), Fail> {
        let text = leafwire::json::to_json(bytes).map_err(Fail::error)?;
        let back: Value = serde_json::from_str(&text).map_err(Fail::error)?;
        json_eq(reference, &back).map_err(|f| match f {
            Fail::Wrong(why) => Fail::Wrong(format!("json::to_json {why}")),
            other => other,
        })
    }
}

/// The same library read the fastest ways it offers: a whole decode into the borrowed
/// `ValueRef` (strings, keys and typed arrays point into the bytes), and lookups through a
/// prepared `Pointer` (parsed and hashed once, outside the clock, then resolved against
/// the bytes on every call: `Document::open` + `resolve`).
pub struct LeafwireBorrowed;

impl CorpusPeer for LeafwireBorrowed {
    const NAME: &'static str = "leafwire (borrowed)";
    const API: &'static str = "decode_borrowed (ValueRef in its own Arena, dropped with it); lookup: Document::open + resolve(prepared Pointer)";
    const NOTE: &'static str = "decode and lookup only; the Pointer is parsed once, outside the clock";
    const LAZY: bool = true;
    const ONLY: Option<&'static [&'static str]> = Some(&["decode", "lookup"]);
    type Value = leafwire::Value;
    type Decoded<'a> = leafwire::Borrowed<'a>;

    fn value_from_text(text: &[u8]) -> Result<leafwire::Value, Fail> {
        Leafwire::value_from_text(text)
    }

    fn value_to_json(v: &leafwire::Value) -> Result<Value, Fail> {
        Leafwire::value_to_json(v)
    }

    fn encode(v: &leafwire::Value) -> Result<Vec<u8>, Fail> {
        Leafwire::encode(v)
    }

    fn decode(bytes: &mut [u8]) -> Result<leafwire::Borrowed<'_>, Fail> {
        leafwire::decode_borrowed(bytes).map_err(Fail::error)
    }

    fn decoded_to_json(d: &leafwire::Borrowed<'_>) -> Result<Value, Fail> {
        serde_json::to_value(d.root()).map_err(Fail::error)
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        Leafwire::from_json_text(text)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let bytes: &'a [u8] = bytes;
        let node = Document::open(bytes).map_err(Fail::error)?.resolve(&path.leafwire).map_err(Fail::error)?;
        scalar(&node, &path.pointer)
    }
}

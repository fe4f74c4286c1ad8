//! bson: `Document` in memory; `RawDocument` for lazy lookups in the bytes.
//! BSON needs a document at the root, so an array root is wrapped as {"v": [...]}.

use std::borrow::Cow;

use bson::raw::{RawBsonRef, RawDocument};
use bson::Document;
use serde::Serialize;
use serde_json::Value;
use serde_transcode::Transcoder;

use super::peer::{CorpusPeer, Path, Step};
use crate::harness::{Fail, Scalar};

pub struct Bson;

const WRAP: &str = "v";

#[derive(Serialize)]
struct Wrapped<T> {
    v: T,
}

fn root_is_object(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The JSON data a document stands for, undoing the array-root wrapper.
fn unwrap_json(doc: &Document) -> Result<Value, Fail> {
    let json = serde_json::to_value(doc).map_err(Fail::error)?;
    match json {
        Value::Object(mut map) if map.len() == 1 && map.get(WRAP).is_some_and(Value::is_array) => {
            Ok(map.remove(WRAP).expect("checked"))
        }
        other => Ok(other),
    }
}

fn scalar<'a>(v: RawBsonRef<'a>, pointer: &str) -> Result<Scalar<'a>, Fail> {
    Ok(match v {
        RawBsonRef::Null => Scalar::Null,
        RawBsonRef::Boolean(b) => Scalar::Bool(b),
        RawBsonRef::Int32(i) => Scalar::I64(i as i64),
        RawBsonRef::Int64(i) => Scalar::I64(i),
        RawBsonRef::Double(f) => Scalar::F64(f),
        RawBsonRef::String(s) => Scalar::Str(Cow::Borrowed(s)),
        other => return Err(Fail::Wrong(format!("{:?} is not a scalar at {pointer}", other.element_type()))),
    })
}

impl CorpusPeer for Bson {
    const NAME: &'static str = "bson";
    const API: &'static str =
        "Document::to_vec, Document::try_from(RawDocument::from_bytes); lookup: RawDocument (lazy); from_json: serde_transcode";
    const NOTE: &'static str = "array roots wrapped as {\"v\": ...}";
    const LAZY: bool = true;
    type Value = Document;
    type Decoded<'a> = Document;

    fn value_from_text(text: &[u8]) -> Result<Document, Fail> {
        let json: Value = serde_json::from_slice(text).map_err(Fail::error)?;
        if json.is_object() {
            bson::serialize_to_document(&json).map_err(Fail::error)
        } else {
            bson::serialize_to_document(&Wrapped { v: json }).map_err(Fail::error)
        }
    }

    fn value_to_json(v: &Document) -> Result<Value, Fail> {
        unwrap_json(v)
    }

    fn encode(v: &Document) -> Result<Vec<u8>, Fail> {
        v.to_vec().map_err(Fail::error)
    }

    fn decode(bytes: &mut [u8]) -> Result<Document, Fail> {
        let raw = RawDocument::from_bytes(&bytes[..]).map_err(Fail::error)?;
        Document::try_from(raw).map_err(Fail::error)
    }

    fn decoded_to_json(d: &Document) -> Result<Value, Fail> {
        unwrap_json(d)
    }

    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail> {
        let mut de = serde_json::Deserializer::from_slice(text);
        let out = if root_is_object(text) {
            bson::serialize_to_vec(&Transcoder::new(&mut de))
        } else {
            bson::serialize_to_vec(&Wrapped { v: Transcoder::new(&mut de) })
        };
        let out = out.map_err(Fail::error)?;
        de.end().map_err(Fail::error)?;
        Ok(out)
    }

    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail> {
        let bytes: &'a [u8] = bytes;
        let root = RawDocument::from_bytes(bytes).map_err(Fail::error)?;
        let missing = || Fail::Wrong(format!("nothing at {}", path.pointer));
        let mut at = RawBsonRef::Document(root);
        if let Some(Step::Index(_)) = path.steps.first() {
            at = root.get(WRAP).map_err(Fail::error)?.ok_or_else(missing)?;
        }
        for step in &path.steps {
            at = match (step, at) {
                (Step::Key(k), RawBsonRef::Document(d)) => d.get(k).map_err(Fail::error)?,
                (Step::Index(i), RawBsonRef::Array(a)) => a.get(*i).map_err(Fail::error)?,
                _ => None,
            }
            .ok_or_else(missing)?;
        }
        scalar(at, &path.pointer)
    }
}

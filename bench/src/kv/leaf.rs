//! Leafwire: the map as a `leafwire::Value` object (decode / encode), and
//! lazy key lookups with `Document` (no decode).

use leafwire::{Document, Value};

use super::peer::{KvLazy, KvPeer};
use super::{LEAFWIRE, LEAFWIRE_LAZY};
use crate::harness::Fail;

pub struct Leafwire;

impl KvPeer for Leafwire {
    const NAME: &'static str = LEAFWIRE;
    const API: &'static str = "leafwire::decode / encode on Value::Object";
    const NOTE: &'static str = "edits go through the decoded Value (see the in-place row for editing the bytes)";
    type Map = Value;

    fn build(p: &[(String, String)]) -> Value {
        Value::Object(p.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
    }
    fn encode(m: &Value) -> Result<Vec<u8>, Fail> {
        leafwire::encode(m).map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Value, Fail> {
        leafwire::decode(bytes).map_err(Fail::error)
    }
    fn get<'m>(m: &'m Value, key: &str) -> Option<&'m str> {
        match m {
            Value::Object(o) => match o.get(key) {
                Some(Value::String(s)) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }
    fn set(m: &mut Value, key: &str, value: &str) {
        if let Value::Object(o) = m {
            o.insert(key.to_string(), Value::String(value.to_string()));
        }
    }
    fn pairs(m: &Value) -> Vec<(String, String)> {
        match m {
            Value::Object(o) => o
                .iter()
                .map(|(k, v)| (k.clone(), if let Value::String(s) = v { s.clone() } else { format!("<{}>", v.kind()) }))
                .collect(),
            other => vec![(String::new(), format!("<root is {}>", other.kind()))],
        }
    }
}

pub struct LeafwireLazy;

impl KvLazy for LeafwireLazy {
    const NAME: &'static str = LEAFWIRE_LAZY;
    const API: &'static str = "Document::open, root().object() (header read once), get(key).as_str()";

    fn encode(p: &[(String, String)]) -> Result<Vec<u8>, Fail> {
        Leafwire::encode(&Leafwire::build(p))
    }

    fn read(bytes: &[u8], keys: &[String]) -> Result<(usize, usize), Fail> {
        let map = Document::open(bytes).and_then(|d| d.root().object()).map_err(Fail::error)?;
        let mut found = (0, 0);
        for k in keys {
            if let Ok(v) = map.get(k) {
                found.0 += 1;
                found.1 += v.as_str().map_err(Fail::error)?.len();
            }
        }
        Ok(found)
    }
}

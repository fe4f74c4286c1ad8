//! bson: the map as a `Document`; and `RawDocument` lookups in the bytes.

use bson::raw::RawDocument;
use bson::Document;

use super::peer::{KvLazy, KvPeer};
use crate::harness::Fail;

pub struct Bson;

impl KvPeer for Bson {
    const NAME: &'static str = "bson";
    const API: &'static str = "Document::to_vec, Document::try_from(RawDocument::from_bytes), get_str / insert";
    type Map = Document;

    fn build(p: &[(String, String)]) -> Document {
        p.iter().map(|(k, v)| (k.clone(), bson::Bson::String(v.clone()))).collect()
    }
    fn encode(m: &Document) -> Result<Vec<u8>, Fail> {
        m.to_vec().map_err(Fail::error)
    }
    fn decode(bytes: &[u8]) -> Result<Document, Fail> {
        Document::try_from(RawDocument::from_bytes(bytes).map_err(Fail::error)?).map_err(Fail::error)
    }
    fn get<'m>(m: &'m Document, key: &str) -> Option<&'m str> {
        m.get_str(key).ok()
    }
    fn set(m: &mut Document, key: &str, value: &str) {
        m.insert(key, value);
    }
    fn pairs(m: &Document) -> Vec<(String, String)> {
        m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("<not a string>").to_string())).collect()
    }
}

/// `RawDocument::get_str`: a linear scan of the elements per key.
pub struct BsonRaw;

impl KvLazy for BsonRaw {
    const NAME: &'static str = "bson (RawDocument)";
    const API: &'static str = "RawDocument::from_bytes, get_str(key)";
    const NOTE: &'static str = "each lookup scans the document's elements in order";

    fn encode(p: &[(String, String)]) -> Result<Vec<u8>, Fail> {
        Bson::encode(&Bson::build(p))
    }

    fn read(bytes: &[u8], keys: &[String]) -> Result<(usize, usize), Fail> {
        let doc = RawDocument::from_bytes(bytes).map_err(Fail::error)?;
        let mut found = (0, 0);
        for k in keys {
            if let Ok(v) = doc.get_str(k) {
                found.0 += 1;
                found.1 += v.len();
            }
        }
        Ok(found)
    }
}

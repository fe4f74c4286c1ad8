//! Leafwire in place (issue 4): the map stays in its serialized form. "decode" wraps the
//! bytes in an `Editor` (which validates them), lookups read lazily, updates and inserts
//! edit the bytes, and "encode" hands back the buffer.

use leafwire::{Editor, Value};

use super::leaf::Leafwire;
use super::peer::KvPeer;
use super::LEAFWIRE_IN_PLACE;
use crate::harness::Fail;

pub struct LeafwireInPlace;

/// An editor over one document; cloning re-validates a copy (outside the clock: the
/// harness clones the starting map before it times a write).
pub struct Edited(Editor);

impl Clone for Edited {
    fn clone(&self) -> Self {
        Edited(Editor::new(self.0.as_bytes().to_vec()).expect("an editor's bytes are valid"))
    }
}

impl KvPeer for LeafwireInPlace {
    const NAME: &'static str = LEAFWIRE_IN_PLACE;
    const API: &'static str = "Editor::new (validates), Editor::set_path, Document get(key); the bytes: the edited buffer, lent";
    const NOTE: &'static str = "no decode, no re-encode: edits rewrite or relocate blocks inside the buffer";
    type Map = Edited;

    fn build(p: &[(String, String)]) -> Edited {
        let bytes = Leafwire::encode(&Leafwire::build(p)).expect("encodes");
        Edited(Editor::new(bytes).expect("valid"))
    }
    fn encode(m: &Edited) -> Result<Vec<u8>, Fail> {
        Ok(m.0.as_bytes().to_vec())
    }
    fn decode(bytes: &[u8]) -> Result<Edited, Fail> {
        Editor::new(bytes.to_vec()).map(Edited).map_err(Fail::error)
    }
    fn get<'m>(m: &'m Edited, key: &str) -> Option<&'m str> {
        m.0.document().ok()?.root().get(key).ok()?.as_str().ok()
    }
    fn set(m: &mut Edited, key: &str, value: &str) {
        m.0.set_path(&[key], &Value::String(value.to_owned())).expect("set on a valid map");
    }
    /// The edited buffer is the serialized map: lent, not copied.
    fn with_bytes<R>(m: &Edited, sink: impl FnOnce(&[u8]) -> R) -> Result<R, Fail> {
        Ok(sink(m.0.as_bytes()))
    }
    fn pairs(m: &Edited) -> Vec<(String, String)> {
        Leafwire::pairs(&leafwire::decode(m.0.as_bytes()).unwrap_or(Value::Null))
    }
}

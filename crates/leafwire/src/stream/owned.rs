//! Frames that own their bytes, for callers that keep a message after the reader has moved
//! on (a lazily read message handed to Python, another thread, a queue).
//!
//! A [`Frame`] borrows the reader's buffer and key table, both of which the next frame
//! reuses. An [`OwnedFrame`] copies the frame's section (the frame and the at most 120
//! bytes before it that its offsets count from, spec §14.3) into 8-aligned memory of its
//! own, so typed arrays stay aligned, and holds the key table as it was when the frame was
//! read. Key tables change rarely (a canonical writer sends each key once), so owned frames
//! share one copy of the table through [`SharedKeys`] until a keys or reset frame changes it.

use std::sync::Arc;

use super::Frame;
use crate::file::AlignedBytes;
use crate::format::dictionary::Dict;
use crate::format::tag;
use crate::read::Node;

/// A copy of a stream's key table (spec §14.4).
struct KeyTable {
    bytes: Vec<u8>,
    dict: Dict,
}

/// The copy of one reader's key table that its owned frames share: pass the same
/// `SharedKeys` to [`Frame::to_owned_sharing`] for every frame of one reader (a frame of
/// another reader would get that reader's keys only if the tables' change counts differ).
#[derive(Default, Clone)]
pub struct SharedKeys {
    /// The reader's count of key-table changes the copy was made at, and the copy.
    copy: Option<(u64, Arc<KeyTable>)>,
}

impl SharedKeys {
    /// The copy of `frame`'s key table, made now unless the current copy is of the same
    /// table (same change count, same size).
    fn for_frame(&mut self, frame: &Frame<'_>) -> Arc<KeyTable> {
        let (bytes, dict) = frame.root.key_table();
        if let Some((version, table)) = &self.copy {
            if *version == frame.keys_version && table.dict.count() == dict.count() && table.bytes.len() == bytes.len()
            {
                return table.clone();
            }
        }
        let table = Arc::new(KeyTable { bytes: bytes.to_vec(), dict });
        self.copy = Some((frame.keys_version, table.clone()));
        table
    }
}

/// A message of a stream that owns its bytes: [`frame`](Self::frame) gives it as a
/// [`Frame`] (lazy nodes, pointers, slices, values), for as long as the `OwnedFrame` lives.
#[derive(Clone)]
pub struct OwnedFrame {
    section: Arc<AlignedBytes>,
    /// `None` for messages whose root cannot hold objects (scalars, strings, typed arrays).
    keys: Option<Arc<KeyTable>>,
    tag: u8,
    payload: u64,
    origin: u64,
    offset: u64,
    keys_version: u64,
}

impl OwnedFrame {
    /// The message, borrowing this frame's bytes.
    pub fn frame(&self) -> Frame<'_> {
        let (keys, dict) = match &self.keys {
            Some(table) => (&table.bytes[..], table.dict),
            None => (&[][..], Dict::default()),
        };
        let root = Node::frame_root(self.section.as_bytes(), keys, dict, self.tag, self.payload);
        Frame { root, origin: self.origin, offset: self.offset, keys_version: self.keys_version }
    }

    /// The message's root value.
    pub fn root(&self) -> Node<'_> {
        self.frame().root()
    }

    /// The bytes this frame holds: the stream from its origin to its end, as
    /// [`Frame::bytes`] gives them.
    pub fn bytes(&self) -> &[u8] {
        self.section.as_bytes()
    }
}

impl<'a> Frame<'a> {
    /// A copy of the message that outlives the reader's buffer: its section and its key
    /// table are copied (the table only when the root is a container).
    pub fn to_owned(&self) -> OwnedFrame {
        self.to_owned_sharing(&mut SharedKeys::default())
    }

    /// As [`to_owned`](Self::to_owned), but the key table's copy is shared with the other
    /// frames of the same reader copied through `shared` while the table did not change.
    pub fn to_owned_sharing(&self, shared: &mut SharedKeys) -> OwnedFrame {
        let root = self.root;
        // Strings, bytes, bignums and typed arrays hold no keys; containers and tables may.
        let holds_keys =
            tag::is_pointer(root.tag()) && !matches!(root.tag(), tag::STRING | tag::BYTES | tag::BIGNUM | tag::TYPED);
        let keys = (holds_keys && root.key_table().1.count() > 0).then(|| shared.for_frame(self));
        OwnedFrame {
            // The section starts at a multiple of 8 in the stream (spec §14.3), so an
            // 8-aligned copy keeps every block's alignment.
            section: Arc::new(AlignedBytes::new(root.buf())),
            keys,
            tag: root.tag(),
            payload: root.payload(),
            origin: self.origin,
            offset: self.offset,
            keys_version: self.keys_version,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{SliceReader, StreamWriter};
    use crate::Value;

    /// Owned frames read the same after their reader and its bytes are gone, and share a
    /// key table's copy exactly while the table does not change.
    #[test]
    fn owned_frames_outlive_their_reader_and_share_keys() {
        let mut w = StreamWriter::new(Vec::new()).unwrap();
        w.write_json(br#"{"a": 1, "b": [2.5, "x"]}"#).unwrap();
        w.write_json(br#"{"b": [], "a": 2}"#).unwrap();
        w.write(&[1.5f64, 2.5]).unwrap();
        w.write(&vec![0.5f64; 40]).unwrap();
        w.reset_keys().unwrap();
        w.write_json(br#"{"c": null}"#).unwrap();
        let bytes = w.into_inner().unwrap();

        let (mut owned, mut expected) = (Vec::new(), Vec::new());
        let mut shared = SharedKeys::default();
        let mut r = SliceReader::new(&bytes).unwrap();
        while let Some(frame) = r.next_frame() {
            let frame = frame.unwrap();
            expected.push(frame.to_value().unwrap());
            owned.push(frame.to_owned_sharing(&mut shared));
        }
        drop(r);
        drop(bytes);
        let values: Vec<Value> = owned.iter().map(|f| f.frame().to_value().unwrap()).collect();
        assert_eq!(values, expected);
        assert_eq!(owned[0].frame().pointer("/b/1").unwrap().as_str().unwrap(), "x");
        assert_eq!(owned[3].root().as_slice::<f64>().unwrap(), &[0.5; 40][..]);
        assert_eq!(owned[2].root().as_slice::<f64>().unwrap(), &[1.5, 2.5][..]);

        let keys = |i: usize| owned[i].keys.as_ref().expect("an object's frame holds keys");
        assert!(Arc::ptr_eq(keys(0), keys(1)), "no keys frame between them: one copy");
        assert!(!Arc::ptr_eq(keys(1), keys(4)), "a reset between them: a new copy");
        assert!(owned[2].keys.is_none() && owned[3].keys.is_none(), "typed arrays hold no keys");
    }
}

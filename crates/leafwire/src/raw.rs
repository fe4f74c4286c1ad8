//! Raw, bounds-checked access to a document's blocks, for decoders that walk the bytes
//! themselves (the Python binding's `loads` builds Python objects straight from the
//! container arrays, with no `Node` per value).
//!
//! Everything here is a thin wrapper over the reader's own parsers, so it checks exactly
//! what lazy access checks (spec §9, "Lazy access validates only what it touches"):
//! opening checks the header and the dictionary's geometry; [`RawDocument::container`]
//! proves a container's tag, key and slot arrays lie inside the document;
//! [`RawDocument::key`] and [`RawDocument::data_block`] check their offsets. Nothing checks
//! UTF-8, key uniqueness, slot widths of child tags, or that the value is a tree: a caller
//! checks what it uses (see [`RawContainer`]) and bounds its work on documents that share
//! subtrees (every block may be reached any number of times).
//!
//! Positions come from the one parser of container headers, [`crate::format::container`];
//! writers that lay out the canonical form themselves take their arithmetic from
//! [`crate::format`] too.

use crate::error::Result;
use crate::format::container::Geometry;
use crate::format::dictionary::Dict;
use crate::read::{Document, Node};

pub use crate::format::{read_uint, read_varint, sign_extend, tag, HEADER_LEN};

/// An open document for raw access. Opening costs O(1), as [`Document::open`].
#[derive(Debug, Clone, Copy)]
pub struct RawDocument<'a> {
    doc: Document<'a>,
    dict: Dict,
}

impl<'a> RawDocument<'a> {
    /// Checks the header and the key dictionary's geometry.
    #[inline]
    pub fn open(bytes: &'a [u8]) -> Result<RawDocument<'a>> {
        let doc = Document::open(bytes)?;
        let dict = Dict::parse(doc.as_bytes(), doc.record().dictionary)?;
        Ok(RawDocument { doc, dict })
    }

    /// The document's bytes up to its `end`: every offset is relative to their start.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.doc.as_bytes()
    }

    /// Tag and payload of the root value (a slot of width 8; the tag is known, ≤ 0x0D).
    #[inline]
    pub fn root(&self) -> (u8, u64) {
        (self.doc.record().root_tag, self.doc.record().root)
    }

    /// The root as a lazy node (for the kinds a raw walker hands to the node API).
    pub fn root_node(&self) -> Node<'a> {
        self.doc.root()
    }

    /// Number of keys in the dictionary (K of spec §6): key ids are below it. At most a
    /// quarter of the document's length, since each key has a 4-byte offset.
    #[inline]
    pub fn key_count(&self) -> usize {
        self.dict.count() as usize
    }

    /// The bytes of key `id`, not checked for UTF-8.
    #[inline]
    pub fn key(&self, id: u64) -> Result<&'a [u8]> {
        self.dict.key(self.bytes(), id)
    }

    /// The container (`tag` array, object or intmap) whose block starts at `offset`.
    #[inline]
    pub fn container(&self, tag: u8, offset: u64) -> Result<RawContainer<'a>> {
        RawContainer::parse(self.bytes(), offset, tag)
    }

    /// The content of the string, bytes or bignum block at `offset` (spec §5.1).
    #[inline]
    pub fn data_block(&self, offset: u64) -> Result<&'a [u8]> {
        crate::format::data::block(self.bytes(), offset)
    }

    /// Child `i` (< len) of `container` as a lazy node, for the kinds a raw walker leaves
    /// to the node API (typed arrays, bignums). Checks the child's tag as
    /// [`RawContainer::child`] does.
    pub fn child_node(&self, container: &RawContainer<'a>, i: usize) -> Result<Node<'a>> {
        self.doc.root().child(&container.geometry()?, i)
    }
}

/// A container whose arrays are known to lie inside the document (spec §4). Its slices
/// cover the `len` children only (not the spare capacity). A child's slot is
/// `read_uint(slots, slot_width, i)`; it is only meaningful for the child's tag if the
/// width rules of spec §3.2 hold (`child` checks them; a raw walker checks them itself).
///
/// It keeps only what a walker reads per child (the three arrays, the two widths, where
/// the block is): a decoder makes one per container, and copying the whole [`Geometry`]
/// along was a tenth of the cost of entering one. The per-child helpers and
/// [`RawDocument::child_node`] parse the header again.
#[derive(Debug, Clone, Copy)]
pub struct RawContainer<'a> {
    tags: &'a [u8],
    keys: &'a [u8],
    slots: &'a [u8],
    buf: &'a [u8],
    pos: usize,
    tag: u8,
    width: u8,
    key_width: u8,
}

impl<'a> RawContainer<'a> {
    #[inline(always)]
    fn parse(buf: &'a [u8], offset: u64, tag: u8) -> Result<RawContainer<'a>> {
        let g = Geometry::parse(buf, offset, tag)?;
        let (n, w, k) = (g.count, g.width as usize, g.key_width as usize);
        Ok(RawContainer {
            tags: &buf[g.tags_at..g.tags_at + n],
            keys: &buf[g.keys_at..g.keys_at + n * k],
            slots: &buf[g.slots_at..g.slots_at + n * w],
            buf,
            pos: g.pos,
            tag,
            width: g.width,
            key_width: g.key_width,
        })
    }

    /// The header, parsed again (it parsed when this container was made).
    fn geometry(&self) -> Result<Geometry> {
        Geometry::parse(self.buf, self.pos as u64, self.tag)
    }

    /// Number of children.
    #[inline]
    pub fn len(&self) -> usize {
        self.tags.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    /// The children's tags (`len` bytes), not checked.
    #[inline]
    pub fn tags(&self) -> &'a [u8] {
        self.tags
    }

    /// Slot width w, in {1, 2, 4, 8}.
    #[inline]
    pub fn slot_width(&self) -> usize {
        self.width as usize
    }

    /// The children's slots (`len × w` bytes).
    #[inline]
    pub fn slots(&self) -> &'a [u8] {
        self.slots
    }

    /// Key width k: 0 for arrays, 1, 2 or 4 for objects, 1 to 8 for intmaps.
    #[inline]
    pub fn key_width(&self) -> usize {
        self.key_width as usize
    }

    /// The children's keys (`len × k` bytes): unsigned key ids for objects (not checked
    /// against the dictionary), signed integers for intmaps.
    #[inline]
    pub fn keys(&self) -> &'a [u8] {
        self.keys
    }

    /// Tag and payload of child `i` (< len), with the tag and width rules of spec §3.2
    /// checked; `int` payloads are sign-extended.
    pub fn child(&self, i: usize) -> Result<(u8, u64)> {
        self.geometry()?.child(self.buf, i)
    }

    /// Key of child `i` (< len): a key id for objects, a sign-extended integer for intmaps
    /// (0 for arrays).
    pub fn key(&self, i: usize) -> u64 {
        let width = self.key_width as usize;
        if width == 0 {
            return 0;
        }
        crate::format::container::stored_key(read_uint(self.keys, width, i), width, self.tag == tag::INTMAP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    #[test]
    fn walks_an_object_of_an_array() {
        let value = Value::Object(vec![("xs".to_string(), Value::Array(vec![Value::Int(-1), Value::Null]))].into_iter().collect());
        let bytes = crate::encode(&value).unwrap();
        let doc = RawDocument::open(&bytes).unwrap();
        let (t, payload) = doc.root();
        assert_eq!(t, tag::OBJECT);
        let object = doc.container(t, payload).unwrap();
        assert_eq!((object.len(), object.key_width(), object.keys()), (1, 1, &[0u8][..]));
        assert_eq!(doc.key(object.key(0)).unwrap(), b"xs");
        let (t, payload) = object.child(0).unwrap();
        let array = doc.container(t, payload).unwrap();
        assert_eq!(array.tags(), &[tag::INT, tag::NULL]);
        assert_eq!(array.slots().len(), 2 * array.slot_width());
        assert_eq!(array.child(0).unwrap(), (tag::INT, -1i64 as u64));
        assert!(doc.key(1).is_err());
        assert!(doc.container(tag::ARRAY, 5).is_err());
        assert!(doc.container(tag::ARRAY, bytes.len() as u64).is_err());
    }

    #[test]
    fn reads_data_blocks_and_nodes() {
        let value = Value::Array(vec![Value::String("héllo".into()), Value::Null]);
        let bytes = crate::encode(&value).unwrap();
        let doc = RawDocument::open(&bytes).unwrap();
        let (t, payload) = doc.root();
        let array = doc.container(t, payload).unwrap();
        let (t, payload) = array.child(0).unwrap();
        assert_eq!(t, tag::STRING);
        assert_eq!(doc.data_block(payload).unwrap(), "héllo".as_bytes());
        assert_eq!(doc.child_node(&array, 0).unwrap().as_str().unwrap(), "héllo");
        assert!(doc.data_block(bytes.len() as u64).is_err());
        assert_eq!(doc.key_count(), 0);
    }
}

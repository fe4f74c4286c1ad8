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
//! The byte-level helpers of the format (tags, varints, key hash, index geometry) are
//! re-exported too, for writers that lay out the canonical form themselves.

use crate::error::{Error, Result};
use crate::layout::align;
use crate::layout::container::{HAS_CAPACITY, RESERVED, WIDTH_MASK};
use crate::read::container::{Container, Dict};
use crate::read::{Document, Node};

pub use crate::layout::container::{HAS_INDEX, KEY_WIDTH_SHIFT};
pub use crate::layout::{
    dictionary_table_size, home_bucket, index_geometry, key_hash, read_uint, read_varint, sign_extend, tag, HEADER_LEN,
    INDEX_THRESHOLD,
};

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
        crate::read::data_block(self.bytes(), offset)
    }

    /// Child `i` (< len) of `container` as a lazy node, for the kinds a raw walker leaves
    /// to the node API (typed arrays, bignums). Checks the child's tag as
    /// [`RawContainer::child`] does.
    pub fn child_node(&self, container: &RawContainer<'a>, i: usize) -> Result<Node<'a>> {
        let c = Container::parse(self.bytes(), container.offset, container.tag)?;
        self.doc.root().child_of(&c, i)
    }
}

/// A container whose arrays are known to lie inside the document (spec §4). Its slices
/// cover the `len` children only (not the spare capacity). A child's slot is
/// `read_uint(slots, slot_width, i)`; it is only meaningful for the child's tag if the
/// width rules of spec §3.2 hold (`child` checks them; a raw walker checks them itself).
#[derive(Debug, Clone, Copy)]
pub struct RawContainer<'a> {
    tags: &'a [u8],
    keys: &'a [u8],
    slots: &'a [u8],
    offset: u64,
    tag: u8,
    width: u8,
    key_width: u8,
}

impl<'a> RawContainer<'a> {
    /// Parses the header with the checks of the reader's `Container::parse`. The common
    /// case (no capacity, fewer than 128 children: a one-byte count) is computed here, a
    /// few dozen instructions that inline into a walker's loop; the rest is left to the
    /// reader's parser.
    #[inline(always)]
    fn parse(buf: &'a [u8], offset: u64, tag: u8) -> Result<RawContainer<'a>> {
        if offset < HEADER_LEN as u64 || offset >= (buf.len() as u64).saturating_sub(1) {
            return Self::parse_by_reader(buf, offset, tag);
        }
        let pos = offset as usize;
        let (layout_byte, count) = (buf[pos], buf[pos + 1] as usize);
        let key_code = (layout_byte >> KEY_WIDTH_SHIFT) & 3;
        let valid = layout_byte & (RESERVED | HAS_CAPACITY) == 0
            && count < 0x80
            && match tag {
                tag::ARRAY => key_code == 0 && layout_byte & HAS_INDEX == 0,
                tag::OBJECT => key_code != 3,
                _ => true,
            };
        if !valid {
            return Self::parse_by_reader(buf, offset, tag);
        }
        let width = 1usize << (layout_byte & WIDTH_MASK);
        let key_width = if tag == tag::ARRAY { 0 } else { 1usize << key_code };
        // No overflow: pos < buf.len() and every term is at most 127 × 8.
        let tags_at = pos + 2;
        let keys_at = tags_at + count;
        let slots_at = align(keys_at + count * key_width, width);
        let mut end = slots_at + count * width;
        if layout_byte & HAS_INDEX != 0 {
            let (table, entry) = index_geometry(count);
            end = align(end, entry) + table * entry;
        }
        if end > buf.len() {
            return Self::parse_by_reader(buf, offset, tag);
        }
        Ok(RawContainer {
            tags: &buf[tags_at..keys_at],
            keys: &buf[keys_at..keys_at + count * key_width],
            slots: &buf[slots_at..slots_at + count * width],
            offset,
            tag,
            width: width as u8,
            key_width: key_width as u8,
        })
    }

    #[inline(never)]
    fn parse_by_reader(buf: &'a [u8], offset: u64, tag: u8) -> Result<RawContainer<'a>> {
        let c = Container::parse(buf, offset, tag)?;
        let (n, w, k) = (c.count, c.width as usize, c.key_width as usize);
        Ok(RawContainer {
            tags: &c.tags()[..n],
            keys: &c.keys()[..n * k],
            slots: &c.slots()[..n * w],
            offset,
            tag,
            width: w as u8,
            key_width: k as u8,
        })
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
    #[inline]
    pub fn child(&self, i: usize) -> Result<(u8, u64)> {
        let (t, width) = (self.tags[i], self.width as usize);
        let raw = read_uint(self.slots, width, i);
        let valid = match t {
            tag::INT => return Ok((t, sign_extend(raw, width) as u64)),
            tag::F64 | tag::UINT => width == 8,
            tag::F32 => width >= 4,
            _ => t <= tag::LAST,
        };
        if !valid {
            return Err(Error::malformed(self.offset, format!("child {i} has tag {t:#04x}, unknown or too wide for slot width {width}")));
        }
        Ok((t, raw))
    }

    /// Key of child `i` (< len): a key id for objects, a sign-extended integer for intmaps.
    #[inline]
    pub fn key(&self, i: usize) -> u64 {
        let (width, raw) = (self.key_width as usize, read_uint(self.keys, self.key_width as usize, i));
        if self.tag == tag::INTMAP {
            sign_extend(raw, width) as u64
        } else {
            raw
        }
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

//! The lazy reader: `Document` over bytes, `Node` handles that touch only the blocks on
//! the path asked for.
//!
//! What is checked lazily: opening checks the header; every step checks the container
//! header, offsets and widths it reads, and strings are checked for UTF-8 when returned.
//! Nothing else is read. A lookup never panics or reads out of bounds on any input, but
//! only `validate` proves a document well-formed as a whole.

mod iter;
mod lookup;
mod packed;
mod pointer;
mod table_pointer;
pub(crate) mod typed;

use crate::error::{Error, Result};
use crate::format::budget::Budget;
use crate::format::container::Geometry;
use crate::format::data;
use crate::format::dictionary::Dict;
use crate::format::header::{self, RootRecord};
use crate::format::typed::TypedHeader;
use crate::format::{is_bignum_text, tag};
use crate::value::Kind;
pub use iter::{Children, Entries, IntEntries, ObjectView};
pub(crate) use pointer::array_index;
pub use pointer::Pointer;
pub use table_pointer::TablePart;
pub use typed::{Element, TypedRef};

/// An open Leafwire document over borrowed bytes. Opening costs O(1).
#[derive(Debug, Clone, Copy)]
pub struct Document<'a> {
    buf: &'a [u8],
    record: RootRecord,
    dict: Dict,
}

impl<'a> Document<'a> {
    /// Checks the header and returns the document; nothing past the header is read.
    ///
    /// Inlined whole, with the header and dictionary checks it calls, as are the pointer
    /// walks (`resolve`, `pointer`): a `Document` or `Node` returned in memory and moved
    /// by the caller's `map_err(..)?` was copied with wide loads just after the callee's
    /// narrow stores, a store-forwarding stall per copy. Inlined, the fields stay in
    /// registers: the corpus bench's lookup on numbers.json went from 64.6 to 35.8 ns, on
    /// mesh.json from 107 to 78 ns (`BENCH_CORPUS_FILES=... leafwire-bench corpus`).
    #[inline(always)]
    pub fn open(bytes: &'a [u8]) -> Result<Document<'a>> {
        let record = header::read_header(bytes)?;
        let buf = &bytes[..record.end as usize];
        let dict = Dict::parse(buf, record.dictionary)?;
        Ok(Document { buf, record, dict })
    }

    /// A document whose header its caller has already read (the editor keeps its root
    /// record in memory): skips the magic and CRC checks of `open`.
    pub(crate) fn with_record(bytes: &'a [u8], record: RootRecord) -> Result<Document<'a>> {
        let buf = usize::try_from(record.end)
            .ok()
            .and_then(|end| bytes.get(..end))
            .ok_or_else(|| Error::malformed(record.end, "document end past the buffer"))?;
        let dict = Dict::parse(buf, record.dictionary)?;
        Ok(Document { buf, record, dict })
    }

    /// The root value.
    pub fn root(&self) -> Node<'a> {
        Node {
            buf: self.buf,
            keys: self.buf,
            dict: self.dict,
            tag: self.record.root_tag,
            payload: self.record.root,
            level: 0,
            start: 0,
        }
    }

    /// The value at a JSON Pointer (RFC 6901), `""` being the root.
    #[inline(always)]
    pub fn pointer(&self, pointer: &str) -> Result<Node<'a>> {
        self.root().pointer(pointer)
    }

    /// The value at a prepared pointer: its tokens were parsed and hashed once.
    #[inline(always)]
    pub fn resolve(&self, pointer: &Pointer) -> Result<Node<'a>> {
        self.root().resolve(pointer)
    }

    /// The active root record: generation, end, garbage count.
    pub fn record(&self) -> &RootRecord {
        &self.record
    }

    /// The document's bytes, up to its `end`.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// Number of distinct keys in the dictionary.
    pub fn key_count(&self) -> u32 {
        self.dict.count()
    }
}

/// A handle to one value inside a document. Copying it is cheap.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    buf: &'a [u8],
    /// The bytes `dict`'s positions count in: the document's own (`buf`), or a stream's
    /// key table (spec §14.4), which lives apart from the frames that use it.
    keys: &'a [u8],
    dict: Dict,
    tag: u8,
    payload: u64,
    /// For typed arrays: the axis this node starts at (0 = the whole array) and its
    /// first element, so a row of a matrix is a node too.
    level: usize,
    start: usize,
}

impl<'a> Node<'a> {
    /// The root of a stream frame (spec §14.3): `section` is the frame from its origin,
    /// `keys` the reader's key table, whose dictionary `dict` describes.
    pub(crate) fn frame_root(section: &'a [u8], keys: &'a [u8], dict: Dict, tag: u8, payload: u64) -> Node<'a> {
        Node { buf: section, keys, dict, tag, payload, level: 0, start: 0 }
    }

    /// The node of the stored pair (`tag`, `payload`) in the same document as `self`.
    pub(crate) fn with(&self, tag: u8, payload: u64) -> Node<'a> {
        Node { tag, payload, level: 0, start: 0, ..*self }
    }

    pub fn kind(&self) -> Kind {
        match self.tag {
            tag::NULL => Kind::Null,
            tag::FALSE | tag::TRUE => Kind::Bool,
            tag::INT => Kind::Int,
            tag::UINT => Kind::UInt,
            tag::F64 => Kind::F64,
            tag::F32 => Kind::F32,
            tag::STRING => Kind::String,
            tag::BYTES => Kind::Bytes,
            tag::BIGNUM => Kind::BigNum,
            tag::ARRAY => Kind::Array,
            tag::OBJECT => Kind::Object,
            tag::INTMAP => Kind::IntMap,
            tag::PACKED => Kind::Array,
            tag::TABLE => Kind::Table,
            tag::PACKED_OBJECT => Kind::Object,
            _ => Kind::TypedArray,
        }
    }

    /// Byte offset of the block this node points to (0 for inline scalars).
    pub fn offset(&self) -> u64 {
        if tag::is_pointer(self.tag) {
            self.payload
        } else {
            0
        }
    }

    pub(crate) fn buf(&self) -> &'a [u8] {
        self.buf
    }

    /// The stored (tag, payload) pair (spec §3).
    pub(crate) fn tag(&self) -> u8 {
        self.tag
    }

    pub(crate) fn payload(&self) -> u64 {
        self.payload
    }

    /// The key bytes and dictionary this node's object keys resolve in.
    pub(crate) fn key_table(&self) -> (&'a [u8], Dict) {
        (self.keys, self.dict)
    }

    /// Number of keys in the document's dictionary.
    pub(crate) fn key_count(&self) -> u32 {
        self.dict.count()
    }

    pub(crate) fn container(&self) -> Result<Geometry> {
        Geometry::parse(self.buf, self.payload, self.tag)
    }

    fn typed_header(&self) -> Result<TypedHeader> {
        TypedHeader::parse(self.buf, self.payload)
    }

    /// The bytes of the block this value owns, as absolute offsets (spec §§4–5): a
    /// container's header, tags, keys, padding, slots and hash index; a string, bytes or
    /// bignum block's length and content; a typed array's header, padding, data, spare rows
    /// and mask. The blocks of a container's children are not included. `None` for inline
    /// scalars and for the rows and elements of a typed array (its block belongs to the
    /// whole array). Checks the block lies inside the document, as reading it would.
    pub fn block_range(&self) -> Result<Option<std::ops::Range<u64>>> {
        let range = match self.tag {
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                let c = self.container()?;
                c.pos as u64..c.end as u64
            }
            tag::STRING | tag::BYTES | tag::BIGNUM | tag::PACKED | tag::PACKED_OBJECT => {
                self.payload..data::span(self.buf, self.payload)?.1 as u64
            }
            tag::TABLE => self.payload..crate::format::table::TableBlock::parse(self.buf, self.payload)?.end() as u64,
            tag::TYPED if self.level == 0 => self.payload..self.typed_header()?.end() as u64,
            _ => return Ok(None),
        };
        Ok(Some(range))
    }

    /// Number of children (arrays, objects, intmaps) or rows (typed arrays).
    pub fn len(&self) -> Result<usize> {
        match self.tag {
            tag::ARRAY | tag::OBJECT | tag::INTMAP => Ok(self.container()?.count),
            tag::TYPED => Ok(self.typed_header()?.shape[self.level] as usize),
            tag::PACKED | tag::PACKED_OBJECT => self.packed_len(),
            _ => Err(Error::wrong_type("a container", self.kind())),
        }
    }

    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Every key of the document's dictionary, checked once for UTF-8 and for a text held
    /// under two ids (for writers that visit many objects).
    pub(crate) fn dictionary_keys(&self) -> Result<Vec<&'a str>> {
        let mut distinct = crate::format::dictionary::DistinctTexts::for_keys(self.dict.count());
        (0..self.dict.count() as u64)
            .map(|id| {
                let text = self.dict.key_str(self.keys, id)?;
                distinct.claim(text, id, self.dictionary_pos() as u64)?;
                Ok(text)
            })
            .collect()
    }

    /// Child `i` (< count) of the container `c`, which is this node's.
    pub(crate) fn child(&self, c: &Geometry, i: usize) -> Result<Node<'a>> {
        let (t, payload) = c.child(self.buf, i)?;
        Ok(self.with(t, payload))
    }

    /// The error of an object lookup on this node: a packed object has no nodes to step
    /// to (its values are decoded), anything else is the wrong type.
    #[cold]
    fn not_an_object(&self) -> Error {
        if self.tag == tag::PACKED_OBJECT {
            return self.inside_packed();
        }
        Error::wrong_type("an object", self.kind())
    }

    /// The error of a lazy step into a packed array or object: its block's own error if it
    /// is broken, else that its values have no nodes.
    #[cold]
    fn inside_packed(&self) -> Error {
        self.packed_len().err().unwrap_or_else(|| packed::inside_packed(self.payload))
    }

    /// The value under `key` in an object.
    pub fn get(&self, key: &str) -> Result<Node<'a>> {
        if self.tag != tag::OBJECT {
            return Err(self.not_an_object());
        }
        let (tag, payload) = lookup::object_child(self.buf, self.keys, &self.dict, self.payload, key.as_bytes())?;
        Ok(self.with(tag, payload))
    }

    /// The object as a view that has read its header once: repeated lookups in one
    /// object (a map of many entries) then cost only the hash probes.
    pub fn object(&self) -> Result<ObjectView<'a>> {
        if self.tag != tag::OBJECT {
            return Err(self.not_an_object());
        }
        Ok(ObjectView { node: *self, object: lookup::PreparedObject::parse(self.buf, self.payload)? })
    }

    /// The value under integer `key` in an intmap.
    pub fn get_int(&self, key: i64) -> Result<Node<'a>> {
        if self.tag != tag::INTMAP {
            return Err(Error::wrong_type("an intmap", self.kind()));
        }
        let c = self.container()?;
        match c.find(self.buf, key as u64, key as u64)? {
            Some(i) => self.child(&c, i),
            None => Err(Error::not_found(format!("no key {key} in intmap")).at(self.payload)),
        }
    }

    /// Child `i` of an array (or of an object or intmap, in insertion order), or row /
    /// element `i` of a typed array.
    pub fn at(&self, i: usize) -> Result<Node<'a>> {
        match self.tag {
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                let c = self.container()?;
                if i >= c.count {
                    return Err(lookup::out_of_range(i, c.count, self.payload));
                }
                self.child(&c, i)
            }
            tag::TYPED => self.typed_at(i),
            tag::PACKED | tag::PACKED_OBJECT => {
                Err(self.inside_packed())
            }
            _ => Err(Error::wrong_type("an array", self.kind())),
        }
    }

    pub(super) fn typed_at(&self, i: usize) -> Result<Node<'a>> {
        let h = self.typed_header()?;
        let dim = h.shape[self.level] as usize;
        if i >= dim {
            return Err(lookup::out_of_range(i, dim, self.payload));
        }
        let stride = h.stride(self.level);
        if self.level + 1 < h.rank {
            return Ok(Node { level: self.level + 1, start: self.start + i * stride, ..*self });
        }
        let view = TypedRef { buf: self.buf, header: h, level: self.level, start: self.start };
        Ok(self.element_node(view.element_slot(i)))
    }

    /// A typed array's element as a node of its own: an inline scalar.
    pub(super) fn element_node(&self, (t, payload): (u8, u64)) -> Node<'a> {
        self.with(t, payload)
    }

    pub fn is_null(&self) -> bool {
        self.tag == tag::NULL
    }

    pub fn as_bool(&self) -> Result<bool> {
        match self.tag {
            tag::TRUE => Ok(true),
            tag::FALSE => Ok(false),
            _ => Err(Error::wrong_type("a bool", self.kind())),
        }
    }

    pub fn as_i64(&self) -> Result<i64> {
        match self.tag {
            tag::INT => Ok(self.payload as i64),
            tag::UINT if self.payload <= i64::MAX as u64 => Ok(self.payload as i64),
            _ => Err(Error::wrong_type("an integer in i64", self.kind())),
        }
    }

    pub fn as_u64(&self) -> Result<u64> {
        match self.tag {
            tag::INT if (self.payload as i64) >= 0 => Ok(self.payload),
            tag::UINT => Ok(self.payload),
            _ => Err(Error::wrong_type("an integer in u64", self.kind())),
        }
    }

    /// A float; f32 widens, and integers convert when exactly representable.
    pub fn as_f64(&self) -> Result<f64> {
        match self.tag {
            tag::F64 => Ok(f64::from_bits(self.payload)),
            tag::F32 => Ok(f32::from_bits(self.payload as u32) as f64),
            tag::INT if (self.payload as i64).unsigned_abs() <= 1 << 53 => Ok(self.payload as i64 as f64),
            tag::UINT if self.payload <= 1 << 53 => Ok(self.payload as f64),
            _ => Err(Error::wrong_type("a number representable as f64", self.kind())),
        }
    }

    pub fn as_f32(&self) -> Result<f32> {
        match self.tag {
            tag::F32 => Ok(f32::from_bits(self.payload as u32)),
            _ => Err(Error::wrong_type("an f32", self.kind())),
        }
    }

    #[inline]
    fn data_block(&self, expected_tag: u8, what: &'static str) -> Result<&'a [u8]> {
        if self.tag != expected_tag {
            return Err(Error::wrong_type(what, self.kind()));
        }
        data::block(self.buf, self.payload)
    }

    /// A string, borrowed from the document.
    #[inline]
    pub fn as_str(&self) -> Result<&'a str> {
        let bytes = self.data_block(tag::STRING, "a string")?;
        data::text(bytes, self.payload)
    }

    /// A bytes value, borrowed from the document.
    pub fn as_bytes(&self) -> Result<&'a [u8]> {
        self.data_block(tag::BYTES, "bytes")
    }

    /// A big integer's decimal digits, borrowed from the document.
    pub fn as_bignum(&self) -> Result<&'a str> {
        let bytes = self.data_block(tag::BIGNUM, "a bignum")?;
        let valid = is_bignum_text(bytes);
        std::str::from_utf8(bytes)
            .ok()
            .filter(|_| valid)
            .ok_or_else(|| Error::malformed(self.payload, "bignum is not decimal digits"))
    }

    /// A table (spec §15), read in place.
    pub fn table(&self) -> Result<crate::table::TableRef<'a>> {
        if self.tag != tag::TABLE {
            return Err(Error::wrong_type("a table", self.kind()));
        }
        crate::table::TableRef::in_document(self.buf, self.payload)
    }

    /// A typed array (or a row of one) as a borrowed view.
    pub fn typed(&self) -> Result<TypedRef<'a>> {
        if self.tag != tag::TYPED {
            return Err(Error::wrong_type("a typed array", self.kind()));
        }
        Ok(TypedRef { buf: self.buf, header: self.typed_header()?, level: self.level, start: self.start })
    }

    /// A typed array's elements as a Rust slice, without copying.
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        // A whole one-dimensional array of `T` (most are): its bytes, without a header
        // struct; anything else, and every error, the general way.
        if self.tag == tag::TYPED && self.level == 0 {
            if let Some(slice) = typed::rank1_slice(self.buf, self.payload) {
                return Ok(slice);
            }
        }
        self.typed()?.as_slice()
    }

    /// The children of an array, or the values of an object or intmap, in order.
    pub fn iter(&self) -> Result<Children<'a>> {
        match self.tag {
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                Ok(Children { node: *self, container: Some(self.container()?), typed_len: 0, next: 0 })
            }
            tag::TYPED => Ok(Children { node: *self, container: None, typed_len: self.len()?, next: 0 }),
            tag::PACKED | tag::PACKED_OBJECT => {
                Err(self.inside_packed())
            }
            _ => Err(Error::wrong_type("an array", self.kind())),
        }
    }

    /// The (key, value) pairs of an object, in insertion order.
    pub fn entries(&self) -> Result<Entries<'a>> {
        if self.tag != tag::OBJECT {
            return Err(self.not_an_object());
        }
        Ok(Entries { node: *self, container: self.container()?, next: 0 })
    }

    /// The (key, value) pairs of an intmap, in insertion order.
    pub fn int_entries(&self) -> Result<IntEntries<'a>> {
        if self.tag != tag::INTMAP {
            return Err(Error::wrong_type("an intmap", self.kind()));
        }
        Ok(IntEntries { node: *self, container: self.container()?, next: 0 })
    }

    /// What visiting this node costs against a `Budget`: its block's length for data
    /// blocks (an upper bound read from its header), 1 for everything else.
    pub(crate) fn visit_cost(&self) -> u64 {
        match self.tag {
            tag::STRING | tag::BYTES | tag::BIGNUM => {
                data::block(self.buf, self.payload).map_or(1, |b| Budget::block_cost(b.len()))
            }
            tag::TYPED if self.level == 0 => self.typed_header().map_or(1, |h| Budget::typed_header_cost(&h)),
            tag::TABLE => {
                crate::format::table::TableBlock::parse(self.buf, self.payload).map_or(1, |t| Budget::block_cost(t.len))
            }
            // Rows of a typed array were paid for with the whole array.
            tag::TYPED => 0,
            _ => 1,
        }
    }

    pub(crate) fn key_str(&self, id: u64) -> Result<&'a str> {
        self.dict.key_str(self.keys, id)
    }

    /// Where the key dictionary starts, in the bytes its keys are read from.
    pub(crate) fn dictionary_pos(&self) -> usize {
        self.dict.pos()
    }
}

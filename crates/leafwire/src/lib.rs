//! Leafwire: a self-describing binary format for leafy trees — JSON-like metadata around
//! big flat arrays — read lazily and without copying.
//!
//! ```
//! let bytes = leafwire::json::from_json(br#"{"name": "mesh", "xs": [0.5, 1.5, 2.5]}"#)?;
//! let doc = leafwire::Document::open(&bytes)?;
//! assert_eq!(doc.pointer("/name")?.as_str()?, "mesh");
//! let xs = doc.pointer("/xs")?.typed()?.to_typed_array();
//! assert_eq!(xs.len(), 3);
//! # Ok::<(), leafwire::Error>(())
//! ```
//!
//! The format is specified in `spec/SPEC.md`. Entry points:
//! - serde: [`to_vec`], [`to_writer`], [`from_slice`];
//! - dynamic values: [`Value`], [`encode`], [`decode`]; [`decode_borrowed`] into a
//!   [`ValueRef`] that borrows from the bytes (the fastest whole read);
//! - lazy reading: [`Document`], [`Node`], [`MappedFile`];
//! - JSON: [`json::from_json`], [`json::to_json`] ([`json::from_json_to_writer`] streams);
//! - rewriting a document canonically with bounded memory: [`recode_to_writer`];
//! - checking untrusted input: [`validate`];
//! - many messages over a file, pipe or socket: [`stream`] (spec §14).

mod arena;
mod blocks;
mod builder;
mod de;
mod decode;
pub mod direct;
mod edit;
mod encoder;
mod error;
mod file;
pub mod format;
pub mod json;
pub mod map;
mod node_serde;
// Packed mode's building blocks (issue 12: codecs and shredding); the column group writer
// and reader that call them come next, until then only their tests do.
#[allow(dead_code)]
mod packed;
pub use packed::{ColumnSize, PackOptions, PathStep, Stream};
pub mod raw;
mod read;
mod recode;
mod ser;
pub mod stream;
pub mod table;
mod table_de;
#[cfg(feature = "arrow")]
mod table_arrow;
#[cfg(test)]
mod testing;
/// The Arrow crates the `arrow` feature converts tables to (`Table::into_record_batch`).
#[cfg(feature = "arrow")]
pub use {arrow_array, arrow_buffer, arrow_schema};
mod typed_de;
mod validate;
mod value;
mod value_ref;
mod value_de;
mod value_serde;

pub use builder::DuplicateKeys;
pub use edit::{Editor, Number, Trust, DEFAULT_COMPACT_MIN_GARBAGE, DEFAULT_COMPACT_THRESHOLD};
pub use encoder::{Encoder, KeyId};
pub use error::{Category, Error, Position, Result};
pub use file::{AlignedBytes, MappedFile};
pub use format::header::RootRecord;
pub use format::{ElementType, DEFAULT_MAX_DEPTH};
pub use read::{Children, Document, Element, Entries, IntEntries, Node, ObjectView, Pointer, TablePart, TypedRef};
pub use recode::recode_to_writer;
pub use table::{ColumnBuilder, ColumnRef, ColumnType, Table, TableBuilder, TableRef, Unit};
pub use validate::{validate, validate_with, Stats, ValidateOptions};
pub use value::{IntMap, Kind, Map, TypedArray, TypedData, Value};
pub use value_ref::ValueRef;
pub use arena::{Arena, Borrowed};

/// The fuzzing entry of packed mode's page codecs (`fuzz/fuzz_targets/packed_page.rs`):
/// panics exactly when a decoder misbehaves. Not part of the API.
#[doc(hidden)]
pub fn __fuzz_packed_page(data: &[u8]) {
    packed::fuzz::page(data)
}

/// Serializes any `Serialize` value to Leafwire bytes.
pub fn to_vec<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    serialized(value)?.encode()
}

/// The finished builder of a `Serialize` value: its plan, ready to lay out or read back.
fn serialized<T: serde::Serialize + ?Sized>(value: &T) -> Result<builder::Builder> {
    let mut b = builder::Builder::reused(DEFAULT_MAX_DEPTH);
    value.serialize(ser::ValueSerializer { b: &mut b, key: 0 })?;
    b.finish()
}

/// Serializes any `Serialize` value as Leafwire into `writer`.
pub fn to_writer<W: std::io::Write, T: serde::Serialize + ?Sized>(mut writer: W, value: &T) -> Result<()> {
    writer.write_all(&to_vec(value)?)?;
    Ok(())
}

/// Deserializes any `Deserialize` type from Leafwire bytes; `&str` and `&[u8]` fields
/// borrow from `bytes`.
pub fn from_slice<'de, T: serde::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T> {
    if is_packed_document(bytes) {
        return Err(Error::new(
            Category::Unsupported,
            "a packed document (spec §13) decodes to owned values: read it with `leafwire::from_slice_owned`",
        ));
    }
    deserialize_document(bytes)
}

/// `T` from the document in `bytes`, through the node deserializer.
fn deserialize_document<'de, T: serde::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T> {
    let doc = Document::open(bytes)?;
    let root = doc.root();
    let ctx = de::Ctx::new(&root)?;
    T::deserialize(de::NodeDeserializer::root(&ctx))
}

/// Deserializes an owned value from a document in either mode: a packed array's elements
/// (spec §13) are read from its columns, each string copied out of its decoded page as
/// the element takes it (no `Value` or ordinary document is built); the rest is read as
/// [`from_slice`] reads it.
pub fn from_slice_owned<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    deserialize_document(bytes)
}

/// Deserializes a `T` from a [`Value`], moving its strings, byte strings and arrays into
/// `T` (the counterpart of `serde_json::from_value`). Enums and options read as
/// [`to_vec`] writes them.
pub fn from_value<T: serde::de::DeserializeOwned>(value: Value) -> Result<T> {
    T::deserialize(value)
}

/// Serializes any `Serialize` value into a [`Value`]: the value [`decode`] would give of
/// [`to_vec`]'s bytes (the same mapping: `Vec<f64>` a typed array, integer-keyed maps
/// intmaps, enums externally tagged), without laying out a document.
pub fn to_value<T: serde::Serialize + ?Sized>(value: &T) -> Result<Value> {
    let mut sink = direct::ValueSink::default();
    serialized(value)?.plan_into(&mut sink)?;
    Ok(sink.value.expect("a finished plan has a value"))
}

/// Serializes any `Serialize` value in packed mode (spec §13): its large arrays of
/// records and numbers shredded into compressed columns. Read it back with
/// [`from_slice_owned`].
pub fn to_vec_packed<T: serde::Serialize + ?Sized>(value: &T, options: &PackOptions) -> Result<Vec<u8>> {
    // Through the ordinary document and its borrowed tree rather than a `Value`: its
    // strings and keys are not allocated one by one, nor freed after (a third of the
    // packed encode of GraphQL orders, spec/design/packed.md §7.3).
    pack(&to_vec(value)?, options)
}

/// Finishes, in `bytes` (a whole file's contents), a commit that a crash interrupted
/// (spec §8.5): when the active root record names a redo journal, applies it and clears
/// the flag, so that the bytes read as the committed document. Returns whether there was
/// one. [`MappedFile::open`], [`AlignedBytes::read_file`], [`Editor::new`] and
/// [`Editor::open_file`] do this themselves; readers of borrowed bytes ([`Document::open`],
/// [`decode`], [`validate`]) refuse such bytes with a `Category::Unsupported` error.
pub fn finish_interrupted_commit(bytes: &mut [u8]) -> Result<bool> {
    format::journal::finish(bytes)
}

/// Adds page checksums (spec §2.3) to an encoded document: a CRC-32 per 4 KiB page, which
/// [`validate`] checks (a flipped bit is reported with its page's offset) and editors keep
/// true. Files the CLI and Python's `dump` write carry them; documents without them stay
/// exactly the canonical encoding. The cost: 4 bytes per 4 KiB plus 40 bytes.
pub fn add_checksums(doc: &mut Vec<u8>) -> Result<()> {
    format::integrity::seal(doc)
}

/// Encodes a `Value` canonically (nesting up to `DEFAULT_MAX_DEPTH`).
pub fn encode(value: &Value) -> Result<Vec<u8>> {
    encode_with(value, DEFAULT_MAX_DEPTH)
}

/// Encodes a `Value` canonically, accepting nesting up to `max_depth` containers.
pub fn encode_with(value: &Value, max_depth: usize) -> Result<Vec<u8>> {
    direct::encode_value(value, max_depth, None)
}

/// Encodes a `Value` in packed mode (spec §13): every outermost array that holds at least
/// 64 scalars is shredded into columns and compressed, and reads back as the same array.
/// Smaller, still randomly accessible by element; not zero-copy and not editable in place.
pub fn encode_packed(value: &Value, options: &PackOptions) -> Result<Vec<u8>> {
    direct::encode_value(value, DEFAULT_MAX_DEPTH, Some(options))
}

/// Whether a document's header says it holds packed arrays (feature bit 0, spec §13).
pub fn is_packed_document(bytes: &[u8]) -> bool {
    bytes.len() >= format::HEADER_LEN && format::header::flags(bytes) & format::FLAG_PACKED != 0
}

/// The document in `bytes` in packed mode: the bytes [`encode_packed`] gives of its value,
/// read from the document's borrowed tree ([`decode_borrowed`]) rather than from an owned
/// `Value`. A document that is already packed is decoded and packed again (with
/// `options`). The counterpart of [`unpack`].
pub fn pack(bytes: &[u8], options: &PackOptions) -> Result<Vec<u8>> {
    pack_with(bytes, DEFAULT_MAX_DEPTH, options)
}

/// [`pack`] of a document read with nesting up to `max_depth` containers (its packed
/// form is written with the default limit, as [`encode_packed`] writes it).
pub fn pack_with(bytes: &[u8], max_depth: usize, options: &PackOptions) -> Result<Vec<u8>> {
    if is_packed_document(bytes) {
        return encode_packed(&decode_with(bytes, max_depth)?, options);
    }
    let document = Document::open(bytes)?;
    let tree = Borrowed::decode(&document.root(), bytes.len(), max_depth)?;
    direct::encode_input(tree.root(), DEFAULT_MAX_DEPTH, Some(options))
}

/// A packed document (spec §13) rewritten as the ordinary document of the same value:
/// what a reader that wants nodes everywhere (lazy access, zero-copy arrays, editing)
/// opens instead.
pub fn unpack(bytes: &[u8]) -> Result<Vec<u8>> {
    encode(&decode(bytes)?)
}

/// Decodes a whole document into a `Value` (nesting up to `DEFAULT_MAX_DEPTH`).
pub fn decode(bytes: &[u8]) -> Result<Value> {
    Document::open(bytes)?.root().to_value()
}

/// Decodes a whole document into a [`ValueRef`] tree that borrows its strings, keys,
/// bytes and typed arrays from `bytes` and keeps its containers in an arena of its own:
/// the fast way to read all of a document (nesting up to `DEFAULT_MAX_DEPTH`).
///
/// ```
/// let bytes = leafwire::json::from_json(br#"{"a": ["x", {"y": null}]}"#)?;
/// let tree = leafwire::decode_borrowed(&bytes)?;
/// let leafwire::ValueRef::Array(items) = tree.root().get("a").unwrap() else { panic!() };
/// assert_eq!(items.len(), 2);
/// # Ok::<(), leafwire::Error>(())
/// ```
pub fn decode_borrowed(bytes: &[u8]) -> Result<Borrowed<'_>> {
    // A tree takes about as many bytes as its document: one chunk, grown rarely.
    Borrowed::decode(&Document::open(bytes)?.root(), bytes.len(), DEFAULT_MAX_DEPTH)
}

/// As [`decode_borrowed`], with the containers in `arena`: decoding many documents into
/// one arena, [`Arena::reset`] between them, reuses its memory.
pub fn decode_borrowed_in<'t>(bytes: &'t [u8], arena: &'t Arena) -> Result<ValueRef<'t>> {
    Document::open(bytes)?.root().to_value_ref(arena)
}

/// Decodes a whole document into a `Value`, accepting nesting up to `max_depth`.
pub fn decode_with(bytes: &[u8], max_depth: usize) -> Result<Value> {
    Document::open(bytes)?.root().to_value_with(max_depth)
}

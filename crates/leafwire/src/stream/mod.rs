//! Streams (spec §14): many messages, one after another, over any transport that is read
//! front to back — a file, a pipe, a TCP or Unix socket, memory.
//!
//! ```
//! use leafwire::stream::{StreamWriter, SliceReader};
//! let mut w = StreamWriter::new(Vec::new())?;
//! for i in 0..3 {
//!     w.write(&vec![i as f64; 4])?;
//! }
//! let bytes = w.into_inner()?;
//! let mut r = SliceReader::new(&bytes)?;
//! while let Some(frame) = r.next_frame() {
//!     let xs: Vec<f64> = frame?.deserialize()?;
//!     assert_eq!(xs.len(), 4);
//! }
//! # Ok::<(), leafwire::Error>(())
//! ```
//!
//! A message costs its payload and a few bytes: an `f64` is 10 bytes, a few numbers of one
//! type (at most 64 bytes of them) are a vector frame of 2 bytes plus the numbers, object
//! keys are sent once per stream and referred to by id. A message with containers is laid
//! out as a document's sections, so a [`Frame`] is read lazily, as a
//! [`Document`](crate::Document) is, and typed arrays are slices of the reader's buffer
//! (a vector frame's numbers are copied into the reader's own aligned memory first).
//!
//! With the feature `tokio`, [`AsyncStreamWriter`] and [`AsyncStreamReader`] do the same over
//! Tokio's `AsyncWrite` and `AsyncRead`: the same bytes, bounds and errors (they drive the
//! blocking writer and the readers' parser), the awaits where the I/O is.
//!
//! ```
//! # #[cfg(feature = "tokio")]
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use leafwire::stream::{AsyncStreamReader, AsyncStreamWriter};
//! let (sink, source) = tokio::io::duplex(1 << 16);    // a TcpStream, a UnixStream...
//! let mut w = AsyncStreamWriter::new(sink)?;
//! for i in 0..3 {
//!     w.write(&vec![i as f64; 4]).await?;
//! }
//! drop(w.into_inner().await?);                         // flushed; the reader sees the end
//! let mut r = AsyncStreamReader::new(source).await?;
//! while let Some(frame) = r.next_frame().await {
//!     let xs: Vec<f64> = frame?.deserialize()?;
//!     assert_eq!(xs.len(), 4);
//! }
//! # Ok::<(), leafwire::Error>(())
//! # }).unwrap();
//! ```

#[cfg(feature = "tokio")]
mod async_read;
#[cfg(feature = "tokio")]
mod async_write;
mod fast;
mod owned;
mod read;
mod write;

#[cfg(feature = "tokio")]
pub use async_read::AsyncStreamReader;
#[cfg(feature = "tokio")]
pub use async_write::AsyncStreamWriter;
pub use owned::{OwnedFrame, SharedKeys};
pub use read::{Deserialized, SliceReader, StreamReader, Values};
pub use write::StreamWriter;

use crate::error::Result;
use crate::format::stream as fs;
use crate::read::{Node, Pointer};
use crate::value::Value;
use crate::value_ref::ValueRef;

/// The default buffer size: 64 KiB less 64 bytes. Over loopback TCP, Linux sends at most
/// two segments of half the peer's window (2 × 32,741 bytes with default settings) per
/// 64 KiB; a write just over that leaves a third segment of a few bytes, and costs 2-5×
/// the kernel time per byte of one just under it (bench/scripts/loopback_writes.py). The
/// writer's writes are at most one buffer, so this size keeps them under.
pub const DEFAULT_BUFFER_SIZE: usize = (64 << 10) - 64;

/// Options of a stream's writer and reader.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Writer: how many bytes gather before one write to the sink. Reader: the least it
    /// asks of one read. Default [`DEFAULT_BUFFER_SIZE`], 64 KiB less 64 bytes.
    pub buffer_size: usize,
    /// Writer: end every frame with a CRC-32 (4 bytes a frame; the reader then detects a
    /// damaged frame and can skip it). Default off.
    pub crc: bool,
    /// The largest frame body, in bytes: the writer refuses larger messages, the reader
    /// larger frames (before allocating anything). Default 64 MiB.
    pub max_frame: u64,
    /// Bounds of the key table: the writer sends a reset frame rather than pass them, the
    /// reader refuses a stream that does. Defaults 2^20 keys, 64 MiB of key bytes.
    pub max_keys: usize,
    pub max_key_bytes: usize,
    /// Writer: the deepest nesting a message may have. Default 128.
    pub max_depth: usize,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            buffer_size: DEFAULT_BUFFER_SIZE,
            crc: false,
            max_frame: fs::DEFAULT_MAX_FRAME,
            max_keys: fs::DEFAULT_MAX_KEYS,
            max_key_bytes: fs::DEFAULT_MAX_KEY_BYTES,
            max_depth: crate::DEFAULT_MAX_DEPTH,
        }
    }
}

/// One message of a stream, read in place: it borrows its reader's buffer and key table.
/// Byte offsets in errors from its nodes count from [`origin`](Self::origin); the whole-value
/// methods here report stream offsets.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    root: Node<'a>,
    origin: u64,
    offset: u64,
    /// The reader's count of key-table changes when the frame was read.
    keys_version: u64,
}

impl<'a> Frame<'a> {
    /// The message's root value.
    pub fn root(&self) -> Node<'a> {
        self.root
    }

    /// The value at a JSON Pointer in the message.
    pub fn pointer(&self, pointer: &str) -> Result<Node<'a>> {
        self.root.pointer(pointer).map_err(|e| e.shifted(self.origin))
    }

    /// The value at a prepared pointer.
    pub fn resolve(&self, pointer: &Pointer) -> Result<Node<'a>> {
        self.root.resolve(pointer).map_err(|e| e.shifted(self.origin))
    }

    /// The bytes the frame's offsets count in: the stream from [`origin`](Self::origin) to
    /// the frame's end (its root's blocks are in there; what precedes the frame is not
    /// part of it). For a vector frame (spec §14.5), the reader's own copy of the message
    /// laid out as a typed-array frame.
    pub fn bytes(&self) -> &'a [u8] {
        self.root.buf()
    }

    /// The stream offset of the frame (its length field).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The stream offset the frame's block offsets count from (spec §14.3: 112 bytes before
    /// the multiple of 8 at or before its body).
    pub fn origin(&self) -> u64 {
        self.origin
    }

    /// The whole message as a `Value`.
    pub fn to_value(&self) -> Result<Value> {
        self.root.to_value().map_err(|e| e.shifted(self.origin))
    }

    /// The whole message as a tree borrowing from the reader's buffer, its containers in
    /// `arena` (reset it between messages to reuse its memory).
    pub fn to_value_ref<'t>(&self, arena: &'t crate::Arena) -> Result<ValueRef<'t>>
    where
        'a: 't,
    {
        self.root.to_value_ref(arena).map_err(|e| e.shifted(self.origin))
    }

    /// The message deserialized as `T`; `&str` and `&[u8]` fields borrow from the buffer.
    pub fn deserialize<T: serde::Deserialize<'a>>(&self) -> Result<T> {
        let ctx = crate::de::Ctx::new(&self.root).map_err(|e| e.shifted(self.origin))?;
        T::deserialize(crate::de::NodeDeserializer::root(&ctx)).map_err(|e| e.shifted(self.origin))
    }

    /// The message as compact JSON text (spec §11).
    pub fn to_json(&self) -> Result<String> {
        crate::json::to_json_node(&self.root).map_err(|e| e.shifted(self.origin))
    }

    /// The message as JSON text appended to `writer`.
    pub fn write_json<W: std::io::Write>(&self, writer: W) -> Result<()> {
        crate::json::write_json_node(&self.root, writer).map_err(|e| e.shifted(self.origin))
    }
}

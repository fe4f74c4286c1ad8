//! Reading streams (spec §14): one frame parser, under a reader over any `Read` (which
//! refills an 8-aligned buffer with large reads) and a reader over a byte slice (which
//! never copies, but for the at most 64 bytes of a vector frame, §14.5).
//!
//! Both are *lending*: a frame borrows the reader (its bytes and the key table), so the
//! next call waits until the frame is dropped. For owned results, `values()` and
//! `deserialize()` are plain iterators.

use std::io::Read;

use super::{Frame, StreamOptions};
use crate::error::{Category, Error, Result};
use crate::format::dictionary::GrowingDict;
use crate::format::stream as fs;
use crate::format::ElementType;
use crate::read::{Element, Node};

/// What the parser found at a frame boundary.
enum Step {
    /// The window ends before the frame does: it needs bytes up to this index.
    NeedMore(usize),
    /// A value frame: its section is `window[origin..end]`, its root (tag, payload).
    Value { origin: usize, end: usize, tag: u8, payload: u64, next: usize },
    /// A vector frame: its elements are `window[data..data + len]`.
    Vector { element: ElementType, data: usize, len: usize, next: usize },
    /// A keys or reset frame, applied to the table.
    Control { next: usize },
}

/// A message found by a reader: where it lies in the reader's window, and the window index
/// of its frame.
#[derive(Clone, Copy)]
pub(super) enum Found {
    Value { origin: usize, end: usize, tag: u8, payload: u64, at: usize },
    Vector { element: ElementType, data: usize, len: usize, at: usize },
}

impl Found {
    /// The message of a value or vector step at window index `*at`, moving `*at` past it.
    #[inline(always)]
    fn take(step: Step, at: &mut usize) -> Found {
        let frame = *at;
        match step {
            Step::Value { origin, end, tag, payload, next } => {
                *at = next;
                Found::Value { origin, end, tag, payload, at: frame }
            }
            Step::Vector { element, data, len, next } => {
                *at = next;
                Found::Vector { element, data, len, at: frame }
            }
            Step::NeedMore(_) | Step::Control { .. } => unreachable!("the readers handle these steps themselves"),
        }
    }
}

/// The frame parser and the key table: everything but where the bytes come from.
struct Parser {
    flags: u16,
    options: StreamOptions,
    table: GrowingDict,
    /// A frame was skipped that may have held keys: block roots are refused until a reset
    /// frame makes the table known again.
    table_unknown: bool,
    /// Counts the changes to the table (keys and reset frames), so that a copy of it can
    /// tell whether it is still current (`Frame::to_owned_sharing`).
    keys_version: u64,
}

/// Where a reader stands after an error.
#[derive(Clone, Copy)]
enum Failed {
    No,
    /// At the frame at this stream offset, whose end (the next frame) is known: `skip`
    /// may go on from there; `may_hold_keys` if it may have been a keys frame.
    Skippable {
        next: u64,
        may_hold_keys: bool,
    },
    /// Nothing follows that can be read (I/O error, torn frame, bad header).
    Done,
}

impl Parser {
    fn new(flags: u16, options: StreamOptions) -> Parser {
        Parser { flags, options, table: GrowingDict::default(), table_unknown: false, keys_version: 0 }
    }

    fn crc_len(&self) -> usize {
        if self.flags & fs::FLAG_CRC != 0 {
            fs::CRC_LEN
        } else {
            0
        }
    }

    /// Parses the frame at `window[at..]`, `base` being the stream offset of `window[0]` (a
    /// multiple of 8). On an error, also says whether and where reading may go on.
    #[inline(always)]
    fn step(&mut self, window: &[u8], base: u64, at: usize) -> Result<Step, (Error, Failed)> {
        let frame_at = base + at as u64;
        let done = |e: Error| (e, Failed::Done);
        let Some((len, width)) = fs::frame_length(&window[at..], frame_at, self.options.max_frame).map_err(done)?
        else {
            return Ok(Step::NeedMore(at + 10));
        };
        let body = at + width;
        // `len` ≤ max_frame, which fits memory (the options say so).
        let end = body + len as usize;
        let next = end + self.crc_len();
        if window.len() < next {
            return Ok(Step::NeedMore(next));
        }
        let skippable = |may_hold_keys: bool| Failed::Skippable { next: base + next as u64, may_hold_keys };
        if self.crc_len() != 0 {
            let stored = u32::from_le_bytes(window[end..next].try_into().unwrap());
            if fs::crc(&window[at..end]) != stored {
                return Err((Error::malformed(frame_at, "frame checksum mismatch"), skippable(true)));
            }
        }
        let kind = window[body];
        let body_at = base + body as u64;
        if fs::is_value(kind) {
            if fs::is_scalar(kind) {
                let payload =
                    fs::scalar_payload(kind, &window[body + 1..end], body_at).map_err(|e| (e, skippable(false)))?;
                return Ok(Step::Value { origin: body, end, tag: kind, payload, next });
            }
            if self.table_unknown {
                let e = Error::malformed(frame_at, "a frame after a skipped frame that may have held keys: its keys are unknown until the next reset frame");
                return Err((e, skippable(false)));
            }
            // The section from its offset 0, 112 bytes before the origin: a reader keeps
            // them in its window (the stream header alone is that long).
            let origin = fs::origin(body_at) - fs::SECTION_BASE - base;
            let payload = fs::root_offset(kind, fs::section_start(body_at));
            return Ok(Step::Value { origin: origin as usize, end, tag: kind, payload, next });
        }
        if let Some(element) = fs::vector_element(kind) {
            let len = end - (body + 1);
            fs::check_vector(element, &window[body + 1..end], body_at).map_err(|e| (e, skippable(false)))?;
            return Ok(Step::Vector { element, data: body + 1, len, next });
        }
        match kind {
            fs::KIND_KEYS => {
                self.add_keys(&window[body + 1..end], body_at).map_err(|e| (e, skippable(true)))?;
                self.keys_version += 1;
                Ok(Step::Control { next })
            }
            fs::KIND_RESET if len == 1 => {
                self.table.clear();
                self.table_unknown = false;
                self.keys_version += 1;
                Ok(Step::Control { next })
            }
            fs::KIND_RESET => Err((Error::malformed(body_at, "a reset frame with a body"), skippable(false))),
            _ => Err((
                Error::new(Category::Unsupported, format!("reserved frame kind 0x{kind:02x}")).at(body_at),
                skippable(true),
            )),
        }
    }

    fn add_keys(&mut self, rest: &[u8], body_at: u64) -> Result<()> {
        let keys = fs::parse_keys(rest, body_at)?;
        let bytes: usize = keys.iter().map(|k| k.len()).sum();
        if self.table.len() + keys.len() > self.options.max_keys
            || self.table.key_bytes() + bytes > self.options.max_key_bytes
        {
            return Err(Error::new(
                Category::LimitExceeded,
                "the stream's key table passes the reader's bounds (raise max_keys / max_key_bytes)",
            )
            .at(body_at));
        }
        // Checked before any is added, so a refused frame leaves the table as it was.
        let mut seen = rustc_hash::FxHashSet::default();
        for key in &keys {
            if self.table.contains(key) || !seen.insert(*key) {
                return Err(Error::malformed(
                    body_at,
                    format!("keys frame: key \"{}\" is already in the table", String::from_utf8_lossy(key)),
                ));
            }
        }
        for key in keys {
            self.table.push(key);
        }
        Ok(())
    }

    fn frame<'a>(
        &'a self,
        window: &'a [u8],
        base: u64,
        origin: usize,
        end: usize,
        tag: u8,
        payload: u64,
        frame_at: u64,
    ) -> Frame<'a> {
        let section = &window[origin..end];
        let root = Node::frame_root(section, self.table.bytes(), self.table.dict(), tag, payload);
        Frame { root, origin: base + origin as u64, offset: frame_at, keys_version: self.keys_version }
    }

    /// The frame of a message found in `window` (whose first byte is at stream offset
    /// `base`).
    #[inline(always)]
    fn found_frame<'a>(&'a self, room: &'a mut VectorRoom, window: &'a [u8], base: u64, found: Found) -> Frame<'a> {
        match found {
            Found::Value { origin, end, tag, payload, at } => {
                self.frame(window, base, origin, end, tag, payload, base + at as u64)
            }
            Found::Vector { element, data, len, at } => {
                self.vector_frame(room, element, &window[data..data + len], base + data as u64, base + at as u64)
            }
        }
    }

    /// The message found in `window` as a slice of `T` (see `StreamReader::next_slice`).
    #[inline(always)]
    fn found_slice<'a, T: Element>(
        &'a self,
        room: &'a mut VectorRoom,
        window: &'a [u8],
        base: u64,
        found: Found,
    ) -> Result<&'a [T]> {
        if let Found::Vector { element, data, len, at } = found {
            if element != T::TYPE {
                return Err(Error::new(
                    Category::WrongType,
                    format!("a vector frame of {}, not {}", element.name(), T::TYPE.name()),
                )
                .at(base + at as u64));
            }
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut room.0);
            // SAFETY: a vector frame holds at most VECTOR_MAX_BYTES < the room's length.
            unsafe { crate::format::numbers::copy_short(bytes.as_mut_ptr(), &window[data..data + len]) };
            return Ok(bytemuck::cast_slice(&bytes[..len]));
        }
        if let Found::Value { origin, end, tag: crate::format::tag::TYPED, payload, .. } = found {
            // A whole one-dimensional array of `T` (what a slice was sent as): its bytes in
            // place, without building the frame's root; anything else the general way.
            if let Some(slice) = crate::read::typed::rank1_slice(&window[origin..end], payload) {
                return Ok(slice);
            }
        }
        let frame = self.found_frame(room, window, base, found);
        frame.root().as_slice::<T>().map_err(|e| e.shifted(frame.origin()))
    }

    /// The frame of a vector frame whose elements are `data`, at stream offset `data_at`:
    /// laid out in `room` as the typed array's section (spec §14.5).
    #[inline(always)]
    fn vector_frame<'a>(
        &'a self,
        room: &'a mut VectorRoom,
        element: ElementType,
        data: &[u8],
        data_at: u64,
        frame_at: u64,
    ) -> Frame<'a> {
        let bytes: &mut [u8; fs::VECTOR_SECTION_BYTES] =
            bytemuck::cast_slice_mut::<u64, u8>(&mut room.0).try_into().expect("the room's size");
        let (end, root_at) = fs::vector_section(bytes, element, data);
        let section = &bytes[..end];
        let root = Node::frame_root(section, self.table.bytes(), self.table.dict(), crate::format::tag::TYPED, root_at);
        // Offsets in the section map to the stream where they matter, at the elements
        // (but for a frame in the first 14 bytes after the stream header, whose elements
        // lie before section offset 128: its offsets then count from 0).
        let origin = data_at.saturating_sub((end - data.len()) as u64);
        Frame { root, origin, offset: frame_at, keys_version: self.keys_version }
    }
}

/// 8-aligned memory of a reader's own, where a vector frame's elements are copied to be
/// read as an aligned typed array (spec §14.5: at most 64 bytes).
struct VectorRoom([u64; fs::VECTOR_SECTION_BYTES / 8]);

impl Default for VectorRoom {
    fn default() -> Self {
        VectorRoom([0; fs::VECTOR_SECTION_BYTES / 8])
    }
}

/// What a buffered reader does next ([`Window::advance`]).
pub(super) enum Advance {
    /// A message, where it lies in the window.
    Found(Found),
    /// The window needs the bytes up to this index: the reader reads into
    /// [`Window::spare`] and advances again.
    Refill(usize),
    /// An error; the window says where reading may go on ([`Window::skip`]).
    Failed(Error),
    /// The end of the stream, or of what can be read after an error.
    End,
}

/// A reader's buffer of the stream and its parser: all of a buffered reader but the source,
/// so that the blocking reader and the async one (feature `tokio`) only differ in how they
/// read. Frames are parsed in 8-aligned memory refilled with reads of at least
/// [`StreamOptions::buffer_size`].
pub(super) struct Window {
    /// 8-aligned storage; `filled` bytes of it hold the stream from offset `base`.
    words: Vec<u64>,
    filled: usize,
    base: u64,
    /// Index of the next frame in the buffer.
    at: usize,
    eof: bool,
    parser: Parser,
    failed: Failed,
    room: VectorRoom,
}

impl Window {
    pub(super) fn new(options: StreamOptions) -> Window {
        Window {
            // Room for a whole buffer size and the at most 120 bytes kept before a frame
            // (see `spare`).
            words: vec![0u64; (options.buffer_size.max(64) + fs::SECTION_BASE as usize + 8).div_ceil(8)],
            filled: 0,
            base: 0,
            at: 0,
            eof: false,
            parser: Parser::new(0, options),
            failed: Failed::No,
            room: VectorRoom::default(),
        }
    }

    /// Whether the stream header is still to be read (into `spare(fs::HEADER_LEN)`).
    pub(super) fn lacks_header(&self) -> bool {
        self.filled < fs::HEADER_LEN && !self.eof
    }

    /// Checks the stream header; frames follow it.
    pub(super) fn read_header(&mut self) -> Result<()> {
        self.parser.flags = fs::parse_header(&bytemuck::cast_slice::<u64, u8>(&self.words)[..self.filled])?;
        self.at = fs::HEADER_LEN;
        Ok(())
    }

    /// Makes room for the buffer to hold bytes up to index `need` (moving the unread bytes,
    /// and the 112 before the next frame that its section starts with, to the front,
    /// keeping stream offsets congruent to indexes modulo 8); the room, for one read.
    ///
    /// A read always has room for a whole buffer size: the sink's writer sends buffer-sized
    /// writes, and a read a few bytes short of one leaves a remainder that costs a second
    /// read (and, on a socket, a second wake-up) per buffer.
    pub(super) fn spare(&mut self, need: usize) -> &mut [u8] {
        let keep_from = (self.at - self.at % 8).saturating_sub(fs::SECTION_BASE as usize);
        if keep_from > 0 {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
            bytes.copy_within(keep_from..self.filled, 0);
            self.filled -= keep_from;
            self.at -= keep_from;
            self.base += keep_from as u64;
        }
        let need = (need - keep_from).max(self.filled + self.parser.options.buffer_size);
        if need > self.words.len() * 8 {
            self.words.resize(need.div_ceil(8).max(2 * self.words.len()), 0);
        }
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
        &mut bytes[self.filled..]
    }

    /// Takes in a read of `n` bytes into [`spare`](Self::spare) (0: the end of the stream).
    pub(super) fn received(&mut self, n: usize) {
        if n == 0 {
            self.eof = true;
        }
        self.filled += n;
    }

    /// A read failed: nothing more can be read.
    pub(super) fn read_failed(&mut self, e: std::io::Error) -> Error {
        self.failed = Failed::Done;
        e.into()
    }

    /// Parses up to the next message and past it, applying keys and reset frames on the
    /// way, as far as the window goes.
    #[inline(always)]
    pub(super) fn advance(&mut self) -> Advance {
        if !matches!(self.failed, Failed::No) {
            return Advance::End;
        }
        loop {
            if self.at == self.filled {
                if self.eof {
                    return Advance::End;
                }
                return Advance::Refill(self.at + 1);
            }
            let window = &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.filled];
            match self.parser.step(window, self.base, self.at) {
                Ok(Step::NeedMore(need)) => {
                    if self.eof {
                        self.failed = Failed::Done;
                        return Advance::Failed(Error::malformed(
                            self.base + self.at as u64,
                            "truncated frame: the stream ends inside it",
                        ));
                    }
                    return Advance::Refill(need.max(self.filled + self.parser.options.buffer_size / 2));
                }
                Ok(Step::Control { next }) => self.at = next,
                Ok(step) => return Advance::Found(Found::take(step, &mut self.at)),
                Err((e, failed)) => {
                    self.failed = failed;
                    return Advance::Failed(e);
                }
            }
        }
    }

    /// The frame of a message `advance` found.
    #[inline(always)]
    pub(super) fn frame(&mut self, found: Found) -> Frame<'_> {
        let window = &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.filled];
        self.parser.found_frame(&mut self.room, window, self.base, found)
    }

    /// The message `advance` found as a slice of `T` (see `StreamReader::next_slice`).
    #[inline(always)]
    pub(super) fn slice<T: Element>(&mut self, found: Found) -> Result<&[T]> {
        let window = &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.filled];
        self.parser.found_slice(&mut self.room, window, self.base, found)
    }

    /// See `StreamReader::skip`.
    pub(super) fn skip(&mut self) -> bool {
        match self.failed {
            Failed::Skippable { next, may_hold_keys } => {
                self.at = (next - self.base) as usize;
                self.parser.table_unknown |= may_hold_keys;
                self.failed = Failed::No;
                true
            }
            _ => false,
        }
    }

    /// The stream offset of the next frame.
    pub(super) fn position(&self) -> u64 {
        self.base + self.at as u64
    }
}

/// Reads a stream from any `Read`: frames are parsed in an 8-aligned buffer that is
/// refilled with reads of at least [`StreamOptions::buffer_size`], and handed out without
/// copying (typed arrays are aligned slices of it).
pub struct StreamReader<R: Read> {
    source: R,
    window: Window,
}

impl<R: Read> StreamReader<R> {
    /// Reads and checks the stream header.
    pub fn new(source: R) -> Result<StreamReader<R>> {
        StreamReader::with_options(source, StreamOptions::default())
    }

    pub fn with_options(source: R, options: StreamOptions) -> Result<StreamReader<R>> {
        let mut r = StreamReader { source, window: Window::new(options) };
        while r.window.lacks_header() {
            r.fill(fs::HEADER_LEN)?;
        }
        r.window.read_header()?;
        Ok(r)
    }

    /// Reads once into the window, which makes room for bytes up to index `need` first.
    /// Cold: it runs once a buffer, and inlined into the per-frame loop it costs that loop
    /// registers (5 instructions a message of `next_frame`).
    #[cold]
    fn fill(&mut self, need: usize) -> std::io::Result<()> {
        let spare = self.window.spare(need);
        loop {
            match self.source.read(spare) {
                Ok(n) => {
                    self.window.received(n);
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next message, or `None` at the end of the stream. Keys and reset frames are
    /// applied on the way. After an error this returns `None` until [`skip`](Self::skip).
    #[allow(clippy::should_implement_trait)]
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>>> {
        let found = match self.advance()? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(self.window.frame(found)))
    }

    /// The next message as a slice of `T`, for streams of numbers, without building a
    /// [`Frame`]: a vector frame's elements (spec §14.5, copied into the reader's aligned
    /// memory) or a typed array's (in place, in row-major order, as
    /// [`Node::as_slice`](crate::Node::as_slice) gives them). A message of another kind or
    /// element type is an error (`WrongType`), and is consumed as `next_frame` would
    /// consume it; keys and reset frames are applied on the way; `None` at the end.
    pub fn next_slice<T: Element>(&mut self) -> Option<Result<&[T]>> {
        let found = match self.advance()? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        Some(self.window.slice(found))
    }

    /// Reads up to the next message and past it; where it lies in the window.
    #[inline(always)]
    fn advance(&mut self) -> Option<Result<Found>> {
        loop {
            match self.window.advance() {
                Advance::Found(found) => return Some(Ok(found)),
                Advance::Refill(need) => {
                    if let Err(e) = self.fill(need) {
                        return Some(Err(self.window.read_failed(e)));
                    }
                }
                Advance::Failed(e) => return Some(Err(e)),
                Advance::End => return None,
            }
        }
    }

    /// After an error at a frame whose length was readable, goes on at the frame after it;
    /// returns whether it could. A skipped frame that may have held keys leaves the key
    /// table unknown: frames with blocks are refused until the next reset frame.
    pub fn skip(&mut self) -> bool {
        self.window.skip()
    }

    /// The messages as `Value`s.
    pub fn values(self) -> Values<R> {
        Values { reader: self }
    }

    /// The messages deserialized as `T`.
    pub fn deserialize<T: serde::de::DeserializeOwned>(self) -> Deserialized<R, T> {
        Deserialized { reader: self, _t: std::marker::PhantomData }
    }

    /// The stream offset of the next frame.
    pub fn position(&self) -> u64 {
        self.window.position()
    }

    pub fn get_ref(&self) -> &R {
        &self.source
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.source
    }
}

/// [`StreamReader::values`]: stops after the first error.
pub struct Values<R: Read> {
    reader: StreamReader<R>,
}

impl<R: Read> Iterator for Values<R> {
    type Item = Result<crate::Value>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader.next_frame().map(|f| f.and_then(|f| f.to_value()))
    }
}

/// [`StreamReader::deserialize`]: stops after the first error.
pub struct Deserialized<R: Read, T> {
    reader: StreamReader<R>,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<R: Read, T: serde::de::DeserializeOwned> Iterator for Deserialized<R, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader.next_frame().map(|f| f.and_then(|f| f.deserialize()))
    }
}

/// Reads a stream held in memory (a mapped file, a received buffer) without copying:
/// frames are views of the slice. Typed arrays are aligned when the slice starts at an
/// address that is a multiple of 8.
pub struct SliceReader<'s> {
    bytes: &'s [u8],
    at: usize,
    parser: Parser,
    failed: Failed,
    room: VectorRoom,
}

impl<'s> SliceReader<'s> {
    pub fn new(bytes: &'s [u8]) -> Result<SliceReader<'s>> {
        SliceReader::with_options(bytes, StreamOptions::default())
    }

    pub fn with_options(bytes: &'s [u8], options: StreamOptions) -> Result<SliceReader<'s>> {
        let flags = fs::parse_header(bytes)?;
        Ok(SliceReader {
            bytes,
            at: fs::HEADER_LEN,
            parser: Parser::new(flags, options),
            failed: Failed::No,
            room: VectorRoom::default(),
        })
    }

    /// As [`StreamReader::next_frame`].
    #[allow(clippy::should_implement_trait)]
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>>> {
        let found = match self.advance()? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(self.parser.found_frame(&mut self.room, self.bytes, 0, found)))
    }

    /// As [`StreamReader::next_slice`].
    pub fn next_slice<T: Element>(&mut self) -> Option<Result<&[T]>> {
        let found = match self.advance()? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        Some(self.parser.found_slice(&mut self.room, self.bytes, 0, found))
    }

    #[inline(always)]
    fn advance(&mut self) -> Option<Result<Found>> {
        if !matches!(self.failed, Failed::No) {
            return None;
        }
        loop {
            if self.at == self.bytes.len() {
                return None;
            }
            match self.parser.step(self.bytes, 0, self.at) {
                Ok(Step::NeedMore(_)) => {
                    self.failed = Failed::Done;
                    return Some(Err(Error::malformed(self.at as u64, "truncated frame: the stream ends inside it")));
                }
                Ok(Step::Control { next }) => self.at = next,
                Ok(step) => return Some(Ok(Found::take(step, &mut self.at))),
                Err((e, failed)) => {
                    self.failed = failed;
                    return Some(Err(e));
                }
            }
        }
    }

    /// As [`StreamReader::skip`].
    pub fn skip(&mut self) -> bool {
        match self.failed {
            Failed::Skippable { next, may_hold_keys } => {
                self.at = next as usize;
                self.parser.table_unknown |= may_hold_keys;
                self.failed = Failed::No;
                true
            }
            _ => false,
        }
    }

    /// The stream offset of the next frame.
    pub fn position(&self) -> u64 {
        self.at as u64
    }
}

//! `StreamWriter`: messages as frames (spec §14) in a buffer, handed to the sink a
//! buffer's worth at a time.
//!
//! The buffer's first byte sits at a stream offset that is a multiple of 8, so a frame's
//! section, whose offsets count from the multiple of 8 at or before its body (§14.3), is
//! laid out in place: a message is planned by the encoders every document goes through,
//! then written once, straight into the buffer.

use std::io::Write;
use std::mem::MaybeUninit;

use rustc_hash::FxHashMap;

use super::StreamOptions;
use crate::builder::Builder;
use crate::direct::{self, Child, Keys, Levels, PlanSink, Source};
use crate::error::{Category, Error, Result};
use crate::format::stream as fs;
use crate::format::{numbers::put_varint, varint_len, ElementType};
use crate::value::Value;
use crate::Encoder;

/// Writes messages to `W` as a Leafwire stream. Frames gather in a buffer
/// ([`StreamOptions::buffer_size`]) that goes to the sink in one `write_all` when full, at
/// [`flush`](Self::flush) and at [`into_inner`](Self::into_inner); dropping the writer
/// flushes too, ignoring errors (as `std::io::BufWriter` does): call `flush` or
/// `into_inner` to see them.
pub struct StreamWriter<W: Write> {
    sink: Option<W>,
    frames: Frames,
}

/// The buffer and the key table: everything but the sink.
pub(super) struct Frames {
    /// Stream bytes from `base` on; the first `sent` of them are already in the sink (or
    /// are the up to 7 bytes before a flush point that keep `base` a multiple of 8).
    pub(super) buf: Vec<u8>,
    base: u64,
    sent: usize,
    /// The keys the reader's table holds, by text, with their stream ids.
    keys: FxHashMap<Box<[u8]>, u32>,
    key_bytes: usize,
    /// Stream ids of the message being written, by provisional id.
    ids: Vec<u32>,
    pub(super) options: StreamOptions,
    /// The short path's last frame heads, by frame offset modulo 8.
    pub(super) heads: [super::fast::Head; 8],
    /// Where the last frame written starts in `buf`.
    last_frame: usize,
}

impl<W: Write> StreamWriter<W> {
    /// A stream with the default options; its header goes to the sink with the first flush.
    pub fn new(sink: W) -> Result<StreamWriter<W>> {
        StreamWriter::with_options(sink, StreamOptions::default())
    }

    pub fn with_options(sink: W, options: StreamOptions) -> Result<StreamWriter<W>> {
        let flags = if options.crc { fs::FLAG_CRC } else { 0 };
        let mut buf = Vec::with_capacity(options.buffer_size.max(64) + 64);
        buf.extend_from_slice(&fs::header(flags));
        let frames = Frames {
            buf,
            base: 0,
            sent: 0,
            keys: FxHashMap::default(),
            key_bytes: 0,
            ids: Vec::new(),
            options,
            heads: Default::default(),
            last_frame: 0,
        };
        Ok(StreamWriter { sink: Some(sink), frames })
    }

    /// Writes one message: any `Serialize` value, encoded as `to_vec` would encode it.
    pub fn write<T: serde::Serialize + ?Sized>(&mut self, message: &T) -> Result<()> {
        // Numbers and sequences of numbers go straight into the buffer.
        if super::fast::write(&mut self.frames, message).is_ok() {
            return self.after_frame();
        }
        self.write_planned(message)
    }

    /// Writes a slice of numbers as one message, a typed array: the bytes `write` makes of
    /// it, with one copy instead of a call per element.
    #[inline]
    pub fn write_slice<T: crate::read::Element + serde::Serialize>(&mut self, values: &[T]) -> Result<()> {
        // Inline in the caller's loop: for a few numbers, a call and its register saves
        // would be a third of the cost. Only the rare cases (a new head, the general path)
        // are calls.
        if super::fast::write_slice(&mut self.frames, values).is_ok() {
            return self.after_frame();
        }
        self.write_planned(values)
    }

    /// `write` the general way, whatever the message (the short path's tests compare).
    #[doc(hidden)]
    #[inline(never)]
    pub fn write_planned<T: serde::Serialize + ?Sized>(&mut self, message: &T) -> Result<()> {
        let mut b = Builder::reused(self.frames.options.max_depth);
        message.serialize(crate::ser::ValueSerializer { b: &mut b, key: 0 })?;
        b.finish()?.plan_into(&mut self.frames)?;
        self.after_frame()
    }

    /// Writes one message from a `Value`, encoded as [`crate::encode`] would encode it.
    pub fn write_value(&mut self, message: &Value) -> Result<()> {
        direct::plan_value(message, self.frames.options.max_depth, &mut self.frames)?;
        self.after_frame()
    }

    /// Writes one message from JSON text, converted as [`crate::json::from_json`] converts it.
    pub fn write_json(&mut self, json: &[u8]) -> Result<()> {
        let mut b = Builder::reused(self.frames.options.max_depth);
        crate::json::read_into_builder(json, &mut b)?;
        b.finish()?.plan_into(&mut self.frames)?;
        self.after_frame()
    }

    /// Writes the value of a Leafwire document (its bytes) as one message: what bindings
    /// that encode documents already (Python's) send.
    pub fn write_document(&mut self, document: &[u8]) -> Result<()> {
        self.write_value(&crate::decode_with(document, self.frames.options.max_depth)?)
    }

    /// Writes the value an [`Encoder`] built as one message.
    pub fn write_encoded(&mut self, encoder: Encoder) -> Result<()> {
        encoder.finish_plan(&mut self.frames)?;
        self.after_frame()
    }

    /// Sends a reset frame: the reader forgets the keys sent so far, and so does the writer
    /// (which resets by itself when its table passes the options' bounds).
    pub fn reset_keys(&mut self) -> Result<()> {
        self.frames.reset();
        self.after_frame()
    }

    /// Hands every buffered frame to the sink and flushes it: a synchronization point.
    pub fn flush(&mut self) -> Result<()> {
        let sink = self.sink.as_mut().expect("the sink is there until into_inner");
        self.frames.send(sink)?;
        sink.flush()?;
        Ok(())
    }

    /// Flushes and returns the sink.
    pub fn into_inner(mut self) -> Result<W> {
        self.flush()?;
        Ok(self.sink.take().expect("the sink is there until into_inner"))
    }

    pub fn get_ref(&self) -> &W {
        self.sink.as_ref().expect("the sink is there until into_inner")
    }

    pub fn get_mut(&mut self) -> &mut W {
        self.sink.as_mut().expect("the sink is there until into_inner")
    }

    /// The stream offset the next frame starts at: bytes written so far, header included.
    pub fn position(&self) -> u64 {
        self.frames.base + self.frames.buf.len() as u64
    }

    /// Bytes waiting in the buffer.
    pub fn buffered(&self) -> usize {
        self.frames.buffered()
    }

    #[inline]
    fn after_frame(&mut self) -> Result<()> {
        if self.buffered() >= self.frames.options.buffer_size {
            self.send_full_buffer()?;
        }
        Ok(())
    }

    /// Sends a buffer that reached its size as `BufWriter` would: no write is longer than
    /// the buffer unless one frame is, so when the last frame took the buffer past its size,
    /// the frames before it go first and it waits for the next write. (A write a little
    /// over the buffer costs a second TCP segment of a few bytes, and the receiver a second
    /// wake-up, for every buffer.)
    #[cold]
    fn send_full_buffer(&mut self) -> Result<()> {
        let sink = self.sink.as_mut().expect("the sink is there until into_inner");
        let frames = &mut self.frames;
        if frames.buffered() > frames.options.buffer_size && frames.last_frame > frames.sent {
            frames.send_before(frames.last_frame, sink)?;
        }
        if frames.buffered() >= frames.options.buffer_size {
            frames.send(sink)?;
        }
        Ok(())
    }
}

impl<W: Write> Drop for StreamWriter<W> {
    fn drop(&mut self) {
        if let Some(sink) = self.sink.as_mut() {
            if !std::thread::panicking() {
                let _ = self.frames.send(sink).and_then(|()| sink.flush().map_err(Error::from));
            }
        }
    }
}

impl Frames {
    /// Writes the unsent bytes, then keeps the last `112 + len % 8` bytes of the buffer
    /// (already sent): the next frame's section starts 112 bytes before its origin (spec
    /// §14.3), and the buffer must still start at a multiple of 8.
    fn send(&mut self, sink: &mut impl Write) -> Result<()> {
        self.send_before(self.buf.len(), sink)
    }

    /// Writes the unsent bytes before `end` (a frame boundary), then drops what the buffer
    /// no longer needs: what was sent, but for the 112 bytes before the next frame's
    /// origin (and never past `end`), in multiples of 8 so `base` stays one.
    fn send_before(&mut self, end: usize, sink: &mut impl Write) -> Result<()> {
        if self.sent < end {
            sink.write_all(&self.buf[self.sent..end])?;
        }
        let len = self.buf.len();
        // The header alone is 112 bytes: there are always that many.
        let keep = fs::SECTION_BASE as usize + len % 8;
        let drop = (len - keep).min(end & !7);
        self.buf.copy_within(drop.., 0);
        self.buf.truncate(len - drop);
        self.base += drop as u64;
        self.sent = end - drop;
        self.last_frame = self.last_frame.saturating_sub(drop);
        Ok(())
    }

    /// Bytes waiting in the buffer.
    fn buffered(&self) -> usize {
        self.buf.len() - self.sent
    }

    pub(super) fn position(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Appends a frame whose body is `body`.
    fn frame(&mut self, body: &[u8]) {
        let start = self.buf.len();
        let mut v = [0u8; 10];
        let n = put_varint(&mut v, body.len() as u64);
        self.buf.extend_from_slice(&v[..n]);
        self.buf.extend_from_slice(body);
        self.seal(start);
    }

    /// Appends the CRC of the frame that starts at `start`, when the stream has them.
    #[inline(always)]
    pub(super) fn seal(&mut self, start: usize) {
        self.last_frame = start;
        if self.options.crc {
            let crc = fs::crc(&self.buf[start..]);
            self.buf.extend_from_slice(&crc.to_le_bytes());
        }
    }

    fn reset(&mut self) {
        self.keys.clear();
        self.key_bytes = 0;
        self.frame(&[fs::KIND_RESET]);
    }

    /// Maps the message's keys to stream ids, sending a keys frame for those the reader
    /// lacks (and a reset first if they would take the table past its bounds).
    fn map_keys(&mut self, keys: Keys<'_>) -> Result<()> {
        // One lookup per key: the ids of those the table holds, and which it lacks.
        self.ids.clear();
        let mut missing = Vec::new();
        for (i, text) in keys.texts.iter().enumerate() {
            match self.keys.get(*text) {
                Some(&id) => self.ids.push(id),
                None => {
                    missing.push(i);
                    self.ids.push(u32::MAX);
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let new_bytes: usize = missing.iter().map(|&i| keys.texts[i].len()).sum();
        let (max_keys, max_bytes) = (self.options.max_keys, self.options.max_key_bytes);
        if keys.texts.len() > max_keys || keys.texts.iter().map(|t| t.len()).sum::<usize>() > max_bytes {
            return Err(Error::new(
                Category::LimitExceeded,
                format!("a message with {} keys, more than the stream's key table holds", keys.texts.len()),
            ));
        }
        let missing = if self.keys.len() + missing.len() > max_keys || self.key_bytes + new_bytes > max_bytes {
            self.reset();
            (0..keys.texts.len()).collect()
        } else {
            missing
        };
        let mut body = Vec::with_capacity(8 + new_bytes + 2 * missing.len());
        fs::keys_body(missing.iter().map(|&i| keys.texts[i]), &mut body);
        self.frame(&body);
        // After a reset every key is missing, so every id is set here.
        for &i in &missing {
            let id = self.keys.len() as u32;
            self.keys.insert(keys.texts[i].into(), id);
            self.key_bytes += keys.texts[i].len();
            self.ids[i] = id;
        }
        Ok(())
    }

    /// Appends a vector frame of `count` elements (spec §14.5), `data` their bytes.
    /// The one writer of vector frames: `write_slice`'s short path and the planned path.
    #[inline(always)]
    pub(super) fn vector(&mut self, element: ElementType, count: usize, data: &[u8]) {
        debug_assert_eq!(data.len(), count * element.size());
        let buf = &mut self.buf;
        const HEAD: usize = fs::VECTOR_HEAD_LEN;
        buf.reserve(HEAD + fs::VECTOR_MAX_BYTES + fs::CRC_LEN);
        let start = buf.len();
        let head = fs::vector_head(element, count);
        // SAFETY: the reserve above leaves room for the head, at most 64 bytes of data
        // (`is_vector`, which `vector_head` asserts) and a CRC; all of it is written
        // before the length covers it.
        unsafe {
            let at = buf.as_mut_ptr().add(start);
            std::ptr::copy_nonoverlapping(head.as_ptr(), at, HEAD);
            crate::format::numbers::copy_short(at.add(HEAD), data);
            buf.set_len(start + HEAD + data.len());
        }
        self.seal(start);
    }

    /// Appends a value frame of a scalar root.
    #[inline]
    pub(super) fn scalar(&mut self, t: u8, payload: u64) {
        let w = fs::scalar_width(t, payload);
        let start = self.buf.len();
        let mut frame = [0u8; 10];
        frame[0] = 1 + w as u8;
        frame[1] = t;
        frame[2..].copy_from_slice(&payload.to_le_bytes());
        self.buf.extend_from_slice(&frame[..2 + w]);
        self.seal(start);
    }
}

impl PlanSink for Frames {
    fn planned<S: Source>(&mut self, levels: &mut Levels, keys: Keys<'_>, root: Child, source: &S) -> Result<()> {
        if fs::is_scalar(root.tag) {
            self.scalar(root.tag, root.value);
            return Ok(());
        }
        if root.tag == crate::format::tag::TYPED {
            let block = source.typed(&root);
            if let ([count], None) = (&*block.shape, &block.mask) {
                if fs::is_vector(block.element, *count as usize) {
                    self.vector(block.element, *count as usize, &block.data);
                    return Ok(());
                }
            }
        }
        if crate::format::tag::is_packed(root.tag) {
            return Err(Error::new(Category::Unsupported, "packed arrays and objects are not sent in streams (spec §14.2)"));
        }
        self.map_keys(keys)?;
        // The section depends on where the body starts, which depends on the length
        // field's width: the first width that holds the length it leads to is the one.
        let frame_at = self.position();
        let (mut layout, mut width) = (None, 0);
        for w in 1..=10 {
            let start = fs::section_start(frame_at + w as u64) as usize;
            let placed = levels.finish_frame(self.ids.clone(), root, source, start)?;
            let len = (placed.end - start + 1) as u64;
            if varint_len(len) <= w {
                (layout, width) = (Some(placed), w);
                break;
            }
        }
        let layout = layout.expect("a 10-byte length field holds any length");
        let len = (layout.end - layout.front + 1) as u64;
        if len > self.options.max_frame {
            return Err(Error::new(
                Category::LimitExceeded,
                format!(
                    "a message of {len} bytes, above the stream's frame limit of {} (raise max_frame)",
                    self.options.max_frame
                ),
            ));
        }
        let start = self.buf.len();
        // Where the section's offset 0 is in the buffer.
        let origin = (fs::origin(frame_at + width as u64) - fs::SECTION_BASE - self.base) as usize;
        self.buf.resize(start + width + 1, 0);
        fs::put_frame_length(&mut self.buf[start..start + width], len, width);
        self.buf[start + width] = root.tag;
        self.buf.reserve(origin + layout.end - self.buf.len());
        // SAFETY: the reserve above makes `origin + layout.end` bytes of capacity; the
        // section's first `layout.front` bytes are the buffer's initialized bytes, which
        // `write_section_into` neither reads nor changes, and it writes every byte after
        // them (it asserts so), so all `origin + layout.end` bytes are initialized.
        let root_at = unsafe {
            let section =
                std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().add(origin).cast::<MaybeUninit<u8>>(), layout.end);
            let root_at = direct::write_section_into(levels, keys, &layout, source, section);
            self.buf.set_len(origin + layout.end);
            root_at
        };
        debug_assert_eq!(
            root_at,
            fs::root_offset(root.tag, layout.front as u64),
            "the root is where spec §14.3 implies"
        );
        self.seal(start);
        Ok(())
    }
}

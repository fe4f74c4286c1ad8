//! The short path of `StreamWriter::write` for the messages streams carry most: a number
//! (or bool, or unit), and a sequence of numbers of one Rust type. Their frames (spec
//! §14.3) are written straight into the buffer as serde hands over the values, with no
//! plan in between; the bytes are those the general path writes (`tests/stream.rs`
//! compares them). Anything else — a string, a struct, a sequence that turns out mixed
//! or of another length than announced — answers `Declined`, the buffer is cut back, and
//! the message goes the general way.

use serde::ser::{self, Impossible, Serialize};

use super::write::Frames;
use crate::format::stream as fs;
use crate::format::{tag, typed, varint_len, ElementType};

/// Why the short path stopped: not its kind of message (or a serde error, which the general
/// path then reports).
#[derive(Debug)]
pub(super) struct Declined;

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a message for the short path")
    }
}

impl std::error::Error for Declined {}

impl ser::Error for Declined {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Declined
    }
}

type Result<T> = std::result::Result<T, Declined>;

/// The bytes before the data of a sequence's frame: length field, kind, padding, typed
/// header, padding (at most 10 + 1 + 7 + 12 + 7).
#[derive(Clone, Copy)]
pub(super) struct Head {
    len: usize,
    element: Option<ElementType>,
    bytes: [u8; HEAD_ROOM],
    head_len: u8,
}

impl Default for Head {
    fn default() -> Self {
        Head { len: 0, element: None, bytes: [0; HEAD_ROOM], head_len: 0 }
    }
}

/// Writes `message` as one frame if it is of the short path's kind. On `Declined`, the
/// buffer is as it was.
pub(super) fn write<T: Serialize + ?Sized>(frames: &mut Frames, message: &T) -> Result<()> {
    let start = frames.buf.len();
    let outcome = message.serialize(Root { frames: &mut *frames });
    if outcome.is_err() {
        frames.buf.truncate(start);
    }
    outcome
}

/// Writes a message that is a slice of numbers (its frame is the one `write` makes of it:
/// a typed array of shape [n]) with one copy. Declines an empty slice, and on big-endian
/// machines (whose numbers the general path turns little-endian).
#[inline(always)]
pub(super) fn write_slice<T: crate::read::Element>(frames: &mut Frames, values: &[T]) -> Result<()> {
    if values.is_empty() || cfg!(target_endian = "big") {
        return Err(Declined);
    }
    let data: &[u8] = bytemuck::cast_slice(values);
    if fs::is_vector(T::TYPE, values.len()) {
        // A vector frame: its head does not depend on where it starts (spec §14.5).
        frames.vector(T::TYPE, values.len(), data);
        return Ok(());
    }
    let start = append_head(frames, values.len(), T::TYPE, data.len())?;
    let buf = &mut frames.buf;
    // SAFETY: `append_head` reserved room for the data and a CRC past the head.
    unsafe {
        std::ptr::copy_nonoverlapping(data.as_ptr(), buf.as_mut_ptr().add(buf.len()), data.len());
        buf.set_len(buf.len() + data.len());
    }
    frames.seal(start);
    Ok(())
}

/// Appends the bytes before the data of a frame holding `n` numbers of type `t` (length,
/// kind, padding, typed header, padding), reserving room for the data and a CRC; returns
/// where the frame starts in the buffer. The bytes depend only on the frame's offset
/// modulo 8, `n` and `t`: a stream of like messages copies them from the last frame of its
/// phase.
#[inline(always)]
fn append_head(frames: &mut Frames, n: usize, t: ElementType, data_len: usize) -> Result<usize> {
    let frame_at = frames.position();
    let phase = (frame_at % 8) as usize;
    if frames.heads[phase].len != n || frames.heads[phase].element != Some(t) {
        frames.heads[phase] = head(frame_at, n, t, frames.options.max_frame)?;
    }
    let Frames { heads, buf, .. } = frames;
    let head = &heads[phase];
    // The whole 48-byte array is copied (a fixed-size copy, no call), its first
    // `head_len` bytes kept.
    buf.reserve(HEAD_ROOM + data_len + fs::CRC_LEN);
    let start = buf.len();
    // SAFETY: the reserve above leaves at least HEAD_ROOM bytes of capacity past `start`;
    // `head_len` ≤ HEAD_ROOM of them are initialized before the length covers them.
    unsafe {
        std::ptr::copy_nonoverlapping(head.bytes.as_ptr(), buf.as_mut_ptr().add(start), HEAD_ROOM);
        buf.set_len(start + head.head_len as usize);
    }
    Ok(start)
}

/// The room a frame head takes at most, and the length of `Head::bytes`.
const HEAD_ROOM: usize = 48;

/// The head of a frame at stream offset `frame_at` holding `n` numbers of type `t`.
#[cold]
#[inline(never)]
fn head(frame_at: u64, n: usize, t: ElementType, max_frame: u64) -> Result<Head> {
    if fs::is_vector(t, n) {
        // A few numbers: a vector frame, unaligned (spec §14.5).
        let mut bytes = [0u8; HEAD_ROOM];
        bytes[..fs::VECTOR_HEAD_LEN].copy_from_slice(&fs::vector_head(t, n));
        return Ok(Head { len: n, element: Some(t), bytes, head_len: fs::VECTOR_HEAD_LEN as u8 });
    }
    let (count, size) = (n as u64, t.size() as u64);
    let header_len = 2 + varint_len(count) as u64;
    // The length field's width moves the section; the narrowest that holds the length it
    // leads to is the canonical one (spec §14.3), as in the general path.
    let (mut width, mut len, mut start, mut block, mut data) = (0, 0, 0, 0, 0);
    for w in 1..=10u64 {
        start = fs::section_start(frame_at + w);
        block = fs::root_offset(tag::TYPED, start);
        data = (block + header_len).next_multiple_of(size);
        len = data + count * size - start + 1;
        if varint_len(len) as u64 <= w {
            width = w as usize;
            break;
        }
    }
    if len > max_frame {
        // The general path reports it.
        return Err(Declined);
    }
    let mut bytes = [0u8; HEAD_ROOM];
    fs::put_frame_length(&mut bytes, len, width);
    bytes[width] = tag::TYPED;
    typed::write_header(&mut bytes, width + 1 + (block - start) as usize, t, &[count], false);
    let head_len = (width + 1 + (data - start) as usize) as u8;
    Ok(Head { len: n, element: Some(t), bytes, head_len })
}

struct Root<'f> {
    frames: &'f mut Frames,
}

impl Root<'_> {
    /// A scalar root: its tag and payload as `builder::num_slot` makes them.
    fn scalar(self, t: u8, payload: u64) -> Result<()> {
        self.frames.scalar(t, payload);
        Ok(())
    }

    fn int(self, v: i64) -> Result<()> {
        self.scalar(tag::INT, v as u64)
    }
}

/// The elements of a sequence: written as they come, once the first shows their type.
pub(super) struct Numbers<'f> {
    frames: &'f mut Frames,
    /// Frame start in the buffer; elements expected and written; their type, once known.
    start: usize,
    len: usize,
    written: usize,
    element: Option<ElementType>,
}

impl Numbers<'_> {
    /// Appends one element of type `t` (its little-endian bits in `bits`).
    #[inline(always)]
    fn push(&mut self, t: ElementType, bits: u64) -> Result<()> {
        match self.element {
            Some(e) if e == t => {}
            None => self.open(t)?,
            Some(_) => return Err(Declined),
        }
        if self.written == self.len {
            return Err(Declined);
        }
        let buf = &mut self.frames.buf;
        let at = buf.len();
        // `open` reserved room for `len` elements: no capacity check per element.
        debug_assert!(buf.capacity() - at >= t.size());
        // SAFETY: at most `len` elements are written (checked above), and `open` reserved
        // `len * size` bytes past the header, so these `size` bytes are within capacity;
        // they are initialized before the length covers them.
        unsafe {
            std::ptr::copy_nonoverlapping(bits.to_le_bytes().as_ptr(), buf.as_mut_ptr().add(at), t.size());
            buf.set_len(at + t.size());
        }
        self.written += 1;
        Ok(())
    }

    /// Writes the frame's length, kind and typed header, now that the type is known.
    #[inline]
    fn open(&mut self, t: ElementType) -> Result<()> {
        self.element = Some(t);
        self.start = append_head(self.frames, self.len, t, self.len * t.size())?;
        Ok(())
    }

    fn finish(self) -> Result<()> {
        if self.written != self.len || self.element.is_none() {
            return Err(Declined);
        }
        self.frames.seal(self.start);
        Ok(())
    }
}

/// Serializes one element of a sequence: numbers only.
struct Element<'a, 'f> {
    seq: &'a mut Numbers<'f>,
}

macro_rules! decline {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$ret> {
            Err(Declined)
        })*
    };
}

macro_rules! decline_generic {
    ($($name:ident($($arg:ty),*);)*) => {
        $(fn $name<V: Serialize + ?Sized>(self, $(_: $arg,)* _: &V) -> Result<()> {
            Err(Declined)
        })*
    };
}

impl ser::Serializer for Element<'_, '_> {
    type Ok = ();
    type Error = Declined;
    type SerializeSeq = Impossible<(), Declined>;
    type SerializeTuple = Impossible<(), Declined>;
    type SerializeTupleStruct = Impossible<(), Declined>;
    type SerializeTupleVariant = Impossible<(), Declined>;
    type SerializeMap = Impossible<(), Declined>;
    type SerializeStruct = Impossible<(), Declined>;
    type SerializeStructVariant = Impossible<(), Declined>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.seq.push(ElementType::Bool, v as u64)
    }
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.seq.push(ElementType::I8, v as u8 as u64)
    }
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.seq.push(ElementType::I16, v as u16 as u64)
    }
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.seq.push(ElementType::I32, v as u32 as u64)
    }
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.seq.push(ElementType::I64, v as u64)
    }
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.seq.push(ElementType::U8, v as u64)
    }
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.seq.push(ElementType::U16, v as u64)
    }
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.seq.push(ElementType::U32, v as u64)
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.seq.push(ElementType::U64, v)
    }
    fn serialize_f32(self, v: f32) -> Result<()> {
        self.seq.push(ElementType::F32, v.to_bits() as u64)
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        self.seq.push(ElementType::F64, v.to_bits())
    }

    decline! {
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
    decline_generic! {
        serialize_some();
        serialize_newtype_struct(&'static str);
        serialize_newtype_variant(&'static str, u32, &'static str);
    }
}

impl ser::SerializeSeq for Numbers<'_> {
    type Ok = ();
    type Error = Declined;

    #[inline]
    fn serialize_element<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<()> {
        value.serialize(Element { seq: self })
    }

    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeTuple for Numbers<'_> {
    type Ok = ();
    type Error = Declined;

    #[inline]
    fn serialize_element<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<()> {
        value.serialize(Element { seq: self })
    }

    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl<'f> ser::Serializer for Root<'f> {
    type Ok = ();
    type Error = Declined;
    type SerializeSeq = Numbers<'f>;
    type SerializeTuple = Numbers<'f>;
    type SerializeTupleStruct = Impossible<(), Declined>;
    type SerializeTupleVariant = Impossible<(), Declined>;
    type SerializeMap = Impossible<(), Declined>;
    type SerializeStruct = Impossible<(), Declined>;
    type SerializeStructVariant = Impossible<(), Declined>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.scalar(if v { tag::TRUE } else { tag::FALSE }, 0)
    }
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.int(v as i64)
    }
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.int(v as i64)
    }
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.int(v as i64)
    }
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.int(v as i64)
    }
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.int(v as i64)
    }
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.int(v as i64)
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        match i64::try_from(v) {
            Ok(v) => self.int(v),
            Err(_) => self.scalar(tag::UINT, v),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<()> {
        self.scalar(tag::F32, v.to_bits() as u64)
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        self.scalar(tag::F64, v.to_bits())
    }
    fn serialize_unit(self) -> Result<()> {
        self.scalar(tag::NULL, 0)
    }
    fn serialize_none(self) -> Result<()> {
        self.scalar(tag::NULL, 0)
    }
    fn serialize_some<V: Serialize + ?Sized>(self, value: &V) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Numbers<'f>> {
        match len {
            Some(len) if len > 0 => Ok(Numbers { frames: self.frames, start: 0, len, written: 0, element: None }),
            _ => Err(Declined),
        }
    }
    fn serialize_tuple(self, len: usize) -> Result<Numbers<'f>> {
        self.serialize_seq(Some(len))
    }

    decline! {
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
    decline_generic! {
        serialize_newtype_struct(&'static str);
        serialize_newtype_variant(&'static str, u32, &'static str);
    }
}

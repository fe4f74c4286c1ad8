//! serde `Serializer` into the builder: `to_vec` / `to_writer` for any `Serialize` type.
//!
//! Mapping: structs and string-keyed maps are objects, integer-keyed maps are intmaps,
//! sequences and tuples are arrays — typed arrays when every element has one numeric
//! type (`Vec<f64>`, `Vec<[f32; 3]>`) — options are null or the value, enums are
//! externally tagged (`"Unit"` or `{"Variant": value}`), as in serde_json.

use serde::ser::{self, Serialize};

use crate::builder::{Builder, FrameKind, Item, PendingRow};
use crate::error::{Category, Error, Result};
use crate::format::ElementType;

/// The serializer methods of Rust's numbers (and `bool`, a typed array's element type
/// too): each is its element type and the bits `Builder::push_num` takes, given to the
/// serializer's `num`.
macro_rules! number_methods {
    ($(#[$attr:meta])*) => {
        $(#[$attr])*
        fn serialize_bool(self, v: bool) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::Bool, v as u64)
        }
        $(#[$attr])*
        fn serialize_i8(self, v: i8) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::I8, v as i64 as u64)
        }
        $(#[$attr])*
        fn serialize_i16(self, v: i16) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::I16, v as i64 as u64)
        }
        $(#[$attr])*
        fn serialize_i32(self, v: i32) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::I32, v as i64 as u64)
        }
        $(#[$attr])*
        fn serialize_i64(self, v: i64) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::I64, v as u64)
        }
        $(#[$attr])*
        fn serialize_u8(self, v: u8) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::U8, v as u64)
        }
        $(#[$attr])*
        fn serialize_u16(self, v: u16) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::U16, v as u64)
        }
        $(#[$attr])*
        fn serialize_u32(self, v: u32) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::U32, v as u64)
        }
        $(#[$attr])*
        fn serialize_u64(self, v: u64) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::U64, v)
        }
        $(#[$attr])*
        fn serialize_f32(self, v: f32) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::F32, v.to_bits() as u64)
        }
        $(#[$attr])*
        fn serialize_f64(self, v: f64) -> std::result::Result<Self::Ok, Self::Error> {
            self.num(ElementType::F64, v.to_bits())
        }
    };
}

/// Serializes one value into the builder under `key`.
pub(crate) struct ValueSerializer<'b> {
    pub b: &'b mut Builder,
    pub key: u64,
}

impl<'b> ValueSerializer<'b> {
    fn num(self, t: ElementType, bits: u64) -> Result<()> {
        self.b.push_num(self.key, t, bits)
    }

    fn variant_object(self, variant: &'static str) -> Result<(u64, &'b mut Builder)> {
        self.b.open(FrameKind::Object)?;
        let id = self.b.static_key_id(variant);
        Ok((id, self.b))
    }
}

pub(crate) struct Compound<'b> {
    b: &'b mut Builder,
    /// Key of this value in its parent.
    key: u64,
    /// Enum variants: the content closes under this key id inside a one-key object.
    variant: Option<u64>,
    /// Maps: the key of the next value.
    next_key: Option<u64>,
    /// Maps open their container at the first key, when its kind is known.
    opened: bool,
    intmap: bool,
    /// Maps: the keys met so far (the position of the next, for the builder's key guess).
    entries: usize,
    /// A sequence written as the next row of its parent's run, with no frame of its own
    /// while its elements are numbers of one type ([`Builder::begin_row`]).
    row: Option<PendingRow>,
}

impl<'b> Compound<'b> {
    fn new(b: &'b mut Builder, key: u64, variant: Option<u64>, opened: bool) -> Compound<'b> {
        Compound { b, key, variant, next_key: None, opened, intmap: false, entries: 0, row: None }
    }

    /// A sequence (a tuple, an array, a `Vec`): a pending row of its parent's run where
    /// the builder allows one, else an opened array.
    fn seq(b: &'b mut Builder, key: u64) -> Result<Compound<'b>> {
        let row = b.begin_row();
        Compound::sequence(b, key, row)
    }

    /// A sequence whose first element is a number: a pending row wherever the builder
    /// allows one ([`Builder::begin_numbers`]), else an opened array.
    fn numbers(b: &'b mut Builder, key: u64) -> Result<Compound<'b>> {
        let row = b.begin_numbers();
        Compound::sequence(b, key, row)
    }

    /// A sequence as `row` (the builder's pending row), or, without one, an opened array.
    fn sequence(b: &'b mut Builder, key: u64, row: Option<PendingRow>) -> Result<Compound<'b>> {
        if row.is_none() {
            b.open_seq()?;
        }
        Ok(Compound { row, ..Compound::new(b, key, None, true) })
    }

    /// Inline for a pending row (a point's tuple ends in a few compares); containers close
    /// out of line.
    #[inline(always)]
    fn end_all(self) -> Result<()> {
        if let Some(row) = self.row {
            return self.b.end_row(self.key, row);
        }
        self.end_container()
    }

    #[inline(never)]
    fn end_container(self) -> Result<()> {
        if !self.opened {
            self.b.open(FrameKind::Object)?;
        }
        match self.variant {
            Some(id) => {
                self.b.close(id)?;
                self.b.close(self.key)
            }
            None => self.b.close(self.key),
        }
    }
}

impl<'b> ser::Serializer for ValueSerializer<'b> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'b>;
    type SerializeTuple = Compound<'b>;
    type SerializeTupleStruct = Compound<'b>;
    type SerializeTupleVariant = Compound<'b>;
    type SerializeMap = Compound<'b>;
    type SerializeStruct = Compound<'b>;
    type SerializeStructVariant = Compound<'b>;

    number_methods!();
    fn serialize_i128(self, v: i128) -> Result<()> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(x), _) => self.serialize_i64(x),
            (_, Ok(x)) => self.serialize_u64(x),
            _ => self.b.push_bignum(self.key, v.to_string().as_bytes()),
        }
    }
    fn serialize_u128(self, v: u128) -> Result<()> {
        match u64::try_from(v) {
            Ok(x) => self.serialize_u64(x),
            _ => self.b.push_bignum(self.key, v.to_string().as_bytes()),
        }
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<()> {
        self.b.push_str(self.key, v.as_bytes())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.b.push_bytes(self.key, v)
    }
    fn serialize_none(self) -> Result<()> {
        self.b.push(self.key, Item::Null)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        self.b.push(self.key, Item::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<()> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, variant: &'static str, value: &T) -> Result<()> {
        let key = self.key;
        let (id, b) = self.variant_object(variant)?;
        value.serialize(ValueSerializer { b: &mut *b, key: id })?;
        b.close(key)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'b>> {
        Compound::seq(self.b, self.key)
    }
    /// `Vec<T>`, slices and other collections: as `serialize_seq` and an element at a
    /// time, except that a sequence that starts with a number is copied into a run in a
    /// tight loop for as long as its elements are numbers of that type.
    fn collect_seq<I>(self, iter: I) -> Result<()>
    where
        I: IntoIterator,
        I::Item: Serialize,
    {
        let mut iter = iter.into_iter();
        let mut next = iter.next();
        let first = next.as_ref().and_then(|first| first.serialize(NumberOf).ok());
        let mut seq = match first {
            Some(_) => Compound::numbers(self.b, self.key)?,
            None => Compound::seq(self.b, self.key)?,
        };
        if let Some((t, bits)) = first {
            if let Some(mut sink) = seq.b.run_sink(&mut seq.row, t) {
                sink.put(bits);
                next = sink.extend(&mut iter, |item| item.serialize(NumberOf).ok());
            }
        }
        while let Some(item) = next {
            ser::SerializeSeq::serialize_element(&mut seq, &item)?;
            next = iter.next();
        }
        ser::SerializeSeq::end(seq)
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'b>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'b>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, variant: &'static str, _: usize) -> Result<Compound<'b>> {
        let key = self.key;
        let (id, b) = self.variant_object(variant)?;
        b.open(FrameKind::Array)?;
        Ok(Compound::new(b, key, Some(id), true))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'b>> {
        Ok(Compound::new(self.b, self.key, None, false))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'b>> {
        self.b.open(FrameKind::Object)?;
        Ok(Compound::new(self.b, self.key, None, true))
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, variant: &'static str, _: usize) -> Result<Compound<'b>> {
        let key = self.key;
        let (id, b) = self.variant_object(variant)?;
        b.open(FrameKind::Object)?;
        Ok(Compound::new(b, key, Some(id), true))
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    // Inline: a tuple's element in a pending row is a few compares and a copy, which a
    // call would double.
    #[inline(always)]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        if self.row.is_some() {
            return value.serialize(RowElement { b: &mut *self.b, row: &mut self.row });
        }
        value.serialize(ValueSerializer { b: &mut *self.b, key: 0 })
    }
    fn end(self) -> Result<()> {
        self.end_all()
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    #[inline(always)]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<()> {
        self.end_all()
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<()> {
        self.end_all()
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<()> {
        self.end_all()
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        // The map's level: its container opens at the first key.
        let depth = self.b.depth() - usize::from(self.opened);
        let k = key.serialize(KeySerializer { b: &mut *self.b, depth, position: self.entries })?;
        self.entries += 1;
        let kind = match k {
            MapKey::Str(_) => FrameKind::Object,
            MapKey::Int(_) => FrameKind::IntMap,
        };
        if !self.opened {
            self.b.open(kind)?;
            self.opened = true;
            self.intmap = kind == FrameKind::IntMap;
        } else if (kind == FrameKind::IntMap) != self.intmap {
            return Err(Error::new(Category::Custom, "a map mixes string and integer keys"));
        }
        self.next_key = Some(match k {
            MapKey::Str(id) => id,
            MapKey::Int(i) => i as u64,
        });
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        let key = self.next_key.take().ok_or_else(|| Error::new(Category::Custom, "serialize_value before serialize_key"))?;
        value.serialize(ValueSerializer { b: &mut *self.b, key })
    }
    fn end(self) -> Result<()> {
        self.end_all()
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        let id = self.b.static_key_id(key);
        value.serialize(ValueSerializer { b: &mut *self.b, key: id })
    }
    fn end(self) -> Result<()> {
        self.end_all()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<()> {
        self.end_all()
    }
}

/// Serializes an element of a pending row: a number of the row's type is copied to the
/// row; anything else opens the row's frame ([`Builder::open_pending`]) and is serialized
/// as [`ValueSerializer`] would, which the row then is for the rest of its elements.
struct RowElement<'r, 'b> {
    b: &'b mut Builder,
    row: &'r mut Option<PendingRow>,
}

impl<'b> RowElement<'_, 'b> {
    #[inline(always)]
    fn num(self, t: ElementType, bits: u64) -> Result<()> {
        let row = self.row.as_mut().expect("a pending row");
        if self.b.row_put(row, t, bits) {
            return Ok(());
        }
        self.leave()?.num(t, bits)
    }

    /// Opens the row's frame: the element and those after it go the usual way.
    #[cold]
    #[inline(never)]
    fn leave(self) -> Result<ValueSerializer<'b>> {
        self.b.open_pending(self.row.take().expect("a pending row"))?;
        Ok(ValueSerializer { b: self.b, key: 0 })
    }
}

/// `RowElement` methods that leave the row and serialize the usual way.
macro_rules! leave_then {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $($arg: $ty),*) -> Result<$ret> {
            self.leave()?.$name($($arg),*)
        })*
    };
}

impl<'b> ser::Serializer for RowElement<'_, 'b> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'b>;
    type SerializeTuple = Compound<'b>;
    type SerializeTupleStruct = Compound<'b>;
    type SerializeTupleVariant = Compound<'b>;
    type SerializeMap = Compound<'b>;
    type SerializeStruct = Compound<'b>;
    type SerializeStructVariant = Compound<'b>;

    number_methods!(#[inline]);
    // Transparent, as for `ValueSerializer`.
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, name: &'static str, index: u32, variant: &'static str, value: &T) -> Result<()> {
        self.leave()?.serialize_newtype_variant(name, index, variant, value)
    }
    leave_then! {
        serialize_i128(v: i128) -> ();
        serialize_u128(v: u128) -> ();
        serialize_char(v: char) -> ();
        serialize_str(v: &str) -> ();
        serialize_bytes(v: &[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(name: &'static str) -> ();
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> ();
        serialize_seq(len: Option<usize>) -> Compound<'b>;
        serialize_tuple(len: usize) -> Compound<'b>;
        serialize_tuple_struct(name: &'static str, len: usize) -> Compound<'b>;
        serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> Compound<'b>;
        serialize_map(len: Option<usize>) -> Compound<'b>;
        serialize_struct(name: &'static str, len: usize) -> Compound<'b>;
        serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> Compound<'b>;
    }
}

/// Reads a number's element type and bits, as `Builder::push_num` takes them; anything
/// else (a string, a container) is refused with [`NotANumber`].
struct NumberOf;

impl NumberOf {
    #[inline(always)]
    fn num(self, t: ElementType, bits: u64) -> std::result::Result<(ElementType, u64), NotANumber> {
        Ok((t, bits))
    }
}

/// [`NumberOf`]'s refusal: not an error of the document, only the end of a run of numbers.
#[derive(Debug)]
struct NotANumber;

impl std::fmt::Display for NotANumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a number")
    }
}

impl std::error::Error for NotANumber {}

impl ser::Error for NotANumber {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        NotANumber
    }
}

/// `NumberOf` methods that refuse.
macro_rules! not_in_run {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $(_: $ty),*) -> std::result::Result<$ret, NotANumber> {
            Err(NotANumber)
        })*
    };
}

impl ser::Serializer for NumberOf {
    type Ok = (ElementType, u64);
    type Error = NotANumber;
    type SerializeSeq = ser::Impossible<(ElementType, u64), NotANumber>;
    type SerializeTuple = ser::Impossible<(ElementType, u64), NotANumber>;
    type SerializeTupleStruct = ser::Impossible<(ElementType, u64), NotANumber>;
    type SerializeTupleVariant = ser::Impossible<(ElementType, u64), NotANumber>;
    type SerializeMap = ser::Impossible<(ElementType, u64), NotANumber>;
    type SerializeStruct = ser::Impossible<(ElementType, u64), NotANumber>;
    type SerializeStructVariant = ser::Impossible<(ElementType, u64), NotANumber>;

    number_methods!(#[inline(always)]);
    // Transparent, as for `ValueSerializer`.
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> std::result::Result<Self::Ok, NotANumber> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> std::result::Result<Self::Ok, NotANumber> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> std::result::Result<Self::Ok, NotANumber> {
        Err(NotANumber)
    }
    not_in_run! {
        serialize_i128(v: i128) -> Self::Ok;
        serialize_u128(v: u128) -> Self::Ok;
        serialize_char(v: char) -> Self::Ok;
        serialize_str(v: &str) -> Self::Ok;
        serialize_bytes(v: &[u8]) -> Self::Ok;
        serialize_none() -> Self::Ok;
        serialize_unit() -> Self::Ok;
        serialize_unit_struct(name: &'static str) -> Self::Ok;
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> Self::Ok;
        serialize_seq(len: Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(len: usize) -> Self::SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> Self::SerializeTupleVariant;
        serialize_map(len: Option<usize>) -> Self::SerializeMap;
        serialize_struct(name: &'static str, len: usize) -> Self::SerializeStruct;
        serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> Self::SerializeStructVariant;
    }
}

enum MapKey {
    /// A string key, interned: its provisional id.
    Str(u64),
    Int(i64),
}

/// Serializes a map key: strings (and chars) make objects, integers make intmaps. String
/// keys are interned as they come, with no copy of their text (a `HashMap<String, _>` or
/// a `serde_json::Value` pays one per key otherwise).
struct KeySerializer<'b> {
    b: &'b mut Builder,
    /// The map's nesting level and the key's position in it.
    depth: usize,
    position: usize,
}

fn key_error() -> Error {
    Error::new(Category::Custom, "map keys must be strings or integers in i64")
}

impl ser::Serializer for KeySerializer<'_> {
    type Ok = MapKey;
    type Error = Error;
    type SerializeSeq = ser::Impossible<MapKey, Error>;
    type SerializeTuple = ser::Impossible<MapKey, Error>;
    type SerializeTupleStruct = ser::Impossible<MapKey, Error>;
    type SerializeTupleVariant = ser::Impossible<MapKey, Error>;
    type SerializeMap = ser::Impossible<MapKey, Error>;
    type SerializeStruct = ser::Impossible<MapKey, Error>;
    type SerializeStructVariant = ser::Impossible<MapKey, Error>;

    fn serialize_bool(self, _: bool) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_i8(self, v: i8) -> Result<MapKey> {
        Ok(MapKey::Int(v as i64))
    }
    fn serialize_i16(self, v: i16) -> Result<MapKey> {
        Ok(MapKey::Int(v as i64))
    }
    fn serialize_i32(self, v: i32) -> Result<MapKey> {
        Ok(MapKey::Int(v as i64))
    }
    fn serialize_i64(self, v: i64) -> Result<MapKey> {
        Ok(MapKey::Int(v))
    }
    fn serialize_u8(self, v: u8) -> Result<MapKey> {
        Ok(MapKey::Int(v as i64))
    }
    fn serialize_u16(self, v: u16) -> Result<MapKey> {
        Ok(MapKey::Int(v as i64))
    }
    fn serialize_u32(self, v: u32) -> Result<MapKey> {
        Ok(MapKey::Int(v as i64))
    }
    fn serialize_u64(self, v: u64) -> Result<MapKey> {
        i64::try_from(v).map(MapKey::Int).map_err(|_| key_error())
    }
    fn serialize_f32(self, _: f32) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_f64(self, _: f64) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_char(self, v: char) -> Result<MapKey> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<MapKey> {
        Ok(MapKey::Str(self.b.key_id_guessed(v, self.depth, self.position)))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<MapKey> {
        Ok(MapKey::Str(self.b.static_key_id(variant)))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<MapKey> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<MapKey> {
        Err(key_error())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_error())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(key_error())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct> {
        Err(key_error())
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant> {
        Err(key_error())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_error())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(key_error())
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant> {
        Err(key_error())
    }
}

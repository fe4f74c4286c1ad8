//! serde `Deserializer` over a lazy `Node`: `from_slice` for any `Deserialize` type.
//! Strings and bytes are borrowed from the document; fields a type does not ask for are
//! skipped without being read (`IgnoredAny` touches no child).

use std::cell::Cell;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use crate::error::{Category, Error, Result};
use crate::format::budget::Budget;
use crate::format::container::{Children, Geometry};
use crate::format::data;
use crate::format::typed::{self, TypedHeader};
use crate::format::{tag, DEFAULT_MAX_DEPTH};
use crate::read::Node;
use crate::typed_de::TypedDeserializer;
use crate::value::Kind;

/// What every level of one `from_slice` shares.
pub(crate) struct Ctx<'a> {
    pub budget: Budget,
    /// Key texts by id, each checked for UTF-8 the first time it is met rather than at
    /// every object entry — and only those met: a stream's key table holds the keys of
    /// every message so far, most of them not in this one.
    keys: Vec<Cell<Option<&'a str>>>,
    /// The root: every node of the walk is in its document ([`Node::with`]).
    root: Node<'a>,
    /// The root's bytes, which the containers of the walk are read from.
    buf: &'a [u8],
}

impl<'a> Ctx<'a> {
    pub fn new(root: &Node<'a>) -> Result<Ctx<'a>> {
        Ok(Ctx {
            budget: Budget::for_document(root.buf().len()),
            keys: vec![Cell::new(None); root.key_count() as usize],
            root: *root,
            buf: root.buf(),
        })
    }

    /// The text of key `id`, met in the object at `pos`.
    #[inline]
    fn key(&self, id: u64, pos: usize) -> Result<&'a str> {
        let slot = self
            .keys
            .get(id as usize)
            .ok_or_else(|| Error::malformed(pos as u64, format!("key id {id} is not in the dictionary")))?;
        if let Some(text) = slot.get() {
            return Ok(text);
        }
        let text = self.root.key_str(id)?;
        slot.set(Some(text));
        Ok(text)
    }
}

/// Deserializes one value, known by its stored (tag, payload) pair (spec §3); the rest of
/// a `Node` (the document's bytes, its dictionary) is the walk's, in `Ctx`. Kept to three
/// words because serde passes it by value at every field: a whole `Node` copied at each
/// was a fifth of a string field's cost, most of it loads waiting on the stores just made.
pub(crate) struct NodeDeserializer<'a, 'b> {
    payload: u64,
    tag: u8,
    depth_left: u32,
    ctx: &'b Ctx<'a>,
}

impl<'a, 'b> NodeDeserializer<'a, 'b> {
    /// The deserializer of the walk's root.
    pub fn root(ctx: &'b Ctx<'a>) -> Self {
        NodeDeserializer { payload: ctx.root.payload(), tag: ctx.root.tag(), depth_left: DEFAULT_MAX_DEPTH as u32, ctx }
    }

    /// The deserializer of a child whose stored pair is (`tag`, `payload`).
    fn child(ctx: &'b Ctx<'a>, (tag, payload): (u8, u64), depth_left: u32) -> Self {
        NodeDeserializer { payload, tag, depth_left, ctx }
    }

    /// The value as a `Node`, for the paths that are not a field's hot loop.
    fn node(&self) -> Node<'a> {
        self.ctx.root.with(self.tag, self.payload)
    }

    fn offset(&self) -> u64 {
        if tag::is_pointer(self.tag) { self.payload } else { 0 }
    }

    /// A packed object (spec §13.7), decoded: its entries come from columns, as owned
    /// values (only `from_slice_owned` lets a packed document here).
    #[inline(never)]
    fn packed_object(&self) -> Result<crate::Value> {
        let depth_left = self.nested()?;
        crate::packed::decode_block_typed(self.ctx.buf, tag::PACKED_OBJECT, self.payload, depth_left as usize)
    }

    #[inline]
    fn nested(&self) -> Result<u32> {
        match self.depth_left.checked_sub(1) {
            Some(left) => Ok(left),
            None => Err(self.too_deep()),
        }
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> Error {
        Error::depth_limit(DEFAULT_MAX_DEPTH).at(self.offset())
    }

    /// The container at the payload, entered: one level of depth and one unit of budget.
    #[inline]
    fn enter(&self) -> Result<(Geometry, u32)> {
        self.ctx.budget.charge(1, self.payload)?;
        let depth_left = self.nested()?;
        Ok((Geometry::parse(self.ctx.buf, self.payload, self.tag)?, depth_left))
    }

    /// Hands the typed array at the payload to `visitor` from one parsed header, which
    /// also gives its cost. Kept out of line: the header is large, and the recursive
    /// `deserialize_any` frame of every nested container would otherwise carry it (deep
    /// documents must not exhaust the stack before the depth limit).
    #[inline(never)]
    fn visit_typed<V: Visitor<'a>>(self, visitor: V, bytes: bool) -> Result<V::Value> {
        let buf = self.ctx.buf;
        // Most are vectors (one dimension, no mask): read from the block's first bytes.
        if let Some((element, data_pos, d)) = typed::rank1(buf, self.payload) {
            let data = &buf[data_pos..data_pos + d * element.size()];
            self.ctx.budget.charge(Budget::typed_cost(&[d as u64], data.len()), self.payload)?;
            self.nested()?;
            return crate::typed_de::visit_vector(data, element, bytes, visitor);
        }
        let header = TypedHeader::parse(buf, self.payload)?;
        self.ctx.budget.charge(Budget::typed_header_cost(&header), self.payload)?;
        // A typed array is one block however many axes it has: one level of depth.
        self.nested()?;
        let typed = TypedDeserializer { buf, header: &header, level: 0, start: 0 };
        if bytes {
            de::Deserializer::deserialize_bytes(typed, visitor)
        } else {
            de::Deserializer::deserialize_any(typed, visitor)
        }
    }

    /// Every value that `deserialize_any` does not read itself: the rarer scalars, tables
    /// and packed blocks.
    #[inline(never)]
    fn visit_other<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value> {
        let node = self.node();
        match self.tag {
            // Only `from_slice_owned` lets a packed document here: its elements are read
            // from their columns (owned strings), with the packed block's own budget.
            tag::PACKED => {
                self.nested()?;
                return crate::packed::de::visit_packed(node.buf(), node.payload(), visitor);
            }
            tag::PACKED_OBJECT => return de::Deserializer::deserialize_any(self.packed_object()?, visitor),
            _ => {}
        }
        self.ctx.budget.charge(node.visit_cost(), node.offset())?;
        match self.tag {
            tag::UINT => visitor.visit_u64(node.as_u64()?),
            tag::F32 => visitor.visit_f32(node.as_f32()?),
            tag::BYTES => visitor.visit_borrowed_bytes(node.as_bytes()?),
            tag::BIGNUM => {
                let digits = node.as_bignum()?;
                match (digits.parse::<i128>(), digits.parse::<u128>()) {
                    (Ok(v), _) => visitor.visit_i128(v),
                    (_, Ok(v)) => visitor.visit_u128(v),
                    _ => visitor.visit_borrowed_str(digits),
                }
            }
            // A map of columns, each a sequence of cells (spec §15.2).
            tag::TABLE => {
                self.nested()?;
                crate::table_de::visit_table(node.table()?, visitor)
            }
            // Readers refuse other tags where they meet them (slots, the root); this
            // keeps the walk total if one got through.
            t => Err(Error::malformed(node.offset(), format!("tag 0x{t:02x} is not a value's tag"))),
        }
    }
}

/// `Deserializer` methods for numbers: `tag`'s inline payload is visited in line, with
/// the one unit of budget `deserialize_any` charges for it; other tags go through
/// `deserialize_any`.
macro_rules! inline_scalar {
    ($($method:ident => $tag:ident $visit:ident($convert:path);)*) => {
        $(#[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            if self.tag == tag::$tag {
                self.ctx.budget.charge(1, 0)?;
                return visitor.$visit($convert(self.payload));
            }
            self.deserialize_any(visitor)
        })*
    };
}

impl<'de> de::Deserializer<'de> for NodeDeserializer<'de, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let ctx = self.ctx;
        match self.tag {
            tag::STRING => {
                // The most common field: its block is found once for the budget and the text.
                let bytes = data::block(ctx.buf, self.payload)?;
                ctx.budget.charge(Budget::block_cost(bytes.len()), self.payload)?;
                match data::utf8(bytes) {
                    Some(text) => visitor.visit_borrowed_str(text),
                    // Not UTF-8: the reader's own check gives its own error.
                    None => visitor.visit_borrowed_str(self.node().as_str()?),
                }
            }
            tag::OBJECT => {
                let (c, depth_left) = self.enter()?;
                visitor.visit_map(MapAccess { children: c.children(ctx.buf), value: None, depth_left, ctx })
            }
            tag::ARRAY => {
                let (c, depth_left) = self.enter()?;
                visitor.visit_seq(SeqAccess { children: c.children(ctx.buf), depth_left, ctx })
            }
            tag::INTMAP => {
                let (c, depth_left) = self.enter()?;
                visitor.visit_map(IntMapAccess { children: c.children(ctx.buf), value: None, depth_left, ctx })
            }
            tag::TYPED => self.visit_typed(visitor, false),
            // Inline scalars: one unit of budget each, as `visit_cost` says.
            tag::INT => {
                ctx.budget.charge(1, 0)?;
                visitor.visit_i64(self.payload as i64)
            }
            tag::F64 => {
                ctx.budget.charge(1, 0)?;
                visitor.visit_f64(f64::from_bits(self.payload))
            }
            tag::TRUE | tag::FALSE => {
                ctx.budget.charge(1, 0)?;
                visitor.visit_bool(self.tag == tag::TRUE)
            }
            tag::NULL => {
                ctx.budget.charge(1, 0)?;
                visitor.visit_unit()
            }
            _ => self.visit_other(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.tag == tag::NULL {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.tag == tag::TYPED {
            return self.visit_typed(visitor, true);
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let node = self.node();
        match node.kind() {
            Kind::String => visitor.visit_enum(node.as_str()?.into_deserializer()),
            Kind::Object if node.tag() == tag::PACKED_OBJECT => {
                de::Deserializer::deserialize_enum(self.packed_object()?, "", &[], visitor)
            }
            Kind::Object => {
                let mut entries = node.entries()?;
                let (Some(first), None) = (entries.next(), entries.next()) else {
                    return Err(Error::new(
                        Category::WrongType,
                        "an enum variant must be an object with exactly one key",
                    ));
                };
                let (variant, value) = first?;
                visitor.visit_enum(EnumAccess {
                    variant,
                    value: NodeDeserializer::child(self.ctx, (value.tag(), value.payload()), self.nested()?),
                })
            }
            kind => Err(Error::wrong_type("an enum (string or one-key object)", kind)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        let node = self.node();
        if matches!(node.kind(), Kind::Array | Kind::TypedArray) {
            check_tuple_len(node.len()?, len)?;
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_tuple(len, visitor)
    }

    // A number the type asks for, stored inline as that kind, is read in the caller's
    // loop (a map of `i32 -> f64` pays a call per value otherwise); anything else goes
    // the general way, which also gives the errors.
    inline_scalar! {
        deserialize_f64 => F64 visit_f64(f64::from_bits);
        deserialize_f32 => F64 visit_f64(f64::from_bits);
        deserialize_i64 => INT visit_i64(as_i64);
        deserialize_i32 => INT visit_i64(as_i64);
        deserialize_i16 => INT visit_i64(as_i64);
        deserialize_i8 => INT visit_i64(as_i64);
        deserialize_u64 => INT visit_i64(as_i64);
        deserialize_u32 => INT visit_i64(as_i64);
        deserialize_u16 => INT visit_i64(as_i64);
        deserialize_u8 => INT visit_i64(as_i64);
    }

    serde::forward_to_deserialize_any! {
        bool i128 u128 char str string
        unit unit_struct seq map struct identifier
    }
}

/// An `int` slot's payload, sign-extended when it was read.
#[inline(always)]
fn as_i64(payload: u64) -> i64 {
    payload as i64
}

/// Checks that an array of `found` elements is read as a tuple (or fixed-size array) of
/// as many: read as a pair, an array of three would lose its third element. Checked before
/// the visit, by the tuple requests, so that the element loops stay as they are.
pub(crate) fn check_tuple_len(found: usize, wanted: usize) -> Result<()> {
    if found == wanted {
        return Ok(());
    }
    Err(Error::new(Category::WrongType, format!("an array of {found} elements read as a tuple of {wanted}")))
}

/// The children of an array.
struct SeqAccess<'a, 'b> {
    children: Children<'a>,
    depth_left: u32,
    ctx: &'b Ctx<'a>,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'de, '_> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some((_, t, payload)) = self.children.next_child()? else { return Ok(None) };
        seed.deserialize(NodeDeserializer::child(self.ctx, (t, payload), self.depth_left)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.children.remaining())
    }
}

/// The entries of an object: keys borrowed from the dictionary.
struct MapAccess<'a, 'b> {
    children: Children<'a>,
    /// The stored pair of the value whose key was just read.
    value: Option<(u8, u64)>,
    depth_left: u32,
    ctx: &'b Ctx<'a>,
}

impl<'de> de::MapAccess<'de> for MapAccess<'de, '_> {
    type Error = Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some((id, t, payload)) = self.children.next_child()? else { return Ok(None) };
        let key = self.ctx.key(id, self.children.pos())?;
        self.value = Some((t, payload));
        seed.deserialize(BorrowedStr(key)).map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let stored = self.value.take().ok_or_else(value_before_key)?;
        seed.deserialize(NodeDeserializer::child(self.ctx, stored, self.depth_left))
    }

    /// Key and value in one step (maps' visitors ask so), without keeping the value's
    /// stored pair between two calls.
    #[inline]
    fn next_entry_seed<K: DeserializeSeed<'de>, V: DeserializeSeed<'de>>(&mut self, kseed: K, vseed: V) -> Result<Option<(K::Value, V::Value)>> {
        let Some((id, t, payload)) = self.children.next_child()? else { return Ok(None) };
        let key = kseed.deserialize(BorrowedStr(self.ctx.key(id, self.children.pos())?))?;
        let value = vseed.deserialize(NodeDeserializer::child(self.ctx, (t, payload), self.depth_left))?;
        Ok(Some((key, value)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.children.remaining())
    }
}

/// The entries of an intmap: integer keys.
struct IntMapAccess<'a, 'b> {
    children: Children<'a>,
    value: Option<(u8, u64)>,
    depth_left: u32,
    ctx: &'b Ctx<'a>,
}

impl<'de> de::MapAccess<'de> for IntMapAccess<'de, '_> {
    type Error = Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some((key, t, payload)) = self.children.next_child()? else { return Ok(None) };
        self.value = Some((t, payload));
        seed.deserialize(IntKey(key as i64)).map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let stored = self.value.take().ok_or_else(value_before_key)?;
        seed.deserialize(NodeDeserializer::child(self.ctx, stored, self.depth_left))
    }

    /// Key and value in one step (maps' visitors ask so), without keeping the value's
    /// stored pair between two calls.
    #[inline]
    fn next_entry_seed<K: DeserializeSeed<'de>, V: DeserializeSeed<'de>>(&mut self, kseed: K, vseed: V) -> Result<Option<(K::Value, V::Value)>> {
        let Some((key, t, payload)) = self.children.next_child()? else { return Ok(None) };
        let key = kseed.deserialize(IntKey(key as i64))?;
        let value = vseed.deserialize(NodeDeserializer::child(self.ctx, (t, payload), self.depth_left))?;
        Ok(Some((key, value)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.children.remaining())
    }
}

#[cold]
fn value_before_key() -> Error {
    Error::new(Category::Custom, "value requested before key")
}

/// An object key, borrowed from the dictionary.
struct BorrowedStr<'a>(&'a str);

impl<'de> de::Deserializer<'de> for BorrowedStr<'de> {
    type Error = Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_borrowed_str(self.0)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// An intmap key: an integer, also accepted by types that want string keys.
struct IntKey(i64);

impl<'de> de::Deserializer<'de> for IntKey {
    type Error = Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_i64(self.0)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.0.to_string())
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.0.to_string())
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct EnumAccess<'a, 'b> {
    variant: &'a str,
    value: NodeDeserializer<'a, 'b>,
}

impl<'de, 'b> de::EnumAccess<'de> for EnumAccess<'de, 'b> {
    type Error = Error;
    type Variant = NodeDeserializer<'de, 'b>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self::Variant)> {
        let v = seed.deserialize(BorrowedStr(self.variant))?;
        Ok((v, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for NodeDeserializer<'de, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        if self.tag == tag::NULL {
            Ok(())
        } else {
            Err(Error::wrong_type("null for a unit variant", self.node().kind()))
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }
}

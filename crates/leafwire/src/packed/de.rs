//! serde straight from a packed array's columns (spec §13): each element is deserialized by
//! taking the next entries of its nodes' streams, the unshredder's own steps, with no
//! `Value` built in between. Strings are lent from their decoded pages' text (a `String`
//! field then allocates as it takes one, in row order); object keys are lent from the
//! group's key table; residual values go through `Value`'s deserializer.
//!
//! Every stripe's columns are decoded before the first element is handed over (a stripe
//! at a time would need the reader to hold both a stripe's streams and the unshredder
//! borrowing them). Each container must be read to its end: a visitor that stops early
//! would leave the streams out of step with the elements after it, so that is an error,
//! as serde's own `SeqDeserializer` and `MapDeserializer` report trailing entries.

use serde::de::value::{SeqDeserializer, StrDeserializer};
use serde::de::{self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde::forward_to_deserialize_any;

use super::group::{below, unshred_error};
use super::shred::{kind, Shredded, Unshredder};
use crate::error::{Error, Result};
use crate::{Kind, Value};

/// An unshredder step's error as a document error.
macro_rules! step {
    ($e:expr, $dir:expr) => {
        $e.map_err(|m| unshred_error(m, $dir))?
    };
}

/// Visits the packed array at `payload` in `buf` (a document with feature bit 0) as a
/// sequence of its elements. Out of line, as `de.rs`'s `visit_typed`, so that its state
/// does not enlarge the frame of the node deserializer's recursive `deserialize_any`.
#[inline(never)]
pub(crate) fn visit_packed<'de, V: Visitor<'de>>(buf: &[u8], payload: u64, visitor: V) -> Result<V::Value> {
    let group = super::open_block(buf, payload)?;
    let mut budget = super::decode_budget(buf.len());
    let mut totals = vec![0usize; group.column_count()];
    let mut stripes = Vec::with_capacity(group.stripe_count());
    for s in 0..group.stripe_count() {
        let mut streams = group.template();
        let dir = group.load_stripe(s, None, &mut streams, &mut budget, &mut totals)?;
        stripes.push((streams, dir));
    }
    group.check_totals(&totals)?;
    // Tuple lengths were checked by the caller (`check_tuple_len`); a custom visitor may
    // still stop before the end, as for an ordinary array: the group is self-contained,
    // so nothing after it is out of step.
    visitor.visit_seq(Elements { stripes: stripes.iter_mut(), current: None, budget: Some(&mut budget), left: group.len() })
}

/// The value under the object keys `keys` in every element of the packed array at
/// `payload`, deserialized as `T` straight from the columns on that path (as
/// [`super::group::Group::select`] reads them, without building the elements' objects).
/// An element whose value on the path is not an object, or lacks the key, gives what
/// `T` makes of `Null`; a value stored whole (residual) is stepped through as a `Value`.
#[inline(never)]
pub(crate) fn select_packed<T: de::DeserializeOwned>(buf: &[u8], payload: u64, keys: &[&str]) -> Result<Vec<T>> {
    let mut group = super::open_block(buf, payload)?;
    let (keep, path) = group.nodes_on(keys);
    let rest = &keys[path.len()..];
    let mut budget = super::decode_budget(buf.len());
    let mut budget = &mut budget;
    let mut totals = vec![0usize; group.column_count()];
    let mut streams = group.take_template();
    let mut out = Vec::with_capacity(group.len());
    for s in 0..group.stripe_count() {
        let dir = group.load_stripe(s, Some(&keep), &mut streams, budget, &mut totals)?;
        let mut u = Unshredder::new(&mut streams, budget).keeping(&keep);
        for _ in 0..u.len() {
            out.push(select_one(&mut u, &path, keys, rest, dir)?);
        }
        step!(u.check_used_up(), dir);
        budget = u.into_budget();
    }
    group.check_totals(&totals)?;
    Ok(out)
}

/// The next element's value on `path` (key ids and their nodes), then below `rest`.
fn select_one<T: de::DeserializeOwned>(
    u: &mut Unshredder<'_, '_>,
    path: &[(u32, usize)],
    keys: &[&str],
    rest: &[&str],
    dir: usize,
) -> Result<T> {
    let mut node = 0;
    for (i, &(id, child)) in path.iter().enumerate() {
        let k = step!(u.kind(node), dir);
        if k != kind::OBJECT || u.is_keyed(node) {
            let value = step!(u.read_kind(node, k), dir);
            return crate::from_value(below(value, &keys[i..]));
        }
        // The object's other fields are not loaded: only the one on the path is read.
        if !step!(u.shape(node), dir).iter().any(|&(field, _)| field == id) {
            return crate::from_value(Value::Null);
        }
        node = child;
    }
    if rest.is_empty() {
        return T::deserialize(Element { u, node, dir, kind: None });
    }
    let k = step!(u.kind(node), dir);
    crate::from_value(below(step!(u.read_kind(node, k), dir), rest))
}

/// The elements of a group, stripe after stripe.
struct Elements<'w, 'b> {
    stripes: std::slice::IterMut<'w, (Shredded<'static>, usize)>,
    /// The stripe being read: its unshredder, its directory's offset, elements read.
    current: Option<(Unshredder<'w, 'b>, usize, usize)>,
    /// The decode budget, while no stripe holds it.
    budget: Option<&'b mut u64>,
    left: usize,
}

impl<'de> SeqAccess<'de> for Elements<'_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        loop {
            if let Some((u, dir, read)) = &mut self.current {
                if *read < u.len() {
                    *read += 1;
                    self.left -= 1;
                    return seed.deserialize(Element { u, node: 0, dir: *dir, kind: None }).map(Some);
                }
                u.check_used_up().map_err(|m| unshred_error(m, *dir))?;
                let (u, _, _) = self.current.take().expect("a current stripe");
                self.budget = Some(u.into_budget());
            }
            let Some((streams, dir)) = self.stripes.next() else { return Ok(None) };
            let budget = self.budget.take().expect("the budget, between stripes");
            self.current = Some((Unshredder::new(streams, budget), *dir, 0));
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// The next value of `node`; `kind` when already read (an option's, an enum's).
struct Element<'u, 'w, 'b> {
    u: &'u mut Unshredder<'w, 'b>,
    node: usize,
    /// Where errors are reported: the stripe's directory.
    dir: usize,
    kind: Option<u8>,
}

impl Element<'_, '_, '_> {
    #[inline]
    fn kind(&mut self) -> Result<u8> {
        match self.kind {
            Some(k) => Ok(k),
            None => self.u.kind(self.node).map_err(|m| unshred_error(m, self.dir)),
        }
    }
}

/// The kind of value a shredded kind reads as, for error messages.
fn shown(k: u8) -> Kind {
    match k {
        kind::NULL => Kind::Null,
        kind::BOOL => Kind::Bool,
        kind::INT => Kind::Int,
        kind::FLOAT => Kind::F64,
        kind::STRING => Kind::String,
        kind::ARRAY => Kind::Array,
        kind::INTMAP => Kind::IntMap,
        _ => Kind::Object,
    }
}

impl<'de> de::Deserializer<'de> for Element<'_, '_, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        let k = self.kind()?;
        let Element { u, node, dir, .. } = self;
        match k {
            kind::NULL => visitor.visit_unit(),
            kind::BOOL => visitor.visit_bool(step!(u.bool(node), dir)),
            kind::INT => visitor.visit_i64(step!(u.int(node), dir)),
            kind::FLOAT => visitor.visit_f64(step!(u.float(node), dir)),
            kind::STRING => visitor.visit_str(step!(u.string(node), dir)),
            kind::RESIDUAL => step!(u.residual(node), dir).deserialize_any(visitor),
            kind::ARRAY => {
                let (len, elements) = step!(u.array(node), dir);
                visit_whole_seq(visitor, Items { u, node, elements, len, next: 0, dir })
            }
            kind::OBJECT if u.is_keyed(node) => {
                let (len, values) = step!(u.map(node), dir);
                let mut map = Entries { u, node, values, left: len, int_keys: false, dir };
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            kind::OBJECT => {
                let fields = step!(u.shape(node), dir);
                let mut map = Fields { u, node, fields, next: 0, value_node: None, dir };
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            kind::INTMAP => {
                let (len, values) = step!(u.map(node), dir);
                let mut map = Entries { u, node, values, left: len, int_keys: true, dir };
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            _ => Err(unshred_error("unknown kind", dir)),
        }
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.kind.is_none() {
            if let Some(x) = self.u.only_float(self.node) {
                return visitor.visit_f64(step!(x, self.dir));
            }
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        if self.kind.is_none() {
            if let Some(values) = self.u.float_tuple(self.node, len) {
                let values = step!(values, self.dir);
                return visit_whole_seq(visitor, SeqDeserializer::new(values[..len].iter().copied()));
            }
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.kind.is_none() {
            if let Some(elements) = self.u.float_elements(self.node) {
                let Element { u, node, dir, .. } = self;
                step!(u.kind(node), dir);
                let (left, _) = step!(u.array(node), dir);
                return visit_whole_seq(visitor, Floats { u, elements, left, dir });
            }
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.kind()? {
            kind::NULL => visitor.visit_none(),
            k => visitor.visit_some(Element { kind: Some(k), ..self }),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let k = self.kind()?;
        let Element { u, node, dir, .. } = self;
        match k {
            kind::STRING => visitor.visit_enum(StrDeserializer::<Error>::new(step!(u.string(node), dir))),
            kind::RESIDUAL => de::Deserializer::deserialize_enum(step!(u.residual(node), dir), name, variants, visitor),
            // `{variant: content}`, as the serializer writes every other variant.
            kind::OBJECT if u.is_keyed(node) => match step!(u.map(node), dir) {
                (1, values) => {
                    let variant = step!(u.key_text(node), dir);
                    visitor.visit_enum(Variant { variant, content: Element { u, node: values, dir, kind: None } })
                }
                _ => Err(Error::wrong_type("an enum (string or one-key object)", Kind::Object)),
            },
            kind::OBJECT => match step!(u.shape(node), dir) {
                &[field] => {
                    let (variant, child) = step!(u.field(field), dir);
                    visitor.visit_enum(Variant { variant, content: Element { u, node: child, dir, kind: None } })
                }
                _ => Err(Error::wrong_type("an enum (string or one-key object)", Kind::Object)),
            },
            k => Err(Error::wrong_type("an enum (string or one-key object)", shown(k))),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 char str string
        bytes byte_buf unit unit_struct tuple_struct map struct identifier ignored_any
    }
}

/// Visits `seq` and checks that the visitor read it to its end (`seq`'s size hint is
/// exact): the streams of the elements after it would otherwise be out of step.
fn visit_whole_seq<'de, V: Visitor<'de>, S: SeqAccess<'de, Error = Error>>(visitor: V, mut seq: S) -> Result<V::Value> {
    let value = visitor.visit_seq(&mut seq)?;
    match seq.size_hint() {
        Some(0) | None => Ok(value),
        Some(left) => Err(Error::new(
            crate::Category::WrongType,
            format!("the array has {left} more element(s) than the type it is read as takes"),
        )),
    }
}

/// The elements of one array.
struct Items<'u, 'w, 'b> {
    u: &'u mut Unshredder<'w, 'b>,
    node: usize,
    elements: Option<usize>,
    len: usize,
    next: usize,
    dir: usize,
}

impl<'de> SeqAccess<'de> for Items<'_, '_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.next == self.len {
            return Ok(None);
        }
        let node = step!(self.u.element(self.node, self.elements, self.next), self.dir);
        self.next += 1;
        seed.deserialize(Element { u: &mut *self.u, node, dir: self.dir, kind: None }).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len - self.next)
    }
}

/// The elements of an array of floats only, read straight from their node's stream.
struct Floats<'u, 'w, 'b> {
    u: &'u mut Unshredder<'w, 'b>,
    elements: usize,
    left: usize,
    dir: usize,
}

impl<'de> SeqAccess<'de> for Floats<'_, '_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let x = match self.u.only_float(self.elements) {
            Some(x) => step!(x, self.dir),
            None => return Err(unshred_error("an array of floats holds another kind", self.dir)),
        };
        seed.deserialize(x.into_deserializer()).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// The fields of a shaped object: keys from its shape, each value in its field's node.
struct Fields<'u, 'w, 'b> {
    u: &'u mut Unshredder<'w, 'b>,
    node: usize,
    fields: &'w [(u32, usize)],
    next: usize,
    /// The node of the field whose key was just given.
    value_node: Option<usize>,
    dir: usize,
}

impl Fields<'_, '_, '_> {
    fn end(&self) -> Result<()> {
        if self.next == self.fields.len() && self.value_node.is_none() {
            return Ok(());
        }
        Err(de::Error::invalid_length(self.fields.len(), &format!("{} entries", self.next).as_str()))
    }
}

impl<'de> MapAccess<'de> for Fields<'_, '_, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some(&field) = self.fields.get(self.next) else { return Ok(None) };
        self.next += 1;
        let (key, child) = step!(self.u.field(field), self.dir);
        self.value_node = Some(child);
        seed.deserialize(StrDeserializer::<Error>::new(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let node = self.value_node.take().ok_or_else(|| <Error as de::Error>::custom("a value asked before its key"))?;
        seed.deserialize(Element { u: &mut *self.u, node, dir: self.dir, kind: None })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len() - self.next)
    }
}

/// The entries of a keyed object (text keys) or an intmap (integer keys): keys from the
/// node's key stream, values from its map-value node.
struct Entries<'u, 'w, 'b> {
    u: &'u mut Unshredder<'w, 'b>,
    node: usize,
    values: usize,
    left: usize,
    int_keys: bool,
    dir: usize,
}

impl Entries<'_, '_, '_> {
    fn end(&self) -> Result<()> {
        if self.left == 0 {
            return Ok(());
        }
        Err(de::Error::invalid_length(self.left, &"every entry read"))
    }
}

impl<'de> MapAccess<'de> for Entries<'_, '_, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        if self.int_keys {
            let key = step!(self.u.int_key(self.node), self.dir);
            return seed.deserialize(IntoDeserializer::<Error>::into_deserializer(key)).map(Some);
        }
        let key = step!(self.u.key_text(self.node), self.dir);
        seed.deserialize(StrDeserializer::<Error>::new(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(Element { u: &mut *self.u, node: self.values, dir: self.dir, kind: None })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// A variant written as an object of one field.
struct Variant<'u, 'w, 'b> {
    variant: &'w str,
    content: Element<'u, 'w, 'b>,
}

impl<'de, 'u, 'w, 'b> EnumAccess<'de> for Variant<'u, 'w, 'b> {
    type Error = Error;
    type Variant = Element<'u, 'w, 'b>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant)> {
        let name = seed.deserialize(StrDeserializer::<Error>::new(self.variant))?;
        Ok((name, self.content))
    }
}

impl<'de> VariantAccess<'de> for Element<'_, '_, '_> {
    type Error = Error;

    fn unit_variant(mut self) -> Result<()> {
        match self.kind()? {
            kind::NULL => Ok(()),
            k => Err(Error::wrong_type("null for a unit variant", shown(k))),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }
}

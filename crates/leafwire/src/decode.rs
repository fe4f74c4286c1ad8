//! Full decoding: a `Node` and everything under it into a tree — the owned `Value`, or the
//! borrowed `ValueRef` whose strings, keys and typed arrays point into the document.
//!
//! One walker serves both. It reads each container's header once and then its tags and
//! slots directly, resolves a key id to its text once per document (the first time it is
//! met), and charges the document's `Budget` per block so that a crafted document whose
//! containers share children cannot make decoding exponential.

use rustc_hash::FxHashSet;

use crate::error::{Error, Result};
use crate::format::budget::Budget;
use crate::format::container::{self, Geometry};
use crate::format::data::utf8;
use crate::format::dictionary::DistinctTexts;
use crate::format::typed::TypedHeader;
use crate::format::{is_bignum_text, tag, DEFAULT_MAX_DEPTH};
use crate::read::{Node, TypedRef};
use crate::value::{IntMap, Map, Value};
use crate::arena::Arena;
use crate::value_ref::ValueRef;

impl<'a> Node<'a> {
    /// Decodes this value and everything under it (nesting up to `DEFAULT_MAX_DEPTH`).
    pub fn to_value(&self) -> Result<Value> {
        self.to_value_with(DEFAULT_MAX_DEPTH)
    }

    /// Decodes this value and everything under it, accepting nesting up to `max_depth`.
    pub fn to_value_with(&self, max_depth: usize) -> Result<Value> {
        self.decode_tree((), max_depth)
    }

    /// Decodes this value and everything under it into a tree that borrows its strings,
    /// keys, bytes and typed arrays from the document and keeps its containers in `arena`
    /// (nesting up to `DEFAULT_MAX_DEPTH`).
    pub fn to_value_ref<'t>(&self, arena: &'t Arena) -> Result<ValueRef<'t>>
    where
        'a: 't,
    {
        self.to_value_ref_in(arena, DEFAULT_MAX_DEPTH)
    }

    /// As [`Node::to_value_ref`], accepting nesting up to `max_depth`.
    pub fn to_value_ref_in<'t>(&self, arena: &'t Arena, max_depth: usize) -> Result<ValueRef<'t>>
    where
        'a: 't,
    {
        let node: Node<'t> = *self;
        node.decode_tree(arena, max_depth)
    }

    fn decode_tree<T: Tree<'a>>(&self, arena: T::Arena, max_depth: usize) -> Result<T> {
        let budget = Budget::for_document(self.buf().len());
        if self.tag() == tag::TYPED {
            // Possibly a row of a higher-rank array: the node knows its level and start.
            let typed = self.typed()?;
            budget.charge(self.visit_cost(), self.offset())?;
            return Ok(T::typed(arena, typed));
        }
        let mut walk = Walk { node: *self, arena, texts: Vec::new(), distinct: DistinctTexts::for_keys(self.key_count()), stamps: Vec::new(), serial: 0, budget: &budget, limit: max_depth };
        walk.value(self.tag(), self.payload(), max_depth)
    }
}

/// Counts come from the document: reserve at most this much up front, grow past it.
const PREALLOCATE_LIMIT: usize = 1 << 16;

/// What a decoded tree is made of; the walker builds any tree that implements it.
pub(crate) trait Tree<'a>: Sized {
    /// Where containers are allocated: nowhere shared for owned values (`()`), the arena
    /// for borrowed ones.
    type Arena: Copy;
    type Array;
    type Object;
    type IntMap;

    fn null() -> Self;
    fn bool(v: bool) -> Self;
    fn int(v: i64) -> Self;
    fn uint(v: u64) -> Self;
    fn f64(v: f64) -> Self;
    fn f32(v: f32) -> Self;
    fn string(s: &'a str) -> Self;
    fn bytes(b: &'a [u8]) -> Self;
    fn bignum(digits: &'a str) -> Self;
    fn typed(arena: Self::Arena, t: TypedRef<'a>) -> Self;

    /// Containers are built child by child: `n` children are pushed (or the walk fails),
    /// and `n` was charged to the budget first, so an arena may allocate all of them up
    /// front. The walker has already refused a repeated key.
    fn array_with_capacity(arena: Self::Arena, n: usize) -> Self::Array;
    /// `[]` and `{}` (thousands in some documents), with nothing to allocate.
    fn empty_array() -> Self;
    fn empty_object() -> Self;
    fn array_push(a: &mut Self::Array, value: Self);
    fn array(a: Self::Array) -> Self;

    fn object_with_capacity(arena: Self::Arena, n: usize) -> Self::Object;
    fn object_insert(o: &mut Self::Object, key: &'a str, value: Self);
    fn object(o: Self::Object) -> Self;

    fn intmap_with_capacity(arena: Self::Arena, n: usize) -> Self::IntMap;
    fn intmap_insert(m: &mut Self::IntMap, key: i64, value: Self);
    fn intmap(m: Self::IntMap) -> Self;

    /// A packed array (spec §13), decoded into an owned value.
    fn packed(array: Value, offset: u64) -> Result<Self>;
    /// A table (spec §15).
    fn table(arena: Self::Arena, t: crate::table::TableRef<'a>) -> Result<Self>;
}

struct Walk<'a, 'b, A> {
    node: Node<'a>,
    arena: A,
    /// Key texts by id, resolved (and checked for UTF-8) the first time each is met.
    texts: Vec<Option<&'a str>>,
    /// The texts resolved so far: distinct ids in an object must mean distinct texts.
    distinct: DistinctTexts<'a>,
    /// For `object`: the serial of the object that last used each key id
    /// (ids of 256 and more), and the last serial given out.
    stamps: Vec<u64>,
    serial: u64,
    budget: &'b Budget,
    limit: usize,
}

impl<'a, A: Copy> Walk<'a, '_, A> {
    #[inline]
    fn buf(&self) -> &'a [u8] {
        self.node.buf()
    }

    /// One value: scalars here, inline in the loops of the containers that hold them.
    #[inline(always)]
    fn value<T: Tree<'a, Arena = A>>(&mut self, t: u8, payload: u64, depth_left: usize) -> Result<T> {
        Ok(match t {
            tag::NULL => T::null(),
            tag::FALSE => T::bool(false),
            tag::TRUE => T::bool(true),
            tag::INT => T::int(payload as i64),
            tag::UINT if payload <= i64::MAX as u64 => T::int(payload as i64),
            tag::UINT => T::uint(payload),
            tag::F64 => T::f64(f64::from_bits(payload)),
            tag::F32 => T::f32(f32::from_bits(payload as u32)),
            tag::STRING => T::string(self.string(payload)?),
            // A count byte of 0: most likely `[]` or `{}`, checked in full out of line. (Any
            // payload may come from a crafted slot: past the end, `get` finds nothing.)
            tag::ARRAY | tag::OBJECT if self.buf().get((payload as usize).wrapping_add(1)) == Some(&0) => {
                self.maybe_empty(t, payload, depth_left)?
            }
            _ => self.block_or_container(t, payload, depth_left)?,
        })
    }

    /// An empty array or object (thousands of `[]` in some documents), without the
    /// container walk: the same depth and budget rules, nothing to allocate. Anything else
    /// takes the walk.
    #[inline(never)]
    fn maybe_empty<T: Tree<'a, Arena = A>>(&mut self, t: u8, payload: u64, depth_left: usize) -> Result<T> {
        if !Geometry::is_plain_empty(self.buf(), payload, t) {
            return self.block_or_container(t, payload, depth_left);
        }
        if depth_left == 0 {
            return Err(Error::depth_limit(self.limit).at(payload));
        }
        self.budget.charge(Budget::container_cost(0), payload)?;
        Ok(if t == tag::ARRAY { T::empty_array() } else { T::empty_object() })
    }

    #[inline(never)]
    fn block_or_container<T: Tree<'a, Arena = A>>(&mut self, t: u8, payload: u64, depth_left: usize) -> Result<T> {
        Ok(match t {
            tag::BYTES => T::bytes(self.block(payload)?),
            tag::BIGNUM => {
                let digits = self.block(payload)?;
                match utf8(digits).filter(|_| is_bignum_text(digits)) {
                    Some(text) => T::bignum(text),
                    None => return Err(Error::malformed(payload, "bignum is not decimal digits")),
                }
            }
            tag::TYPED => {
                let header = TypedHeader::parse(self.buf(), payload)?;
                self.budget.charge(Budget::typed_header_cost(&header), payload)?;
                T::typed(self.arena, TypedRef { buf: self.buf(), header, level: 0, start: 0 })
            }
            tag::TABLE => {
                let t = crate::table::TableRef::in_document(self.buf(), payload)?;
                self.budget.charge(Budget::block_cost(t.body().len()), payload)?;
                T::table(self.arena, t)?
            }
            tag::PACKED | tag::PACKED_OBJECT => {
                self.budget.charge(1, payload)?;
                T::packed(crate::packed::decode_block_typed(self.buf(), t, payload, depth_left)?, payload)?
            }
            _ => {
                let depth_left = depth_left.checked_sub(1).ok_or_else(|| Error::depth_limit(self.limit).at(payload))?;
                // The slot width (layout byte, spec §4) picks the loop, which parses the
                // header in full (a byte past the end fails there).
                let width_code = self.buf().get(payload as usize).map_or(0, |b| b & container::bits::WIDTH_MASK);
                match (t, width_code) {
                    (tag::ARRAY, 0) => self.array::<T, 1>(payload, depth_left)?,
                    (tag::ARRAY, 1) => self.array::<T, 2>(payload, depth_left)?,
                    (tag::ARRAY, 2) => self.array::<T, 4>(payload, depth_left)?,
                    (tag::ARRAY, _) => self.array::<T, 8>(payload, depth_left)?,
                    (tag::OBJECT, 0) => self.object::<T, 1>(payload, depth_left)?,
                    (tag::OBJECT, 1) => self.object::<T, 2>(payload, depth_left)?,
                    (tag::OBJECT, 2) => self.object::<T, 4>(payload, depth_left)?,
                    (tag::OBJECT, _) => self.object::<T, 8>(payload, depth_left)?,
                    _ => self.intmap(payload, depth_left)?,
                }
            }
        })
    }

    /// The header of the container of tag `t` at `payload`, with its visit charged before
    /// the children (an arena may allocate all of them up front).
    #[inline(always)]
    fn container(&self, t: u8, payload: u64) -> Result<Geometry> {
        let g = Geometry::parse(self.buf(), payload, t)?;
        self.budget.charge(Budget::container_cost(g.count), payload)?;
        Ok(g)
    }

    /// The header of the container of tag `t` at `payload` whose slots are `W` bytes wide,
    /// as `container`: the loops of `array` and `object` are made for one width.
    #[inline(always)]
    fn container_of<const W: usize>(&self, t: u8, payload: u64) -> Result<Geometry> {
        let g = self.container(t, payload)?;
        // Both read the width from the same layout byte; checked, as the loop trusts it.
        if g.width as usize != W {
            return Err(Error::malformed(payload, "container slot width does not match its layout byte"));
        }
        Ok(g)
    }

    #[inline(never)]
    fn intmap<T: Tree<'a, Arena = A>>(&mut self, payload: u64, depth_left: usize) -> Result<T> {
        let g = self.container(tag::INTMAP, payload)?;
        let mut map = T::intmap_with_capacity(self.arena, g.count);
        let mut seen = FxHashSet::default();
        for i in 0..g.count {
            let key = g.key(self.buf(), i) as i64;
            // Small maps compare with the keys before; large ones hash.
            let repeated = if g.count <= 16 { (0..i).any(|j| g.key(self.buf(), j) as i64 == key) } else { !seen.insert(key) };
            if repeated {
                return Err(Error::malformed(payload, format!("duplicate key {key} in intmap")));
            }
            let (ct, cp) = g.child(self.buf(), i)?;
            let value = self.value(ct, cp, depth_left)?;
            T::intmap_insert(&mut map, key, value);
        }
        Ok(T::intmap(map))
    }

    /// The children of the array `g`, whose slots are `W` bytes wide: one loop per width,
    /// out of line, so that each keeps its state in registers.
    #[inline(never)]
    fn array<T: Tree<'a, Arena = A>, const W: usize>(&mut self, payload: u64, depth_left: usize) -> Result<T> {
        let g = self.container_of::<W>(tag::ARRAY, payload)?;
        let mut items = T::array_with_capacity(self.arena, g.count);
        g.each_child_of::<W>(self.buf(), |_, ct, cp| {
            let value = self.value(ct, cp, depth_left)?;
            T::array_push(&mut items, value);
            Ok(())
        })?;
        Ok(T::array(items))
    }

    /// The entries of the object `g`, whose slots are `W` bytes wide, as `array`. Each key
    /// id is checked to be new in the object as it is met (a repeated id is refused: the
    /// format forbids it, and a map would keep one value silently): ids below 256 (most of
    /// them) in a bit set of this object's, others by stamping each id with the object's
    /// serial.
    #[inline(never)]
    fn object<T: Tree<'a, Arena = A>, const W: usize>(&mut self, payload: u64, depth_left: usize) -> Result<T> {
        let g = &self.container_of::<W>(tag::OBJECT, payload)?;
        let mut object = T::object_with_capacity(self.arena, g.count);
        if self.texts.is_empty() {
            self.texts = vec![None; self.node.key_count() as usize];
        }
        let mut low = [0u64; 4];
        let mut serial = 0;
        let buf = self.buf();
        g.each_entry_of::<W>(buf, |id, ct, cp| {
            let repeated = if id < 256 {
                let (word, bit) = ((id >> 6) as usize, 1u64 << (id & 63));
                let seen = low[word] & bit != 0;
                low[word] |= bit;
                seen
            } else {
                self.stamp(id, &mut serial, g)?
            };
            let key = self.key(id, g)?;
            if repeated {
                return Err(Error::malformed(g.pos as u64, format!("duplicate key \"{key}\" in object")));
            }
            let value = self.value(ct, cp, depth_left)?;
            T::object_insert(&mut object, key, value);
            Ok(())
        })?;
        Ok(T::object(object))
    }

    /// Whether key `id` (256 or more) was already met in the object whose serial is
    /// `serial` (0: none given yet), stamping it.
    #[inline(always)]
    fn stamp(&mut self, id: u64, serial: &mut u64, g: &Geometry) -> Result<bool> {
        if *serial == 0 {
            *serial = self.next_serial();
        }
        match self.stamps.get_mut(id as usize) {
            Some(stamp) => Ok(std::mem::replace(stamp, *serial) == *serial),
            None => Err(self.key_outside(id, g)),
        }
    }

    /// A serial for the next object that has key ids of 256 or more.
    #[inline(always)]
    fn next_serial(&mut self) -> u64 {
        if self.stamps.is_empty() {
            self.make_stamps();
        }
        self.serial += 1;
        self.serial
    }

    #[cold]
    fn make_stamps(&mut self) {
        self.stamps = vec![0; self.texts.len()];
    }

    #[inline]
    fn block(&self, payload: u64) -> Result<&'a [u8]> {
        self.budget.block(self.buf(), payload)
    }

    #[inline]
    fn string(&self, payload: u64) -> Result<&'a str> {
        self.budget.string(self.buf(), payload)
    }

    /// The text of key `id` of the object `g`.
    #[inline]
    fn key(&mut self, id: u64, g: &Geometry) -> Result<&'a str> {
        match self.texts.get(id as usize) {
            Some(Some(text)) => Ok(text),
            Some(None) => self.resolve_key(id),
            None => Err(self.key_outside(id, g)),
        }
    }

    #[cold]
    fn key_outside(&self, id: u64, g: &Geometry) -> Error {
        self.node.key_str(id).err().unwrap_or_else(|| Error::malformed(g.pos as u64, "key id outside the dictionary"))
    }

    /// Once per key id met: its text, which no other id may have.
    #[cold]
    fn resolve_key(&mut self, id: u64) -> Result<&'a str> {
        let text = self.node.key_str(id)?;
        self.distinct.claim(text, id, self.node.dictionary_pos() as u64)?;
        self.texts[id as usize] = Some(text);
        Ok(text)
    }
}

impl<'a> Tree<'a> for Value {
    type Arena = ();
    type Array = Vec<Value>;
    type Object = Map;
    type IntMap = IntMap;

    fn null() -> Self {
        Value::Null
    }
    fn bool(v: bool) -> Self {
        Value::Bool(v)
    }
    fn int(v: i64) -> Self {
        Value::Int(v)
    }
    fn uint(v: u64) -> Self {
        Value::UInt(v)
    }
    fn f64(v: f64) -> Self {
        Value::F64(v)
    }
    fn f32(v: f32) -> Self {
        Value::F32(v)
    }
    fn string(s: &'a str) -> Self {
        Value::String(s.to_owned())
    }
    fn bytes(b: &'a [u8]) -> Self {
        Value::Bytes(b.to_vec())
    }
    fn bignum(digits: &'a str) -> Self {
        Value::BigNum(digits.to_owned())
    }
    fn typed(_: (), t: TypedRef<'a>) -> Self {
        Value::Typed(t.to_typed_array())
    }
    fn array_with_capacity(_: (), n: usize) -> Vec<Value> {
        Vec::with_capacity(n.min(PREALLOCATE_LIMIT))
    }
    fn empty_array() -> Self {
        Value::Array(Vec::new())
    }
    fn empty_object() -> Self {
        Value::Object(Map::new())
    }
    fn array_push(a: &mut Vec<Value>, value: Self) {
        a.push(value);
    }
    fn array(items: Vec<Self>) -> Self {
        Value::Array(items)
    }
    fn object_with_capacity(_: (), n: usize) -> Map {
        Map::with_capacity(n.min(PREALLOCATE_LIMIT))
    }
    // Keys are distinct: the walk checked them (`Walk::object`, the intmap loop).
    fn object_insert(o: &mut Map, key: &'a str, value: Self) {
        o.push_distinct(key.to_owned(), value);
    }
    fn object(o: Map) -> Self {
        Value::Object(o)
    }
    fn intmap_with_capacity(_: (), n: usize) -> IntMap {
        IntMap::with_capacity(n.min(PREALLOCATE_LIMIT))
    }
    fn intmap_insert(m: &mut IntMap, key: i64, value: Self) {
        m.push_distinct(key, value);
    }
    fn intmap(m: IntMap) -> Self {
        Value::IntMap(m)
    }

    fn packed(array: Value, _offset: u64) -> Result<Self> {
        Ok(array)
    }

    fn table(_: (), t: crate::table::TableRef<'a>) -> Result<Self> {
        Ok(Value::Table(t.to_table()?))
    }
}

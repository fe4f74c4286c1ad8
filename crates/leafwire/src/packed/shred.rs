//! Shredding by path (spec/design/packed.md §3): the elements of an array become a tree
//! of nodes, one per path, each holding its values as streams (kinds, scalars of each
//! kind, object shapes, array lengths, map keys), and back.
//!
//! Two choices depend on the whole group, not on one value: whether an object node is
//! *keyed* (too many distinct keys or shapes for a column per key, §3.5) and whether an
//! array node is a *tuple* (every array there has the same small length and only scalar
//! elements, §3.3). The shredder therefore walks the elements up to three times, each walk
//! with the decisions the previous one made possible, and keeps the last.

use std::borrow::Cow;

use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::input::{Input, View};
use super::texts::Texts;
use crate::value::{IntMap, Map, TypedArray, TypedData, Value};

/// Nodes deeper than this below the group's root hold their values as residual (§3.6).
pub(crate) const MAX_SHRED_DEPTH: usize = 32;
/// A group that needs more nodes than this is not packed (it stays ordinary containers).
pub(crate) const MAX_GROUP_NODES: usize = 4096;
/// A stripe closes once one node holds `stripe_values` of its values (§4.3, the encoder's
/// page size: `PackOptions::page_values`), or it holds this many elements.
pub(crate) const STRIPE_ELEMENTS: usize = 65_536;
/// An object node with more distinct keys than this is keyed (§3.5).
const KEYED_MIN_KEYS: usize = 64;
/// The longest arrays a tuple node splits into positions (§3.3).
const MAX_TUPLE: u64 = 16;
/// The longest tuple of floats the serde reader reads at once ([`Unshredder::float_tuple`]).
pub(crate) const MAX_FLOAT_TUPLE: usize = 4;

/// Kind codes of the `kind` stream (§3.2).
pub(crate) mod kind {
    pub const NULL: u8 = 0;
    pub const BOOL: u8 = 1;
    pub const INT: u8 = 2;
    pub const FLOAT: u8 = 3;
    pub const STRING: u8 = 4;
    pub const ARRAY: u8 = 5;
    pub const OBJECT: u8 = 6;
    pub const INTMAP: u8 = 7;
    pub const RESIDUAL: u8 = 8;
}

/// How a node hangs from its parent (§4.2's `role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Role {
    Root,
    /// The values of one key of the parent's objects (an index into `Shredded::keys`).
    Field(u32),
    /// All elements of the parent's arrays, concatenated.
    Element,
    /// Position i of the parent's arrays (a tuple node's child).
    Position(u8),
    /// The values of the parent's maps (intmaps, keyed objects).
    MapValue,
}

/// One path of the group and its streams, in occurrence order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Node<'v> {
    pub parent: usize,
    pub role: Option<Role>,
    pub depth: usize,
    /// Bit k set when kind k occurs.
    pub kinds: u16,
    /// Every array here has this length (a tuple node).
    pub tuple: Option<u8>,
    /// Objects here are stored as maps of key ids.
    pub keyed: bool,
    /// Distinct object key lists (indexes into `Shredded::keys`), in first-seen order.
    pub shapes: IndexSet<Vec<u32>, FxBuildHasher>,
    /// Each shape's keys with the nodes of their fields (`NO_NODE` where there is none),
    /// made once by the unshredder so that reading an object looks nothing up by hash.
    fields: Vec<Vec<(u32, usize)>>,
    /// The nodes of tuple positions 0, 1, … (`NO_NODE` where there is none), made with
    /// `fields`: a tuple's elements are found without hashing their roles.
    positions: Vec<usize>,
    /// The nodes of array elements and of map values, made with `fields`.
    element: Option<usize>,
    map_value: Option<usize>,
    /// How many children the node had when `positions` was made (a stripe reader indexes
    /// the same tree once per stripe; only a tree that grew needs it again).
    indexed_children: usize,
    pub kind: Vec<u8>,
    pub bools: Vec<bool>,
    pub ints: Vec<i64>,
    pub floats: Vec<f64>,
    /// The strings being shredded, borrowed from the input where they can be.
    pub strings: Vec<Cow<'v, str>>,
    /// The strings decoded from pages (or moved here from `strings` by the unshredder),
    /// in one buffer: each is allocated only when an element takes it.
    pub texts: Texts,
    pub shape: Vec<u32>,
    pub len: Vec<u64>,
    /// Keys of map entries: intmap keys, or key indexes of keyed objects.
    pub keys: Vec<i64>,
    pub residual: Vec<Value>,
    children: FxHashMap<Role, usize>,
    /// Values the node held when the current stripe began.
    stripe_start: usize,
    // What the decisions are made from.
    objects: usize,
    min_len: u64,
    max_len: u64,
    nested_elements: bool,
}

impl Node<'_> {
    /// Whether values here need a `kind` stream.
    pub fn mixed(&self) -> bool {
        self.kinds.count_ones() > 1
    }

    pub fn child(&self, role: Role) -> Option<usize> {
        self.children.get(&role).copied()
    }

    /// Empties the streams, keeping their memory and the node's structure.
    pub fn clear_streams(&mut self) {
        self.kind.clear();
        self.bools.clear();
        self.ints.clear();
        self.floats.clear();
        self.strings.clear();
        self.texts.clear();
        self.shape.clear();
        self.len.clear();
        self.keys.clear();
        self.residual.clear();
    }

    /// How many values each stream holds: where a stripe that starts now begins.
    fn ends(&self) -> Cursor {
        Cursor {
            kind: self.kind.len(),
            bools: self.bools.len(),
            ints: self.ints.len(),
            floats: self.floats.len(),
            // One of the two is empty: the shredder fills `strings`, pages `texts`.
            strings: self.strings.len() + self.texts.len(),
            shape: self.shape.len(),
            len: self.len.len(),
            keys: self.keys.len(),
            residual: self.residual.len(),
        }
    }
}

/// A shredded group.
#[derive(Debug, Default, Clone)]
pub(crate) struct Shredded<'v> {
    /// The number of elements (values of the root node).
    pub len: usize,
    /// Node 0 is the root; a parent comes before its children.
    pub nodes: Vec<Node<'v>>,
    /// The object keys met, by index.
    pub keys: IndexSet<String, FxBuildHasher>,
    /// Where each stripe begins (§4.3): its first element and every node's stream
    /// positions (nodes made later than the mark begin at zero); the last mark is the end.
    pub marks: Vec<Mark>,
}

/// The start of a stripe.
#[derive(Debug, Default, Clone)]
pub(crate) struct Mark {
    pub first: usize,
    pub at: Vec<Cursor>,
}

impl<'v> Shredded<'v> {
    /// A group of `len` elements with only its root node, for a reader to fill.
    pub fn empty(len: usize) -> Shredded<'v> {
        Shredded::with_room(len, 1)
    }

    /// As [`Shredded::empty`], with room for `nodes` nodes.
    pub fn with_room(len: usize, nodes: usize) -> Shredded<'v> {
        let mut s = Shredded { len, nodes: Vec::with_capacity(nodes), keys: IndexSet::default(), marks: Vec::new() };
        s.nodes.push(Node::new(0, Role::Root, 0));
        s
    }

    /// Adds a node below `parent` (which must exist) and returns its index.
    pub fn add_node(&mut self, parent: usize, role: Role) -> usize {
        let depth = self.nodes[parent].depth + 1;
        self.nodes.push(Node::new(parent, role, depth));
        let c = self.nodes.len() - 1;
        self.nodes[parent].children.insert(role, c);
        c
    }

    /// What decoding the group charges to the decode budget (§13.6): a unit per value and
    /// per array slot (tuples' included), the bytes of the strings and of the residual
    /// pages. A page's document is bounded by the documents of its values apart plus
    /// `RESIDUAL_SLACK` per value (its root array's tag, slot and padding), and its JSON
    /// text (the other form, §13.3) by their texts plus a comma each and the brackets,
    /// so the larger of the two is an upper bound however the column is cut into pages
    /// and whichever form each page takes.
    pub fn decode_cost(&self) -> u64 {
        let residual_cost = |v: &Value| {
            let Ok(document) = crate::encode_with(v, super::residual::PAGE_DEPTH) else { return RESIDUAL_SLACK };
            let text = if super::residual::json_exact(v) {
                let options = crate::json::JsonOptions { max_depth: super::residual::PAGE_DEPTH, ..Default::default() };
                crate::json::to_json_with(&document, &options).map_or(0, |t| t.len())
            } else {
                0
            };
            document.len().max(text) as u64 + RESIDUAL_SLACK
        };
        self.nodes
            .iter()
            .map(|n| {
                let tuple_slots =
                    n.tuple.map_or(0, |k| k as u64 * n.kind.iter().filter(|&&kind| kind == kind::ARRAY).count() as u64);
                let residual: u64 = n.residual.iter().map(residual_cost).sum();
                n.kind.len() as u64
                    + n.len.iter().sum::<u64>()
                    + tuple_slots
                    + n.strings.iter().map(|s| s.len() as u64).sum::<u64>()
                    + residual
            })
            .sum()
    }

    /// Makes each node's `fields` (its shapes' keys with their field nodes) and `positions`
    /// where they are not made yet, or the node has gained shapes or children since: an
    /// opened group does it once for its template, whose copies keep them.
    pub fn index_fields(&mut self) {
        for n in &mut self.nodes {
            let grown = n.indexed_children != n.children.len();
            if grown || n.fields.len() != n.shapes.len() {
                let child = |id: u32| n.children.get(&Role::Field(id)).copied().unwrap_or(NO_NODE);
                n.fields = n.shapes.iter().map(|shape| shape.iter().map(|&id| (id, child(id))).collect()).collect();
            }
            if !grown {
                continue;
            }
            n.indexed_children = n.children.len();
            n.element = n.children.get(&Role::Element).copied();
            n.map_value = n.children.get(&Role::MapValue).copied();
            n.positions.clear();
            for (role, &c) in &n.children {
                if let Role::Position(i) = *role {
                    let i = i as usize;
                    if n.positions.len() <= i {
                        n.positions.resize(i + 1, NO_NODE);
                    }
                    n.positions[i] = c;
                }
            }
        }
    }

    /// A copy whose strings are its own.
    pub fn owned(&self) -> Shredded<'static> {
        self.clone().into_owned()
    }

    /// The group with its borrowed strings copied: no longer tied to its input.
    pub fn into_owned(self) -> Shredded<'static> {
        let nodes = self
            .nodes
            .into_iter()
            .map(|mut n| {
                let strings = std::mem::take(&mut n.strings).into_iter().map(|t| Cow::Owned(t.into_owned())).collect();
                Node { strings, ..n }
            })
            .collect();
        Shredded { len: self.len, nodes, keys: self.keys, marks: self.marks }
    }

    /// The number of stripes.
    pub fn stripes(&self) -> usize {
        self.marks.len().saturating_sub(1)
    }

    /// Stream positions of node `node` at mark `m`.
    pub fn cursor(&self, m: usize, node: usize) -> Cursor {
        self.marks[m].at.get(node).cloned().unwrap_or_default()
    }
}

impl Node<'_> {
    fn new(parent: usize, role: Role, depth: usize) -> Self {
        Node { parent, role: Some(role), depth, min_len: u64::MAX, ..Node::default() }
    }
}

/// Decisions carried from one walk to the next, by node path.
#[derive(Default, Clone)]
struct Decisions {
    keyed: rustc_hash::FxHashSet<Vec<Role>>,
    tuples: FxHashMap<Vec<Role>, u8>,
}

/// Shreds `elements` in stripes of at most `stripe_values` values per node; `None` if the
/// group would need more than `MAX_GROUP_NODES` nodes.
pub(crate) fn shred_in<T: Input>(elements: &[T], stripe_values: usize) -> Option<Shredded<'_>> {
    shred_seeded(&Values(elements), stripe_values, Decisions::default())
}

/// Shreds the entries of a packed object (§13.7), each the array `[key, value]` (read in
/// place, not made): the root is a tuple node of two positions whatever the values are,
/// so the keys get a column of their own.
pub(crate) fn shred_entries<T: Input>(entries: &[(T::Key, T)], stripe_values: usize) -> Option<Shredded<'_>> {
    let mut seed = Decisions::default();
    seed.tuples.insert(Vec::new(), 2);
    shred_seeded(&Entries(entries), stripe_values, seed)
}

/// The elements of a group as the walk visits them: the input's values, or a packed
/// object's entries.
trait Elements<'v> {
    fn len(&self) -> usize;
    /// Shreds element `i` into the root.
    fn visit(&self, walker: &mut Walker<'_, '_, 'v>, i: usize) -> Option<()>;
}

struct Values<'v, T>(&'v [T]);

impl<'v, T: Input> Elements<'v> for Values<'v, T> {
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn visit(&self, walker: &mut Walker<'_, '_, 'v>, i: usize) -> Option<()> {
        walker.value(0, &self.0[i])
    }
}

struct Entries<'v, T: Input>(&'v [(T::Key, T)]);

impl<'v, T: Input> Elements<'v> for Entries<'v, T> {
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn visit(&self, walker: &mut Walker<'_, '_, 'v>, i: usize) -> Option<()> {
        let (key, value) = &self.0[i];
        walker.entry(0, key.as_ref(), value)
    }
}

fn shred_seeded<'v>(elements: &impl Elements<'v>, stripe_values: usize, seed: Decisions) -> Option<Shredded<'v>> {
    let first = walk(elements, &seed, stripe_values)?;
    let mut decisions = seed;
    decide_keyed(&first, &mut decisions);
    let second = if decisions.keyed.is_empty() { first } else { walk(elements, &decisions, stripe_values)? };
    let seeded = decisions.tuples.len();
    decide_tuples(&second, &mut decisions);
    if decisions.tuples.len() == seeded {
        return Some(second);
    }
    walk(elements, &decisions, stripe_values)
}

/// Shreds `elements` in stripes of `PAGE_VALUES` values per node: a quarter of the
/// encoder's (`PackOptions::stripe_values`), so that tests meet several stripes.
#[cfg(test)]
pub(crate) fn shred(elements: &[Value]) -> Option<Shredded<'_>> {
    shred_in(elements, super::group::PAGE_VALUES)
}

/// The residual form of a group (§13.3): every element kept whole in the root node's
/// residual column, for subtrees that shred worse than their JSON compresses (a packed
/// object's whole form, §13.7, is this form of the one-element group of the object).
pub(crate) fn shred_residual<T: Input>(elements: &[T], stripe_values: usize) -> Option<Shredded<'_>> {
    walk_with(&Values(elements), &Decisions::default(), stripe_values, Some(0))
}

fn walk<'v>(elements: &impl Elements<'v>, decisions: &Decisions, stripe_values: usize) -> Option<Shredded<'v>> {
    walk_with(elements, decisions, stripe_values, None)
}

/// Shreds `elements`; `residual_at` names the node whose values are all kept whole, if any
/// (the root, the only node made before the walk).
fn walk_with<'v>(
    elements: &impl Elements<'v>,
    decisions: &Decisions,
    stripe_values: usize,
    residual_at: Option<usize>,
) -> Option<Shredded<'v>> {
    let mut s = Shredded::empty(elements.len());
    let mut walker = Walker {
        s: &mut s,
        decisions,
        path: Vec::new(),
        most_in_stripe: 0,
        decided: Vec::new(),
        quick: Vec::new(),
        last_object: Vec::new(),
        residual_at,
    };
    let mut first = 0;
    walker.s.marks.push(Mark::default());
    let len = elements.len();
    for i in 0..len {
        elements.visit(&mut walker, i)?;
        let full = walker.most_in_stripe >= stripe_values || i + 1 - first >= STRIPE_ELEMENTS;
        if full && i + 1 < len {
            first = i + 1;
            walker.mark(first);
        }
    }
    if len > 0 {
        walker.mark(len);
    }
    Some(s)
}

/// The path of node `i` from the root (roles, root excluded).
fn path(s: &Shredded<'_>, mut i: usize) -> Vec<Role> {
    let mut roles = Vec::new();
    while i != 0 {
        roles.push(s.nodes[i].role.expect("set"));
        i = s.nodes[i].parent;
    }
    roles.reverse();
    roles
}

fn decide_keyed(s: &Shredded<'_>, d: &mut Decisions) {
    for (i, n) in s.nodes.iter().enumerate() {
        let distinct: std::collections::HashSet<u32> = n.shapes.iter().flatten().copied().collect();
        if n.objects > 0 && (distinct.len() > KEYED_MIN_KEYS || n.shapes.len() > 8.max(n.objects / 16)) {
            d.keyed.insert(path(s, i));
        }
    }
}

fn decide_tuples(s: &Shredded<'_>, d: &mut Decisions) {
    for (i, n) in s.nodes.iter().enumerate() {
        if n.kinds & (1 << kind::ARRAY) != 0
            && n.min_len == n.max_len
            && (1..=MAX_TUPLE).contains(&n.max_len)
            && !n.nested_elements
        {
            d.tuples.insert(path(s, i), n.max_len as u8);
        }
    }
}

struct Walker<'s, 'd, 'v> {
    s: &'s mut Shredded<'v>,
    decisions: &'d Decisions,
    /// The roles from the root to the node being filled.
    path: Vec<Role>,
    /// The most values one node received in the current stripe.
    most_in_stripe: usize,
    /// Per node: the decisions for its path, once looked up (a lookup hashes the path).
    decided: Vec<Option<Decided>>,
    /// Per node: its `Element` child (at 0) and `Position(i)` children (at 1 + i), once
    /// made (`NO_CHILD` before): the children of arrays, met once per element, are found
    /// without hashing.
    quick: Vec<[u32; 1 + MAX_TUPLE as usize]>,
    /// Per node: the keys of the last object shredded there, with their ids, shape and
    /// field nodes. The objects of one path mostly repeat their keys in order, so the next
    /// one is matched by comparing keys, not hashing them three times each.
    last_object: Vec<Option<LastObject<'v>>>,
    /// The node whose values are all residual (a group's residual form), if any.
    residual_at: Option<usize>,
}

/// An object's keys as [`Walker::object`] last met them at a node.
struct LastObject<'v> {
    keys: Vec<&'v str>,
    ids: Vec<u32>,
    shape: u32,
    /// The field node of each key.
    fields: Vec<usize>,
}

/// What the decisions say about one node.
#[derive(Clone, Copy)]
struct Decided {
    keyed: bool,
    tuple: Option<u8>,
}

const NO_CHILD: u32 = u32::MAX;

impl<'v> Walker<'_, '_, 'v> {
    /// Ends the current stripe before element `first`.
    fn mark(&mut self, first: usize) {
        let at = self.s.nodes.iter().map(Node::ends).collect();
        self.s.marks.push(Mark { first, at });
        for n in &mut self.s.nodes {
            n.stripe_start = n.kind.len();
        }
        self.most_in_stripe = 0;
    }

    /// The decisions for `node`, which `self.path` leads to.
    #[inline]
    fn decided(&mut self, node: usize) -> Decided {
        if let Some(Some(d)) = self.decided.get(node) {
            return *d;
        }
        let d = Decided {
            keyed: self.decisions.keyed.contains(&self.path),
            tuple: self.decisions.tuples.get(&self.path).copied(),
        };
        if self.decided.len() <= node {
            self.decided.resize(node + 1, None);
        }
        self.decided[node] = Some(d);
        d
    }

    /// The child of `node` for `role`, made if new; `None` past the node limit.
    #[inline]
    fn child(&mut self, node: usize, role: Role) -> Option<usize> {
        let slot = match role {
            Role::Element => Some(0),
            Role::Position(i) if (i as u64) < MAX_TUPLE => Some(1 + i as usize),
            _ => None,
        };
        if let Some(slot) = slot {
            if let Some(&c) = self.quick.get(node).map(|q| &q[slot]).filter(|&&c| c != NO_CHILD) {
                return Some(c as usize);
            }
        }
        let c = match self.s.nodes[node].children.get(&role) {
            Some(&c) => c,
            None => self.new_child(node, role)?,
        };
        if let Some(slot) = slot {
            if self.quick.len() <= node {
                self.quick.resize(node + 1, [NO_CHILD; 1 + MAX_TUPLE as usize]);
            }
            self.quick[node][slot] = c as u32;
        }
        Some(c)
    }

    #[inline(never)]
    fn new_child(&mut self, node: usize, role: Role) -> Option<usize> {
        if self.s.nodes.len() >= MAX_GROUP_NODES {
            return None;
        }
        let c = self.s.add_node(node, role);
        // A node made mid-stripe starts it empty.
        self.s.nodes[c].stripe_start = 0;
        Some(c)
    }

    /// Shreds `v` into `node` and its descendants.
    fn descend<T: Input>(&mut self, node: usize, role: Role, v: &'v T) -> Option<()> {
        let c = self.child(node, role)?;
        self.path.push(role);
        let done = self.value(c, v);
        self.path.pop();
        done
    }

    fn value<T: Input>(&mut self, node: usize, v: &'v T) -> Option<()> {
        let view = v.view();
        let k = self.kind_of(node, &view);
        match (k, view) {
            (kind::STRING, View::String(x)) => self.add_kinds(node, k, 1).strings.push(Cow::Borrowed(x)),
            // A typed array of the input is the array of arrays of numbers it stands for.
            (kind::ARRAY, View::Typed(t)) => {
                self.add_kinds(node, k, 1);
                return match t.f64_in_place() {
                    Some((shape, data)) => self.typed_array(node, &InPlace { shape, data }, 0, 0),
                    None => self.typed_array(node, &*t.array(), 0, 0),
                };
            }
            (kind::ARRAY, View::Array(items)) => {
                self.add_kinds(node, k, 1);
                return self.value_array(node, items);
            }
            (kind::OBJECT, View::Object(entries)) => {
                self.add_kinds(node, k, 1);
                return self.object(node, entries);
            }
            (kind::INTMAP, View::IntMap(entries)) => {
                self.add_kinds(node, k, 1);
                return self.intmap(node, entries);
            }
            (k, view) => self.scalar(node, k, &view, v),
        }
        Some(())
    }

    /// Shreds a packed object's entry into `node` as [`Walker::value`] shreds the array
    /// `[key, value]` it stands for, without making that array. Entries are shredded only
    /// at the root of a group that is not in its residual form, so neither the pair nor its
    /// key (one level down) can be a residual value there.
    fn entry<T: Input>(&mut self, node: usize, key: &'v str, value: &'v T) -> Option<()> {
        debug_assert!(node == 0 && self.residual_at.is_none(), "entries are shredded at a shredded root");
        self.add_kinds(node, kind::ARRAY, 1);
        // `value_array` for two items, the first a string.
        let decided = self.decided(node);
        let n = &mut self.s.nodes[node];
        n.min_len = n.min_len.min(2);
        n.max_len = n.max_len.max(2);
        n.nested_elements |= matches!(value.view(), View::Array(_) | View::Object(_) | View::IntMap(_) | View::Typed(_));
        let (key_role, value_role) = match decided.tuple {
            Some(2) => {
                n.tuple = Some(2);
                (Role::Position(0), Role::Position(1))
            }
            _ => {
                n.len.push(2);
                (Role::Element, Role::Element)
            }
        };
        let c = self.child(node, key_role)?;
        debug_assert_eq!(self.kind_of::<T>(c, &View::String(key)), kind::STRING);
        self.add_kinds(c, kind::STRING, 1).strings.push(Cow::Borrowed(key));
        self.descend(node, value_role, value)
    }

    /// The kind a value with this view is stored as at `node`.
    fn kind_of<T: Input>(&self, node: usize, v: &View<'_, T>) -> u8 {
        match v {
            _ if self.s.nodes[node].depth > MAX_SHRED_DEPTH || self.residual_at == Some(node) => kind::RESIDUAL,
            View::Null => kind::NULL,
            View::Bool(_) => kind::BOOL,
            View::Int(_) => kind::INT,
            View::UInt(x) if *x <= i64::MAX as u64 => kind::INT,
            View::F64(_) => kind::FLOAT,
            View::String(_) => kind::STRING,
            // A typed array that decoding (which types numbers as JSON text is typed, spec
            // §13) would not give back with its element type is kept whole.
            View::Typed(t) if !t.retyped_as_is() => kind::RESIDUAL,
            View::Array(_) | View::Typed(_) => kind::ARRAY,
            View::Object(_) => kind::OBJECT,
            View::IntMap(_) => kind::INTMAP,
            View::UInt(_) | View::F32(_) | View::Bytes(_) | View::BigNum(_) | View::Table(_) => kind::RESIDUAL,
        }
    }

    /// Stores `v` (whose view is `view`) of kind `k`, a kind that neither borrows text nor
    /// descends: the values a typed array makes on the fly go here, as they live shorter
    /// than the input.
    fn scalar<T: Input>(&mut self, node: usize, k: u8, view: &View<'_, T>, v: &T) {
        let n = self.add_kinds(node, k, 1);
        match (k, view) {
            (kind::RESIDUAL, _) => n.residual.push(v.as_value().into_owned()),
            (kind::NULL, _) => {}
            (_, View::Bool(b)) => n.bools.push(*b),
            (_, View::Int(x)) => n.ints.push(*x),
            (_, View::UInt(x)) => n.ints.push(*x as i64),
            (_, View::F64(x)) => n.floats.push(*x),
            _ => unreachable!("kinds match values, and text and containers are `value`'s"),
        }
    }

    /// `value` for a value a typed array makes on the fly (a number, or an array of them).
    fn made_value(&mut self, node: usize, v: &Value) -> Option<()> {
        let view = v.view();
        match self.kind_of(node, &view) {
            k @ (kind::ARRAY | kind::STRING | kind::OBJECT | kind::INTMAP) => {
                // Never reached for what typed arrays make; kept whole all the same.
                debug_assert!(false, "a typed array made a value of kind {k}");
                self.scalar(node, kind::RESIDUAL, &view, v)
            }
            k => self.scalar(node, k, &view, v),
        }
        Some(())
    }

    fn value_array<T: Input>(&mut self, node: usize, items: &'v [T]) -> Option<()> {
        let decided = self.decided(node);
        let n = &mut self.s.nodes[node];
        let len = items.len() as u64;
        n.min_len = n.min_len.min(len);
        n.max_len = n.max_len.max(len);
        n.nested_elements |=
            items.iter().any(|e| matches!(e.view(), View::Array(_) | View::Object(_) | View::IntMap(_) | View::Typed(_)));
        match decided.tuple {
            Some(k) if k as usize == items.len() => {
                n.tuple = Some(k);
                for (i, e) in items.iter().enumerate() {
                    self.descend(node, Role::Position(i as u8), e)?;
                }
            }
            _ => {
                n.len.push(len);
                for e in items {
                    self.descend(node, Role::Element, e)?;
                }
            }
        }
        Some(())
    }

    /// `value_array` for the sub-array of `t` along `axis` that starts at element `start`,
    /// read in place: the typed array is not made into nested values first (that was a
    /// third of the time to pack a numeric document).
    fn typed_array(&mut self, node: usize, t: &impl Rows, axis: usize, start: usize) -> Option<()> {
        let dim = t.shape()[axis];
        let leaf = axis + 1 == t.shape().len();
        let tuple = matches!(self.decided(node).tuple, Some(k) if k as usize == dim);
        let n = &mut self.s.nodes[node];
        n.min_len = n.min_len.min(dim as u64);
        n.max_len = n.max_len.max(dim as u64);
        n.nested_elements |= !leaf && dim > 0;
        if tuple {
            n.tuple = Some(dim as u8);
        } else {
            n.len.push(dim as u64);
        }
        if leaf && !tuple && dim > 0 {
            if let Some(v) = t.plain_f64() {
                // A row of plain f64 goes to one node in one copy.
                let c = self.child(node, Role::Element)?;
                if self.s.nodes[c].depth <= MAX_SHRED_DEPTH {
                    self.add_kinds(c, kind::FLOAT, dim).floats.extend_from_slice(&v[start..start + dim]);
                    return Some(());
                }
            }
        }
        let last_but_one = !tuple && dim > 0 && axis + 2 == t.shape().len();
        if last_but_one && self.rows_in_bulk(node, t, axis, start)? {
            return Some(());
        }
        let stride = t.stride(axis);
        for i in 0..dim {
            let role = if tuple { Role::Position(i as u8) } else { Role::Element };
            let c = self.child(node, role)?;
            self.path.push(role);
            let done = if leaf { self.made_value(c, &t.element(start + i)) } else { self.typed_row(c, t, axis + 1, start + i * stride) };
            self.path.pop();
            done?;
        }
        Some(())
    }

    /// The rows along `axis` (the last but one) of a plain f64 array in bulk, instead of a
    /// visit per row: when they are tuples at the node they go to, each position's values
    /// in one pass (polygon rings of `[x, y]`); when not, all their numbers to that node's
    /// element node in one copy (the countries' rings, whose points share a node with the
    /// rings of MultiPolygons). `Some(false)` when neither applies (nothing is done but
    /// making the nodes a visit per row would make).
    fn rows_in_bulk(&mut self, node: usize, t: &impl Rows, axis: usize, start: usize) -> Option<bool> {
        let Some(v) = t.plain_f64() else {
            return Some(false);
        };
        let (dim, row) = (t.shape()[axis], t.shape()[axis + 1]);
        let c = self.child(node, Role::Element)?;
        self.path.push(Role::Element);
        let tuple = self.decided(c).tuple;
        self.path.pop();
        let rows = &v[start..start + dim * row];
        if tuple.map(usize::from) == Some(row) {
            if self.s.nodes[c].depth + 1 > MAX_SHRED_DEPTH {
                return Some(false);
            }
            let n = self.add_kinds(c, kind::ARRAY, dim);
            n.min_len = n.min_len.min(row as u64);
            n.max_len = n.max_len.max(row as u64);
            n.tuple = Some(row as u8);
            for i in 0..row {
                let p = self.child(c, Role::Position(i as u8))?;
                self.add_kinds(p, kind::FLOAT, dim).floats.extend(rows.iter().skip(i).step_by(row));
            }
            return Some(true);
        }
        if row == 0 || self.s.nodes[c].depth > MAX_SHRED_DEPTH {
            return Some(false);
        }
        let leaf = self.child(c, Role::Element)?;
        if self.s.nodes[leaf].depth > MAX_SHRED_DEPTH {
            return Some(false);
        }
        let n = self.add_kinds(c, kind::ARRAY, dim);
        n.min_len = n.min_len.min(row as u64);
        n.max_len = n.max_len.max(row as u64);
        n.len.extend(std::iter::repeat_n(row as u64, dim));
        self.add_kinds(leaf, kind::FLOAT, dim * row).floats.extend_from_slice(rows);
        Some(true)
    }

    /// `value` for a row of a typed array (an array of numbers, or of rows).
    fn typed_row(&mut self, node: usize, t: &impl Rows, axis: usize, start: usize) -> Option<()> {
        if self.s.nodes[node].depth > MAX_SHRED_DEPTH {
            return self.made_value(node, &t.nested_at(axis, start));
        }
        self.add_kinds(node, kind::ARRAY, 1);
        self.typed_array(node, t, axis, start)
    }

    /// Notes `count` values of kind `k` at `node`: its kinds, its kind stream and how full
    /// the stripe is. Returns the node, for the values' own streams.
    #[inline]
    fn add_kinds(&mut self, node: usize, k: u8, count: usize) -> &mut Node<'v> {
        let n = &mut self.s.nodes[node];
        n.kinds |= 1 << k;
        n.kind.resize(n.kind.len() + count, k);
        self.most_in_stripe = self.most_in_stripe.max(n.kind.len() - n.stripe_start);
        n
    }

    fn object<T: Input>(&mut self, node: usize, entries: &'v [(T::Key, T)]) -> Option<()> {
        let keyed = self.decided(node).keyed;
        if !keyed {
            if let Some(last) = self.last_object.get_mut(node).and_then(Option::take) {
                if last.keys.len() == entries.len() && last.keys.iter().zip(entries).all(|(a, (b, _))| *a == b.as_ref()) {
                    return self.object_as_last(node, entries, last);
                }
            }
        }
        // A key met before is found without a copy of it (every object of a column has the
        // same keys: copies would be made and dropped once per object field).
        let keys = &mut self.s.keys;
        let ids: Vec<u32> = entries
            .iter()
            .map(|(k, _)| {
                let k = k.as_ref();
                keys.get_index_of(k).unwrap_or_else(|| keys.insert_full(k.to_owned()).0) as u32
            })
            .collect();
        let n = &mut self.s.nodes[node];
        n.objects += 1;
        if keyed {
            n.keyed = true;
            n.len.push(entries.len() as u64);
            n.keys.extend(ids.iter().map(|&id| id as i64));
            for (_, v) in entries {
                self.descend(node, Role::MapValue, v)?;
            }
            return Some(());
        }
        let shape = match n.shapes.get_index_of(&ids) {
            Some(shape) => shape,
            None => n.shapes.insert_full(ids.clone()).0,
        };
        n.shape.push(shape as u32);
        let mut fields = Vec::with_capacity(ids.len());
        for (&id, (_, v)) in ids.iter().zip(entries) {
            let c = self.child(node, Role::Field(id))?;
            fields.push(c);
            self.shred_field(c, id, v)?;
        }
        let last = LastObject { keys: entries.iter().map(|(k, _)| k.as_ref()).collect(), ids, shape: shape as u32, fields };
        if self.last_object.len() <= node {
            self.last_object.resize_with(node + 1, || None);
        }
        self.last_object[node] = Some(last);
        Some(())
    }

    /// `object` for an object with the keys, in order, of the last one at `node`.
    fn object_as_last<T: Input>(&mut self, node: usize, entries: &'v [(T::Key, T)], last: LastObject<'v>) -> Option<()> {
        let n = &mut self.s.nodes[node];
        n.objects += 1;
        n.shape.push(last.shape);
        for ((&id, &c), (_, v)) in last.ids.iter().zip(&last.fields).zip(entries) {
            self.shred_field(c, id, v)?;
        }
        self.last_object[node] = Some(last);
        Some(())
    }

    /// Shreds the value of field `id` into its node `c`.
    fn shred_field<T: Input>(&mut self, c: usize, id: u32, v: &'v T) -> Option<()> {
        self.path.push(Role::Field(id));
        let done = self.value(c, v);
        self.path.pop();
        done
    }

    fn intmap<T: Input>(&mut self, node: usize, entries: &'v [(i64, T)]) -> Option<()> {
        let n = &mut self.s.nodes[node];
        n.len.push(entries.len() as u64);
        n.keys.extend(entries.iter().map(|(k, _)| *k));
        for (_, v) in entries {
            self.descend(node, Role::MapValue, v)?;
        }
        Some(())
    }
}

/// A typed array as the walker reads it: an owned `TypedArray`, or the f64 elements of a
/// borrowed tree's array read in place (a copy of every coordinate of a GeoJSON file
/// was 4 % of its packed encode).
trait Rows {
    fn shape(&self) -> &[usize];
    /// The elements, when they are f64 without an integer mask (read in bulk).
    fn plain_f64(&self) -> Option<&[f64]>;
    /// Flat element `i` as a value.
    fn element(&self, i: usize) -> Value;
    /// The sub-array along `axis` from flat element `start`, as nested arrays.
    fn nested_at(&self, axis: usize, start: usize) -> Value;

    /// How many elements one step along `axis` skips (row-major).
    fn stride(&self, axis: usize) -> usize {
        self.shape()[axis + 1..].iter().product()
    }
}

impl Rows for TypedArray {
    fn shape(&self) -> &[usize] {
        TypedArray::shape(self)
    }

    fn plain_f64(&self) -> Option<&[f64]> {
        match (self.data(), self.int_mask()) {
            (TypedData::F64(v), None) => Some(v),
            _ => None,
        }
    }

    fn element(&self, i: usize) -> Value {
        TypedArray::element(self, i)
    }

    fn nested_at(&self, axis: usize, start: usize) -> Value {
        TypedArray::nested_at(self, axis, start)
    }
}

/// The f64 elements of a borrowed typed array without an integer mask, in place.
struct InPlace<'t> {
    shape: Vec<usize>,
    data: &'t [f64],
}

impl Rows for InPlace<'_> {
    fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn plain_f64(&self) -> Option<&[f64]> {
        Some(self.data)
    }

    fn element(&self, i: usize) -> Value {
        Value::F64(self.data[i])
    }

    /// Only past the shredding depth (rare): through a copy, with `TypedArray`'s rule.
    fn nested_at(&self, axis: usize, start: usize) -> Value {
        TypedArray::from_parts(self.shape.clone(), TypedData::F64(self.data.to_vec()), None).nested_at(axis, start)
    }
}

/// Whether decoding gives `t` back as it is: a non-empty f64 array, or an integer array
/// of the narrowest type that holds its values (spec §11's order).
pub(crate) fn retyped_as_is(t: &crate::TypedArray) -> bool {
    use crate::format::ElementType::*;
    if t.is_empty() || t.shape().contains(&0) {
        return false;
    }
    match t.element_type() {
        F64 => true,
        I8 | U8 | I16 | U16 | I32 | U32 | I64 => {
            let (lo, hi) = (0..t.len()).fold((i64::MAX, i64::MIN), |(lo, hi), i| match t.element(i) {
                Value::Int(x) => (lo.min(x), hi.max(x)),
                _ => (i64::MIN, i64::MAX),
            });
            crate::builder::narrowest_int(lo, hi) == t.element_type()
        }
        _ => false,
    }
}

/// Rebuilds the elements from their streams: the inverse of `shred` (typed arrays come
/// back as the arrays of numbers they stand for).
pub(crate) fn unshred(s: &Shredded<'_>) -> Vec<Value> {
    let mut budget = u64::MAX;
    let mut s = s.owned();
    Unshredder::new(&mut s, &mut budget).elements().expect("the shredder's own streams are consistent")
}

/// The unshredder's message when the budget runs out.
pub(crate) const OVER_BUDGET: &str = "the group decodes to more values than the decode budget allows";

/// Reads elements back from a group's streams, checking as it goes what a reader of
/// untrusted streams must (§8): a stream that runs out, or values left unread, is
/// `Malformed`, and every value built is charged to `budget`.
pub(crate) struct Unshredder<'s, 'b> {
    s: &'s Shredded<'static>,
    cursors: Vec<Cursor>,
    /// The residual stream of each node, taken out of `s`: each value is read once, so it
    /// moves into the element rather than being copied.
    residual: Vec<std::vec::IntoIter<Value>>,
    budget: &'b mut u64,
    /// When set, only the nodes marked here are read: an object leaves out the fields
    /// whose nodes are not (a projection; their columns need not be decoded).
    keep: Option<&'s [bool]>,
}

impl<'s, 'b> Unshredder<'s, 'b> {
    /// Reads the elements of `s`, whose residual streams it empties (and whose strings it
    /// moves into their text buffers, where the shredder left them as a list).
    pub fn new(s: &'s mut Shredded<'static>, budget: &'b mut u64) -> Self {
        s.index_fields();
        for n in &mut s.nodes {
            for t in std::mem::take(&mut n.strings) {
                n.texts.push(&t);
            }
        }
        let residual = s.nodes.iter_mut().map(|n| std::mem::take(&mut n.residual).into_iter()).collect();
        let s: &'s Shredded<'static> = s;
        Unshredder { s, cursors: vec![Cursor::default(); s.nodes.len()], residual, budget, keep: None }
    }

    /// Reads only the nodes marked in `keep` (which must hold every kept node's parent).
    pub fn keeping(mut self, keep: &'s [bool]) -> Self {
        self.keep = Some(keep);
        self
    }

    /// All `s.len` elements; every stream must be used up exactly.
    pub fn elements(mut self) -> Result<Vec<Value>, &'static str> {
        let values = (0..self.s.len).map(|_| self.read(0)).collect::<Result<Vec<_>, _>>()?;
        self.check_used_up()?;
        Ok(values)
    }

    /// Element `i` of the streams (< `len`), the others stepped over without building
    /// them; every stream must be used up exactly, as for [`Unshredder::elements`].
    pub fn element_at(mut self, i: usize) -> Result<Value, &'static str> {
        for _ in 0..i {
            self.skip(0)?;
        }
        let value = self.read(0)?;
        for _ in i + 1..self.s.len {
            self.skip(0)?;
        }
        self.check_used_up()?;
        Ok(value)
    }

    /// Steps over the next value of `node`, reading (and charging) its streams as
    /// [`Unshredder::read`] does, but building nothing: what is stepped over is not
    /// returned, so a keyed object's repeated key goes unchecked here.
    fn skip(&mut self, node: usize) -> Result<(), &'static str> {
        match self.kind(node)? {
            kind::NULL => {}
            kind::BOOL => drop(self.bool(node)?),
            kind::INT => drop(self.int(node)?),
            kind::FLOAT => drop(self.float(node)?),
            kind::STRING => drop(self.string(node)?),
            kind::RESIDUAL => drop(self.residual(node)?),
            kind::ARRAY => {
                let (len, elements) = self.array(node)?;
                for i in 0..len {
                    self.skip(self.element(node, elements, i)?)?;
                }
            }
            kind::OBJECT if self.s.nodes[node].keyed => {
                let (len, values) = self.map(node)?;
                for _ in 0..len {
                    self.key_text(node)?;
                    self.skip(values)?;
                }
            }
            kind::OBJECT => {
                for &field in self.shape(node)? {
                    let (_, child) = self.field(field)?;
                    if self.keep.is_none_or(|keep| keep[child]) {
                        self.skip(child)?;
                    }
                }
            }
            kind::INTMAP => {
                let (len, values) = self.map(node)?;
                for _ in 0..len {
                    self.int_key(node)?;
                    self.skip(values)?;
                }
            }
            _ => return Err("unknown kind"),
        }
        Ok(())
    }

    /// Whether objects at `node` are stored as maps of key ids.
    #[inline]
    pub fn is_keyed(&self, node: usize) -> bool {
        self.s.nodes[node].keyed
    }

    /// Gives the decode budget back (to the next stripe's unshredder).
    pub fn into_budget(self) -> &'b mut u64 {
        self.budget
    }

    /// How many elements the streams hold.
    pub fn len(&self) -> usize {
        self.s.len
    }

    /// Checks, once every element is read, that every stream was used up exactly.
    pub fn check_used_up(&self) -> Result<(), &'static str> {
        for (i, (n, c)) in self.s.nodes.iter().zip(&self.cursors).enumerate() {
            let mut expect = n.ends();
            // The residual streams were taken out of `n`: they must be used up.
            let used_up = |left: usize, read: usize| if left == 0 { read } else { usize::MAX };
            expect.residual = used_up(self.residual[i].len(), c.residual);
            if !n.mixed() {
                // A node of one kind has no kind column to read.
                expect.kind = c.kind;
            }
            if n.shapes.len() <= 1 {
                // Nor a node of one shape a shape column.
                expect.shape = c.shape;
            }
            if *c != expect {
                return Err("a column of the group holds values that no element uses");
            }
        }
        Ok(())
    }

    #[inline]
    fn charge(&mut self, cost: u64) -> Result<(), &'static str> {
        *self.budget = self.budget.checked_sub(cost).ok_or(OVER_BUDGET)?;
        Ok(())
    }

    fn read(&mut self, node: usize) -> Result<Value, &'static str> {
        let k = self.kind(node)?;
        self.read_kind(node, k)
    }

    /// The next value of `node`, whose kind `k` was read.
    pub fn read_kind(&mut self, node: usize, k: u8) -> Result<Value, &'static str> {
        Ok(match k {
            kind::NULL => Value::Null,
            kind::BOOL => Value::Bool(self.bool(node)?),
            kind::INT => Value::Int(self.int(node)?),
            kind::FLOAT => Value::F64(self.float(node)?),
            kind::STRING => Value::String(self.string(node)?.to_owned()),
            kind::RESIDUAL => self.residual(node)?,
            kind::ARRAY => {
                let (len, elements) = self.array(node)?;
                let mut items = Vec::with_capacity(len);
                for i in 0..len {
                    items.push(self.read(self.element(node, elements, i)?)?);
                }
                Value::Array(items)
            }
            kind::OBJECT if self.s.nodes[node].keyed => {
                let (len, values) = self.map(node)?;
                // `len` is charged to the budget (`map`), as an array's length is.
                let mut map = Map::with_capacity(len);
                for _ in 0..len {
                    let key = self.key_text(node)?;
                    if map.insert(key.to_owned(), self.read(values)?).is_some() {
                        return Err("a keyed object repeats a key");
                    }
                }
                map.into()
            }
            kind::OBJECT => {
                let fields = self.shape(node)?;
                let mut map = Map::with_capacity(fields.len());
                for &field in fields {
                    let (key, child) = self.field(field)?;
                    if self.keep.is_some_and(|keep| !keep[child]) {
                        continue;
                    }
                    let value = self.read(child)?;
                    // A shape's keys are distinct: its parser refuses a repeat.
                    map.push_distinct(key.to_owned(), value);
                }
                map.into()
            }
            kind::INTMAP => {
                let (len, values) = self.map(node)?;
                let mut map = IntMap::with_capacity(len);
                for _ in 0..len {
                    let key = self.int_key(node)?;
                    if map.insert(key, self.read(values)?).is_some() {
                        return Err("an intmap repeats a key");
                    }
                }
                Value::IntMap(map)
            }
            _ => return Err("unknown kind"),
        })
    }

    // The steps of reading a value, shared with the serde reader (`packed::de`): each
    // takes the next entry of one of `node`'s streams and charges what it costs.

    /// The kind of `node`'s next value, its unit charged.
    #[inline]
    pub fn kind(&mut self, node: usize) -> Result<u8, &'static str> {
        self.charge(1)?;
        let n = &self.s.nodes[node];
        if n.mixed() {
            next(&n.kind, &mut self.cursors[node].kind)
        } else {
            Ok(n.kinds.trailing_zeros() as u8)
        }
    }

    #[inline]
    pub fn bool(&mut self, node: usize) -> Result<bool, &'static str> {
        next(&self.s.nodes[node].bools, &mut self.cursors[node].bools)
    }

    #[inline]
    pub fn int(&mut self, node: usize) -> Result<i64, &'static str> {
        next(&self.s.nodes[node].ints, &mut self.cursors[node].ints)
    }

    /// The next value of `node` when every value there is a float (its kind is then not
    /// read, only charged), `None` otherwise: the serde reader's `f64` fast path.
    #[inline]
    pub fn only_float(&mut self, node: usize) -> Option<Result<f64, &'static str>> {
        if self.s.nodes[node].kinds != 1 << kind::FLOAT {
            return None;
        }
        Some(self.charge(1).and_then(|()| self.float(node)))
    }

    /// The next value of `node` when every value there is a tuple of `len` ≤ `MAX_FLOAT_TUPLE`
    /// numbers whose positions hold floats only (a point, a colour), read at once and
    /// charged as one at a time would be; `None` otherwise: the serde reader's fast path
    /// for `(f64, f64)` and `[f64; N]`.
    #[inline]
    pub fn float_tuple(&mut self, node: usize, len: usize) -> Option<Result<[f64; MAX_FLOAT_TUPLE], &'static str>> {
        let s = self.s;
        let n = &s.nodes[node];
        if n.kinds != 1 << kind::ARRAY || n.tuple != Some(len as u8) || len > MAX_FLOAT_TUPLE {
            return None;
        }
        let positions = n.positions.get(..len)?;
        if positions.iter().any(|&c| s.nodes.get(c).is_none_or(|c| c.kinds != 1 << kind::FLOAT)) {
            return None;
        }
        // The array's kind and length, and each element's kind.
        Some(self.charge(1 + 2 * len as u64).and_then(|()| {
            let mut values = [0.0; MAX_FLOAT_TUPLE];
            for (value, &child) in values.iter_mut().zip(positions) {
                *value = self.float(child)?;
            }
            Ok(values)
        }))
    }

    /// The node of the elements of `node`'s arrays when every value there is an array
    /// (not a tuple) of floats only; `None` otherwise: the serde reader's fast path for
    /// `Vec<f64>`, which then reads [`Unshredder::array`] and [`Unshredder::only_float`].
    #[inline]
    pub fn float_elements(&self, node: usize) -> Option<usize> {
        let n = &self.s.nodes[node];
        if n.kinds != 1 << kind::ARRAY || n.tuple.is_some() {
            return None;
        }
        let elements = n.element?;
        (self.s.nodes[elements].kinds == 1 << kind::FLOAT).then_some(elements)
    }

    #[inline]
    pub fn float(&mut self, node: usize) -> Result<f64, &'static str> {
        next(&self.s.nodes[node].floats, &mut self.cursors[node].floats)
    }

    /// The next string, its bytes charged.
    #[inline]
    pub fn string(&mut self, node: usize) -> Result<&'s str, &'static str> {
        let at = &mut self.cursors[node].strings;
        let text = self.s.nodes[node].texts.get(*at).ok_or(RUN_OUT)?;
        *at += 1;
        self.charge(text.len() as u64)?;
        Ok(text)
    }

    pub fn residual(&mut self, node: usize) -> Result<Value, &'static str> {
        take_next(&mut self.residual[node], &mut self.cursors[node].residual)
    }

    /// An array's length (charged), and the node of all its elements unless it is a
    /// tuple or empty: pass it to [`Unshredder::element`].
    #[inline]
    pub fn array(&mut self, node: usize) -> Result<(usize, Option<usize>), &'static str> {
        let n = &self.s.nodes[node];
        let len = match n.tuple {
            Some(k) => k as u64,
            None => next(&n.len, &mut self.cursors[node].len)?,
        };
        self.charge(len)?;
        // One lookup for all the elements.
        let elements = match n.tuple {
            None if len > 0 => Some(n.element.ok_or(NO_ELEMENT_NODE)?),
            _ => None,
        };
        Ok((len as usize, elements))
    }

    /// The node of element `i` of an array at `node`, given what [`Unshredder::array`]
    /// returned.
    #[inline]
    pub fn element(&self, node: usize, elements: Option<usize>, i: usize) -> Result<usize, &'static str> {
        match elements {
            Some(e) => Ok(e),
            None => match self.s.nodes[node].positions.get(i) {
                Some(&c) if c != NO_NODE => Ok(c),
                _ => Err(NO_ELEMENT_NODE),
            },
        }
    }

    /// A shaped object's fields, in order: each key id with the node of its values.
    pub fn shape(&mut self, node: usize) -> Result<&'s [(u32, usize)], &'static str> {
        let s = self.s;
        let n = &s.nodes[node];
        let shape = if n.shapes.len() > 1 { next(&n.shape, &mut self.cursors[node].shape)? as usize } else { 0 };
        Ok(n.fields.get(shape).ok_or("shape id out of range")?)
    }

    /// The text and the node of a field of a shaped object (an entry of [`Unshredder::shape`]).
    #[inline]
    pub fn field(&self, (id, child): (u32, usize)) -> Result<(&'s str, usize), &'static str> {
        let key = self.s.keys.get_index(id as usize).ok_or("key id out of range")?;
        if child == NO_NODE {
            return Err("a field has no node");
        }
        Ok((key, child))
    }

    /// A map's (keyed object's or intmap's) entry count (charged) and the node of its values.
    pub fn map(&mut self, node: usize) -> Result<(usize, usize), &'static str> {
        let n = &self.s.nodes[node];
        let len = next(&n.len, &mut self.cursors[node].len)?;
        self.charge(len)?;
        let values = n.map_value;
        // A map of no entries need not have a value node.
        let values = if len == 0 { values.unwrap_or(0) } else { values.ok_or("a map has no value node")? };
        Ok((len as usize, values))
    }

    /// The next key of a keyed object, as text.
    pub fn key_text(&mut self, node: usize) -> Result<&'s str, &'static str> {
        let s = self.s;
        let id = next(&s.nodes[node].keys, &mut self.cursors[node].keys)?;
        let id = usize::try_from(id).map_err(|_| "key id out of range")?;
        Ok(s.keys.get_index(id).ok_or("key id out of range")?)
    }

    /// The next key of an intmap.
    pub fn int_key(&mut self, node: usize) -> Result<i64, &'static str> {
        next(&self.s.nodes[node].keys, &mut self.cursors[node].keys)
    }
}

/// How far each stream of a node has been read (or, in a [`Mark`], where a stripe begins).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub kind: usize,
    pub bools: usize,
    pub ints: usize,
    pub floats: usize,
    pub strings: usize,
    pub shape: usize,
    pub len: usize,
    pub keys: usize,
    pub residual: usize,
}

#[inline]
fn next<T: Copy>(stream: &[T], at: &mut usize) -> Result<T, &'static str> {
    let v = *stream.get(*at).ok_or(RUN_OUT)?;
    *at += 1;
    Ok(v)
}

/// [`next`] for a stream of owned values, which move out.
#[inline]
fn take_next<T>(stream: &mut std::vec::IntoIter<T>, at: &mut usize) -> Result<T, &'static str> {
    let v = stream.next().ok_or(RUN_OUT)?;
    *at += 1;
    Ok(v)
}

/// See [`Shredded::decode_cost`].
const RESIDUAL_SLACK: u64 = 32;

const NO_ELEMENT_NODE: &str = "an array element has no node";
/// In `Node::fields`: the shape names a key whose field node the node table lacks.
const NO_NODE: usize = usize::MAX;
const RUN_OUT: &str = "a column of the group runs out of values";

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Typed arrays compare as the arrays of numbers they stand for; floats by bits.
    pub(crate) fn normal(v: &Value) -> Value {
        match v {
            Value::Typed(t) => normal(&t.to_nested()),
            Value::Array(items) => Value::Array(items.iter().map(normal).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), normal(v))).collect()),
            Value::IntMap(m) => Value::IntMap(m.iter().map(|(k, v)| (*k, normal(v))).collect()),
            Value::UInt(x) if *x <= i64::MAX as u64 => Value::Int(*x as i64),
            Value::F64(x) => Value::String(format!("f64:{:x}", x.to_bits())),
            Value::F32(x) => Value::String(format!("f32:{:x}", x.to_bits())),
            v => v.clone(),
        }
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..3).prop_map(Value::Int),
            any::<i64>().prop_map(Value::Int),
            any::<f64>().prop_map(Value::F64),
            any::<f32>().prop_map(Value::F32),
            "[a-c]{0,3}".prop_map(Value::String),
            prop::collection::vec(any::<u8>(), 0..4).prop_map(Value::Bytes),
            Just(Value::UInt(u64::MAX)),
            prop::collection::vec(any::<f64>(), 0..5)
                .prop_map(|v| Value::Typed(crate::TypedArray::new(crate::TypedData::F64(v)))),
        ]
    }

    pub(crate) fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-d]{1,2}", inner.clone()), 0..5)
                    .prop_map(|p| Value::Object(p.into_iter().collect())),
                prop::collection::vec((-2i64..2, inner), 0..3).prop_map(|p| Value::IntMap(p.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn elements_come_back(elements in prop::collection::vec(value(), 0..12)) {
            let s = shred(&elements).unwrap();
            let back = unshred(&s);
            prop_assert_eq!(back.iter().map(normal).collect::<Vec<_>>(), elements.iter().map(normal).collect::<Vec<_>>());
        }
    }

    /// A typed array of rank 1–3 with small dimensions: plain f64, f64 with integers
    /// masked, or narrowest integers.
    fn typed() -> impl Strategy<Value = Value> {
        // Many `[n, 2]` arrays, so that pairs become tuples.
        let shape = prop_oneof![prop::collection::vec(0usize..4, 1..4), (0usize..5).prop_map(|n| vec![n, 2])];
        (shape, 0u8..3, any::<u64>()).prop_map(|(shape, kind, seed)| {
            let n: usize = shape.iter().product();
            let mut next = crate::testing::xorshift(seed | 1);
            let t = match kind {
                0 => {
                    let data = (0..n).map(|_| (next() % 1000) as f64 / 8.0).collect();
                    crate::TypedArray::with_shape(crate::TypedData::F64(data), shape).unwrap()
                }
                1 => {
                    let data: Vec<f64> = (0..n).map(|_| (next() % 1000) as f64 / 2.0).collect();
                    let mask = data.iter().map(|v| v.fract() == 0.0 && next() % 2 == 0).collect();
                    crate::TypedArray::with_int_mask(data, shape, mask).unwrap()
                }
                _ => {
                    let data = (0..n).map(|_| (next() % 60_000) as i32 - 30_000).collect();
                    crate::TypedArray::with_shape(crate::TypedData::I32(data), shape).unwrap()
                }
            };
            Value::Typed(t)
        })
    }

    /// `v` with each typed array the shredder reads as numbers made into those arrays.
    fn expanded(v: &Value) -> Value {
        match v {
            Value::Typed(t) if retyped_as_is(t) => expanded(&t.to_nested()),
            Value::Array(items) => Value::Array(items.iter().map(expanded).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), expanded(v))).collect()),
            v => v.clone(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Typed arrays are shredded in place (rows of tuples by position, in one pass):
        /// the streams must be those of the nested arrays they stand for.
        #[test]
        fn typed_arrays_shred_as_the_arrays_they_stand_for(
            elements in prop::collection::vec(prop_oneof![
                typed(),
                typed().prop_map(|t| Value::Object([("c".to_string(), t)].into_iter().collect())),
                prop::collection::vec(typed(), 0..3).prop_map(Value::Array),
                value(),
            ], 0..12)
        ) {
            let typed = shred(&elements).unwrap();
            let expanded: Vec<_> = elements.iter().map(expanded).collect();
            let nested = shred(&expanded).unwrap();
            prop_assert_eq!(format!("{:?}", typed.nodes), format!("{:?}", nested.nodes));
            prop_assert_eq!(format!("{:?}", typed.marks), format!("{:?}", nested.marks));
        }
    }

    fn json(text: &str) -> Vec<Value> {
        match crate::json::parse(text.as_bytes()).unwrap() {
            Value::Array(items) => items,
            _ => panic!("not an array"),
        }
    }

    #[test]
    fn pairs_become_positions_and_optional_fields_cost_a_shape() {
        let elements = json(r#"[{"p": [1.5, 2], "name": "a"}, {"p": [3.5, 4.25]}, {"p": [0, 1], "name": "b"}]"#);
        let s = shred(&elements).unwrap();
        let p = s.nodes[0].child(Role::Field(s.keys.get_index_of("p").unwrap() as u32)).unwrap();
        assert_eq!(s.nodes[p].tuple, Some(2));
        assert!(s.nodes[p].len.is_empty());
        let x = s.nodes[p].child(Role::Position(0)).unwrap();
        assert_eq!(s.nodes[x].floats.len() + s.nodes[x].ints.len(), 3);
        assert_eq!(s.nodes[0].shapes.len(), 2);
        assert_eq!(s.nodes[0].shape, vec![0, 1, 0]);
        assert_eq!(unshred(&s).iter().map(normal).collect::<Vec<_>>(), elements.iter().map(normal).collect::<Vec<_>>());
    }

    /// The shared bench data's arrays of records shred and come back (skipped without it).
    #[test]
    fn shared_data_round_trips() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        let Ok(text) = std::fs::read(dir.join("graphql/decentraland_marketplace_orders.json")) else { return };
        let doc = crate::json::parse(&text).unwrap();
        let field = |v: &Value, k: &str| match v {
            Value::Object(m) => m[k].clone(),
            _ => panic!("not an object"),
        };
        let Value::Array(orders) = field(&field(&doc, "data"), "orders") else { panic!("not an array") };
        let s = shred(&orders).unwrap();
        assert!(s.nodes.len() > 10 && s.nodes.len() < 200, "{} nodes", s.nodes.len());
        assert_eq!(unshred(&s).iter().map(normal).collect::<Vec<_>>(), orders.iter().map(normal).collect::<Vec<_>>());
    }

    #[test]
    fn objects_with_many_keys_are_keyed() {
        let elements: Vec<Value> = (0..10)
            .map(|i| Value::Object((0..10).map(|k| (format!("user{}", i * 10 + k), Value::Int(k))).collect()))
            .collect();
        let s = shred(&elements).unwrap();
        assert!(s.nodes[0].keyed);
        assert_eq!(s.nodes.len(), 2, "one map-value node, not a column per key");
        assert_eq!(unshred(&s), elements);
    }

    #[test]
    fn deep_values_are_residual_and_huge_groups_are_declined() {
        let mut deep = Value::Int(1);
        for _ in 0..40 {
            deep = Value::Array(vec![deep]);
        }
        let s = shred(std::slice::from_ref(&deep)).unwrap();
        assert!(s.nodes.iter().any(|n| !n.residual.is_empty()));
        assert_eq!(unshred(&s), vec![deep]);
        // Objects of 8 keys nested 5 deep, one shape per node: 8 + 64 + … + 32,768 paths.
        let mut wide = Value::Int(1);
        for _ in 0..5 {
            wide = Value::Object((0..8).map(|k| (format!("k{k}"), wide.clone())).collect());
        }
        assert!(shred(&[wide]).is_none());
    }
}

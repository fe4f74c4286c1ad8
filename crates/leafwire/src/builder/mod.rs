//! The builder: a flat, allocation-light tree that every encoding path fills (JSON text,
//! serde, `Value`) and `encode` lays out breadth-first.
//!
//! Values arrive depth-first. Each open container collects its children on a stack; when
//! it closes, the children move as one contiguous run into `items`, which is what lets the
//! layout pass walk the tree level by level. Closing an array is also where a run of
//! numbers becomes a typed array, and a run of equal-shaped typed arrays one of higher rank.

use std::borrow::Cow;

use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashSet};
use smallvec::SmallVec;

/// A typed array's shape: most have one or two dimensions, kept inline.
pub(crate) type Shape = SmallVec<[u64; 3]>;

mod emit;
use emit::{note_child, num_slot};
mod spare;

use crate::blocks::Blocks;
use crate::direct::{too_many_children, Child, KeyGuesses, Levels, Node, POINTER};
use crate::error::{Category, Error, Result};
use crate::format::{tag, varint_len, ElementType, MAX_RANK};

/// Where a number came from, which decides how arrays of it are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumTy {
    /// A JSON integer in i64: arrays of them narrow to the smallest integer element type.
    JsonInt,
    /// A JSON number with fraction or exponent.
    JsonFloat,
    /// A number of a definite Rust type (serde, `Value::F32`...): arrays keep the type.
    Exact(ElementType),
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Item {
    Null,
    Bool(bool),
    /// `bits` holds an i64 for integer types, u64 for U64, f64/f32 bits for floats,
    /// 0/1 for Bool.
    Num(NumTy, u64),
    /// An integer above i64::MAX that is not part of a typed array candidate.
    UInt(u64),
    /// A string, bytes or bignum: its data block (length varint, then the bytes) is at
    /// `start` in `Builder::blocks`, so it is copied out as is; `len` is the block's
    /// length, or `u32::MAX` for one that long or longer (then read from its varint).
    Str { start: u64, len: u32 },
    Bytes { start: u64, len: u32 },
    BigNum { start: u64, len: u32 },
    /// A closed container: its index in its level of the plan (`emit.rs`).
    Array(usize),
    Object(usize),
    IntMap(usize),
    Typed(usize),
    /// A table: its index in `Builder::tables`.
    Table(usize),
}

// One item per value of the document: its size is most of an encoder's memory.
const _: () = assert!(std::mem::size_of::<Item>() == 16);

#[derive(Debug, Clone)]
pub(crate) struct TypedItem {
    pub element: ElementType,
    pub shape: Shape,
    /// Element bytes (little-endian) in `Builder::tdata`.
    pub data: std::ops::Range<usize>,
    /// One byte (0/1) per element in `Builder::tmask`, for masked f64 arrays.
    pub mask: Option<std::ops::Range<usize>>,
    /// Came from JSON: the element type was inferred and may be widened on merge.
    pub inferred: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameKind {
    Array,
    Object,
    IntMap,
}

struct Frame {
    kind: FrameKind,
    /// Where the first child is: on the stack, or for a frame with a `node`, in the
    /// plan's children of its level.
    start: usize,
    /// A container whose children go straight into the plan as they come (neither pushed
    /// on the stack nor moved at `close`): its record, `len` counting the children so far.
    /// Objects and intmaps, unless duplicate keys replace earlier values (which only the
    /// stack can undo), and serde sequences whose first child shows they cannot be typed.
    node: Option<Node>,
    /// Keys seen, once the container is too large for a linear duplicate scan.
    seen: Option<Box<FxHashSet<u64>>>,
    /// The largest key pushed so far (meaningful once there is a child).
    max_key: u64,
    run: Run,
}

impl Frame {
    /// An array frame with nothing in it: what `open` fills in.
    const OFF: Frame = Frame { kind: FrameKind::Array, start: 0, node: None, seen: None, max_key: 0, run: Run::Off };
}

/// A serde sequence's numbers, written straight into `tdata` while they all have one
/// type: a `Vec<f64>` then costs a byte copy per element instead of an item on the stack
/// and a second pass at `close` (the bytes are those `exact_run` would write).
#[derive(Clone)]
enum Run {
    /// Not a bulk sequence (or no longer: it met something else).
    Off,
    /// A bulk sequence with no child yet.
    Empty,
    /// `count` numbers of type `t`, their bytes at `tdata[data_start..]`.
    Numbers { t: ElementType, data_start: usize, count: usize },
    /// `count` rows of shape `row`, each a closed child sequence (or rows of rows), their
    /// bytes adjacent at `tdata[data_start..]`: `Vec<(f64, f64)>` becomes one `[n, 2]`
    /// array without a `TypedItem` per point (the bytes and shape `merge_rows` makes).
    /// `flat`: the rows have one axis (`row.len() == 1`), kept so that the next-row check
    /// of a point need not read the shape's inline-or-heap length.
    Rows { t: ElementType, row: Shape, flat: bool, row_bytes: usize, data_start: usize, count: usize },
}

/// A serde sequence written as the next row of its parent's run without a frame of its
/// own ([`Builder::begin_row`]): `count` numbers of type `t` at `tdata[data_start..]`.
#[derive(Clone, Copy)]
pub(crate) struct PendingRow {
    t: ElementType,
    data_start: usize,
    count: usize,
}

/// Appends numbers of one type to a sequence's run ([`Builder::run_sink`]); the run's
/// count takes the numbers added when the sink is dropped.
pub(crate) struct NumberSink<'s> {
    tdata: &'s mut Vec<u8>,
    t: ElementType,
    count: &'s mut usize,
    added: usize,
}

/// The most elements one pass of [`NumberSink::extend`] makes room for, whatever an
/// iterator's size hint says.
const SINK_PASS: usize = 1 << 16;

impl NumberSink<'_> {
    /// Appends a number of the run's type.
    #[inline(always)]
    pub fn put(&mut self, bits: u64) {
        put_element(self.tdata, self.t, bits);
        self.added += 1;
    }

    /// Appends the numbers `iter` yields while `number` gives one of the run's type, and
    /// returns the first item that is not (`None` once `iter` ends). Room for the
    /// iterator's lower size hint is reserved at once and the elements are written into
    /// the spare capacity, the length set after the pass: each element is then a load and
    /// a store, with no capacity check and no length update of its own.
    #[inline(always)]
    pub fn extend<T>(&mut self, iter: &mut impl Iterator<Item = T>, number: impl Fn(&T) -> Option<(ElementType, u64)>) -> Option<T> {
        match self.t.size() {
            8 => self.extend_sized::<8, T>(iter, number),
            4 => self.extend_sized::<4, T>(iter, number),
            2 => self.extend_sized::<2, T>(iter, number),
            _ => self.extend_sized::<1, T>(iter, number),
        }
    }

    #[inline(always)]
    fn extend_sized<const N: usize, T>(&mut self, iter: &mut impl Iterator<Item = T>, number: impl Fn(&T) -> Option<(ElementType, u64)>) -> Option<T> {
        let t = self.t;
        loop {
            // A `Vec`'s hint is exact; an iterator that gives none gets a few at a time.
            let room = match iter.size_hint().0 {
                0 => 8,
                n => n.min(SINK_PASS),
            };
            self.tdata.reserve(room * N);
            let mut written = 0;
            let mut stop = None;
            // All the spare room, not only `room`: a pass then ends with its iterator.
            for slot in self.tdata.spare_capacity_mut().chunks_exact_mut(N) {
                let Some(item) = iter.next() else {
                    stop = Some(None);
                    break;
                };
                match number(&item) {
                    // Little-endian: an element's bytes are the low N bytes of its bits,
                    // as `put_element` writes them.
                    Some((u, bits)) if u == t => {
                        for (byte, value) in slot.iter_mut().zip(bits.to_le_bytes()) {
                            byte.write(value);
                        }
                    }
                    _ => {
                        stop = Some(Some(item));
                        break;
                    }
                }
                written += 1;
            }
            let len = self.tdata.len() + written * N;
            // SAFETY: the `written * N` bytes after the length were just written (and are
            // within the capacity: they came from `spare_capacity_mut`).
            unsafe { self.tdata.set_len(len) };
            self.added += written;
            if let Some(stop) = stop {
                return stop;
            }
        }
    }
}

impl Drop for NumberSink<'_> {
    fn drop(&mut self) {
        *self.count += self.added;
    }
}

/// Appends one element's bytes to `tdata`.
#[inline(always)]
fn put_element(tdata: &mut Vec<u8>, t: ElementType, bits: u64) {
    // Fixed-length copies: a slice of run-time length would be a memcpy call each.
    match t.size() {
        8 => tdata.extend_from_slice(&bits.to_le_bytes()),
        4 => tdata.extend_from_slice(&(bits as u32).to_le_bytes()),
        2 => tdata.extend_from_slice(&(bits as u16).to_le_bytes()),
        _ => tdata.push(bits as u8),
    }
}

/// What to do when an object receives a key it already has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateKeys {
    /// Fail with `Category::DuplicateKey` (the default: nothing is silently dropped).
    #[default]
    Error,
    /// Keep the last value, as JavaScript's `JSON.parse` does.
    Last,
}

const LINEAR_DUPLICATE_SCAN: usize = 64;

/// Where the streaming encoders start spilling data blocks to a temporary file: documents
/// with less text than this never touch the disk.
pub(crate) const STREAMING_SPILL_OVER: usize = 16 << 20;

pub(crate) struct Builder {
    /// The closed containers and their children, level by level (the direct encoder's
    /// plan, `emit.rs`).
    levels: Levels,
    /// Where the content of each string, bytes or bignum child is in `stores`
    /// (`Child::value` indexes it).
    spans: Vec<Span>,
    /// The content length of each block of 4 GiB or more, by store and block start (items
    /// hold `u32::MAX` for them).
    huge: Vec<(usize, u64, u64)>,
    /// The root, once `finish` took it from the stack.
    root: Option<Child>,
    stack: Vec<Item>,
    stack_keys: Vec<u64>,
    frames: Vec<Frame>,
    /// The data blocks of strings, bytes and bignums, one store per nesting level of the
    /// containers holding them (or all in the first, for a builder that spills).
    stores: Vec<Blocks>,
    /// Blocks go to the first store whatever their level: the streaming encoders spill the
    /// blocks to one temporary file.
    single_store: bool,
    /// Each level's store holds exactly the blocks of that level's children, in the order of
    /// the slots, which is the order of the data section (spec §7): the writer then copies a
    /// level's blocks in one go. A child dropped after its blocks were stored (a repeated
    /// key with `DuplicateKeys::Last`) leaves a gap and ends this.
    stores_in_slot_order: bool,
    pub typed: Vec<TypedItem>,
    /// Tables (spec §15), copied in whole: their bodies are written as they are.
    pub tables: Vec<crate::table::Table>,
    pub tdata: Vec<u8>,
    pub tmask: Vec<u8>,
    /// The object keys by provisional id: serde field names borrowed (no allocation per
    /// document for them), other keys owned.
    pub dict: IndexSet<Cow<'static, str>, FxBuildHasher>,
    pub max_depth: usize,
    pub duplicate_keys: DuplicateKeys,
    /// Ids of `&'static str` keys (serde struct fields) by address and length: a field
    /// name met again costs a compare instead of hashing and comparing its text.
    /// Allocated (zeroed) at the first use: only serde structs need it.
    static_keys: Vec<StaticKey>,
    /// The document the entries of `static_keys` belong to: a recycled builder starts the
    /// next one, whose ids differ, by counting up instead of clearing the cache.
    static_generation: u32,
    /// The memory of owned keys of documents built before, for the next ones' keys: a
    /// stream of records meets the same keys in every message, and would otherwise
    /// allocate and free each of them per message.
    spare_keys: Vec<String>,
    /// The guesses for object keys (`key_id_at`).
    shapes: KeyGuesses,
}

/// An entry of the static key cache (address 0 never holds a str, so zeroed entries
/// never match).
#[derive(Clone, Copy, Default)]
struct StaticKey {
    addr: usize,
    len: u32,
    generation: u32,
    id: u64,
}

/// Where a data block's content is: its store, its offset there and its length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub store: usize,
    pub at: u64,
    pub len: u64,
}

/// Entries of the direct-mapped cache of static keys: several times the fields of the
/// struct types one document usually holds, so that few of them collide.
const STATIC_KEY_SLOTS: usize = 512;

/// The longest stack `finish` keeps for the builder's next use.
const KEEP_STACK: usize = 1 << 16;

impl Builder {
    pub fn new(max_depth: usize) -> Builder {
        Builder {
            levels: Levels::default(),
            spans: Vec::new(),
            huge: Vec::new(),
            root: None,
            stack: Vec::new(),
            stack_keys: Vec::new(),
            frames: Vec::new(),
            // The root's level, which has no container to open it.
            stores: vec![Blocks::default()],
            single_store: false,
            stores_in_slot_order: true,
            typed: Vec::new(),
            tables: Vec::new(),
            tdata: Vec::new(),
            tmask: Vec::new(),
            dict: IndexSet::default(),
            shapes: KeyGuesses::default(),
            max_depth,
            duplicate_keys: DuplicateKeys::Error,
            static_keys: Vec::new(),
            static_generation: 1,
            spare_keys: Vec::new(),
        }
    }

    /// [`key_id`](Self::key_id) for a key that lives for the whole program, cached by
    /// its address (the same text at two addresses just takes two entries).
    #[inline(always)]
    pub fn static_key_id(&mut self, key: &'static str) -> u64 {
        let (addr, len) = (key.as_ptr() as usize, key.len());
        // Field names lie close together in the binary: a multiplicative hash spreads
        // their addresses over the slots, where their low bits alone would collide.
        let slot = ((addr ^ len).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % STATIC_KEY_SLOTS;
        match self.static_keys.get(slot) {
            Some(e) if e.addr == addr && e.len as usize == len && e.generation == self.static_generation => e.id,
            _ => self.static_key_miss(key, slot),
        }
    }

    /// Interns a static key the cache does not hold, and caches it in `slot`.
    #[cold]
    #[inline(never)]
    fn static_key_miss(&mut self, key: &'static str, slot: usize) -> u64 {
        if self.static_keys.is_empty() {
            self.static_keys = vec![StaticKey::default(); STATIC_KEY_SLOTS];
        }
        let id = match self.dict.get_index_of(key) {
            Some(id) => id as u64,
            None => self.dict.insert_full(Cow::Borrowed(key)).0 as u64,
        };
        // A key of 4 GiB or more (never a field name) is just not cached.
        if let Ok(len) = u32::try_from(key.len()) {
            self.static_keys[slot] =
                StaticKey { addr: key.as_ptr() as usize, len, generation: self.static_generation, id };
        }
        id
    }

    /// How many containers are open.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// Interns the key at `position` of the innermost object, trying the guess of
    /// [`KeyGuesses`] first.
    #[inline]
    pub fn key_id_at(&mut self, key: &str, position: usize) -> u64 {
        self.key_id_guessed(key, self.frames.len().saturating_sub(1), position)
    }

    /// [`Builder::key_id_at`] for a key of an object at nesting level `depth` that may not
    /// be open yet (a serde map opens at its first key, once the key's kind is known).
    #[inline]
    pub fn key_id_guessed(&mut self, key: &str, depth: usize, position: usize) -> u64 {
        if let Some(id) = self.shapes.guess(depth, position) {
            if self.dict.get_index(id as usize).is_some_and(|k| crate::format::dictionary::bytes_eq(k.as_bytes(), key.as_bytes())) {
                return id as u64;
            }
        }
        let id = self.key_id(key);
        self.shapes.note(depth, position, id as u32);
        id
    }

    /// Interns an object key, returning its provisional id.
    pub fn key_id(&mut self, key: &str) -> u64 {
        if let Some(id) = self.dict.get_index_of(key) {
            return id as u64;
        }
        let mut owned = self.spare_keys.pop().unwrap_or_default();
        owned.clear();
        owned.push_str(key);
        self.dict.insert_full(Cow::Owned(owned)).0 as u64
    }

    /// Pushes a finished value; `key` is the key id or int key inside objects and maps.
    #[inline]
    pub fn push(&mut self, key: u64, item: Item) -> Result<()> {
        if let Some(frame) = self.frames.last_mut() {
            if !matches!(frame.run, Run::Off) {
                if self.extend_run(&item) {
                    return Ok(());
                }
                self.break_run();
                if !matches!(item, Item::Num(..) | Item::Typed(_))
                    && self.frames.last().is_some_and(|f| f.kind == FrameKind::Array)
                {
                    self.go_direct_if_empty();
                }
                return self.push(key, item);
            }
            self.check_key(key)?;
            if self.frames.last().is_some_and(|f| f.node.is_some()) {
                let (child, need) = self.child_slot(item, self.store_here());
                return self.push_direct(key, child, need);
            }
        }
        self.stack.push(item);
        self.stack_keys.push(key);
        Ok(())
    }

    /// The innermost container is a serde sequence that has no child yet, and the next
    /// one is neither a number nor a row of numbers (a string, an object): it can never be
    /// a typed array, so its children go straight into the plan from now on — as `push`
    /// would decide for that child, without the item it would go through.
    #[inline(always)]
    fn leave_empty_run(&mut self) {
        if let Some(frame @ Frame { run: Run::Empty, kind: FrameKind::Array, node: None, .. }) = self.frames.last_mut()
        {
            if self.stack.len() == frame.start {
                frame.run = Run::Off;
                self.go_direct_if_empty();
            }
        }
    }

    /// A serde sequence whose first child is neither a number nor a typed row can never be
    /// a typed array: its children may go straight into the plan.
    fn go_direct_if_empty(&mut self) {
        let depth = self.frames.len() - 1;
        let frame = self.frames.last_mut().expect("an open container");
        if frame.node.is_none() && self.stack.len() == frame.start {
            self.levels.reach(depth);
            frame.start = self.levels.kids[depth].len();
            frame.node = Some(Node::new(tag::ARRAY, 0));
        }
    }

    /// Handles a key of the innermost object or intmap that is not above all before it:
    /// an error if it repeats one, or with `DuplicateKeys::Last`, the earlier value goes.
    fn check_repeated(&mut self, key: u64) -> Result<()> {
        let depth = self.frames.len() - 1;
        let frame = self.frames.last_mut().expect("an open container");
        let duplicate = match &mut frame.seen {
            Some(seen) => !seen.insert(key),
            None => {
                // Fewer than LINEAR_DUPLICATE_SCAN keys are scanned (a struct's fields met in
                // another order than their ids'); the set is made past that.
                let (kids, keys) = match frame.node {
                    Some(_) => (&self.levels.kids[depth][frame.start..], &[][..]),
                    None => (&[][..], &self.stack_keys[frame.start..]),
                };
                let repeated = kids.iter().any(|ch| ch.key == key) || keys.contains(&key);
                if kids.len() + keys.len() >= LINEAR_DUPLICATE_SCAN {
                    let all = kids.iter().map(|ch| ch.key).chain(keys.iter().copied()).chain([key]);
                    frame.seen = Some(Box::new(all.collect()));
                }
                repeated
            }
        };
        if !duplicate {
            return Ok(());
        }
        match self.duplicate_keys {
            DuplicateKeys::Error => {
                let name = match frame.kind {
                    FrameKind::Object => format!("\"{}\"", &self.dict[key as usize]),
                    _ => (key as i64).to_string(),
                };
                Err(Error::new(Category::DuplicateKey, format!("duplicate key {name}")))
            }
            DuplicateKeys::Last => {
                debug_assert!(frame.node.is_none(), "objects that drop repeated keys keep their children on the stack");
                let at = frame.start + self.stack_keys[frame.start..].iter().position(|&k| k == key).unwrap();
                self.stack.remove(at);
                self.stack_keys.remove(at);
                // Its blocks, and those of its descendants, stay in the stores. (A replaced
                // container's record also stays in the plan, unreferenced: the document
                // reads right but is not canonical. Known, not yet mended.)
                self.stores_in_slot_order = false;
                Ok(())
            }
        }
    }

    /// Records the slot of a child of the innermost container, which writes its children
    /// straight into the plan (`Frame::node`).
    #[inline(always)]
    fn push_direct(&mut self, key: u64, mut child: Child, need: u8) -> Result<()> {
        let depth = self.frames.len() - 1;
        let node = self.frames[depth].node.as_mut().expect("a direct frame");
        node.len = node.len.checked_add(1).ok_or_else(too_many_children)?;
        note_child(node, &mut child, need, key);
        self.levels.push(depth, child);
        Ok(())
    }

    /// Checks `key` of the next child of the innermost object or intmap (arrays have no
    /// keys): a key above every one before it (sorted maps, struct fields in first-seen
    /// order) needs no scan and no hashing; any other is checked for a repeat.
    #[inline(always)]
    fn check_key(&mut self, key: u64) -> Result<()> {
        let Some(frame) = self.frames.last_mut() else { return Ok(()) };
        if frame.kind == FrameKind::Array {
            return Ok(());
        }
        let count = match &frame.node {
            Some(node) => node.len as usize,
            None => self.stack.len() - frame.start,
        };
        let fresh = frame.seen.is_none() && (count == 0 || key > frame.max_key);
        frame.max_key = frame.max_key.max(key);
        if !fresh {
            self.check_repeated(key)?;
        }
        Ok(())
    }

    /// Whether a child under `key` goes straight into the plan: the innermost container
    /// takes its children so (its key checked as `push` would).
    #[inline(always)]
    fn takes_direct(&mut self, key: u64) -> Result<bool> {
        if self.frames.last().is_none_or(|f| f.node.is_none()) {
            return Ok(false);
        }
        self.check_key(key)?;
        Ok(true)
    }

    pub fn push_str(&mut self, key: u64, s: &[u8]) -> Result<()> {
        self.leave_empty_run();
        if self.takes_direct(key)? {
            return self.push_block_direct(key, tag::STRING, s);
        }
        let (start, len) = self.add_block(s)?;
        self.push(key, Item::Str { start, len })
    }

    pub fn push_bytes(&mut self, key: u64, s: &[u8]) -> Result<()> {
        self.leave_empty_run();
        if self.takes_direct(key)? {
            return self.push_block_direct(key, tag::BYTES, s);
        }
        let (start, len) = self.add_block(s)?;
        self.push(key, Item::Bytes { start, len })
    }

    /// A string or bytes child of a container that takes its children straight into the
    /// plan: its block is stored and its slot recorded, with no item in between.
    #[inline(always)]
    fn push_block_direct(&mut self, key: u64, t: u8, content: &[u8]) -> Result<()> {
        let store = self.store_here();
        let start = self.store_mut(store).append_block(content)?;
        let prefix = varint_len(content.len() as u64) as u64;
        let child = self.content_slot(t, Span { store, at: start + prefix, len: content.len() as u64 });
        self.push_direct(key, child, POINTER)
    }

    pub fn push_bignum(&mut self, key: u64, digits: &[u8]) -> Result<()> {
        let (start, len) = self.add_block(digits)?;
        self.push(key, Item::BigNum { start, len })
    }

    /// Spills the data blocks of strings, bytes and bignums to a temporary file once
    /// they pass `bytes` (for encoders that stream their output: see `blocks.rs`).
    pub fn spill_blocks_over(&mut self, bytes: usize) {
        self.single_store = true;
        self.stores_in_slot_order = false;
        self.store_mut(0).spill_over(bytes);
    }

    /// The store of a block pushed now: that of the innermost open container's level
    /// (a child is pushed while its container is innermost, and joins that level's
    /// children whether it goes straight into the plan or waits on the stack).
    #[inline(always)]
    fn store_here(&self) -> usize {
        self.store_of(self.frames.len().saturating_sub(1))
    }

    /// The store of the blocks of children of containers at nesting level `depth`.
    #[inline(always)]
    pub(super) fn store_of(&self, depth: usize) -> usize {
        if self.single_store {
            0
        } else {
            depth
        }
    }

    /// A store, which `open` made when it opened a container at its level.
    #[inline(always)]
    fn store_mut(&mut self, store: usize) -> &mut Blocks {
        &mut self.stores[store]
    }

    /// Stores `bytes` as the data block of a string, bytes or bignum (spec §5.1: a varint
    /// length, then the bytes); returns where it starts in its store and its length, as
    /// items hold it.
    fn add_block(&mut self, bytes: &[u8]) -> Result<(u64, u32)> {
        let store = self.store_here();
        let start = self.store_mut(store).append_block(bytes)?;
        let len = u32::try_from(varint_len(bytes.len() as u64) + bytes.len()).unwrap_or(u32::MAX);
        if len == u32::MAX {
            self.huge.push((store, start, bytes.len() as u64));
        }
        Ok((start, len))
    }

    /// Opens a container whose children follow until `close`. The key is pushed with the
    /// container when it closes.
    pub fn open(&mut self, kind: FrameKind) -> Result<()> {
        if self.frames.len() >= self.max_depth {
            return Err(Error::depth_limit(self.max_depth));
        }
        // A child writes its numbers after the parent's: a run of numbers in the parent
        // ends here, while rows (whose next one may be this child) go on.
        if matches!(self.frames.last().map(|f| &f.run), Some(Run::Numbers { .. })) {
            self.break_run();
        }
        // An object or map is never a row of a typed array.
        if kind != FrameKind::Array {
            self.leave_empty_run();
        }
        let depth = self.frames.len();
        if depth >= self.stores.len() && !self.single_store {
            self.stores.resize_with(depth + 1, Blocks::default);
        }
        let (start, node) = match kind {
            FrameKind::Object | FrameKind::IntMap if self.duplicate_keys == DuplicateKeys::Error => {
                self.levels.reach(depth);
                let t = if kind == FrameKind::Object { tag::OBJECT } else { tag::INTMAP };
                (self.levels.kids[depth].len(), Some(Node::new(t, 0)))
            }
            _ => (self.stack.len(), None),
        };
        // A constant frame, then its fields: a frame built on the stack and then copied
        // (as `push(Frame { .. })` compiles) stalls on reading back the stores just made,
        // which was most of the cost of opening a container.
        self.frames.push(Frame::OFF);
        let frame = self.frames.last_mut().expect("just pushed");
        (frame.kind, frame.start, frame.node) = (kind, start, node);
        Ok(())
    }

    /// Opens an array whose leading numbers of one exact type go straight to typed data
    /// (serde sequences; closed with `close`).
    pub fn open_seq(&mut self) -> Result<()> {
        self.open(FrameKind::Array)?;
        self.frames.last_mut().expect("just opened").run = Run::Empty;
        Ok(())
    }

    /// Pushes a number of an exact type: inline, the next number of a run (a `Vec<f64>`'s
    /// elements) is only a compare and a copy.
    #[inline(always)]
    pub fn push_num(&mut self, key: u64, t: ElementType, bits: u64) -> Result<()> {
        match self.frames.last_mut() {
            Some(Frame { run: Run::Numbers { t: run_t, count, .. }, .. }) if *run_t == t => {
                *count += 1;
                self.put_element(t, bits);
                Ok(())
            }
            _ => self.push_num_slow(key, t, bits),
        }
    }

    /// [`Builder::push_num`] for a number that does not continue a run: out of line, so
    /// that the inlined part stays a compare and a copy.
    #[inline(never)]
    fn push_num_slow(&mut self, key: u64, t: ElementType, bits: u64) -> Result<()> {
        // The first number of a serde sequence starts its run (what `push` would do
        // through `extend_run`, without its checks).
        if let Some(Frame { run: run @ Run::Empty, .. }) = self.frames.last_mut() {
            *run = Run::Numbers { t, data_start: self.tdata.len(), count: 1 };
            self.put_element(t, bits);
            return Ok(());
        }
        if self.takes_direct(key)? {
            let (tag, value, need) = num_slot(NumTy::Exact(t), bits);
            return self.push_direct(key, Child { tag, key: 0, value }, need);
        }
        self.push(key, Item::Num(NumTy::Exact(t), bits))
    }

    /// Appends one element's bytes to `tdata`.
    #[inline(always)]
    fn put_element(&mut self, t: ElementType, bits: u64) {
        put_element(&mut self.tdata, t, bits)
    }

    /// Appends a number to the innermost frame's run if it continues it; returns whether
    /// it did.
    #[inline]
    fn extend_run(&mut self, item: &Item) -> bool {
        let Some(frame) = self.frames.last_mut() else { return false };
        let Item::Num(NumTy::Exact(u), bits) = *item else { return false };
        match &mut frame.run {
            Run::Numbers { t, count, .. } if *t == u => *count += 1,
            run @ Run::Empty => *run = Run::Numbers { t: u, data_start: self.tdata.len(), count: 1 },
            _ => return false,
        }
        self.put_element(u, bits);
        true
    }

    /// Turns the innermost frame's run back into items on the stack (it met a value of
    /// another kind), so that the container closes as it would have without the run.
    fn break_run(&mut self) {
        let Some(frame) = self.frames.last_mut() else { return };
        let run = std::mem::replace(&mut frame.run, Run::Off);
        let (t, data_start) = match run {
            Run::Numbers { t, data_start, .. } => (t, data_start),
            Run::Rows { t, row, row_bytes, data_start, count, .. } => {
                // Back to one typed item per row, as the rows were before `Rows`.
                for i in 0..count {
                    let at = data_start + i * row_bytes;
                    self.typed.push(TypedItem { element: t, shape: row.clone(), data: at..at + row_bytes, mask: None, inferred: false });
                    self.stack.push(Item::Typed(self.typed.len() - 1));
                    self.stack_keys.push(0);
                }
                return;
            }
            _ => return,
        };
        for chunk in self.tdata[data_start..].chunks_exact(t.size()) {
            // The bits `Item::Num` holds: floats' own bits, integers sign- or zero-extended.
            let bits = match t {
                ElementType::F32 => u32::from_le_bytes(chunk.try_into().unwrap()) as u64,
                _ => int_from_le(chunk, t) as u64,
            };
            self.stack.push(Item::Num(NumTy::Exact(t), bits));
            self.stack_keys.push(0);
        }
        self.tdata.truncate(data_start);
    }

    /// Closes the innermost container and pushes it, under `key`, to its parent.
    pub fn close(&mut self, key: u64) -> Result<()> {
        let frame = self.frames.pop().expect("close without open");
        match frame.run {
            Run::Numbers { t, data_start, count } => return self.push_rows(key, t, &[count as u64], data_start),
            Run::Rows { t, row, data_start, count, .. } => {
                let mut shape: Shape = smallvec::smallvec![count as u64];
                shape.extend_from_slice(&row);
                return self.push_rows(key, t, &shape, data_start);
            }
            _ => {}
        }
        let depth = self.frames.len();
        if let Some(node) = frame.node {
            return self.close_direct(key, node, frame.kind, depth);
        }
        let item = match frame.kind {
            FrameKind::Array => match self.typed_from_run(frame.start) {
                Some(typed) => typed,
                None => Item::Array(self.emit_container(frame.start, FrameKind::Array, depth)?),
            },
            FrameKind::Object => Item::Object(self.emit_container(frame.start, FrameKind::Object, depth)?),
            FrameKind::IntMap => Item::IntMap(self.emit_container(frame.start, FrameKind::IntMap, depth)?),
        };
        self.stack.truncate(frame.start);
        self.stack_keys.truncate(frame.start);
        self.push(key, item)
    }

    /// Closes a container whose children went straight into the plan: its record joins
    /// its level.
    fn close_direct(&mut self, key: u64, node: Node, kind: FrameKind, depth: usize) -> Result<()> {
        let index = self.levels.push_node(node, depth);
        if self.takes_direct(key)? {
            return self.push_direct(key, Child { tag: node.tag, key: 0, value: index as u64 }, POINTER);
        }
        let item = match kind {
            FrameKind::Array => Item::Array(index),
            FrameKind::Object => Item::Object(index),
            FrameKind::IntMap => Item::IntMap(index),
        };
        self.push(key, item)
    }

    /// Pushes a closed sequence of numbers (of `shape`, its bytes at `tdata[data_start..]`)
    /// as a row of its parent's run when it continues it, else as a typed item.
    /// Inline: the next row of a run (a point of a `Vec<(f64, f64)>`) is a few compares.
    #[inline(always)]
    fn push_rows(&mut self, key: u64, t: ElementType, shape: &[u64], data_start: usize) -> Result<()> {
        if let Some(Frame { run: Run::Rows { t: pt, row, flat, row_bytes, count, data_start: first }, .. }) = self.frames.last_mut() {
            // One axis (a constant length once inlined): the byte lengths agree exactly when
            // the shapes do. Else compared element by element: a slice compare calls memcmp.
            let same_shape = match shape {
                [len] => *flat && *row_bytes == *len as usize * t.size(),
                _ => !*flat && row.len() == shape.len() && row.iter().zip(shape).all(|(a, b)| a == b),
            };
            if *pt == t && same_shape && *first + *count * *row_bytes == data_start {
                *count += 1;
                return Ok(());
            }
        }
        self.push_rows_slow(key, t, shape, data_start)
    }

    /// A closed sequence of numbers that does not continue a run of its parent: the first
    /// row of one, else a typed item.
    #[inline(never)]
    fn push_rows_slow(&mut self, key: u64, t: ElementType, shape: &[u64], data_start: usize) -> Result<()> {
        if let Some(Frame { run: run @ Run::Empty, .. }) = self.frames.last_mut() {
            if shape.len() < MAX_RANK {
                let row_bytes = shape.iter().product::<u64>() as usize * t.size();
                *run = Run::Rows { t, row: Shape::from_slice(shape), flat: shape.len() == 1, row_bytes, data_start, count: 1 };
                return Ok(());
            }
        }
        // Anything else leaves the parent's run first, so the rows it held come before
        // (most parents, a struct or a map, hold none: no call for them).
        if self.frames.last().is_some_and(|f| !matches!(f.run, Run::Off)) {
            self.break_run();
        }
        let item = self.store_typed(t, Shape::from_slice(shape), data_start, None, false);
        self.push(key, item)
    }

    /// Starts a serde sequence (a tuple, a small array) that may be the next row of its
    /// parent's run of one-dimensional rows, without opening a frame for it: while its
    /// elements are numbers of one type they are only copied to `tdata`
    /// ([`Builder::row_put`]), and [`Builder::end_row`] adds the row to the run. `None`
    /// where that cannot be (the parent holds no such run): the sequence opens as usual.
    /// The bytes and the runs are exactly those `open_seq`, `push_num` and `close` make.
    #[inline(always)]
    pub fn begin_row(&self) -> Option<PendingRow> {
        self.pending_sequence(false)
    }

    /// [`Builder::begin_row`] for a sequence whose first element is a number, which goes
    /// without a frame also where its parent holds no run (a struct's field, a map's
    /// value): closed with [`Builder::end_row`], it becomes the typed array `close` would
    /// have made of its frame, and no frame is opened and closed for it. A parent holding
    /// a run of numbers (whose bytes this one's would interleave) opens it as usual.
    #[inline(always)]
    pub fn begin_numbers(&self) -> Option<PendingRow> {
        self.pending_sequence(true)
    }

    #[inline(always)]
    fn pending_sequence(&self, outside_runs: bool) -> Option<PendingRow> {
        let parent = self.frames.last()?;
        let fits = match &parent.run {
            Run::Empty => true,
            Run::Rows { flat, .. } => *flat,
            Run::Off => outside_runs,
            Run::Numbers { .. } => false,
        };
        // At the depth limit `open_seq` reports the error.
        (fits && self.frames.len() < self.max_depth).then_some(PendingRow { t: ElementType::U8, data_start: self.tdata.len(), count: 0 })
    }

    /// Copies the next element of a pending row, if it is a number of the row's type (or
    /// the first); `false` when it is not, and the row must open its frame.
    #[inline(always)]
    pub fn row_put(&mut self, row: &mut PendingRow, t: ElementType, bits: u64) -> bool {
        if row.count != 0 && row.t != t {
            return false;
        }
        row.t = t;
        row.count += 1;
        self.put_element(t, bits);
        true
    }

    /// A sink for the numbers of the innermost sequence (`row`: the sequence's pending
    /// row, if it has no frame), which holds no child yet, as a run of type `t`; `None`
    /// where it cannot have one. A serde `collect_seq` then copies a `Vec<f64>` in a
    /// tight loop instead of a `push_num` per element; the bytes and the run are those
    /// `push_num` and `row_put` make.
    #[inline(always)]
    pub fn run_sink<'s>(&'s mut self, row: &'s mut Option<PendingRow>, t: ElementType) -> Option<NumberSink<'s>> {
        let count = match row {
            Some(row) if row.count == 0 => {
                row.t = t;
                &mut row.count
            }
            Some(_) => return None,
            None => match self.frames.last_mut() {
                Some(Frame { run: run @ Run::Empty, .. }) => {
                    *run = Run::Numbers { t, data_start: self.tdata.len(), count: 0 };
                    let Run::Numbers { count, .. } = run else { unreachable!() };
                    count
                }
                _ => return None,
            },
        };
        Some(NumberSink { tdata: &mut self.tdata, t, count, added: 0 })
    }

    /// Opens the frame a pending row stood for, holding the numbers it took as its run:
    /// the state `open_seq` and `push_num` would have left. Its next child comes next.
    #[cold]
    pub fn open_pending(&mut self, row: PendingRow) -> Result<()> {
        self.open_seq()?;
        if row.count > 0 {
            self.frames.last_mut().expect("just opened").run =
                Run::Numbers { t: row.t, data_start: row.data_start, count: row.count };
        }
        Ok(())
    }

    /// Closes a pending row under `key`, as `close` would have closed its frame.
    #[inline(always)]
    pub fn end_row(&mut self, key: u64, row: PendingRow) -> Result<()> {
        if row.count == 0 {
            self.open_pending(row)?;
            return self.close(key);
        }
        self.push_rows(key, row.t, &[row.count as u64], row.data_start)
    }

    /// Closes the innermost container, an array, without turning it into a typed array.
    pub fn close_generic(&mut self, key: u64) -> Result<()> {
        self.break_run();
        let frame = self.frames.pop().expect("close without open");
        if let Some(node) = frame.node {
            return self.close_direct(key, node, frame.kind, self.frames.len());
        }
        let index = self.emit_container(frame.start, FrameKind::Array, self.frames.len())?;
        self.stack.truncate(frame.start);
        self.stack_keys.truncate(frame.start);
        self.push(key, Item::Array(index))
    }

    /// Pushes a table (spec §15), whose body is copied into the document as it is.
    pub fn push_table(&mut self, key: u64, table: crate::table::Table) -> Result<()> {
        self.break_run();
        self.tables.push(table);
        self.push(key, Item::Table(self.tables.len() - 1))
    }

    pub fn push_typed(&mut self, key: u64, element: ElementType, shape: Shape, bytes: &[u8], mask: Option<&[bool]>) -> Result<()> {
        // Its bytes go to `tdata`: a run in progress must leave it first.
        self.break_run();
        let start = self.tdata.len();
        self.tdata.extend_from_slice(bytes);
        let mask = mask.map(|m| {
            let s = self.tmask.len();
            self.tmask.extend(m.iter().map(|&b| b as u8));
            s..self.tmask.len()
        });
        self.typed.push(TypedItem { element, shape, data: start..self.tdata.len(), mask, inferred: false });
        self.push(key, Item::Typed(self.typed.len() - 1))
    }

    /// Finishes the build and returns the root item, pushed as the last entry of `items`.
    pub fn finish(mut self) -> Result<Builder> {
        if !self.frames.is_empty() || self.stack.len() != 1 {
            return Err(Error::new(Category::Custom, "unbalanced builder: expected exactly one root value"));
        }
        let root = self.stack.pop().unwrap();
        self.root = Some(self.child_slot(root, self.store_of(0)).0);
        // The stack held the children of the widest container at once: give that memory
        // back before the layout needs its own (a small stack is kept for the next use).
        if self.stack.capacity() > KEEP_STACK {
            self.stack = Vec::new();
            self.stack_keys = Vec::new();
        }
        for store in &mut self.stores {
            store.seal()?;
        }
        Ok(self)
    }

    /// If the children from `start` on form a typed array, stores it and returns its item.
    fn typed_from_run(&mut self, start: usize) -> Option<Item> {
        let run = &self.stack[start..];
        let first = *run.first()?;
        match first {
            Item::Num(NumTy::Exact(t), _) => self.exact_run(start, t),
            Item::Num(_, _) => self.json_number_run(start),
            Item::Typed(_) => self.merge_rows(start),
            _ => None,
        }
    }

    /// A run of numbers all of one Rust type keeps that type.
    fn exact_run(&mut self, start: usize, t: ElementType) -> Option<Item> {
        let run = &self.stack[start..];
        if !run.iter().all(|it| matches!(it, Item::Num(NumTy::Exact(u), _) if *u == t)) {
            return None;
        }
        let data_start = self.tdata.len();
        for it in run {
            let Item::Num(_, bits) = *it else { unreachable!() };
            self.tdata.extend_from_slice(&bits.to_le_bytes()[..t.size()]);
        }
        Some(self.store_typed(t, smallvec::smallvec![run.len() as u64], data_start, None, false))
    }

    /// A run of JSON numbers: integers narrow, floats are f64, a mix is f64 with a mask.
    fn json_number_run(&mut self, start: usize) -> Option<Item> {
        let run = &self.stack[start..];
        let (mut ints, mut floats) = (0usize, 0usize);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let mut exact = true;
        for it in run {
            match *it {
                Item::Num(NumTy::JsonInt, bits) => {
                    let v = bits as i64;
                    ints += 1;
                    lo = lo.min(v);
                    hi = hi.max(v);
                    exact &= v.unsigned_abs() <= 1 << 53;
                }
                Item::Num(NumTy::JsonFloat, _) => floats += 1,
                _ => return None,
            }
        }
        let data_start = self.tdata.len();
        if floats == 0 {
            let t = narrowest_int(lo, hi);
            for it in run {
                let Item::Num(_, bits) = *it else { unreachable!() };
                self.tdata.extend_from_slice(&bits.to_le_bytes()[..t.size()]);
            }
            return Some(self.store_typed(t, smallvec::smallvec![ints as u64], data_start, None, true));
        }
        if ints > 0 && !exact {
            return None;
        }
        let mask_start = self.tmask.len();
        for it in run {
            let (value, is_int) = match *it {
                Item::Num(NumTy::JsonInt, bits) => (bits as i64 as f64, true),
                Item::Num(_, bits) => (f64::from_bits(bits), false),
                _ => unreachable!(),
            };
            self.tdata.extend_from_slice(&value.to_le_bytes());
            if ints > 0 {
                self.tmask.push(is_int as u8);
            }
        }
        let mask = (ints > 0).then_some(mask_start..self.tmask.len());
        Some(self.store_typed(ElementType::F64, smallvec::smallvec![run.len() as u64], data_start, mask, true))
    }

    /// A run of typed arrays of one shape becomes one array of rank + 1.
    fn merge_rows(&mut self, start: usize) -> Option<Item> {
        let run = &self.stack[start..];
        let Item::Typed(first) = run[0] else { return None };
        // Rows were stored one after the other, so they are the last typed items and
        // their bytes are adjacent at the tail.
        if first + run.len() != self.typed.len() || !run.iter().enumerate().all(|(i, it)| matches!(it, Item::Typed(id) if *id == first + i)) {
            return None;
        }
        let rows = &self.typed[first..];
        let head = &rows[0];
        if head.shape.len() >= MAX_RANK || rows.iter().any(|r| r.shape != head.shape) {
            return None;
        }
        let mut merged_shape: Shape = smallvec::smallvec![rows.len() as u64];
        merged_shape.extend_from_slice(&head.shape);
        let same_type = rows.iter().all(|r| r.element == head.element && r.mask.is_none() && r.inferred == head.inferred);
        if same_type {
            let data_start = head.data.start;
            let (element, inferred) = (head.element, head.inferred);
            self.typed.truncate(first);
            return Some(self.store_typed(element, merged_shape, data_start, None, inferred));
        }
        if !rows.iter().all(|r| r.inferred) {
            return None;
        }
        self.merge_inferred_rows((first..first + run.len()).collect(), merged_shape)
    }

    /// Joins inferred (JSON) rows of different element types: integers widen, and
    /// integers with floats become f64 with a mask.
    fn merge_inferred_rows(&mut self, ids: Vec<usize>, shape: Shape) -> Option<Item> {
        let rows: Vec<TypedItem> = ids.iter().map(|&i| self.typed[i].clone()).collect();
        let any_float = rows.iter().any(|r| r.element == ElementType::F64);
        let mut values: Vec<(u64, bool)> = Vec::new(); // (bits, is_int)
        for row in &rows {
            let bytes = &self.tdata[row.data.clone()];
            let size = row.element.size();
            for (i, chunk) in bytes.chunks_exact(size).enumerate() {
                let is_int = match (&row.mask, row.element) {
                    (Some(m), _) => self.tmask[m.start + i] != 0,
                    (None, t) => !t.is_float(),
                };
                let bits = if row.element == ElementType::F64 {
                    u64::from_le_bytes(chunk.try_into().unwrap())
                } else {
                    int_from_le(chunk, row.element) as u64
                };
                values.push((bits, is_int));
            }
        }
        let data_start = rows[0].data.start;
        let mask_start = rows.iter().find_map(|r| r.mask.as_ref().map(|m| m.start)).unwrap_or(self.tmask.len());
        if !any_float {
            let (lo, hi) = values.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &(b, _)| (lo.min(b as i64), hi.max(b as i64)));
            let t = narrowest_int(lo, hi);
            self.tdata.truncate(data_start);
            for &(bits, _) in &values {
                self.tdata.extend_from_slice(&bits.to_le_bytes()[..t.size()]);
            }
            self.typed.truncate(ids[0]);
            return Some(self.store_typed(t, shape, data_start, None, true));
        }
        let row_is_float: Vec<bool> = rows.iter().map(|r| r.element == ElementType::F64).collect();
        let per_row = (values.len() / rows.len()).max(1);
        // Integers of f64 rows are exact by construction; those of integer rows must be.
        let exact = values.iter().enumerate().all(|(i, &(b, _))| row_is_float[i / per_row] || (b as i64).unsigned_abs() <= 1 << 53);
        if !exact {
            return None;
        }
        self.tdata.truncate(data_start);
        self.tmask.truncate(mask_start);
        let new_mask_start = self.tmask.len();
        for (i, &(bits, is_int)) in values.iter().enumerate() {
            let value = if row_is_float[i / per_row] { f64::from_bits(bits) } else { bits as i64 as f64 };
            self.tdata.extend_from_slice(&value.to_le_bytes());
            self.tmask.push(is_int as u8);
        }
        self.typed.truncate(ids[0]);
        let mask = Some(new_mask_start..self.tmask.len());
        Some(self.store_typed(ElementType::F64, shape, data_start, mask, true))
    }

    fn store_typed(&mut self, element: ElementType, shape: Shape, data_start: usize, mask: Option<std::ops::Range<usize>>, inferred: bool) -> Item {
        self.typed.push(TypedItem { element, shape, data: data_start..self.tdata.len(), mask, inferred });
        Item::Typed(self.typed.len() - 1)
    }
}

fn too_many(what: &'static str) -> Error {
    Error::new(Category::LimitExceeded, what)
}

/// The first of i8, u8, i16, u16, i32, u32, i64 that holds every value in `lo..=hi`.
pub(crate) fn narrowest_int(lo: i64, hi: i64) -> ElementType {
    use ElementType::*;
    let fits = |min: i64, max: i64| lo >= min && hi <= max;
    if fits(i8::MIN as i64, i8::MAX as i64) {
        I8
    } else if fits(0, u8::MAX as i64) {
        U8
    } else if fits(i16::MIN as i64, i16::MAX as i64) {
        I16
    } else if fits(0, u16::MAX as i64) {
        U16
    } else if fits(i32::MIN as i64, i32::MAX as i64) {
        I32
    } else if fits(0, u32::MAX as i64) {
        U32
    } else {
        I64
    }
}

/// Reads one little-endian integer element of type `t` as i64 (u64 elements wrap).
pub(crate) fn int_from_le(chunk: &[u8], t: ElementType) -> i64 {
    use ElementType::*;
    match t {
        Bool | U8 => chunk[0] as i64,
        I8 => chunk[0] as i8 as i64,
        I16 => i16::from_le_bytes([chunk[0], chunk[1]]) as i64,
        U16 => u16::from_le_bytes([chunk[0], chunk[1]]) as i64,
        I32 => i32::from_le_bytes(chunk[..4].try_into().unwrap()) as i64,
        U32 => u32::from_le_bytes(chunk[..4].try_into().unwrap()) as i64,
        I64 | U64 | F64 => i64::from_le_bytes(chunk[..8].try_into().unwrap()),
        F32 => i32::from_le_bytes(chunk[..4].try_into().unwrap()) as i64,
    }
}


//! Where a borrowed decode puts its containers: one bump arena per tree, so that a
//! document of thousands of small objects and arrays costs a few large allocations, not
//! one per container, and dropping the tree frees a few chunks instead of walking it.
//!
//! [`Arena`] is for callers that decode many documents and want to reuse the memory
//! ([`crate::decode_borrowed_in`], [`Arena::reset`]); [`Borrowed`] owns its arena, for
//! callers that want one tree and nothing to manage ([`crate::decode_borrowed`]).

use std::cell::RefCell;
use std::mem::MaybeUninit;

use crate::format::typed::Dims;
use crate::read::TypedRef;
use crate::value_ref::ValueRef;

/// Memory for the containers of borrowed trees ([`ValueRef`]): arrays, objects and intmaps
/// are slices allocated here, strings and typed arrays still point into the document.
///
/// ```
/// let bytes = leafwire::json::from_json(br#"{"a": [1, 2], "b": "x"}"#)?;
/// let mut arena = leafwire::Arena::new();
/// for _ in 0..3 {
///     let tree = leafwire::decode_borrowed_in(&bytes, &arena)?;
///     assert_eq!(tree.get("b").and_then(|b| b.as_str()), Some("x"));
///     arena.reset(); // the next tree reuses the memory
/// }
/// # Ok::<(), leafwire::Error>(())
/// ```
#[derive(Default)]
pub struct Arena {
    bump: bumpalo::Bump,
    /// Shapes of typed views that spilled to the heap (rank above 4), inside views in
    /// `bump`: the bump arena never runs destructors, so `reset` and `drop` free them.
    spilled: RefCell<Vec<*mut Dims>>,
}

// SAFETY: the raw pointers in `spilled` point into this arena's own chunks, which move
// with it; nothing else holds them, and `Dims` and `Bump` are `Send`.
unsafe impl Send for Arena {}

impl Arena {
    pub fn new() -> Arena {
        Arena::default()
    }

    /// An arena whose first chunk holds `bytes` (a tree takes roughly 1–2× its document's
    /// length).
    pub fn with_capacity(bytes: usize) -> Arena {
        Arena { bump: bumpalo::Bump::with_capacity(bytes), spilled: RefCell::default() }
    }

    /// Frees every tree decoded into this arena, keeping its largest chunk for the next.
    pub fn reset(&mut self) {
        self.free_spilled();
        self.bump.reset();
    }

    /// Bytes the arena holds from the allocator.
    pub fn allocated_bytes(&self) -> usize {
        self.bump.allocated_bytes()
    }

    /// Room for `n` values, to be written in order by the walker: left uninitialized, as
    /// each slot is written exactly once (prefilling cost as much as the writes).
    // A shared borrow handing out `&mut`: each call returns memory no other reference
    // reaches (fresh from the bump allocator), as `bumpalo::Bump::alloc` does.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(crate) fn uninit_slice<T: Copy>(&self, n: usize) -> &mut [MaybeUninit<T>] {
        let layout = std::alloc::Layout::array::<T>(n).expect("the walker charged n children to the budget first");
        let ptr = self.bump.alloc_layout(layout).cast::<MaybeUninit<T>>();
        // SAFETY: the memory is fresh, sized and aligned for `n` values of `T`, and lives
        // as long as the arena's borrow; `MaybeUninit` needs no initialization.
        unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), n) }
    }

    /// A typed view, kept for the arena's lifetime.
    pub(crate) fn typed<'a>(&'a self, typed: TypedRef<'a>) -> &'a TypedRef<'a> {
        let view = self.bump.alloc(typed);
        if view.header.shape.spilled() {
            self.spilled.borrow_mut().push(std::ptr::addr_of_mut!(view.header.shape));
        }
        view
    }

    /// A table view, kept for the arena's lifetime (it owns no heap memory).
    pub(crate) fn table<'a>(&'a self, table: crate::table::TableRef<'a>) -> &'a crate::table::TableRef<'a> {
        self.bump.alloc(table)
    }

    /// Frees the shapes that spilled to the heap. Only with no tree borrowing the arena
    /// (`&mut self`: in `reset` and `drop`), just before the bump memory holding them goes.
    fn free_spilled(&mut self) {
        for shape in self.spilled.get_mut().drain(..) {
            // SAFETY: each pointer is to a shape inside a view this arena allocated and has
            // not freed (the bump memory is freed only after this, by reset or drop), was
            // pushed once, and nothing borrows the arena any more (`&mut self`).
            unsafe { std::ptr::drop_in_place(shape) };
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        self.free_spilled();
    }
}

/// A whole document decoded into a borrowed tree, with the arena that holds the tree's
/// containers: what [`crate::decode_borrowed`] returns. Read it through [`Borrowed::root`].
pub struct Borrowed<'a> {
    /// The tree. Its strings, keys, bytes and typed arrays point into the document (`'a`);
    /// its container slices point into `arena`'s chunks, heap memory that stays where it
    /// is when the arena moves and lives as long as the arena: `root` hands the tree out
    /// only for a borrow of `self`, never for `'a`.
    root: ValueRef<'a>,
    arena: Arena,
}

impl<'a> Borrowed<'a> {
    /// Decodes `node` and everything under it into a fresh arena of `capacity` bytes.
    pub(crate) fn decode(node: &crate::Node<'a>, capacity: usize, max_depth: usize) -> crate::Result<Borrowed<'a>> {
        let arena = Arena::with_capacity(capacity);
        let root = node.to_value_ref_in(&arena, max_depth)?;
        // SAFETY: only the lifetime changes. The containers `root` borrows from `arena` stay
        // valid while `arena` lives (moving it below moves its handle, not its chunks), the
        // arena is never reset or lent out mutably, and `Borrowed::root` shortens the
        // lifetime back to a borrow of `self`; `root` is dropped first (it has no drop glue).
        let root = unsafe { std::mem::transmute::<ValueRef<'_>, ValueRef<'a>>(root) };
        Ok(Borrowed { root, arena })
    }

    /// The decoded tree, for as long as `self` is borrowed.
    pub fn root(&self) -> &ValueRef<'_> {
        &self.root
    }

    /// Bytes the tree's containers take from the allocator.
    pub fn allocated_bytes(&self) -> usize {
        self.arena.allocated_bytes()
    }
}

impl std::fmt::Debug for Borrowed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.root.fmt(f)
    }
}

/// A container being filled by the walker, child by child, in a slice of the arena.
pub(crate) struct Filling<'a, T> {
    slots: &'a mut [MaybeUninit<T>],
    len: usize,
}

impl<'a, T: Copy> Filling<'a, T> {
    #[inline]
    pub fn new(arena: &'a Arena, n: usize) -> Filling<'a, T> {
        Filling { slots: arena.uninit_slice(n), len: 0 }
    }

    #[inline(always)]
    pub fn push(&mut self, value: T) {
        self.slots[self.len].write(value);
        self.len += 1;
    }

    /// The children pushed (all of them: the walker pushes one per child or fails).
    pub fn finish(self) -> &'a [T] {
        let Filling { slots, len } = self;
        // SAFETY: `push` wrote the first `len` slots; `MaybeUninit<T>` has the layout of `T`.
        unsafe { &*(&slots[..len] as *const [MaybeUninit<T>] as *const [T]) }
    }
}

//! A spare builder per thread: `to_vec` and `from_json` of many small documents would
//! otherwise spend a good part of their time growing the same buffers from nothing
//! (a small serde struct: a quarter of its instructions in malloc and realloc).

use std::borrow::Cow;
use std::cell::Cell;

use super::{Builder, DuplicateKeys};
use crate::blocks::Blocks;

/// A builder holding more than this is dropped after use, not kept.
const SPARE_LIMIT: usize = 16 << 20;

/// The most key strings a spare builder keeps for reuse, and the longest.
const SPARE_KEYS: usize = 4096;
const SPARE_KEY_BYTES: usize = 256;

thread_local! {
    static SPARE: Cell<Option<Builder>> = const { Cell::new(None) };
}

impl Builder {
    /// This thread's spare builder (empty, its buffers keeping their memory), or a new one.
    pub fn reused(max_depth: usize) -> Builder {
        match SPARE.take() {
            Some(mut b) => {
                b.max_depth = max_depth;
                b
            }
            None => Builder::new(max_depth),
        }
    }

    /// Empties the builder and keeps it as this thread's spare, unless it is large or
    /// spilled to a file.
    pub(super) fn recycle(mut self) {
        if self.stores.iter().any(Blocks::is_spilled) || self.heap_size() > SPARE_LIMIT {
            return;
        }
        self.levels.clear();
        self.spans.clear();
        self.huge.clear();
        self.root = None;
        self.stack.clear();
        self.stack_keys.clear();
        self.frames.clear();
        for store in &mut self.stores {
            *store = Blocks::recycle(std::mem::take(store));
        }
        (self.single_store, self.stores_in_slot_order) = (false, true);
        self.typed.clear();
        self.tables.clear();
        self.tdata.clear();
        self.tmask.clear();
        for key in self.dict.drain(..) {
            if let Cow::Owned(key) = key {
                if self.spare_keys.len() < SPARE_KEYS && key.capacity() <= SPARE_KEY_BYTES {
                    self.spare_keys.push(key);
                }
            }
        }
        // Ids of the cleared dictionary: forget them (clearing the cache only when the
        // count wraps, which would otherwise make old entries look current).
        self.static_generation = self.static_generation.wrapping_add(1);
        if self.static_generation == 0 {
            self.static_keys.fill(super::StaticKey::default());
            self.static_generation = 1;
        }
        self.duplicate_keys = DuplicateKeys::default();
        SPARE.set(Some(self));
    }

    fn heap_size(&self) -> usize {
        self.levels.heap_size()
            + self.spans.capacity() * size_of::<super::Span>()
            + self.stack.capacity() * (size_of::<super::Item>() + 8)
            + self.stores.iter().map(Blocks::heap_size).sum::<usize>()
            + self.tdata.capacity()
            + self.tmask.capacity()
            + self.typed.capacity() * size_of::<super::TypedItem>()
            + self.dict.capacity() * 32
            + self.shapes.heap_size()
    }
}

//! Interning of object keys for the fast `dumps`: key object address → provisional id, in
//! front of the core's [`KeyTable`] (key text → id, with the key hashes), which sees each
//! key object only once.
//!
//! Records of one shape share their key objects (`json.loads` and literal dicts reuse
//! them), so almost every lookup is a hit on an address seen before: an open-addressing
//! table on the address answers it with one multiply and usually one compare, where the
//! text table would hash the text.

use leafwire::direct::KeyTable;

/// An empty slot (no object lives at address 0).
const EMPTY: usize = 0;
/// Tables larger than this are not kept for the next call (clearing them would cost more
/// than they save).
const KEEP_SLOTS: usize = 1 << 12;
const MIN_SLOTS: usize = 1 << 6;

#[derive(Default)]
pub struct Keys {
    /// (address, id) pairs; the length is a power of two, at most half full.
    slots: Vec<(usize, u32)>,
    /// 64 − log2(slots.len()), for the home slot.
    shift: u32,
    used: usize,
    /// The distinct texts, borrowed from key objects the caller keeps alive.
    table: KeyTable<'static>,
}

impl Keys {
    /// Forgets every key, keeping the storage when it is small.
    pub fn clear(&mut self) {
        if self.slots.len() > KEEP_SLOTS {
            self.slots = Vec::new();
            self.shift = 0;
        } else {
            self.slots.fill((EMPTY, 0));
        }
        self.used = 0;
        self.table.clear();
    }

    pub fn heap_size(&self) -> usize {
        self.slots.capacity() * size_of::<(usize, u32)>() + self.table.heap_size()
    }

    /// The distinct keys by id, and their key hashes, as the core's writer takes them.
    pub fn as_direct(&self) -> leafwire::direct::Keys<'_> {
        leafwire::direct::Keys { texts: self.table.texts(), hashes: self.table.hashes() }
    }

    #[inline(always)]
    fn home(&self, address: usize) -> usize {
        // Fibonacci hashing; the low bits of an address are alignment, the high bits vary.
        ((address as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The id of the key object at `address`, if it was inserted: the home slot inline,
    /// the rest of the probe out of line.
    #[inline(always)]
    pub fn by_address(&self, address: usize) -> Option<u32> {
        match self.slots.get(self.home(address)) {
            Some(&(a, id)) if a == address => Some(id),
            Some(&(EMPTY, _)) | None => None,
            Some(_) => self.probe(address),
        }
    }

    #[inline(never)]
    fn probe(&self, address: usize) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(address);
        loop {
            let (a, id) = self.slots[i];
            if a == address {
                return Some(id);
            }
            if a == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Interns a key object not seen before (by address) with its text; returns its id.
    /// The text must stay valid while the ids are used.
    pub fn insert(&mut self, address: usize, text: &'static [u8]) -> u32 {
        let id = self.table.intern(text);
        if 2 * (self.used + 1) > self.slots.len() {
            self.grow();
        }
        self.place(address, id);
        self.used += 1;
        id
    }

    fn place(&mut self, address: usize, id: u32) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(address);
        while self.slots[i].0 != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = (address, id);
    }

    fn grow(&mut self) {
        let size = (2 * self.slots.len()).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![(EMPTY, 0); size]);
        self.shift = 64 - size.trailing_zeros();
        for (address, id) in old {
            if address != EMPTY {
                self.place(address, id);
            }
        }
    }
}

//! Interning of object keys for the direct encoder: key text → provisional id (first-seen
//! order), with each key's hash (spec §4.2) kept for the dictionary and the hash indexes.
//!
//! The table is hashed with the format's own key hash, so each key occurrence is hashed
//! once, and that hash is the one the document's tables need.

use crate::format::hash;

/// Tables larger than this are not kept by `clear` (refilling them costs more than
/// growing a small one again).
const KEEP_SLOTS: usize = 1 << 12;
const MIN_SLOTS: usize = 1 << 6;

#[derive(Default)]
pub struct KeyTable<'k> {
    /// Open addressing: 0 for empty, else one more than the id. A power of two, at most
    /// half full.
    slots: Vec<u32>,
    texts: Vec<&'k [u8]>,
    hashes: Vec<u64>,
}

impl<'k> KeyTable<'k> {
    /// The provisional id of `text`, interning it if it is new.
    #[inline]
    pub fn intern(&mut self, text: &'k [u8]) -> u32 {
        self.intern_hashed(text, hash::key_hash(text))
    }

    /// [`intern`](Self::intern), trying `guess` first (see [`KeyGuesses`]).
    #[inline]
    pub fn intern_guessed(&mut self, text: &'k [u8], guess: Option<u32>) -> u32 {
        if let Some(id) = guess {
            if let Some(known) = self.texts.get(id as usize) {
                if crate::format::dictionary::bytes_eq(known, text) {
                    return id;
                }
            }
        }
        self.intern(text)
    }

    /// [`intern`](Self::intern) with the key hash already computed.
    #[inline]
    pub fn intern_hashed(&mut self, text: &'k [u8], h: u64) -> u32 {
        if !self.slots.is_empty() {
            let mask = self.slots.len() - 1;
            let mut i = hash::home_bucket(h, self.slots.len());
            loop {
                let entry = self.slots[i];
                if entry == 0 {
                    break;
                }
                let id = (entry - 1) as usize;
                if self.hashes[id] == h && same_key(self.texts[id], text) {
                    return id as u32;
                }
                i = (i + 1) & mask;
            }
        }
        self.insert(text, h)
    }

    #[inline(never)]
    fn insert(&mut self, text: &'k [u8], h: u64) -> u32 {
        let id = self.texts.len() as u32;
        self.texts.push(text);
        self.hashes.push(h);
        if 2 * self.texts.len() > self.slots.len() {
            self.grow();
        } else {
            self.place(id);
        }
        id
    }

    fn place(&mut self, id: u32) {
        let mask = self.slots.len() - 1;
        let mut i = hash::home_bucket(self.hashes[id as usize], self.slots.len());
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = id + 1;
    }

    fn grow(&mut self) {
        let size = (2 * self.slots.len()).max(MIN_SLOTS);
        self.slots = vec![0; size];
        for id in 0..self.texts.len() as u32 {
            self.place(id);
        }
    }

    /// The distinct keys, by provisional id.
    pub fn texts(&self) -> &[&'k [u8]] {
        &self.texts
    }

    /// The key hash of each provisional id.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// Forgets every key, keeping the storage when it is small.
    pub fn clear(&mut self) {
        if self.slots.len() > KEEP_SLOTS {
            self.slots = Vec::new();
        } else {
            self.slots.fill(0);
        }
        self.texts.clear();
        self.hashes.clear();
    }

    /// Heap bytes held.
    pub fn heap_size(&self) -> usize {
        self.slots.capacity() * 4 + self.texts.capacity() * size_of::<&[u8]>() + self.hashes.capacity() * 8
    }

    /// The same table for keys of another lifetime (it must be empty: only the storage
    /// is carried over).
    pub fn recycle<'j>(mut self) -> KeyTable<'j> {
        self.clear();
        KeyTable { slots: self.slots, texts: reuse_slices(self.texts), hashes: self.hashes }
    }
}

/// An empty list of slices of any lifetime in the memory of `list` (its slices are
/// dropped; the allocation is kept: a map to the same layout collects in place).
pub(crate) fn reuse_slices<'j, T>(mut list: Vec<&[T]>) -> Vec<&'j [T]> {
    list.clear();
    list.into_iter().map(|_| -> &'j [T] { unreachable!("the list is empty") }).collect()
}

/// Whether two keys with the same key hash are the same key. Up to 8 bytes, the hash is a
/// bijection of (length, bytes): each step of spec §4.2's mix (xor with the length's
/// product, multiplication by an odd constant, `h ^ (h >> 31)`) can be undone, so equal
/// hashes and lengths are equal keys, with no compare.
#[inline(always)]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && (a.len() <= 8 || crate::format::dictionary::bytes_eq(a, b))
}

/// Per nesting level, the key ids of the last object met there, by position: the guesses
/// for the next object's keys. Records of one shape repeat their keys in order, and a
/// compare with the guess's text costs less than hashing the key. A caller takes a guess
/// only when its text is the key's (an id has one text), so a stale one is harmless.
#[derive(Default)]
pub(crate) struct KeyGuesses(Vec<Vec<u32>>);

/// Keys past this position of an object are not guessed (a huge object would otherwise
/// keep a list as long as itself).
const MAX_GUESSED_KEYS: usize = 256;

impl KeyGuesses {
    /// The id of the key at `position` of the last object at level `depth`.
    #[inline(always)]
    pub fn guess(&self, depth: usize, position: usize) -> Option<u32> {
        self.0.get(depth).and_then(|s| s.get(position)).copied()
    }

    /// Notes `id` as the key at `position` of the object at level `depth` (after a guess
    /// missed: a hit is already there). Records that vary miss often: the common case, a
    /// position already in the list, is a store in line.
    #[inline(always)]
    pub fn note(&mut self, depth: usize, position: usize, id: u32) {
        match self.0.get_mut(depth).and_then(|keys| keys.get_mut(position)) {
            Some(slot) => *slot = id,
            None => self.extend(depth, position, id),
        }
    }

    #[inline(never)]
    fn extend(&mut self, depth: usize, position: usize, id: u32) {
        if self.0.len() <= depth {
            self.0.resize_with(depth + 1, Vec::new);
        }
        let keys = &mut self.0[depth];
        if position == keys.len() && position < MAX_GUESSED_KEYS {
            keys.push(id);
        }
    }

    /// Forgets the guesses (a new document's ids differ), keeping the memory.
    pub fn clear(&mut self) {
        self.0.iter_mut().for_each(Vec::clear);
    }

    pub fn heap_size(&self) -> usize {
        self.0.iter().map(|s| s.capacity() * size_of::<u32>()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_first_seen_order_and_stable() {
        let mut t = KeyTable::default();
        let words: Vec<String> = (0..500).map(|i| format!("key{}", i % 170)).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.intern(w.as_bytes()), (i % 170) as u32);
        }
        assert_eq!(t.len(), 170);
        assert_eq!(t.hashes()[3], hash::key_hash(b"key3"));
        t.clear();
        assert_eq!(t.intern(b"other"), 0);
    }

    #[test]
    fn a_guess_is_only_taken_when_its_text_matches() {
        let mut t = KeyTable::default();
        let (a, b) = (t.intern(b"alpha"), t.intern(b"a longer key than eight bytes"));
        assert_eq!(t.intern_guessed(b"alpha", Some(a)), a);
        assert_eq!(t.intern_guessed(b"alpha", Some(b)), a);
        assert_eq!(t.intern_guessed(b"a longer key than eight bytes", Some(a)), b);
        assert_eq!(t.intern_guessed(b"alpha", Some(99)), a);
        // A text that differs from the guess only past its first bytes, or in length.
        assert_eq!(t.intern_guessed(b"a longer key than eight bytez", Some(b)), 2);
        assert_eq!(t.intern_guessed(b"alph", Some(a)), 3);
        assert_eq!(t.intern_guessed(b"fresh", None), 4);
        assert_eq!(t.len(), 5);
    }

    #[test]
    fn reused_slice_lists_keep_their_memory() {
        let text = String::from("abc");
        let list: Vec<&[u8]> = vec![text.as_bytes(); 1000];
        let (capacity, at) = (list.capacity(), list.as_ptr() as usize);
        let reused: Vec<&'static [u8]> = reuse_slices(list);
        assert!(reused.is_empty());
        assert_eq!((reused.capacity(), reused.as_ptr() as usize), (capacity, at));
    }

    #[test]
    fn short_keys_of_equal_hash_are_equal() {
        // Exhaustive over one byte, and the length is part of the hash: "\0" is not "".
        let mut seen = std::collections::HashMap::new();
        for key in (0..=255u8).map(|b| vec![b]).chain([vec![], vec![0, 0], vec![0; 8]]) {
            assert!(seen.insert(hash::key_hash(&key), key).is_none());
        }
    }
}

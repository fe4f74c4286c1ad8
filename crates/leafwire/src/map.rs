//! The ordered maps inside a `Value`: objects (string keys) and intmaps (integer keys).
//!
//! Entries live in one vector, in insertion order. Most objects in real documents have a
//! handful of keys, so a small map is searched by a scan and costs one allocation; a hash
//! index is built only when a map with more than `SCAN_LIMIT` entries is first searched.
//! Decoding a document therefore never hashes a key: the decoder has already checked that
//! a container's keys are distinct, and appends them (`push_distinct`).

use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::sync::OnceLock;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use crate::value::Value;

/// Maps up to this many entries are searched by a scan, without an index.
const SCAN_LIMIT: usize = 8;

/// Positions of the entries, by the hash of their key.
type Index = HashTable<usize>;

/// An insertion-ordered map from `K` to `Value`, with unique keys. `leafwire::Map` (string
/// keys) and `leafwire::IntMap` (integer keys) are this type.
///
/// Equality ignores order, as for JSON objects: two maps are equal when they hold the same
/// keys with equal values.
pub struct OrderedMap<K> {
    entries: Vec<(K, Value)>,
    /// Built on the first search of a map above `SCAN_LIMIT` entries; kept up to date by
    /// insertions, dropped by anything that moves entries.
    index: OnceLock<Box<Index>>,
}

fn hash_of<Q: Hash + ?Sized>(key: &Q) -> u64 {
    FxBuildHasher.hash_one(key)
}

impl<K> OrderedMap<K> {
    pub fn new() -> Self {
        OrderedMap { entries: Vec::new(), index: OnceLock::new() }
    }

    pub fn with_capacity(n: usize) -> Self {
        OrderedMap { entries: Vec::with_capacity(n), index: OnceLock::new() }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.index = OnceLock::new();
    }

    /// The entries in order, as a slice of pairs.
    pub fn as_slice(&self) -> &[(K, Value)] {
        &self.entries
    }

    pub fn iter(&self) -> Iter<'_, K> {
        Iter(self.entries.iter())
    }

    /// Values can change in place; keys cannot, so the index stays valid.
    pub fn iter_mut(&mut self) -> IterMut<'_, K> {
        IterMut(self.entries.iter_mut())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = Value> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }

    /// The entry at position `i`.
    pub fn get_index(&self, i: usize) -> Option<(&K, &Value)> {
        self.entries.get(i).map(|(k, v)| (k, v))
    }

    pub fn first(&self) -> Option<(&K, &Value)> {
        self.get_index(0)
    }

    pub fn last(&self) -> Option<(&K, &Value)> {
        self.entries.last().map(|(k, v)| (k, v))
    }

    /// Removes the entries in `range` and yields them in order.
    pub fn drain(&mut self, range: impl std::ops::RangeBounds<usize>) -> std::vec::Drain<'_, (K, Value)> {
        self.index = OnceLock::new();
        self.entries.drain(range)
    }

    /// Keeps the entries `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut Value) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
        self.index = OnceLock::new();
    }

    /// Sorts the entries by `order`; equal entries keep their order.
    pub fn sort_by(&mut self, mut order: impl FnMut(&K, &Value, &K, &Value) -> std::cmp::Ordering) {
        self.entries.sort_by(|(ka, va), (kb, vb)| order(ka, va, kb, vb));
        self.index = OnceLock::new();
    }
}

impl<K: Hash + Eq> OrderedMap<K> {
    /// Appends an entry whose key the caller knows is not in the map yet (a decoder that has
    /// checked a container's keys are distinct). A repeated key here would make the map hold
    /// it twice, so debug builds check.
    pub(crate) fn push_distinct(&mut self, key: K, value: Value) {
        debug_assert!(self.get_index_of(&key).is_none(), "push_distinct given a key already in the map");
        if let Some(index) = self.index.get_mut() {
            let at = self.entries.len();
            index.insert_unique(hash_of(&key), at, |&i| hash_of(&self.entries[i].0));
        }
        self.entries.push((key, value));
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let mut index = Index::with_capacity(self.entries.len());
            for (i, (k, _)) in self.entries.iter().enumerate() {
                index.insert_unique(hash_of(k), i, |&j| hash_of(&self.entries[j].0));
            }
            Box::new(index)
        })
    }

    /// The position of `key`, if it is in the map.
    pub fn get_index_of<Q>(&self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.entries.len() <= SCAN_LIMIT {
            return self.entries.iter().position(|(k, _)| k.borrow() == key);
        }
        self.index().find(hash_of(key), |&i| self.entries[i].0.borrow() == key).copied()
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_index_of(key).is_some()
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&Value>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_index_of(key).map(|i| &self.entries[i].1)
    }

    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &Value)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_index_of(key).map(|i| (&self.entries[i].0, &self.entries[i].1))
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut Value>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_index_of(key).map(|i| &mut self.entries[i].1)
    }

    /// Sets `key` to `value`. A key already in the map keeps its position and its old value
    /// is returned; a new key goes last.
    pub fn insert(&mut self, key: K, value: Value) -> Option<Value> {
        self.insert_full(key, value).1
    }

    /// As `insert`, also giving the entry's position.
    pub fn insert_full(&mut self, key: K, value: Value) -> (usize, Option<Value>) {
        if let Some(i) = self.get_index_of(&key) {
            return (i, Some(std::mem::replace(&mut self.entries[i].1, value)));
        }
        let at = self.entries.len();
        self.push_distinct(key, value);
        (at, None)
    }

    /// The value of `key`, inserted by `make` if the key is absent.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> Value) -> &mut Value {
        let i = match self.get_index_of(&key) {
            Some(i) => i,
            None => {
                self.push_distinct(key, make());
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }

    /// Removes `key`, keeping the order of the other entries (O(n)).
    pub fn shift_remove<Q>(&mut self, key: &Q) -> Option<Value>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.shift_remove_entry(key).map(|(_, v)| v)
    }

    pub fn shift_remove_entry<Q>(&mut self, key: &Q) -> Option<(K, Value)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.get_index_of(key)?;
        self.index = OnceLock::new();
        Some(self.entries.remove(i))
    }

    /// Removes `key` by moving the last entry into its place (O(1), changes order).
    pub fn swap_remove<Q>(&mut self, key: &Q) -> Option<Value>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.get_index_of(key)?;
        self.index = OnceLock::new();
        Some(self.entries.swap_remove(i).1)
    }
}

impl<K> Default for OrderedMap<K> {
    fn default() -> Self {
        OrderedMap::new()
    }
}

impl<K: Clone> Clone for OrderedMap<K> {
    fn clone(&self) -> Self {
        OrderedMap { entries: self.entries.clone(), index: OnceLock::new() }
    }
}

impl<K: Hash + Eq> PartialEq for OrderedMap<K> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<K: fmt::Debug> fmt::Debug for OrderedMap<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Later pairs with a key seen before replace its value, in the first one's position.
impl<K: Hash + Eq> FromIterator<(K, Value)> for OrderedMap<K> {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(pairs: I) -> Self {
        let pairs = pairs.into_iter();
        let mut map = OrderedMap::with_capacity(pairs.size_hint().0);
        map.extend(pairs);
        map
    }
}

impl<K: Hash + Eq> Extend<(K, Value)> for OrderedMap<K> {
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, pairs: I) {
        for (k, v) in pairs {
            self.insert(k, v);
        }
    }
}

impl<K: Hash + Eq, const N: usize> From<[(K, Value); N]> for OrderedMap<K> {
    fn from(pairs: [(K, Value); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<K, Q> std::ops::Index<&Q> for OrderedMap<K>
where
    K: Borrow<Q> + Hash + Eq,
    Q: Hash + Eq + ?Sized,
{
    type Output = Value;

    /// Panics when the key is absent, as `HashMap`'s index does.
    fn index(&self, key: &Q) -> &Value {
        self.get(key).expect("OrderedMap: key not found")
    }
}

/// Iterator over `(&key, &value)` in order.
#[derive(Clone)]
pub struct Iter<'a, K>(std::slice::Iter<'a, (K, Value)>);

impl<'a, K> Iterator for Iter<'a, K> {
    type Item = (&'a K, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K> DoubleEndedIterator for Iter<'_, K> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl<K> ExactSizeIterator for Iter<'_, K> {}

/// Iterator over `(&key, &mut value)` in order.
pub struct IterMut<'a, K>(std::slice::IterMut<'a, (K, Value)>);

impl<'a, K> Iterator for IterMut<'a, K> {
    type Item = (&'a K, &'a mut Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&*k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K> DoubleEndedIterator for IterMut<'_, K> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&*k, v))
    }
}

impl<K> ExactSizeIterator for IterMut<'_, K> {}

/// Iterator over `(key, value)` in order, taking the map.
pub struct IntoIter<K>(std::vec::IntoIter<(K, Value)>);

impl<K> Iterator for IntoIter<K> {
    type Item = (K, Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K> DoubleEndedIterator for IntoIter<K> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back()
    }
}

impl<K> ExactSizeIterator for IntoIter<K> {}

impl<'a, K> IntoIterator for &'a OrderedMap<K> {
    type Item = (&'a K, &'a Value);
    type IntoIter = Iter<'a, K>;
    fn into_iter(self) -> Iter<'a, K> {
        self.iter()
    }
}

impl<'a, K> IntoIterator for &'a mut OrderedMap<K> {
    type Item = (&'a K, &'a mut Value);
    type IntoIter = IterMut<'a, K>;
    fn into_iter(self) -> IterMut<'a, K> {
        self.iter_mut()
    }
}

impl<K> IntoIterator for OrderedMap<K> {
    type Item = (K, Value);
    type IntoIter = IntoIter<K>;
    fn into_iter(self) -> IntoIter<K> {
        IntoIter(self.entries.into_iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: usize) -> String {
        format!("k{i}")
    }

    #[test]
    fn small_and_indexed_maps_agree_on_every_operation() {
        // Sizes on both sides of SCAN_LIMIT, so the scan and the index are both exercised.
        for n in [0, 1, SCAN_LIMIT, SCAN_LIMIT + 1, 40] {
            let mut map = OrderedMap::<String>::new();
            for i in 0..n {
                assert_eq!(map.insert(key(i), Value::Int(i as i64)), None);
            }
            assert_eq!(map.len(), n);
            for i in 0..n {
                assert_eq!(map.get(key(i).as_str()), Some(&Value::Int(i as i64)), "n={n} i={i}");
                assert_eq!(map.get_index_of(key(i).as_str()), Some(i));
            }
            assert_eq!(map.get("absent"), None);
            // Replacing keeps the position and returns the old value.
            if n > 0 {
                assert_eq!(map.insert(key(0), Value::Bool(true)), Some(Value::Int(0)));
                assert_eq!(map.get_index(0).map(|(k, _)| k.as_str()), Some("k0"));
                assert_eq!(map.len(), n);
            }
            // Appending after the index exists keeps it correct.
            map.push_distinct("late".into(), Value::Null);
            assert_eq!(map.get_index_of("late"), Some(n));
            // Removing in the middle keeps the order of the rest and the lookups right.
            if n > 2 {
                assert_eq!(map.shift_remove(key(1).as_str()), Some(Value::Int(1)));
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                assert_eq!(keys[..2], ["k0", "k2"]);
                assert_eq!(map.get_index_of(key(2).as_str()), Some(1));
                assert_eq!(map.get(key(1).as_str()), None);
                assert_eq!(map.swap_remove(key(0).as_str()), Some(Value::Bool(true)));
                assert_eq!(map.get_index_of("late"), Some(0));
                assert_eq!(map.get(key(n - 1).as_str()), Some(&Value::Int(n as i64 - 1)));
            }
        }
    }

    #[test]
    fn equality_ignores_order_but_not_values_or_keys() {
        let a: OrderedMap<i64> = (0..20).map(|i| (i, Value::Int(i))).collect();
        let b: OrderedMap<i64> = (0..20).rev().map(|i| (i, Value::Int(i))).collect();
        assert_eq!(a, b);
        let mut c = b.clone();
        *c.get_mut(&7).unwrap() = Value::Null;
        assert_ne!(a, c);
        let d: OrderedMap<i64> = (1..21).map(|i| (i, Value::Int(i))).collect();
        assert_ne!(a, d);
    }

    #[test]
    fn collecting_repeated_keys_keeps_the_first_position_and_the_last_value() {
        let map: OrderedMap<String> = [("a", 1), ("b", 2), ("a", 3)].into_iter().map(|(k, v)| (k.to_owned(), Value::Int(v))).collect();
        let pairs: Vec<(&str, &Value)> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
        assert_eq!(pairs, [("a", &Value::Int(3)), ("b", &Value::Int(2))]);
    }
}

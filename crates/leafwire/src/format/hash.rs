//! Hash tables of the format: the key hash (spec §4.2), the geometry of a container's hash
//! index (§4.1) and of the dictionary's table (§6), the home bucket, and linear probing for
//! readers and writers. Tables are arrays of little-endian entries of 1, 2 or 4 bytes; an
//! entry is 0 for empty, or one more than the child index or key id it names.

use super::numbers::{read_uint, write_uint};

/// The smallest legal hash table: a table of one bucket has no home-bucket bits (spec
/// §§4.1, 6 require T ≥ 2).
pub const MIN_TABLE: usize = 2;

/// The key hash of spec §4.2: eight bytes per step.
#[inline]
pub fn key_hash(key: &[u8]) -> u64 {
    let mut h = (key.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        h = mix(h, u64::from_le_bytes(chunk.try_into().unwrap()));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        h = mix(h, zero_padded_le(rest));
    }
    h
}

/// `rest` (1–7 bytes) zero-padded to eight and read little-endian. Two overlapping loads
/// instead of a copy into a padded buffer, which compiles to a `memcpy` call per key.
#[inline(always)]
fn zero_padded_le(rest: &[u8]) -> u64 {
    let n = rest.len();
    debug_assert!((1..8).contains(&n));
    if n >= 4 {
        let low = u32::from_le_bytes(rest[..4].try_into().unwrap()) as u64;
        let high = u32::from_le_bytes(rest[n - 4..].try_into().unwrap()) as u64;
        low | high << (8 * (n - 4))
    } else if n >= 2 {
        let low = u16::from_le_bytes(rest[..2].try_into().unwrap()) as u64;
        let high = u16::from_le_bytes(rest[n - 2..].try_into().unwrap()) as u64;
        low | high << (8 * (n - 2))
    } else {
        rest[0] as u64
    }
}

#[inline(always)]
fn mix(h: u64, chunk: u64) -> u64 {
    let h = (h ^ chunk).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 31)
}

/// Home bucket of hash `h` in a table of `table` entries, a power of two ≥ [`MIN_TABLE`]
/// (the parsers refuse other sizes; a table of one bucket would shift by 64).
#[inline]
pub fn home_bucket(h: u64, table: usize) -> usize {
    debug_assert!(table.is_power_of_two() && table >= MIN_TABLE);
    let bits = table.trailing_zeros();
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// The table size for `capacity` entries: the smallest power of two ≥ 2·capacity and ≥ 2
/// (spec §§4.1, 6).
#[inline]
pub fn table_size(capacity: usize) -> usize {
    (2 * capacity).max(MIN_TABLE).next_power_of_two()
}

/// Table size of the key dictionary's hash table for `count` keys (spec §6).
pub fn dictionary_table_size(count: usize) -> usize {
    table_size(count)
}

/// Whether `table` is a legal dictionary table size for capacity `capacity` (spec §6):
/// 0 (no table), or a power of two ≥ max(2, 2·capacity) that fits a u32.
#[inline]
pub fn is_dictionary_table_size(table: u64, capacity: u64) -> bool {
    table == 0 || (table.is_power_of_two() && table >= (2 * capacity).max(MIN_TABLE as u64) && table <= u32::MAX as u64)
}

/// Hash index geometry for a container of capacity `c` (spec §4.1): (table size, entry
/// width in bytes).
#[inline]
pub fn index_geometry(capacity: usize) -> (usize, usize) {
    let entry = if capacity < 255 {
        1
    } else if capacity < 65535 {
        2
    } else {
        4
    };
    (table_size(capacity), entry)
}

/// The largest capacity whose hash index has `table` entries of `entry` bytes: a writer
/// that grows a container within that capacity keeps its table as it is (spec §8.2).
pub fn largest_capacity(table: usize, entry: usize) -> usize {
    let most = match entry {
        1 => (table / 2).min(254),
        2 => (table / 2).min(65534),
        _ => table / 2,
    };
    debug_assert!(most == 0 || index_geometry(most) == (table, entry));
    most
}

/// The entries met by linear probing from the home bucket of `hash`, each the child index
/// or key id it names (the entry minus one), up to an empty entry or a full turn. The
/// caller checks each candidate (its key) in its own loop, inlined where it matters.
#[inline(always)]
pub fn probe_sequence(table: &[u8], entry: usize, hash: u64) -> ProbeSequence<'_> {
    // Entries are 1, 2 or 4 bytes: a shift, not a division.
    debug_assert!(entry.is_power_of_two());
    let size = table.len() >> entry.trailing_zeros();
    let bucket = if size == 0 { 0 } else { home_bucket(hash, size) };
    ProbeSequence { table, entry, bucket, mask: size.wrapping_sub(1), left: size }
}

/// See [`probe_sequence`].
pub struct ProbeSequence<'t> {
    table: &'t [u8],
    entry: usize,
    bucket: usize,
    mask: usize,
    left: usize,
}

impl Iterator for ProbeSequence<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        let e = read_uint(self.table, self.entry, self.bucket) as usize;
        if e == 0 {
            self.left = 0;
            return None;
        }
        self.left -= 1;
        self.bucket = (self.bucket + 1) & self.mask;
        Some(e - 1)
    }
}

/// Finds an entry by linear probing from the home bucket of `hash`: the first entry `e`
/// (the child index or key id plus one) for which `matches(e - 1)` holds, `Ok(None)` at an
/// empty entry or after a full turn. `matches` may fail (an entry naming a child that does
/// not exist): its error is returned.
#[inline(always)]
pub fn probe<E>(table: &[u8], entry: usize, hash: u64, mut matches: impl FnMut(usize) -> Result<bool, E>) -> Result<Option<usize>, E> {
    for candidate in probe_sequence(table, entry, hash) {
        if matches(candidate)? {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

/// Writes entry `value + 1` into the first empty bucket from the home bucket of `hash`
/// (the table has an empty bucket: it is at least twice its capacity); returns the
/// entry's position in `table` (an editor records what it changed).
#[inline]
pub fn insert(table: &mut [u8], entry: usize, hash: u64, value: usize) -> usize {
    insert_entry(table, entry, hash, value)
}

/// [`insert`]'s probe, inlined where it is called: with a constant `entry` each step is one
/// load and the write one store.
#[inline(always)]
fn insert_entry(table: &mut [u8], entry: usize, hash: u64, value: usize) -> usize {
    let size = table.len() / entry;
    let mut bucket = home_bucket(hash, size);
    while read_uint(table, entry, bucket) != 0 {
        bucket = (bucket + 1) & (size - 1);
    }
    write_uint(table, bucket * entry, entry, value as u64 + 1);
    bucket * entry
}

/// Fills a zeroed table with entries 1..=n for the n hashes, in order.
pub fn fill(table: &mut [u8], entry: usize, hashes: impl IntoIterator<Item = u64>) {
    // One loop per entry width: a width read at run time made every probe step a dispatch.
    match entry {
        1 => fill_entries::<1>(table, hashes),
        2 => fill_entries::<2>(table, hashes),
        4 => fill_entries::<4>(table, hashes),
        _ => {
            for (i, h) in hashes.into_iter().enumerate() {
                insert(table, entry, h, i);
            }
        }
    }
}

#[inline]
fn fill_entries<const E: usize>(table: &mut [u8], hashes: impl IntoIterator<Item = u64>) {
    for (i, h) in hashes.into_iter().enumerate() {
        insert_entry(table, E, h, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail of every length reads as its bytes copied into a zeroed eight-byte word.
    #[test]
    fn tails_read_as_zero_padded_words() {
        let bytes: Vec<u8> = (1..=7u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        for n in 1..8 {
            let mut padded = [0u8; 8];
            padded[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(zero_padded_le(&bytes[..n]), u64::from_le_bytes(padded), "{n} bytes");
        }
    }

    /// `fill` at each entry width puts every entry where one `insert` after another would.
    #[test]
    fn fill_agrees_with_insert_at_every_width() {
        for entry in [1, 2, 4, 8] {
            for count in [1usize, 2, 5, 9, 40, 200] {
                let hashes: Vec<u64> = (0..count as u64).map(|i| key_hash(&i.to_le_bytes()) ^ (i % 3)).collect();
                let size = table_size(count) * entry;
                let (mut filled, mut inserted) = (vec![0u8; size], vec![0u8; size]);
                fill(&mut filled, entry, hashes.iter().copied());
                for (i, &h) in hashes.iter().enumerate() {
                    insert(&mut inserted, entry, h, i);
                }
                assert_eq!(filled, inserted, "entry {entry}, count {count}");
            }
        }
    }

    #[test]
    fn tables_have_at_least_two_buckets() {
        assert_eq!(table_size(0), 2);
        assert_eq!(table_size(1), 2);
        assert_eq!(table_size(3), 8);
        assert!(!is_dictionary_table_size(1, 0));
        assert!(is_dictionary_table_size(0, 5));
        assert!(is_dictionary_table_size(2, 1));
        assert!(!is_dictionary_table_size(4, 3));
    }

    #[test]
    fn inserted_entries_are_found() {
        let mut table = vec![0u8; 16];
        fill(&mut table, 1, [7, 7, 9]);
        for (i, h) in [7u64, 7, 9].into_iter().enumerate() {
            assert_eq!(probe::<()>(&table, 1, h, |e| Ok(e == i)), Ok(Some(i)));
        }
        assert_eq!(probe::<()>(&table, 1, 7, |_| Ok(false)), Ok(None));
    }
}

//! Rule §9.9 (a tree: no block reachable twice, no two blocks overlapping), checked in one
//! of two ways.
//!
//! The fast way marks every block's bytes in a bitmap of the document (one bit per byte,
//! an eighth of the document's size): a block that finds one of its bits set is shared or
//! overlaps, in O(1) per block and no sort. That finds *that* the rule is broken, not the
//! error the exact way reports (which block, at which offset), so the validator then runs
//! again the exact way: a set of visited containers, checked before a container is entered,
//! and every block's range, sorted at the end. Valid documents, the common case, pay only
//! for the bitmap.

use rustc_hash::FxHashSet;

use crate::error::{Error, Result};

pub(super) enum Blocks {
    Bitmap { words: Vec<u64> },
    Exact { visited: FxHashSet<u64>, ranges: Vec<(u64, u64)> },
}

/// What the fast way returns when a block is claimed twice; never seen by callers.
pub(super) const CONFLICT: &str = "block claimed twice (rerun exactly)";

impl Blocks {
    pub fn bitmap(len: usize) -> Blocks {
        Blocks::Bitmap { words: vec![0; len.div_ceil(64)] }
    }

    pub fn exact() -> Blocks {
        Blocks::Exact { visited: FxHashSet::default(), ranges: Vec::new() }
    }

    /// Before a container at `pos` is entered: the exact way refuses a second visit here,
    /// which also keeps a cycle from being followed for ever (the fast way claims the
    /// container's bytes in [`Blocks::claim`] right after, to the same effect).
    pub fn enter(&mut self, pos: u64) -> Result<()> {
        if let Blocks::Exact { visited, .. } = self {
            if !visited.insert(pos) {
                return Err(Error::malformed(pos, "block reachable twice (a cycle or a shared subtree)"));
            }
        }
        Ok(())
    }

    /// Records the block `start..end`.
    #[inline(always)]
    pub fn claim(&mut self, start: u64, end: u64) -> Result<()> {
        match self {
            Blocks::Bitmap { words } => {
                if mark(words, start as usize, end as usize) {
                    Ok(())
                } else {
                    Err(conflict(start))
                }
            }
            Blocks::Exact { ranges, .. } => {
                ranges.push((start, end));
                Ok(())
            }
        }
    }

    /// After the walk: the exact way's overlap check.
    pub fn finish(&mut self) -> Result<()> {
        let Blocks::Exact { ranges, .. } = self else { return Ok(()) };
        ranges.sort_unstable();
        for w in ranges.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(Error::malformed(w[1].0, format!("block overlaps the block at {}..{}", w[0].0, w[0].1)));
            }
        }
        Ok(())
    }
}

#[cold]
fn conflict(start: u64) -> Error {
    Error::malformed(start, CONFLICT)
}

/// Sets the bits of `start..end`; false if one was set already (the bits are then left
/// partly set, which no longer matters: the fast way stops at the first conflict).
#[inline(always)]
fn mark(words: &mut [u64], start: usize, end: usize) -> bool {
    if start >= end {
        return true;
    }
    let (first, last) = (start / 64, (end - 1) / 64);
    let head = !0u64 << (start % 64);
    let tail = !0u64 >> (63 - (end - 1) % 64);
    if first == last {
        let m = head & tail;
        let clash = words[first] & m != 0;
        words[first] |= m;
        return !clash;
    }
    let mut clash = words[first] & head != 0;
    words[first] |= head;
    for w in &mut words[first + 1..last] {
        clash |= *w != 0;
        *w = !0;
    }
    clash |= words[last] & tail != 0;
    words[last] |= tail;
    !clash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_ranges_clash_and_adjacent_ones_do_not() {
        let mut words = vec![0u64; 4];
        assert!(mark(&mut words, 3, 70));
        assert!(mark(&mut words, 70, 71));
        assert!(mark(&mut words, 0, 3));
        assert!(!mark(&mut words, 69, 72));
        let mut words = vec![0u64; 4];
        assert!(mark(&mut words, 10, 200));
        assert!(!mark(&mut words, 130, 131));
        assert!(mark(&mut words, 200, 256));
        assert!(!mark(&mut words, 255, 256));
    }
}

//! The data blocks of strings, bytes and bignums while a document is built: in memory, or,
//! for the streaming encoders, spilled to a temporary file once they pass a threshold.
//!
//! Blocks arrive in the order values are parsed, but the data section wants them in the
//! order the breadth-first structure meets them, which is known only once everything is
//! parsed. So they cannot go to the output as they come; spilling keeps them out of
//! memory until then. The file is anonymous (`tempfile::tempfile`: unlinked at once), so
//! nothing is left behind whatever happens to the process. Once sealed it is mapped and
//! read in the writer's order, which for the usual list of records is close to the
//! order of the file; the pages read are given back every `RELEASE_EVERY` bytes so the
//! pass does not leave the whole file resident.

use std::cell::Cell;
use std::fs::File;
use std::io::Write;

use memmap2::Mmap;

use crate::error::Result;
use crate::format::numbers::put_varint;

/// How many bytes are gathered in memory before each write to the spill file.
const SPILL_CHUNK: usize = 4 << 20;

/// How many bytes are read from the mapped spill file between giving its pages back.
const RELEASE_EVERY: u64 = 16 << 20;

#[derive(Default)]
pub(crate) struct Blocks {
    /// The blocks not in the file: all of them unless spilled, else the last few.
    tail: Vec<u8>,
    /// Where blocks go past the threshold; `None` while in memory.
    file: Option<File>,
    /// Bytes in the file (the offset of `tail[0]`).
    in_file: u64,
    /// Spill once the blocks pass this many bytes; `None`: never.
    spill_over: Option<usize>,
    /// The sealed file, mapped for reading.
    map: Option<Mmap>,
    /// Bytes read from `map` since its pages were last given back.
    read_since_release: Cell<u64>,
}

impl Blocks {
    /// Spill to a temporary file once more than `bytes` of blocks are held.
    pub fn spill_over(&mut self, bytes: usize) {
        self.spill_over = Some(bytes);
    }

    /// Whether blocks went to a file.
    pub fn is_spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Bytes held in memory.
    pub fn heap_size(&self) -> usize {
        self.tail.capacity()
    }

    /// An empty in-memory store keeping `old`'s buffer (a spilled one starts afresh).
    pub fn recycle(old: Blocks) -> Blocks {
        if old.is_spilled() {
            return Blocks::default();
        }
        let mut tail = old.tail;
        tail.clear();
        Blocks { tail, ..Blocks::default() }
    }

    /// The total length of the blocks.
    pub fn len(&self) -> u64 {
        self.in_file + self.tail.len() as u64
    }

    /// Appends a data block (spec §5.1: `content`'s length as a varint, then `content`),
    /// returning its offset.
    #[inline(always)]
    pub fn append_block(&mut self, content: &[u8]) -> Result<u64> {
        let at = self.len();
        self.tail.reserve(10 + content.len());
        // A one-byte varint for content under 128 bytes (most strings): a push, not a copy.
        if content.len() < 0x80 {
            self.tail.push(content.len() as u8);
        } else {
            let mut prefix = [0u8; 10];
            let n = put_varint(&mut prefix, content.len() as u64);
            self.tail.extend_from_slice(&prefix[..n]);
        }
        self.tail.extend_from_slice(content);
        self.spill_if_due()?;
        Ok(at)
    }

    /// Appends `bytes`, returning their offset.
    #[cfg(test)]
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let at = self.len();
        self.tail.extend_from_slice(bytes);
        self.spill_if_due()?;
        Ok(at)
    }

    /// Writes the blocks held in memory to the spill file once they are a chunk's worth
    /// (and the store spills).
    #[inline]
    fn spill_if_due(&mut self) -> Result<()> {
        if let Some(limit) = self.spill_over {
            if self.tail.len() >= SPILL_CHUNK && (self.file.is_some() || self.len() > limit as u64) {
                self.spill()?;
            }
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(tempfile::tempfile()?),
        };
        file.write_all(&self.tail)?;
        self.in_file += self.tail.len() as u64;
        self.tail.clear();
        Ok(())
    }

    /// Ends appending: a spilled store writes its last blocks and maps its file.
    pub fn seal(&mut self) -> Result<()> {
        if self.file.is_none() {
            return Ok(());
        }
        self.spill()?;
        self.tail = Vec::new();
        let file = self.file.as_ref().expect("checked above");
        // SAFETY: the file is anonymous (unlinked when created) and only this store writes
        // it, and no more after this point: nothing can change or truncate it while mapped.
        self.map = Some(unsafe { Mmap::map(file) }?);
        Ok(())
    }

    /// All the blocks, one after the other, of a store that did not spill.
    pub fn in_memory(&self) -> &[u8] {
        assert!(self.file.is_none(), "a spilled store is read block by block");
        &self.tail
    }

    /// The `len` bytes at `at` (appended before; sealed first if spilled).
    pub fn get(&self, at: u64, len: usize) -> &[u8] {
        let Some(map) = &self.map else {
            return &self.tail[at as usize..at as usize + len];
        };
        let read = self.read_since_release.get() + len as u64;
        if read >= RELEASE_EVERY {
            // SAFETY: a read-only mapping of a file: dropping its pages only makes the next
            // read fault the same bytes back in from the file.
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
            self.read_since_release.set(0);
        } else {
            self.read_since_release.set(read);
        }
        &map[at as usize..at as usize + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_blocks_read_back_as_written() {
        for spill in [None, Some(0), Some(SPILL_CHUNK * 2)] {
            let mut blocks = Blocks::default();
            if let Some(bytes) = spill {
                blocks.spill_over(bytes);
            }
            let mut written = Vec::new();
            for i in 0..20_000usize {
                let bytes: Vec<u8> = (0..(i % 1000)).map(|j| (i + j) as u8).collect();
                written.push((blocks.append(&bytes).unwrap(), bytes));
            }
            blocks.seal().unwrap();
            assert_eq!(blocks.map.is_some(), spill.is_some(), "spill over {spill:?}");
            for (at, bytes) in written.iter().rev() {
                assert_eq!(blocks.get(*at, bytes.len()), &bytes[..]);
            }
        }
    }
}

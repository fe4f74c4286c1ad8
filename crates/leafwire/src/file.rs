//! Documents in files (memory-mapped) and in aligned owned buffers.

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

use crate::error::{Category, Error, Result};
use crate::read::Document;

/// A Leafwire file mapped into memory. Mappings are page-aligned, so typed arrays can be
/// borrowed as slices, and opening costs O(1) whatever the file's size.
///
/// Mapping is `unsafe`, as `memmap2::Mmap::map` is: Rust assumes the bytes behind a `&[u8]`
/// never change, and the operating system cannot promise that for a file another process
/// may write or truncate (a write changes bytes under a borrowed string; a truncation turns
/// reads past the new end into `SIGBUS`). Bounds checks cannot help: they were made against
/// the length at mapping time. When the file may change, read it with
/// [`AlignedBytes::read_file`] instead (a copy, also 8-aligned). See spec §9.1.
pub struct MappedFile {
    map: Mmap,
}

impl MappedFile {
    /// Maps the file at `path` read-only.
    ///
    /// # Safety
    ///
    /// While the `MappedFile` (or anything borrowed from it) lives, no process may modify
    /// or truncate the file: files this process or its users treat as immutable (written
    /// once and renamed into place, as `leafwire` commits and compactions do for new
    /// versions) satisfy this; a file another program edits in place does not.
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<MappedFile> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| io_error(path, e))?;
        // SAFETY: the caller promises the file is not modified or truncated while mapped.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| io_error(path, e))?;
        if !needs_journal(&map) {
            return Ok(MappedFile { map });
        }
        // A commit a crash interrupted: its journal is applied to a private copy-on-write
        // mapping, which copies only the pages it changes (spec §8.5).
        // SAFETY: as above.
        let mut private = unsafe { memmap2::MmapOptions::new().map_copy(&file) }.map_err(|e| io_error(path, e))?;
        crate::format::journal::finish(&mut private)?;
        Ok(MappedFile { map: private.make_read_only().map_err(|e| io_error(path, e))? })
    }

    /// Opens the document (checks the header; O(1)).
    pub fn document(&self) -> Result<Document<'_>> {
        Document::open(&self.map)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }

    /// Gives back this process's copy of the pages of `range` (clamped to the file): they
    /// stay in the page cache, leave the resident set, and a later read maps them again
    /// with the same bytes. For one pass over a file bigger than the memory it should
    /// cost (a JSON input behind the parser, a document after validation): mapped pages
    /// read once otherwise stay resident until the mapping ends. A hint: does nothing
    /// where the system has no such call, or on failure.
    pub fn release(&self, range: std::ops::Range<usize>) {
        let end = range.end.min(self.map.len());
        if range.start >= end {
            return;
        }
        #[cfg(unix)]
        // SAFETY: `Mmap` is a read-only mapping of a file, so MADV_DONTNEED drops nothing
        // but clean copies of file pages: the next read faults the file's bytes back in.
        // (Its danger, zero-filled or reverted pages, is for anonymous or written private
        // mappings, which this is not.)
        let _ = unsafe { self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, range.start, end - range.start) };
    }
}

/// An owned byte buffer whose start is 8-aligned, so typed arrays in a document held in
/// it can always be borrowed as slices (a `Vec<u8>` gives no such promise).
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
    /// Reads the whole file at `path` into an 8-aligned buffer: the safe alternative to
    /// [`MappedFile::open`] for files that may change while they are read.
    pub fn read_file(path: impl AsRef<Path>) -> Result<AlignedBytes> {
        use std::io::Read;
        let path = path.as_ref();
        let mut file = File::open(path).map_err(|e| io_error(path, e))?;
        let len = file.metadata().map_err(|e| io_error(path, e))?.len();
        let len = usize::try_from(len).map_err(|_| Error::new(Category::LimitExceeded, format!("{}: file too large for memory", path.display())))?;
        let mut words = vec![0u64; len.div_ceil(8)];
        let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..len];
        file.read_exact(bytes).map_err(|e| io_error(path, e))?;
        crate::format::journal::finish(bytes)?;
        Ok(AlignedBytes { words, len })
    }

    pub fn new(bytes: &[u8]) -> AlignedBytes {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        AlignedBytes { words, len: bytes.len() }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.len]
    }

    pub fn document(&self) -> Result<Document<'_>> {
        Document::open(self.as_bytes())
    }
}

impl std::ops::Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Whether the active root record names the journal of an interrupted commit (errors are
/// left to the reader, which reports them with their context).
fn needs_journal(bytes: &[u8]) -> bool {
    crate::format::header::active_record(bytes).is_ok_and(|(record, _)| record.journal)
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::new(Category::Io, format!("{}: {e}", path.display()))
}

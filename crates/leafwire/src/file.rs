//! Documents in files (memory-mapped) and in aligned owned buffers.

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

use crate::error::{Category, Error, Result};
use crate::read::Document;

/// A Leafwire file mapped into memory. Mappings are page-aligned, so typed arrays can be
/// borrowed as slices. The file must not be modified by others while it is mapped.
pub struct MappedFile {
    map: Mmap,
}

impl MappedFile {
    pub fn open(path: impl AsRef<Path>) -> Result<MappedFile> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::new(Category::Io, format!("{}: {e}", path.display())))?;
        // SAFETY: the mapping is read-only; the documented contract is that the file is
        // not truncated or rewritten by another process while mapped (as for every mmap
        // reader). Every read through `Document` is bounds-checked against the length
        // seen at mapping time.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::new(Category::Io, format!("{}: {e}", path.display())))?;
        Ok(MappedFile { map })
    }

    /// Opens the document (checks the header; O(1)).
    pub fn document(&self) -> Result<Document<'_>> {
        Document::open(&self.map)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }
}

/// An owned byte buffer whose start is 8-aligned, so typed arrays in a document held in
/// it can always be borrowed as slices (a `Vec<u8>` gives no such promise).
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
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

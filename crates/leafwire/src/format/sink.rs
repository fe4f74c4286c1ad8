//! What the format's writers append to: a `Vec<u8>`, or the editor's buffer over a
//! mapped file (which is not a `Vec`, so that opening a file for editing does not read it).

use std::ops::DerefMut;

/// A growable byte buffer. Positions are absolute: block offsets are positions in it.
pub trait ByteSink: DerefMut<Target = [u8]> {
    fn extend_from_slice(&mut self, bytes: &[u8]);
    /// Grows (with `value`) or shrinks to `len` bytes.
    fn resize(&mut self, len: usize, value: u8);

    fn push(&mut self, byte: u8) {
        self.extend_from_slice(&[byte]);
    }

    fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.resize(len, 0);
        }
    }
}

impl ByteSink for Vec<u8> {
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }

    #[inline]
    fn resize(&mut self, len: usize, value: u8) {
        Vec::resize(self, len, value);
    }

    #[inline]
    fn push(&mut self, byte: u8) {
        Vec::push(self, byte);
    }

    #[inline]
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
}

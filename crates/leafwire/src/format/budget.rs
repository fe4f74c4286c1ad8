//! The work budget of whole-value readers (decode, JSON, serde, the Python decoders).
//!
//! Each value visited costs 1, a data block its length, and a typed array its bytes plus
//! its rows (charged once, at the whole array). In a tree this sums to less than twice the
//! document length (every child has its own tag byte, blocks do not overlap, rows never
//! outnumber elements), so a reader given [`Budget::for_document`] never runs out on a
//! valid document. A crafted document that shares subtrees (a DAG, describing
//! exponentially many values) runs out instead of running for ever.

use std::cell::Cell;

use super::typed::TypedHeader;
use crate::error::{Error, Result};

pub struct Budget(Cell<u64>);

impl Budget {
    /// The allowance for a document of `len` bytes.
    pub fn for_document(len: usize) -> Budget {
        Budget(Cell::new(2 * len as u64 + 4096))
    }

    /// Spends `cost`, or fails (with `offset`, the block being visited) when the allowance
    /// is used up.
    #[inline]
    pub fn charge(&self, cost: u64, offset: u64) -> Result<()> {
        match self.0.get().checked_sub(cost) {
            Some(left) => {
                self.0.set(left);
                Ok(())
            }
            None => Err(exhausted(offset)),
        }
    }

    /// The content of the data block at `payload` (spec §5.1), its cost spent: how every
    /// whole-document walker reads a string, bytes or bignum.
    #[inline]
    pub fn block<'a>(&self, buf: &'a [u8], payload: u64) -> Result<&'a [u8]> {
        let bytes = super::data::block(buf, payload)?;
        self.charge(Self::block_cost(bytes.len()), payload)?;
        Ok(bytes)
    }

    /// A string block's text, checked for UTF-8, its cost spent. Short ASCII texts (most
    /// strings of leafy data) are settled inline; the rest out of line.
    ///
    /// Validating the data section once for a whole decode instead (a bitmap of 64-byte
    /// chunks holding invalid bytes; a string inside a clean span needs only its two ends
    /// checked for character boundaries) was measured and dropped: `decode_borrowed` of
    /// random.json (short Cyrillic names) went from 4.28 M to 4.19 M instructions, and
    /// twitter.json from 1.93 M to 2.15 M, update-center from 3.28 M to 3.37 M: the pass
    /// validates the bytes of every short ASCII string that the inline path settles anyway,
    /// and each block of 128 bytes or more has a two-byte length, which reads as an invalid
    /// sequence and sends the strings sharing its chunk back to the check one at a time.
    #[inline(always)]
    pub fn string<'a>(&self, buf: &'a [u8], payload: u64) -> Result<&'a str> {
        match super::data::short_ascii(buf, payload) {
            Some(text) => {
                self.charge(Self::block_cost(text.len()), payload)?;
                Ok(text)
            }
            None => self.any_string(buf, payload),
        }
    }

    #[inline(never)]
    fn any_string<'a>(&self, buf: &'a [u8], payload: u64) -> Result<&'a str> {
        super::data::text(self.block(buf, payload)?, payload)
    }

    /// Cost of visiting a container of `count` children: one for it and one per child, so
    /// that a wide child shared by many slots costs as much as the values it describes.
    #[inline]
    pub fn container_cost(count: usize) -> u64 {
        1 + count as u64
    }

    /// Cost of a string, bytes or bignum block of `len` content bytes.
    #[inline]
    pub fn block_cost(len: usize) -> u64 {
        (len as u64).max(1)
    }

    /// Cost of a whole typed array of `shape` and `bytes` data bytes: its bytes, plus one
    /// per row of every axis but the last (the lists a reader may build), plus one.
    pub fn typed_cost(shape: &[u64], bytes: usize) -> u64 {
        let (mut rows, mut product) = (0u64, 1u64);
        for &d in &shape[..shape.len().saturating_sub(1)] {
            product = product.saturating_mul(d);
            rows = rows.saturating_add(product);
        }
        (bytes as u64).saturating_add(rows).saturating_add(1)
    }

    /// [`Budget::typed_cost`] of a parsed header.
    pub fn typed_header_cost(h: &TypedHeader) -> u64 {
        Self::typed_cost(&h.shape, h.count * h.element.size())
    }
}

/// The error of an exhausted budget.
#[cold]
pub fn exhausted(offset: u64) -> Error {
    Error::malformed(offset, "the document describes more values than it has bytes (a shared subtree or cycle)")
}

//! Typed array blocks (spec §5.2): element type, rank, shape, spare rows, aligned data and
//! the optional integer mask.

use smallvec::SmallVec;

use super::numbers::{checked_align, put_varint, read_small_varint, read_varint, varint_len};
use super::{rank as bits, ElementType, HEADER_LEN, MAX_RANK};
use crate::error::{Error, Result};

/// A typed block's dimensions. Most arrays have one or two; GeoJSON's multi-polygons
/// have four (polygon, ring, point, coordinate), and a lookup into one of those spent a
/// fifth of its instructions allocating and freeing a spilled shape.
pub type Dims = SmallVec<[u64; 4]>;

/// A parsed typed array header. `parse` proves data and mask lie inside the buffer, that
/// every partial product of the shape is at most the buffer's length, and that every
/// stride fits (spec §5.2): no product of dimensions overflows.
#[derive(Debug, Clone)]
pub struct TypedHeader {
    pub pos: usize,
    pub element: ElementType,
    pub rank: usize,
    /// The dimensions (`rank` of them), kept inline up to rank 4.
    pub shape: Dims,
    /// Element count (product of the shape).
    pub count: usize,
    /// Extra rows reserved after the data (rank bit 7), 0 without a capacity field.
    pub spare_rows: usize,
    pub data_pos: usize,
    pub mask_pos: Option<usize>,
}

/// The common typed block, read inline: one dimension below 2^14 (a one- or two-byte
/// varint), no capacity, no mask; its (element type, data position, element count).
/// `None` for anything else, which `TypedHeader::parse` reads in full. Every check of the
/// general path holds trivially or is made here: the one dimension is the element count,
/// and d × size ≤ the bytes left.
#[inline(always)]
pub fn rank1(buf: &[u8], offset: u64) -> Option<(ElementType, usize, usize)> {
    let code = *buf.get(usize::try_from(offset).ok()?)?;
    let element = ElementType::from_code(code)?;
    rank1_of(buf, offset, element).map(|(data_pos, d)| (element, data_pos, d))
}

/// [`rank1`] for a block that must hold `element` (`None` for any other): the data
/// position and element count. With `element` known at compile time (a slice of `T`), the
/// element code is one compare and the size a constant.
#[inline(always)]
pub fn rank1_of(buf: &[u8], offset: u64, element: ElementType) -> Option<(usize, usize)> {
    if offset < HEADER_LEN as u64 || offset >= (buf.len() as u64).saturating_sub(3) {
        return None;
    }
    let pos = offset as usize;
    if buf[pos] != element as u8 || buf[pos + 1] != 1 {
        return None;
    }
    let (d, q) = short_dimension(buf[pos + 2], buf[pos + 3], pos + 2)?;
    inline_data(buf, q, element, d, 0)
}

/// The common two-dimensional block (rows of a few numbers: points, vectors, colours),
/// read inline as [`rank1`] reads a one-dimensional one.
#[derive(Debug, Clone, Copy)]
pub struct Rank2 {
    pub element: ElementType,
    pub data_pos: usize,
    pub rows: usize,
    pub columns: usize,
    /// Where the integer mask lies, for an f64 block that has one (JSON arrays mixing
    /// integers and floats: spec §5.2).
    pub mask_pos: Option<usize>,
}

/// [`Rank2`] of the block at `offset`: rank 2 without a capacity field, both dimensions
/// non-zero and below 2^14; `None` for anything else, which `TypedHeader::parse` reads in
/// full. The general path's checks hold: the partial products are at most the element
/// count, which fits the bytes left with the mask.
#[inline(always)]
pub fn rank2(buf: &[u8], offset: u64) -> Option<Rank2> {
    if offset < HEADER_LEN as u64 || offset >= (buf.len() as u64).saturating_sub(5) {
        return None;
    }
    let pos = offset as usize;
    let element = ElementType::from_code(buf[pos])?;
    let masked = match buf[pos + 1] {
        2 => false,
        byte if byte == 2 | bits::HAS_MASK && element == ElementType::F64 => true,
        _ => return None,
    };
    let (rows, q) = short_dimension(buf[pos + 2], buf[pos + 3], pos + 2)?;
    let (columns, q) = short_dimension(*buf.get(q)?, *buf.get(q + 1).unwrap_or(&0x80), q)?;
    if rows == 0 || columns == 0 {
        return None;
    }
    let count = rows * columns;
    let mask_len = if masked { count.div_ceil(8) } else { 0 };
    let (data_pos, _) = inline_data(buf, q, element, count, mask_len)?;
    let mask_pos = masked.then(|| data_pos + count * element.size());
    Some(Rank2 { element, data_pos, rows, columns, mask_pos })
}

/// A dimension of one or two varint bytes (`a`, `b`) at `at`, and the position after it.
#[inline(always)]
fn short_dimension(a: u8, b: u8, at: usize) -> Option<(usize, usize)> {
    match (a, b) {
        (a, _) if a < 0x80 => Some((a as usize, at + 1)),
        (a, b) if b < 0x80 => Some(((a & 0x7F) as usize | (b as usize) << 7, at + 2)),
        _ => None,
    }
}

/// The aligned data position after a header ending at `q`, and `count` (below 2^28), when
/// `count` elements and `mask_len` bytes of mask fit the bytes left.
#[inline(always)]
fn inline_data(buf: &[u8], q: usize, element: ElementType, count: usize, mask_len: usize) -> Option<(usize, usize)> {
    let size = element.size();
    let data_pos = (q + size - 1) & !(size - 1);
    (data_pos <= buf.len() && count * size + mask_len <= buf.len() - data_pos).then_some((data_pos, count))
}

impl TypedHeader {
    pub fn parse(buf: &[u8], offset: u64) -> Result<TypedHeader> {
        if let Some((element, data_pos, d)) = rank1(buf, offset) {
            let mut shape = SmallVec::new();
            shape.push(d as u64);
            let pos = offset as usize;
            return Ok(TypedHeader { pos, element, rank: 1, shape, count: d, spare_rows: 0, data_pos, mask_pos: None });
        }
        if let Some(Rank2 { element, data_pos, rows, columns, mask_pos }) = rank2(buf, offset) {
            let shape = SmallVec::from_slice(&[rows as u64, columns as u64]);
            let (pos, count) = (offset as usize, rows * columns);
            return Ok(TypedHeader { pos, element, rank: 2, shape, count, spare_rows: 0, data_pos, mask_pos });
        }
        Self::parse_general(buf, offset)
    }

    #[inline(never)]
    fn parse_general(buf: &[u8], offset: u64) -> Result<TypedHeader> {
        let malformed = |what: String| Error::malformed(offset, format!("typed array: {what}"));
        let pos = usize::try_from(offset)
            .ok()
            .filter(|&p| p >= HEADER_LEN && p < buf.len().saturating_sub(1))
            .ok_or_else(|| malformed(format!("offset {offset} outside the document")))?;
        let element =
            ElementType::from_code(buf[pos]).ok_or_else(|| malformed(format!("unknown element type {}", buf[pos])))?;
        let rank_byte = buf[pos + 1];
        let rank = (rank_byte & bits::DIMS_MASK) as usize;
        if rank == 0 || rank > MAX_RANK {
            return Err(malformed(format!("rank {rank} outside 1..=32")));
        }
        let has_mask = rank_byte & bits::HAS_MASK != 0;
        if has_mask && (element != ElementType::F64 || rank_byte & bits::HAS_CAPACITY != 0) {
            return Err(malformed("an integer mask needs element type f64 and no capacity".into()));
        }
        let mut shape = Dims::new();
        let mut q = pos + 2;
        let (mut rows, mut nonzero) = (1u64, 1u64);
        for _ in 0..rank {
            let d;
            // Most dimensions are one varint byte (a point's 2, a ring's 1), read inline.
            (d, q) = read_small_varint(buf, q)?;
            // Every partial product bounds the rows a reader may walk, even when a later
            // dimension is zero; the product of the non-zero dimensions bounds every stride.
            rows = rows.saturating_mul(d);
            nonzero = nonzero.saturating_mul(d.max(1));
            if rows > buf.len() as u64 {
                return Err(malformed(format!("shape has more rows than the document has bytes (dimension {d})")));
            }
            shape.push(d);
        }
        if !strides_fit(nonzero, element) {
            return Err(malformed(
                "the non-zero dimensions describe more than 2^63 bytes: strides would overflow".into(),
            ));
        }
        let count: u64 = if shape.contains(&0) { 0 } else { nonzero };
        let mut spare_rows = 0;
        if rank_byte & bits::HAS_CAPACITY != 0 {
            (spare_rows, q) = read_varint(buf, q)?;
        }
        let size = element.size() as u64;
        // The data starts inside the buffer even when it is empty: readers slice from it.
        let data_pos = checked_align(q, element.size())
            .filter(|&d| d <= buf.len())
            .ok_or_else(|| malformed("truncated".into()))?;
        let available = (buf.len() - data_pos.min(buf.len())) as u64;
        let row = count.checked_div(shape[0]).unwrap_or(0);
        let reserved = spare_rows.checked_mul(row).and_then(|r| r.checked_add(count));
        let data_len = reserved.and_then(|n| n.checked_mul(size));
        let mask_len = if has_mask { count.div_ceil(8) } else { 0 };
        let Some(data_len) = data_len.filter(|l| l.checked_add(mask_len).is_some_and(|total| total <= available))
        else {
            return Err(malformed(format!("{count} elements of {} do not fit in the document", element.name())));
        };
        // Every length below is at most the buffer's length: the conversions are exact.
        let mask_pos = has_mask.then(|| data_pos + data_len as usize);
        Ok(TypedHeader {
            pos,
            element,
            rank,
            shape,
            count: count as usize,
            spare_rows: spare_rows as usize,
            data_pos,
            mask_pos,
        })
    }

    /// Element count of one row at `level` (the product of the dimensions after it).
    pub fn stride(&self, level: usize) -> usize {
        self.shape[level + 1..self.rank].iter().product::<u64>() as usize
    }

    /// Byte just past the block: data, spare rows and mask.
    pub fn end(&self) -> usize {
        if let Some(mask) = self.mask_pos {
            return mask + self.count.div_ceil(8);
        }
        let row = if self.shape[0] == 0 { 0 } else { self.count / self.shape[0] as usize };
        self.data_pos + (self.count + self.spare_rows * row) * self.element.size()
    }
}

/// Whether every stride of a shape whose non-zero dimensions multiply to `nonzero` (a
/// saturated product) fits a signed 64-bit integer in bytes, numpy's `intp` (spec §5.2).
pub fn strides_fit(nonzero: u64, element: ElementType) -> bool {
    nonzero.checked_mul(element.size() as u64).is_some_and(|bytes| bytes < 1 << 63)
}

/// Length of the header of a typed block of this shape (element, rank, shape varints), before
/// the padding that aligns the data.
pub fn header_len(shape: impl IntoIterator<Item = u64>) -> usize {
    2 + shape.into_iter().map(varint_len).sum::<usize>()
}

/// Writes a typed block header (no capacity) at `out[pos..]`; returns the position of the
/// data, aligned to the element size (the padding is left as it is: zero in a zeroed buffer).
#[inline]
pub fn write_header(out: &mut [u8], pos: usize, element: ElementType, shape: &[u64], masked: bool) -> usize {
    out[pos] = element as u8;
    out[pos + 1] = shape.len() as u8 | if masked { bits::HAS_MASK } else { 0 };
    let mut q = pos + 2;
    for &d in shape {
        q += put_varint(&mut out[q..], d);
    }
    super::align(q, element.size())
}

/// Packs an integer mask (one bool per element) into bytes, least significant bit first.
pub fn pack_mask(mask: impl IntoIterator<Item = bool>, out: &mut (impl super::sink::ByteSink + ?Sized)) {
    let mut byte = 0u8;
    let mut n = 0;
    for m in mask {
        byte |= (m as u8) << (n % 8);
        n += 1;
        if n % 8 == 0 {
            out.push(byte);
            byte = 0;
        }
    }
    if n % 8 != 0 {
        out.push(byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(shape: &[u64]) -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + 64];
        let at = write_header(&mut buf, HEADER_LEN, ElementType::F64, shape, false);
        buf.truncate(at.max(HEADER_LEN + 2));
        buf
    }

    #[test]
    fn a_zero_dimension_does_not_hide_huge_ones() {
        assert!(TypedHeader::parse(&block(&[0, 1 << 33, 1 << 33]), HEADER_LEN as u64).is_err());
        let h = TypedHeader::parse(&block(&[0, 5, 6, 6]), HEADER_LEN as u64).unwrap();
        assert_eq!((h.count, h.stride(0)), (0, 180));
    }

    #[test]
    fn offsets_near_the_end_of_u64_are_refused() {
        let buf = block(&[0]);
        for offset in [u64::MAX, u64::MAX - 1, buf.len() as u64 - 1] {
            assert!(TypedHeader::parse(&buf, offset).is_err(), "{offset}");
        }
    }
}

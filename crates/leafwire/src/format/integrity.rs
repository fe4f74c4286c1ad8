//! Page checksums (spec §2.3): with feature flag 1, a CRC-32 per 4 KiB page of the
//! document, so that a flipped bit anywhere in [112, end) is found by `validate`, and an
//! edit updates only the entries of the pages it changed.
//!
//! The table is an ordinary block, found through a 16-byte locator that always ends the
//! document: the locator moves with `end` (which the root record switches atomically), the
//! table stays where it is while it has room, and its entries are rewritten in place. The
//! table's own bytes and the locator are left out of the pages they sit in (they change
//! whenever a checksum does), so nothing is circular.

use super::header::active_record;
use super::{align, HEADER_LEN, RECORD_LEN};
use crate::error::{Error, Result};

/// The feature flag (header bytes 10..12) of documents with page checksums.
pub const FLAG: u16 = 1 << 1;
pub const PAGE_SHIFT: u32 = 12;
pub const PAGE: usize = 1 << PAGE_SHIFT;
pub const LOCATOR_LEN: usize = 16;
const LOCATOR_MAGIC: &[u8; 4] = b"LWCK";
/// page shift, page count, capacity, reserved: four u32.
pub const TABLE_HEADER: usize = 16;

/// Whether a document's header sets the flag.
pub fn is_on(buf: &[u8]) -> bool {
    buf.len() >= 12 && u16::from_le_bytes([buf[10], buf[11]]) & FLAG != 0
}

/// The number of pages of a document of `end` bytes.
pub fn pages(end: usize) -> usize {
    end.div_ceil(PAGE)
}

/// The checksum table of a document, as its locator names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub at: usize,
    pub count: usize,
    pub capacity: usize,
}

impl Table {
    /// First byte past the table's entries (its spare capacity included).
    pub fn end(&self) -> usize {
        self.at + TABLE_HEADER + 4 * self.capacity
    }

    pub fn entry_at(&self, page: usize) -> usize {
        self.at + TABLE_HEADER + 4 * page
    }

    pub fn entry(&self, buf: &[u8], page: usize) -> u32 {
        let at = self.entry_at(page);
        u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
    }
}

/// Reads and checks the locator at the end of `buf[..end]` and the table it names.
pub fn parse(buf: &[u8], end: usize) -> Result<Table> {
    let bad = |at: usize, what: &str| Error::malformed(at as u64, format!("page checksums: {what}"));
    let locator_at = end.checked_sub(LOCATOR_LEN).filter(|&l| l >= HEADER_LEN && end <= buf.len()).ok_or_else(|| bad(end, "the document is too short for a locator"))?;
    let locator = &buf[locator_at..end];
    let crc = u32::from_le_bytes(locator[12..16].try_into().unwrap());
    if &locator[8..12] != LOCATOR_MAGIC || crc32fast::hash(&locator[..12]) != crc {
        return Err(bad(locator_at, "the locator that ends the document is damaged"));
    }
    let at = u64::from_le_bytes(locator[..8].try_into().unwrap());
    let at = usize::try_from(at).ok().filter(|&a| a >= HEADER_LEN && a % 8 == 0 && a.checked_add(TABLE_HEADER).is_some_and(|t| t <= locator_at)).ok_or_else(|| bad(locator_at, "the table offset is outside the document or unaligned"))?;
    let field = |i: usize| u32::from_le_bytes(buf[at + 4 * i..at + 4 * i + 4].try_into().unwrap()) as usize;
    let (shift, count, capacity) = (field(0), field(1), field(2));
    if shift != PAGE_SHIFT as usize || field(3) != 0 {
        return Err(bad(at, "unknown page size or reserved field set"));
    }
    let table = Table { at, count, capacity };
    if count != pages(end) || count > capacity || capacity > (locator_at - at - TABLE_HEADER) / 4 {
        return Err(bad(at, &format!("{count} entries (capacity {capacity}) for a document of {} pages", pages(end))));
    }
    Ok(table)
}

/// The checksum of page `page` of `buf[..end]`: CRC-32 of its bytes in [112, end), the
/// table block and the locator left out.
pub fn page_crc(buf: &[u8], table: &Table, end: usize, page: usize) -> u32 {
    let start = (page * PAGE).max(HEADER_LEN);
    let stop = ((page + 1) * PAGE).min(end - LOCATOR_LEN);
    let mut h = crc32fast::Hasher::new();
    let (skip_from, skip_to) = (table.at, table.end());
    if start < stop {
        if skip_to <= start || skip_from >= stop {
            h.update(&buf[start..stop]);
        } else {
            h.update(&buf[start..skip_from.max(start)]);
            h.update(&buf[skip_to.min(stop)..stop]);
        }
    }
    h.finalize()
}

/// Checks every page; the first mismatch is reported at the page's first byte.
pub fn verify(buf: &[u8], end: usize) -> Result<Table> {
    let table = parse(buf, end)?;
    for page in 0..table.count {
        if page_crc(buf, &table, end, page) != table.entry(buf, page) {
            let start = (page * PAGE).max(HEADER_LEN);
            return Err(Error::malformed(start as u64, format!("page checksum mismatch: bytes {start}..{} changed since they were written", ((page + 1) * PAGE).min(end))));
        }
    }
    Ok(table)
}

/// Writes the entries of `pages` (sorted or not) from the bytes as they are.
pub fn update(buf: &mut [u8], table: &Table, end: usize, pages: impl IntoIterator<Item = usize>) {
    for page in pages {
        let crc = page_crc(buf, table, end, page);
        let at = table.entry_at(page);
        buf[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Appends an empty table of `capacity` entries at the next 8-aligned position of `out`
/// (the padding and the entries zero); returns where.
pub fn append_table(out: &mut (impl super::sink::ByteSink + ?Sized), capacity: usize) -> usize {
    let at = align(out.len(), 8);
    out.resize(at + TABLE_HEADER + 4 * capacity, 0);
    out[at..at + 4].copy_from_slice(&PAGE_SHIFT.to_le_bytes());
    out[at + 8..at + 12].copy_from_slice(&(capacity as u32).to_le_bytes());
    at
}

/// Sets the table's page count (the entries are written by [`update`]).
pub fn set_count(buf: &mut [u8], table: &mut Table, count: usize) {
    table.count = count;
    buf[table.at + 4..table.at + 8].copy_from_slice(&(count as u32).to_le_bytes());
}

/// Appends the locator of the table at `table_at`; the document then ends after it.
pub fn append_locator(out: &mut (impl super::sink::ByteSink + ?Sized), table_at: usize) {
    let mut locator = [0u8; LOCATOR_LEN];
    locator[..8].copy_from_slice(&(table_at as u64).to_le_bytes());
    locator[8..12].copy_from_slice(LOCATOR_MAGIC);
    let crc = crc32fast::hash(&locator[..12]);
    locator[12..].copy_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&locator);
}

/// The capacity a table needs when the document, table and locator included, ends at
/// most `end_without_table + table + locator`: solved by iteration (the table's size
/// changes the page count by at most one page per 1024 entries).
pub fn capacity_for(start: usize, slack: usize) -> usize {
    let mut capacity = pages(start + TABLE_HEADER + LOCATOR_LEN + 8) + slack;
    loop {
        let end = align(start, 8) + TABLE_HEADER + 4 * capacity + LOCATOR_LEN;
        if pages(end) <= capacity {
            return capacity;
        }
        capacity = pages(end) + slack;
    }
}

/// Adds page checksums to a document without them (a file writer's last step): sets the
/// flag, appends the table and the locator, and points the active record's `end` past
/// them. A document that has them already is left as it is.
pub fn seal(doc: &mut Vec<u8>) -> Result<()> {
    let (mut record, record_at) = active_record(doc)?;
    if is_on(doc) {
        return Ok(());
    }
    if record.journal {
        return Err(Error::new(crate::error::Category::Unsupported, "cannot add checksums to a document with an unfinished commit").at(record_at as u64));
    }
    doc.truncate(record.end as usize);
    let capacity = capacity_for(doc.len(), 0);
    let at = append_table(doc, capacity);
    append_locator(doc, at);
    let end = doc.len();
    let mut table = Table { at, count: 0, capacity };
    set_count(doc, &mut table, pages(end));
    let flags = u16::from_le_bytes([doc[10], doc[11]]) | FLAG;
    doc[10..12].copy_from_slice(&flags.to_le_bytes());
    record.end = end as u64;
    record.write(&mut doc[record_at..record_at + RECORD_LEN]);
    update(doc, &table, end, 0..table.count);
    Ok(())
}

/// Adds page checksums to a canonical document while it is written, so that a streamed
/// document (`from-json`, `compact`, Python's `dump`) gets them without being held in
/// memory: the document's bytes go through it in order, header first, as the canonical
/// writers write them; [`Sealer::finish`] then writes the table and the locator. The
/// result is byte for byte what [`seal`] makes of the same document.
pub struct Sealer<W: std::io::Write> {
    inner: W,
    head: Vec<u8>,
    /// Document offset of the next byte.
    pos: usize,
    /// The canonical document's end, and where the table goes.
    canonical_end: usize,
    capacity: usize,
    page: crc32fast::Hasher,
    crcs: Vec<u32>,
}

impl<W: std::io::Write> Sealer<W> {
    pub fn new(inner: W) -> Sealer<W> {
        Sealer { inner, head: Vec::with_capacity(HEADER_LEN), pos: 0, canonical_end: 0, capacity: 0, page: crc32fast::Hasher::new(), crcs: Vec::new() }
    }

    /// The header, rewritten: the flag set and record A's `end` moved past the table.
    fn rewrite_head(&mut self) -> std::io::Result<()> {
        let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("page checksums: {what}"));
        let (mut record, at) = active_record_of_header(&self.head).ok_or_else(|| bad("the header is not a canonical one"))?;
        self.canonical_end = usize::try_from(record.end).ok().filter(|&e| e < 1 << 60).ok_or_else(|| bad("document too large"))?;
        self.capacity = capacity_for(self.canonical_end, 0);
        let end = align(self.canonical_end, 8) + TABLE_HEADER + 4 * self.capacity + LOCATOR_LEN;
        let flags = u16::from_le_bytes([self.head[10], self.head[11]]) | FLAG;
        self.head[10..12].copy_from_slice(&flags.to_le_bytes());
        record.end = end as u64;
        record.write(&mut self.head[at..at + RECORD_LEN]);
        self.inner.write_all(&self.head)
    }

    /// Hashes document bytes at `self.pos` on, page by page.
    fn hash(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let room = PAGE - self.pos % PAGE;
            let n = room.min(bytes.len());
            self.page.update(&bytes[..n]);
            self.pos += n;
            bytes = &bytes[n..];
            if self.pos % PAGE == 0 {
                self.crcs.push(std::mem::replace(&mut self.page, crc32fast::Hasher::new()).finalize());
            }
        }
    }

    /// Writes the padding, the table and the locator; returns the inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        if self.head.len() < HEADER_LEN || self.pos != self.canonical_end {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "page checksums: the document ended early"));
        }
        let table_at = align(self.canonical_end, 8);
        let padding = [0u8; 8];
        let padding = &padding[..table_at - self.canonical_end];
        self.hash(padding);
        self.inner.write_all(padding)?;
        // The table and the locator are in no page's bytes: the last pages end here.
        let end = table_at + TABLE_HEADER + 4 * self.capacity + LOCATOR_LEN;
        if self.pos % PAGE != 0 {
            self.crcs.push(std::mem::replace(&mut self.page, crc32fast::Hasher::new()).finalize());
        }
        let empty = crc32fast::Hasher::new().finalize();
        self.crcs.resize(pages(end), empty);
        let mut table = Vec::with_capacity(TABLE_HEADER + 4 * self.capacity + LOCATOR_LEN);
        for field in [PAGE_SHIFT, self.crcs.len() as u32, self.capacity as u32, 0] {
            table.extend_from_slice(&field.to_le_bytes());
        }
        for crc in &self.crcs {
            table.extend_from_slice(&crc.to_le_bytes());
        }
        table.resize(TABLE_HEADER + 4 * self.capacity, 0);
        append_locator(&mut table, table_at);
        self.inner.write_all(&table)?;
        Ok(self.inner)
    }
}

impl<W: std::io::Write> std::io::Write for Sealer<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        if self.head.len() < HEADER_LEN {
            let n = (HEADER_LEN - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            self.pos += n;
            if self.head.len() < HEADER_LEN {
                return Ok(());
            }
            self.rewrite_head()?;
        }
        if self.pos + bytes.len() > self.canonical_end {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "page checksums: more bytes than the header's end"));
        }
        self.hash(bytes);
        self.inner.write_all(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Record A of a header on its own (the header only: no `end` check against a buffer),
/// when it is the valid and only record, as canonical writers make it.
fn active_record_of_header(head: &[u8]) -> Option<(super::header::RootRecord, usize)> {
    if head.len() < HEADER_LEN || &head[..8] != super::MAGIC || head[super::RECORD_B..HEADER_LEN].iter().any(|&b| b != 0) {
        return None;
    }
    let record = super::header::RootRecord::parse(&head[super::RECORD_A..super::RECORD_A + RECORD_LEN])?;
    (!record.journal && record.end >= HEADER_LEN as u64).then_some((record, super::RECORD_A))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_documents_verify_and_every_flipped_bit_is_found() {
        let value = crate::Value::Array((0..700).map(|i| crate::Value::String(format!("s{i}"))).collect());
        let mut doc = crate::encode(&value).unwrap();
        seal(&mut doc).unwrap();
        assert!(is_on(&doc));
        crate::validate(&doc).unwrap();
        assert!(crate::decode(&doc).unwrap() == value);
        for byte in HEADER_LEN..doc.len() {
            let mut flipped = doc.clone();
            flipped[byte] ^= 1 << (byte % 8);
            assert!(crate::validate(&flipped).is_err(), "flip at {byte} undetected");
        }
    }

    #[test]
    fn sealing_a_stream_makes_the_bytes_sealing_in_memory_makes() {
        for n in [0usize, 3, 200, 1500, 9000] {
            let value = crate::Value::Array((0..n).map(|i| crate::Value::String(format!("string {i}"))).collect());
            let doc = crate::encode(&value).unwrap();
            let mut sealed = doc.clone();
            seal(&mut sealed).unwrap();
            let mut sealer = Sealer::new(Vec::new());
            for chunk in doc.chunks(777) {
                std::io::Write::write_all(&mut sealer, chunk).unwrap();
            }
            assert_eq!(sealer.finish().unwrap(), sealed, "{n} strings");
        }
    }

    #[test]
    fn capacity_covers_the_table_itself() {
        for start in [112, 4000, 4096, 1 << 20, (1 << 30) + 5] {
            for slack in [0, 7] {
                let c = capacity_for(start, slack);
                let end = align(start, 8) + TABLE_HEADER + 4 * c + LOCATOR_LEN;
                assert!(pages(end) <= c, "{start} {slack}");
            }
        }
    }
}

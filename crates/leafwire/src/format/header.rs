//! The fixed header and its two root records (spec §§2.1–2.2).

use std::cell::Cell;

use super::{tag, HEADER_LEN, KNOWN_FLAGS, MAGIC, MAJOR_VERSION, MINOR_VERSION, RECORD_A, RECORD_B, RECORD_LEN};
use crate::error::{Category, Error, Result};

/// One root record: which value is the document, and its bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootRecord {
    pub generation: u64,
    pub root: u64,
    pub dictionary: u64,
    pub end: u64,
    pub garbage: u64,
    pub root_tag: u8,
    /// An unfinished commit's redo journal follows `end` (spec §8.5): the document is the
    /// bytes with the journal applied.
    pub journal: bool,
}

/// Record flag bits (record byte 41, spec §2.2).
pub const FLAG_JOURNAL: u8 = 1;

impl RootRecord {
    /// Parses a record; `None` when it is unused or its CRC does not match.
    #[inline]
    pub(crate) fn parse(bytes: &[u8]) -> Option<RootRecord> {
        // Six little-endian words: five fields, then tag, flags, two zero bytes and the CRC.
        let words: [u64; RECORD_LEN / 8] = std::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()));
        let record = RootRecord {
            generation: words[0],
            root: words[1],
            dictionary: words[2],
            end: words[3],
            garbage: words[4],
            root_tag: words[5] as u8,
            journal: (words[5] >> 8) as u8 & FLAG_JOURNAL != 0,
        };
        (record.generation != 0 && crc_holds(&words)).then_some(record)
    }

    /// Whether `offset`, held by this record, points past the header and before `end`.
    #[inline]
    fn points_inside(&self, offset: u64) -> bool {
        offset >= HEADER_LEN as u64 && offset < self.end
    }

    /// Writes the record, CRC included, into a 48-byte slice.
    pub fn write(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.generation.to_le_bytes());
        out[8..16].copy_from_slice(&self.root.to_le_bytes());
        out[16..24].copy_from_slice(&self.dictionary.to_le_bytes());
        out[24..32].copy_from_slice(&self.end.to_le_bytes());
        out[32..40].copy_from_slice(&self.garbage.to_le_bytes());
        out[40] = self.root_tag;
        out[41] = if self.journal { FLAG_JOURNAL } else { 0 };
        out[42..44].fill(0);
        let crc = record_crc(&out[..44]);
        out[44..48].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Whether the record's CRC (its last four bytes) is the CRC-32 of its first 44. The last
/// record that passed is remembered per thread, and a record equal to it byte for byte
/// passes without a CRC: equal bytes have equal CRCs. Reopening one document, the
/// everyday case (lookups in a mapped file, a served buffer), then costs a 48-byte
/// comparison instead of a CRC, a fifth of an open.
#[inline]
fn crc_holds(words: &[u64; RECORD_LEN / 8]) -> bool {
    // Compared as words, in registers: a byte-array compare would call memcpy and memcmp.
    let last = LAST_PASSED.with(Cell::get);
    words.iter().zip(&last).fold(0, |diff, (a, b)| diff | (a ^ b)) == 0 || crc_computed_holds(words)
}

thread_local! {
    /// The last record whose CRC held on this thread. All zeros never passed: generation 0
    /// marks an unused record (spec §2.2).
    static LAST_PASSED: Cell<[u64; RECORD_LEN / 8]> = const { Cell::new([0; RECORD_LEN / 8]) };
}

/// The CRC check itself (the last four bytes against the first 44), out of line: an
/// everyday open does not reach it. A record that passes is remembered.
#[cold]
#[inline(never)]
fn crc_computed_holds(words: &[u64; RECORD_LEN / 8]) -> bool {
    let mut bytes = [0u8; RECORD_LEN];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    let holds = record_crc(&bytes[..44]) == (words[5] >> 32) as u32;
    if holds {
        LAST_PASSED.with(|last| last.set(*words));
    }
    holds
}

/// CRC-32 of a record's first 44 bytes. Every open computes one: the hasher's CPU feature
/// detection is done once and its initial state copied, which for 44 bytes halves the cost.
#[inline]
fn record_crc(bytes: &[u8]) -> u32 {
    static HASHER: std::sync::OnceLock<crc32fast::Hasher> = std::sync::OnceLock::new();
    let mut hasher = HASHER.get_or_init(crc32fast::Hasher::new).clone();
    hasher.update(bytes);
    hasher.finalize()
}

/// Checks magic, version and flags, and returns the active root record of a document
/// that can be read as it is: one whose last commit was interrupted (its record names a
/// redo journal, spec §8.5) is refused, since some of its bytes are not written yet.
/// Owned buffers finish such a commit with [`super::journal::finish`].
#[inline(always)]
pub fn read_header(buf: &[u8]) -> Result<RootRecord> {
    let (record, at) = active_record(buf)?;
    if record.journal {
        return Err(unfinished_commit(at));
    }
    Ok(record)
}

#[cold]
fn unfinished_commit(at: usize) -> Error {
    Error::new(Category::Unsupported, "the file's last commit was interrupted and is not finished: open it for editing (or with leafwire.open / MappedFile::open / AlignedBytes::read_file, which finish it in memory) to apply its journal").at(at as u64)
}

/// Checks magic, version and flags, and returns the active root record with its position
/// (`RECORD_A` or `RECORD_B`): errors in a record's fields are reported there.
#[inline(always)]
pub fn active_record(buf: &[u8]) -> Result<(RootRecord, usize)> {
    if buf.len() < HEADER_LEN || &buf[..8] != MAGIC || buf[8] != MAJOR_VERSION || flags(buf) & !KNOWN_FLAGS != 0 {
        return Err(bad_header(buf));
    }
    // The valid record of the higher generation is the active one. The record that claims
    // the higher generation is checked first: when its CRC holds, the other cannot win,
    // so an open computes one CRC, not two (the second only after a torn commit).
    let generation = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
    let (first, second) = match generation(RECORD_B) > generation(RECORD_A) {
        true => (RECORD_B, RECORD_A),
        false => (RECORD_A, RECORD_B),
    };
    let (record, at) = match RootRecord::parse(&buf[first..first + RECORD_LEN]) {
        Some(record) => (record, first),
        None => other_record(buf, second)?,
    };
    // Offsets the record holds must point past the header and before `end`; a bad one is
    // the record's fault, and is reported there.
    let fits = record.end >= HEADER_LEN as u64
        && record.end <= buf.len() as u64
        && buf[at + 41] & !FLAG_JOURNAL == 0
        && buf[at + 42..at + 44] == [0, 0]
        && record.root_tag <= tag::LAST
        && (!tag::is_pointer(record.root_tag) || record.points_inside(record.root))
        && (record.dictionary == 0 || record.points_inside(record.dictionary));
    if !fits {
        return Err(bad_record(buf, &record, at));
    }
    Ok((record, at))
}

/// The record at `at` when the one claiming the higher generation failed (a torn commit):
/// out of line, so an everyday open inlines one record's parse.
#[cold]
fn other_record(buf: &[u8], at: usize) -> Result<(RootRecord, usize)> {
    match RootRecord::parse(&buf[at..at + RECORD_LEN]) {
        Some(record) => Ok((record, at)),
        None => Err(Error::malformed(RECORD_A as u64, "no valid root record (both unused or failing their CRC)")),
    }
}

/// Why the fixed header (magic, version, flags) is refused.
#[cold]
fn bad_header(buf: &[u8]) -> Error {
    if buf.len() < HEADER_LEN {
        if buf.len() >= 8 && &buf[..8] != MAGIC {
            return Error::malformed(0, "not a Leafwire document (bad magic)");
        }
        return Error::malformed(buf.len() as u64, format!("truncated header: {} bytes, need {HEADER_LEN}", buf.len()));
    }
    if &buf[..8] != MAGIC {
        return Error::malformed(0, "not a Leafwire document (bad magic)");
    }
    if buf[8] != MAJOR_VERSION {
        return Error::new(Category::Unsupported, format!("format version {}.{} is not supported (this reader reads 1.x)", buf[8], buf[9])).at(8);
    }
    Error::new(Category::Unsupported, format!("unknown feature flags {:#06x}", flags(buf))).at(10)
}

/// Why the active record at `at`, whose CRC holds, is refused.
#[cold]
fn bad_record(buf: &[u8], record: &RootRecord, at: usize) -> Error {
    if record.end < HEADER_LEN as u64 || record.end > buf.len() as u64 {
        return Error::malformed(at as u64, format!("document end {} outside the buffer of {} bytes", record.end, buf.len()));
    }
    let flags = buf[at + 41];
    if flags & !FLAG_JOURNAL != 0 || buf[at + 42..at + 44] != [0, 0] {
        return Error::new(Category::Unsupported, format!("unknown root record flags {flags:#04x}")).at(at as u64 + 41);
    }
    if record.root_tag > tag::LAST {
        return Error::malformed(at as u64, format!("unknown root tag {:#04x}", record.root_tag));
    }
    if tag::is_pointer(record.root_tag) && !record.points_inside(record.root) {
        return Error::malformed(at as u64, format!("root offset {} outside the document", record.root));
    }
    Error::malformed(at as u64, format!("dictionary offset {} outside the document", record.dictionary))
}

/// The feature flags of a document whose header has been checked.
#[inline]
pub fn flags(doc: &[u8]) -> u16 {
    u16::from_le_bytes([doc[10], doc[11]])
}

/// Sets feature bit(s) `flag` in an encoded document's header (spec §2.1).
pub fn add_feature(doc: &mut [u8], flag: u16) {
    let flags = flags(doc) | flag;
    doc[10..12].copy_from_slice(&flags.to_le_bytes());
}

/// Writes a fresh header into `out[..HEADER_LEN]`: magic, version, no flags, `record` as
/// record A and record B unused (spec §7).
pub fn write_header(out: &mut [u8], record: &RootRecord) {
    out[..HEADER_LEN].fill(0);
    out[..8].copy_from_slice(MAGIC);
    out[8] = MAJOR_VERSION;
    out[9] = MINOR_VERSION;
    record.write(&mut out[RECORD_A..RECORD_A + RECORD_LEN]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The remembered record stands only for itself: after a record passed, the same
    /// record with any one bit changed (in its fields or its CRC) is checked again and
    /// fails, and the original still passes.
    #[test]
    fn a_remembered_record_vouches_for_no_other() {
        let record = RootRecord { generation: 3, root: 64, dictionary: 0, end: 100, garbage: 0, root_tag: tag::ARRAY, journal: false };
        let mut bytes = [0u8; RECORD_LEN];
        record.write(&mut bytes);
        assert_eq!(RootRecord::parse(&bytes), Some(record));
        for bit in 0..RECORD_LEN * 8 {
            let mut changed = bytes;
            changed[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(RootRecord::parse(&changed), None, "bit {bit}");
            assert_eq!(RootRecord::parse(&bytes), Some(record), "bit {bit}");
        }
    }
}

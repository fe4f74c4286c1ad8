//! The redo journal of a file commit (spec §8.5): the in-place changes of one commit,
//! written past the document's `end` before the root record that needs them.
//!
//! A commit that changes bytes the previous version still uses cannot write them before
//! its root record is durable (a crash would leave the old record pointing at half-changed
//! bytes), and cannot write them after it either (a crash would leave the new record
//! pointing at unchanged ones). So it writes them twice: once into this journal, which a
//! record flag names, and then in place. Whoever finds the flag on the active record
//! applies the journal again, which is harmless when it was already applied.

use super::header::active_record;
use super::{align, HEADER_LEN, RECORD_LEN};
use crate::error::{Error, Result};

pub const MAGIC: &[u8; 8] = b"LWJOURNL";
/// magic, generation, body length, entry count, CRC.
pub const HEADER: usize = 32;
/// offset, length, kind, three zero bytes.
pub const ENTRY_HEADER: usize = 16;
/// An entry's length is a u32: longer changes are split.
pub const MAX_ENTRY: usize = u32::MAX as usize & !7;

/// Entry kinds.
const WRITE: u8 = 0;
const ZERO: u8 = 1;

/// Where the journal of a record whose document ends at `end` starts.
pub fn position(end: u64) -> u64 {
    align(end as usize, 8) as u64
}

/// One change: `len` bytes at `at` become `data` (a write) or zeros (`data` is `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub at: usize,
    pub len: usize,
    pub data: Option<&'a [u8]>,
}

/// Appends the journal of `generation` holding `entries` (sorted, disjoint, each at most
/// [`MAX_ENTRY`] bytes) to `out`, which must end at an 8-aligned position.
pub fn write(out: &mut Vec<u8>, generation: u64, entries: &[Entry<'_>]) {
    let start = out.len();
    debug_assert_eq!(start % 8, 0);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&generation.to_le_bytes());
    out.extend_from_slice(&[0; 16]);
    for e in entries {
        out.extend_from_slice(&(e.at as u64).to_le_bytes());
        out.extend_from_slice(&(e.len as u32).to_le_bytes());
        out.push(if e.data.is_some() { WRITE } else { ZERO });
        out.extend_from_slice(&[0; 3]);
        if let Some(data) = e.data {
            out.extend_from_slice(data);
            out.resize(align(out.len(), 8), 0);
        }
    }
    let body = (out.len() - start - HEADER) as u64;
    out[start + 16..start + 24].copy_from_slice(&body.to_le_bytes());
    out[start + 24..start + 28].copy_from_slice(&(entries.len() as u32).to_le_bytes());
    let crc = checksum(&out[start..]);
    out[start + 28..start + 32].copy_from_slice(&crc.to_le_bytes());
}

/// CRC-32 of the header's first 28 bytes and the body.
fn checksum(journal: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&journal[..28]);
    h.update(&journal[HEADER..]);
    h.finalize()
}

/// The journal a record of `generation` and `end` names, checked: magic, generation,
/// bounds, CRC, and entries sorted, disjoint and inside [112, end). Errors are reported at
/// the journal's position (or the entry's).
pub fn parse(buf: &[u8], generation: u64, end: u64) -> Result<Vec<Entry<'_>>> {
    let at = position(end);
    let rest = usize::try_from(at).ok().and_then(|s| buf.get(s..)).ok_or_else(|| missing(at))?;
    parse_at(rest, at, generation, end)
}

/// [`parse`] of `journal`, the bytes from the journal's position `at` on.
fn parse_at(buf: &[u8], at: u64, generation: u64, end: u64) -> Result<Vec<Entry<'_>>> {
    let bad = |pos: u64, what: &str| Error::malformed(pos, format!("redo journal of an unfinished commit: {what}"));
    let head = buf.get(..HEADER).ok_or_else(|| bad(at, "truncated header"))?;
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    if &head[..8] != MAGIC {
        return Err(bad(at, "bad magic"));
    }
    if u64_at(head, 8) != generation {
        return Err(bad(at + 8, "generation differs from the root record's"));
    }
    let body = usize::try_from(u64_at(head, 16)).ok().filter(|&b| b <= buf.len() - HEADER)
        .ok_or_else(|| bad(at + 16, "body runs past the end of the file"))?;
    let count = u32::from_le_bytes(head[24..28].try_into().unwrap()) as usize;
    let journal = &buf[..HEADER + body];
    if checksum(journal) != u32::from_le_bytes(head[28..32].try_into().unwrap()) {
        return Err(bad(at + 28, "CRC mismatch"));
    }
    let mut entries = Vec::with_capacity(count.min(body / ENTRY_HEADER));
    let (mut pos, mut floor) = (HEADER, HEADER_LEN as u64);
    for _ in 0..count {
        let entry_at = at + pos as u64;
        let e = journal.get(pos..pos + ENTRY_HEADER).ok_or_else(|| bad(entry_at, "entry past the body"))?;
        let (offset, len, kind) = (u64_at(e, 0), u32::from_le_bytes(e[8..12].try_into().unwrap()) as u64, e[12]);
        if offset < floor || offset.checked_add(len).is_none_or(|stop| stop > end) {
            return Err(bad(entry_at, "entry outside the document, or out of order"));
        }
        floor = offset + len; // checked above
        pos += ENTRY_HEADER;
        let data = match kind {
            ZERO => None,
            WRITE => {
                let data = journal.get(pos..pos + len as usize).ok_or_else(|| bad(entry_at, "entry data past the body"))?;
                pos = align(pos + len as usize, 8);
                Some(data)
            }
            _ => return Err(bad(entry_at + 12, "unknown entry kind")),
        };
        entries.push(Entry { at: offset as usize, len: len as usize, data });
    }
    Ok(entries)
}

/// Where the (already parsed) journal of a record whose document ends at `end` ends.
pub fn extent(buf: &[u8], end: u64) -> Result<usize> {
    let at = position(end) as usize;
    let body = buf.get(at + 16..at + 24).map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize);
    body.map(|b| at + HEADER + b).filter(|&e| e <= buf.len()).ok_or_else(|| Error::malformed(at as u64, "redo journal past the end of the file"))
}

#[cold]
fn missing(at: u64) -> Error {
    Error::malformed(at, "redo journal of an unfinished commit: missing (the file ends before it)")
}

/// Applies checked entries to `doc`, the document's bytes (at least `end` long).
pub fn apply(doc: &mut [u8], entries: &[Entry<'_>]) {
    for e in entries {
        let target = &mut doc[e.at..e.at + e.len];
        match e.data {
            Some(data) => target.copy_from_slice(data),
            None => target.fill(0),
        }
    }
}

/// Finishes, in memory, a commit that a crash interrupted: when the active root record
/// names a journal, applies it to `buf` (the whole file) and clears the record's flag, so
/// that `buf` reads as the committed document. Returns whether there was one.
pub fn finish(buf: &mut [u8]) -> Result<bool> {
    let (mut record, record_at) = active_record(buf)?;
    if !record.journal {
        return Ok(false);
    }
    let at = position(record.end);
    let split = usize::try_from(at).ok().filter(|&a| a <= buf.len()).ok_or_else(|| missing(at))?;
    let (doc, journal) = buf.split_at_mut(split);
    // The journal is parsed from its own half, so positions inside it are offset back.
    let shifted = parse_at(journal, position(record.end), record.generation, record.end)?;
    apply(doc, &shifted);
    record.journal = false;
    record.write(&mut buf[record_at..record_at + RECORD_LEN]);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_journals_parse_back() {
        let mut buf = vec![0u8; 200];
        let data = [1u8, 2, 3];
        let entries = [Entry { at: 120, len: 3, data: Some(&data) }, Entry { at: 130, len: 40, data: None }];
        write(&mut buf, 7, &entries);
        assert_eq!(parse(&buf, 7, 200).unwrap(), entries);
        assert!(parse(&buf, 8, 200).is_err());
        let mut doc = vec![9u8; 200];
        apply(&mut doc, &entries);
        assert_eq!(&doc[120..123], &data);
        assert!(doc[130..170].iter().all(|&b| b == 0));
        for i in 200..buf.len() {
            let mut flipped = buf.clone();
            flipped[i] ^= 1;
            assert!(parse(&flipped, 7, 200).is_err(), "flip at {i} undetected");
        }
        assert!(parse(&buf[..buf.len() - 1], 7, 200).is_err());
    }

    #[test]
    fn entries_must_stay_inside_the_document() {
        for bad in [Entry { at: 100, len: 4, data: None }, Entry { at: 198, len: 4, data: None }] {
            let mut buf = vec![0u8; 200];
            write(&mut buf, 1, &[bad]);
            assert!(parse(&buf, 1, 200).is_err());
        }
    }
}

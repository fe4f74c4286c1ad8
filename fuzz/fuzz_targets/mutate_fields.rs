//! Structure-aware mutation of valid documents. A custom mutator finds the fields of the
//! document it is given (root-record fields, container layout bytes, count and capacity
//! varints, tags, keys, slots, hash-index entries, data-block lengths, typed-array element
//! type, rank, shape and capacity, key-dictionary counts, offsets and table) and rewrites
//! a few with boundary values, or lets libFuzzer mutate the bytes; then it recomputes the
//! CRC-32 of both root records (spec §2.2), so that the mutation reaches the parsers
//! instead of dying at the CRC check.
//!
//! The target runs everything a reader does (open and walk every accessor, validate,
//! decode, JSON, serde, the editor). It must never panic, and whatever `validate`
//! accepts must decode, convert to JSON (NaN and infinities aside), deserialize and open
//! in the editor.

#![no_main]

use leafwire::{AlignedBytes, Category, Document, Editor};
use libfuzzer_sys::{fuzz_mutator, fuzz_target, fuzzer_mutate};

mod common;
use common::{same, shape_rows_exceed_canonical_length, Walk};

const BUDGET: usize = 50_000;
const HEADER_LEN: usize = 112;
const RECORDS: [usize; 2] = [16, 64];

fuzz_target!(|data: &[u8]| common::guard(|| check(data)));

fn check(data: &[u8]) {
    let bytes = AlignedBytes::new(data);
    let validated = leafwire::validate(&bytes);
    if let Ok(doc) = Document::open(&bytes) {
        let mut walk = Walk::new(BUDGET);
        walk.node(&doc.root(), 0);
        for pointer in common::POINTERS {
            let _ = doc.pointer(pointer).map(|n| n.len());
        }
        if walk.budget == 0 && validated.is_err() {
            // A tree with shared subtrees: decoding would cost as much again.
            return;
        }
    }
    let decoded = leafwire::decode(&bytes);
    let json = leafwire::json::to_json(&bytes);
    // Packed documents (spec §13) deserialize to owned values only.
    let serde_value = match leafwire::is_packed_document(&bytes) {
        true => leafwire::from_slice_owned::<leafwire::Value>(&bytes),
        false => leafwire::from_slice::<leafwire::Value>(&bytes),
    };
    let serde_json_value = leafwire::from_slice::<serde_json::Value>(&bytes);
    let editor = Editor::new(bytes.to_vec());
    let Ok(_) = validated else { return };

    // What `validate` promises.
    let value = decoded.unwrap_or_else(|e| panic!("a validated document does not decode: {e}"));
    if let Err(e) = json {
        assert_eq!(e.category(), Category::NotRepresentable, "a validated document has no JSON form: {e}");
    }
    if let Err(e) = serde_value {
        assert_eq!(e.category(), Category::DepthLimit, "from_slice::<Value> refused a validated document: {e}");
    }
    drop(serde_json_value);
    let mut editor = editor.unwrap_or_else(|e| panic!("the editor refused a validated document: {e}"));
    let canonical = match leafwire::encode(&value) {
        Ok(c) => c,
        Err(e) if shape_rows_exceed_canonical_length(&e) => return,
        Err(e) => panic!("a decoded value does not encode: {e}"),
    };
    leafwire::validate(&canonical).unwrap_or_else(|e| panic!("the encoder wrote an invalid document: {e}"));
    editor.compact().unwrap_or_else(|e| panic!("compact of a validated document failed: {e}"));
    let compacted = leafwire::decode(editor.as_bytes()).expect("decode a compacted document");
    assert!(same(&compacted, &value), "compact changed the value");
}

// ---- The mutator ---------------------------------------------------------------------

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = Rng(u64::from(seed) | 1 << 40);
    let mut size = size.min(data.len());
    let fields = if size >= HEADER_LEN && rng.below(8) != 0 { fields(&data[..size], &mut rng) } else { Vec::new() };
    if fields.is_empty() {
        size = fuzzer_mutate(data, size, max_size);
    } else {
        for _ in 0..1 + rng.below(3) {
            let field = fields[rng.below(fields.len())];
            size = mutate(data, size, max_size, field, &fields, &mut rng);
        }
        if rng.below(4) == 0 {
            size = fuzzer_mutate(data, size, max_size);
        }
    }
    // Usually correct CRCs (the point of this target); now and then not, so the
    // record-selection rules stay covered.
    if size >= HEADER_LEN && rng.below(16) != 0 {
        fix_crcs(&mut data[..size]);
    }
    size
});

/// Recomputes the CRC of both root records over their first 44 bytes (spec §2.2).
fn fix_crcs(doc: &mut [u8]) {
    for r in RECORDS {
        let crc = crc32fast::hash(&doc[r..r + 44]);
        doc[r + 44..r + 48].copy_from_slice(&crc.to_le_bytes());
    }
}

/// xorshift64*, seeded by libFuzzer (mutations must be deterministic per seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A byte of flags or codes: layout byte, tag, element type, rank.
    Byte,
    /// A little-endian unsigned integer of this many bytes: slots, keys, offsets, counts.
    Uint(u8),
    /// An LEB128 varint of this many bytes: counts, capacities, lengths, dimensions.
    Varint(u8),
    /// The record field `end` (u64): also set to the new size after a splice.
    End,
}

#[derive(Debug, Clone, Copy)]
struct Field {
    pos: usize,
    kind: Kind,
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn uint_at(d: &[u8], at: usize, w: usize) -> Option<u64> {
    let b = d.get(at..at.checked_add(w)?)?;
    Some(b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
}

/// (value, length) of the varint at `at`.
fn varint_at(d: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..10 {
        let b = *d.get(at + i)?;
        v |= u64::from(b & 0x7F).checked_shl(7 * i as u32).unwrap_or(0);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn align(p: usize, to: usize) -> Option<usize> {
    Some(p.checked_add(to - 1)? / to * to)
}

/// The fields of the document, found by a tolerant walk that follows the spec's layout
/// (§§2, 4, 5, 6) as far as the bytes make sense; bounded in nodes and fields.
fn fields(d: &[u8], rng: &mut Rng) -> Vec<Field> {
    let mut out = Vec::new();
    for r in RECORDS {
        out.push(Field { pos: r, kind: Kind::Uint(8) }); // generation
        out.push(Field { pos: r + 8, kind: Kind::Uint(8) }); // root
        out.push(Field { pos: r + 16, kind: Kind::Uint(8) }); // dictionary
        out.push(Field { pos: r + 24, kind: Kind::End });
        out.push(Field { pos: r + 32, kind: Kind::Uint(8) }); // garbage
        out.push(Field { pos: r + 40, kind: Kind::Byte }); // root tag
    }
    // The active record as a reader would pick it, CRCs aside.
    let generation = |r: usize| u64_at(d, r).unwrap_or(0);
    let r = if generation(64) > generation(16) { 64 } else { 16 };
    let (root, dict, root_tag) = (u64_at(d, r + 8).unwrap_or(0), u64_at(d, r + 16).unwrap_or(0), d[r + 40]);
    dictionary(d, dict as usize, &mut out, rng);
    let mut stack = vec![(root_tag, root)];
    let mut seen = std::collections::HashSet::new();
    while let Some((t, p)) = stack.pop() {
        if out.len() > 4096 || seen.len() > 512 || !seen.insert((t, p)) {
            continue;
        }
        let Ok(p) = usize::try_from(p) else { continue };
        if p >= d.len() {
            continue;
        }
        match t {
            0x07..=0x09 => {
                if let Some((_, n)) = varint_at(d, p) {
                    out.push(Field { pos: p, kind: Kind::Varint(n as u8) });
                }
            }
            0x0A..=0x0C => container(d, p, t, &mut out, &mut stack, rng),
            0x0D => typed(d, p, &mut out),
            _ => {}
        }
    }
    out
}

fn dictionary(d: &[u8], at: usize, out: &mut Vec<Field>, rng: &mut Rng) {
    if at == 0 || at.saturating_add(16) > d.len() {
        return;
    }
    for i in 0..4 {
        out.push(Field { pos: at + 4 * i, kind: Kind::Uint(4) }); // count, capacity, bytes capacity, table size
    }
    let capacity = u32_at(d, at + 4).unwrap_or(0) as usize;
    let bytes_capacity = u32_at(d, at + 8).unwrap_or(0) as usize;
    let table = u32_at(d, at + 12).unwrap_or(0) as usize;
    let offsets = at + 16;
    let entries = capacity.saturating_add(1).min(d.len() / 4);
    for _ in 0..entries.min(8) {
        let i = rng.below(entries);
        if offsets + 4 * i + 4 <= d.len() {
            out.push(Field { pos: offsets + 4 * i, kind: Kind::Uint(4) });
        }
    }
    let Some(table_at) = align(offsets + 4 * entries + bytes_capacity, 4) else { return };
    for _ in 0..table.min(8) {
        let i = rng.below(table);
        let pos = table_at.saturating_add(4 * i);
        if pos.saturating_add(4) <= d.len() {
            out.push(Field { pos, kind: Kind::Uint(4) });
        }
    }
}

fn container(d: &[u8], p: usize, t: u8, out: &mut Vec<Field>, stack: &mut Vec<(u8, u64)>, rng: &mut Rng) {
    let layout = d[p];
    out.push(Field { pos: p, kind: Kind::Byte });
    let Some((count, n1)) = varint_at(d, p + 1) else { return };
    out.push(Field { pos: p + 1, kind: Kind::Varint(n1 as u8) });
    let mut q = p + 1 + n1;
    let mut capacity = count;
    if layout & 0x10 != 0 {
        let Some((c, n2)) = varint_at(d, q) else { return };
        out.push(Field { pos: q, kind: Kind::Varint(n2 as u8) });
        capacity = c;
        q += n2;
    }
    let (Ok(n), Ok(c)) = (usize::try_from(count), usize::try_from(capacity)) else { return };
    if c > d.len() || n > c {
        return;
    }
    let w = 1usize << (layout & 3);
    let k = if t == 0x0A { 0 } else { 1usize << ((layout >> 2) & 3) };
    let keys = q + c;
    let Some(slots) = align(keys + c * k, w) else { return };
    if slots + c * w > d.len() {
        return;
    }
    // Tags, keys and slots of a sample of children (all of them in small containers).
    let sample: Vec<usize> = if c <= 16 { (0..c).collect() } else { (0..16).map(|_| rng.below(c)).collect() };
    for &i in &sample {
        out.push(Field { pos: q + i, kind: Kind::Byte });
        if k > 0 {
            out.push(Field { pos: keys + i * k, kind: Kind::Uint(k as u8) });
        }
        out.push(Field { pos: slots + i * w, kind: Kind::Uint(w as u8) });
    }
    for i in 0..n.min(256) {
        let tag = d[q + i];
        if (0x07..=0x0D).contains(&tag) {
            stack.push((tag, uint_at(d, slots + i * w, w).unwrap_or(0)));
        }
    }
    if layout & 0x20 != 0 {
        let table = (2 * c).max(2).next_power_of_two();
        let e = if c < 255 { 1 } else if c < 65535 { 2 } else { 4 };
        let Some(index) = align(slots + c * w, e) else { return };
        for _ in 0..table.min(8) {
            let pos = index + e * rng.below(table);
            if pos + e <= d.len() {
                out.push(Field { pos, kind: Kind::Uint(e as u8) });
            }
        }
    }
}

fn typed(d: &[u8], p: usize, out: &mut Vec<Field>) {
    out.push(Field { pos: p, kind: Kind::Byte }); // element type
    let Some(&rank) = d.get(p + 1) else { return };
    out.push(Field { pos: p + 1, kind: Kind::Byte });
    let mut q = p + 2;
    let dims = (rank & 0x3F) as usize + usize::from(rank & 0x80 != 0);
    for _ in 0..dims.min(33) {
        let Some((_, n)) = varint_at(d, q) else { return };
        out.push(Field { pos: q, kind: Kind::Varint(n as u8) });
        q += n;
    }
}

/// A value for a field: boundaries, sizes of this document, positions of other fields,
/// nearby values, bit flips, random.
fn interesting(rng: &mut Rng, old: u64, size: usize, fields: &[Field]) -> u64 {
    const FIXED: [u64; 24] = [
        0, 1, 2, 3, 4, 7, 8, 16, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0xFFFF, 0x1_0000, 0x7FFF_FFFF, 0xFFFF_FFFF, 1 << 32, 1 << 33,
        1 << 53, i64::MAX as u64, u64::MAX, u64::MAX - 1, u64::MAX - 7,
    ];
    let size = size as u64;
    match rng.below(10) {
        0..=2 => FIXED[rng.below(FIXED.len())],
        3 => [size, size - 1, size - 2, size + 1, size.saturating_sub(8), 112, 111, 113][rng.below(8)],
        4 => fields[rng.below(fields.len())].pos as u64,
        5 => old.wrapping_add(1 + rng.below(8) as u64),
        6 => old.wrapping_sub(1 + rng.below(8) as u64),
        7 => old ^ 1 << rng.below(64),
        8 => old.wrapping_mul(2 + rng.below(3) as u64),
        _ => rng.next() >> rng.below(64),
    }
}

fn encode_varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// Replaces `data[at..at + old_len]` with `new`, within `max_size`; returns the new size.
fn splice(data: &mut [u8], size: usize, max_size: usize, at: usize, old_len: usize, new: &[u8]) -> usize {
    let new_size = size - old_len + new.len();
    if new_size > max_size.min(data.len()) {
        return size;
    }
    let tail: Vec<u8> = data[at + old_len..size].to_vec();
    data[at..at + new.len()].copy_from_slice(new);
    data[at + new.len()..new_size].copy_from_slice(&tail);
    new_size
}

fn mutate(data: &mut [u8], size: usize, max_size: usize, field: Field, fields: &[Field], rng: &mut Rng) -> usize {
    let d = &mut data[..size];
    let at = field.pos;
    match field.kind {
        Kind::Byte => {
            if at < size {
                d[at] = match rng.below(4) {
                    0 => d[at] ^ 1 << rng.below(8),
                    1 => rng.below(0x10) as u8, // tags, element types
                    2 => [0x00, 0x01, 0x02, 0x03, 0x10, 0x20, 0x30, 0x40, 0x80, 0xC0, 0x3F, 0xFF, 0x21, 0x33][rng.below(14)],
                    _ => rng.next() as u8,
                };
            }
            size
        }
        Kind::End if rng.below(2) == 0 => resize(data, size, max_size, rng),
        Kind::Uint(_) | Kind::End => {
            let w = if let Kind::Uint(w) = field.kind { w as usize } else { 8 };
            let Some(old) = uint_at(d, at, w) else { return size };
            let v = interesting(rng, old, size, fields);
            d[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
            size
        }
        Kind::Varint(_) => {
            // The field's length now (an earlier mutation may have changed it).
            let Some((old, n)) = varint_at(d, at) else { return size };
            let v = interesting(rng, old, size, fields);
            let minimal = encode_varint(v);
            if rng.below(2) == 0 || minimal.len() == n {
                // A different length: everything after the field shifts.
                splice(data, size, max_size, at, n, &minimal)
            } else {
                // The same length: padded (non-minimal) or cut short.
                let mut same = vec![0u8; n];
                let mut x = v;
                for (i, b) in same.iter_mut().enumerate() {
                    *b = (x & 0x7F) as u8 | if i + 1 < n { 0x80 } else { 0 };
                    x >>= 7;
                }
                d[at..at + n].copy_from_slice(&same);
                size
            }
        }
    }
}

/// Truncates or extends the document and keeps `end` of both records at its length.
fn resize(data: &mut [u8], size: usize, max_size: usize, rng: &mut Rng) -> usize {
    let new_size = match rng.below(3) {
        0 => size.saturating_sub(1 + rng.below(16)).max(HEADER_LEN),
        1 => (size + 1 + rng.below(64)).min(max_size).min(data.len()),
        _ => size,
    };
    for b in data.iter_mut().take(new_size).skip(size) {
        *b = 0;
    }
    for r in RECORDS {
        data[r + 24..r + 32].copy_from_slice(&(new_size as u64).to_le_bytes());
    }
    new_size
}

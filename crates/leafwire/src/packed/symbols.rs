//! String codec 0x24, symbol table (§5.3; FSST's layout): up to 255 symbols of 1–8 bytes,
//! an encoded byte c < s stands for symbol c, 255 escapes one literal byte. The table is
//! trained on the selector's sample of the page (so it is a function of the values), with
//! FSST's loop simplified: compress with the current table, count symbols and adjacent
//! pairs, keep the 255 candidates of highest gain (count × length), five rounds.

use rustc_hash::FxHashMap;

use super::codec::STR_SYMBOLS;
use super::int::{encode_at, IntCodec};
use super::select::sample;
use super::texts::Texts;
use super::Reader;
use crate::error::Result;

const ESCAPE: u8 = 255;
const MAX_SYMBOLS: usize = 255;
const MAX_SYMBOL_LEN: usize = 8;
/// Training rounds, each on the whole sample. (FSST's schedule, rounds on a growing share
/// of the sample, halves the work but left files 5-12% larger: twitter, update-center.)
const ROUNDS: usize = 5;

/// A trained table with a lookup: symbols of two bytes or more by their first two bytes
/// (longest first), single-byte symbols by their byte.
pub(crate) struct SymbolTable {
    /// The symbols by code.
    symbols: Vec<Unit>,
    /// The symbols of 2–8 bytes whose first two bytes hash to h (`pair_bucket`):
    /// `entries[starts[h]..starts[h + 1]]`, longest first, then by code.
    starts: [u16; PAIR_BUCKETS + 1],
    entries: Vec<Entry>,
    /// The code of the single-byte symbol of each byte, or `NO_CODE`.
    single: [u8; 256],
}

/// Buckets of the two-byte lookup: a few symbols share each, so that a lookup compares a
/// handful of candidates, not every symbol that starts with the same byte (a table for
/// URLs holds dozens that start with `/`).
const PAIR_BUCKETS: usize = 512;
/// Not a code: codes are below `MAX_SYMBOLS` (255).
const NO_CODE: u8 = 255;

/// The bucket of a text whose first two bytes are the low 16 bits of `word`.
#[inline(always)]
fn pair_bucket(word: u64) -> usize {
    ((word as u32 & 0xFFFF).wrapping_mul(0x9E37_79B1) >> (32 - PAIR_BUCKETS.trailing_zeros())) as usize
}

/// A symbol as the lookup compares it: its bytes in a u64 and the mask of its length, so
/// that a match is one comparison of the text's next 8 bytes.
#[derive(Clone, Copy)]
struct Entry {
    word: u64,
    mask: u64,
    len: u8,
    code: u8,
}

impl SymbolTable {
    fn new(mut symbols: Vec<Unit>) -> Self {
        symbols.truncate(MAX_SYMBOLS);
        // By bucket, longest first, then code: two stable counting passes (by length, then
        // by bucket) instead of a comparison sort, as a table is built every training round.
        let mut by_length = [0u16; MAX_SYMBOL_LEN + 2];
        for s in &symbols {
            by_length[MAX_SYMBOL_LEN + 1 - s.1 as usize] += 1;
        }
        for l in 0..=MAX_SYMBOL_LEN {
            by_length[l + 1] += by_length[l];
        }
        let mut longest_first = [0u8; MAX_SYMBOLS];
        for (code, s) in symbols.iter().enumerate() {
            let slot = &mut by_length[MAX_SYMBOL_LEN - s.1 as usize];
            longest_first[*slot as usize] = code as u8;
            *slot += 1;
        }
        let mut starts = [0u16; PAIR_BUCKETS + 1];
        let mut single = [NO_CODE; 256];
        for (code, s) in symbols.iter().enumerate() {
            match s.1 {
                1 => single[s.0 as u8 as usize] = code as u8,
                _ => starts[pair_bucket(s.0) + 1] += 1,
            }
        }
        for h in 0..PAIR_BUCKETS {
            starts[h + 1] += starts[h];
        }
        let mut next = starts;
        let mut entries = vec![Entry { word: 0, mask: 0, len: 0, code: 0 }; starts[PAIR_BUCKETS] as usize];
        for &code in &longest_first[..symbols.len()] {
            let s = symbols[code as usize];
            if s.1 >= 2 {
                let slot = &mut next[pair_bucket(s.0)];
                entries[*slot as usize] = Entry { word: s.0, mask: u64::MAX >> (64 - 8 * s.1 as u32), len: s.1, code };
                *slot += 1;
            }
        }
        SymbolTable { symbols, starts, entries, single }
    }

    /// The longest symbol that `text` (not empty) starts with: its code and length. (Units
    /// are distinct, so at most one symbol of each length matches.)
    #[inline]
    fn longest(&self, text: &[u8]) -> Option<(u8, usize)> {
        let n = text.len().min(8);
        if n >= 2 {
            let word = match text.first_chunk::<8>() {
                Some(bytes) => u64::from_le_bytes(*bytes),
                // The last bytes of a text, gathered without a call to copy them.
                None => text.iter().rev().fold(0u64, |w, &b| w << 8 | b as u64),
            };
            let h = pair_bucket(word);
            let candidates = &self.entries[self.starts[h] as usize..self.starts[h + 1] as usize];
            if let Some(e) = candidates.iter().find(|e| e.len as usize <= n && word & e.mask == e.word) {
                return Some((e.code, e.len as usize));
            }
        }
        let code = self.single[text[0] as usize];
        (code != NO_CODE).then_some((code, 1))
    }

    /// Calls `emit` with each unit of the greedy parse of `text`: a symbol's code, or
    /// `None` with the byte to escape.
    #[inline]
    fn parse(&self, mut text: &[u8], mut emit: impl FnMut(Option<u8>, &[u8])) {
        while !text.is_empty() {
            match self.longest(text) {
                Some((c, len)) => {
                    emit(Some(c), &text[..len]);
                    text = &text[len..];
                }
                None => {
                    emit(None, &text[..1]);
                    text = &text[1..];
                }
            }
        }
    }

    pub fn encode(&self, text: &[u8], out: &mut Vec<u8>) {
        self.parse(text, |c, unit| match c {
            Some(c) => out.push(c),
            None => out.extend_from_slice(&[ESCAPE, unit[0]]),
        });
    }
}

/// A unit of 1–8 bytes (a symbol, or a candidate for one): its bytes little-endian in a
/// u64, and its length.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Unit(u64, u8);

impl Unit {
    /// `self` followed by `next`, if that is 8 bytes or fewer.
    fn then(self, next: Unit) -> Option<Unit> {
        let len = self.1 + next.1;
        (len as usize <= MAX_SYMBOL_LEN).then(|| Unit(self.0 | next.0 << (8 * self.1 as u32), len))
    }

    /// A key in the order of the units' bytes: the bytes big-endian (zero-padded, so a
    /// unit ties with its extensions by zero bytes), then the length (a prefix first).
    fn text_key(self) -> (u64, u8) {
        (self.0.swap_bytes(), self.1)
    }
}

/// Trains a table on `values` (the caller passes the sample).
///
/// Each round counts the units of the greedy parse and the pairs of adjacent units. Units
/// are counted by their index in the parse (a symbol's code, or 256 + an escaped byte) in
/// plain arrays, and only the distinct units and pairs met are turned into byte strings
/// at the end of the round, merged by their bytes ("ab" + "c" and "a" + "bc" are one
/// candidate): the same counts as hashing every occurrence by its bytes, at an array
/// increment each.
pub(crate) fn train<S: AsRef<str>>(values: &[S]) -> SymbolTable {
    COUNTS.with(|counts| {
        let counts = &mut *counts.borrow_mut();
        let mut table = SymbolTable::new(Vec::new());
        for _ in 0..ROUNDS {
            for v in values {
                let mut prev: Option<(usize, usize)> = None;
                table.parse(v.as_ref().as_bytes(), |code, unit| {
                    let index = code.map_or(256 + unit[0] as usize, usize::from);
                    counts.single[index] = counts.single[index].saturating_add(1);
                    if let Some((p, _)) = prev.filter(|&(_, p_len)| p_len + unit.len() <= MAX_SYMBOL_LEN) {
                        let pair = p * UNITS + index;
                        if counts.pairs[pair] == 0 {
                            counts.touched.push(pair as u32);
                        }
                        counts.pairs[pair] = counts.pairs[pair].saturating_add(1);
                    }
                    prev = Some((index, unit.len()));
                });
            }
            table = SymbolTable::new(counts.take_ranked(&table));
        }
        table
    })
}

/// Units of the parse: codes 0–254 are symbols, 256 + b the escaped byte b (255 unused).
const UNITS: usize = 512;

/// One training round's counts, kept per thread: the pair matrix is 1 MiB, and cleared
/// entry by entry (`touched`), not whole.
struct Counts {
    single: Vec<u32>,
    pairs: Vec<u32>,
    touched: Vec<u32>,
}

thread_local! {
    static COUNTS: std::cell::RefCell<Counts> = std::cell::RefCell::new(Counts {
        single: vec![0; UNITS],
        pairs: vec![0; UNITS * UNITS],
        touched: Vec::new(),
    });
}

impl Counts {
    /// The candidates of this round's counts for the next table, best first, at most
    /// `MAX_SYMBOLS`; leaves the counts zeroed.
    fn take_ranked(&mut self, table: &SymbolTable) -> Vec<Unit> {
        let unit = |index: usize| match index {
            0..256 => table.symbols[index],
            _ => Unit(index as u64 - 256, 1),
        };
        let mut by_bytes: FxHashMap<Unit, usize> =
            FxHashMap::with_capacity_and_hasher(self.touched.len() + UNITS, Default::default());
        for (index, count) in self.single.iter_mut().enumerate().filter(|(_, c)| **c > 0) {
            *by_bytes.entry(unit(index)).or_default() += std::mem::take(count) as usize;
        }
        for pair in self.touched.drain(..) {
            let (first, second) = (pair as usize / UNITS, pair as usize % UNITS);
            let count = std::mem::take(&mut self.pairs[pair as usize]) as usize;
            let joined = unit(first).then(unit(second)).expect("pairs of at most 8 bytes are counted");
            *by_bytes.entry(joined).or_default() += count;
        }
        // Gain: the bytes a symbol covers, less what it costs in the table (length byte and
        // its bytes), so a small page does not pay for symbols it hardly uses.
        // Ranked by one integer key, highest gain first, ties in byte order (keys are
        // distinct, as units are): only the best `MAX_SYMBOLS` are sorted.
        let mut ranked: Vec<(u128, Unit)> = by_bytes
            .into_iter()
            .filter_map(|(s, c)| {
                let len = s.1 as usize;
                (c * len).checked_sub(1 + len).filter(|&g| g > 0).map(|g| (rank_key(g, s), s))
            })
            .collect();
        if ranked.len() > MAX_SYMBOLS {
            ranked.select_nth_unstable_by_key(MAX_SYMBOLS - 1, |r| r.0);
            ranked.truncate(MAX_SYMBOLS);
        }
        ranked.sort_unstable_by_key(|r| r.0);
        ranked.into_iter().map(|(_, s)| s).collect()
    }
}

/// The order of candidates: `gain` descending, then the unit's bytes ([`Unit::text_key`]).
fn rank_key(gain: usize, unit: Unit) -> u128 {
    let (bytes, len) = unit.text_key();
    ((!(gain as u64) as u128) << 72) | ((bytes as u128) << 8) | len as u128
}

/// A sample as [`trained`] remembers it: its hash, its values' lengths and their bytes
/// back to back (one allocation each, not one per value).
struct Remembered {
    hash: u64,
    lengths: Vec<u32>,
    bytes: Vec<u8>,
    table: std::rc::Rc<SymbolTable>,
}

impl Remembered {
    fn is(&self, hash: u64, sample: &[&str]) -> bool {
        self.hash == hash
            && self.lengths.len() == sample.len()
            && self.lengths.iter().zip(sample).all(|(&l, s)| l as usize == s.len())
            && sample.iter().scan(0, |at, s| {
                let start = *at;
                *at += s.len();
                Some(&self.bytes[start..*at] == s.as_bytes())
            })
            .all(|same| same)
    }
}

/// How many samples [`trained`] remembers: a page's sample, its dictionary's, and those of
/// the columns between two columns that hold the same values (a record's `name` and its
/// `wearable.name`), so that equal columns are trained once.
const REMEMBERED: usize = 16;

/// The table [`train`] makes of `sample`, remembered for the last few samples: the
/// selector tries a codec on the page's sample and then encodes the page, whose sample is
/// the same, so the table would otherwise be trained twice or more per page.
fn trained(sample: &[&str]) -> std::rc::Rc<SymbolTable> {
    use std::hash::{Hash, Hasher};
    thread_local! {
        static RECENT: std::cell::RefCell<Vec<Remembered>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut h = rustc_hash::FxHasher::default();
    sample.hash(&mut h);
    let hash = h.finish();
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        if let Some(r) = recent.iter().find(|r| r.is(hash, sample)) {
            return r.table.clone();
        }
        let table = std::rc::Rc::new(train(sample));
        if recent.len() == REMEMBERED {
            recent.remove(0);
        }
        recent.push(Remembered {
            hash,
            lengths: sample.iter().map(|s| s.len() as u32).collect(),
            bytes: sample.concat().into_bytes(),
            table: table.clone(),
        });
        table
    })
}

/// Writes the symbol-table stream of `values` (not empty), its encoded lengths with
/// `lengths`, at nesting `depth`.
pub(crate) fn write_symbols<S: AsRef<str>>(
    values: &[S],
    lengths: &IntCodec,
    depth: u32,
    out: &mut Vec<u8>,
) -> Result<()> {
    let refs: Vec<&str> = values.iter().map(AsRef::as_ref).collect();
    let table = trained(&sample(&refs));
    let mut encoded = Vec::new();
    let mut lens = Vec::with_capacity(values.len());
    for v in values {
        let before = encoded.len();
        table.encode(v.as_ref().as_bytes(), &mut encoded);
        lens.push((encoded.len() - before) as i64);
    }
    out.push(STR_SYMBOLS);
    out.push(table.symbols.len() as u8);
    out.extend(table.symbols.iter().map(|s| s.1));
    for s in &table.symbols {
        out.extend_from_slice(&s.0.to_le_bytes()[..s.1 as usize]);
    }
    encode_at(&lens, lengths, depth + 1, out)?;
    out.extend_from_slice(&encoded);
    Ok(())
}

/// Appends the n values of a symbol-table stream whose codec byte the caller has read.
pub(crate) fn read_symbols(r: &mut Reader, n: usize, depth: u32, out: &mut Texts) -> Result<()> {
    let s = r.u8()? as usize;
    let lens_at = r.pos;
    let sym_lens = r.take(s)?;
    if sym_lens.iter().any(|&l| !(1..=MAX_SYMBOL_LEN as u8).contains(&l)) {
        return Err(r.err(lens_at, "symbol length not in 1..=8"));
    }
    let sym_bytes = r.take(sym_lens.iter().map(|&l| l as usize).sum())?;
    let mut symbols: Vec<&[u8]> = Vec::with_capacity(s);
    let mut p = 0;
    for &l in sym_lens {
        symbols.push(&sym_bytes[p..p + l as usize]);
        p += l as usize;
    }
    let (lens, total) = super::string::read_lengths(r, n, depth)?;
    let data_at = r.pos;
    let data = r.take(total)?;
    // The page's text decoded whole, then checked as UTF-8 once (with its cuts).
    let mut text = Vec::with_capacity(total.saturating_mul(2).min(r.limits.max_page_bytes));
    let mut ends = Vec::with_capacity(n);
    let mut p = 0;
    for &l in &lens {
        let enc = &data[p..p + l];
        let mut i = 0;
        while i < enc.len() {
            let c = enc[i];
            if (c as usize) < s {
                text.extend_from_slice(symbols[c as usize]);
                i += 1;
            } else if c == ESCAPE && i + 1 < enc.len() {
                text.push(enc[i + 1]);
                i += 2;
            } else {
                return Err(r.err(data_at + p + i, "symbol code not in the table, or an escape at the end"));
            }
        }
        if text.len() > r.limits.max_page_bytes {
            return Err(super::string::too_big(r, data_at + p));
        }
        ends.push(text.len());
        p += l;
    }
    // Reported at the encoded start of the string the bad byte (or cut) is in.
    let texts = Texts::from_utf8(text, &ends)
        .map_err(|e| r.err(data_at + lens[..e.string].iter().sum::<usize>(), "string is not UTF-8"))?;
    out.append(texts);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::string::{decode_strings, encode_strings, StrCodec};
    use super::super::Limits;
    use super::*;
    use crate::Category;

    #[test]
    fn text_keys_order_units_as_their_bytes() {
        let mut next = crate::testing::xorshift(0xA076_1D64_78BD_642F);
        let unit = |next: &mut dyn FnMut() -> u64| {
            let len = 1 + (next() % 8) as u8;
            // Few distinct bytes, zeros included, so that prefixes and ties are common.
            let bytes: Vec<u8> = (0..len).map(|_| [0u8, 1, b'a', 255][(next() % 4) as usize]).collect();
            let mut word = [0u8; 8];
            word[..bytes.len()].copy_from_slice(&bytes);
            (Unit(u64::from_le_bytes(word), len), bytes)
        };
        for _ in 0..20_000 {
            let ((a, a_bytes), (b, b_bytes)) = (unit(&mut next), unit(&mut next));
            assert_eq!(a.text_key().cmp(&b.text_key()), a_bytes.cmp(&b_bytes), "{a_bytes:?} {b_bytes:?}");
        }
    }

    #[test]
    fn lookups_find_the_longest_symbol_a_text_starts_with() {
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        // Few distinct bytes, so that symbols share first bytes and prefixes of one another.
        let alphabet = [b'a', b'h', b'/', 0, 255];
        for _ in 0..300 {
            let count = (next() % (MAX_SYMBOLS as u64 + 1)) as usize;
            let mut seen = std::collections::HashSet::new();
            let symbols: Vec<Vec<u8>> = (0..count * 2)
                .map(|_| (0..1 + next() % 8).map(|_| alphabet[(next() % 5) as usize]).collect::<Vec<u8>>())
                .filter(|s| seen.insert(s.clone()))
                .take(count)
                .collect();
            let units: Vec<Unit> = symbols
                .iter()
                .map(|s| Unit(s.iter().rev().fold(0u64, |w, &b| w << 8 | b as u64), s.len() as u8))
                .collect();
            let table = SymbolTable::new(units);
            for _ in 0..50 {
                let text: Vec<u8> = (0..1 + next() % 12).map(|_| alphabet[(next() % 5) as usize]).collect();
                let expected = symbols
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| text.starts_with(s))
                    .max_by_key(|(_, s)| s.len())
                    .map(|(code, s)| (code as u8, s.len()));
                assert_eq!(table.longest(&text), expected, "{text:?}");
            }
        }
    }

    #[test]
    fn rank_keys_order_by_gain_then_bytes() {
        let mut next = crate::testing::xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let mut draw = || {
                let len = 1 + (next() % 8) as u8;
                // Small words too, so that equal gains tie on units that are prefixes of
                // one another.
                let word = if next() % 2 == 0 { next() % 3 } else { next() };
                (((next() % 4) as usize * 1000), Unit(word & (u64::MAX >> (64 - 8 * len as u32)), len))
            };
            let ((ga, a), (gb, b)) = (draw(), draw());
            let expected = gb.cmp(&ga).then(a.text_key().cmp(&b.text_key()));
            assert_eq!(rank_key(ga, a).cmp(&rank_key(gb, b)), expected);
        }
    }

    /// A byte vector written by hand from §5.3: symbols "ab" (code 0) and "c" (code 1);
    /// "abc" → 0, 1; "xab" → 255 'x', 0; lengths plain k = 1.
    #[test]
    fn fixed_vector() {
        let b = [0x24, 2, 2, 1, b'a', b'b', b'c', 0x00, 1, 2, 3, 0, 1, 255, b'x', 0];
        assert_eq!(decode_strings(&b, 0, 2, &Limits::default()).unwrap().0, ["abc", "xab"]);
    }

    #[test]
    fn trained_tables_compress_and_round_trip() {
        let values: Vec<String> =
            (0..2000).map(|j| format!("decentraland wearable {} of the collection", j % 37)).collect();
        let mut out = Vec::new();
        encode_strings(&values, &StrCodec::Symbols(IntCodec::Auto), &mut out).unwrap();
        let raw: usize = values.iter().map(|v| v.len()).sum();
        assert!(out.len() * 3 < raw, "{} of {raw}", out.len());
        assert_eq!(decode_strings(&out, 0, values.len(), &Limits::default()).unwrap().0, values);
    }

    #[test]
    fn bad_streams() {
        let lim = Limits::default();
        for b in [
            &[0x24u8, 1, 9, 0][..],                    // symbol of 9 bytes
            &[0x24, 1, 1, b'a', 0x01, 2, 1],           // code 1 ≥ s = 1
            &[0x24, 0, 0x01, 2, 255],                  // escape at the end
            &[0x24, 0, 0x01, 4, 255, 0xC3, 255, 0x28], // not UTF-8
        ] {
            let e = decode_strings(b, 0, 1, &lim).unwrap_err();
            assert_eq!(e.category(), Category::Malformed, "{b:?}: {e}");
        }
    }
}

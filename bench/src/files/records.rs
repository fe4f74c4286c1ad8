//! The big document: a JSON array of records `{"id", "x", "y", "name", "tags"}` drawn
//! from a seeded generator, written as compact JSON until it reaches a target size.
//! The same generator, replayed, is the reference every output is checked against,
//! record by record and without holding the document in memory.

use std::fmt;
use std::io::Write;
use std::path::Path;

use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::harness::rng::Rng;
use crate::harness::Fail;

const SEED: u64 = 0x1eaf_f11e_5000_0010;

#[derive(Serialize, Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub id: i64,
    pub x: f64,
    pub y: f64,
    pub name: String,
    pub tags: Vec<i64>,
}

/// Record `i` of the sequence, in order.
pub struct Records {
    rng: Rng,
    next: i64,
}

impl Records {
    pub fn new() -> Records {
        Records { rng: Rng::new(SEED), next: 0 }
    }

    pub fn next_record(&mut self) -> Record {
        let r = &mut self.rng;
        let id = self.next;
        self.next += 1;
        let x = r.unit() * 2000.0 - 1000.0;
        let y = r.unit() * 2000.0 - 1000.0;
        let len = r.range(4, 12) as usize;
        let name = r.word(len);
        let tags = (0..r.below(5)).map(|_| r.below(1000) as i64).collect();
        Record { id, x, y, name, tags }
    }
}

/// Writes records to `path` as one compact JSON array until the text reaches
/// `target_bytes`; returns (records, bytes).
pub fn write_json(path: &Path, target_bytes: u64) -> Result<(usize, u64), Fail> {
    let file = std::fs::File::create(path).map_err(Fail::error)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut gen = Records::new();
    let mut written = 1u64;
    let mut line = Vec::with_capacity(256);
    let mut n = 0usize;
    w.write_all(b"[").map_err(Fail::error)?;
    while written < target_bytes {
        line.clear();
        if n > 0 {
            line.push(b',');
        }
        serde_json::to_writer(&mut line, &gen.next_record()).map_err(Fail::error)?;
        w.write_all(&line).map_err(Fail::error)?;
        written += line.len() as u64;
        n += 1;
    }
    w.write_all(b"]").map_err(Fail::error)?;
    w.flush().map_err(Fail::error)?;
    Ok((n, written + 1))
}

/// `Ok` when `json` is exactly the generator's `n` records (key order and number
/// spelling may differ; values must be equal, floats bit for bit), with `edit`
/// (record index, new x) applied.
pub fn check_json(json: &[u8], n: usize, edit: Option<(usize, f64)>) -> Result<(), Fail> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let verdict = Expect { n, edit }.deserialize(&mut de).map_err(|e| Fail::Wrong(format!("not the records: {e}")))?;
    de.end().map_err(|e| Fail::Wrong(format!("text after the array: {e}")))?;
    verdict.map_err(Fail::Wrong)
}

struct Expect {
    n: usize,
    edit: Option<(usize, f64)>,
}

impl<'de> DeserializeSeed<'de> for Expect {
    type Value = Result<(), String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Expect {
    type Value = Result<(), String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an array of {} records", self.n)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut gen = Records::new();
        let mut i = 0usize;
        // The array is read to its end even after a difference, so that the verdict names
        // the first difference rather than the parser's complaint about unread text.
        let mut first = None;
        while let Some(got) = seq.next_element::<Record>()? {
            if first.is_none() && i < self.n {
                let mut want = gen.next_record();
                if let Some((at, x)) = self.edit {
                    if at == i {
                        want.x = x;
                    }
                }
                if got != want {
                    first = Some(format!("differs at /{i}: expected {want:?}, got {got:?}"));
                }
            }
            i += 1;
        }
        if let Some(why) = first {
            return Ok(Err(why));
        }
        if i != self.n {
            return Ok(Err(format!("{i} records, expected {}", self.n)));
        }
        Ok(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_json_checks_and_an_edit_is_seen() {
        let dir = std::env::temp_dir().join(format!("leafwire-bench-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        let (n, bytes) = write_json(&path, 10_000).unwrap();
        let text = std::fs::read(&path).unwrap();
        assert_eq!(text.len() as u64, bytes);
        assert!(check_json(&text, n, None).is_ok());
        assert!(check_json(&text, n + 1, None).is_err());
        let Err(Fail::Wrong(why)) = check_json(&text, n, Some((n / 2, 0.25))) else { panic!() };
        assert!(why.contains(&format!("/{}", n / 2)), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

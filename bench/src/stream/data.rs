//! The two kinds of stream: messages of n seeded doubles, and records of the shared JSON
//! files. A `Spec` names a dataset so that the receiving process can rebuild the very
//! messages the sender cycles through (for the check run's exact comparison).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::peer::Item;
use crate::harness::rng::Rng;

const SEED: u64 = 0x5742_EA3_2013;

/// The sender cycles through a pool of distinct messages of about this many payload bytes
/// (16 to 4,096 messages): more than the caches would hold of one message repeated, and
/// cheap to rebuild in the receiver.
const POOL_BYTES: usize = 1 << 20;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Spec {
    Doubles { n: usize },
    Records { name: String },
}

pub struct Dataset<I> {
    /// The report's dataset name: "n=64", "records: github_events".
    pub label: String,
    pub spec: Spec,
    pub items: Vec<I>,
    digests: Vec<u64>,
    /// Payload bytes of each item: 8 per double; a record's JSON line (with its newline).
    payload: Vec<u64>,
}

/// What a receiver must report for `count` messages, and the payload they carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub count: u64,
    pub checksum: u64,
    pub payload_bytes: u64,
}

impl<I: Item> Dataset<I> {
    fn new(label: String, spec: Spec, items: Vec<I>, payload: Vec<u64>) -> Dataset<I> {
        let digests = items.iter().map(Item::digest).collect();
        Dataset { label, spec, items, digests, payload }
    }

    /// The sender sends items 0, 1, …, M-1, 0, 1, … until it has sent `count`.
    pub fn expect(&self, count: u64) -> Expect {
        let m = self.items.len() as u64;
        let (cycles, rest) = (count / m, (count % m) as usize);
        let sum = |xs: &[u64]| xs.iter().fold(0u64, |a, &d| a.wrapping_add(d));
        Expect {
            count,
            checksum: sum(&self.digests).wrapping_mul(cycles).wrapping_add(sum(&self.digests[..rest])),
            payload_bytes: self.payload.iter().sum::<u64>() * cycles + self.payload[..rest].iter().sum::<u64>(),
        }
    }

    /// Mean payload bytes per message over one cycle.
    pub fn mean_payload(&self) -> f64 {
        self.payload.iter().sum::<u64>() as f64 / self.payload.len() as f64
    }
}

/// Messages of `n` doubles, uniform in ±10⁴ with all 53 bits (no format gets short
/// numbers for free; JSON writes 17 significant digits).
pub fn doubles(n: usize) -> Dataset<Vec<f64>> {
    let mut rng = Rng::new(SEED ^ n as u64);
    let m = (POOL_BYTES / (8 * n)).clamp(16, 4096);
    let items: Vec<Vec<f64>> = (0..m).map(|_| (0..n).map(|_| (rng.unit() - 0.5) * 2e4).collect()).collect();
    Dataset::new(format!("n={n}"), Spec::Doubles { n }, items, vec![8 * n as u64; m])
}

/// The corpus streams: arrays of records in the shared files, one record per JSON line.
/// (name, file, JSON Pointer of the array)
pub const RECORDS: &[(&str, &str, &str)] = &[
    ("github_events", "json/github_events.json", ""),
    ("twitter_statuses", "json/twitter.json", "/statuses"),
    ("random_users", "json/random.json", "/result"),
    ("decentraland_orders", crate::data::GRAPHQL, "/data/orders"),
];

/// The records of `name`, or why not (a missing file or array).
pub fn records(data_dir: &Path, name: &str) -> Result<Dataset<Value>, String> {
    let (_, rel, pointer) =
        RECORDS.iter().find(|(n, _, _)| *n == name).ok_or_else(|| format!("unknown records {name}"))?;
    let path = data_dir.join(rel);
    let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value = serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let items = match doc.pointer(pointer) {
        Some(Value::Array(items)) if !items.is_empty() => items.clone(),
        _ => return Err(format!("{}: no array of records at \"{pointer}\"", path.display())),
    };
    let payload = items.iter().map(|v| serde_json::to_vec(v).map(|t| t.len() as u64 + 1).unwrap_or(0)).collect();
    Ok(Dataset::new(format!("records: {name}"), Spec::Records { name: name.into() }, items, payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectation_follows_the_cycle() {
        let ds = doubles(512);
        let m = ds.items.len() as u64;
        for count in [0, 1, m - 1, m, m + 3, 5 * m + 7] {
            let mut sum = 0u64;
            for i in 0..count {
                sum = sum.wrapping_add(ds.items[(i % m) as usize].digest());
            }
            let e = ds.expect(count);
            assert_eq!((e.count, e.checksum, e.payload_bytes), (count, sum, count * 8 * 512));
        }
    }
}

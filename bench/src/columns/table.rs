//! The columns table (seed 000, Wisent): N rows × 100 f64 columns under a
//! JSON-like metadata tree: {"meta": {...}, "columns": {"c0": [...], ...}}.
//!
//! Column `PREDICATE` holds each of 0..256 exactly N/256 times (shuffled), so
//! `PREDICATE < k` keeps exactly k/256 of the rows.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::harness::rng::Rng;

pub const COLUMNS: usize = 100;
/// The column every task sums.
pub const VALUE: &str = "c42";
/// The column the filters test.
pub const PREDICATE: &str = "c7";
pub const SEED: u64 = 0x000_3157_E47;

pub fn column_name(i: usize) -> String {
    format!("c{i}")
}

#[derive(Serialize)]
pub struct ColumnMeta {
    pub name: String,
    pub unit: &'static str,
    pub description: String,
}

#[derive(Serialize)]
pub struct Source {
    pub generator: &'static str,
    pub seed: u64,
    pub version: u32,
}

#[derive(Serialize)]
pub struct Meta {
    pub name: &'static str,
    pub rows: u64,
    pub source: Source,
    pub tags: Vec<&'static str>,
    pub columns: Vec<ColumnMeta>,
}

pub struct Table {
    pub meta: Meta,
    pub columns: Vec<Vec<f64>>,
}

/// Serializes as {"meta": ..., "columns": {"c0": [...], ...}} for every serde peer.
impl Serialize for Table {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut root = s.serialize_map(Some(2))?;
        root.serialize_entry("meta", &self.meta)?;
        root.serialize_entry("columns", &Columns(&self.columns))?;
        root.end()
    }
}

struct Columns<'a>(&'a [Vec<f64>]);

impl Serialize for Columns<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (i, c) in self.0.iter().enumerate() {
            map.serialize_entry(&column_name(i), c.as_slice())?;
        }
        map.end()
    }
}

impl Table {
    /// `rows` must be a multiple of 256.
    pub fn generate(rows: usize) -> Table {
        assert!(rows % 256 == 0, "rows must be a multiple of 256 for exact selectivities");
        let mut rng = Rng::new(SEED ^ rows as u64);
        let predicate: usize = PREDICATE[1..].parse().expect("c<number>");
        let columns = (0..COLUMNS)
            .map(|i| {
                if i == predicate {
                    let mut v: Vec<f64> = (0..rows).map(|r| (r % 256) as f64).collect();
                    rng.shuffle(&mut v);
                    v
                } else {
                    (0..rows).map(|_| (rng.unit() - 0.5) * 2000.0).collect()
                }
            })
            .collect();
        let meta = Meta {
            name: "leafwire-bench columns",
            rows: rows as u64,
            source: Source { generator: "leafwire-bench", seed: SEED, version: 1 },
            tags: vec!["synthetic", "f64", "wide"],
            columns: (0..COLUMNS)
                .map(|i| ColumnMeta {
                    name: column_name(i),
                    unit: if i == predicate { "bucket" } else { "W" },
                    description: format!("column {i} of {COLUMNS}"),
                })
                .collect(),
        };
        Table { meta, columns }
    }

    pub fn column(&self, name: &str) -> &[f64] {
        &self.columns[name[1..].parse::<usize>().expect("c<number>")]
    }
}

/// One task: sum VALUE, optionally only where PREDICATE < k.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    pub below: Option<u32>,
}

impl Query {
    pub fn label(&self) -> String {
        match self.below {
            None => "sum".into(),
            Some(256) => "filter 1".into(),
            Some(k) => {
                let g = gcd(k, 256);
                format!("filter {}/{}", k / g, 256 / g)
            }
        }
    }

    pub fn arg(&self) -> String {
        self.below.map_or("all".into(), |k| k.to_string())
    }

    pub fn parse(arg: &str) -> Query {
        Query { below: if arg == "all" { None } else { Some(arg.parse().expect("k")) } }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The tasks: a plain sum, then selectivities 1/256, 1/16, 1/2 and 1.
pub const QUERIES: [Query; 5] = [
    Query { below: None },
    Query { below: Some(1) },
    Query { below: Some(16) },
    Query { below: Some(128) },
    Query { below: Some(256) },
];

/// The one summation every peer uses: in row order, so results must match
/// the reference bit for bit. `acc` carries the sum across chunks.
pub fn fold_where(acc: f64, pairs: impl Iterator<Item = (f64, f64)>, q: Query) -> f64 {
    match q.below {
        None => pairs.fold(acc, |acc, (v, _)| acc + v),
        Some(k) => {
            let k = k as f64;
            pairs.fold(acc, |acc, (v, p)| if p < k { acc + v } else { acc })
        }
    }
}

pub fn sum_where(pairs: impl Iterator<Item = (f64, f64)>, q: Query) -> f64 {
    fold_where(0.0, pairs, q)
}

pub fn sum_slices(value: &[f64], predicate: Option<&[f64]>, q: Query) -> f64 {
    match predicate {
        Some(p) => sum_where(value.iter().copied().zip(p.iter().copied()), q),
        None => sum_where(value.iter().map(|&v| (v, 0.0)), q),
    }
}

/// Reference answer, from the table in memory.
pub fn reference(t: &Table, q: Query) -> f64 {
    sum_slices(t.column(VALUE), q.below.map(|_| t.column(PREDICATE)), q)
}

//! The workbook of Criteo's study (seed 004): pages of tables whose rows are
//! indexed by a string key, with one column per cell type: String, f64,
//! Vec<f64>, map<i32, f64>, map<i32, Vec<f64>>. Generated from a seed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::harness::rng::Rng;

#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq)]
pub struct Workbook {
    pub pages: Vec<Page>,
}

#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq)]
pub struct Page {
    pub name: String,
    pub rows: Vec<Row>,
}

#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub value: f64,
    pub values: Vec<f64>,
    pub weights: BTreeMap<i32, f64>,
    pub series: BTreeMap<i32, Vec<f64>>,
}

/// How big the collections are.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub name: &'static str,
    pub pages: usize,
    pub rows: usize,
    /// Inclusive range of list lengths and map sizes.
    pub items: (u64, u64),
    /// Inclusive range of the number of keys in `series`.
    pub series_keys: (u64, u64),
}

/// Criteo's "small objects": every collection under 10 items.
pub const SMALL: Shape = Shape { name: "small", pages: 3, rows: 5, items: (1, 9), series_keys: (1, 9) };
/// Criteo's "big objects": lists of many hundreds of items.
pub const BIG: Shape = Shape { name: "big", pages: 4, rows: 50, items: (100, 300), series_keys: (5, 15) };

fn doubles(rng: &mut Rng, (lo, hi): (u64, u64)) -> Vec<f64> {
    let n = rng.range(lo, hi);
    (0..n).map(|_| (rng.unit() - 0.5) * 2e4).collect()
}

pub fn generate(shape: Shape, seed: u64) -> Workbook {
    let mut rng = Rng::new(seed);
    let pages = (0..shape.pages)
        .map(|p| Page {
            name: format!("page-{p}-{}", rng.word(6)),
            rows: (0..shape.rows)
                .map(|_| {
                    let len = rng.range(8, 16) as usize;
                    let n_weights = rng.range(shape.items.0, shape.items.1);
                    let n_series = rng.range(shape.series_keys.0, shape.series_keys.1);
                    Row {
                        key: rng.word(12),
                        label: rng.word(len),
                        value: (rng.unit() - 0.5) * 2e6,
                        values: doubles(&mut rng, shape.items),
                        weights: (0..n_weights).map(|_| (rng.below(100_000) as i32, rng.unit())).collect(),
                        series: (0..n_series)
                            .map(|_| (rng.below(1_000) as i32, doubles(&mut rng, shape.items)))
                            .collect(),
                    }
                })
                .collect(),
        })
        .collect();
    Workbook { pages }
}

//! Profiling aid: serde to_vec of a small and a big workbook-like struct N times.
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
struct Cell { id: u64, name: String, values: Vec<f64>, tags: Vec<String>, attrs: BTreeMap<i64, f64>, flag: bool, note: Option<String> }
#[derive(Serialize)]
struct Page { title: String, index: u32, cells: Vec<Cell> }
#[derive(Serialize)]
struct Book { name: String, pages: Vec<Page>, meta: BTreeMap<String, String> }

fn book(pages: usize, rows: usize, items: usize) -> Book {
    Book {
        name: "workbook".into(),
        meta: (0..items).map(|i| (format!("k{i}"), format!("v{i}"))).collect(),
        pages: (0..pages).map(|p| Page { title: format!("page {p}"), index: p as u32, cells: (0..rows).map(|r| Cell {
            id: (p * 1000 + r) as u64, name: format!("cell {r}"), values: (0..items).map(|i| i as f64 * 0.5).collect(),
            tags: (0..items).map(|i| format!("t{i}")).collect(), attrs: (0..items as i64).map(|i| (i, i as f64)).collect(),
            flag: r % 2 == 0, note: (r % 3 == 0).then(|| "n".into()) }).collect() }).collect(),
    }
}

fn main() {
    let big = std::env::args().nth(1).as_deref() == Some("big");
    let n: usize = std::env::args().nth(2).map_or(1000, |v| v.parse().unwrap());
    let b = if big { book(20, 500, 20) } else { book(3, 5, 5) };
    let mut total = 0;
    for _ in 0..n { total += leafwire::to_vec(&b).unwrap().len(); }
    println!("{total}");
}

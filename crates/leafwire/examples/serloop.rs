//! Profiling aid: serde to_vec of a small and a big workbook-like struct, or of a
//! GraphQL-response-like struct (strings and nested records, as the bench's `graphql`
//! model), N times (`graphql-json`: the same records as a `serde_json::Value`);
//! `graphql-de`, `small-de`, `big-de` deserialize those structs N times;
//! `criteo` serializes and `criteo-de` deserializes the bench's small workbook model
//! (Criteo's, seed 004) N times (`criteo-big`, `criteo-big-de`: its big size); `geojson` and `geojson-de` do the same with the bench's
//! countries model, read from the file the `GEOJSON` variable names (`geojson-packed` and
//! `geojson-packed-de`: packed, with `to_vec_packed` and `from_slice_owned`); `graphql-packed` and
//! `graphql-packed-de` do so with the GraphQL orders of the file the `GRAPHQL` variable names
//! (`graphql-file` and `graphql-file-de`: the same orders, not packed).
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Serialize, Deserialize)]
struct Cell { id: u64, name: String, values: Vec<f64>, tags: Vec<String>, attrs: BTreeMap<i64, f64>, flag: bool, note: Option<String> }
#[derive(Serialize, Deserialize)]
struct Page { title: String, index: u32, cells: Vec<Cell> }
#[derive(Serialize, Deserialize)]
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

/// The bench's workbook model (bench/src/workbook/model.rs), at its small size.
#[derive(Serialize, Deserialize)]
struct Workbook { pages: Vec<WbPage> }
#[derive(Serialize, Deserialize)]
struct WbPage { name: String, rows: Vec<WbRow> }
#[derive(Serialize, Deserialize)]
struct WbRow { key: String, label: String, value: f64, values: Vec<f64>, weights: BTreeMap<i32, f64>, series: BTreeMap<i32, Vec<f64>> }

fn criteo_small() -> Workbook {
    let doubles = |n: usize| (0..n).map(|i| (i as f64 - 4.5) * 1234.567).collect::<Vec<f64>>();
    Workbook {
        pages: (0..3).map(|p| WbPage { name: format!("page-{p}-abcdef"), rows: (0..5).map(|r| {
            let n = 1 + (p * 5 + r) % 9;
            WbRow { key: format!("key{r:09}"), label: format!("label of row {r}"), value: r as f64 * 1e5 + 0.25,
                values: doubles(n), weights: (0..n as i32).map(|k| (k * 7919, k as f64 / 9.0)).collect(),
                series: (0..n as i32).map(|k| (k * 31, doubles(1 + k as usize))).collect() }
        }).collect() }).collect(),
    }
}

/// The bench's workbook model at its big size (4 pages of 50 rows, lists and maps of
/// 100-300 random doubles, 5-15 series), from a small xorshift generator.
fn criteo_big() -> Workbook {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || { state ^= state << 13; state ^= state >> 7; state ^= state << 17; state };
    let range = |lo: u64, hi: u64, next: &mut dyn FnMut() -> u64| lo + next() % (hi - lo + 1);
    let unit = |next: &mut dyn FnMut() -> u64| (next() >> 11) as f64 / (1u64 << 53) as f64;
    let doubles = |next: &mut dyn FnMut() -> u64| {
        let n = range(100, 300, next);
        (0..n).map(|_| (unit(next) - 0.5) * 2e4).collect::<Vec<f64>>()
    };
    Workbook {
        pages: (0..4).map(|p| WbPage { name: format!("page-{p}-abcdef"), rows: (0..50).map(|r| {
            let n_weights = range(100, 300, &mut next);
            let n_series = range(5, 15, &mut next);
            WbRow { key: format!("key{r:09}"), label: format!("label of row {r}"), value: (unit(&mut next) - 0.5) * 2e6,
                values: doubles(&mut next),
                weights: (0..n_weights).map(|_| ((next() % 100_000) as i32, unit(&mut next))).collect(),
                series: (0..n_series).map(|_| ((next() % 1_000) as i32, doubles(&mut next))).collect() }
        }).collect() }).collect(),
    }
}

/// The shapes of the bench's GraphQL model (bench/src/trees/model.rs).
#[derive(Serialize, Deserialize)]
struct GraphQl { data: Data }
#[derive(Serialize, Deserialize)]
struct Data { count: Count, orders: Vec<Order> }
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Count { id: String, order_total: u64, wearable_total: u64 }
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Order { created_at: String, nft: Nft, price: String, status: String }
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Nft { bids: Vec<Bid>, search_is_land: bool, search_is_wearable_accessory: bool, search_text: String, wearable: Wearable }
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Bid { bidder: String, block_number: String, status: String }
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wearable { body_shapes: Vec<String>, category: String, collection: String, name: String, owner: Owner, rarity: String, representation_id: String }
#[derive(Serialize, Deserialize)]
struct Owner { mana: String }

fn graphql(orders: usize) -> GraphQl {
    let addr = |i: usize| format!("0x{:040x}", i * 7919);
    GraphQl {
        data: Data {
            count: Count { id: "all".into(), order_total: 123456, wearable_total: 98765 },
            orders: (0..orders).map(|i| Order {
                created_at: format!("{}", 1_600_000_000 + i * 37),
                nft: Nft {
                    bids: (0..i % 3).map(|b| Bid { bidder: addr(i + b), block_number: format!("{}", 9_000_000 + i), status: "open".into() }).collect(),
                    search_is_land: i % 5 == 0,
                    search_is_wearable_accessory: i % 2 == 0,
                    search_text: format!("wearable item number {i}"),
                    wearable: Wearable {
                        body_shapes: vec!["BaseMale".into(), "BaseFemale".into()],
                        category: "upper_body".into(),
                        collection: addr(i % 17),
                        name: format!("Item {i}"),
                        owner: Owner { mana: format!("{}", i * 1000) },
                        rarity: ["common", "rare", "epic"][i % 3].into(),
                        representation_id: format!("urn:item:{i}"),
                    },
                },
                price: format!("{}000000000000000000", i % 90 + 1),
                status: "open".into(),
            }).collect(),
        },
    }
}

/// The shapes of the bench's GeoJSON model (bench/src/trees/model.rs).
#[derive(Serialize, Deserialize)]
struct FeatureCollection { #[serde(rename = "type")] kind: String, features: Vec<Feature> }
#[derive(Serialize, Deserialize)]
struct Feature { #[serde(rename = "type")] kind: String, properties: Properties, geometry: Geometry }
#[allow(non_snake_case)]
#[derive(Serialize, Deserialize)]
struct Properties { ADMIN: String, ISO_A3: String, ISO_A2: String }
#[derive(Serialize, Deserialize)]
struct Geometry { #[serde(rename = "type")] kind: String, coordinates: Vec<Vec<Vec<(f64, f64)>>> }

/// The countries GeoJSON (bench/data), from the file named by the `GEOJSON` variable.
fn countries() -> FeatureCollection {
    let path = std::env::var("GEOJSON").expect("GEOJSON names the countries file");
    serde_json::from_slice(&std::fs::read(path).expect("readable")).expect("a FeatureCollection")
}

/// The GraphQL orders (bench/data), from the file named by the `GRAPHQL` variable.
fn graphql_file() -> GraphQl {
    let path = std::env::var("GRAPHQL").expect("GRAPHQL names the orders file");
    serde_json::from_slice(&std::fs::read(path).expect("readable")).expect("GraphQL orders")
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let n: usize = std::env::args().nth(2).map_or(1000, |v| v.parse().unwrap());
    let mut total = 0;
    if mode == "small-de" || mode == "big-de" {
        let bytes = leafwire::to_vec(&if mode == "big-de" { book(20, 500, 20) } else { book(3, 5, 5) }).unwrap();
        for _ in 0..n { total += leafwire::from_slice::<Book>(&bytes).unwrap().pages.len(); }
    } else if mode == "criteo-de" {
        let bytes = leafwire::to_vec(&criteo_small()).unwrap();
        for _ in 0..n { total += leafwire::from_slice::<Workbook>(&bytes).unwrap().pages.len(); }
    } else if mode == "criteo-big-de" {
        let bytes = leafwire::to_vec(&criteo_big()).unwrap();
        for _ in 0..n { total += leafwire::from_slice::<Workbook>(&bytes).unwrap().pages.len(); }
    } else if mode == "criteo-big" {
        let w = criteo_big();
        for _ in 0..n { total += leafwire::to_vec(&w).unwrap().len(); }
    } else if mode == "graphql-de" {
        let bytes = leafwire::to_vec(&graphql(100)).unwrap();
        for _ in 0..n { total += leafwire::from_slice::<GraphQl>(&bytes).unwrap().data.orders.len(); }
    } else if mode == "criteo" {
        let w = criteo_small();
        for _ in 0..n { total += leafwire::to_vec(&w).unwrap().len(); }
    } else if mode == "graphql-json" {
        // The same records as a `serde_json::Value`: maps with string keys, not structs.
        let v = serde_json::to_value(graphql(100)).unwrap();
        for _ in 0..n { total += leafwire::to_vec(&v).unwrap().len(); }
    } else if mode == "geojson" {
        let c = countries();
        for _ in 0..n { total += leafwire::to_vec(&c).unwrap().len(); }
    } else if mode == "geojson-packed" {
        let c = countries();
        let options = leafwire::PackOptions::default();
        for _ in 0..n { total += leafwire::to_vec_packed(&c, &options).unwrap().len(); }
    } else if mode == "geojson-packed-de" {
        let bytes = leafwire::to_vec_packed(&countries(), &leafwire::PackOptions::default()).unwrap();
        for _ in 0..n { total += leafwire::from_slice_owned::<FeatureCollection>(&bytes).unwrap().features.len(); }
    } else if mode == "graphql-packed-de" {
        let bytes = leafwire::to_vec_packed(&graphql_file(), &leafwire::PackOptions::default()).unwrap();
        for _ in 0..n { total += leafwire::from_slice_owned::<GraphQl>(&bytes).unwrap().data.orders.len(); }
    } else if mode == "graphql-file-de" {
        let bytes = leafwire::to_vec(&graphql_file()).unwrap();
        for _ in 0..n { total += leafwire::from_slice::<GraphQl>(&bytes).unwrap().data.orders.len(); }
    } else if mode == "graphql-file" {
        let g = graphql_file();
        for _ in 0..n { total += leafwire::to_vec(&g).unwrap().len(); }
    } else if mode == "graphql-packed" {
        let g = graphql_file();
        let options = leafwire::PackOptions::default();
        for _ in 0..n { total += leafwire::to_vec_packed(&g, &options).unwrap().len(); }
    } else if mode == "geojson-de" {
        let bytes = leafwire::to_vec(&countries()).unwrap();
        for _ in 0..n { total += leafwire::from_slice::<FeatureCollection>(&bytes).unwrap().features.len(); }
    } else if mode == "graphql" {
        let g = graphql(100);
        for _ in 0..n { total += leafwire::to_vec(&g).unwrap().len(); }
    } else {
        let b = if mode == "big" { book(20, 500, 20) } else { book(3, 5, 5) };
        for _ in 0..n { total += leafwire::to_vec(&b).unwrap().len(); }
    }
    println!("{total}");
}

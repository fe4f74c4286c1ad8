//! A quick, self-contained timing pass over the shared corpus, for development:
//! `cargo run --release -p leafwire --example quick`. The published comparisons with
//! other formats come from `bench/`; this only tracks Leafwire against serde_json and
//! plain Rust loops, side by side in one run (medians of batches).

use std::hint::black_box;
use std::time::Instant;

const POINTERS: &[(&str, &str)] = &[
    ("json/canada.json", "/features/0/geometry/coordinates/240/9/1"),
    ("json/citm_catalog.json", "/performances/100/seatCategories/0/areas/0/areaId"),
    ("json/github_events.json", "/15/org/avatar_url"),
    ("json/mesh.json", "/influences/1800/1"),
    ("json/numbers.json", "/5000"),
    ("json/random.json", "/result/500/friends/1/name"),
    ("json/twitter.json", "/statuses/50/user/screen_name"),
    ("json/update-center.json", "/plugins/git/dependencies/0/name"),
    ("graphql/decentraland_marketplace_orders.json", "/data/orders/500/nft/wearable/owner/mana"),
];

/// Median time per call in nanoseconds, over batches sized to take ~2 ms each.
fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let start = Instant::now();
    black_box(f());
    let once = start.elapsed().as_nanos().max(1) as f64;
    let per_batch = ((2e6 / once) as usize).clamp(1, 1_000_000);
    let mut samples: Vec<f64> = (0..21)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per_batch {
                black_box(f());
            }
            t.elapsed().as_nanos() as f64 / per_batch as f64
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[samples.len() / 2]
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    println!("{:<38} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}", "file", "ptr ns", "j2lw/sj", "lw2j/sj", "dec/sj", "enc/sj", "open ns", "size");
    for (file, pointer) in POINTERS {
        let text = std::fs::read(root.join(file)).unwrap();
        let bytes = leafwire::json::from_json(&text).unwrap();
        let aligned = leafwire::AlignedBytes::new(&bytes);
        let sj: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let value = leafwire::decode(&bytes).unwrap();
        let doc = leafwire::Document::open(&aligned).unwrap();
        let ptr = time(|| doc.pointer(black_box(pointer)).unwrap().kind());
        let open = time(|| leafwire::Document::open(black_box(&aligned)).unwrap().key_count());
        let sj_parse = time(|| serde_json::from_slice::<serde_json::Value>(&text).unwrap());
        let j2lw = time(|| leafwire::json::from_json(&text).unwrap());
        let sj_write = time(|| serde_json::to_vec(&sj).unwrap());
        let lw2j = time(|| leafwire::json::to_json(&aligned).unwrap());
        let dec = time(|| leafwire::decode(&aligned).unwrap());
        let enc = time(|| leafwire::encode(&value).unwrap());
        let name = file.rsplit('/').next().unwrap();
        println!(
            "{name:<38} {ptr:>9.1} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {open:>9.1} {:>8}",
            j2lw / sj_parse, lw2j / sj_write, dec / sj_parse, enc / sj_write, bytes.len()
        );
    }
    // Column sum: an f64 typed array read in place against a plain Vec<f64>.
    let n = 4_000_000;
    let column: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 0.5).collect();
    let mut map = leafwire::Map::default();
    map.insert("meta".into(), leafwire::Value::String("column test".into()));
    map.insert("c".into(), leafwire::Value::Typed(leafwire::TypedArray::new(leafwire::TypedData::F64(column.clone()))));
    let bytes = leafwire::AlignedBytes::new(&leafwire::encode(&leafwire::Value::Object(map)).unwrap());
    let vec_sum = time(|| black_box(&column).iter().sum::<f64>());
    let doc = leafwire::Document::open(&bytes).unwrap();
    let lw_sum = time(|| doc.pointer("/c").unwrap().as_slice::<f64>().unwrap().iter().sum::<f64>());
    println!("sum of {n} f64: Vec {:.2} ms, leafwire {:.2} ms, ratio {:.3}", vec_sum / 1e6, lw_sum / 1e6, lw_sum / vec_sum);
}

//! The size sanity check of the codec layer on the bench data (packed.md §7), ignored by
//! default: `cargo test --release -p leafwire --lib packed::sizes -- --ignored --nocapture`.

use super::float::decode_floats;
use super::string::decode_strings;
use super::tests::same_bits;
use super::{select, Limits};

fn page_sizes_floats(col: &[f64], lossy: Option<i8>, zstd: Option<i32>) -> usize {
    let mut total = 0;
    for page in col.chunks(4096) {
        let mut out = Vec::new();
        select::write_floats(page, lossy, &mut out).unwrap();
        if let Some(level) = zstd {
            let wrapped = super::zstd_stage::wrap(out.clone(), level);
            let back =
                super::decode_page(&wrapped, 0, wrapped.len(), page.len(), super::PageKind::Floats, &Limits::default())
                    .unwrap();
            assert!(matches!(back, super::PageValues::Floats(_)));
            total += wrapped.len() + 4;
            continue;
        }
        let (back, _) = decode_floats(&out, 0, page.len(), &Limits::default()).unwrap();
        if lossy.is_none() {
            assert!(same_bits(&back, page));
        }
        total += out.len() + 4; // plus a page directory entry, as the estimate counts
    }
    total
}

fn collect_pairs(v: &serde_json::Value, xs: &mut Vec<f64>, ys: &mut Vec<f64>) {
    if let Some(a) = v.as_array() {
        if a.len() == 2 && a.iter().all(|x| x.is_number()) {
            xs.push(a[0].as_f64().unwrap());
            ys.push(a[1].as_f64().unwrap());
        } else {
            for x in a {
                collect_pairs(x, xs, ys);
            }
        }
    }
}

#[test]
#[ignore = "reads ../shared/data; prints bytes per value for packed.md §7"]
fn size_sanity_on_bench_data() {
    use std::io::Read;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../../shared/data");
    let root = if std::path::Path::new(root).exists() { root.to_string() } else { "/work/shared/data".to_string() };
    let gz = std::fs::read(format!("{root}/geojson/countries.geojson.gz")).unwrap();
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut text).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for f in doc["features"].as_array().unwrap() {
        collect_pairs(&f["geometry"]["coordinates"], &mut xs, &mut ys);
    }
    let t = std::time::Instant::now();
    let (bx, by) = (page_sizes_floats(&xs, None, None), page_sizes_floats(&ys, None, None));
    let secs = t.elapsed().as_secs_f64();
    let n = xs.len() + ys.len();
    println!(
        "countries coordinates: {} values, lossless {} + {} = {} B, {:.3} B/value ({secs:.2} s)",
        n,
        bx,
        by,
        bx + by,
        (bx + by) as f64 / n as f64
    );
    for level in [3, 19] {
        let z = page_sizes_floats(&xs, None, Some(level)) + page_sizes_floats(&ys, None, Some(level));
        println!(
            "countries coordinates lossless + zstd stage (level {level}): {z} B, {:.3} B/value",
            z as f64 / n as f64
        );
    }
    let (lx, ly) = (page_sizes_floats(&xs, Some(-12), None), page_sizes_floats(&ys, Some(-12), None));
    println!("countries coordinates lossy 2^-12: {} B, {:.3} B/value", lx + ly, (lx + ly) as f64 / n as f64);
    let lz = page_sizes_floats(&xs, Some(-12), Some(19)) + page_sizes_floats(&ys, Some(-12), Some(19));
    println!("countries coordinates lossy 2^-12 + zstd stage (19): {lz} B");
    let t = std::time::Instant::now();
    let mut pages = Vec::new();
    for col in [&xs, &ys] {
        for page in col.chunks(4096) {
            let mut out = Vec::new();
            select::write_floats(page, None, &mut out).unwrap();
            pages.push((out, page.len()));
        }
    }
    let enc = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let mut decoded = 0;
    for (out, len) in &pages {
        decoded += decode_floats(out, 0, *len, &Limits::default()).unwrap().0.len();
    }
    let dec = t.elapsed().as_secs_f64();
    println!(
        "(coordinates: encode {:.1} M values/s, decode {:.1} M values/s over {decoded} values)",
        decoded as f64 / enc / 1e6,
        decoded as f64 / dec / 1e6
    );

    let text = std::fs::read(format!("{root}/graphql/decentraland_marketplace_orders.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let orders = doc["data"]["orders"].as_array().unwrap();
    let bidders: Vec<String> = orders
        .iter()
        .flat_map(|o| o["nft"]["bids"].as_array().cloned().unwrap_or_default())
        .filter_map(|b| b["bidder"].as_str().map(str::to_owned))
        .collect();
    let mut total = 0;
    for field in [
        "/price",
        "/createdAt",
        "/status",
        "/nft/searchText",
        "/nft/wearable/name",
        "/nft/wearable/representationId",
        "/nft/wearable/owner/mana",
        "bids[].bidder",
    ] {
        let col: Vec<String> = if field == "bids[].bidder" {
            bidders.clone()
        } else {
            orders.iter().filter_map(|o| o.pointer(field).and_then(|v| v.as_str()).map(str::to_owned)).collect()
        };
        if col.is_empty() {
            continue;
        }
        let mut out = Vec::new();
        select::write_strings(&col, 0, true, true, &mut out).unwrap();
        assert_eq!(decode_strings(&out, 0, col.len(), &Limits::default()).unwrap().0, col);
        let raw: usize = col.iter().map(|s| s.len()).sum();
        total += out.len();
        println!(
            "graphql orders[]{field}: {} values, {} B of text → {} B ({:.3} B/value, codec 0x{:02x})",
            col.len(),
            raw,
            out.len(),
            out.len() as f64 / col.len() as f64,
            out[0]
        );
    }
    println!("graphql string columns above: {total} B");
}

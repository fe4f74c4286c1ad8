//! The README demo: a leafy tree (metadata around big numeric columns) generated here,
//! converted from JSON, written to a file, then opened lazily from a memory map. It prints
//! sizes and times next to doing the same with JSON (serde_json).
//!
//! `cargo run --release -p leafwire --example demo [ROWS]`

use std::hint::black_box;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows: usize = std::env::args().nth(1).map(|r| r.parse()).transpose()?.unwrap_or(500_000);
    let json = generate(rows);
    let dir = std::env::temp_dir().join(format!("leafwire-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("stations.lw");

    let t = Instant::now();
    let bytes = leafwire::json::from_json(json.as_bytes())?;
    let convert = t.elapsed();
    std::fs::write(&path, &bytes)?;

    // Lazy: map the file, open (header only), follow one pointer, sum one column in place.
    let t = Instant::now();
    // SAFETY: the demo wrote this file above and nothing else touches it.
    let file = unsafe { leafwire::MappedFile::open(&path) }?;
    let doc = file.document()?;
    let open = t.elapsed();
    let pointer = "/stations/3/sensors/2/calibration/offset";
    let t = Instant::now();
    let offset = doc.pointer(pointer)?.as_f64()?;
    let lookup = t.elapsed();
    let t = Instant::now();
    let column = doc.pointer("/columns/temperature")?.as_slice::<f64>()?;
    let lw_sum: f64 = column.iter().sum();
    let lw_sum_time = t.elapsed();

    // The JSON way: parse everything, then do the same.
    let t = Instant::now();
    let parsed: serde_json::Value = serde_json::from_str(&json)?;
    let parse = t.elapsed();
    let json_offset = parsed.pointer(pointer).and_then(|v| v.as_f64()).ok_or("missing")?;
    let json_sum: f64 = parsed["columns"]["temperature"].as_array().ok_or("missing")?.iter().map(|v| v.as_f64().unwrap()).sum();
    assert_eq!(offset, json_offset);
    assert_eq!(lw_sum, json_sum, "both formats must agree to the last bit");

    let stats = leafwire::validate(&bytes)?;
    println!("Leafwire demo: {rows} rows × 6 columns inside station metadata\n");
    println!("{:<44} {:>14} {:>14}", "", "JSON", "Leafwire");
    println!("{:<44} {:>14} {:>14}", "size (bytes)", json.len(), bytes.len());
    println!("{:<44} {:>14} {:>14}", "parse everything / open the mapped file", fmt(parse), fmt(open));
    println!("{:<44} {:>14} {:>14}", format!("then read {pointer}"), "(in the parse)", fmt(lookup));
    println!("{:<44} {:>14} {:>14}", "then sum /columns/temperature", "(in the parse)", fmt(lw_sum_time));
    println!();
    println!("JSON → Leafwire conversion: {} ({:.0} MB/s)", fmt(convert), json.len() as f64 / convert.as_secs_f64() / 1e6);
    println!("offset = {offset}, sum of temperature = {lw_sum:.3} (equal in both)");
    println!("document: {} containers, {} typed arrays, {} distinct keys", stats.containers, stats.typed_arrays, stats.keys);
    println!("file: {}", path.display());
    black_box(column);
    Ok(())
}

const SENSORS: [&str; 4] = ["temperature", "humidity", "pressure", "wind"];

/// JSON text of weather stations with metadata and six numeric columns.
fn generate(rows: usize) -> String {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let stations: Vec<serde_json::Value> = (0..8)
        .map(|i| {
            serde_json::json!({
                "id": format!("ST-{i:03}"),
                "location": {"lat": 47.0 + i as f64 * 0.25, "lon": 8.5 - i as f64 * 0.125, "elevation_m": 400 + i * 37},
                "sensors": (0..4).map(|s| serde_json::json!({
                    "kind": SENSORS[s],
                    "calibration": {"offset": (i * 4 + s) as f64 * 0.01 + 0.005, "scale": 1.0 + s as f64 * 0.001},
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut column = |scale: f64, base: f64| -> Vec<f64> { (0..rows).map(|_| ((base + scale * next()) * 1000.0).round() / 1000.0 + 0.0005).collect() };
    let doc = serde_json::json!({
        "title": "Synthetic hourly station readings",
        "license": "CC0-1.0",
        "stations": stations,
        "columns": {
            "temperature": column(30.0, -5.0),
            "humidity": column(60.0, 30.0),
            "pressure": column(40.0, 990.0),
            "wind_speed": column(20.0, 0.0),
            "wind_direction": column(360.0, 0.0),
            "rain_mm": column(5.0, 0.0),
        },
    });
    serde_json::to_string(&doc).unwrap()
}

fn fmt(d: std::time::Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.1} ms", ns / 1e6)
    }
}

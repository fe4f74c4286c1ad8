//! The shared data files (see /work/shared/data/README.md).

use std::io::Read;
use std::path::Path;

pub const GRAPHQL: &str = "graphql/decentraland_marketplace_orders.json";
pub const COUNTRIES: &str = "geojson/countries.geojson.gz";

pub fn read(data_dir: &Path, rel: &str) -> Vec<u8> {
    let path = data_dir.join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    if rel.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("gunzip {}: {e}", path.display()));
        out
    } else {
        bytes
    }
}

/// The display name of a data file: its file name without ".gz".
pub fn name(rel: &str) -> String {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    file.trim_end_matches(".gz").to_string()
}

/// Every file of the corpus workload, as relative paths, in a fixed order.
pub fn corpus_files(data_dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(data_dir.join("json"))
        .unwrap_or_else(|e| panic!("list {}/json: {e}", data_dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .map(|n| format!("json/{n}"))
        .collect();
    files.sort();
    files.push(GRAPHQL.into());
    files.push(COUNTRIES.into());
    // For working on one file's rows: never set for published numbers.
    if let Ok(only) = std::env::var("BENCH_CORPUS_FILES") {
        let wanted: Vec<&str> = only.split(',').collect();
        files.retain(|f| wanted.contains(&name(f).as_str()));
    }
    files
}

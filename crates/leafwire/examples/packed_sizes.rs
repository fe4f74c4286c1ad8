//! Packed sizes against zstd of the compact JSON (issue #12's "general" check):
//! `cargo run --release -p leafwire --example packed_sizes -- FILE.json...` prints, per
//! file, the compact JSON, zstd -3 of it, and `from-json --packed` without and with the
//! zstd stage at levels 3 and 19, as a Markdown table; "≤ zstd -3" says whether the packed file
//! is no larger than zstd -3 of the compact JSON. Every packed file is checked to read
//! back as the JSON before its size is reported.

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: packed_sizes FILE.json...");
        std::process::exit(2);
    }
    println!("| file | compact JSON | zstd -3 | packed | packed, zstd 3 | packed, zstd 19 | ≤ zstd -3 (packed / with zstd 3) |");
    println!("|---|---:|---:|---:|---:|---:|---|");
    for path in files {
        let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let value = leafwire::json::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        // The compact JSON is Leafwire's own writing of the value: exact, where a serde_json
        // `Value` turns integers beyond u64 into floats (a file of bignums compacted to a
        // third of its digits, and a zstd bound it could never be held to).
        let expected = leafwire::json::to_json(&leafwire::encode(&value).expect("encodes")).expect("converts");
        let compact = expected.as_bytes();
        let zstd3 = zstd::bulk::compress(compact, 3).expect("compresses").len();
        let packed_len = |zstd_level: Option<i32>| {
            let options = leafwire::PackOptions { zstd_level, lossy_step: None, ..Default::default() };
            let packed = leafwire::encode_packed(&value, &options).expect("packs");
            assert_eq!(leafwire::json::to_json(&packed).expect("reads back"), expected, "{path}: round trip");
            packed.len()
        };
        let (plain, with_zstd, archival) = (packed_len(None), packed_len(Some(3)), packed_len(Some(19)));
        let fits = |n: usize| if n <= zstd3 { "yes" } else { "no" };
        let name = std::path::Path::new(&path).file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "| {name} | {} | {zstd3} | {plain} | {with_zstd} | {archival} | {} / {} |",
            compact.len(),
            fits(plain),
            fits(with_zstd)
        );
    }
}

//! Profiling aid: resolves one JSON Pointer in a loop (`perf record` or callgrind target).
//! `OPEN=1` opens the document in every iteration too, as the corpus bench's lookup does;
//! `PREPARED=1` resolves a `Pointer` parsed once instead of the text.
fn main() {
    let mut args = std::env::args().skip(1);
    let (path, pointer) = (args.next().unwrap(), args.next().unwrap());
    let bytes = leafwire::AlignedBytes::new(&leafwire::json::from_json(&std::fs::read(path).unwrap()).unwrap());
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000_000);
    let reopen = std::env::var("OPEN").is_ok_and(|v| v == "1");
    let prepared = std::env::var("PREPARED").is_ok_and(|v| v == "1");
    let parsed = leafwire::Pointer::parse(&pointer).unwrap();
    let lookup = |doc: &leafwire::Document<'_>| -> leafwire::Result<()> {
        if prepared { doc.resolve(std::hint::black_box(&parsed)).map(|n| { std::hint::black_box(n.kind()); }) } else { doc.pointer(std::hint::black_box(&pointer)).map(|n| { std::hint::black_box(n.kind()); }) }
    };
    let doc = leafwire::Document::open(&bytes).unwrap();
    let t = std::time::Instant::now();
    let mut acc = 0usize;
    for _ in 0..n {
        acc += if reopen {
            let doc = leafwire::Document::open(std::hint::black_box(&bytes)).unwrap();
            { lookup(&doc).unwrap(); 1 }
        } else {
            { lookup(&doc).unwrap(); 1 }
        };
    }
    println!("{:.1} ns per lookup ({acc})", t.elapsed().as_nanos() as f64 / n as f64);
}

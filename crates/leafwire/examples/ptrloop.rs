//! Profiling aid: resolves one JSON Pointer in a loop (`perf record` target).
fn main() {
    let mut args = std::env::args().skip(1);
    let (path, pointer) = (args.next().unwrap(), args.next().unwrap());
    let bytes = leafwire::AlignedBytes::new(&leafwire::json::from_json(&std::fs::read(path).unwrap()).unwrap());
    let doc = leafwire::Document::open(&bytes).unwrap();
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000_000);
    let t = std::time::Instant::now();
    let mut acc = 0usize;
    for _ in 0..n {
        acc += doc.pointer(std::hint::black_box(&pointer)).unwrap().kind() as usize;
    }
    println!("{:.1} ns per lookup ({acc})", t.elapsed().as_nanos() as f64 / n as f64);
}

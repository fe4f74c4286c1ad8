//! Profiling aid: serde decode of many (f64, f64) pairs (typed rows), N times.
fn main() {
    let n: usize = std::env::args().nth(1).map_or(10, |v| v.parse().unwrap());
    let rings: Vec<Vec<Vec<(f64, f64)>>> =
        vec![(0..100).map(|r| (0..3000).map(|i| (i as f64 * 0.25 + r as f64, -(i as f64) * 0.5)).collect()).collect()];
    let doc = leafwire::to_vec(&rings).unwrap();
    let mut total = 0usize;
    for _ in 0..n {
        let back: Vec<Vec<Vec<(f64, f64)>>> = leafwire::from_slice(std::hint::black_box(&doc)).unwrap();
        total += back[0].len();
    }
    println!("{total}");
}

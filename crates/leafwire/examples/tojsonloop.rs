//! Profiling aid: writes one converted file back as JSON N times.
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args().nth(2).map_or(10, |v| v.parse().unwrap());
    let bytes = leafwire::AlignedBytes::new(&leafwire::json::from_json(&std::fs::read(path).unwrap()).unwrap());
    let mut total = 0;
    for _ in 0..n {
        total += leafwire::json::to_json(&bytes).unwrap().len();
    }
    println!("{total}");
}

//! Profiling aid: converts one JSON file to Leafwire N times (`valgrind --tool=callgrind`).
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args().nth(2).map_or(10, |v| v.parse().unwrap());
    let text = std::fs::read(path).unwrap();
    let mut total = 0;
    for _ in 0..n {
        total += leafwire::json::from_json(&text).unwrap().len();
    }
    println!("{total}");
}

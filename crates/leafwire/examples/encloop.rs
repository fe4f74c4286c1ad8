//! Profiling aid: encodes one decoded file N times (for callgrind), and prints the time per
//! encode to stderr.
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args().nth(2).map_or(10, |v| v.parse().unwrap());
    let value = leafwire::json::parse(&std::fs::read(path).unwrap()).unwrap();
    let mut total = 0;
    let started = std::time::Instant::now();
    for _ in 0..n {
        total += leafwire::encode(&value).unwrap().len();
    }
    eprintln!("{:?} per encode", started.elapsed() / n.max(1) as u32);
    println!("{total}");
}

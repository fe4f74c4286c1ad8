use std::hint::black_box;
#[inline(never)]
fn borrowed_once(bytes: &[u8]) -> usize {
    let v = leafwire::decode_borrowed(bytes).unwrap();
    matches!(v, leafwire::ValueRef::Null) as usize
}
fn main() {
    let f = std::env::args().nth(1).unwrap();
    let reps: usize = std::env::args().nth(2).map_or(20, |r| r.parse().unwrap());
    let text = std::fs::read(&f).unwrap();
    let bytes = leafwire::json::from_json(&text).unwrap();
    let t = std::time::Instant::now();
    let mut acc = 0;
    for _ in 0..reps { acc += borrowed_once(black_box(&bytes)); }
    println!("{f}: borrowed {:.0} us {acc}", t.elapsed().as_micros() as f64 / reps as f64);
}

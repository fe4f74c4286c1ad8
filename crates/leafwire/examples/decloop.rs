//! Profiling aid: decodes one converted file N times, into the owned `Value` or (with a
//! third argument `borrowed`) the borrowed `ValueRef`.
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args().nth(2).map_or(10, |v| v.parse().unwrap());
    let borrowed = std::env::args().nth(3).is_some_and(|m| m == "borrowed");
    let bytes = leafwire::AlignedBytes::new(&leafwire::json::from_json(&std::fs::read(path).unwrap()).unwrap());
    let mut total = 0;
    for _ in 0..n {
        total += if borrowed {
            matches!(std::hint::black_box(leafwire::decode_borrowed(&bytes).unwrap()).root(), leafwire::ValueRef::Null) as usize
        } else {
            matches!(std::hint::black_box(leafwire::decode(&bytes).unwrap()), leafwire::Value::Null) as usize
        };
    }
    println!("{total}");
}

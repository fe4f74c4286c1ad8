use leafwire::{Map, Value};
use std::time::Instant;
fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1_000_000);
    let records: Vec<Value> = (0..n).map(|i| {
        let mut m = Map::default();
        m.insert("id".into(), Value::Int(i as i64));
        m.insert("x".into(), Value::F64(i as f64 * 0.5));
        m.insert("y".into(), Value::F64(i as f64 * 0.25));
        m.insert("name".into(), Value::String(format!("record {i}")));
        m.insert("tags".into(), Value::Array(vec![Value::Int(1), Value::Int(i as i64)]));
        Value::Object(m)
    }).collect();
    let bytes = leafwire::encode(&Value::Array(records)).unwrap();
    std::fs::write("/work/scratch/big.lw", &bytes).unwrap();
    for _ in 0..3 {
        let t = Instant::now();
        leafwire::validate(&bytes).unwrap();
        let s = t.elapsed().as_secs_f64();
        println!("{} bytes validated in {:.3} s = {:.2} GB/s", bytes.len(), s, bytes.len() as f64 / s / 1e9);
    }
}

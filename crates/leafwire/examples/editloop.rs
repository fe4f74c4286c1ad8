//! Profiling aid for the kv workload's in-place rows (callgrind or perf target): a flat
//! string map of NE entries averaging LE bytes, then one operation repeated.
//!
//! `cargo run --release --example editloop -- OP [NE LE COUNT]` with OP one of
//! validate, open, get, view, set, insert.
use leafwire::{Editor, Value};

/// A small deterministic generator (xorshift), so runs are comparable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn word(&mut self, len: usize) -> String {
        (0..len).map(|_| b"abcdefghijklmnopqrstuvwxyz0123456789"[(self.next() % 36) as usize] as char).collect()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let op = args.first().map(String::as_str).unwrap_or("set");
    let num = |i: usize, d: usize| args.get(i).and_then(|v| v.parse().ok()).unwrap_or(d);
    let (ne, le, count) = (num(1, 1000), num(2, 160), num(3, 1000));
    let mut rng = Rng(0x11fe_2001);
    let map: leafwire::Map =
        (0..ne).map(|_| (rng.word(le / 4), Value::String(rng.word(le * 3 / 4)))).collect();
    let keys: Vec<String> = map.keys().cloned().collect();
    let bytes = leafwire::encode(&Value::Object(map)).unwrap();
    let t = std::time::Instant::now();
    let mut acc = 0usize;
    match op {
        "validate" => {
            for _ in 0..count {
                acc += leafwire::validate(&bytes).unwrap().strings as usize;
            }
        }
        "open" => {
            for _ in 0..count {
                acc += Editor::new(bytes.clone()).unwrap().as_bytes().len();
            }
        }
        "get" => {
            let doc = leafwire::Document::open(&bytes).unwrap();
            for i in 0..count {
                acc += doc.root().get(&keys[i % ne]).unwrap().as_str().unwrap().len();
            }
        }
        "view" => {
            let doc = leafwire::Document::open(&bytes).unwrap();
            let map = doc.root().object().unwrap();
            for i in 0..count {
                acc += map.get(&keys[i % ne]).unwrap().as_str().unwrap().len();
            }
        }
        "set" => {
            let mut ed = Editor::new(bytes.clone()).unwrap();
            for i in 0..count {
                let key = &keys[(rng.next() as usize) % ne];
                let len = le * 3 / 8 + (rng.next() as usize) % (le * 3 / 4);
                ed.set(&format!("/{key}"), &Value::String(rng.word(len))).unwrap();
                acc += i;
            }
            acc += ed.as_bytes().len();
        }
        "insert" => {
            let mut ed = Editor::new(bytes.clone()).unwrap();
            for _ in 0..count {
                let key = rng.word(le / 4);
                ed.set(&format!("/{key}"), &Value::String(rng.word(le * 3 / 4))).unwrap();
            }
            acc += ed.as_bytes().len();
        }
        "insert-timed" => {
            // One editor per round, opened outside the clock: the kv workload's write/q.
            let mut total = std::time::Duration::ZERO;
            for _ in 0..3 {
                let mut ed = Editor::new(bytes.clone()).unwrap();
                let keys: Vec<(String, String)> = (0..count).map(|_| (rng.word(le / 4), rng.word(le * 3 / 4))).collect();
                let t = std::time::Instant::now();
                for (k, v) in &keys {
                    ed.set_path(&[k], &Value::String(v.clone())).unwrap();
                }
                let t_edit = t.elapsed();
                let out = ed.as_bytes().to_vec();
                let t_copy = t.elapsed();
                drop(ed);
                let t_drop = t.elapsed();
                eprintln!("edits {t_edit:.1?}, +copy {t_copy:.1?}, +drop {t_drop:.1?}");
                total += t_drop;
                acc += out.len();
            }
            eprintln!("mean {:.1?}", total / 3);
        }
        other => panic!("unknown op {other}"),
    }
    println!("{op}: {:.1} µs total, {:.1} ns per op ({acc})", t.elapsed().as_secs_f64() * 1e6, t.elapsed().as_nanos() as f64 / count as f64);
}

//! Atomic commits on files (spec §8.4): a child process edits and commits in a loop and is
//! killed at random moments; every reopened file validates and holds one committed state.

use leafwire::{Editor, Map, TypedArray, TypedData, Value};

mod common;
use common::same;

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(0x9E37_79B9_7F4A_7C15 ^ (seed + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9))
    }
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

fn initial() -> Value {
    let mut m = Map::default();
    m.insert("list".into(), Value::Array(vec![]));
    m.insert("t".into(), Value::Typed(TypedArray::new(TypedData::I32(vec![0; 8]))));
    m.insert("n".into(), Value::Int(0));
    Value::Object(m)
}

fn value(rng: &mut Rng) -> Value {
    match rng.below(4) {
        0 => Value::String("v".repeat(rng.below(200))),
        1 => Value::Int([1, 300, 1 << 40][rng.below(3)]),
        2 => Value::Object([("a".to_owned(), Value::Array(vec![Value::Int(1), Value::Null]))].into_iter().collect()),
        _ => Value::F64(0.25),
    }
}

/// Edit number `i`, decided by `i` and the current value only, applied to the model and,
/// if given, to the editor.
fn apply(i: u64, model: &mut Value, ed: Option<&mut Editor>) {
    let mut rng = Rng::new(i);
    let Value::Object(m) = model else { unreachable!() };
    let v = value(&mut rng);
    let list_len = match &m["list"] {
        Value::Array(a) => a.len(),
        _ => unreachable!(),
    };
    let existing: Vec<String> = m.keys().filter(|k| k.starts_with('k')).cloned().collect();
    match rng.below(6) {
        1 if !existing.is_empty() => {
            let key = existing[rng.below(existing.len())].clone();
            if let Some(ed) = ed {
                ed.delete(&format!("/{key}")).unwrap();
            }
            m.shift_remove(&key);
        }
        2 => {
            if let Some(ed) = ed {
                ed.push("/list", &v).unwrap();
            }
            let Value::Array(a) = m.get_mut("list").unwrap() else { unreachable!() };
            a.push(v);
        }
        3 if list_len > 0 => {
            let j = rng.below(list_len);
            if let Some(ed) = ed {
                ed.set(&format!("/list/{j}"), &v).unwrap();
            }
            let Value::Array(a) = m.get_mut("list").unwrap() else { unreachable!() };
            a[j] = v;
        }
        4 => {
            let (j, x) = (rng.below(8), rng.below(1 << 20) as i32);
            if let Some(ed) = ed {
                ed.set_element("/t", j, x as i64).unwrap();
            }
            let Value::Typed(t) = m.get_mut("t").unwrap() else { unreachable!() };
            let TypedData::I32(mut data) = t.data().clone() else { unreachable!() };
            data[j] = x;
            *t = TypedArray::new(TypedData::I32(data));
        }
        _ => {
            let key = format!("k{}", rng.below(30));
            if let Some(ed) = ed {
                ed.set(&format!("/{key}"), &v).unwrap();
            }
            m.insert(key, v);
        }
    }
}

/// The child: continues the edit sequence from `START` on the file, committing each edit.
#[test]
fn crash_child() {
    let (Ok(path), Ok(start)) = (std::env::var("LEAFWIRE_CRASH_FILE"), std::env::var("LEAFWIRE_CRASH_START")) else { return };
    let mut ed = Editor::open_file(&path).unwrap();
    let mut model = leafwire::decode(ed.as_bytes()).unwrap();
    for i in start.parse::<u64>().unwrap().. {
        apply(i, &mut model, Some(&mut ed));
        if i % 41 == 40 {
            ed.compact().unwrap();
        }
        ed.commit().unwrap();
    }
}


#[test]
fn killed_writers_leave_a_committed_state() {
    let dir = std::env::temp_dir().join(format!("leafwire-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("doc.lw");
    std::fs::write(&path, leafwire::encode(&initial()).unwrap()).unwrap();
    let mut states = vec![initial()];
    let mut known = 0usize;
    let mut rng = Rng::new(7);
    let rounds = 60;
    for round in 0..rounds {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env("LEAFWIRE_CRASH_FILE", &path)
            .env("LEAFWIRE_CRASH_START", known.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(1000 + rng.below(60_000) as u64));
        child.kill().unwrap();
        child.wait().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        leafwire::validate(&bytes).unwrap_or_else(|e| panic!("round {round}: invalid file: {e}"));
        let got = leafwire::decode(&bytes).unwrap();
        let mut k = known;
        loop {
            while states.len() <= k {
                let mut next = states.last().unwrap().clone();
                apply(states.len() as u64 - 1, &mut next, None);
                states.push(next);
            }
            if same(&states[k], &got) {
                break;
            }
            k += 1;
            assert!(k < known + 200_000, "round {round}: the file holds no committed state");
        }
        known = k;
    }
    eprintln!("{rounds} kills; the file reached committed state {known}");
    assert!(known > 0, "the child never committed");
    std::fs::remove_dir_all(&dir).ok();
}

/// Before a commit, the bytes below the committed end differ from the file only in the
/// inactive root record: nothing reachable from the active record was overwritten.
#[test]
fn edits_before_commit_leave_committed_blocks_untouched() {
    let dir = std::env::temp_dir().join(format!("leafwire-cow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("doc.lw");
    std::fs::write(&path, leafwire::encode(&initial()).unwrap()).unwrap();
    let mut model = initial();
    let mut ed = Editor::open_file(&path).unwrap();
    let mut i = 0;
    for round in 0..300 {
        let on_disk = std::fs::read(&path).unwrap();
        for _ in 0..1 + round % 5 {
            apply(i, &mut model, Some(&mut ed));
            i += 1;
        }
        let now = ed.as_bytes();
        let changed: Vec<usize> = (0..on_disk.len().min(now.len())).filter(|&b| on_disk[b] != now[b]).collect();
        let in_one_record = changed.iter().all(|&b| (16..64).contains(&b)) || changed.iter().all(|&b| (64..112).contains(&b));
        assert!(in_one_record, "round {round}: committed bytes overwritten at {:?}", changed.iter().find(|&&b| b >= 112));
        assert!(same(&leafwire::decode(now).unwrap(), &model));
        leafwire::validate(now).unwrap();
        ed.commit().unwrap();
        let reopened = std::fs::read(&path).unwrap();
        leafwire::validate(&reopened).unwrap();
        assert!(same(&leafwire::decode(&reopened).unwrap(), &model), "round {round}: committed state");
    }
    std::fs::remove_dir_all(&dir).ok();
}

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
        let mut bytes = std::fs::read(&path).unwrap();
        // A kill between a commit's record and the end of its journal's application leaves
        // the journal for the reader to apply (spec §8.5).
        leafwire::finish_interrupted_commit(&mut bytes).unwrap_or_else(|e| panic!("round {round}: journal: {e}"));
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

/// Before a commit the file is untouched; after it, the file holds what the editor holds.
#[test]
fn edits_before_commit_leave_the_file_untouched() {
    for trust in [leafwire::Trust::Untrusted, leafwire::Trust::Trusted] {
        edits_before_commit_leave_the_file_untouched_when(trust, false);
        edits_before_commit_leave_the_file_untouched_when(trust, true);
    }
}

fn edits_before_commit_leave_the_file_untouched_when(trust: leafwire::Trust, mapped: bool) {
    let dir = std::env::temp_dir().join(format!("leafwire-cow-{}-{trust:?}-{mapped}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("doc.lw");
    std::fs::write(&path, leafwire::encode(&initial()).unwrap()).unwrap();
    let mut model = initial();
    let mut ed = if mapped {
        // SAFETY: only this test touches its scratch file.
        unsafe { Editor::map_file(&path, trust) }.unwrap()
    } else {
        Editor::open_file_with(&path, trust).unwrap()
    };
    assert_eq!(ed.is_mapped(), mapped && cfg!(unix));
    let mut i = 0;
    for round in 0..300 {
        let on_disk = std::fs::read(&path).unwrap();
        for _ in 0..1 + round % 5 {
            apply(i, &mut model, Some(&mut ed));
            i += 1;
        }
        let now = ed.as_bytes();
        assert!(std::fs::read(&path).unwrap() == on_disk, "round {round}: the file changed before the commit");
        assert!(same(&leafwire::decode(now).unwrap(), &model));
        leafwire::validate(now).unwrap();
        ed.commit().unwrap();
        let reopened = std::fs::read(&path).unwrap();
        leafwire::validate(&reopened).unwrap();
        assert!(same(&leafwire::decode(&reopened).unwrap(), &model), "round {round}: committed state");
        let end = leafwire::Document::open(&reopened).unwrap().record().end as usize;
        assert!(reopened[112..end] == ed.as_bytes()[112..end], "round {round}: the file's bytes differ from the editor's");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A commit costs the edit (spec §8.4): a same-size float in a document of 100,000 records
/// writes a few hundred bytes, and 1,000 such commits keep the file within 1.1× of its
/// canonical size, with page checksums or without.
#[test]
fn a_commit_writes_what_changed_not_the_containers_above_it() {
    a_commit_writes_what_changed(false);
    a_commit_writes_what_changed(true);
}

fn a_commit_writes_what_changed(sealed: bool) {
    use std::sync::{Arc, Mutex};
    let dir = std::env::temp_dir().join(format!("leafwire-small-commit-{}-{sealed}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("doc.lw");
    let records: Vec<Value> = (0..100_000)
        .map(|i| {
            let mut m = Map::default();
            m.insert("id".into(), Value::Int(i));
            m.insert("x".into(), Value::F64(i as f64 * 0.5));
            m.insert("name".into(), Value::String(format!("record {i}")));
            Value::Object(m)
        })
        .collect();
    let mut canonical = leafwire::encode(&Value::Array(records)).unwrap();
    if sealed {
        leafwire::add_checksums(&mut canonical).unwrap();
    }
    std::fs::write(&path, &canonical).unwrap();
    let written = Arc::new(Mutex::new(0usize));
    let counter = written.clone();
    let hook = Box::new(move |_op: &str, _pos: u64, bytes: &[u8]| -> std::io::Result<()> {
        *counter.lock().unwrap() += bytes.len();
        Ok(())
    });
    // SAFETY: only this test touches its scratch file.
    let mut ed = unsafe { Editor::map_file_with_io_hook(&path, hook) }.unwrap();
    assert!(ed.is_mapped() || cfg!(not(unix)));
    let mut sizes = Vec::new();
    for i in 0..1000usize {
        *written.lock().unwrap() = 0;
        ed.set(&format!("/{}/x", (i * 7919) % 100_000), &Value::F64(-(i as f64) - 0.25)).unwrap();
        ed.commit().unwrap();
        sizes.push(*written.lock().unwrap());
    }
    sizes.sort_unstable();
    let (median, most) = (sizes[sizes.len() / 2], sizes[sizes.len() - 1]);
    let size = std::fs::metadata(&path).unwrap().len() as f64;
    eprintln!("checksums {sealed}: a commit wrote {median} bytes (median), {most} at most; after 1,000 commits the file is {:.3}x canonical", size / canonical.len() as f64);
    // The largest is the first growth of the checksum table (copied to the end once).
    assert!(median <= 1024 && most <= 64 << 10, "commits wrote {median} bytes (median), {most} at most");
    assert!(size <= 1.1 * canonical.len() as f64, "the file grew to {size} bytes from {}", canonical.len());
    let bytes = std::fs::read(&path).unwrap();
    leafwire::validate(&bytes).unwrap();
    let doc = leafwire::Document::open(&bytes).unwrap();
    assert_eq!(doc.pointer("/7919/x").unwrap().as_f64().unwrap(), -1.25);
    std::fs::remove_dir_all(&dir).ok();
}

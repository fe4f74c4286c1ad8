//! Crash consistency beyond SIGKILL (spec §8.4), by the ALICE / CrashMonkey method: every
//! file operation of a sequence of commits is recorded through the editor's I/O seam
//! (`Editor::open_file_with_io_hook`), and every on-disk state that a power loss could
//! leave is rebuilt and opened. A state is the durable bytes plus any subset of the writes
//! not yet covered by a successful barrier (`fdatasync`, `fsync`, directory `fsync`),
//! split into 512-byte sectors that persist independently, applied in program order
//! (the page cache keeps the latest bytes), with torn sectors (a sector cut at a byte) and
//! a file length extended without its data. A rename is atomic but durable only after the
//! directory's sync. After a failed sync the writes it covered stay optional forever
//! (Linux marks such pages clean: a later sync that succeeds does not write them).
//!
//! Every state must pass `validate` and decode to a committed value: the one durable when
//! the barrier interval began, or one whose commit was started since (a commit that
//! returned an error may or may not have taken effect). I/O errors are injected at every
//! operation of every commit: the error is returned, the editor and the file hold the value
//! before or after, and a retried commit (also after a further edit) succeeds.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use leafwire::{Editor, Map, Value};

mod common;
use common::same;

const SECTOR: u64 = 512;
/// Optional units up to this many are tried in every subset; above, prefixes plus samples.
const EXHAUSTIVE: usize = 12;
const SAMPLES: usize = 1500;

#[derive(Clone, Debug)]
struct Op {
    name: String,
    pos: u64,
    bytes: Vec<u8>,
    failed: bool,
}

#[derive(Default)]
struct Shared {
    ops: Vec<Op>,
    /// Fail the operation with this index in `ops`.
    fail_at: Option<usize>,
}

type Log = Arc<Mutex<Shared>>;

/// How the editor under test holds the file: read into memory, or mapped.
#[derive(Clone, Copy, Debug)]
enum Load {
    Read,
    Map,
}

fn open(path: &Path, log: &Log, load: Load) -> Editor {
    let log = Arc::clone(log);
    let hook = Box::new(move |name: &str, pos: u64, bytes: &[u8]| -> io::Result<()> {
        let mut s = log.lock().unwrap();
        let failed = s.fail_at == Some(s.ops.len());
        s.ops.push(Op { name: name.to_owned(), pos, bytes: bytes.to_vec(), failed });
        if failed { Err(io::Error::other(format!("injected error at {name}"))) } else { Ok(()) }
    });
    match load {
        Load::Read => Editor::open_file_with_io_hook(path, hook).unwrap(),
        // SAFETY: only this test touches its scratch file.
        Load::Map => unsafe { Editor::map_file_with_io_hook(path, hook) }.unwrap(),
    }
}

/// The test's own markers in the log: a commit of value `pos` starts / returned.
fn mark(log: &Log, name: &str, value: usize) {
    log.lock().unwrap().ops.push(Op { name: name.to_owned(), pos: value as u64, bytes: Vec::new(), failed: false });
}

/// One write, or the part of it in one sector.
#[derive(Clone, Debug)]
struct Unit {
    pos: u64,
    bytes: Vec<u8>,
    /// Index of the operation it came from (for reports).
    op: usize,
}

#[derive(Clone, Debug)]
struct Inode {
    base: Vec<u8>,
    /// Writes in program order, each durable or not.
    units: Vec<(Unit, bool)>,
    /// Units written since the last barrier on this file.
    pending: Vec<usize>,
}

impl Inode {
    fn new(base: Vec<u8>) -> Inode {
        Inode { base, units: Vec::new(), pending: Vec::new() }
    }

    fn write(&mut self, op: usize, pos: u64, bytes: &[u8]) {
        let mut at = 0usize;
        while at < bytes.len() {
            let p = pos + at as u64;
            let next = ((p / SECTOR + 1) * SECTOR).min(pos + bytes.len() as u64);
            let n = (next - p) as usize;
            self.pending.push(self.units.len());
            self.units.push((Unit { pos: p, bytes: bytes[at..at + n].to_vec(), op }, false));
            at += n;
        }
    }

    /// A write that returned an error: it may have reached the page cache in part or
    /// whole, and no barrier makes it durable.
    fn write_failed(&mut self, op: usize, pos: u64, bytes: &[u8]) {
        let pending = self.pending.len();
        self.write(op, pos, bytes);
        self.pending.truncate(pending);
    }

    /// A successful barrier: pending units are durable.
    fn sync(&mut self) {
        for &i in &self.pending {
            self.units[i].1 = true;
        }
        self.pending.clear();
    }

    /// A failed barrier: pending units stay optional forever.
    fn sync_failed(&mut self) {
        self.pending.clear();
    }

    fn optional(&self) -> Vec<usize> {
        (0..self.units.len()).filter(|&i| !self.units[i].1).collect()
    }

    /// The bytes with the durable units and the chosen optional ones (the last of them cut
    /// to `cut` bytes if given), at least `min_len` long.
    fn image(&self, chosen: &[usize], cut: Option<usize>, min_len: u64) -> Vec<u8> {
        let mut out = self.base.clone();
        let mut next = 0;
        for (i, (u, durable)) in self.units.iter().enumerate() {
            let pick = next < chosen.len() && chosen[next] == i;
            if pick {
                next += 1;
            }
            if !durable && !pick {
                continue;
            }
            let bytes = match cut {
                Some(c) if pick && next == chosen.len() => &u.bytes[..c],
                _ => &u.bytes[..],
            };
            let end = u.pos as usize + bytes.len();
            if out.len() < end {
                out.resize(end, 0);
            }
            out[u.pos as usize..end].copy_from_slice(bytes);
        }
        if (out.len() as u64) < min_len {
            out.resize(min_len as usize, 0);
        }
        out
    }

    /// Every image a crash could leave of this file.
    fn crash_images(&self, rng: &mut u64) -> Vec<(Vec<u8>, String)> {
        let opt = self.optional();
        let full_len = self.units.iter().map(|(u, _)| u.pos + u.bytes.len() as u64).max().unwrap_or(0);
        let mut out = Vec::new();
        let describe = |chosen: &[usize]| -> String {
            let parts: Vec<String> = chosen.iter().map(|&i| format!("op{}@{}+{}", self.units[i].0.op, self.units[i].0.pos, self.units[i].0.bytes.len())).collect();
            format!("persisted [{}] of {} optional units", parts.join(", "), opt.len())
        };
        if opt.len() <= EXHAUSTIVE {
            for mask in 0u32..(1 << opt.len()) {
                let chosen: Vec<usize> = (0..opt.len()).filter(|b| mask & (1 << b) != 0).map(|b| opt[b]).collect();
                out.push((self.image(&chosen, None, 0), describe(&chosen)));
            }
        } else {
            for n in 0..=opt.len() {
                out.push((self.image(&opt[..n], None, 0), describe(&opt[..n])));
            }
            for _ in 0..SAMPLES {
                let chosen: Vec<usize> = opt.iter().copied().filter(|_| next(rng) & 1 == 1).collect();
                out.push((self.image(&chosen, None, 0), describe(&chosen)));
            }
        }
        // Prefixes in program order with the next unit torn inside its sector, and with the
        // file length grown before the data arrived.
        for n in 0..opt.len() {
            let len = self.units[opt[n]].0.bytes.len();
            let mut chosen = opt[..=n].to_vec();
            let cuts: Vec<usize> = if len <= 64 { (1..len).collect() } else { vec![1, 8, len / 2, len - 1] };
            for c in cuts {
                out.push((self.image(&chosen, Some(c), 0), format!("{} with op{} torn after {c} bytes", describe(&chosen), self.units[opt[n]].0.op)));
            }
            chosen.pop();
            out.push((self.image(&chosen, None, full_len), format!("{}, length grown to {full_len}", describe(&chosen))));
        }
        out
    }
}

fn next(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

#[derive(Default)]
struct Tally {
    generated: usize,
    checked: usize,
    seen: HashSet<(u64, Vec<usize>)>,
    failures: Vec<String>,
}

/// Replays `ops` from a file holding `base`, checking the crash states at every barrier
/// and at the end (from operation `from` on); `values[i]` is the value of marker `i`.
fn replay(base: &[u8], ops: &[Op], values: &[Value], from: usize, tally: &mut Tally) -> Vec<u8> {
    let mut main = Inode::new(base.to_vec());
    let mut replacement: Option<Inode> = None;
    // While a rename is not yet durable: the files the name had before.
    let mut old_mains: Vec<Inode> = Vec::new();
    let mut durable_value = 0usize;
    let mut interval_start_value = 0usize;
    let mut started: Vec<usize> = vec![0];
    let mut last_record_value: Option<usize> = None;
    let mut rng = 0x2545_F491_4F6C_DD1D_u64;
    let mut current = 0usize;
    for (k, op) in ops.iter().enumerate().chain(std::iter::once((ops.len(), &Op { name: "end".into(), pos: 0, bytes: vec![], failed: false }))) {
        let barrier = matches!(op.name.as_str(), "sync" | "sync-replacement" | "sync-dir" | "end");
        if barrier && k >= from {
            let acceptable: Vec<usize> = started.iter().copied().filter(|&v| v >= interval_start_value).collect();
            let files = std::iter::once(&main).chain(&old_mains);
            for file in files {
                for (image, how) in file.crash_images(&mut rng) {
                    tally.generated += 1;
                    let mut h = DefaultHasher::new();
                    image.hash(&mut h);
                    if !tally.seen.insert((h.finish(), acceptable.clone())) {
                        continue;
                    }
                    tally.checked += 1;
                    if let Err(why) = check(&image, &acceptable, values) {
                        tally.failures.push(format!("crash before op {k} ({}): {how}: {why}", op.name));
                    }
                }
            }
        }
        match op.name.as_str() {
            "commit" => {
                current = op.pos as usize;
                started.push(current);
            }
            "committed" => {}
            "write" if !op.failed => {
                main.write(k, op.pos, &op.bytes);
                if op.bytes.len() == 48 && (op.pos == 16 || op.pos == 64) {
                    last_record_value = Some(current);
                }
            }
            // A failed write may still have reached the page cache, in part or whole.
            "write" => main.write_failed(k, op.pos, &op.bytes),
            "sync" if !op.failed => {
                main.sync();
                if let Some(v) = last_record_value.take() {
                    durable_value = v;
                }
                interval_start_value = durable_value;
            }
            // The record written since the last barrier is not durable, now or later.
            "sync" => {
                main.sync_failed();
                last_record_value = None;
            }
            "create-replacement" if !op.failed => replacement = Some(Inode::new(Vec::new())),
            "write-replacement" => {
                if let Some(r) = replacement.as_mut() {
                    if op.failed {
                        r.write_failed(k, op.pos, &op.bytes);
                    } else {
                        r.write(k, op.pos, &op.bytes);
                    }
                }
            }
            "sync-replacement" if !op.failed => replacement.as_mut().unwrap().sync(),
            "sync-replacement" => replacement.as_mut().unwrap().sync_failed(),
            "rename" if !op.failed => {
                old_mains.push(std::mem::replace(&mut main, replacement.take().unwrap()));
                last_record_value = Some(current);
            }
            "sync-dir" if !op.failed => {
                if !old_mains.is_empty() {
                    old_mains.clear();
                    if let Some(v) = last_record_value.take() {
                        durable_value = v;
                    }
                }
                interval_start_value = durable_value;
            }
            _ => {}
        }
    }
    // The bytes if nothing is lost, for comparison with the real file.
    let mut all = main.clone();
    all.units.retain(|(u, _)| !ops[u.op].failed);
    let keep: Vec<usize> = (0..all.units.len()).collect();
    all.image(&keep, None, 0)
}

/// The file's bytes as a reader sees them (an interrupted commit finished in memory).
fn read_finished(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    leafwire::finish_interrupted_commit(&mut bytes).unwrap();
    bytes
}

fn check(image: &[u8], acceptable: &[usize], values: &[Value]) -> Result<(), String> {
    // What every reader of a file does first: finish an interrupted commit in memory.
    let mut image = image.to_vec();
    leafwire::finish_interrupted_commit(&mut image).map_err(|e| format!("journal: {e}"))?;
    let image = &image[..];
    leafwire::validate(image).map_err(|e| format!("validate: {e}"))?;
    let v = leafwire::decode(image).map_err(|e| format!("decode: {e}"))?;
    // What Editor::open_file does with the bytes it reads.
    let ed = Editor::new(image.to_vec()).map_err(|e| format!("Editor::new: {e}"))?;
    let edited = leafwire::decode(ed.as_bytes()).map_err(|e| format!("the editor's bytes: {e}"))?;
    if !same(&edited, &v) {
        return Err("the editor opens it to another value".into());
    }
    if acceptable.iter().any(|&i| same(&v, &values[i])) {
        return Ok(());
    }
    let which: Vec<usize> = (0..values.len()).filter(|&i| same(&v, &values[i])).collect();
    Err(format!("decodes to {} (committed values {which:?}), expected one of {acceptable:?}", {
        let s = format!("{v:?}");
        s.chars().take(300).collect::<String>()
    }))
}

/// The document the commits start from: 1.5 KB at scale 1 (a few sectors per interval,
/// every subset tried), 11 KB at scale 8 (intervals of more sectors, sampled).
fn initial(scale: usize) -> Value {
    let mut m = Map::default();
    m.insert("n".into(), Value::Int(1));
    m.insert("s".into(), Value::String("short".into()));
    m.insert("list".into(), Value::Array((0..40 * scale as i64).map(Value::Int).collect()));
    m.insert("m".into(), Value::Object([("a".to_owned(), Value::Int(1)), ("b".to_owned(), Value::String("b".repeat(300 * scale)))].into_iter().collect()));
    m.insert("pad".into(), Value::String("x".repeat(900 * scale)));
    Value::Object(m)
}

type Batch = fn(&mut Editor);

/// The edits of each commit: a same-size scalar, a string that grows and relocates, an
/// insert that grows a container, a delete, a compaction (a new file renamed over the old),
/// an edit of the compacted file, and several edits in one commit.
fn batches() -> Vec<(&'static str, Batch)> {
    vec![
        ("same-size scalar", |ed| ed.set("/n", &Value::Int(2)).unwrap()),
        ("string growth", |ed| ed.set("/s", &Value::String("long ".repeat(150))).unwrap()),
        ("container growth", |ed| {
            ed.push("/list", &Value::Int(1000)).unwrap();
            ed.insert("/list/0", &Value::String("first".into())).unwrap();
        }),
        ("delete", |ed| ed.delete("/m/b").unwrap()),
        ("compact", |ed| ed.compact().unwrap()),
        ("edit after compact", |ed| ed.set("/n", &Value::F64(2.5)).unwrap()),
        ("several edits", |ed| {
            ed.set("/m/c", &Value::Array(vec![Value::Null; 3])).unwrap();
            ed.set("/list/5", &Value::Int(-5)).unwrap();
            ed.delete("/pad").unwrap();
        }),
    ]
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leafwire-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn decoded(ed: &Editor) -> Value {
    leafwire::validate(ed.as_bytes()).unwrap();
    leafwire::decode(ed.as_bytes()).unwrap()
}

fn report(what: &str, tally: &Tally, extra: &str) {
    eprintln!("crash_states {what}: {} crash states generated, {} distinct checked{extra}, {} failing", tally.generated, tally.checked, tally.failures.len());
    let mut kinds: Vec<String> = tally.failures.iter().map(|f| f.split(": crash before").next().unwrap_or("").to_owned()).collect();
    kinds.dedup();
    for kind in &kinds {
        let first = tally.failures.iter().find(|f| f.starts_with(kind.as_str())).unwrap();
        let n = tally.failures.iter().filter(|f| f.starts_with(kind.as_str())).count();
        eprintln!("  FAIL ({n} states) {}", first.chars().take(400).collect::<String>());
    }
}

#[test]
fn every_crash_state_of_a_commit_sequence_opens_to_the_old_or_new_value() {
    replay_commits(1, Load::Read);
}

#[test]
fn every_crash_state_of_a_commit_sequence_of_a_mapped_editor_opens_to_the_old_or_new_value() {
    replay_commits(1, Load::Map);
}

#[test]
fn every_crash_state_of_commits_on_a_larger_document_opens_to_the_old_or_new_value() {
    replay_commits(8, Load::Map);
}

fn replay_commits(scale: usize, load: Load) {
    let path = scratch(&format!("replay-{scale}-{load:?}.lw"));
    let mut base = leafwire::encode(&initial(scale)).unwrap();
    if scale > 1 {
        // The larger document carries page checksums: every crash state must verify.
        leafwire::add_checksums(&mut base).unwrap();
    }
    std::fs::write(&path, &base).unwrap();
    let log: Log = Arc::default();
    let mut ed = open(&path, &log, load);
    let mut values = vec![decoded(&ed)];
    for (name, batch) in batches() {
        batch(&mut ed);
        values.push(decoded(&ed));
        mark(&log, "commit", values.len() - 1);
        ed.commit().unwrap_or_else(|e| panic!("{name}: {e}"));
        mark(&log, "committed", values.len() - 1);
        let on_disk = std::fs::read(&path).unwrap();
        assert!(same(&leafwire::decode(&on_disk).unwrap(), values.last().unwrap()), "{name}: the file after commit");
    }
    let ops = log.lock().unwrap().ops.clone();
    let mut tally = Tally::default();
    let model = replay(&base, &ops, &values, 0, &mut tally);
    assert_eq!(model, std::fs::read(&path).unwrap(), "the model's file without a crash is the real file");
    report(&format!("replay of a {}-byte document", base.len()), &tally, &format!(" over {} operations of {} commits", ops.len(), values.len() - 1));
    assert!(tally.failures.is_empty(), "{} crash states fail; first: {}", tally.failures.len(), tally.failures[0]);
    std::fs::remove_file(&path).ok();
}

#[test]
fn an_io_error_at_any_operation_of_a_commit_is_returned_and_a_retry_succeeds() {
    let base = leafwire::encode(&initial(1)).unwrap();
    let mut tally = Tally::default();
    let mut injected = 0;
    let batches = batches();
    for b in 0..batches.len() {
        for further_edit in [false, true] {
            for k in 0.. {
                let path = scratch(&format!("inject-{b}-{k}-{further_edit}.lw"));
                std::fs::write(&path, &base).unwrap();
                let log: Log = Arc::default();
                // Alternate: the failed commits of both kinds of editor are checked.
                let load = if (b + k) % 2 == 0 { Load::Read } else { Load::Map };
                let mut ed = open(&path, &log, load);
                let mut values = vec![decoded(&ed)];
                for (_, batch) in &batches[..b] {
                    batch(&mut ed);
                    values.push(decoded(&ed));
                    mark(&log, "commit", values.len() - 1);
                    ed.commit().unwrap();
                    mark(&log, "committed", values.len() - 1);
                }
                let (name, batch) = batches[b];
                batch(&mut ed);
                values.push(decoded(&ed));
                let before = values.len() - 2;
                let start = {
                    let mut s = log.lock().unwrap();
                    s.fail_at = Some(s.ops.len() + 1 + k);
                    s.ops.len()
                };
                mark(&log, "commit", values.len() - 1);
                let result = ed.commit();
                let failed = log.lock().unwrap().ops.iter().any(|o| o.failed);
                if !failed {
                    assert!(result.is_ok(), "{name}: no operation failed, yet {result:?}");
                    std::fs::remove_file(&path).ok();
                    break;
                }
                injected += 1;
                let what = format!("{name}, error at operation {k} ({}), further edit {further_edit}", log.lock().unwrap().ops[start + 1 + k].name);
                assert!(result.is_err(), "{what}: the error is not returned");
                // The editor still holds the new value, and the file the old or the new one.
                assert!(same(&decoded(&ed), &values[before + 1]), "{what}: the editor's value");
                let on_disk = leafwire::decode(&read_finished(&path)).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(same(&on_disk, &values[before]) || same(&on_disk, &values[before + 1]), "{what}: the file's value");
                log.lock().unwrap().fail_at = None;
                if further_edit {
                    // In place where the failed commit's bytes are not frozen: a scalar of
                    // the root, a shorter string, an array element, far apart.
                    ed.set("/n", &Value::Int(77)).unwrap();
                    ed.set("/s", &Value::String("s".repeat(5))).unwrap();
                    ed.set("/list/30", &Value::Int(-1)).unwrap();
                    values.push(decoded(&ed));
                    mark(&log, "commit", values.len() - 1);
                }
                ed.commit().unwrap_or_else(|e| panic!("{what}: the retry: {e}"));
                let on_disk = leafwire::decode(&read_finished(&path)).unwrap();
                assert!(same(&on_disk, values.last().unwrap()), "{what}: the file after the retry");
                // One more commit after the retry, and every crash state from the failure on.
                ed.set("/n", &Value::Int(78)).unwrap();
                values.push(decoded(&ed));
                mark(&log, "commit", values.len() - 1);
                ed.commit().unwrap();
                let ops = log.lock().unwrap().ops.clone();
                let before_failures = tally.failures.len();
                let model = replay(&base, &ops, &values, start, &mut tally);
                assert_eq!(model, std::fs::read(&path).unwrap(), "{what}: the model's file is the real file");
                for f in &mut tally.failures[before_failures..] {
                    *f = format!("{what}: {f}");
                }
                std::fs::remove_file(&path).ok();
                std::fs::remove_file(path.with_extension("leafwire-tmp")).ok();
            }
        }
    }
    report("injection", &tally, &format!(" after {injected} injected errors"));
    assert!(tally.failures.is_empty(), "{} crash states fail; first: {}", tally.failures.len(), tally.failures[0]);
}

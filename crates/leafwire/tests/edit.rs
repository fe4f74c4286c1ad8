//! The editor (spec §8) against a model: random edit sequences are applied both to an
//! `Editor` and to a plain `Value`; after every step the bytes validate and decode to the
//! model, and after compaction they equal a fresh encode byte for byte.

use leafwire::{Category, Editor, IntMap, Map, Number, TypedArray, TypedData, Value};

mod common;
use common::same;

/// A small deterministic generator (xorshift64*), so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const KEYS: &[&str] = &["a", "b", "c", "name", "x/y", "t~1", "", "ключ", "a_rather_long_key_that_spans_several_hash_chunks_0123456789"];
const INT_KEYS: &[i64] = &[-1, 0, 1, 127, 128, -129, 40000, 1 << 40, i64::MIN, i64::MAX];

fn random_key(rng: &mut Rng) -> String {
    if rng.chance(70) {
        KEYS[rng.below(KEYS.len())].to_owned()
    } else {
        format!("k{}", rng.below(200))
    }
}

fn random_scalar(rng: &mut Rng) -> Value {
    match rng.below(14) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => Value::Int(rng.below(200) as i64 - 100),
        3 => Value::Int(1 << 40),
        4 => Value::Int([i64::MIN, i64::MAX, 40000, -70000][rng.below(4)]),
        5 => Value::UInt(u64::MAX - rng.below(10) as u64),
        6 => Value::F64([0.5, -0.0, f64::NAN, 1e300, f64::INFINITY, 3.0][rng.below(6)]),
        7 => Value::F32([1.5f32, -2.25, f32::NAN][rng.below(3)]),
        8 => Value::String("s".repeat(rng.below(5))),
        9 => Value::String(format!("{}é", "long string ".repeat(rng.below(40)))),
        10 => Value::Bytes((0..rng.below(20)).map(|i| i as u8).collect()),
        11 => Value::BigNum(["123456789012345678901234567890", "-99999999999999999999"][rng.below(2)].to_owned()),
        12 => random_typed(rng),
        _ => Value::Int(rng.next() as i64),
    }
}

fn random_typed(rng: &mut Rng) -> Value {
    let n = rng.below(6);
    let data = match rng.below(5) {
        0 => TypedData::I32((0..n).map(|i| i as i32 * 1000).collect()),
        1 => TypedData::F64((0..n).map(|i| i as f64 + 0.5).collect()),
        2 => TypedData::U8((0..n).map(|i| i as u8).collect()),
        3 => TypedData::Bool((0..n).map(|i| i % 2 == 0).collect()),
        _ => TypedData::I64((0..n).map(|i| -(i as i64)).collect()),
    };
    if n == 4 && rng.chance(50) {
        return Value::Typed(TypedArray::with_shape(data, vec![2, 2]).unwrap());
    }
    Value::Typed(TypedArray::new(data))
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    if depth == 0 || rng.chance(60) {
        return random_scalar(rng);
    }
    let n = if rng.chance(10) { 5 + rng.below(20) } else { rng.below(5) };
    match rng.below(3) {
        0 => Value::Array((0..n).map(|_| random_value(rng, depth - 1)).collect()),
        1 => {
            let mut m = Map::default();
            for _ in 0..n {
                m.insert(random_key(rng), random_value(rng, depth - 1));
            }
            Value::Object(m)
        }
        _ => {
            let mut m = IntMap::default();
            for _ in 0..n {
                m.insert(INT_KEYS[rng.below(INT_KEYS.len())], random_value(rng, depth - 1));
            }
            Value::IntMap(m)
        }
    }
}


fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Every value of the model with its pointer and its path of tokens.
fn paths(v: &Value, pointer: String, tokens: Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    out.push((pointer.clone(), tokens.clone()));
    let mut step = |token: String, child: &Value| {
        let mut t = tokens.clone();
        t.push(token.clone());
        paths(child, format!("{pointer}/{}", escape(&token)), t, out);
    };
    match v {
        Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| step(i.to_string(), c)),
        Value::Object(m) => m.iter().for_each(|(k, c)| step(k.clone(), c)),
        Value::IntMap(m) => m.iter().for_each(|(k, c)| step(k.to_string(), c)),
        _ => {}
    }
}

fn get_mut<'a>(v: &'a mut Value, tokens: &[String]) -> &'a mut Value {
    tokens.iter().fold(v, |v, t| match v {
        Value::Array(a) => &mut a[t.parse::<usize>().unwrap()],
        Value::Object(m) => m.get_mut(t.as_str()).unwrap(),
        Value::IntMap(m) => m.get_mut(&t.parse::<i64>().unwrap()).unwrap(),
        _ => unreachable!(),
    })
}

fn check(ed: &Editor, model: &Value, context: &str) {
    leafwire::validate(ed.as_bytes()).unwrap_or_else(|e| panic!("{context}: invalid bytes: {e}"));
    let decoded = leafwire::decode(ed.as_bytes()).unwrap();
    assert!(same(&decoded, model), "{context}:\n decoded {decoded:?}\n model   {model:?}");
}

/// One random edit, applied to both; returns a description for failure messages.
fn random_edit(rng: &mut Rng, ed: &mut Editor, model: &mut Value) -> String {
    let mut all = Vec::new();
    paths(model, String::new(), Vec::new(), &mut all);
    let (pointer, tokens) = all[rng.below(all.len())].clone();
    let target = get_mut(model, &tokens);
    let value = random_value(rng, 2);
    let before = ed.as_bytes().to_vec();
    match rng.below(10) {
        0 | 1 if !tokens.is_empty() || rng.chance(5) => {
            ed.set(&pointer, &value).unwrap();
            *target = value.clone();
            format!("set {pointer} = {value:?}")
        }
        2 | 3 => match target {
            Value::Object(m) => {
                let key = random_key(rng);
                let p = format!("{pointer}/{}", escape(&key));
                ed.set(&p, &value).unwrap();
                m.insert(key, value.clone());
                format!("set {p} = {value:?}")
            }
            Value::IntMap(m) => {
                let key = INT_KEYS[rng.below(INT_KEYS.len())];
                let p = format!("{pointer}/{key}");
                ed.set(&p, &value).unwrap();
                m.insert(key, value.clone());
                format!("set {p} = {value:?}")
            }
            Value::Array(a) => {
                let at = rng.below(a.len() + 1);
                let p = format!("{pointer}/{at}");
                if rng.chance(50) {
                    ed.insert(&p, &value).unwrap();
                    a.insert(at, value.clone());
                    format!("insert {p} = {value:?}")
                } else {
                    ed.push(&pointer, &value).unwrap();
                    a.push(value.clone());
                    format!("push {pointer} {value:?}")
                }
            }
            _ => {
                let err = ed.push(&pointer, &value).unwrap_err();
                assert_eq!(err.category(), Category::WrongType, "push into {pointer}");
                assert_eq!(ed.as_bytes(), &before[..], "failed push changed bytes");
                format!("push into non-array {pointer}")
            }
        },
        4 | 5 if !tokens.is_empty() => {
            ed.delete(&pointer).unwrap();
            let (last, parent) = tokens.split_last().unwrap();
            match get_mut(model, parent) {
                Value::Array(a) => {
                    a.remove(last.parse().unwrap());
                }
                Value::Object(m) => {
                    m.shift_remove(last.as_str());
                }
                Value::IntMap(m) => {
                    m.shift_remove(&last.parse::<i64>().unwrap());
                }
                _ => unreachable!(),
            }
            format!("delete {pointer}")
        }
        6 if !tokens.is_empty() => {
            let (last, parent) = tokens.split_last().unwrap();
            let parent = get_mut(model, parent);
            let Value::Object(m) = parent else { return "skip rename".into() };
            let new_key = random_key(rng);
            let result = ed.rename(&pointer, &new_key);
            if new_key != *last && m.contains_key(&new_key) {
                assert_eq!(result.unwrap_err().category(), Category::DuplicateKey);
                assert_eq!(ed.as_bytes(), &before[..], "failed rename changed bytes");
                return format!("rename {pointer} to existing {new_key:?}");
            }
            result.unwrap();
            *m = m.drain(..).map(|(k, v)| if k == *last { (new_key.clone(), v) } else { (k, v) }).collect();
            format!("rename {pointer} -> {new_key:?}")
        }
        7 => {
            let Value::Typed(t) = target else { return "skip set_element".into() };
            if t.is_empty() {
                return "skip set_element".into();
            }
            let i = rng.below(t.len());
            let new = match t.data() {
                TypedData::I32(_) => Value::Int(rng.below(1 << 20) as i64 - 5),
                TypedData::I64(_) => Value::Int(rng.next() as i64),
                TypedData::U8(_) => Value::Int(rng.below(256) as i64),
                TypedData::Bool(_) => Value::Int(rng.below(2) as i64),
                _ => Value::F64(rng.below(1000) as f64 / 8.0),
            };
            let number = match new {
                Value::Int(x) => Number::Int(x),
                Value::F64(x) => Number::Float(x),
                _ => unreachable!(),
            };
            ed.set_element(&pointer, i, number).unwrap();
            let mut data = t.data().clone();
            match (&mut data, number) {
                (TypedData::I32(v), Number::Int(x)) => v[i] = x as i32,
                (TypedData::I64(v), Number::Int(x)) => v[i] = x,
                (TypedData::U8(v), Number::Int(x)) => v[i] = x as u8,
                (TypedData::Bool(v), Number::Int(x)) => v[i] = x == 1,
                (TypedData::F64(v), Number::Float(x)) => v[i] = x,
                _ => unreachable!(),
            }
            *t = TypedArray::with_shape(data, t.shape().to_vec()).unwrap();
            // Out of range for the element type: refused, nothing written.
            if let TypedData::U8(_) = t.data() {
                let after = ed.as_bytes().to_vec();
                assert!(ed.set_element(&pointer, i, 256i64).is_err());
                assert!(ed.set_element(&pointer, i, 1.5f64).is_err());
                assert_eq!(ed.as_bytes(), &after[..]);
            }
            format!("set_element {pointer}[{i}] = {number:?}")
        }
        _ => {
            let bad = [
                format!("{pointer}/no such key/x"),
                format!("{pointer}/~2"),
                "no-slash".to_owned(),
                format!("{pointer}/-/x"),
            ];
            let p = &bad[rng.below(bad.len())];
            let err = match rng.below(4) {
                0 => ed.set(p, &value),
                1 => ed.delete(p),
                2 => ed.insert(p, &value),
                _ => ed.rename(p, "zz"),
            }
            .unwrap_err();
            assert!(matches!(err.category(), Category::NotFound | Category::WrongType), "{p}: {err}");
            assert_eq!(ed.as_bytes(), &before[..], "failed edit at {p} changed bytes");
            format!("invalid edit at {p}")
        }
    }
}

#[test]
fn random_edit_sequences_match_the_model() {
    let (sequences, steps) = (3000, 40);
    let mut total = 0;
    for seed in 0..sequences {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (seed as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9));
        let mut model = if rng.chance(80) { Value::Object(Map::default()) } else { random_value(&mut rng, 3) };
        // Half the documents carry page checksums, which every edit must keep true.
        let sealed = seed % 2 == 1;
        let encode = |model: &Value| {
            let mut bytes = leafwire::encode(model).unwrap();
            if sealed {
                leafwire::add_checksums(&mut bytes).unwrap();
            }
            bytes
        };
        let mut ed = Editor::new(encode(&model)).unwrap();
        if rng.chance(50) {
            ed.set_compact_threshold(0.0);
        }
        let mut log = Vec::new();
        for step in 0..steps {
            log.push(random_edit(&mut rng, &mut ed, &mut model));
            total += 1;
            check(&ed, &model, &format!("seed {seed} step {step}: {}", log.join("\n  ")));
            if rng.chance(3) {
                ed.compact().unwrap();
                assert_eq!(ed.as_bytes(), &encode(&model)[..], "seed {seed}: compact at step {step}");
            }
        }
        ed.compact().unwrap();
        assert_eq!(ed.as_bytes(), &encode(&model)[..], "seed {seed}: final compact");
        assert_eq!(ed.garbage(), 0);
    }
    eprintln!("{sequences} sequences, {total} edit steps checked");
}

/// The same random edits on a file: before each commit the file is untouched, and after it
/// the file holds the model, byte for byte what the editor holds.
#[test]
fn random_edits_on_a_file_match_the_model() {
    let dir = std::env::temp_dir().join(format!("leafwire-edit-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (sequences, steps) = (150, 30);
    for seed in 0..sequences {
        let mut rng = Rng(0x5EED ^ (seed as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9));
        let mut model = if rng.chance(70) { Value::Object(Map::default()) } else { random_value(&mut rng, 3) };
        let path = dir.join(format!("{seed}.lw"));
        std::fs::write(&path, leafwire::encode(&model).unwrap()).unwrap();
        let mut ed = Editor::open_file(&path).unwrap();
        let mut on_disk = std::fs::read(&path).unwrap();
        for step in 0..steps {
            let what = random_edit(&mut rng, &mut ed, &mut model);
            check(&ed, &model, &format!("file seed {seed} step {step}: {what}"));
            if rng.chance(5) {
                ed.compact().unwrap();
            }
            assert!(std::fs::read(&path).unwrap() == on_disk, "file seed {seed} step {step}: {what}: the file changed before a commit");
            if rng.chance(30) || step == steps - 1 {
                ed.commit().unwrap();
                on_disk = std::fs::read(&path).unwrap();
                leafwire::validate(&on_disk).unwrap();
                assert!(same(&leafwire::decode(&on_disk).unwrap(), &model), "file seed {seed} step {step}: committed state");
                // Below the document's end, the file holds what the editor holds.
                let end = leafwire::Document::open(&on_disk).unwrap().record().end as usize;
                assert!(on_disk[112..end] == ed.as_bytes()[112..end], "file seed {seed} step {step}: the file's bytes differ from the editor's");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn editor(v: &Value) -> Editor {
    let mut ed = Editor::new(leafwire::encode(v).unwrap()).unwrap();
    ed.set_compact_threshold(0.0);
    ed
}

#[test]
fn scalar_width_changes() {
    let mut model: Map = [("a".to_owned(), Value::Int(1)), ("b".to_owned(), Value::Int(2))].into_iter().collect();
    let mut ed = editor(&Value::Object(model.clone()));
    for v in [Value::Int(5), Value::Int(1 << 40), Value::F64(2.5), Value::String("now a string".into())] {
        ed.set("/a", &v).unwrap();
        model.insert("a".into(), v);
        check(&ed, &Value::Object(model.clone()), "width change");
    }
    let obj = Value::Object([("inner".to_owned(), Value::Array(vec![Value::Null; 3]))].into_iter().collect());
    ed.set("/a", &obj).unwrap();
    model.insert("a".into(), obj);
    check(&ed, &Value::Object(model.clone()), "string to object");
    assert!(ed.garbage() > 0);
}

#[test]
fn small_scalar_update_is_in_place() {
    let mut ed = editor(&leafwire::json::from_json(br#"{"a": 1, "b": [1, 2, "x"]}"#).map(|b| leafwire::decode(&b).unwrap()).unwrap());
    let len = ed.as_bytes().len();
    ed.set("/a", &Value::Int(-7)).unwrap();
    ed.set("/b/1", &Value::Bool(true)).unwrap();
    assert_eq!(ed.as_bytes().len(), len);
    assert_eq!(ed.garbage(), 0);
    assert_eq!(ed.document().unwrap().pointer("/a").unwrap().as_i64().unwrap(), -7);
}

#[test]
fn many_inserts_into_one_object_then_delete_everything() {
    let mut model = Map::default();
    let mut ed = editor(&Value::Object(model.clone()));
    for i in 0..3000 {
        // Long keys with a shared prefix exercise the key hash and probe chains.
        let key = if i % 3 == 0 { format!("{}{i}", "p".repeat(70)) } else { format!("k{i}") };
        ed.set(&format!("/{key}"), &Value::Int(i)).unwrap();
        model.insert(key, Value::Int(i));
        if i % 250 == 0 {
            check(&ed, &Value::Object(model.clone()), "inserting");
        }
    }
    check(&ed, &Value::Object(model.clone()), "after inserts");
    for key in model.keys().cloned().collect::<Vec<_>>() {
        assert_eq!(ed.document().unwrap().pointer(&format!("/{key}")).unwrap().as_i64().unwrap(), model[&key].as_i64_for_test());
    }
    let keys: Vec<String> = model.keys().cloned().collect();
    for (n, key) in keys.iter().enumerate() {
        ed.delete(&format!("/{key}")).unwrap();
        model.shift_remove(key);
        if n % 300 == 0 {
            check(&ed, &Value::Object(model.clone()), "deleting");
        }
    }
    check(&ed, &Value::Object(Map::default()), "all deleted");
    ed.compact().unwrap();
    assert_eq!(ed.as_bytes(), &leafwire::encode(&Value::Object(Map::default())).unwrap()[..]);
}

trait AsI64 {
    fn as_i64_for_test(&self) -> i64;
}
impl AsI64 for Value {
    fn as_i64_for_test(&self) -> i64 {
        match self {
            Value::Int(x) => *x,
            _ => panic!("not an int"),
        }
    }
}

#[test]
fn long_values_and_deep_offsets() {
    // Enough data that offsets outgrow 2 bytes, forcing parents to wider slots.
    let mut model = Value::Object([("list".to_owned(), Value::Array(vec![]))].into_iter().collect());
    let mut ed = editor(&model);
    for i in 0..40 {
        let v = Value::String("x".repeat(3000 + i));
        ed.push("/list", &v).unwrap();
        let Value::Array(a) = get_mut(&mut model, &["list".to_owned()]) else { unreachable!() };
        a.push(v);
    }
    check(&ed, &model, "long values");
    assert!(ed.as_bytes().len() > 1 << 16);
    ed.compact().unwrap();
    assert_eq!(ed.as_bytes(), &leafwire::encode(&model).unwrap()[..]);
}

#[test]
fn errors_name_their_category_and_leave_bytes_unchanged() {
    let mut ed = editor(&leafwire::decode(&leafwire::json::from_json(br#"{"a": {"b": [1, "s"]}, "t": [1.5, 2.5]}"#).unwrap()).unwrap());
    let before = ed.as_bytes().to_vec();
    let cases: Vec<(Result<(), leafwire::Error>, Category)> = vec![
        (ed.set("/a/zz/q", &Value::Null), Category::NotFound),
        (ed.delete("/a/b/5"), Category::NotFound),
        (ed.delete(""), Category::WrongType),
        (ed.push("/a", &Value::Null), Category::WrongType),
        (ed.set("/a/b/1/x", &Value::Null), Category::WrongType),
        (ed.set("/a/b/1/x/y", &Value::Null), Category::NotFound),
        (ed.delete("/a/b/-"), Category::NotFound),
        (ed.set_element("/a", 0, 1i64), Category::WrongType),
        (ed.set_element("/t", 2, 1.0f64), Category::NotFound),
        (ed.set_element("/t", 0, 1i64), Category::WrongType),
        (ed.rename("/a", "t"), Category::DuplicateKey),
        (ed.set("/a/b/01", &Value::Null), Category::NotFound),
        (ed.set("/a", &Value::BigNum("12".into())), Category::NotRepresentable),
    ];
    for (i, (result, category)) in cases.into_iter().enumerate() {
        assert_eq!(result.unwrap_err().category(), category, "case {i}");
    }
    assert_eq!(ed.as_bytes(), &before[..]);
    let mut deep = Value::Null;
    for _ in 0..200 {
        deep = Value::Array(vec![deep]);
    }
    assert_eq!(ed.set("/a", &deep).unwrap_err().category(), Category::DepthLimit);
    assert_eq!(ed.as_bytes(), &before[..]);
    assert!(Editor::new(b"LEAFWIRE nonsense".to_vec()).is_err());
}

#[test]
fn errors_carry_the_pointer_or_the_escaped_path() {
    let mut ed = editor(&leafwire::decode(&leafwire::json::from_json(br#"{"a/b": {"c": 1}}"#).unwrap()).unwrap());
    let err = ed.set("/a~1b/c/d", &Value::Null).unwrap_err();
    assert_eq!(err.path(), Some("/a~1b/c/d"), "{err}");
    let err = ed.delete_path(&["a/b", "missing"]).unwrap_err();
    assert_eq!((err.category(), err.path()), (Category::NotFound, Some("/a~1b/missing")), "{err}");
    let err = ed.set("a", &Value::Null).unwrap_err();
    assert_eq!(err.path(), Some("a"), "{err}");
}

#[test]
fn token_paths_need_no_escaping() {
    let mut ed = editor(&Value::Object(Map::default()));
    ed.set_path(&["x/y~z"], &Value::Array(Vec::new())).unwrap();
    ed.push_path(&["x/y~z"], &Value::Int(7)).unwrap();
    ed.set_path(&["k"], &Value::Bool(true)).unwrap();
    ed.delete_path(&["k"]).unwrap();
    assert_eq!(ed.document().unwrap().pointer("/x~1y~0z/0").unwrap().as_i64().unwrap(), 7);
    assert_eq!(ed.document().unwrap().root().len().unwrap(), 1);
}

#[test]
fn a_string_that_fits_is_rewritten_in_place_and_its_tail_zeroed() {
    let mut ed = editor(&Value::Object([("s".to_owned(), Value::String("x".repeat(40)))].into_iter().collect()));
    let len = ed.as_bytes().len();
    ed.set("/s", &Value::String("short".into())).unwrap();
    assert_eq!(ed.as_bytes().len(), len, "no new block");
    assert_eq!(ed.garbage(), 35, "the 35 bytes the string no longer uses");
    assert!(!ed.as_bytes().windows(2).any(|w| w == b"xx"), "freed bytes are zeroed");
    ed.set("/s", &Value::Bytes(b"bytes".to_vec())).unwrap();
    assert_eq!(ed.as_bytes().len(), len, "a data value of another kind fits too");
    let doc = ed.document().unwrap();
    assert_eq!(doc.pointer("/s").unwrap().as_bytes().unwrap(), b"bytes");
    leafwire::validate(ed.as_bytes()).unwrap();
    ed.set("/s", &Value::String("y".repeat(41))).unwrap();
    assert!(ed.as_bytes().len() > len, "a longer string moves to the end");
    assert_eq!(ed.document().unwrap().pointer("/s").unwrap().as_str().unwrap(), "y".repeat(41));
    leafwire::validate(ed.as_bytes()).unwrap();
}

#[test]
fn set_element_takes_u64_values_above_i64_max() {
    let v = Value::Object([("u".to_owned(), Value::Typed(TypedArray::new(TypedData::U64(vec![0, 0]))))].into_iter().collect());
    let mut ed = editor(&v);
    ed.set_element("/u", 0, u64::MAX).unwrap();
    ed.set_element("/u", 1, 7u64).unwrap();
    assert_eq!(ed.document().unwrap().pointer("/u").unwrap().as_slice::<u64>().unwrap(), &[u64::MAX, 7]);
    assert_eq!(Number::from(7u64), Number::Int(7));
    assert_eq!(ed.set_element("/u", 0, -1i64).unwrap_err().category(), Category::WrongType);
}

#[test]
fn automatic_compaction() {
    let model = Value::Object([("s".to_owned(), Value::String("x".repeat(100)))].into_iter().collect());
    let mut ed = Editor::new(leafwire::encode(&model).unwrap()).unwrap();
    ed.set_compact_min_garbage(0);
    for i in 0..50 {
        ed.set("/s", &Value::String("y".repeat(100 + i))).unwrap();
        assert!(ed.garbage() as f64 <= 0.5 * ed.as_bytes().len() as f64);
    }
    let expected = Value::Object([("s".to_owned(), Value::String("y".repeat(149)))].into_iter().collect());
    check(&ed, &expected, "auto compaction");
}

#[test]
fn small_documents_do_not_compact_before_the_minimum_garbage() {
    let model = Value::Object([("s".to_owned(), Value::String("x".repeat(100)))].into_iter().collect());
    let mut ed = Editor::new(leafwire::encode(&model).unwrap()).unwrap();
    let mut compacted = false;
    for i in 0..2000 {
        let before = ed.garbage();
        ed.set("/s", &Value::String("y".repeat(101 + i))).unwrap();
        compacted |= ed.garbage() < before;
        if !compacted {
            assert!(ed.garbage() < leafwire::DEFAULT_COMPACT_MIN_GARBAGE + 2200, "{}", ed.garbage());
        }
    }
    assert!(compacted, "compacts once the garbage passes the minimum");
    assert!(ed.garbage() < leafwire::DEFAULT_COMPACT_MIN_GARBAGE + 2200);
}

#[test]
fn python_reference_reader_reads_an_edited_document() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/leafwire/reference.py");
    // python3 is a requirement of the test command (scripts/test.sh), not optional here.
    if let Err(e) = std::process::Command::new("python3").arg("--version").output() {
        panic!("this test runs the reference reader with python3, which did not start: {e}");
    }
    let json = br#"{"name": "mesh", "xs": [0.5, 1.5], "meta": {"n": 1, "tags": ["a", "b"]}}"#;
    let mut ed = editor(&leafwire::decode(&leafwire::json::from_json(json).unwrap()).unwrap());
    ed.set("/name", &Value::String("a longer name than before".into())).unwrap();
    ed.set("/meta/n", &Value::Int(1 << 40)).unwrap();
    ed.push("/meta/tags", &Value::String("c".into())).unwrap();
    ed.delete("/meta/tags/0").unwrap();
    ed.set("/new key", &Value::Array(vec![Value::Null, Value::Bool(true), Value::F64(2.5)])).unwrap();
    ed.rename("/xs", "coords").unwrap();
    ed.set_element("/coords", 1, 9.25f64).unwrap();
    let expected = r#"{"name": "a longer name than before", "coords": [0.5, 9.25], "meta": {"n": 1099511627776, "tags": ["b", "c"]}, "new key": [null, true, 2.5]}"#;
    let path = std::env::temp_dir().join(format!("leafwire-edit-{}.lw", std::process::id()));
    std::fs::write(&path, ed.as_bytes()).unwrap();
    let script = format!(
        "import importlib.util, json, sys\n\
         spec = importlib.util.spec_from_file_location('reference', {root:?})\n\
         ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)\n\
         got = ref.loads(open({:?}, 'rb').read())\n\
         sys.exit(0 if got == json.loads({expected:?}) else 'mismatch: ' + repr(got))",
        path.to_str().unwrap()
    );
    let out = std::process::Command::new("python3").arg("-c").arg(&script).output().unwrap();
    std::fs::remove_file(&path).ok();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Timing: `cargo test --release -p leafwire --test edit -- --ignored --nocapture timing`.
#[test]
#[ignore]
fn timing() {
    fn median(mut xs: Vec<f64>) -> f64 {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    }
    let mut model = Map::default();
    for i in 0..1000 {
        model.insert(format!("key{i}"), Value::Int(i));
    }
    let mut ed = editor(&Value::Object(model));
    let mut small = Vec::new();
    for i in 0..20000 {
        let t = std::time::Instant::now();
        ed.set("/key500", &Value::Int(i % 100)).unwrap();
        small.push(t.elapsed().as_nanos() as f64);
    }
    let mut insert = Vec::new();
    for i in 0..20000 {
        let t = std::time::Instant::now();
        ed.set(&format!("/new{i}"), &Value::Int(i)).unwrap();
        insert.push(t.elapsed().as_nanos() as f64);
        ed.delete(&format!("/new{i}")).unwrap();
    }
    eprintln!("in-place scalar update: median {:.0} ns; insert into a 1000-key object: median {:.0} ns", median(small), median(insert));
}

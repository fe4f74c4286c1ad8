//! `Editor` operation sequences against a `Value` model. The input is read as a program:
//! an initial value, then up to 48 operations (set, set_path, push, insert, delete,
//! rename, set_element, compact, compaction thresholds), each applied to an `Editor` and
//! to the model. After every operation the editor's bytes validate and decode to the
//! model; an operation the model refuses must fail on the editor and leave its bytes
//! unchanged, and one the model accepts must succeed.

#![no_main]

use leafwire::{Editor, IntMap, Map, Number, TypedArray, TypedData, Value};
use libfuzzer_sys::arbitrary::{Result as ArbResult, Unstructured};
use libfuzzer_sys::fuzz_target;

mod common;
use common::same;

const MAX_OPS: usize = 48;
const MAX_DEPTH: usize = 128;
const KEYS: &[&str] = &["a", "b", "c", "", "name", "x/y", "t~1", "~", "/", "ключ", "0", "-", "01", "a_rather_long_key_that_spans_several_hash_chunks_0123456789"];
const INT_KEYS: &[i64] = &[-1, 0, 1, 127, 128, -129, 40000, 1 << 40, i64::MIN, i64::MAX];

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});

fn run(u: &mut Unstructured<'_>) -> ArbResult<()> {
    let mut model = if u.ratio(1, 4)? { Value::Object(Map::default()) } else { value(u, 3, true)? };
    let encoded = leafwire::encode(&model).expect("encode a generated value");
    let mut ed = Editor::new(encoded).unwrap_or_else(|e| panic!("the encoder wrote a document the editor refuses: {e}\n  value {model:?}"));
    check(&ed, &model, "initial document");
    let mut log = Vec::new();
    for step in 0..MAX_OPS {
        if u.is_empty() {
            break;
        }
        let before = ed.as_bytes().to_vec();
        let (description, editor, modelled) = op(u, &mut ed, &mut model)?;
        log.push(description);
        let context = || format!("step {step}:\n  {}", log.join("\n  "));
        match (editor, modelled) {
            (Ok(()), Outcome::Ok | Outcome::Either) => {}
            (Err(e), Outcome::Err | Outcome::Either) => {
                assert!(ed.as_bytes() == &before[..], "{}\na failed operation ({e}) changed the bytes", context());
            }
            (Ok(()), Outcome::Err) => panic!("{}\nthe editor accepted an operation the model refuses", context()),
            (Err(e), Outcome::Ok) => panic!("{}\nthe editor refused an operation the model accepts: {e}", context()),
        }
        check(&ed, &model, &context());
    }
    ed.compact().unwrap_or_else(|e| panic!("final compact failed: {e}"));
    check(&ed, &model, "after the final compact");
    assert_eq!(ed.garbage(), 0, "garbage after compact");
    let canonical = leafwire::encode(&leafwire::decode(ed.as_bytes()).unwrap()).unwrap();
    assert!(ed.as_bytes() == &canonical[..], "compact did not write the canonical form");
    Ok(())
}

fn check(ed: &Editor, model: &Value, context: &str) {
    leafwire::validate(ed.as_bytes()).unwrap_or_else(|e| panic!("{context}\ninvalid bytes: {e}"));
    let decoded = leafwire::decode(ed.as_bytes()).unwrap_or_else(|e| panic!("{context}\ndecode failed: {e}"));
    assert!(same(&decoded, model), "{context}\n  decoded {decoded:?}\n  model   {model:?}");
    let lazy = ed.document().and_then(|d| d.root().to_value()).unwrap_or_else(|e| panic!("{context}\nEditor::document failed: {e}"));
    assert!(same(&lazy, model), "{context}\nEditor::document differs from the model");
}

/// What the model says an operation does.
enum Outcome {
    Ok,
    Err,
    /// Either is right (an f64 array whose integer mask is all zeros may or may not keep
    /// its mask block, which decides whether it takes integers).
    Either,
}

impl From<bool> for Outcome {
    fn from(ok: bool) -> Outcome {
        if ok { Outcome::Ok } else { Outcome::Err }
    }
}

type OpResult = (String, leafwire::Result<()>, Outcome);

fn op(u: &mut Unstructured<'_>, ed: &mut Editor, model: &mut Value) -> ArbResult<OpResult> {
    Ok(match u.int_in_range(0..=9u8)? {
        0 | 1 => {
            let (pointer, tokens) = pointer(u, model)?;
            let v = value(u, 2, false)?;
            let r = ed.set(&pointer, &v);
            let ok = tokens.is_some_and(|t| set(model, &t, v.clone()));
            (format!("set {pointer:?} = {v:?}"), r, ok.into())
        }
        2 => {
            let tokens = existing_or_new(u, model)?;
            let v = value(u, 2, false)?;
            let path: Vec<&str> = tokens.iter().map(String::as_str).collect();
            let r = ed.set_path(&path, &v);
            let ok = set(model, &tokens, v.clone());
            (format!("set_path {tokens:?} = {v:?}"), r, ok.into())
        }
        3 => {
            let (pointer, tokens) = pointer(u, model)?;
            let v = value(u, 2, false)?;
            let r = ed.push(&pointer, &v);
            let ok = tokens.is_some_and(|t| push(model, &t, v.clone()));
            (format!("push {pointer:?} {v:?}"), r, ok.into())
        }
        4 => {
            let (pointer, tokens) = pointer(u, model)?;
            let v = value(u, 2, false)?;
            let r = ed.insert(&pointer, &v);
            let ok = tokens.is_some_and(|t| insert(model, &t, v.clone()));
            (format!("insert {pointer:?} {v:?}"), r, ok.into())
        }
        5 => {
            let (pointer, tokens) = pointer(u, model)?;
            let r = ed.delete(&pointer);
            let ok = tokens.is_some_and(|t| delete(model, &t));
            (format!("delete {pointer:?}"), r, ok.into())
        }
        6 => {
            let (pointer, tokens) = pointer(u, model)?;
            let new_key = if u.ratio(1, 2)? { int_key(u)?.to_string() } else { key(u)? };
            let r = ed.rename(&pointer, &new_key);
            let ok = tokens.is_some_and(|t| rename(model, &t, &new_key));
            (format!("rename {pointer:?} -> {new_key:?}"), r, ok.into())
        }
        7 => {
            let (pointer, tokens) = pointer(u, model)?;
            let index = if u.ratio(7, 8)? { u.int_in_range(0..=9usize)? } else { u.arbitrary()? };
            let number = number(u)?;
            let r = ed.set_element(&pointer, index, number);
            let outcome = match tokens {
                Some(t) => set_element(model, &t, index, number, r.is_ok()),
                None => Outcome::Err,
            };
            (format!("set_element {pointer:?}[{index}] = {number:?}"), r, outcome)
        }
        8 => ("compact".into(), ed.compact(), Outcome::Ok),
        _ => {
            let threshold = [0.0, 0.01, 0.3, 0.5, 2.0][u.choose_index(5)?];
            let min_garbage = [0, 16, 1 << 16][u.choose_index(3)?];
            ed.set_compact_threshold(threshold);
            ed.set_compact_min_garbage(min_garbage);
            (format!("compact threshold {threshold}, min garbage {min_garbage}"), Ok(()), Outcome::Ok)
        }
    })
}

// ---- Generators ----------------------------------------------------------------------

fn key(u: &mut Unstructured<'_>) -> ArbResult<String> {
    if u.ratio(3, 4)? {
        Ok(KEYS[u.choose_index(KEYS.len())?].to_owned())
    } else {
        let s: &str = u.arbitrary()?;
        Ok(s.chars().take(12).collect())
    }
}

fn int_key(u: &mut Unstructured<'_>) -> ArbResult<i64> {
    if u.ratio(3, 4)? { Ok(INT_KEYS[u.choose_index(INT_KEYS.len())?]) } else { u.arbitrary() }
}

fn number(u: &mut Unstructured<'_>) -> ArbResult<Number> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => Number::Int(u.int_in_range(-3..=300)?),
        1 => Number::Int(u.arbitrary()?),
        2 => Number::UInt(u.arbitrary()?),
        3 => Number::Float([0.5, -0.0, f64::NAN, f64::INFINITY, 1e300, 3.0, 1e-45][u.choose_index(7)?]),
        4 => Number::Float(u.arbitrary()?),
        _ => Number::Int([0, 1, 1 << 53, -(1 << 53), (1 << 53) + 1, i64::MIN, i64::MAX][u.choose_index(7)?]),
    })
}

/// A valid bignum text (outside the 64-bit ranges), or with `invalid`, sometimes not.
fn bignum(u: &mut Unstructured<'_>, invalid: bool) -> ArbResult<String> {
    if invalid && u.ratio(1, 4)? {
        let bad = ["12", "-5", "", "-", "00000000000000000000001", "+123456789012345678901234", "1e30", "18446744073709551615", "-9223372036854775808"];
        return Ok(bad[u.choose_index(bad.len())?].to_owned());
    }
    let n = u.int_in_range(20..=40usize)?;
    let mut s = String::from(if u.arbitrary()? { "-" } else { "" });
    s.push(char::from(b'1' + u.int_in_range(0..=8u8)?));
    for _ in 0..n {
        s.push(char::from(b'0' + u.int_in_range(0..=9u8)?));
    }
    Ok(s)
}

fn typed(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    let n = u.int_in_range(0..=8usize)?;
    let mut mask = None;
    let data = match u.int_in_range(0..=10u8)? {
        0 => TypedData::Bool((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        1 => TypedData::I8((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        2 => TypedData::I16((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        3 => TypedData::I32((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        4 => TypedData::I64((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        5 => TypedData::U8((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        6 => TypedData::U16((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        7 => TypedData::U32((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        8 => TypedData::U64((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        9 => TypedData::F32((0..n).map(|_| u.arbitrary()).collect::<ArbResult<_>>()?),
        _ => {
            // Some integral elements, flagged in an integer mask (spec §5.2).
            let mut xs = Vec::with_capacity(n);
            let mut m = Vec::with_capacity(n);
            for _ in 0..n {
                if u.ratio(1, 2)? {
                    xs.push(u.int_in_range(-1000..=1000i32)? as f64);
                    m.push(true);
                } else {
                    xs.push(u.arbitrary()?);
                    m.push(false);
                }
            }
            if u.arbitrary()? {
                mask = Some(m);
            }
            TypedData::F64(xs)
        }
    };
    let shape = match u.int_in_range(0..=3u8)? {
        1 if n % 2 == 0 && n > 0 => vec![2, n / 2],
        2 if n == 0 => vec![0, u.int_in_range(0..=5usize)?],
        3 if n == 8 => vec![2, 2, 2],
        _ => vec![n],
    };
    let array = match (data, mask) {
        (TypedData::F64(xs), Some(m)) => TypedArray::with_int_mask(xs, shape, m),
        (data, _) => TypedArray::with_shape(data, shape),
    };
    Ok(Value::Typed(array.expect("a generated typed array")))
}

fn scalar(u: &mut Unstructured<'_>, invalid: bool) -> ArbResult<Value> {
    Ok(match u.int_in_range(0..=13u8)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Int(u.int_in_range(-200..=200)?),
        3 => Value::Int(u.arbitrary()?),
        4 => Value::UInt(u.int_in_range(i64::MAX as u64 + 1..=u64::MAX)?),
        5 => Value::F64([0.5, -0.0, f64::NAN, 1e300, f64::INFINITY, 3.0][u.choose_index(6)?]),
        6 => Value::F64(u.arbitrary()?),
        7 => Value::F32(u.arbitrary()?),
        8 => Value::String(key(u)?),
        9 => Value::String(format!("{}é", "long string ".repeat(u.int_in_range(0..=30usize)?))),
        10 => Value::Bytes(u.arbitrary::<&[u8]>()?.iter().copied().take(40).collect()),
        11 => Value::BigNum(bignum(u, invalid)?),
        _ => typed(u)?,
    })
}

/// A value nested at most `depth` containers deep; `invalid` lets bignums be invalid
/// (for values the editor must refuse).
fn value(u: &mut Unstructured<'_>, depth: usize, valid_only: bool) -> ArbResult<Value> {
    let invalid = !valid_only;
    if depth == 0 || u.ratio(3, 5)? {
        return scalar(u, invalid);
    }
    let n = if u.ratio(1, 10)? { u.int_in_range(5..=24usize)? } else { u.int_in_range(0..=4usize)? };
    Ok(match u.int_in_range(0..=2u8)? {
        0 => Value::Array((0..n).map(|_| value(u, depth - 1, valid_only)).collect::<ArbResult<_>>()?),
        1 => {
            let mut m = Map::default();
            for _ in 0..n {
                m.insert(key(u)?, value(u, depth - 1, valid_only)?);
            }
            Value::Object(m)
        }
        _ => {
            let mut m = IntMap::default();
            for _ in 0..n {
                m.insert(int_key(u)?, value(u, depth - 1, valid_only)?);
            }
            Value::IntMap(m)
        }
    })
}

/// Token paths of the model's values (the first 256, depth first).
fn paths(v: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if out.len() >= 256 {
        return;
    }
    out.push(prefix.clone());
    let mut step = |token: String, child: &Value, out: &mut Vec<Vec<String>>| {
        prefix.push(token);
        paths(child, prefix, out);
        prefix.pop();
    };
    match v {
        Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| step(i.to_string(), c, out)),
        Value::Object(m) => m.iter().for_each(|(k, c)| step(k.clone(), c, out)),
        Value::IntMap(m) => m.iter().for_each(|(k, c)| step(k.to_string(), c, out)),
        _ => {}
    }
}

/// Mostly the path of an existing value, sometimes changed into a new or wrong one.
fn existing_or_new(u: &mut Unstructured<'_>, model: &Value) -> ArbResult<Vec<String>> {
    let mut all = Vec::new();
    paths(model, &mut Vec::new(), &mut all);
    let mut tokens = all.swap_remove(u.choose_index(all.len())?);
    match u.int_in_range(0..=7u8)? {
        0 => tokens.push(key(u)?),
        1 => tokens.push("-".into()),
        2 => tokens.push(int_key(u)?.to_string()),
        3 => tokens.push(u.int_in_range(0..=30usize)?.to_string()),
        4 if !tokens.is_empty() => {
            let last = tokens.len() - 1;
            tokens[last] = ["-", "+1", "-0", "007", "", "x"][u.choose_index(6)?].to_owned();
        }
        5 => {
            tokens.pop();
        }
        _ => {}
    }
    Ok(tokens)
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A JSON Pointer and, when it parses, its tokens.
fn pointer(u: &mut Unstructured<'_>, model: &Value) -> ArbResult<(String, Option<Vec<String>>)> {
    let tokens = existing_or_new(u, model)?;
    let mut p: String = tokens.iter().map(|t| format!("/{}", escape(t))).collect();
    match u.int_in_range(0..=15u8)? {
        0 => p.push_str("/~2"),
        1 => p.push('~'),
        2 => p = p.trim_start_matches('/').to_owned(),
        3 => p.push('/'),
        _ => {}
    }
    let tokens = parse_pointer(&p);
    Ok((p, tokens))
}

// ---- The model -----------------------------------------------------------------------

/// RFC 6901 tokens, or `None` for a malformed pointer.
fn parse_pointer(p: &str) -> Option<Vec<String>> {
    if p.is_empty() {
        return Some(Vec::new());
    }
    let rest = p.strip_prefix('/')?;
    rest.split('/')
        .map(|t| {
            let mut out = String::new();
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                match c {
                    '~' => match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => return None,
                    },
                    c => out.push(c),
                }
            }
            Some(out)
        })
        .collect()
}

/// An array index token: digits without a leading zero.
fn parse_index(t: &str) -> Option<usize> {
    let ok = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && (t == "0" || !t.starts_with('0'));
    if ok { t.parse().ok() } else { None }
}

fn resolve<'m>(v: &'m mut Value, tokens: &[String]) -> Option<&'m mut Value> {
    tokens.iter().try_fold(v, |v, t| match v {
        Value::Array(a) => parse_index(t).and_then(|i| a.get_mut(i)),
        Value::Object(m) => m.get_mut(t.as_str()),
        Value::IntMap(m) => t.parse::<i64>().ok().and_then(|k| m.get_mut(&k)),
        _ => None,
    })
}

/// Containers nested in `v` (0 for a scalar).
fn nesting(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(nesting).max().unwrap_or(0),
        Value::Object(m) => 1 + m.values().map(nesting).max().unwrap_or(0),
        Value::IntMap(m) => 1 + m.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

fn bignum_ok(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let syntax = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    syntax && s.parse::<i64>().is_err() && s.parse::<u64>().is_err()
}

fn all_bignums_ok(v: &Value) -> bool {
    match v {
        Value::BigNum(s) => bignum_ok(s),
        Value::Array(a) => a.iter().all(all_bignums_ok),
        Value::Object(m) => m.values().all(all_bignums_ok),
        Value::IntMap(m) => m.values().all(all_bignums_ok),
        _ => true,
    }
}

/// Whether `v` may be placed at a path of `depth` tokens.
fn placeable(v: &Value, depth: usize) -> bool {
    all_bignums_ok(v) && depth + nesting(v) <= MAX_DEPTH
}

fn set(model: &mut Value, tokens: &[String], v: Value) -> bool {
    let Some((last, parents)) = tokens.split_last() else {
        if !placeable(&v, 0) {
            return false;
        }
        *model = v;
        return true;
    };
    let ok_to_place = placeable(&v, tokens.len());
    match resolve(model, parents) {
        Some(Value::Array(a)) => match (last.as_str(), parse_index(last)) {
            ("-", _) => ok_to_place && {
                a.push(v);
                true
            },
            (_, Some(i)) if i < a.len() => ok_to_place && {
                a[i] = v;
                true
            },
            (_, Some(i)) if i == a.len() => ok_to_place && {
                a.push(v);
                true
            },
            _ => false,
        },
        Some(Value::Object(m)) => ok_to_place && {
            match m.get_mut(last.as_str()) {
                Some(slot) => *slot = v,
                None => drop(m.insert(last.clone(), v)),
            }
            true
        },
        Some(Value::IntMap(m)) => match last.parse::<i64>() {
            Ok(k) => ok_to_place && {
                match m.get_mut(&k) {
                    Some(slot) => *slot = v,
                    None => drop(m.insert(k, v)),
                }
                true
            },
            Err(_) => false,
        },
        _ => false,
    }
}

fn push(model: &mut Value, tokens: &[String], v: Value) -> bool {
    let depth = tokens.len() + 1;
    match resolve(model, tokens) {
        Some(Value::Array(a)) if placeable(&v, depth) => {
            a.push(v);
            true
        }
        _ => false,
    }
}

fn insert(model: &mut Value, tokens: &[String], v: Value) -> bool {
    let Some((last, parents)) = tokens.split_last() else { return false };
    let depth = tokens.len();
    let Some(Value::Array(a)) = resolve(model, parents) else { return false };
    let index = if last == "-" { Some(a.len()) } else { parse_index(last).filter(|&i| i <= a.len()) };
    match index {
        Some(i) if placeable(&v, depth) => {
            a.insert(i, v);
            true
        }
        _ => false,
    }
}

fn delete(model: &mut Value, tokens: &[String]) -> bool {
    let Some((last, parents)) = tokens.split_last() else { return false };
    match resolve(model, parents) {
        Some(Value::Array(a)) => match parse_index(last) {
            Some(i) if i < a.len() => {
                a.remove(i);
                true
            }
            _ => false,
        },
        Some(Value::Object(m)) => m.shift_remove(last.as_str()).is_some(),
        Some(Value::IntMap(m)) => last.parse::<i64>().ok().and_then(|k| m.shift_remove(&k)).is_some(),
        _ => false,
    }
}

fn rename(model: &mut Value, tokens: &[String], new_key: &str) -> bool {
    let Some((last, parents)) = tokens.split_last() else { return false };
    match resolve(model, parents) {
        Some(Value::Object(m)) => {
            if !m.contains_key(last.as_str()) {
                return false;
            }
            if new_key == last {
                return true;
            }
            if m.contains_key(new_key) {
                return false;
            }
            *m = m.drain(..).map(|(k, v)| if k == *last { (new_key.to_owned(), v) } else { (k, v) }).collect();
            true
        }
        Some(Value::IntMap(m)) => {
            let Some(old) = last.parse::<i64>().ok().filter(|k| m.contains_key(k)) else { return false };
            if new_key == last {
                return true;
            }
            let Ok(new) = new_key.parse::<i64>() else { return false };
            if m.contains_key(&new) {
                return false;
            }
            *m = m.drain(..).map(|(k, v)| if k == old { (new, v) } else { (k, v) }).collect();
            true
        }
        _ => false,
    }
}

/// Writes element `index`; `editor_ok` settles the one case the model cannot decide (an
/// integer into an f64 array whose mask block may be all zeros).
fn set_element(model: &mut Value, tokens: &[String], index: usize, number: Number, editor_ok: bool) -> Outcome {
    let Some(Value::Typed(t)) = resolve(model, tokens) else { return Outcome::Err };
    if index >= t.len() {
        return Outcome::Err;
    }
    let shape = t.shape().to_vec();
    let mut mask: Vec<bool> = t.int_mask().map_or_else(|| vec![false; t.len()], <[bool]>::to_vec);
    let has_mask_bits = mask.iter().any(|&b| b);
    let mut data = t.data().clone();
    let mut outcome = Outcome::Ok;
    let fits = match (&mut data, number) {
        (TypedData::F64(v), Number::Float(x)) => {
            v[index] = x;
            mask[index] = false;
            true
        }
        (TypedData::F64(v), Number::Int(x)) if x.unsigned_abs() <= 1 << 53 => {
            if !has_mask_bits {
                // Masked only if the block kept a mask; the editor decides.
                if !editor_ok {
                    return Outcome::Either;
                }
                outcome = Outcome::Either;
            }
            v[index] = x as f64;
            mask[index] = true;
            true
        }
        (TypedData::F32(v), Number::Float(x)) if !x.is_finite() || (x as f32).is_finite() => {
            v[index] = x as f32;
            true
        }
        (TypedData::Bool(v), Number::Int(x)) if x == 0 || x == 1 => {
            v[index] = x == 1;
            true
        }
        (TypedData::I8(v), Number::Int(x)) => i8::try_from(x).map(|x| v[index] = x).is_ok(),
        (TypedData::I16(v), Number::Int(x)) => i16::try_from(x).map(|x| v[index] = x).is_ok(),
        (TypedData::I32(v), Number::Int(x)) => i32::try_from(x).map(|x| v[index] = x).is_ok(),
        (TypedData::I64(v), Number::Int(x)) => {
            v[index] = x;
            true
        }
        (TypedData::U8(v), Number::Int(x)) => u8::try_from(x).map(|x| v[index] = x).is_ok(),
        (TypedData::U16(v), Number::Int(x)) => u16::try_from(x).map(|x| v[index] = x).is_ok(),
        (TypedData::U32(v), Number::Int(x)) => u32::try_from(x).map(|x| v[index] = x).is_ok(),
        (TypedData::U64(v), Number::Int(x)) => u64::try_from(x).map(|x| v[index] = x).is_ok(),
        (TypedData::U64(v), Number::UInt(x)) => {
            v[index] = x;
            true
        }
        _ => false,
    };
    if !fits {
        return Outcome::Err;
    }
    *t = match data {
        TypedData::F64(xs) => TypedArray::with_int_mask(xs, shape, mask),
        data => TypedArray::with_shape(data, shape),
    }
    .expect("the model's typed array stays valid");
    outcome
}

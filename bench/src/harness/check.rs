//! Correctness checks run before anything is timed.
//!
//! Values are compared as JSON data: objects as unordered maps, numbers by
//! exact value, so `1` equals `1.0` but `0.1` does not equal the nearest
//! `f32`. A mismatch names the JSON Pointer where it happened.

use std::borrow::Cow;
use std::fmt::Display;

use serde_json::{Number, Value};

/// Why a peer's result is not timed.
#[derive(Debug, Clone)]
pub enum Fail {
    /// Produced a result that differs from the reference.
    Wrong(String),
    /// Returned an error.
    Error(String),
}

impl Fail {
    pub fn error(e: impl Display) -> Fail {
        Fail::Error(shorten(&e.to_string()))
    }
}

pub fn shorten(s: &str) -> String {
    const MAX: usize = 240;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `Ok` when `got` is the same JSON data as `expected`.
pub fn json_eq(expected: &Value, got: &Value) -> Result<(), Fail> {
    let mut path = String::new();
    if eq_at(expected, got, &mut path) {
        Ok(())
    } else {
        Err(Fail::Wrong(path))
    }
}

fn eq_at(a: &Value, b: &Value, path: &mut String) -> bool {
    let same = match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_eq(x, y),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                if !eq_at(p, q, path) {
                    return false;
                }
                path.truncate(len);
            }
            true
        }
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            for (k, p) in x {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                let Some(q) = y.get(k) else {
                    *path = format!("{path}: key missing");
                    return false;
                };
                if !eq_at(p, q, path) {
                    return false;
                }
                path.truncate(len);
            }
            true
        }
        _ => a == b,
    };
    if !same {
        let where_ = if path.is_empty() { "/" } else { path.as_str() };
        *path = format!("differs at {where_}: expected {}, got {}", brief(a), brief(b));
    }
    same
}

fn brief(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("array of {}", a.len()),
        Value::Object(o) => format!("object of {}", o.len()),
        other => shorten(&other.to_string()),
    }
}

/// Exact numeric equality across serde_json's integer and float kinds.
pub fn num_eq(a: &Number, b: &Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    match (a.is_f64(), b.is_f64()) {
        (true, true) => a.as_f64() == b.as_f64(),
        (false, false) => false,
        (true, false) => float_is_int(a.as_f64().unwrap_or(f64::NAN), b),
        (false, true) => float_is_int(b.as_f64().unwrap_or(f64::NAN), a),
    }
}

fn float_is_int(f: f64, int: &Number) -> bool {
    // i128 holds every i64 and u64 exactly, and every integral f64 that could equal one.
    let exact = |i: i128| f.fract() == 0.0 && f.abs() < 1.7e38 && f as i128 == i;
    match (int.as_i64(), int.as_u64()) {
        (Some(i), _) => exact(i as i128),
        (None, Some(u)) => exact(u as i128),
        _ => false,
    }
}

/// A leaf value found by a lazy lookup, borrowed where the peer allows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Cow<'a, str>),
}

impl Scalar<'_> {
    pub fn to_json(&self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::I64(i) => Value::from(*i),
            Scalar::U64(u) => Value::from(*u),
            Scalar::F64(f) => Number::from_f64(*f).map(Value::Number).unwrap_or(Value::Null),
            Scalar::Str(s) => Value::String(s.to_string()),
        }
    }

    /// The scalar at a JSON value, if it is one.
    pub fn of_json(v: &Value) -> Option<Scalar<'_>> {
        Some(match v {
            Value::Null => Scalar::Null,
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    Scalar::U64(u)
                } else if let Some(i) = n.as_i64() {
                    Scalar::I64(i)
                } else {
                    Scalar::F64(n.as_f64()?)
                }
            }
            Value::String(s) => Scalar::Str(Cow::Borrowed(s)),
            _ => return None,
        })
    }

    pub fn into_owned(self) -> Scalar<'static> {
        match self {
            Scalar::Str(s) => Scalar::Str(Cow::Owned(s.into_owned())),
            Scalar::Null => Scalar::Null,
            Scalar::Bool(b) => Scalar::Bool(b),
            Scalar::I64(i) => Scalar::I64(i),
            Scalar::U64(u) => Scalar::U64(u),
            Scalar::F64(f) => Scalar::F64(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value() {
        let table = [
            (json!(1), json!(1.0), true),
            (json!(1), json!(1.5), false),
            (json!(0.1), json!(0.1f32 as f64), false),
            (json!(u64::MAX), json!(u64::MAX as f64), false),
            (json!(-3), json!(-3.0), true),
        ];
        for (a, b, same) in table {
            assert_eq!(json_eq(&a, &b).is_ok(), same, "{a} vs {b}");
        }
    }

    #[test]
    fn mismatch_names_the_pointer() {
        let a = json!({"x": [1, {"y": "a"}]});
        let b = json!({"x": [1, {"y": "b"}]});
        let Err(Fail::Wrong(why)) = json_eq(&a, &b) else { panic!() };
        assert!(why.contains("/x/1/y"), "{why}");
    }
}

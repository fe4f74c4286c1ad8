//! JSON text → builder, streaming from the parser's events (no intermediate DOM).

use jiter::{Jiter, JiterError, Peek};

use crate::build::{Builder, FrameKind, Item, NumTy};
use crate::error::{Category, Error, Result};

pub(crate) fn parse_into(json: &[u8], b: &mut Builder) -> Result<()> {
    let mut jiter = Jiter::new(json);
    let outcome = (|| -> Result<()> {
        let peek = jiter.peek().map_err(|e| jiter_error(&jiter, e))?;
        value(&mut jiter, b, peek, 0)?;
        jiter.finish().map_err(|e| jiter_error(&jiter, e))
    })();
    outcome.map_err(|e| {
        if e.position().is_some() {
            return e;
        }
        let at = jiter.current_position();
        e.at_line_column(at.line, at.column)
    })
}

fn jiter_error(jiter: &Jiter<'_>, e: JiterError) -> Error {
    let at = e.get_position(jiter);
    Error::new(Category::InvalidJson, e.error_type.to_string()).at_line_column(at.line, at.column)
}

fn value(j: &mut Jiter<'_>, b: &mut Builder, peek: Peek, key: u64) -> Result<()> {
    macro_rules! ok {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => return Err(jiter_error(j, e)),
            }
        };
    }
    match peek {
        Peek::Null => {
            ok!(j.known_null());
            b.push(key, Item::Null)
        }
        Peek::True | Peek::False => {
            let v = ok!(j.known_bool(peek));
            b.push(key, Item::Bool(v))
        }
        Peek::String => {
            let s = ok!(j.known_str());
            b.push_str(key, s.as_bytes())
        }
        Peek::Array => {
            b.open(FrameKind::Array)?;
            let mut next = ok!(j.known_array());
            while let Some(p) = next {
                value(j, b, p, 0)?;
                next = ok!(j.array_step());
            }
            b.close(key)
        }
        Peek::Object => {
            b.open(FrameKind::Object)?;
            let mut next = ok!(j.known_object()).map(|k| b.key_id(k));
            while let Some(id) = next {
                let p = ok!(j.peek());
                value(j, b, p, id)?;
                next = ok!(j.next_key()).map(|k| b.key_id(k));
            }
            b.close(key)
        }
        _ => {
            let text = ok!(j.known_number_bytes(peek));
            number(b, key, text)
        }
    }
}

/// Classifies a JSON number exactly: integers stay integers at any size.
fn number(b: &mut Builder, key: u64, text: &[u8]) -> Result<()> {
    // SAFETY-free: jiter only returns ASCII number bytes.
    let s = std::str::from_utf8(text).map_err(|_| Error::new(Category::InvalidJson, "invalid number"))?;
    if !text.iter().any(|&c| matches!(c, b'.' | b'e' | b'E')) {
        if let Ok(v) = s.parse::<i64>() {
            return b.push(key, Item::Num(NumTy::JsonInt, v as u64));
        }
        if let Ok(v) = s.parse::<u64>() {
            return b.push(key, Item::UInt(v));
        }
        return b.push_bignum(key, text);
    }
    let v: f64 = s.parse().map_err(|_| Error::new(Category::InvalidJson, format!("invalid number {s}")))?;
    if v.is_infinite() {
        return Err(Error::new(Category::NotRepresentable, format!("number {s} is out of the f64 range")));
    }
    b.push(key, Item::Num(NumTy::JsonFloat, v.to_bits()))
}

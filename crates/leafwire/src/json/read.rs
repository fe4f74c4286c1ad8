//! JSON text → builder, streaming from the parser's events (no intermediate DOM).

use jiter::{Jiter, JiterError, Peek};

use crate::builder::{Builder, FrameKind, Item, NumTy};
use crate::error::{Category, Error, Result};

/// Reports how far the reader has got: `report` is called with the number of input bytes
/// consumed, once at least `step` more have been since the last call. Checked once per
/// array element and object member, so a call can come a little late after a long string.
pub(crate) struct Progress<'p> {
    next: usize,
    step: usize,
    report: &'p mut dyn FnMut(usize),
}

impl<'p> Progress<'p> {
    pub fn new(step: usize, report: &'p mut dyn FnMut(usize)) -> Progress<'p> {
        Progress { next: step, step: step.max(1), report }
    }

    #[inline]
    fn at(&mut self, position: usize) {
        if position >= self.next {
            (self.report)(position);
            self.next = position.saturating_add(self.step);
        }
    }
}

pub(crate) fn parse_into(json: &[u8], b: &mut Builder) -> Result<()> {
    parse_with_progress(json, b, &mut Progress::new(usize::MAX, &mut |_| {}))
}

pub(crate) fn parse_with_progress(json: &[u8], b: &mut Builder, progress: &mut Progress<'_>) -> Result<()> {
    let mut jiter = Jiter::new(json);
    let outcome = (|| -> Result<()> {
        let peek = jiter.peek().map_err(|e| jiter_error(&jiter, e))?;
        value(&mut jiter, b, peek, 0, progress)?;
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

fn value(j: &mut Jiter<'_>, b: &mut Builder, peek: Peek, key: u64, progress: &mut Progress<'_>) -> Result<()> {
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
                value(j, b, p, 0, progress)?;
                progress.at(j.current_index());
                next = ok!(j.array_step());
            }
            b.close(key)
        }
        Peek::Object => {
            b.open(FrameKind::Object)?;
            let mut next = ok!(j.known_object()).map(|k| b.key_id_at(k, 0));
            let mut position = 0;
            while let Some(id) = next {
                let p = ok!(j.peek());
                value(j, b, p, id, progress)?;
                progress.at(j.current_index());
                position += 1;
                next = ok!(j.next_key()).map(|k| b.key_id_at(k, position));
            }
            b.close(key)
        }
        _ => {
            let text = ok!(j.known_number_bytes(peek));
            number(b, key, text)
        }
    }
}

/// Parses JSON float text exactly (nearest double), with the parser jiter itself uses.
fn parse_float(text: &[u8]) -> Option<f64> {
    use lexical_parse_float::{format::JSON, FromLexicalWithOptions, Options};
    f64::from_lexical_with_options::<JSON>(text, &Options::new()).ok()
}

/// Classifies a JSON number exactly: integers stay integers at any size.
fn number(b: &mut Builder, key: u64, text: &[u8]) -> Result<()> {
    if !text.iter().any(|&c| matches!(c, b'.' | b'e' | b'E')) {
        if let Some(v) = parse_i64(text) {
            return b.push(key, Item::Num(NumTy::JsonInt, v as u64));
        }
        if let Some(v) = std::str::from_utf8(text).ok().and_then(|s| s.parse::<u64>().ok()) {
            return b.push(key, Item::UInt(v));
        }
        return b.push_bignum(key, text);
    }
    let v = parse_float(text).ok_or_else(|| Error::new(Category::InvalidJson, format!("invalid number {}", String::from_utf8_lossy(text))))?;
    if v.is_infinite() {
        return Err(Error::new(Category::NotRepresentable, format!("number {} is out of the f64 range", String::from_utf8_lossy(text))));
    }
    b.push(key, Item::Num(NumTy::JsonFloat, v.to_bits()))
}

/// A JSON integer (`-`? digits, already checked by the parser) if it fits i64.
fn parse_i64(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.len() > 18 {
        // Might overflow: let the standard parser decide.
        return std::str::from_utf8(text).ok()?.parse().ok();
    }
    let magnitude = digits.iter().fold(0i64, |acc, &d| acc * 10 + (d - b'0') as i64);
    Some(if negative { -magnitude } else { magnitude })
}

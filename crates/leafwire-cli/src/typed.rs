//! `set` and `delete` inside typed arrays (spec §5.2), which JSON shows as plain arrays of
//! numbers: `leafwire set data.lw /xs/3 2.5` writes one element in place with
//! `Editor::set_element` when the value fits the element type. Anything else (an integer
//! into an f64 array without an integer mask, a string, a new element, a deletion) rewrites
//! the array as the plain array it shows as, and the encoder picks its layout again.

use std::path::Path;

use leafwire::{Category, Document, ElementType, Editor, Kind, Node, Number, Value};

use crate::failure::Failure;
use crate::pointer::{self, Token};

/// A pointer that goes into a typed array: the array's pointer and the index tokens
/// (rows, then the element) below it.
pub struct Inside<'p> {
    array: &'p str,
    indices: Vec<&'p str>,
}

/// Where the tokens of `pointer` enter a typed array, if they do before the last one.
pub fn inside<'p>(doc: &Document<'_>, pointer: &'p str, tokens: &[Token<'p>]) -> Option<Inside<'p>> {
    let mut node = doc.root();
    for (i, token) in tokens.iter().enumerate() {
        if node.kind() == Kind::TypedArray {
            let array = if i == 0 { "" } else { &pointer[..tokens[i - 1].end] };
            return Some(Inside { array, indices: tokens[i..].iter().map(|t| t.raw).collect() });
        }
        node = node.pointer(&format!("/{}", token.raw)).ok()?;
    }
    None
}

/// Sets one element in place when it can, else rewrites the array with the change.
pub fn set(editor: &mut Editor, input: &Path, at: &Inside<'_>, value: &Value) -> Result<(), Failure> {
    let doc = editor.document().map_err(|e| Failure::leafwire(input, e))?;
    let array = doc.pointer(at.array).map_err(|e| Failure::leafwire(input, e))?;
    let typed = array.typed().map_err(|e| Failure::leafwire(input, e))?;
    let shape = typed.shape();
    let flat = (at.indices.len() == shape.len())
        .then(|| flat_index(&at.indices, &shape))
        .flatten()
        .zip(number(typed.element_type(), value));
    if let Some((index, number)) = flat {
        match editor.set_element(at.array, index, number) {
            Ok(()) => return Ok(()),
            // The value does not fit the element type: rewrite below.
            Err(e) if e.category() == Category::WrongType => {}
            Err(e) => return Err(Failure::leafwire(input, e)),
        }
    }
    rewrite(editor, input, at, Some(value))
}

/// Removes an element (or a row) of a typed array.
pub fn delete(editor: &mut Editor, input: &Path, at: &Inside<'_>) -> Result<(), Failure> {
    rewrite(editor, input, at, None)
}

/// Replaces the typed array by its plain form with the element at `at` set to `value`
/// (appended for `-` or the row's length), or removed for `None`. The pointer was
/// resolved before: its indices are in range.
fn rewrite(editor: &mut Editor, input: &Path, at: &Inside<'_>, value: Option<&Value>) -> Result<(), Failure> {
    let doc = editor.document().map_err(|e| Failure::leafwire(input, e))?;
    let array = doc.pointer(at.array).map_err(|e| Failure::leafwire(input, e))?;
    let mut plain = expand(&array).map_err(|e| Failure::leafwire(input, e))?;
    let (last, rows) = at.indices.split_last().expect("a pointer into a typed array has an index");
    let mut row = &mut plain;
    for token in rows {
        row = match (row, pointer::index(token)) {
            (Value::Array(items), Some(i)) if i < items.len() => &mut items[i],
            _ => return Err(Failure::internal(format!("row {token} of {} not found", at.array))),
        };
    }
    let Value::Array(items) = row else {
        return Err(Failure::internal(format!("{} does not expand to arrays", at.array)));
    };
    match (pointer::index(last).filter(|&i| i < items.len()), value) {
        (Some(i), Some(value)) => items[i] = value.clone(),
        (None, Some(value)) => items.push(value.clone()),
        (Some(i), None) => {
            items.remove(i);
        }
        (None, None) => return Err(Failure::internal(format!("nothing to delete at {last} in {}", at.array))),
    }
    editor.set(at.array, &relayout(plain)).map_err(|e| Failure::leafwire(input, e))
}

/// The value laid out as `from-json` would lay out its JSON text: arrays of numbers
/// become typed arrays again (the encoder keeps a plain `Value::Array` plain). A value
/// with no JSON form (a NaN element) stays as it is.
fn relayout(plain: Value) -> Value {
    let text = leafwire::encode(&plain).and_then(|bytes| leafwire::json::to_json(&bytes));
    text.and_then(|text| leafwire::json::parse(text.as_bytes())).unwrap_or(plain)
}

/// A typed array (or a row of one) as nested plain arrays of its elements.
fn expand(node: &Node<'_>) -> leafwire::Result<Value> {
    let typed = node.typed()?;
    let shape = typed.shape();
    let mut elements = (0..typed.element_count()).map(|i| typed.element(i));
    Ok(nest(&shape, &mut elements))
}

fn nest(shape: &[usize], elements: &mut impl Iterator<Item = Value>) -> Value {
    match shape.split_first() {
        None => elements.next().unwrap_or_default(),
        Some((&n, rest)) => Value::Array((0..n).map(|_| nest(rest, elements)).collect()),
    }
}

/// The flat (row-major) index of an element given one index per axis.
fn flat_index(indices: &[&str], shape: &[usize]) -> Option<usize> {
    indices.iter().zip(shape).try_fold(0usize, |flat, (token, &dim)| {
        let i = pointer::index(token).filter(|&i| i < dim)?;
        flat.checked_mul(dim)?.checked_add(i)
    })
}

/// The value as an element of `element` type, if it is one JSON-wise: a bool only for
/// bool arrays, an integer for integer arrays (and f64 ones, which may keep integers
/// with a mask), a float for float arrays.
fn number(element: ElementType, value: &Value) -> Option<Number> {
    use ElementType::*;
    match (element, value) {
        (Bool, Value::Bool(b)) => Some(Number::Int(i64::from(*b))),
        (Bool, _) => None,
        (F32 | F64, Value::F64(v)) => Some(Number::Float(*v)),
        (F32 | F64, Value::F32(v)) => Some(Number::Float(f64::from(*v))),
        (F64, Value::Int(v)) => Some(Number::Int(*v)),
        (F32 | F64, _) => None,
        (_, Value::Int(v)) => Some(Number::Int(*v)),
        (_, Value::UInt(v)) => Some(Number::UInt(*v)),
        _ => None,
    }
}

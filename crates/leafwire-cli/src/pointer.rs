//! JSON Pointers (RFC 6901) for `get`, `set` and `delete`, with one wording for a pointer
//! that names nothing, whatever the command: the first missing segment, where it was
//! looked for, and the whole pointer, e.g.
//!
//! ```text
//! no "c" in /b (path /b/c/d)
//! no "9" in /xs, an array of 4 items (path /xs/9)
//! no "b" in /a, which is an integer (path /a/b)
//! ```

use std::path::Path;

use leafwire::{Category, Document, Kind, Node};

use crate::failure::Failure;

/// One reference token of a pointer.
pub struct Token<'p> {
    /// The token as written, escapes and all.
    pub raw: &'p str,
    /// The key it names: `~1` and `~0` unescaped.
    pub key: String,
    /// Where the token ends in the pointer: `pointer[..end]` is the pointer to it.
    pub end: usize,
}

/// Splits `pointer` into its tokens; `""` (the root) has none.
pub fn tokens<'p>(input: &Path, pointer: &'p str) -> Result<Vec<Token<'p>>, Failure> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let not_a_pointer = |why: &str| Failure::new(input, format!("{} is not a JSON Pointer: {why}", quote(pointer)));
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(not_a_pointer("it must be empty or start with \"/\""));
    };
    let mut out = Vec::new();
    let mut end = 0;
    for raw in rest.split('/') {
        end += 1 + raw.len();
        let mut key = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c != '~' {
                key.push(c);
                continue;
            }
            match chars.next() {
                Some('0') => key.push('~'),
                Some('1') => key.push('/'),
                _ => return Err(not_a_pointer("\"~\" must be followed by \"0\" or \"1\"")),
            }
        }
        out.push(Token { raw, key, end });
    }
    Ok(out)
}

/// The value at `pointer`. The document's own lookup runs first; only when it fails is
/// the pointer walked again, token by token, to name the first one that is missing.
pub fn resolve<'a>(doc: &Document<'a>, input: &Path, pointer: &str) -> Result<Node<'a>, Failure> {
    let tokens = tokens(input, pointer)?;
    resolve_first(doc, input, pointer, &tokens, tokens.len())
}

/// The value at the first `n` of `pointer`'s `tokens` (its parent, for `n = len - 1`);
/// a failure names the whole pointer.
pub fn resolve_first<'a>(doc: &Document<'a>, input: &Path, pointer: &str, tokens: &[Token<'_>], n: usize) -> Result<Node<'a>, Failure> {
    let prefix = match n {
        0 => "",
        _ => &pointer[..tokens[n - 1].end],
    };
    match doc.pointer(prefix) {
        Ok(node) => Ok(node),
        Err(e) if matches!(e.category(), Category::NotFound | Category::WrongType) => {
            let mut node = doc.root();
            for (i, token) in tokens[..n].iter().enumerate() {
                match node.pointer(&format!("/{}", token.raw)) {
                    Ok(child) => node = child,
                    Err(step) if matches!(step.category(), Category::NotFound | Category::WrongType) => {
                        return Err(missing(input, &node, pointer, tokens, i));
                    }
                    Err(_) => break,
                }
            }
            Err(Failure::leafwire(input, e))
        }
        Err(e) => Err(Failure::leafwire(input, e)),
    }
}

/// The failure for token `i` of `pointer` missing in `parent` (the value at the tokens
/// before it).
pub fn missing(input: &Path, parent: &Node<'_>, pointer: &str, tokens: &[Token<'_>], i: usize) -> Failure {
    let token = &tokens[i];
    let at = match i {
        0 => "the root",
        _ => &pointer[..tokens[i - 1].end],
    };
    let what = match parent.kind() {
        Kind::Object => String::new(),
        Kind::Array | Kind::TypedArray => match parent.len() {
            Ok(0) => ", an empty array".to_owned(),
            Ok(1) => ", an array of 1 item".to_owned(),
            Ok(n) => format!(", an array of {n} items"),
            Err(_) => ", an array".to_owned(),
        },
        Kind::IntMap => ", an intmap (integer keys)".to_owned(),
        kind => format!(", which is {}", scalar_name(kind)),
    };
    Failure::new(input, format!("no {} in {at}{what} (path {pointer})", quote(&token.key)))
}

/// Whether `token` may name a new child of `parent` in `set`: an object key, an intmap's
/// integer key, or the end of an array (`-` or its length).
pub fn settable(parent: &Node<'_>, token: &Token<'_>) -> bool {
    match parent.kind() {
        Kind::Object => true,
        Kind::IntMap => token.key.parse::<i64>().is_ok(),
        Kind::Array | Kind::TypedArray => token.key == "-" || index(&token.key).zip(parent.len().ok()).is_some_and(|(i, n)| i <= n),
        _ => false,
    }
}

/// An array index as RFC 6901 writes it: digits, no leading zero.
pub fn index(token: &str) -> Option<usize> {
    let canonical = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    canonical.then(|| token.parse().ok()).flatten()
}

fn scalar_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Null => "null",
        Kind::Bool => "a bool",
        Kind::Int | Kind::UInt => "an integer",
        Kind::F64 | Kind::F32 => "a float",
        Kind::String => "a string",
        Kind::Bytes => "bytes",
        Kind::BigNum => "a big integer",
        _ => "a container",
    }
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

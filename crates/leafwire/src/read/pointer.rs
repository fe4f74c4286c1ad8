//! JSON Pointers (RFC 6901): the one tokenizer, a prepared [`Pointer`] that parses and
//! hashes its tokens once for any number of documents, and the walk that resolves tokens
//! against a document.
//!
//! The walk works on bare (tag, payload) pairs for object and array steps and reads only
//! the container headers and slots on the path; a typed array's header is read once and
//! the remaining tokens become index arithmetic. Errors are built out of line and given
//! the pointer's text by the caller.

use std::str::FromStr;

use super::lookup;
use super::typed::{element_slot, mask_bit, masked_slot, TypedRef};
use super::Node;
use crate::error::{Category, Error, Result};
use crate::format::typed::{rank1, rank2, Rank2, TypedHeader};
use crate::format::{hash, tag};

/// A JSON Pointer parsed once: its tokens unescaped, their key hashes and array indices
/// computed, ready to resolve against many documents with [`Node::resolve`] or
/// [`crate::Document::resolve`].
///
/// ```
/// let bytes = leafwire::json::from_json(br#"{"a": {"b": [10, 20]}}"#)?;
/// let pointer: leafwire::Pointer = "/a/b/1".parse()?;
/// let doc = leafwire::Document::open(&bytes)?;
/// assert_eq!(doc.resolve(&pointer)?.as_i64()?, 20);
/// # Ok::<(), leafwire::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    text: Box<str>,
    steps: Box<[Step]>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Step {
    key: Box<[u8]>,
    hash: u64,
    index: Option<usize>,
}

impl Step {
    /// The token, unescaped.
    pub(super) fn key(&self) -> &[u8] {
        &self.key
    }
}

impl Pointer {
    /// Parses a JSON Pointer: empty (the root) or `/`-separated tokens, with `~0` for `~`
    /// and `~1` for `/`.
    pub fn parse(text: &str) -> Result<Pointer> {
        let steps = tokens(text)?
            .map(|token| {
                let key = unescape(token).map_err(|e| e.with_path(text))?;
                Ok(Step { hash: hash::key_hash(&key), index: array_index(&key), key: key.into_boxed_slice() })
            })
            .collect::<Result<_>>()?;
        Ok(Pointer { text: text.into(), steps })
    }

    /// The pointer's text, as given.
    pub(super) fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Number of tokens (0 for the root).
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

impl FromStr for Pointer {
    type Err = Error;

    fn from_str(text: &str) -> Result<Pointer> {
        Pointer::parse(text)
    }
}

impl std::fmt::Display for Pointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// One token as the walk needs it: its (unescaped) bytes, key hash and array index.
pub(super) trait Token {
    fn bytes(&self) -> &[u8];
    fn hash(&self) -> u64;
    fn index(&self) -> Option<usize>;
}

impl Token for &Step {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        &self.key
    }
    #[inline(always)]
    fn hash(&self) -> u64 {
        self.hash
    }
    #[inline(always)]
    fn index(&self) -> Option<usize> {
        self.index
    }
}

/// A token borrowed from the pointer's text, which holds no escape.
impl Token for &[u8] {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self
    }
    #[inline(always)]
    fn hash(&self) -> u64 {
        hash::key_hash(self)
    }
    #[inline(always)]
    fn index(&self) -> Option<usize> {
        array_index(self)
    }
}

impl<'a> Node<'a> {
    /// Resolves a prepared pointer relative to this node.
    #[inline(always)]
    pub fn resolve(&self, pointer: &Pointer) -> Result<Node<'a>> {
        walk(self, pointer.steps.iter()).map_err(|e| e.with_path(pointer.as_str()))
    }

    /// Resolves a JSON Pointer (RFC 6901) relative to this node.
    #[inline(always)]
    pub fn pointer(&self, pointer: &str) -> Result<Node<'a>> {
        let bytes = pointer.as_bytes();
        if bytes.is_empty() {
            return Ok(*self);
        }
        if bytes[0] != b'/' {
            return Err(not_a_pointer(pointer));
        }
        // Tokens with an escape need unescaping into owned bytes: rare, so they take the
        // prepared path; all others are borrowed from the text as they are.
        if has_tilde(bytes) {
            return self.resolve(&Pointer::parse(pointer)?);
        }
        walk(self, Tokens { rest: Some(&bytes[1..]) }).map_err(|e| e.with_path(pointer))
    }
}

/// The tokens of a pointer's text, still escaped.
fn tokens(text: &str) -> Result<impl Iterator<Item = &str>> {
    match text.as_bytes().first() {
        None => Ok(None.into_iter().flatten()),
        Some(b'/') => Ok(Some(text[1..].split('/')).into_iter().flatten()),
        Some(_) => Err(not_a_pointer(text)),
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The lowest byte of `word` equal to `byte`, as a bit mask of its high bit (exact for the
/// lowest match, which is all the callers use), or 0.
#[inline(always)]
fn matches(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * byte as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Whether `bytes` holds a `~`, eight bytes at a time (pointers are short, and a call to a
/// vectorized search would cost more than it saves).
#[inline]
fn has_tilde(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        if matches(u64::from_le_bytes(chunk.try_into().unwrap()), b'~') != 0 {
            return true;
        }
    }
    chunks.remainder().contains(&b'~')
}

/// The `/`-separated tokens of a pointer's text after its first `/`, found eight bytes at
/// a time.
struct Tokens<'t> {
    rest: Option<&'t [u8]>,
}

impl<'t> Iterator for Tokens<'t> {
    type Item = &'t [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'t [u8]> {
        let rest = self.rest?;
        let mut at = 0;
        while at + 8 <= rest.len() {
            let found = matches(u64::from_le_bytes(rest[at..at + 8].try_into().unwrap()), b'/');
            if found != 0 {
                let end = at + found.trailing_zeros() as usize / 8;
                self.rest = Some(&rest[end + 1..]);
                return Some(&rest[..end]);
            }
            at += 8;
        }
        match rest[at..].iter().position(|&b| b == b'/') {
            Some(i) => {
                self.rest = Some(&rest[at + i + 1..]);
                Some(&rest[..at + i])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// Resolves `tokens` from `start`.
#[inline(always)]
pub(super) fn walk<'a, T: Token>(start: &Node<'a>, mut tokens: impl Iterator<Item = T>) -> Result<Node<'a>> {
    if start.tag == tag::TYPED {
        return walk_typed(*start, tokens);
    }
    let (buf, keys, dict) = (start.buf, start.keys, &start.dict);
    let (mut t, mut payload) = (start.tag, start.payload);
    while let Some(token) = tokens.next() {
        (t, payload) = match t {
            tag::OBJECT => lookup::object_child_hashed(buf, keys, dict, payload, token.bytes(), token.hash())?,
            tag::ARRAY => lookup::array_child(buf, payload, token.index().ok_or_else(|| not_an_index(token.bytes()))?)?,
            tag::TYPED => return walk_typed(start.with(t, payload), std::iter::once(token).chain(tokens)),
            tag::PACKED | tag::PACKED_OBJECT => return Err(super::packed::inside_packed(payload)),
            tag::INTMAP => {
                let key = int_key(token.bytes())?;
                let node = start.with(t, payload).get_int(key)?;
                (node.tag, node.payload)
            }
            _ => return Err(cannot_step(start.with(t, payload), token.bytes())),
        };
    }
    Ok(if t == start.tag && payload == start.payload { *start } else { start.with(t, payload) })
}

/// The rest of a walk inside a typed array: the header is read once, each token is an
/// index along the next axis, and the result is a row (a node with a level) or an element.
#[inline(always)]
fn walk_typed<'a, T: Token>(node: Node<'a>, mut tokens: impl Iterator<Item = T>) -> Result<Node<'a>> {
    // The common cases, one index into a one-dimensional array without a mask or two
    // into a two-dimensional one (its integer mask read here too), without spare rows,
    // are read inline (`rank1`, `rank2`), without building the header.
    if node.level == 0 {
        if let Some((element, data_pos, count)) = rank1(node.buf, node.payload) {
            let Some(first) = tokens.next() else { return Ok(node) };
            if let Some(second) = tokens.next() {
                return walk_typed_general(node, [first, second].into_iter().chain(tokens));
            }
            let (i, size) = (index_below(&first, count, node.payload)?, element.size());
            let at = data_pos + i * size;
            return Ok(node.element_node(element_slot(element, &node.buf[at..at + size])));
        }
        if let Some(Rank2 { element, data_pos, rows, columns, mask_pos }) = rank2(node.buf, node.payload) {
            let Some(first) = tokens.next() else { return Ok(node) };
            let Some(second) = tokens.next() else { return walk_typed_general(node, std::iter::once(first)) };
            if let Some(third) = tokens.next() {
                return walk_typed_general(node, [first, second, third].into_iter().chain(tokens));
            }
            let i = index_below(&first, rows, node.payload)?;
            let j = index_below(&second, columns, node.payload)?;
            let (flat, size) = (i * columns + j, element.size());
            let at = data_pos + flat * size;
            let is_int = mask_pos.is_some_and(|mask| mask_bit(node.buf, mask, flat));
            return Ok(node.element_node(masked_slot(element_slot(element, &node.buf[at..at + size]), is_int)));
        }
    }
    walk_typed_general(node, tokens)
}

/// A token's index along an axis of `len`, as the general walk checks it.
#[inline(always)]
fn index_below<T: Token>(token: &T, len: usize, offset: u64) -> Result<usize> {
    let i = token.index().ok_or_else(|| not_an_index(token.bytes()))?;
    if i >= len {
        return Err(lookup::out_of_range(i, len, offset));
    }
    Ok(i)
}

#[cold]
fn walk_typed_general<'a, T: Token>(node: Node<'a>, tokens: impl Iterator<Item = T>) -> Result<Node<'a>> {
    let header = TypedHeader::parse(node.buf, node.payload)?;
    let (mut level, mut start) = (node.level, node.start);
    for token in tokens {
        if level == header.rank {
            let element = TypedRef { buf: node.buf, header, level: level - 1, start }.element(0);
            return Err(Error::not_found(format!("cannot step into {} with \"{}\"", element.kind(), String::from_utf8_lossy(token.bytes()))));
        }
        let i = token.index().ok_or_else(|| not_an_index(token.bytes()))?;
        let dim = header.shape[level] as usize;
        if i >= dim {
            return Err(lookup::out_of_range(i, dim, node.payload));
        }
        start += i * header.stride(level);
        level += 1;
    }
    if level < header.rank {
        return Ok(Node { level, start, ..node });
    }
    Ok(node.element_node((TypedRef { buf: node.buf, header, level: level - 1, start }).element_slot(0)))
}

/// An array index token (RFC 6901): decimal digits, no leading zero, at most 19 digits
/// (so the value fits without overflow). The one parser of the rule: the editor uses it too.
#[inline]
pub(crate) fn array_index(b: &[u8]) -> Option<usize> {
    let valid = !b.is_empty() && b.len() <= 19 && b.iter().all(u8::is_ascii_digit) && (b[0] != b'0' || b.len() == 1);
    valid.then(|| b.iter().fold(0usize, |acc, &d| acc * 10 + (d - b'0') as usize))
}

fn int_key(token: &[u8]) -> Result<i64> {
    std::str::from_utf8(token).ok().and_then(|t| t.parse::<i64>().ok())
        .ok_or_else(|| Error::not_found(format!("\"{}\" is not an integer key", String::from_utf8_lossy(token))))
}

fn unescape(token: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(token.len());
    let mut bytes = token.bytes();
    while let Some(b) = bytes.next() {
        if b != b'~' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'0') => out.push(b'~'),
            Some(b'1') => out.push(b'/'),
            _ => return Err(Error::not_found(format!("invalid escape in JSON Pointer token \"{token}\""))),
        }
    }
    Ok(out)
}

#[cold]
fn not_a_pointer(text: &str) -> Error {
    Error::new(Category::NotFound, "a JSON Pointer must be empty or start with '/'").with_path(text)
}

#[cold]
pub(super) fn not_an_index(token: &[u8]) -> Error {
    Error::not_found(format!("\"{}\" is not an array index", String::from_utf8_lossy(token)))
}

#[cold]
fn cannot_step(node: Node<'_>, token: &[u8]) -> Error {
    Error::not_found(format!("cannot step into {} with \"{}\"", node.kind(), String::from_utf8_lossy(token)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_is_found_in_every_position() {
        for len in 0..20 {
            assert!(!has_tilde(&vec![b'a'; len]));
            for at in 0..len {
                let mut text = vec![b'a'; len];
                text[at] = b'~';
                assert!(has_tilde(&text), "{len} {at}");
                // Bytes next to '~' in value must not trip the test.
                text[at] = b'~' + 1;
                assert!(!has_tilde(&text), "{len} {at}");
            }
        }
    }

    #[test]
    fn tokens_unescape_and_index() {
        let p = Pointer::parse("/a~1b/~0/0/01/").unwrap();
        let keys: Vec<&[u8]> = p.steps.iter().map(|s| &s.key[..]).collect();
        assert_eq!(keys, [&b"a/b"[..], b"~", b"0", b"01", b""]);
        let indices: Vec<Option<usize>> = p.steps.iter().map(|s| s.index).collect();
        assert_eq!(indices, [None, None, Some(0), None, None]);
        assert!(Pointer::parse("a").is_err());
        for text in ["/", "//", "/abcdefgh/ijklmnopq/r", "/a/bcdefghijklmnop/", "/abcdefghijklmnop"] {
            let fast: Vec<&[u8]> = Tokens { rest: Some(&text.as_bytes()[1..]) }.collect();
            let slow: Vec<&[u8]> = text[1..].split('/').map(str::as_bytes).collect();
            assert_eq!(fast, slow, "{text}");
        }
        assert!(Pointer::parse("/~2").is_err());
        assert_eq!(Pointer::parse("").unwrap().len(), 0);
    }
}

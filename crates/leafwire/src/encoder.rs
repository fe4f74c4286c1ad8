//! A streaming encoder: values pushed one at a time, depth-first, straight into the
//! builder — no `Value` tree in between. The entry point for bindings and other producers
//! that walk their own data structures.
//!
//! ```
//! let mut e = leafwire::Encoder::new(leafwire::DEFAULT_MAX_DEPTH);
//! e.begin_object()?;
//! e.key("name")?;
//! e.string("mesh")?;
//! e.key("tags")?;
//! e.begin_array()?;
//! e.int(1)?;
//! e.int(2)?;
//! e.end()?;
//! e.end()?;
//! let bytes = e.finish()?;
//! let leafwire::Value::Object(doc) = leafwire::decode(&bytes)? else { unreachable!() };
//! // Arrays stay generic arrays: a Python list or a `Vec<Value>` keeps its form.
//! assert_eq!(doc["tags"], leafwire::Value::Array(vec![1.into(), 2.into()]));
//! # Ok::<(), leafwire::Error>(())
//! ```

use crate::builder::{Builder, FrameKind, Item, NumTy};
use crate::error::{Category, Error, Result};
use crate::format::{ElementType, MAX_RANK};
use crate::value::is_exact_integer;

/// Builds one document from a depth-first stream of calls.
///
/// Inside an object every value (scalar or container) is preceded by [`key`](Self::key),
/// inside an intmap by [`int_key`](Self::int_key); inside an array and at the top level
/// values take no key. [`end`](Self::end) closes the innermost container. Arrays stay
/// generic arrays, exactly as pushed (use [`typed`](Self::typed) for typed arrays).
///
/// Misuse — a value without its key, a key outside an object, `end` without a container,
/// a second root value, `finish` with containers open — returns an error of
/// [`Category::Custom`]; a duplicate key one of [`Category::DuplicateKey`] (reported when
/// the value under it is complete); nesting beyond `max_depth` one of
/// [`Category::DepthLimit`]. After any error the encoder refuses further calls.
pub struct Encoder {
    b: Builder,
    /// The open containers, innermost last, each with the key it will be pushed under.
    open: Vec<(FrameKind, u64)>,
    /// The key set by `key`/`int_key` for the next value.
    pending: Option<u64>,
    /// A root value has been completed.
    has_root: bool,
    /// An error happened: the builder may be half-updated, so nothing more is accepted.
    failed: bool,
}

/// An object key interned by [`Encoder::intern`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId(u64);

fn misuse(message: &'static str) -> Error {
    Error::new(Category::Custom, message)
}

impl Encoder {
    /// An encoder accepting nesting up to `max_depth` containers.
    pub fn new(max_depth: usize) -> Encoder {
        Encoder { b: Builder::new(max_depth), open: Vec::new(), pending: None, has_root: false, failed: false }
    }

    /// The number of containers currently open.
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    #[inline]
    fn check(&self) -> Result<()> {
        if self.failed {
            return Err(misuse("encoder used after an error"));
        }
        Ok(())
    }

    #[inline]
    fn track<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// The key under which the next value goes into its parent, consuming a pending key.
    #[inline]
    fn next_key(&mut self) -> Result<u64> {
        self.check()?;
        match self.open.last() {
            Some((FrameKind::Array, _)) => Ok(0),
            Some(_) => match self.pending.take() {
                Some(k) => Ok(k),
                None => {
                    self.failed = true;
                    Err(misuse("a value inside an object or intmap needs a key first"))
                }
            },
            None if self.has_root => {
                self.failed = true;
                Err(misuse("a document has exactly one root value"))
            }
            None => {
                self.has_root = true;
                Ok(0)
            }
        }
    }

    #[inline]
    fn item(&mut self, item: Item) -> Result<()> {
        let key = self.next_key()?;
        let r = self.b.push(key, item);
        self.track(r)
    }

    /// Sets the key of the next value; only inside an object.
    #[inline]
    pub fn key(&mut self, key: &str) -> Result<()> {
        self.check()?;
        if !matches!(self.open.last(), Some((FrameKind::Object, _))) || self.pending.is_some() {
            self.failed = true;
            return Err(misuse("key() is only allowed inside an object, once before each value"));
        }
        self.pending = Some(self.b.key_id(key));
        Ok(())
    }

    /// Interns an object key ahead of its use with [`key_interned`](Self::key_interned): for
    /// producers that meet the same keys many times and can cache the id (by their own
    /// handle of the key) more cheaply than the text is hashed.
    pub fn intern(&mut self, key: &str) -> KeyId {
        KeyId(self.b.key_id(key))
    }

    /// [`key`](Self::key) with a key interned by [`intern`](Self::intern) of this encoder.
    #[inline]
    pub fn key_interned(&mut self, key: KeyId) -> Result<()> {
        self.check()?;
        if !matches!(self.open.last(), Some((FrameKind::Object, _))) || self.pending.is_some() || key.0 >= self.b.dict.len() as u64 {
            self.failed = true;
            return Err(misuse("key_interned() is only allowed inside an object, once before each value, with a key of this encoder"));
        }
        self.pending = Some(key.0);
        Ok(())
    }

    /// Sets the key of the next value; only inside an intmap.
    #[inline]
    pub fn int_key(&mut self, key: i64) -> Result<()> {
        self.check()?;
        if !matches!(self.open.last(), Some((FrameKind::IntMap, _))) || self.pending.is_some() {
            self.failed = true;
            return Err(misuse("int_key() is only allowed inside an intmap, once before each value"));
        }
        self.pending = Some(key as u64);
        Ok(())
    }

    fn begin(&mut self, kind: FrameKind) -> Result<()> {
        let key = self.next_key()?;
        let r = self.b.open(kind);
        self.track(r)?;
        self.open.push((kind, key));
        Ok(())
    }

    /// Opens an array (a generic one: it is never turned into a typed array).
    pub fn begin_array(&mut self) -> Result<()> {
        self.begin(FrameKind::Array)
    }

    /// Opens an object (string keys, see [`key`](Self::key)).
    pub fn begin_object(&mut self) -> Result<()> {
        self.begin(FrameKind::Object)
    }

    /// Opens an intmap (i64 keys, see [`int_key`](Self::int_key)).
    pub fn begin_intmap(&mut self) -> Result<()> {
        self.begin(FrameKind::IntMap)
    }

    /// Closes the innermost open container.
    pub fn end(&mut self) -> Result<()> {
        self.check()?;
        if self.pending.is_some() {
            self.failed = true;
            return Err(misuse("end() after a key without its value"));
        }
        let Some((kind, key)) = self.open.pop() else {
            self.failed = true;
            return Err(misuse("end() without an open container"));
        };
        let r = match kind {
            FrameKind::Array => self.b.close_generic(key),
            _ => self.b.close(key),
        };
        self.track(r)
    }

    pub fn null(&mut self) -> Result<()> {
        self.item(Item::Null)
    }

    pub fn bool(&mut self, v: bool) -> Result<()> {
        self.item(Item::Bool(v))
    }

    pub fn int(&mut self, v: i64) -> Result<()> {
        self.item(Item::Num(NumTy::Exact(ElementType::I64), v as u64))
    }

    /// An unsigned integer: an int up to `i64::MAX`, a uint above.
    pub fn uint(&mut self, v: u64) -> Result<()> {
        if v <= i64::MAX as u64 {
            self.int(v as i64)
        } else {
            self.item(Item::UInt(v))
        }
    }

    pub fn f64(&mut self, v: f64) -> Result<()> {
        self.item(Item::Num(NumTy::Exact(ElementType::F64), v.to_bits()))
    }

    pub fn f32(&mut self, v: f32) -> Result<()> {
        self.item(Item::Num(NumTy::Exact(ElementType::F32), v.to_bits() as u64))
    }

    pub fn string(&mut self, v: &str) -> Result<()> {
        let key = self.next_key()?;
        let r = self.b.push_str(key, v.as_bytes());
        self.track(r)
    }

    pub fn bytes(&mut self, v: &[u8]) -> Result<()> {
        let key = self.next_key()?;
        let r = self.b.push_bytes(key, v);
        self.track(r)
    }

    /// An integer of any size as decimal text (an optional `-`, digits, no leading zero).
    /// One that fits in 64 bits is stored as an int or uint, as the format requires.
    pub fn bignum(&mut self, digits: &str) -> Result<()> {
        self.check()?;
        if !crate::format::is_bignum_text(digits.as_bytes()) {
            self.failed = true;
            return Err(Error::new(Category::Custom, format!("bignum {digits:?} is not decimal integer text")));
        }
        if let Ok(v) = digits.parse::<i64>() {
            return self.int(v);
        }
        if let Ok(v) = digits.parse::<u64>() {
            return self.uint(v);
        }
        let key = self.next_key()?;
        let r = self.b.push_bignum(key, digits.as_bytes());
        self.track(r)
    }

    /// A typed array of `element`s, given its shape (rank 1..=32, C order) and its element
    /// bytes, little-endian. `mask` (f64 only) flags the elements that are integers
    /// (integral within ±2^53). Bool elements must be 0 or 1.
    pub fn typed(&mut self, element: ElementType, shape: &[usize], le_bytes: &[u8], mask: Option<&[bool]>) -> Result<()> {
        self.check()?;
        let count = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
        let fits = count.and_then(|c| c.checked_mul(element.size())) == Some(le_bytes.len());
        if shape.is_empty() || shape.len() > MAX_RANK || !fits {
            self.failed = true;
            return Err(Error::new(
                Category::LimitExceeded,
                format!("shape {shape:?} does not fit {} bytes of {element:?} elements (rank 1..=32)", le_bytes.len()),
            ));
        }
        if element == ElementType::Bool && le_bytes.iter().any(|&b| b > 1) {
            self.failed = true;
            return Err(misuse("bool typed array elements must be 0 or 1"));
        }
        if let Some(m) = mask {
            let valid = element == ElementType::F64
                && m.len() == count.unwrap_or(0)
                && le_bytes.chunks_exact(8).zip(m).all(|(c, &x)| !x || is_exact_integer(f64::from_le_bytes(c.try_into().unwrap())));
            if !valid {
                self.failed = true;
                return Err(Error::new(
                    Category::LimitExceeded,
                    "integer mask (f64 only) must have one flag per element, set only on integral values within ±2^53",
                ));
            }
        }
        // A mask without any integer is no mask (as `TypedArray::with_int_mask` does).
        let mask = mask.filter(|m| m.iter().any(|&x| x));
        let key = self.next_key()?;
        let shape = shape.iter().map(|&d| d as u64).collect();
        let r = self.b.push_typed(key, element, shape, le_bytes, mask);
        self.track(r)
    }

    /// A table (spec §15); its body is copied into the document as it is.
    pub fn table(&mut self, table: &crate::table::Table) -> Result<()> {
        self.check()?;
        let key = self.next_key()?;
        let r = self.b.push_table(key, table.clone());
        self.track(r)
    }

    /// Lays out the document. Fails unless exactly one root value is complete.
    pub fn finish(self) -> Result<Vec<u8>> {
        self.check()?;
        if !self.open.is_empty() || !self.has_root {
            return Err(misuse("finish() needs exactly one complete root value (containers still open?)"));
        }
        self.b.finish()?.encode()
    }

    /// [`finish`](Self::finish) into `writer`: the same bytes, without the whole document
    /// in memory (only its structure section; the data blocks are written as they are laid
    /// down). Returns the document's length.
    pub fn finish_to(self, writer: &mut dyn std::io::Write) -> Result<u64> {
        self.check()?;
        if !self.open.is_empty() || !self.has_root {
            return Err(misuse("finish() needs exactly one complete root value (containers still open?)"));
        }
        self.b.finish()?.write_to(writer)
    }

    /// Hands the finished plan to a stream writer, which lays it out as a frame.
    pub(crate) fn finish_plan(self, sink: &mut impl crate::direct::PlanSink) -> Result<()> {
        self.check()?;
        if !self.open.is_empty() || !self.has_root {
            return Err(misuse("finish() needs exactly one complete root value (containers still open?)"));
        }
        self.b.finish()?.plan_into(sink)
    }
}

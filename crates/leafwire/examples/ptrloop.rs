//! Profiling aid: resolves one JSON Pointer in a loop (`perf record` or callgrind target).
//! `OPEN=1` opens the document in every iteration too, as the corpus bench's lookup does;
//! `PREPARED=1` resolves a `Pointer` parsed once instead of the text; `SCALAR=1` (with
//! `OPEN=1`) also reads the value out, in a function of its own returning a `Result`, as
//! the bench's adapter does (bench/src/corpus/leaf.rs); `CHAIN=1` steps with `get` and `at`
//! instead, each result through `map_err(..)?`.
use std::borrow::Cow;

use leafwire::{Document, Kind, Node};

/// The bench's scalar, the shape its lookup returns (a copy on purpose: the bench is a
/// workspace of its own, and this shape is what reproduces its cost).
#[allow(dead_code)]
enum Scalar<'a> {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Cow<'a, str>),
}

fn scalar<'a>(node: &Node<'a>) -> Result<Scalar<'a>, String> {
    let fail = |e: leafwire::Error| e.to_string();
    Ok(match node.kind() {
        Kind::Null => Scalar::Null,
        Kind::Bool => Scalar::Bool(node.as_bool().map_err(fail)?),
        Kind::Int => Scalar::I64(node.as_i64().map_err(fail)?),
        Kind::UInt => Scalar::U64(node.as_u64().map_err(fail)?),
        Kind::F64 | Kind::F32 => Scalar::F64(node.as_f64().map_err(fail)?),
        Kind::String => Scalar::Str(Cow::Borrowed(node.as_str().map_err(fail)?)),
        other => return Err(format!("{other} is not a scalar")),
    })
}

/// The bench's failure (bench/src/harness/check.rs): two kinds of message.
#[allow(dead_code)]
enum Fail {
    Wrong(String),
    Error(String),
}

impl Fail {
    #[inline(never)]
    fn error(e: impl std::fmt::Display) -> Fail {
        Fail::Error(e.to_string())
    }
}

#[inline(never)]
fn open_and_read<'a>(bytes: &'a [u8], pointer: &leafwire::Pointer) -> Result<Scalar<'a>, Fail> {
    let node = Document::open(bytes).map_err(Fail::error)?.resolve(pointer).map_err(Fail::error)?;
    scalar(&node).map_err(Fail::Wrong)
}

/// `open_and_read` with the pointer's text, parsed in every lookup.
#[inline(never)]
fn open_and_read_text<'a>(bytes: &'a [u8], pointer: &str) -> Result<Scalar<'a>, Fail> {
    let node = Document::open(bytes).map_err(Fail::error)?.pointer(pointer).map_err(Fail::error)?;
    scalar(&node).map_err(Fail::Wrong)
}

/// `open_and_read` stepping with `get` and `at`, each result moved through `map_err(..)?`
/// as user code does (`CHAIN=1`): the pointer's tokens, numbers as indices.
#[inline(never)]
fn open_and_step<'a>(bytes: &'a [u8], tokens: &[String]) -> Result<Scalar<'a>, Fail> {
    let mut node = Document::open(bytes).map_err(Fail::error)?.root();
    for t in tokens {
        node = match t.parse::<usize>() {
            Ok(i) => node.at(i).map_err(Fail::error)?,
            Err(_) => node.get(t).map_err(Fail::error)?,
        };
    }
    scalar(&node).map_err(Fail::Wrong)
}

/// Keeps a lookup's value from being optimized away; counts 1.
fn read(result: Result<Scalar<'_>, Fail>) -> u64 {
    std::hint::black_box(result.ok().expect("the pointer resolves to a scalar"));
    1
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (path, pointer) = (args.next().unwrap(), args.next().unwrap());
    let bytes = leafwire::AlignedBytes::new(&leafwire::json::from_json(&std::fs::read(path).unwrap()).unwrap());
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000_000);
    let flag = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
    let (reopen, prepared, read_out, chain) = (flag("OPEN"), flag("PREPARED"), flag("SCALAR"), flag("CHAIN"));
    let tokens: Vec<String> = pointer.split('/').skip(1).map(String::from).collect();
    let parsed = leafwire::Pointer::parse(&pointer).unwrap();
    let lookup = |doc: &Document<'_>| -> leafwire::Result<()> {
        if prepared { doc.resolve(std::hint::black_box(&parsed)).map(|n| { std::hint::black_box(n.kind()); }) } else { doc.pointer(std::hint::black_box(&pointer)).map(|n| { std::hint::black_box(n.kind()); }) }
    };
    let doc = Document::open(&bytes).unwrap();
    let t = std::time::Instant::now();
    let mut acc = 0u64;
    for _ in 0..n {
        acc += if chain {
            read(open_and_step(std::hint::black_box(&bytes), std::hint::black_box(&tokens)))
        } else if read_out && prepared {
            read(open_and_read(std::hint::black_box(&bytes), std::hint::black_box(&parsed)))
        } else if read_out {
            read(open_and_read_text(std::hint::black_box(&bytes), std::hint::black_box(&pointer)))
        } else if reopen {
            let doc = Document::open(std::hint::black_box(&bytes)).unwrap();
            { lookup(&doc).unwrap(); 1 }
        } else {
            { lookup(&doc).unwrap(); 1 }
        };
    }
    println!("{:.1} ns per lookup ({acc})", t.elapsed().as_nanos() as f64 / n as f64);
}

//! The bytes of `to_vec` are a format decision, not an accident of the serializer: a
//! corpus of generated serde values (every serializer entry point, runs of numbers that
//! become typed arrays and runs that break, rows that merge to rank 2 and 3 and rows that
//! do not, int-keyed maps, bytes, u64 above i64::MAX, empty containers, deep nesting,
//! duplicate keys) must encode to the bytes, or fail with the errors, that the builder
//! path of commit cbe30a6 produced. A change of the digest is a change of the format.

use serde::ser::{
    SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple, SerializeTupleVariant,
    Serializer,
};
use serde::Serialize;

/// A serde value of any shape, serialized through the entry point its variant names.
#[derive(Clone, Debug)]
enum Gen {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    I128(i128),
    U128(u128),
    F32(f32),
    F64(f64),
    Char(char),
    Str(String),
    Bytes(Vec<u8>),
    None,
    Some(Box<Gen>),
    Unit,
    Seq(Vec<Gen>),
    Tuple(Vec<Gen>),
    Struct(Vec<(&'static str, Gen)>),
    StrMap(Vec<(String, Gen)>),
    IntMap(Vec<(i64, Gen)>),
    UnitVariant(&'static str),
    NewtypeVariant(&'static str, Box<Gen>),
    TupleVariant(&'static str, Vec<Gen>),
    StructVariant(&'static str, Vec<(&'static str, Gen)>),
}

const NAMES: [&str; 12] =
    ["id", "name", "values", "tags", "attrs", "flag", "note", "x", "y", "children", "a_rather_long_field_name", "z"];

impl Serialize for Gen {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Gen::Bool(v) => s.serialize_bool(*v),
            Gen::I8(v) => s.serialize_i8(*v),
            Gen::I16(v) => s.serialize_i16(*v),
            Gen::I32(v) => s.serialize_i32(*v),
            Gen::I64(v) => s.serialize_i64(*v),
            Gen::U8(v) => s.serialize_u8(*v),
            Gen::U16(v) => s.serialize_u16(*v),
            Gen::U32(v) => s.serialize_u32(*v),
            Gen::U64(v) => s.serialize_u64(*v),
            Gen::I128(v) => s.serialize_i128(*v),
            Gen::U128(v) => s.serialize_u128(*v),
            Gen::F32(v) => s.serialize_f32(*v),
            Gen::F64(v) => s.serialize_f64(*v),
            Gen::Char(v) => s.serialize_char(*v),
            Gen::Str(v) => s.serialize_str(v),
            Gen::Bytes(v) => s.serialize_bytes(v),
            Gen::None => s.serialize_none(),
            Gen::Some(v) => s.serialize_some(v),
            Gen::Unit => s.serialize_unit(),
            Gen::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for it in items {
                    seq.serialize_element(it)?;
                }
                seq.end()
            }
            Gen::Tuple(items) => {
                let mut t = s.serialize_tuple(items.len())?;
                for it in items {
                    t.serialize_element(it)?;
                }
                t.end()
            }
            Gen::Struct(fields) => {
                let mut st = s.serialize_struct("S", fields.len())?;
                for (k, v) in fields {
                    st.serialize_field(k, v)?;
                }
                st.end()
            }
            Gen::StrMap(entries) => {
                let mut m = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Gen::IntMap(entries) => {
                let mut m = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Gen::UnitVariant(v) => s.serialize_unit_variant("E", 0, v),
            Gen::NewtypeVariant(v, x) => s.serialize_newtype_variant("E", 1, v, x),
            Gen::TupleVariant(v, items) => {
                let mut t = s.serialize_tuple_variant("E", 2, v, items.len())?;
                for it in items {
                    t.serialize_field(it)?;
                }
                t.end()
            }
            Gen::StructVariant(v, fields) => {
                let mut st = s.serialize_struct_variant("E", 3, v, fields.len())?;
                for (k, x) in fields {
                    st.serialize_field(k, x)?;
                }
                st.end()
            }
        }
    }
}

/// A small deterministic generator (no dependency whose stream could change).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xbf58476d1ce4e5b9) ^ (x >> 32)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A number of kind `kind` (0..12), with edge values now and then.
fn number(r: &mut Rng, kind: u64) -> Gen {
    let raw = match r.below(6) {
        0 => 0,
        1 => u64::MAX,
        2 => 1 << 63,
        3 => r.below(300),
        _ => r.next(),
    };
    match kind {
        0 => Gen::Bool(raw & 1 == 1),
        1 => Gen::I8(raw as i8),
        2 => Gen::I16(raw as i16),
        3 => Gen::I32(raw as i32),
        4 => Gen::I64(raw as i64),
        5 => Gen::U8(raw as u8),
        6 => Gen::U16(raw as u16),
        7 => Gen::U32(raw as u32),
        8 => Gen::U64(raw),
        9 => Gen::F32(f32::from_bits(raw as u32)),
        10 => Gen::F64(if r.chance(50) { raw as f64 * 0.25 } else { f64::from_bits(raw) }),
        _ => Gen::I64((raw % 2000) as i64 - 1000),
    }
}

fn numbers(r: &mut Rng, kind: u64, len: usize) -> Vec<Gen> {
    (0..len).map(|_| number(r, kind)).collect()
}

/// A sequence built to exercise the typed-array rules: runs of one type, rows of one
/// shape (rank 2 and 3), and the same with one odd element somewhere.
fn numeric_seq(r: &mut Rng, depth: u32) -> Gen {
    let kind = r.below(12);
    let len = r.below(6) as usize;
    let mut items = match r.below(4) {
        0 | 1 => numbers(r, kind, len),
        2 => {
            let row = r.below(4) as usize;
            (0..len).map(|_| Gen::Seq(numbers(r, kind, row))).collect()
        }
        _ => {
            let (a, b) = (1 + r.below(3) as usize, r.below(3) as usize);
            (0..len).map(|_| Gen::Seq((0..a).map(|_| Gen::Tuple(numbers(r, kind, b))).collect())).collect()
        }
    };
    if r.chance(30) {
        let at = r.below(items.len() as u64 + 1) as usize;
        let odd = if r.chance(50) {
            let kind = r.below(12);
            number(r, kind)
        } else {
            value(r, depth + 1)
        };
        items.insert(at, odd);
    }
    if r.chance(20) {
        Gen::Tuple(items)
    } else {
        Gen::Seq(items)
    }
}

fn fields(r: &mut Rng, depth: u32) -> Vec<(&'static str, Gen)> {
    let mut names: Vec<&'static str> = NAMES.to_vec();
    let n = r.below(6) as usize;
    (0..n)
        .map(|_| {
            let at = r.below(names.len() as u64) as usize;
            let name = names.remove(at);
            (name, value(r, depth + 1))
        })
        .collect()
}

fn value(r: &mut Rng, depth: u32) -> Gen {
    let leaf = depth > 5 || r.chance(35);
    if leaf {
        return match r.below(10) {
            0..=3 => {
                let kind = r.below(12);
                number(r, kind)
            }
            4 => Gen::Str((0..r.below(40)).map(|i| (b'a' + (i % 26) as u8) as char).collect()),
            5 => Gen::Bytes((0..r.below(20)).map(|i| i as u8).collect()),
            6 => [Gen::None, Gen::Unit, Gen::UnitVariant("Unit"), Gen::Char('é')][r.below(4) as usize].clone(),
            7 => Gen::I128(if r.chance(50) { i128::MIN + r.below(10) as i128 } else { r.next() as i128 - 5 }),
            8 => Gen::U128(if r.chance(50) { u128::MAX - r.below(10) as u128 } else { r.next() as u128 }),
            _ => Gen::Str(String::new()),
        };
    }
    match r.below(11) {
        0 | 1 => numeric_seq(r, depth),
        2 => Gen::Seq((0..r.below(5)).map(|_| value(r, depth + 1)).collect()),
        3 | 4 => Gen::Struct(fields(r, depth)),
        5 => {
            // Keys may repeat: the duplicate-key error is part of the contract too.
            let keys = ["k0", "k1", "k2", "k3", "k4", "k5"];
            Gen::StrMap((0..r.below(5)).map(|_| (keys[r.below(6) as usize].to_string(), value(r, depth + 1))).collect())
        }
        6 => {
            let mut k = r.below(5) as i64 - 2;
            Gen::IntMap(
                (0..r.below(5))
                    .map(|_| {
                        let step = if r.chance(20) { 1 << 40 } else { 3 };
                        k += 1 + r.below(step) as i64;
                        (if r.chance(5) { k - 2 } else { k }, value(r, depth + 1))
                    })
                    .collect(),
            )
        }
        7 => Gen::Some(Box::new(value(r, depth + 1))),
        8 => Gen::NewtypeVariant("New", Box::new(value(r, depth + 1))),
        9 => Gen::TupleVariant("Tup", (0..r.below(4)).map(|_| value(r, depth + 1)).collect()),
        _ => Gen::StructVariant("Rec", fields(r, depth)),
    }
}

/// FNV-1a, 64 bits.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h = (*h ^ b as u64).wrapping_mul(0x100000001b3);
    }
}

/// What the encoder makes of a case: the bytes, or the error's text.
fn outcome(v: &Gen) -> Vec<u8> {
    match leafwire::to_vec(v) {
        Ok(bytes) => bytes,
        Err(e) => format!("error: {e}").into_bytes(),
    }
}

fn corpus() -> Vec<Gen> {
    let mut r = Rng(0x5eed);
    let mut cases: Vec<Gen> = (0..3000).map(|_| value(&mut r, 0)).collect();
    // Nesting at the limit and past it.
    for depth in [127, 128, 129] {
        let mut v = Gen::Seq(vec![Gen::F64(1.0), Gen::F64(2.0)]);
        for i in 1..depth {
            v = if i % 2 == 0 { Gen::Seq(vec![v]) } else { Gen::Struct(vec![("x", v)]) };
        }
        cases.push(v);
    }
    cases
}

#[test]
fn to_vec_writes_the_bytes_of_cbe30a6() {
    let mut digest = 0xcbf29ce484222325u64;
    let dump = std::env::var_os("LEAFWIRE_DUMP_CASES");
    let mut per_case = String::new();
    for (i, case) in corpus().iter().enumerate() {
        let out = outcome(case);
        let mut h = 0xcbf29ce484222325u64;
        fnv(&mut h, &out);
        per_case += &format!("{i} {h:016x}\n");
        fnv(&mut digest, &h.to_le_bytes());
    }
    if let Some(path) = dump {
        std::fs::write(path, per_case).unwrap();
    }
    assert_eq!(
        digest, EXPECTED_DIGEST,
        "the bytes of to_vec changed (set LEAFWIRE_DUMP_CASES=file to list each case's hash)"
    );
}

/// The corpus's digest as commit cbe30a6's builder path encoded it.
const EXPECTED_DIGEST: u64 = 11871392969739476230;

#[test]
fn the_corpus_covers_typed_arrays_errors_and_plain_containers() {
    let outs: Vec<Vec<u8>> = corpus().iter().map(outcome).collect();
    let errors = outs.iter().filter(|o| o.starts_with(b"error")).count();
    let typed = outs
        .iter()
        .filter(|o| !o.starts_with(b"error"))
        .filter(|o| {
            let doc = leafwire::Document::open(o).unwrap();
            doc.root().kind() == leafwire::Kind::TypedArray
        })
        .count();
    assert!(errors > 10 && errors < outs.len() / 2, "{errors} errors");
    assert!(typed > 50, "{typed} typed roots");
}

/// The builder's output is the direct encoder's: decoded to a `Value` (typed arrays stay
/// typed) and encoded again by `encode`, each document of the corpus is the same bytes.
#[test]
fn to_vec_writes_what_encode_writes_for_the_same_value() {
    for (i, case) in corpus().iter().enumerate() {
        let Ok(bytes) = leafwire::to_vec(case) else { continue };
        let value = leafwire::decode(&bytes).unwrap();
        assert!(leafwire::encode(&value).unwrap() == bytes, "case {i}: {case:?}");
    }
}

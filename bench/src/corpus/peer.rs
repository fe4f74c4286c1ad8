//! What a schemaless peer provides to the corpus workload, and the generic
//! driver that checks each operation against the reference before timing it.

use std::hint::black_box;

use serde_json::Value;

use crate::harness::{json_eq, Case, Fail, PeerInfo, Row, Scalar, Session};

use super::Dataset;

/// One step of a JSON Pointer, typed by the container it indexes.
#[derive(Clone, Debug)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A JSON Pointer both as text (RFC 6901) and as typed steps.
#[derive(Clone, Debug)]
pub struct Path {
    pub pointer: String,
    pub steps: Vec<Step>,
    /// The pointer parsed by Leafwire, once, as `steps` is for the peers that take steps.
    #[cfg(feature = "leafwire")]
    pub leafwire: leafwire::Pointer,
}

pub trait CorpusPeer {
    const NAME: &'static str;
    /// The calls used, as the report shows them.
    const API: &'static str;
    const NOTE: &'static str = "";
    /// `lookup` reads only what leads to the value (otherwise it decodes everything).
    const LAZY: bool;
    /// `decode` and `lookup` overwrite their input (simd-json parses in place),
    /// so each timed call gets a fresh copy, made outside the clock.
    const MUTATES_INPUT: bool = false;
    /// The operations this row measures, when not all of them (a second way of the same
    /// library to decode or look up: its size, encode and from_json would repeat the
    /// first row's).
    const ONLY: Option<&'static [&'static str]> = None;

    /// The peer's in-memory dynamic value.
    type Value: Clone;
    type Decoded<'a>;

    /// Build the in-memory value from JSON text (setup, never timed).
    fn value_from_text(text: &[u8]) -> Result<Self::Value, Fail>;
    fn value_to_json(v: &Self::Value) -> Result<Value, Fail>;
    fn encode(v: &Self::Value) -> Result<Vec<u8>, Fail>;
    fn decode(bytes: &mut [u8]) -> Result<Self::Decoded<'_>, Fail>;
    fn decoded_to_json(d: &Self::Decoded<'_>) -> Result<Value, Fail>;
    /// JSON text straight to the peer's bytes.
    fn from_json_text(text: &[u8]) -> Result<Vec<u8>, Fail>;
    /// The scalar at `path` in the peer's bytes.
    fn lookup<'a>(bytes: &'a mut [u8], path: &Path) -> Result<Scalar<'a>, Fail>;
    /// JSON text of the document, for peers that write JSON: a JSON library writing its
    /// in-memory value, Leafwire converting its bytes. `None` for the others.
    fn to_json(_v: &Self::Value, _bytes: &[u8]) -> Option<Result<Vec<u8>, Fail>> {
        None
    }
    /// Any further check of encoded bytes (beyond decode-and-compare).
    fn extra_check(_bytes: &[u8], _reference: &Value) -> Result<(), Fail> {
        Ok(())
    }

    fn info() -> PeerInfo {
        PeerInfo::new(Self::NAME, Self::API, Self::NOTE)
    }
}

pub const OPS: [&str; 5] = ["size", "encode", "decode", "from_json", "lookup"];

/// Check `P::to_json` against the reference, then queue it for timing.
fn run_to_json<'a, P: CorpusPeer + 'static>(ds: &Dataset, value: &P::Value, bytes: &[u8], s: &mut Only<'_, 'a>) {
    let Some(first) = P::to_json(value, bytes) else { return };
    let check = first.and_then(|text| {
        let back: Value = serde_json::from_slice(&text).map_err(Fail::error)?;
        json_eq(&ds.reference, &back)
    });
    let (value, bytes) = (value.clone(), bytes.to_vec());
    s.checked(Row::new(&ds.name, "to_json", P::NAME), check, move || Case::new(move || P::to_json(&value, &bytes).expect("some").expect("checked")));
}

/// Cheap digest of a scalar so a timed lookup cannot be optimized away.
fn fingerprint(s: &Scalar<'_>) -> u64 {
    match s {
        Scalar::Null => 0,
        Scalar::Bool(b) => *b as u64,
        Scalar::I64(i) => *i as u64,
        Scalar::U64(u) => *u,
        Scalar::F64(f) => f.to_bits(),
        Scalar::Str(s) => s.len() as u64,
    }
}

fn roundtrip_check<P: CorpusPeer>(bytes: &[u8], reference: &Value) -> Result<(), Fail> {
    let mut copy = bytes.to_vec();
    let decoded = P::decode(&mut copy)?;
    json_eq(reference, &P::decoded_to_json(&decoded)?)?;
    P::extra_check(bytes, reference)
}

/// Check, then queue for timing, every corpus operation of peer `P`.
pub fn run_peer<'a, P: CorpusPeer + 'static>(ds: &'a Dataset, session: &mut Session<'a>) {
    let s = &mut Only { session, ops: P::ONLY };
    let row = |op: &str| Row::new(&ds.name, op, P::NAME);
    let value = P::value_from_text(&ds.text).and_then(|v| {
        json_eq(&ds.reference, &P::value_to_json(&v)?).map_err(|f| match f {
            Fail::Wrong(why) => Fail::Wrong(format!("in-memory value from the JSON text {why}")),
            other => other,
        })?;
        Ok(v)
    });
    let value = match value {
        Ok(v) => v,
        Err(fail) => {
            for op in OPS {
                s.push(row(op).failed(fail.clone()));
            }
            return;
        }
    };

    let encoded = P::encode(&value);
    match &encoded {
        Err(fail) => {
            for op in ["size", "encode", "decode"] {
                s.push(row(op).failed(fail.clone()));
            }
        }
        Ok(bytes) => {
            let check = roundtrip_check::<P>(bytes, &ds.reference);
            match &check {
                Ok(()) => s.push(row("size").bytes(bytes.len())),
                Err(fail) => s.push(row("size").bytes(bytes.len()).failed(fail.clone())),
            }
            if check.is_ok() {
                run_to_json::<P>(ds, &value, bytes, s);
            }
            let copy = bytes.clone();
            s.checked(row("decode"), check.clone(), || decode_case::<P>(copy));
            s.checked(row("encode"), check, move || Case::new(move || P::encode(&value).expect("checked")));
        }
    }

    let converted = P::from_json_text(&ds.text).and_then(|b| roundtrip_check::<P>(&b, &ds.reference));
    s.checked(row("from_json"), converted, || Case::new(move || P::from_json_text(&ds.text).expect("checked")));

    let lookup_row = row("lookup").note(if P::LAZY { "lazy" } else { "full decode" });
    let expected = ds.reference.pointer(&ds.path.pointer).cloned().unwrap_or(Value::Null);
    let looked_up = encoded.and_then(|bytes| {
        let mut scratch = bytes.clone();
        let got = P::lookup(&mut scratch, &ds.path)?.to_json();
        json_eq(&expected, &got)?;
        Ok(bytes)
    });
    match looked_up {
        Ok(bytes) => s.checked(lookup_row, Ok(()), || lookup_case::<P>(bytes, &ds.path)),
        Err(fail) => s.push(lookup_row.failed(fail)),
    }
}

/// The session, keeping only the rows of the operations a peer measures.
struct Only<'s, 'a> {
    session: &'s mut Session<'a>,
    ops: Option<&'static [&'static str]>,
}

impl<'a> Only<'_, 'a> {
    fn wanted(&self, row: &Row) -> bool {
        self.ops.is_none_or(|ops| ops.contains(&row.op.as_str()))
    }

    fn push(&mut self, row: Row) {
        if self.wanted(&row) {
            self.session.push(row);
        }
    }

    fn checked(&mut self, row: Row, check: Result<(), Fail>, case: impl FnOnce() -> Case<'a>) {
        if self.wanted(&row) {
            self.session.checked(row, check, case);
        }
    }
}

fn decode_case<'a, P: CorpusPeer + 'static>(bytes: Vec<u8>) -> Case<'a> {
    if P::MUTATES_INPUT {
        let max = (256 << 20) / bytes.len().max(1) as u64;
        let source = bytes;
        Case::batched(
            move || source.clone(),
            |mut buf: Vec<u8>| {
                drop(black_box(P::decode(&mut buf).expect("checked")));
                buf
            },
        )
        .max_batch(max)
    } else {
        let mut buf = bytes;
        Case::new(move || {
            drop(black_box(P::decode(&mut buf).expect("checked")));
        })
    }
}

fn lookup_case<'a, P: CorpusPeer + 'static>(bytes: Vec<u8>, path: &'a Path) -> Case<'a> {
    if P::MUTATES_INPUT {
        let max = (256 << 20) / bytes.len().max(1) as u64;
        let source = bytes;
        Case::batched(
            move || source.clone(),
            move |mut buf: Vec<u8>| {
                let f = fingerprint(&P::lookup(&mut buf, path).expect("checked"));
                (buf, f)
            },
        )
        .max_batch(max)
    } else {
        let mut buf = bytes;
        Case::new(move || fingerprint(&P::lookup(&mut buf, path).expect("checked")))
    }
}

//! What a peer provides to the kv workload, and the driver that checks each
//! operation against the reference before timing it.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::rc::Rc;

use crate::harness::{Case, Fail, PeerInfo, Row, Session};

use super::{KvData, COUNTS};

/// A whole-map peer: decode, edit in memory, encode.
pub trait KvPeer {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "";
    type Map: Clone;

    fn build(pairs: &[(String, String)]) -> Self::Map;
    fn encode(m: &Self::Map) -> Result<Vec<u8>, Fail>;
    fn decode(bytes: &[u8]) -> Result<Self::Map, Fail>;
    fn get<'m>(m: &'m Self::Map, key: &str) -> Option<&'m str>;
    /// Insert or overwrite.
    fn set(m: &mut Self::Map, key: &str, value: &str);
    fn pairs(m: &Self::Map) -> Vec<(String, String)>;

    /// The map's serialized bytes, handed to `sink`: whole-map peers serialize a new
    /// buffer; a peer whose map already is its bytes lends them.
    fn with_bytes<R>(m: &Self::Map, sink: impl FnOnce(&[u8]) -> R) -> Result<R, Fail> {
        Ok(sink(&Self::encode(m)?))
    }

    fn info() -> PeerInfo {
        PeerInfo::new(Self::NAME, Self::API, Self::NOTE)
    }
}

/// A peer that looks keys up in the bytes without decoding the map.
pub trait KvLazy {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "";
    /// Bytes this reader reads (setup, not timed).
    fn encode(pairs: &[(String, String)]) -> Result<Vec<u8>, Fail>;
    /// (keys found, total value length) for the given keys.
    fn read(bytes: &[u8], keys: &[String]) -> Result<(usize, usize), Fail>;

    fn info() -> PeerInfo {
        PeerInfo::new(Self::NAME, Self::API, Self::NOTE)
    }
}

fn read_with<P: KvPeer>(bytes: &[u8], keys: &[String]) -> Result<(usize, usize), Fail> {
    let m = P::decode(bytes)?;
    let mut found = 0;
    let mut len = 0;
    for k in keys {
        if let Some(v) = P::get(&m, k) {
            found += 1;
            len += v.len();
        }
    }
    Ok((found, len))
}

/// Inserts into `m`, then hands its serialized bytes to `sink`.
fn write_with<P: KvPeer, R>(mut m: P::Map, inserts: &[(String, String)], sink: impl FnOnce(&[u8]) -> R) -> Result<R, Fail> {
    for (k, v) in inserts {
        P::set(&mut m, k, v);
    }
    P::with_bytes(&m, sink)
}

/// Decodes, overwrites, then hands the serialized bytes to `sink`.
fn read_write_with<P: KvPeer, R>(bytes: &[u8], updates: &[(String, String)], sink: impl FnOnce(&[u8]) -> R) -> Result<R, Fail> {
    let mut m = P::decode(bytes)?;
    for (k, v) in updates {
        P::set(&mut m, k, v);
    }
    P::with_bytes(&m, sink)
}

/// `bytes` must decode to exactly `expected`.
fn same_map<P: KvPeer>(bytes: &[u8], expected: &BTreeMap<String, String>) -> Result<(), Fail> {
    let got = P::pairs(&P::decode(bytes)?);
    if got.len() != expected.len() {
        return Err(Fail::Wrong(format!("{} entries, expected {}", got.len(), expected.len())));
    }
    for (k, v) in &got {
        match expected.get(k) {
            Some(e) if e == v => {}
            Some(_) => return Err(Fail::Wrong(format!("value of key {k:?} differs"))),
            None => return Err(Fail::Wrong(format!("unexpected key {k:?}"))),
        }
    }
    Ok(())
}

fn expect_read(got: (usize, usize), want: (usize, usize)) -> Result<(), Fail> {
    if got == want {
        Ok(())
    } else {
        Err(Fail::Wrong(format!("found {} keys, {} value bytes; expected {} and {}", got.0, got.1, want.0, want.1)))
    }
}

pub fn run_peer<'a, P: KvPeer + 'static>(d: &'a KvData, s: &mut Session<'a>) {
    let row = |op: String| Row::new(&d.label, &op, P::NAME);
    let original = P::build(&d.pairs);
    let bytes = match P::encode(&original).and_then(|b| same_map::<P>(&b, &d.reference(0, &[])).map(|_| b)) {
        Ok(b) => b,
        Err(fail) => {
            s.push(row("size".into()).failed(fail.clone()));
            for n in COUNTS {
                for op in ["read", "write", "read-write"] {
                    s.push(row(format!("{op}/{n}")).failed(fail.clone()));
                }
            }
            return;
        }
    };
    s.push(row("size".into()).bytes(bytes.len()));
    let bytes = Rc::new(bytes);
    for n in COUNTS {
        let keys = &d.lookups[..n];
        let check = read_with::<P>(&bytes, keys).and_then(|got| expect_read(got, d.expected_read(n)));
        let b = bytes.clone();
        s.checked(row(format!("read/{n}")), check, || Case::new(move || read_with::<P>(&b, keys).expect("checked")));

        let inserts = &d.inserts[..n];
        let check = write_with::<P, _>(original.clone(), inserts, |out| same_map::<P>(out, &d.reference(n, &d.inserts)))
            .and_then(|same| same);
        let start = original.clone();
        s.checked(row(format!("write/{n}")), check, || {
            Case::batched(move || start.clone(), move |m| black_box(write_with::<P, _>(m, inserts, |out| black_box(out.len())).expect("checked")))
                .max_batch(batch_cap(bytes.len()))
        });

        let updates = &d.updates[..n];
        let check = read_write_with::<P, _>(&bytes, updates, |out| same_map::<P>(out, &d.reference(n, &d.updates)))
            .and_then(|same| same);
        let b = bytes.clone();
        s.checked(row(format!("read-write/{n}")), check, || {
            Case::new(move || read_write_with::<P, _>(&b, updates, |out| black_box(out.len())).expect("checked"))
        });
    }
}

pub fn run_lazy<'a, L: KvLazy + 'static>(d: &'a KvData, s: &mut Session<'a>) {
    let row = |op: String| Row::new(&d.label, &op, L::NAME);
    let bytes = match L::encode(&d.pairs) {
        Ok(b) => b,
        Err(fail) => {
            for n in COUNTS {
                s.push(row(format!("read/{n}")).failed(fail.clone()));
            }
            return;
        }
    };
    let bytes = Rc::new(bytes);
    for n in COUNTS {
        let keys = &d.lookups[..n];
        let check = L::read(&bytes, keys).and_then(|got| expect_read(got, d.expected_read(n)));
        let b = bytes.clone();
        s.checked(row(format!("read/{n}")), check, || Case::new(move || L::read(&b, keys).expect("checked")));
    }
}

/// Keep a sample's cloned input maps under ~512 MiB.
fn batch_cap(encoded_len: usize) -> u64 {
    ((512usize << 20) / (4 * encoded_len.max(1))).max(1) as u64
}

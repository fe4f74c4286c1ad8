//! What a peer provides to the graphql and geojson workloads, and the driver
//! that checks each operation against the reference before timing it.

use std::rc::Rc;

use crate::harness::{Case, Fail, PeerInfo, Row, Session};

use super::model::{Model, Properties};

pub trait TreePeer {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "";
    /// How `select` avoids (or does not avoid) the geometry.
    const SELECT: &'static str;

    fn encode<M: Model>(m: &M) -> Result<Vec<u8>, Fail>;
    fn decode<M: Model>(bytes: &[u8]) -> Result<M, Fail>;
    /// Properties of every feature of an encoded FeatureCollection.
    fn select(bytes: &[u8]) -> Result<Vec<Properties>, Fail>;

    fn info() -> PeerInfo {
        PeerInfo::new(Self::NAME, Self::API, Self::NOTE)
    }
}

/// `props` is Some(expected properties) for the geojson workload.
pub fn run_peer<'a, P: TreePeer + 'static, M: Model + 'static>(
    dataset: &'a str,
    model: &'a M,
    props: Option<&'a [Properties]>,
    s: &mut Session<'a>,
) {
    let row = |op: &str| Row::new(dataset, op, P::NAME);
    let checked = P::encode(model).and_then(|bytes| {
        let back: M = P::decode(&bytes)?;
        if &back == model {
            Ok(bytes)
        } else {
            Err(Fail::Wrong("decode(encode(x)) != x".into()))
        }
    });
    let bytes = match checked {
        Ok(b) => Rc::new(b),
        Err(fail) => {
            for op in ["size", "encode", "decode", "roundtrip", "select"] {
                if op != "select" || props.is_some() {
                    s.push(row(op).failed(fail.clone()));
                }
            }
            return;
        }
    };
    s.push(row("size").bytes(bytes.len()));
    s.checked(row("encode"), Ok(()), || Case::new(move || P::encode(model).expect("checked")));
    let b = bytes.clone();
    s.checked(row("decode"), Ok(()), || Case::new(move || P::decode::<M>(&b).expect("checked")));
    s.checked(row("roundtrip"), Ok(()), || {
        Case::new(move || P::decode::<M>(&P::encode(model).expect("checked")).expect("checked"))
    });
    if let Some(expected) = props {
        let check = P::select(&bytes).and_then(|got| {
            if got == expected {
                Ok(())
            } else {
                Err(Fail::Wrong(format!(
                    "{} properties, first differing at index {:?}",
                    got.len(),
                    first_diff(&got, expected)
                )))
            }
        });
        let b = bytes.clone();
        s.checked(row("select").note(P::SELECT), check, || Case::new(move || P::select(&b).expect("checked")));
    }
}

fn first_diff(a: &[Properties], b: &[Properties]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or(if a.len() != b.len() { Some(a.len().min(b.len())) } else { None })
}

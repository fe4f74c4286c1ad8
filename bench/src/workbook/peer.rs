//! What a peer provides to the workbook workload, and the driver that
//! checks the round trip before timing encode and decode.

use std::rc::Rc;

use crate::harness::{Case, Fail, PeerInfo, Row, Session};

use super::model::Workbook;

pub trait WorkbookPeer {
    const NAME: &'static str;
    const API: &'static str;
    const NOTE: &'static str = "";
    /// The peer's own type for the workbook (generated or schema-shaped).
    type Native;

    fn to_native(w: &Workbook) -> Self::Native;
    fn from_native(n: Self::Native) -> Workbook;
    fn encode(n: &Self::Native) -> Result<Vec<u8>, Fail>;
    fn decode(bytes: &[u8]) -> Result<Self::Native, Fail>;

    fn info() -> PeerInfo {
        PeerInfo::new(Self::NAME, Self::API, Self::NOTE)
    }
}

pub fn run_peer<'a, P: WorkbookPeer + 'static>(dataset: &'a str, w: &'a Workbook, s: &mut Session<'a>) {
    let row = |op: &str| Row::new(dataset, op, P::NAME);
    let native = P::to_native(w);
    let checked = P::encode(&native).and_then(|bytes| {
        if &P::from_native(P::decode(&bytes)?) == w {
            Ok(bytes)
        } else {
            Err(Fail::Wrong("decode(encode(x)) != x".into()))
        }
    });
    match checked {
        Err(fail) => {
            for op in ["size", "encode", "decode"] {
                s.push(row(op).failed(fail.clone()));
            }
        }
        Ok(bytes) => {
            s.push(row("size").bytes(bytes.len()));
            let bytes = Rc::new(bytes);
            s.checked(row("encode"), Ok(()), move || Case::new(move || P::encode(&native).expect("checked")));
            s.checked(row("decode"), Ok(()), move || Case::new(move || P::decode(&bytes).expect("checked")));
        }
    }
}

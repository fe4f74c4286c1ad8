//! Workload "kv" (seed 001, Lite²): flat string→string maps of Ne entries whose
//! key plus value average Le bytes. read = decode, then look up p keys;
//! write = insert q new keys into the in-memory map, then encode;
//! read-write = decode, overwrite p existing keys, encode.

mod bincode2;
mod bsondoc;
mod cbor;
mod flexbuf;
#[cfg(feature = "leafwire")]
mod leaf;
#[cfg(feature = "leafwire")]
mod leaf_edit;
mod msgpack;
mod peer;
mod postcard1;
mod rkyv08;
mod serdejson;

use std::collections::{BTreeMap, HashSet};

use serde_json::json;

use crate::harness::rng::Rng;
use crate::harness::{PeerInfo, Report, Row, Session, Status};
use crate::Ctx;
use peer::{run_lazy, run_peer, KvLazy, KvPeer};

/// (Ne, Le) of Lite²'s three simulations.
const SIZES: [(usize, usize); 3] = [(100, 40), (1000, 160), (100_000, 640)];
/// p and q: keys read, inserted or updated per operation.
pub const COUNTS: [usize; 4] = [1, 10, 100, 1000];
const SEED: u64 = 0x11fe_2001;

pub const LEAFWIRE: &str = "leafwire (decode/encode)";
pub const LEAFWIRE_IN_PLACE: &str = "leafwire (in place)";
pub const LEAFWIRE_LAZY: &str = "leafwire (lazy Document)";

/// One generated map and the keys every operation uses.
pub struct KvData {
    pub label: String,
    pub pairs: Vec<(String, String)>,
    /// Existing keys to read, drawn with replacement.
    pub lookups: Vec<String>,
    /// New entries for `write`.
    pub inserts: Vec<(String, String)>,
    /// Existing keys with new values for `read-write`.
    pub updates: Vec<(String, String)>,
    map: BTreeMap<String, String>,
}

impl KvData {
    pub fn generate(ne: usize, le: usize) -> KvData {
        let mut rng = Rng::new(SEED ^ (ne as u64) << 20 ^ le as u64);
        let key_len = le / 4;
        let value_mean = le - key_len;
        let value = |rng: &mut Rng| {
            let len = rng.range((value_mean / 2) as u64, (value_mean * 3 / 2) as u64) as usize;
            rng.word(len)
        };
        let mut seen = HashSet::new();
        let mut fresh_key = |rng: &mut Rng| loop {
            let k = rng.word(key_len);
            if seen.insert(k.clone()) {
                return k;
            }
        };
        let pairs: Vec<(String, String)> = (0..ne).map(|_| (fresh_key(&mut rng), value(&mut rng))).collect();
        let pick = |rng: &mut Rng| pairs[rng.below(ne as u64) as usize].0.clone();
        let max = COUNTS[COUNTS.len() - 1];
        let lookups = (0..max).map(|_| pick(&mut rng)).collect();
        let updates = (0..max).map(|_| (pick(&mut rng), value(&mut rng))).collect();
        let inserts = (0..max).map(|_| (fresh_key(&mut rng), value(&mut rng))).collect();
        let map = pairs.iter().cloned().collect();
        KvData { label: format!("Ne={ne} Le={le}"), pairs, lookups, inserts, updates, map }
    }

    /// The map after applying the first `n` of `edits`.
    pub fn reference(&self, n: usize, edits: &[(String, String)]) -> BTreeMap<String, String> {
        let mut m = self.map.clone();
        for (k, v) in &edits[..n] {
            m.insert(k.clone(), v.clone());
        }
        m
    }

    /// (found, total value bytes) for the first `n` lookups.
    pub fn expected_read(&self, n: usize) -> (usize, usize) {
        self.lookups[..n].iter().fold((0, 0), |(f, l), k| (f + 1, l + self.map[k].len()))
    }
}

struct Entry {
    info: fn() -> PeerInfo,
    run: for<'a> fn(&'a KvData, &mut Session<'a>),
}

const fn whole<P: KvPeer + 'static>() -> Entry {
    Entry { info: P::info, run: run_peer::<P> }
}

const fn lazy<L: KvLazy + 'static>() -> Entry {
    Entry { info: L::info, run: run_lazy::<L> }
}

/// The registry: whole-map peers, then readers that work on the bytes.
const PEERS: &[Entry] = &[
    whole::<serdejson::SerdeJson>(),
    whole::<msgpack::MsgPack>(),
    whole::<cbor::Cbor>(),
    whole::<bsondoc::Bson>(),
    whole::<flexbuf::Flexbuffers>(),
    whole::<bincode2::Bincode>(),
    whole::<postcard1::Postcard>(),
    whole::<rkyv08::Rkyv>(),
    #[cfg(feature = "leafwire")]
    whole::<leaf::Leafwire>(),
    #[cfg(feature = "leafwire")]
    whole::<leaf_edit::LeafwireInPlace>(),
    lazy::<bsondoc::BsonRaw>(),
    lazy::<flexbuf::FlexbuffersReader>(),
    lazy::<rkyv08::RkyvArchived>(),
    #[cfg(feature = "leafwire")]
    lazy::<leaf::LeafwireLazy>(),
];

pub fn run(ctx: &Ctx) -> Report {
    let mut report =
        Report::new("kv", "flat string maps, Lite² scenarios (seed 001)", &ctx.plan, serdejson::SerdeJson::NAME);
    report.leafwire = vec![LEAFWIRE_IN_PLACE.into(), LEAFWIRE.into(), LEAFWIRE_LAZY.into()];
    report.peers = PEERS.iter().map(|e| (e.info)()).collect();
    if !cfg!(feature = "leafwire") {
        report.peers.push(crate::leafwire_missing());
    }
    let sizes: &[(usize, usize)] = if ctx.quick { &SIZES[..2] } else { &SIZES };
    let mut datasets = Vec::new();
    for &(ne, le) in sizes {
        let d = KvData::generate(ne, le);
        eprintln!("[kv] {}", d.label);
        let mut session = Session::new();
        for peer in PEERS {
            (peer.run)(&d, &mut session);
        }
        if !cfg!(feature = "leafwire") {
            session.push(Row::new(&d.label, "size", "leafwire").status(Status::DidNotBuild, crate::LEAFWIRE_MISSING));
        }
        report.rows.extend(session.run(&ctx.plan));
        let bytes: usize = d.pairs.iter().map(|(k, v)| k.len() + v.len()).sum();
        datasets.push(json!({"dataset": d.label, "entries": ne, "mean_entry_bytes": le, "key_bytes": le / 4, "payload_bytes": bytes}));
    }
    report.extra = json!({ "datasets": datasets, "counts": COUNTS });
    report.notes = vec![
        "Keys are Le/4 random [a-z0-9] characters; values are uniform in [Le·3/8, Le·9/8], so key + value average Le.".into(),
        "read/p: decode the bytes, then look up p existing keys (drawn with replacement). write/q: insert q new keys into the in-memory map (a clone made outside the clock), then encode. read-write/p: decode, overwrite p existing keys, encode.".into(),
        "Whole-map peers decode into HashMap<String, String> (serde and bincode peers, rkyv), bson::Document, or leafwire::Value.".into(),
        "Rows named after a reader (bson RawDocument, flexbuffers Reader, rkyv archived, leafwire lazy Document) look keys up in the bytes without decoding; they only have a read row.".into(),
        format!("{LEAFWIRE_IN_PLACE}: the map stays serialized; decode = Editor::new (copies and validates the bytes), updates and inserts edit the buffer, encode = the edited buffer itself (lent to the caller, not copied: it already is the serialized map). {LEAFWIRE}: the same through a full decode to leafwire::Value and encode."),
        "write/q and read-write/p hand the serialized bytes to the caller and drop the map inside the clock; whole-map peers serialize into a new buffer.".into(),
        "Every output is decoded and compared with the reference map before timing; every read's (found, bytes) is compared too.".into(),
    ];
    if ctx.quick {
        report.notes.push("quick mode leaves out (Ne=100000, Le=640).".into());
    }
    report
}

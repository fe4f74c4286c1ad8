//! Workload "workbook" (seed 004, Criteo's serialization comparison): encode
//! time, decode time and size of a generated workbook, small and big.

mod avro;
#[cfg(feature = "leafwire")]
mod leaf;
mod model;
mod peer;
mod protobuf;
mod serde_peers;

use serde_json::json;

use crate::harness::{PeerInfo, Report, Row, Session, Status};
use crate::Ctx;
use model::{generate, BIG, SMALL};
use peer::{run_peer, WorkbookPeer};

const SEED: u64 = 0xC217_E0_2017;

struct Entry {
    info: fn() -> PeerInfo,
    run: for<'a> fn(&'a str, &'a model::Workbook, &mut Session<'a>),
}

const fn entry<P: WorkbookPeer + 'static>() -> Entry {
    Entry { info: P::info, run: run_peer::<P> }
}

/// The registry, baseline (Protocol Buffers, Criteo's pick) first.
const PEERS: &[Entry] = &[
    entry::<protobuf::Prost>(),
    entry::<avro::Avro>(),
    entry::<serde_peers::SerdeJson>(),
    entry::<serde_peers::MsgPack>(),
    entry::<serde_peers::Cbor>(),
    entry::<serde_peers::Bincode>(),
    #[cfg(feature = "leafwire")]
    entry::<leaf::Leafwire>(),
    #[cfg(feature = "leafwire")]
    entry::<leaf::LeafwirePacked>(),
    #[cfg(feature = "leafwire")]
    entry::<leaf::LeafwirePackedZstd>(),
];

pub fn run(ctx: &Ctx) -> Report {
    let mut report =
        Report::new("workbook", "Criteo's workbook model, small and big (seed 004)", &ctx.plan, protobuf::Prost::NAME);
    report.leafwire = vec!["leafwire".into(), "leafwire (packed)".into(), "leafwire (packed, zstd -19)".into()];
    report.peers = PEERS.iter().map(|e| (e.info)()).collect();
    if !cfg!(feature = "leafwire") {
        report.peers.push(crate::leafwire_missing());
    }
    let mut shapes = Vec::new();
    for shape in [SMALL, BIG] {
        let w = generate(shape, SEED);
        let doubles: usize = w
            .pages
            .iter()
            .flat_map(|p| &p.rows)
            .map(|r| 1 + r.values.len() + r.weights.len() + r.series.values().map(Vec::len).sum::<usize>())
            .sum();
        eprintln!("[workbook] {} ({doubles} doubles)", shape.name);
        let mut session = Session::new();
        for peer in PEERS {
            (peer.run)(shape.name, &w, &mut session);
        }
        if !cfg!(feature = "leafwire") {
            for op in ["size", "encode", "decode"] {
                session.push(Row::new(shape.name, op, "leafwire").status(Status::DidNotBuild, crate::LEAFWIRE_MISSING));
            }
        }
        report.rows.extend(session.run(&ctx.plan));
        shapes.push(json!({
            "dataset": shape.name, "pages": shape.pages, "rows_per_page": shape.rows,
            "list_and_map_sizes": [shape.items.0, shape.items.1],
            "series_keys": [shape.series_keys.0, shape.series_keys.1], "doubles": doubles,
        }));
    }
    report.extra = json!({ "shapes": shapes, "seed": SEED });
    report.notes = vec![
        "Row = key: String, label: String, value: f64, values: Vec<f64>, weights: map<i32, f64>, series: map<i32, Vec<f64>>; pages hold rows.".into(),
        "prost and apache-avro encode their own types (generated from proto/workbook.proto; shaped by schemas/workbook.avsc); converting from the shared structs is setup, not timed.".into(),
        "Every peer's decode(encode(x)), converted back, must equal x exactly before it is timed.".into(),
        "Doubles are uniform random with all 53 bits, so no encoding gets short floats for free.".into(),
    ];
    report
}

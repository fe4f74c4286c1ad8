//! Workloads "graphql" and "geojson" (seed 002, Tree-Buf's benchmarks):
//! identical Rust structs through MessagePack, Tree-Buf, JSON and Leafwire;
//! size, encode, decode, round trip, and (geojson) loading only the
//! countries' properties.

#[cfg(feature = "leafwire")]
mod leaf;
mod model;
mod msgpack;
mod peer;
mod serdejson;
#[cfg(feature = "treebuf")]
mod treebuf;
mod zstd_peers;

use serde_json::{json, Value};

use crate::harness::{json_eq, PeerInfo, Report, Row, Session, Status};
use crate::{data, Ctx};
use model::{FeatureCollection, GraphQl, Model, Properties};
use peer::{run_peer, TreePeer};

struct Entry<M> {
    info: fn() -> PeerInfo,
    run: for<'a> fn(&'a str, &'a M, Option<&'a [Properties]>, &mut Session<'a>),
}

fn entry<P: TreePeer + 'static, M: Model + 'static>() -> Entry<M> {
    Entry { info: P::info, run: run_peer::<P, M> }
}

/// The registry, baseline (MessagePack, as in Tree-Buf's README) first.
fn peers<M: Model + 'static>() -> Vec<Entry<M>> {
    vec![
        entry::<msgpack::MsgPack, M>(),
        entry::<msgpack::MsgPackNamed, M>(),
        #[cfg(feature = "treebuf")]
        entry::<treebuf::TreeBuf, M>(),
        entry::<serdejson::SerdeJson, M>(),
        entry::<zstd_peers::JsonZstd3, M>(),
        entry::<zstd_peers::JsonZstd19, M>(),
        entry::<zstd_peers::MsgPackZstd3, M>(),
        entry::<zstd_peers::MsgPackZstd19, M>(),
        #[cfg(feature = "leafwire")]
        entry::<leaf::Leafwire, M>(),
        #[cfg(feature = "leafwire")]
        entry::<leaf::LeafwirePacked, M>(),
        #[cfg(feature = "leafwire")]
        entry::<leaf::LeafwirePackedZstd, M>(),
    ]
}

fn missing_rows(dataset: &str, ops: &[&str], s: &mut Session<'_>) {
    let absent: [(&str, bool, &str); 2] = [
        ("tree-buf", cfg!(feature = "treebuf"), "tree-buf 0.10 did not build on this toolchain"),
        ("leafwire", cfg!(feature = "leafwire"), crate::LEAFWIRE_MISSING),
    ];
    for (peer, built, why) in absent {
        if !built {
            for op in ops {
                s.push(Row::new(dataset, op, peer).status(Status::DidNotBuild, why));
            }
        }
    }
}

/// Parse `text` into the model and prove the model loses nothing.
fn load<M: Model>(text: &[u8]) -> (M, usize) {
    let model: M = serde_json::from_slice(text).expect("data matches the model structs");
    let reference: Value = serde_json::from_slice(text).expect("valid JSON");
    let back = serde_json::to_value(&model).expect("model serializes");
    if let Err(why) = json_eq(&reference, &back) {
        panic!("model structs are lossy: {why:?}");
    }
    let compact = serde_json::to_vec(&reference).expect("serializes").len();
    (model, compact)
}

fn report(workload: &str, title: &str, ctx: &Ctx) -> Report {
    let mut r = Report::new(workload, title, &ctx.plan, msgpack::MsgPack::NAME);
    r.leafwire = vec!["leafwire".into(), "leafwire (packed)".into(), "leafwire (packed, zstd -19)".into()];
    r.peers = peers::<GraphQl>().iter().map(|e| (e.info)()).collect();
    r
}

const COMMON_NOTES: [&str; 3] = [
    "All peers encode the same Rust structs (serde derive; tree-buf derive), checked lossless against the JSON at load: strings stay strings, integers stay integers, coordinates stay f64.",
    "Every peer's decode(encode(x)) must equal x before anything is timed. roundtrip = encode then decode, timed as one operation.",
    "rmp-serde (the baseline) writes structs as arrays; rmp-serde (named) writes field names like JSON does.",
];

pub fn run_graphql(ctx: &Ctx) -> Report {
    let mut r = report("graphql", "Tree-Buf's GraphQL benchmark (seed 002)", ctx);
    let name = data::name(data::GRAPHQL);
    let text = data::read(&ctx.data_dir, data::GRAPHQL);
    let (model, compact) = load::<GraphQl>(&text);
    eprintln!("[graphql] {name}");
    let mut s = Session::new();
    for p in peers::<GraphQl>() {
        (p.run)(&name, &model, None, &mut s);
    }
    missing_rows(&name, &["size", "encode", "decode", "roundtrip"], &mut s);
    r.rows = s.run(&ctx.plan);
    r.notes = COMMON_NOTES.iter().map(|n| n.to_string()).collect();
    r.extra = json!({
        "json_bytes": text.len(),
        "compact_json_bytes": compact,
        "published": [
            {"peer": "MessagePack", "bytes": 242558, "roundtrip_ns": 1303e3},
            {"peer": "Tree-Buf", "bytes": 13545, "roundtrip_ns": 608e3},
        ],
        "published_source": "Tree-Buf README (seed 002): published, not measured here",
    });
    r
}

pub fn run_geojson(ctx: &Ctx) -> Report {
    let mut r = report("geojson", "Tree-Buf's GeoJSON benchmark (seed 002)", ctx);
    let name = data::name(data::COUNTRIES);
    let text = data::read(&ctx.data_dir, data::COUNTRIES);
    let (model, compact) = load::<FeatureCollection>(&text);
    let props: Vec<Properties> = model.features.iter().map(|f| f.properties.clone()).collect();
    eprintln!("[geojson] {name} ({} features)", props.len());
    let mut s = Session::new();
    for p in peers::<FeatureCollection>() {
        (p.run)(&name, &model, Some(&props), &mut s);
    }
    missing_rows(&name, &["size", "encode", "decode", "roundtrip", "select"], &mut s);
    r.rows = s.run(&ctx.plan);
    r.notes = COMMON_NOTES.iter().map(|n| n.to_string()).collect();
    r.notes.push(format!(
        "select: ADMIN, ISO_A3 and ISO_A2 of all {} features, without their geometry; each peer's way is in the row's note.",
        props.len()
    ));
    r.extra = json!({
        "json_bytes": text.len(),
        "compact_json_bytes": compact,
        "published": [
            {"peer": "GeoJson (JSON)", "bytes": 24090863, "roundtrip_ns": 407e6},
            {"peer": "Tree-Buf", "bytes": 6865300, "roundtrip_ns": 39e6},
            {"peer": "Tree-Buf (selective load)", "select_ns": 240e3},
        ],
        "published_source": "Tree-Buf README (seed 002): published, not measured here",
    });
    r
}

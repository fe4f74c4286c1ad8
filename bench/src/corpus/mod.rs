//! Workload "corpus": every shared JSON file through every schemaless peer.
//! Size, encode from the in-memory value, full decode, JSON text → format,
//! and one deep lookup per file.

mod bsondoc;
mod cbor;
mod flexbuf;
#[cfg(feature = "leafwire")]
mod leaf;
mod msgpack;
mod peer;
mod serdejson;
mod simdjson;
mod sonic;

use serde_json::{json, Value};

use crate::harness::{PeerInfo, Report, Row, Session, Status};
use crate::{data, Ctx};
use peer::{run_peer, CorpusPeer, Path, Step, OPS};

pub struct Dataset {
    pub name: String,
    pub text: Vec<u8>,
    pub reference: Value,
    pub path: Path,
}

/// The deep value each file's lookup fetches.
const POINTERS: &[(&str, &str)] = &[
    ("canada.json", "/features/0/geometry/coordinates/479/5275/1"),
    ("citm_catalog.json", "/performances/242/seatCategories/4/areas/5/areaId"),
    ("github_events.json", "/29/payload/forkee/owner/login"),
    ("mesh.json", "/influences/3599/0"),
    ("numbers.json", "/10000"),
    ("random.json", "/result/999/friends/2/name"),
    ("twitter.json", "/statuses/99/user/screen_name"),
    ("update-center.json", "/plugins/zubhium/developers/0/name"),
    ("decentraland_marketplace_orders.json", "/data/orders/999/nft/wearable/owner/mana"),
    ("countries.geojson", "/features/254/geometry/coordinates/0/0/765/1"),
];

struct Entry {
    info: fn() -> PeerInfo,
    lazy: bool,
    run: for<'a> fn(&'a Dataset, &mut Session<'a>),
}

const fn entry<P: CorpusPeer + 'static>() -> Entry {
    Entry { info: P::info, lazy: P::LAZY, run: run_peer::<P> }
}

/// The registry: every schemaless peer, baseline first.
const PEERS: &[Entry] = &[
    entry::<serdejson::SerdeJson>(),
    entry::<sonic::Sonic>(),
    entry::<simdjson::SimdJson>(),
    entry::<msgpack::MsgPack>(),
    entry::<cbor::Cbor>(),
    entry::<bsondoc::Bson>(),
    entry::<flexbuf::Flexbuffers>(),
    #[cfg(feature = "leafwire")]
    entry::<leaf::Leafwire>(),
    #[cfg(feature = "leafwire")]
    entry::<leaf::LeafwireBorrowed>(),
];

/// Type each pointer token by the container it indexes in `reference`.
///
/// The pointers name values of the shared files. In a shorter cut of a file (the
/// in-repository sample that `--quick` uses without ../shared/data), the path keeps to the
/// file instead: an index past the end (or a key, in an array) becomes the last index, a
/// missing key the last key; the path stops at a scalar, and goes on through last children
/// down to a scalar. On the shared files it is the pointer, unchanged.
fn path_in(reference: &Value, pointer: &str) -> Path {
    let mut steps = Vec::new();
    let mut at = reference;
    let mut tokens = pointer.split('/').skip(1).map(|t| Some(t.replace("~1", "/").replace("~0", "~")));
    loop {
        let token = tokens.next().unwrap_or(None);
        match at {
            Value::Array(items) if !items.is_empty() => {
                let i = token.and_then(|t| t.parse::<usize>().ok()).unwrap_or(usize::MAX).min(items.len() - 1);
                at = &items[i];
                steps.push(Step::Index(i));
            }
            Value::Object(map) if !map.is_empty() => {
                let key = token.filter(|t| map.contains_key(t)).unwrap_or_else(|| map.keys().last().expect("not empty").clone());
                at = &map[&key];
                steps.push(Step::Key(key));
            }
            _ => break,
        }
    }
    let pointer: String = steps
        .iter()
        .map(|s| match s {
            Step::Index(i) => format!("/{i}"),
            Step::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
        })
        .collect();
    #[cfg(feature = "leafwire")]
    let leafwire = leafwire::Pointer::parse(&pointer).expect("a pointer built from tokens parses");
    Path {
        pointer,
        steps,
        #[cfg(feature = "leafwire")]
        leafwire,
    }
}

fn load(ctx: &Ctx, rel: &str) -> Dataset {
    let name = data::name(rel);
    let text = data::read(&ctx.data_dir, rel);
    let reference: Value = serde_json::from_slice(&text).expect("shared data is valid JSON");
    let pointer = POINTERS.iter().find(|(f, _)| *f == name).map(|(_, p)| *p).expect("pointer for every file");
    let path = path_in(&reference, pointer);
    Dataset { name, text, reference, path }
}

pub fn run(ctx: &Ctx) -> Report {
    let mut report = Report::new(
        "corpus",
        "shared JSON files through schemaless peers (seed: simdjson corpus)",
        &ctx.plan,
        serdejson::SerdeJson::NAME,
    );
    report.leafwire = vec!["leafwire".into(), "leafwire (borrowed)".into()];
    report.peers = PEERS.iter().map(|e| (e.info)()).collect();
    if !cfg!(feature = "leafwire") {
        report.peers.push(crate::leafwire_missing());
    }
    let mut files = Vec::new();
    for rel in data::corpus_files(&ctx.data_dir) {
        let ds = load(ctx, &rel);
        eprintln!("[corpus] {} ({} bytes)", ds.name, ds.text.len());
        let mut session = Session::new();
        for peer in PEERS {
            (peer.run)(&ds, &mut session);
        }
        if !cfg!(feature = "leafwire") {
            for op in OPS {
                session.push(Row::new(&ds.name, op, "leafwire").status(Status::DidNotBuild, crate::LEAFWIRE_MISSING));
            }
        }
        report.rows.extend(session.run(&ctx.plan));
        files.push(json!({
            "file": ds.name,
            "json_bytes": ds.text.len(),
            "pointer": ds.path.pointer,
            "value": ds.reference.pointer(&ds.path.pointer),
        }));
    }
    let lazy: serde_json::Map<String, Value> =
        PEERS.iter().map(|e| ((e.info)().name, json!(if e.lazy { "lazy" } else { "full decode" }))).collect();
    report.extra = json!({ "files": files, "lookup": lazy });
    report.notes = vec![
        "size: bytes of encode(in-memory value); compare with serde_json's, which is compact JSON.".into(),
        "encode: in-memory value -> bytes. decode: bytes -> the peer's in-memory value (dropping it is timed too).".into(),
        "from_json: JSON text -> the peer's bytes; serde-based peers stream with serde-transcode (no tree); JSON peers re-emit compact JSON.".into(),
        "to_json: the peer's own JSON text of the document: JSON libraries write their in-memory value, Leafwire converts its bytes (json::to_json). Checked against the file before timing.".into(),
        "lookup: the scalar at the file's JSON Pointer, starting from the peer's bytes; peers without a lazy reader pay a full decode.".into(),
        "Every result is compared with serde_json's parse of the file (float_roundtrip) before it is timed; numbers compare by exact value (1 == 1.0).".into(),
        "simd-json parses in place: each timed decode gets a fresh copy of the input, made outside the clock.".into(),
        "bson needs a document root: files whose root is an array are wrapped as {\"v\": ...} (github_events.json, numbers.json).".into(),
        "rmp-serde, ciborium and flexbuffers use serde_json::Value as their in-memory value.".into(),
    ];
    report
}

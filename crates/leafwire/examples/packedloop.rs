//! Profiling loop for packed mode:
//! `packedloop FILE.json encode|serde|tovalue|decode|owned|unpacked|select|selectas|element|typed|typedenc N [ZSTD_LEVEL]`
//! (serde: `to_vec_packed` of the parsed value, as the bench's serde rows do; tovalue: its
//! first step alone; select, selectas, element, typed and typedenc on a GeoJSON
//! FeatureCollection of MultiPolygons with the countries' ADMIN, ISO_A3 and ISO_A2
//! properties, typed and typedenc reading into and writing from the bench's structs)
//! packs the JSON file and runs one operation N times (for callgrind or `time`).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read(&args[1]).expect("readable JSON file");
    let reps: usize = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(10);
    let value = leafwire::json::parse(&text).expect("valid JSON");
    // An optional fourth argument: the zstd level to pack with.
    let options = leafwire::PackOptions { zstd_level: args.get(4).and_then(|l| l.parse().ok()), lossy_step: None, ..Default::default() };
    let packed = leafwire::encode_packed(&value, &options).expect("packs");
    let collection = || -> Collection { serde_json::from_slice(&text).expect("a FeatureCollection of MultiPolygons") };
    let model = matches!(args[2].as_str(), "typed" | "typedenc").then(collection);
    let started = std::time::Instant::now();
    let mut sink = 0usize;
    for _ in 0..reps {
        sink += match args[2].as_str() {
            "encode" => leafwire::encode_packed(&value, &options).expect("packs").len(),
            "decode" => leafwire::decode(&packed).map(|v| matches!(v, leafwire::Value::Null) as usize).expect("decodes"),
            "owned" => matches!(leafwire::from_slice_owned::<leafwire::Value>(&packed).expect("decodes"), leafwire::Value::Null) as usize,
            "unpacked" => leafwire::unpack(&packed).expect("unpacks").len(),
            "tovalue" => matches!(leafwire::to_value(&value).expect("converts"), leafwire::Value::Null) as usize,
            "serde" => leafwire::to_vec_packed(&value, &options).expect("packs").len(),
            "select" => {
                let doc = leafwire::Document::open(&packed).expect("opens");
                doc.pointer("/features").expect("features").packed_select(&["properties"]).expect("selects").len()
            }
            "selectas" => {
                let doc = leafwire::Document::open(&packed).expect("opens");
                let features = doc.pointer("/features").expect("features");
                features.packed_select_as::<Properties>(&["properties"]).expect("selects").len()
            }
            "element" => {
                let doc = leafwire::Document::open(&packed).expect("opens");
                matches!(doc.pointer_value("/features/17/properties/ADMIN").expect("reads"), leafwire::Value::String(_)) as usize
            }
            "typed" => leafwire::from_slice_owned::<Collection>(&packed).expect("decodes").features.len(),
            "typedenc" => leafwire::to_vec_packed(model.as_ref().unwrap(), &options).expect("packs").len(),
            other => panic!("unknown operation {other}"),
        };
    }
    eprintln!("{} × {}: {:?} each ({sink})", args[2], reps, started.elapsed() / reps as u32);
}

/// The properties the bench's selective load reads.
#[allow(non_snake_case, dead_code)]
#[derive(serde::Deserialize)]
struct Properties {
    ADMIN: String,
    ISO_A3: String,
    ISO_A2: String,
}

/// The bench's model of the countries file (bench/src/trees/model.rs).
#[allow(dead_code)]
#[derive(serde::Deserialize, serde::Serialize)]
struct Collection {
    #[serde(rename = "type")]
    kind: String,
    features: Vec<Feature>,
}

#[allow(dead_code)]
#[derive(serde::Deserialize, serde::Serialize)]
struct Feature {
    #[serde(rename = "type")]
    kind: String,
    properties: FeatureProperties,
    geometry: Geometry,
}

#[allow(non_snake_case, dead_code)]
#[derive(serde::Deserialize, serde::Serialize)]
struct FeatureProperties {
    ADMIN: String,
    ISO_A3: String,
    ISO_A2: String,
}

#[allow(dead_code)]
#[derive(serde::Deserialize, serde::Serialize)]
struct Geometry {
    #[serde(rename = "type")]
    kind: String,
    coordinates: Vec<Vec<Vec<(f64, f64)>>>,
}

//! Property tests: arbitrary values and serde types survive encode → decode unchanged,
//! validate, and re-encode byte for byte.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;

mod common;
use common::{same, value};
use serde::{Deserialize, Serialize};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn values_round_trip(v in value()) {
        let bytes = leafwire::encode(&v).unwrap();
        leafwire::validate(&bytes).unwrap();
        let back = leafwire::decode(&bytes).unwrap();
        prop_assert!(same(&v, &back), "{v:?} came back as {back:?}");
        prop_assert!(leafwire::encode(&back).unwrap() == bytes);
        // Two encoders, one canonical form: the builder (behind `recode_to_writer`, JSON and
        // serde) writes the bytes the direct encoder (behind `encode`) wrote.
        let doc = leafwire::Document::open(&bytes).unwrap();
        let mut recoded = Vec::new();
        leafwire::recode_to_writer(&doc, leafwire::DEFAULT_MAX_DEPTH, &mut recoded, 0, &mut |_| {}).unwrap();
        prop_assert!(recoded == bytes, "the builder and the direct encoder disagree on {v:?}");
    }

    #[test]
    fn json_of_values_round_trips(v in value()) {
        let bytes = leafwire::encode(&v).unwrap();
        // Values JSON can express come back as the same JSON; others are refused, not bent.
        if let Ok(text) = leafwire::json::to_json(&bytes) {
            let first: serde_json::Value = serde_json::from_str(&text).unwrap();
            let again = leafwire::json::from_json(text.as_bytes()).unwrap();
            let second: serde_json::Value = serde_json::from_str(&leafwire::json::to_json(&again).unwrap()).unwrap();
            prop_assert_eq!(first, second);
        }
    }

    #[test]
    fn every_node_is_reachable_by_pointer(v in value()) {
        let bytes = leafwire::encode(&v).unwrap();
        let doc = leafwire::Document::open(&bytes).unwrap();
        fn walk(node: leafwire::Node<'_>, doc: &leafwire::Document<'_>, path: String) {
            let found = doc.pointer(&path).unwrap();
            assert_eq!(found.kind(), node.kind(), "{path}");
            match node.kind() {
                leafwire::Kind::Object => for e in node.entries().unwrap() {
                    let (k, child) = e.unwrap();
                    walk(child, doc, format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")));
                },
                leafwire::Kind::IntMap => for e in node.int_entries().unwrap() {
                    let (k, child) = e.unwrap();
                    walk(child, doc, format!("{path}/{k}"));
                },
                leafwire::Kind::Array | leafwire::Kind::TypedArray => for (i, child) in node.iter().unwrap().enumerate() {
                    walk(child.unwrap(), doc, format!("{path}/{i}"));
                },
                _ => {}
            }
        }
        walk(doc.root(), &doc, String::new());
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shape {
    Empty,
    Circle(f64),
    Rect { w: f32, h: f32 },
    Poly(Vec<(i32, i32)>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    id: u64,
    name: String,
    tags: Vec<String>,
    score: Option<f64>,
    flags: Vec<bool>,
    matrix: Vec<[f32; 3]>,
    counts: BTreeMap<i32, u16>,
    by_name: HashMap<String, i8>,
    shape: Shape,
    pair: (u8, String),
    #[serde(with = "serde_bytes")]
    blob: Vec<u8>,
    big: i128,
    unit: (),
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Empty),
        any::<f64>().prop_filter("NaN compares unequal", |x| !x.is_nan()).prop_map(Shape::Circle),
        (-1e6f32..1e6, -1e6f32..1e6).prop_map(|(w, h)| Shape::Rect { w, h }),
        prop::collection::vec(any::<(i32, i32)>(), 0..5).prop_map(Shape::Poly),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    (
        (any::<u64>(), ".{0,10}", prop::collection::vec(".{0,6}", 0..4), prop::option::of(-1e9f64..1e9)),
        (prop::collection::vec(any::<bool>(), 0..5), prop::collection::vec(any::<[f32; 3]>().prop_filter("no NaN", |a| a.iter().all(|x| !x.is_nan())), 0..4)),
        (prop::collection::btree_map(any::<i32>(), any::<u16>(), 0..5), prop::collection::hash_map("[a-z]{1,4}", any::<i8>(), 0..5)),
        (shape(), any::<(u8, String)>(), prop::collection::vec(any::<u8>(), 0..9), any::<i128>()),
    )
        .prop_map(|((id, name, tags, score), (flags, matrix), (counts, by_name), (shape, pair, blob, big))| Record {
            id, name, tags, score, flags, matrix, counts, by_name, shape, pair, blob, big, unit: (),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn serde_types_round_trip(r in record()) {
        let bytes = leafwire::to_vec(&r).unwrap();
        leafwire::validate(&bytes).unwrap();
        let back: Record = leafwire::from_slice(&bytes).unwrap();
        prop_assert_eq!(&back, &r);
        // The same bytes decode as a dynamic value too, and re-encode identically.
        let v = leafwire::decode(&bytes).unwrap();
        prop_assert_eq!(&leafwire::encode(&v).unwrap(), &bytes);
        // `to_value` gives that value without the bytes: the same bytes again (so the same
        // keys in the same order, typed arrays, masks and all).
        prop_assert_eq!(leafwire::encode(&leafwire::to_value(&r).unwrap()).unwrap(), bytes);
    }

    #[test]
    fn to_value_is_the_decoded_serialization(v in value()) {
        let bytes = leafwire::to_vec(&v).unwrap();
        let direct = leafwire::to_value(&v).unwrap();
        prop_assert_eq!(leafwire::encode(&direct).unwrap(), bytes);
    }
}

#[test]
fn serde_borrows_strings_and_bytes_from_the_buffer() {
    #[derive(Serialize, Deserialize)]
    struct Borrowed<'a> {
        name: &'a str,
        #[serde(with = "serde_bytes")]
        raw: &'a [u8],
    }
    let bytes = leafwire::to_vec(&Borrowed { name: "leaf", raw: b"\x00\x01" }).unwrap();
    let back: Borrowed<'_> = leafwire::from_slice(&bytes).unwrap();
    let range = bytes.as_ptr_range();
    assert!(range.contains(&back.name.as_ptr()) && range.contains(&back.raw.as_ptr()));
}

#[test]
fn vectors_of_one_numeric_type_become_typed_arrays() {
    let bytes = leafwire::to_vec(&vec![vec![1.5f64, 2.5], vec![3.5, 4.5]]).unwrap();
    let doc = leafwire::Document::open(&bytes).unwrap();
    let t = doc.root().typed().unwrap();
    assert_eq!(t.shape(), vec![2, 2]);
    assert_eq!(t.element_type(), leafwire::ElementType::F64);
}

/// Found by the benchmark: a serde struct holding many small matrices (GeoJSON rings of
/// [x, y] points) must decode; the work budget must not count a matrix's rows twice.
#[test]
fn documents_made_of_small_matrices_decode_through_every_path() {
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Polygon {
        rings: Vec<Vec<[f64; 2]>>,
    }
    let polygons: Vec<Polygon> = (0..200)
        .map(|p| Polygon { rings: (0..3).map(|r| (0..50).map(|i| [p as f64 + 0.5, (r * 50 + i) as f64 * 0.25]).collect()).collect() })
        .collect();
    let bytes = leafwire::to_vec(&polygons).unwrap();
    leafwire::validate(&bytes).unwrap();
    let back: Vec<Polygon> = leafwire::from_slice(&bytes).unwrap();
    assert_eq!(back, polygons);
    leafwire::decode(&bytes).unwrap();
    leafwire::json::to_json(&bytes).unwrap();
}

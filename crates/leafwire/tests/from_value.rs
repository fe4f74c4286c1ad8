//! `from_value` (serde from an owned `Value`) and `from_slice_owned` on packed documents,
//! which goes through it: every serde shape the serializer writes comes back.

use std::collections::BTreeMap;

use leafwire::{from_slice_owned, from_value, to_vec, to_vec_packed, PackOptions, Value};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Shape {
    Empty,
    Circle(f64),
    Segment(i32, i32),
    Box { w: u16, h: u16 },
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Unit;

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Meters(f32);

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Record {
    id: u64,
    name: String,
    letter: char,
    note: Option<String>,
    missing: Option<i8>,
    shapes: Vec<Shape>,
    point: (f64, f64),
    path: Vec<[f64; 2]>,
    counts: Vec<i64>,
    #[serde(with = "serde_bytes")]
    raw: Vec<u8>,
    by_id: BTreeMap<i64, String>,
    by_name: BTreeMap<String, bool>,
    huge: i128,
    unsigned: u128,
    unit: Unit,
    length: Meters,
}

fn record(i: usize) -> Record {
    Record {
        id: i as u64 * 7,
        name: format!("record {i}"),
        letter: ['a', 'é', '€'][i % 3],
        note: (i % 2 == 0).then(|| format!("even {i}")),
        missing: None,
        shapes: vec![Shape::Empty, Shape::Circle(i as f64 * 0.5), Shape::Segment(-1, i as i32), Shape::Box { w: 3, h: 4 }],
        point: (i as f64, -(i as f64)),
        path: (0..3).map(|k| [k as f64, k as f64 + 0.25]).collect(),
        counts: (0..5).map(|k| k * i as i64).collect(),
        raw: vec![0, 1, 255, i as u8],
        by_id: [(-3, "minus".to_string()), (i as i64, "self".to_string())].into_iter().collect(),
        by_name: [("yes".to_string(), true), ("no".to_string(), false)].into_iter().collect(),
        huge: -(1i128 << 100) - i as i128,
        unsigned: (1u128 << 90) + i as u128,
        unit: Unit,
        length: Meters(1.5),
    }
}

#[test]
fn every_serde_shape_comes_back_from_a_decoded_value() {
    let r = record(3);
    let value = leafwire::decode(&to_vec(&r).unwrap()).unwrap();
    assert_eq!(from_value::<Record>(value).unwrap(), r);
}

#[test]
fn packed_documents_deserialize_through_their_columns() {
    let records: Vec<Record> = (0..1500).map(record).collect();
    let packed = to_vec_packed(&records, &PackOptions::default()).unwrap();
    // Packed: feature bit 0 (spec §2.1); and smaller than the ordinary document although
    // most fields are residual (bytes, big integers, f32, i64 arrays of small numbers),
    // since a residual page is one document (§13.3), not one per value.
    assert_eq!(packed[10] & 1, 1);
    let plain = to_vec(&records).unwrap().len();
    assert!(packed.len() < plain, "packed {} bytes, ordinary {plain}", packed.len());
    assert_eq!(from_slice_owned::<Vec<Record>>(&packed).unwrap(), records);
    // The same document unpacked reads the same.
    assert_eq!(leafwire::from_slice::<Vec<Record>>(&leafwire::unpack(&packed).unwrap()).unwrap(), records);
}

#[test]
fn a_packed_array_inside_an_object_deserializes_too() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Outer {
        title: String,
        rows: Vec<Record>,
    }
    let outer = Outer { title: "t".into(), rows: (0..300).map(record).collect() };
    let packed = to_vec_packed(&outer, &PackOptions::default()).unwrap();
    assert_eq!(from_slice_owned::<Outer>(&packed).unwrap(), outer);
}

#[test]
fn mismatches_are_errors_not_panics() {
    let value = leafwire::decode(&to_vec(&record(1)).unwrap()).unwrap();
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Wrong {
        id: String,
    }
    assert!(from_value::<Wrong>(value.clone()).is_err());
    assert!(from_value::<Vec<u8>>(value).is_err());
    // An object of two entries is no enum variant.
    let two = leafwire::json::parse(br#"{"Circle": 1.0, "Empty": null}"#).unwrap();
    let e = from_value::<Shape>(two).unwrap_err();
    assert!(e.message().contains("enum"), "{e}");
    // Nor a number; and a unit variant written with content is refused.
    assert!(from_value::<Shape>(Value::Int(3)).is_err());
    let unit_with_content = leafwire::json::parse(br#"{"Empty": 1}"#).unwrap();
    assert!(from_value::<Shape>(unit_with_content).is_err());
    // Trailing elements of a tuple are reported.
    let three = leafwire::json::parse(b"[1, 2, 3]").unwrap();
    assert!(from_value::<(i32, i32)>(three).is_err());
}


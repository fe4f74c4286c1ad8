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


/// Every JSON file of the in-repository sample (and of the shared corpus when it is
/// beside the repository), packed, reads through its columns exactly as its ordinary
/// document reads: the column reader and the node reader agree value for value.
#[test]
fn packed_columns_read_as_the_ordinary_document_reads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["tests/data/sample/json", "tests/data/sample/graphql", "../shared/data/json", "../shared/data/graphql"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")));
        }
    }
    assert!(!files.is_empty());
    for path in files {
        let value = leafwire::json::parse(&std::fs::read(&path).unwrap()).unwrap();
        let ordinary = leafwire::encode(&value).unwrap();
        let packed = leafwire::encode_packed(&value, &PackOptions::default()).unwrap();
        let expected: serde_json::Value = leafwire::from_slice(&ordinary).unwrap();
        let got: serde_json::Value = from_slice_owned(&packed).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(got, expected, "{}", path.display());
    }
}

#[test]
fn a_visitor_that_stops_early_inside_a_packed_array_is_an_error() {
    // Arrays of three numbers read as pairs: the third number would otherwise be taken
    // as the next element's first.
    let rows: Vec<[String; 3]> = (0..200).map(|i| [i, i + 1, i + 2].map(|k| k.to_string())).collect();
    let packed = to_vec_packed(&rows, &PackOptions::default()).unwrap();
    assert_eq!(packed[10] & 1, 1);
    assert_eq!(from_slice_owned::<Vec<[String; 3]>>(&packed).unwrap(), rows);
    assert!(from_slice_owned::<Vec<(String, String)>>(&packed).is_err());
    // The packed array itself read as a fixed-size array of fewer rows.
    assert!(from_slice_owned::<[[String; 3]; 2]>(&packed).is_err());
    // The same for an ordinary document.
    assert!(leafwire::from_slice::<Vec<(String, String)>>(&to_vec(&rows).unwrap()).is_err());
    // Objects read as structs of fewer fields skip the others, in step.
    #[derive(Serialize)]
    struct Wide {
        a: i64,
        b: String,
        c: Option<f64>,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct Narrow {
        b: String,
    }
    let wide: Vec<Wide> = (0..300).map(|i| Wide { a: i, b: format!("b{i}"), c: (i % 2 == 0).then_some(i as f64) }).collect();
    let packed = to_vec_packed(&wide, &PackOptions::default()).unwrap();
    let narrow: Vec<Narrow> = from_slice_owned(&packed).unwrap();
    assert_eq!(narrow, (0..300).map(|i| Narrow { b: format!("b{i}") }).collect::<Vec<_>>());
}

#[test]
fn maps_with_many_distinct_keys_read_back() {
    // Objects whose keys vary from element to element are stored as maps of key ids.
    let rows: Vec<BTreeMap<String, i64>> =
        (0..300).map(|i| (0..5).map(|k| (format!("user{}", i * 5 + k), k)).collect()).collect();
    let packed = to_vec_packed(&rows, &PackOptions::default()).unwrap();
    assert_eq!(packed[10] & 1, 1);
    assert_eq!(from_slice_owned::<Vec<BTreeMap<String, i64>>>(&packed).unwrap(), rows);
    let int_keyed: Vec<BTreeMap<i64, String>> = (0..300).map(|i| [(i, "x".to_string()), (-i, "y".to_string())].into_iter().collect()).collect();
    let packed = to_vec_packed(&int_keyed, &PackOptions::default()).unwrap();
    assert_eq!(from_slice_owned::<Vec<BTreeMap<i64, String>>>(&packed).unwrap(), int_keyed);
}

#[test]
fn typed_rows_read_as_shorter_tuples_are_an_error() {
    // [i64; 3] rows are one typed array in an ordinary document: reading them as pairs
    // would drop every third number.
    let rows: Vec<[i64; 3]> = (0..200).map(|i| [i, i + 1, i + 2]).collect();
    let doc = to_vec(&rows).unwrap();
    assert_eq!(leafwire::from_slice::<Vec<[i64; 3]>>(&doc).unwrap(), rows);
    let e = leafwire::from_slice::<Vec<(i64, i64)>>(&doc).unwrap_err();
    assert!(e.message().contains("read as a tuple of 2"), "{e}");
    let floats: Vec<Vec<f64>> = vec![vec![1.5, 2.5, 3.5]];
    assert!(leafwire::from_slice::<Vec<(f64, f64)>>(&to_vec(&floats).unwrap()).is_err());
}

#[test]
fn enums_of_many_variants_read_back_from_keyed_columns() {
    // Ten variants give ten object shapes at one path: the shredder stores them as maps
    // of key ids (a keyed node), which the column reader must read as variants too.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Many {
        V0(i64),
        V1(i64),
        V2(i64),
        V3(i64),
        V4(i64),
        V5(String),
        V6(String),
        V7(String),
        V8(bool),
        V9 { x: f64 },
        Plain,
    }
    let rows: Vec<Many> = (0..150)
        .map(|i| match i % 11 {
            0 => Many::V0(i),
            1 => Many::V1(i),
            2 => Many::V2(i),
            3 => Many::V3(i),
            4 => Many::V4(i),
            5 => Many::V5(format!("{i}")),
            6 => Many::V6(format!("{i}")),
            7 => Many::V7(format!("{i}")),
            8 => Many::V8(i % 2 == 0),
            9 => Many::V9 { x: i as f64 * 0.5 },
            _ => Many::Plain,
        })
        .collect();
    let packed = to_vec_packed(&rows, &PackOptions::default()).unwrap();
    assert_eq!(packed[10] & 1, 1);
    assert_eq!(from_slice_owned::<Vec<Many>>(&packed).unwrap(), rows);
}

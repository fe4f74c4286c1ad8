//! serde over typed arrays: numeric vectors (flat and nested) round trip through the
//! typed-array deserializer with their values and types, bytes borrow, and JSON-inferred
//! arrays (narrowed integers, masked floats) read back as the numbers they were.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Mesh {
    name: String,
    xs: Vec<f64>,
    ids: Vec<i64>,
    big: Vec<u64>,
    small: Vec<u8>,
    flags: Vec<bool>,
    points: Vec<(f64, f64)>,
    rings: Vec<Vec<Vec<(f32, f32)>>>,
    cube: Vec<[[i16; 2]; 3]>,
    maybe: Option<Vec<f64>>,
    empty: Vec<f64>,
}

fn mesh() -> Mesh {
    Mesh {
        name: "m".into(),
        xs: vec![0.5, -1.25, f64::MAX, 3.0],
        ids: vec![i64::MIN, -1, 0, i64::MAX],
        big: vec![0, u64::MAX, 1 << 63],
        small: vec![0, 7, 255],
        flags: vec![true, false, true],
        points: (0..50).map(|i| (i as f64 * 0.5, -(i as f64))).collect(),
        rings: vec![vec![vec![(1.0, 2.0), (3.0, 4.0)], vec![(5.0, 6.0)]], vec![], vec![vec![(7.5, 8.5), (9.0, 1.0)]]],
        cube: vec![[[1, -2], [3, 4], [i16::MIN, i16::MAX]]; 4],
        maybe: Some(vec![1.5, 2.5]),
        empty: vec![],
    }
}

#[test]
fn numeric_vectors_round_trip() {
    let m = mesh();
    let bytes = leafwire::to_vec(&m).unwrap();
    let back: Mesh = leafwire::from_slice(&bytes).unwrap();
    assert_eq!(back, m);
    // The vectors really are typed arrays (what the fast path reads).
    let doc = leafwire::Document::open(&bytes).unwrap();
    for path in ["/xs", "/ids", "/points", "/cube", "/maybe", "/big"] {
        assert_eq!(doc.pointer(path).unwrap().kind(), leafwire::Kind::TypedArray, "{path}");
    }
    assert_eq!(doc.pointer("/points").unwrap().typed().unwrap().shape(), vec![50, 2]);
    assert_eq!(doc.pointer("/cube").unwrap().typed().unwrap().shape(), vec![4, 3, 2]);
}

#[test]
fn rows_of_a_typed_array_deserialize_on_their_own() {
    let bytes = leafwire::to_vec(&mesh()).unwrap();
    let doc = leafwire::Document::open(&bytes).unwrap();
    let row = doc.pointer("/cube/2/1").unwrap();
    let v: Vec<i16> = serde_json::from_value(serde_json::to_value(row).unwrap()).unwrap();
    assert_eq!(v, vec![3, 4]);
    // The whole document's cube, as a dynamic value, matches the typed one.
    let any: serde_json::Value = leafwire::from_slice(&bytes).unwrap();
    assert_eq!(any["cube"][3][2], serde_json::json!([i16::MIN, i16::MAX]));
    assert_eq!(any["big"], serde_json::json!([0u64, u64::MAX, 1u64 << 63]));
}

/// Rows of the last axis (points, colours) are read from their bytes alone: they keep the
/// checks and forms of a row read through the array's header.
#[test]
fn rows_of_the_last_axis_keep_their_checks() {
    let points = vec![(1.0f64, 2.0f64), (3.0, -4.5)];
    let bytes = leafwire::to_vec(&points).unwrap();
    assert_eq!(leafwire::Document::open(&bytes).unwrap().root().typed().unwrap().shape(), vec![2, 2]);
    assert!(leafwire::from_slice::<Vec<(f64, f64, f64)>>(&bytes).is_err());
    assert!(leafwire::from_slice::<Vec<(f64,)>>(&bytes).is_err());
    assert!(leafwire::from_slice::<Vec<(i64, i64)>>(&bytes).is_err());
    assert_eq!(leafwire::from_slice::<Vec<[f64; 2]>>(&bytes).unwrap(), vec![[1.0, 2.0], [3.0, -4.5]]);
    let optional: Vec<Option<Vec<f64>>> = leafwire::from_slice(&bytes).unwrap();
    assert_eq!(optional, vec![Some(vec![1.0, 2.0]), Some(vec![3.0, -4.5])]);
    let any: serde_json::Value = leafwire::from_slice(&bytes).unwrap();
    assert_eq!(any, serde_json::json!([[1.0, 2.0], [3.0, -4.5]]));

    #[derive(Deserialize)]
    struct Row<'a>(#[serde(borrow, with = "serde_bytes")] &'a [u8]);
    let bytes = leafwire::to_vec(&vec![[1u8, 2, 3], [4, 5, 6]]).unwrap();
    assert_eq!(leafwire::Document::open(&bytes).unwrap().root().typed().unwrap().shape(), vec![2, 3]);
    let rows: Vec<Row<'_>> = leafwire::from_slice(&bytes).unwrap();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![&[1u8, 2, 3][..], &[4, 5, 6][..]]);
    assert!(bytes.as_ptr_range().contains(&rows[1].0.as_ptr()));

    // Rows of rows: the last axis of a rank-3 array.
    let rings = vec![vec![(0.5f32, 1.5f32), (2.5, 3.5)], vec![(4.5, 5.5), (6.5, 7.5)]];
    let bytes = leafwire::to_vec(&rings).unwrap();
    assert_eq!(leafwire::Document::open(&bytes).unwrap().root().typed().unwrap().shape(), vec![2, 2, 2]);
    assert_eq!(leafwire::from_slice::<Vec<Vec<(f32, f32)>>>(&bytes).unwrap(), rings);
    assert!(leafwire::from_slice::<Vec<Vec<(f32, f32, f32)>>>(&bytes).is_err());
}

#[derive(Deserialize, Debug)]
struct Borrowed<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(with = "serde_bytes")]
    small: &'a [u8],
}

#[test]
fn u8_arrays_and_strings_borrow() {
    let bytes = leafwire::to_vec(&mesh()).unwrap();
    let b: Borrowed<'_> = leafwire::from_slice(&bytes).unwrap();
    assert_eq!((b.name, b.small), ("m", &[0u8, 7, 255][..]));
    let range = bytes.as_ptr_range();
    assert!(range.contains(&b.small.as_ptr()) && range.contains(&b.name.as_ptr()));
}

#[test]
fn json_inferred_arrays_read_as_their_numbers() {
    let doc = leafwire::json::from_json(br#"{"mixed": [1, 2.5, -3], "narrow": [1, 200, -5], "grid": [[1, 2], [3, 4.5]]}"#).unwrap();
    #[derive(Deserialize)]
    struct T {
        mixed: Vec<f64>,
        narrow: Vec<i32>,
        grid: Vec<Vec<f64>>,
    }
    let t: T = leafwire::from_slice(&doc).unwrap();
    assert_eq!(t.mixed, vec![1.0, 2.5, -3.0]);
    assert_eq!(t.narrow, vec![1, 200, -5]);
    assert_eq!(t.grid, vec![vec![1.0, 2.0], vec![3.0, 4.5]]);
    // Masked integers stay integers for a dynamic reader.
    let any: serde_json::Value = leafwire::from_slice(&doc).unwrap();
    assert_eq!(any["mixed"], serde_json::json!([1, 2.5, -3]));
    assert!(any["mixed"][0].is_i64());
}

#[test]
fn wrong_element_types_are_errors() {
    let bytes = leafwire::to_vec(&vec![1.5f64, 2.5]).unwrap();
    assert!(leafwire::from_slice::<Vec<i32>>(&bytes).is_err());
    let bytes = leafwire::to_vec(&vec![300i64, 2]).unwrap();
    assert!(leafwire::from_slice::<Vec<u8>>(&bytes).is_err());
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Cell {
    N(f64),
    S(String),
    L(Vec<f64>),
}

#[test]
fn sequences_that_stop_being_numeric_stay_generic() {
    // Numbers first, then another kind: the numbers go back to being children.
    let v = vec![Cell::N(1.5), Cell::N(2.5), Cell::S("x".into()), Cell::L(vec![1.0, 2.0]), Cell::N(3.0)];
    let bytes = leafwire::to_vec(&v).unwrap();
    assert_eq!(leafwire::Document::open(&bytes).unwrap().root().kind(), leafwire::Kind::Array);
    assert_eq!(leafwire::from_slice::<Vec<Cell>>(&bytes).unwrap(), v);
    let v = vec![Cell::N(1.5), Cell::L(vec![4.0]), Cell::L(vec![])];
    assert_eq!(leafwire::from_slice::<Vec<Cell>>(&leafwire::to_vec(&v).unwrap()).unwrap(), v);
    // Same-typed numbers under an enum of integers and floats: one type wins or none.
    let mixed: Vec<serde_json::Value> = vec![1.into(), 2.5.into(), (-3).into()];
    let back: Vec<serde_json::Value> = leafwire::from_slice(&leafwire::to_vec(&mixed).unwrap()).unwrap();
    assert_eq!(back, mixed);
    let f32s = vec![1.5f32, -0.0, f32::MIN_POSITIVE];
    let back: Vec<f32> = leafwire::from_slice(&leafwire::to_vec(&(f32s.clone(), "x")).unwrap()).map(|(v, _): (Vec<f32>, String)| v).unwrap();
    assert_eq!(back, f32s);
}

/// A map whose keys arrive in any order, so that every duplicate check path runs.
struct Pairs<K = i64, V = u8>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for Pairs<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[derive(Serialize, Clone)]
struct Bid {
    status: String,
    tags: Vec<String>,
}

/// String keys, and values that are strings, lists of strings or structs (each of which
/// goes into the document by its own path): a key met again is refused wherever it
/// comes, and keys out of order (a field name first met deeper in an earlier field) give
/// the canonical bytes.
#[test]
fn string_keys_are_checked_whatever_the_value() {
    fn check<V: Serialize + Clone>(values: [V; 3]) {
        let [a, b, c] = values;
        for n in [3usize, 40] {
            let mut entries: Vec<(String, V)> = (0..n).map(|i| (format!("k{:02}", (i * 7) % n), a.clone())).collect();
            let bytes = leafwire::to_vec(&Pairs(entries.clone())).unwrap();
            assert!(leafwire::encode(&leafwire::decode(&bytes).unwrap()).unwrap() == bytes);
            entries.push((entries[n / 2].0.clone(), b.clone()));
            let e = leafwire::to_vec(&Pairs(entries)).unwrap_err();
            assert_eq!(e.category(), leafwire::Category::DuplicateKey, "{n}");
        }
        // "status" is interned inside "first" before the outer "status" comes.
        let nested = Pairs(vec![("first", Pairs(vec![("status", a.clone())])), ("status", Pairs(vec![("x", b)]))]);
        let bytes = leafwire::to_vec(&nested).unwrap();
        assert!(leafwire::encode(&leafwire::decode(&bytes).unwrap()).unwrap() == bytes);
        let repeated = Pairs(vec![
            ("first", Pairs(vec![("status", a.clone())])),
            ("status", Pairs(vec![("x", c.clone()), ("x", c)])),
        ]);
        assert_eq!(leafwire::to_vec(&repeated).unwrap_err().category(), leafwire::Category::DuplicateKey);
    }
    check(["a".to_string(), "b".to_string(), "c".to_string()]);
    check([vec!["a".to_string()], vec![], vec!["c".to_string(), "d".to_string()]]);
    let bid = |s: &str| Bid { status: s.into(), tags: vec![s.into()] };
    check([bid("open"), bid("closed"), bid("x")]);
}

#[test]
fn duplicate_map_keys_are_refused_in_any_order() {
    // Up to 64 keys are scanned, and a set is made past that: both sides.
    for n in [3i64, 40, 100] {
        let ascending: Vec<(i64, u8)> = (0..n).map(|k| (k, 1)).collect();
        assert!(leafwire::to_vec(&Pairs(ascending.clone())).is_ok());
        for dup in [0, n / 2, n - 1] {
            let mut keys = ascending.clone();
            keys.push((dup, 2));
            let e = leafwire::to_vec(&Pairs(keys)).unwrap_err();
            assert_eq!(e.category(), leafwire::Category::DuplicateKey, "{n} {dup}");
        }
        let mut descending = ascending.clone();
        descending.reverse();
        descending.insert(n as usize / 2, (n - 1, 3));
        assert_eq!(leafwire::to_vec(&Pairs(descending)).unwrap_err().category(), leafwire::Category::DuplicateKey);
        let shuffled: Vec<(i64, u8)> = (0..n).map(|k| ((k * 7919) % n - n / 2, 1)).collect();
        assert!(leafwire::to_vec(&Pairs(shuffled)).is_ok());
    }
}

#[test]
fn every_element_type_round_trips() {
    fn check<T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(v: T) {
        assert_eq!(leafwire::from_slice::<T>(&leafwire::to_vec(&v).unwrap()).unwrap(), v);
    }
    check(vec![i32::MIN, 0, i32::MAX]);
    check(vec![u32::MAX, 0]);
    check(vec![i8::MIN, i8::MAX]);
    check(vec![u16::MAX, 1]);
    check(vec![[f32::MAX, -1.0], [0.5, f32::EPSILON]]);
    check(vec![vec![1i64 << 40], vec![-(1i64 << 40)]]);
    check(vec![f64::INFINITY, f64::NEG_INFINITY, -0.0]);
}

#[test]
fn serde_output_is_the_canonical_encoding_of_its_value() {
    // Rows that agree, rows that stop agreeing (length, then type), rows after a break.
    let ragged: Vec<Vec<Vec<f64>>> = vec![
        vec![vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0]],
        vec![vec![1.0, 2.0], vec![3.0, 4.0]],
        vec![],
        vec![vec![], vec![]],
    ];
    let typed_then_not: (Vec<[i32; 2]>, Vec<Cell>) = (vec![[1, 2], [3, 4]], vec![Cell::L(vec![1.0]), Cell::L(vec![2.0]), Cell::N(3.0), Cell::L(vec![4.0, 5.0])]);
    for bytes in [leafwire::to_vec(&mesh()).unwrap(), leafwire::to_vec(&ragged).unwrap(), leafwire::to_vec(&typed_then_not).unwrap()] {
        let value = leafwire::decode(&bytes).unwrap();
        assert!(leafwire::encode(&value).unwrap() == bytes, "{value:?}");
    }
    let doc = leafwire::to_vec(&ragged).unwrap();
    let doc = leafwire::Document::open(&doc).unwrap();
    assert_eq!(doc.pointer("/1").unwrap().typed().unwrap().shape(), vec![2, 2]);
    assert_eq!(doc.pointer("/0").unwrap().kind(), leafwire::Kind::Array);
    assert_eq!(leafwire::from_slice::<Vec<Vec<Vec<f64>>>>(doc.as_bytes()).unwrap(), ragged);
}

/// An element of a sequence of mixed shape: the rows of a typed array (tuples, small
/// vectors, of one or several number types) interleaved with what ends a run.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
#[serde(untagged)]
enum Elem {
    Pair(f64, f64),
    IntPair(i32, i32),
    Mixed(f64, i32),
    Text(String),
    Floats(Vec<f64>),
    Nested(Vec<Elem>),
    Flag(bool),
}

fn elem() -> impl proptest::strategy::Strategy<Value = Elem> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        4 => (-3i32..3, -3i32..3).prop_map(|(a, b)| Elem::Pair(a as f64 + 0.5, b as f64)),
        2 => (-3i32..3, -3i32..3).prop_map(|(a, b)| Elem::IntPair(a, b)),
        1 => (-3i32..3).prop_map(|a| Elem::Mixed(a as f64 + 0.25, a)),
        1 => "[a-c]{0,2}".prop_map(Elem::Text),
        2 => proptest::collection::vec(-3i32..3, 0..4).prop_map(|v| Elem::Floats(v.into_iter().map(|x| x as f64 * 1.5).collect())),
        1 => any::<bool>().prop_map(Elem::Flag),
    ];
    leaf.prop_recursive(3, 40, 6, |inner| proptest::collection::vec(inner, 0..6).prop_map(Elem::Nested))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    /// Rows written without a frame of their own (`Builder::begin_row`) give the bytes of
    /// the canonical encoding of the value they decode to, and read back as written,
    /// whatever breaks their runs and wherever.
    #[test]
    fn rows_of_any_mix_are_canonical_and_round_trip(items in proptest::collection::vec(elem(), 0..12)) {
        let bytes = leafwire::to_vec(&items).unwrap();
        let value = leafwire::decode(&bytes).unwrap();
        proptest::prop_assert!(leafwire::encode(&value).unwrap() == bytes, "{:?}", value);
        let back: Vec<Elem> = leafwire::from_slice(&bytes).unwrap();
        // Untagged, so `IntPair(0, 0)` may read back as `Pair(0.0, 0.0)`: compared as the
        // JSON they write with every number a float.
        proptest::prop_assert_eq!(as_floats(&back), as_floats(&items));
    }
}

fn as_floats(items: &[Elem]) -> serde_json::Value {
    fn walk(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Number(n) => n.as_f64().unwrap().into(),
            serde_json::Value::Array(a) => a.into_iter().map(walk).collect(),
            other => other,
        }
    }
    walk(serde_json::to_value(items).unwrap())
}

/// A sequence serialized an element at a time (`serialize_seq`), as serde's default
/// `collect_seq` does, to compare with the serializer's own `collect_seq`, which copies
/// runs of numbers in a loop.
struct OneByOne<'a, T>(&'a [T]);

impl<T: Serialize> Serialize for OneByOne<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for item in self.0 {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

/// The same through `collect_seq` over an iterator that gives no size hint.
struct Unhinted<'a, T>(&'a [T]);

impl<T: Serialize> Serialize for Unhinted<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().filter(|_| true))
    }
}

#[derive(Serialize, Debug, Clone)]
#[serde(untagged)]
enum Num {
    F(f64),
    I(i32),
    U(u8),
    Big(i128),
    Maybe(Option<f64>),
    S(String),
    Row(Vec<f64>),
}

fn check_collected<T: Serialize>(items: &[T]) -> Result<(), String> {
    let collected = leafwire::to_vec(&items).unwrap();
    for other in [leafwire::to_vec(&OneByOne(items)).unwrap(), leafwire::to_vec(&Unhinted(items)).unwrap()] {
        if other != collected {
            return Err(format!("collect_seq wrote {} bytes, one by one {}", collected.len(), other.len()));
        }
    }
    let value = leafwire::decode(&collected).unwrap();
    if leafwire::encode(&value).unwrap() != collected {
        return Err(format!("not canonical: {value:?}"));
    }
    Ok(())
}

#[test]
fn collected_sequences_write_what_one_by_one_writes() {
    let long: Vec<f64> = (0..70_000).map(|i| i as f64 * 0.25).collect();
    check_collected(&long).unwrap();
    check_collected(&(0..200u8).collect::<Vec<_>>()).unwrap();
    check_collected(&[true, false, true]).unwrap();
    check_collected(&[Some(1.5), None, Some(2.5)]).unwrap();
    check_collected(&[1i128, 2, i128::MAX, 3]).unwrap();
    check_collected(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0]]).unwrap();
    check_collected::<f64>(&[]).unwrap();
    let back: Vec<f64> = leafwire::from_slice(&leafwire::to_vec(&long).unwrap()).unwrap();
    assert_eq!(back, long);
}

fn num() -> impl proptest::strategy::Strategy<Value = Num> {
    use proptest::prelude::*;
    prop_oneof![
        6 => (-3i32..3).prop_map(|a| Num::F(a as f64 + 0.5)),
        2 => (-3i32..3).prop_map(Num::I),
        1 => any::<u8>().prop_map(Num::U),
        1 => prop_oneof![Just(i128::MAX), (-3i64..3).prop_map(|a| a as i128)].prop_map(Num::Big),
        1 => proptest::option::of(-3i32..3).prop_map(|a| Num::Maybe(a.map(|a| a as f64))),
        1 => "[a-b]{0,1}".prop_map(Num::S),
        1 => proptest::collection::vec(-3i32..3, 0..3).prop_map(|v| Num::Row(v.into_iter().map(|x| x as f64).collect())),
    ]
}

/// Sequences as a struct's field and as the values of maps, where a collected sequence
/// that starts with a number goes without a frame of its own (`Builder::begin_numbers`).
#[derive(Serialize)]
struct Holder<S> {
    name: &'static str,
    field: S,
    by_name: std::collections::BTreeMap<&'static str, S>,
    by_id: std::collections::BTreeMap<i32, S>,
}

fn holder<S: Clone>(s: S) -> Holder<S> {
    Holder { name: "h", field: s.clone(), by_name: [("a", s.clone()), ("b", s.clone())].into(), by_id: [(-1, s.clone()), (7, s)].into() }
}

impl<T> Clone for OneByOne<'_, T> {
    fn clone(&self) -> Self {
        OneByOne(self.0)
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    /// Whatever ends a run of numbers and wherever, nested or not, a collected sequence
    /// gives the bytes of one serialized an element at a time.
    #[test]
    fn collected_runs_match_one_by_one(items in proptest::collection::vec(num(), 0..40), rows in proptest::collection::vec(proptest::collection::vec(num(), 0..6), 0..6)) {
        proptest::prop_assert_eq!(check_collected(&items), Ok(()));
        proptest::prop_assert_eq!(check_collected(&rows), Ok(()));
        let collected = leafwire::to_vec(&holder(&items[..])).unwrap();
        proptest::prop_assert!(collected == leafwire::to_vec(&holder(OneByOne(&items[..]))).unwrap());
        let value = leafwire::decode(&collected).unwrap();
        proptest::prop_assert!(leafwire::encode(&value).unwrap() == collected, "{:?}", value);
    }
}

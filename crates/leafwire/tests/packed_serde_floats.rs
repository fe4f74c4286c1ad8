//! Packed documents read into float tuples, float arrays and `Vec<f64>` (the serde
//! reader's fast paths for nodes of floats only) give what the general path gives, and
//! what does not fit the type asked for is still an error.

use leafwire::{from_slice_owned, to_vec_packed, PackOptions};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Shape {
    name: String,
    rings: Vec<Vec<(f64, f64)>>,
    colour: [f64; 3],
    weights: Vec<f64>,
}

fn shapes(n: usize) -> Vec<Shape> {
    (0..n)
        .map(|i| {
            let x = i as f64 * 0.37;
            Shape {
                name: format!("shape {i}"),
                rings: (0..1 + i % 3)
                    .map(|r| (0..3 + (i + r) % 5).map(|p| (x + p as f64 * 0.125, -x / 3.0 + r as f64)).collect())
                    .collect(),
                colour: [x.sin(), x.cos(), 0.5],
                weights: (0..i % 4).map(|k| k as f64 / 7.0).collect(),
            }
        })
        .collect()
}

#[test]
fn float_tuples_arrays_and_vectors_read_back() {
    let original = shapes(400);
    let packed = to_vec_packed(&original, &PackOptions::default()).unwrap();
    let back: Vec<Shape> = from_slice_owned(&packed).unwrap();
    assert_eq!(back, original);
}

#[test]
fn points_of_integers_and_floats_read_as_floats() {
    // Some coordinates are integers in the JSON: their nodes hold two kinds.
    let text: String = format!(
        "[{}]",
        (0..300).map(|i| if i % 7 == 0 { format!("[{i}, 2.5]") } else { format!("[{i}.25, -1.5]") }).collect::<Vec<_>>().join(",")
    );
    let value = leafwire::json::parse(text.as_bytes()).unwrap();
    let packed = leafwire::encode_packed(&value, &PackOptions::default()).unwrap();
    let back: Vec<(f64, f64)> = from_slice_owned(&packed).unwrap();
    let expected: Vec<(f64, f64)> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, expected);
}

#[test]
fn float_tuples_that_do_not_fit_the_type_are_errors() {
    let triples: Vec<[f64; 3]> = (0..300).map(|i| [i as f64 / 4.0, 1.5, -2.25]).collect();
    let packed = to_vec_packed(&triples, &PackOptions::default()).unwrap();
    // Shorter or longer than the stored tuples: nothing is dropped without an error.
    assert!(from_slice_owned::<Vec<(f64, f64)>>(&packed).is_err());
    assert!(from_slice_owned::<Vec<(f64, f64, f64, f64)>>(&packed).is_err());
    // Floats are not integers.
    assert!(from_slice_owned::<Vec<(i64, i64, i64)>>(&packed).is_err());
    // As a vector of each element, all of them.
    let vectors: Vec<Vec<f64>> = from_slice_owned(&packed).unwrap();
    assert_eq!(vectors, triples.iter().map(|t| t.to_vec()).collect::<Vec<_>>());
}

#[test]
fn vectors_of_floats_with_nulls_read_as_options() {
    let rows: Vec<Vec<Option<f64>>> =
        (0..300).map(|i| (0..i % 5).map(|k| if (i + k) % 11 == 0 { None } else { Some(k as f64 + 0.5) }).collect()).collect();
    let packed = to_vec_packed(&rows, &PackOptions::default()).unwrap();
    assert_eq!(from_slice_owned::<Vec<Vec<Option<f64>>>>(&packed).unwrap(), rows);
    assert!(from_slice_owned::<Vec<Vec<f64>>>(&packed).is_err());
}

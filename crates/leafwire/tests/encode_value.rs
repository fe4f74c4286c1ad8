//! `encode` of values that the canonical rules (spec §7) or the limits (§5.2, §10) decide.

use leafwire::{Category, TypedArray, TypedData, Value};

#[test]
fn unsigned_values_in_i64_are_ints_in_the_narrowest_slot() {
    let bytes = leafwire::encode(&Value::Array(vec![Value::UInt(5), Value::UInt(u64::MAX)])).unwrap();
    let back = leafwire::decode(&bytes).unwrap();
    assert_eq!(back, Value::Array(vec![Value::Int(5), Value::UInt(u64::MAX)]));
    // The same bytes as the array written with an `Int`.
    assert_eq!(bytes, leafwire::encode(&Value::Array(vec![Value::Int(5), Value::UInt(u64::MAX)])).unwrap());
}

#[test]
fn a_bignum_that_is_not_one_is_refused() {
    for text in ["12", "-5", "abc", "", "0123456789012345678901234567890"] {
        let err = leafwire::encode(&Value::BigNum(text.into())).unwrap_err();
        assert_eq!(err.category(), Category::NotRepresentable, "{text:?}");
    }
    let ok = "123456789012345678901234567890";
    let bytes = leafwire::encode(&Value::BigNum(ok.into())).unwrap();
    assert_eq!(leafwire::decode(&bytes).unwrap(), Value::BigNum(ok.into()));
}

#[test]
fn nesting_past_the_limit_is_an_error() {
    let mut v = Value::Null;
    for _ in 0..5 {
        v = Value::Array(vec![v]);
    }
    assert!(leafwire::encode_with(&v, 5).is_ok());
    assert_eq!(leafwire::encode_with(&v, 4).unwrap_err().category(), Category::DepthLimit);
}

#[test]
fn shapes_with_more_rows_than_the_document_has_bytes_are_refused() {
    let t = TypedArray::with_shape(TypedData::U8(vec![]), vec![1 << 40, 0]).unwrap();
    assert_eq!(leafwire::encode(&Value::Typed(t)).unwrap_err().category(), Category::LimitExceeded);
    let t = TypedArray::with_shape(TypedData::F64(vec![]), vec![0, 1 << 31, 1 << 31]).unwrap();
    assert_eq!(leafwire::encode(&Value::Typed(t)).unwrap_err().category(), Category::LimitExceeded);
}

#[test]
fn typed_arrays_of_every_alignment_follow_strings_of_every_length() {
    // Data blocks are laid out one after the other: a typed block after a string of any
    // length must come out aligned and read back.
    for len in 0..17 {
        let mut items = vec![Value::String("x".repeat(len))];
        items.push(Value::Typed(TypedArray::new(TypedData::F64(vec![1.5, -2.0]))));
        items.push(Value::Bytes(vec![7; len]));
        items.push(Value::Typed(TypedArray::new(TypedData::I16(vec![3, 4, 5]))));
        items.push(Value::Typed(TypedArray::with_int_mask(vec![1.0, 2.5], vec![2], vec![true, false]).unwrap()));
        let v = Value::Array(items);
        let bytes = leafwire::encode(&v).unwrap();
        leafwire::validate(&bytes).unwrap();
        assert_eq!(leafwire::decode(&bytes).unwrap(), v);
    }
}

/// A row of a masked f64 array, read alone, copies its own bits of the integer mask: rows
/// of 5 start at bits 0, 5 and 10 of the mask (mid-byte), and each comes back with its
/// integers as integers, in `decode` and in `TypedRef::to_typed_array`.
#[test]
fn rows_of_a_masked_array_keep_their_own_mask_bits() {
    let rows = 3;
    let (mut data, mut mask) = (Vec::new(), Vec::new());
    for i in 0..rows * 5 {
        let int = i % 3 == 0 || i == 7;
        data.push(if int { i as f64 } else { i as f64 + 0.5 });
        mask.push(int);
    }
    let value = Value::Typed(TypedArray::with_int_mask(data.clone(), vec![rows, 5], mask.clone()).unwrap());
    let bytes = leafwire::AlignedBytes::new(&leafwire::encode(&value).unwrap());
    assert_eq!(leafwire::decode(&bytes).unwrap(), value);
    let doc = leafwire::Document::open(&bytes).unwrap();
    for r in 0..rows {
        let row = doc.root().at(r).unwrap().typed().unwrap().to_typed_array();
        let range = r * 5..r * 5 + 5;
        let expected = TypedArray::with_int_mask(data[range.clone()].to_vec(), vec![5], mask[range].to_vec()).unwrap();
        assert_eq!(row, expected, "row {r}");
    }
}

//! The streaming `Encoder`: driven over a `Value`, it must produce exactly the bytes of
//! `leafwire::encode`; misuse is an error, never a panic or a malformed document.

use leafwire::{Category, ElementType, Encoder, IntMap, Map, TypedArray, TypedData, Value};

mod common;
use common::value;
use proptest::prelude::*;

fn le_bytes(data: &TypedData) -> Vec<u8> {
    let mut out = Vec::new();
    match data {
        TypedData::Bool(v) => out.extend(v.iter().map(|&b| b as u8)),
        TypedData::I8(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::I16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::I32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::I64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::U8(v) => out.extend_from_slice(v),
        TypedData::U16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::U32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::U64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::F32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        TypedData::F64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
    }
    out
}

fn drive(e: &mut Encoder, v: &Value) -> leafwire::Result<()> {
    match v {
        Value::Null => e.null(),
        Value::Bool(b) => e.bool(*b),
        Value::Int(i) => e.int(*i),
        Value::UInt(u) => e.uint(*u),
        Value::F64(x) => e.f64(*x),
        Value::F32(x) => e.f32(*x),
        Value::String(s) => e.string(s),
        Value::Bytes(b) => e.bytes(b),
        Value::BigNum(d) => e.bignum(d),
        Value::Table(t) => e.table(t),
        Value::Array(items) => {
            e.begin_array()?;
            for item in items {
                drive(e, item)?;
            }
            e.end()
        }
        Value::Object(map) => {
            e.begin_object()?;
            for (k, item) in map {
                e.key(k)?;
                drive(e, item)?;
            }
            e.end()
        }
        Value::IntMap(map) => {
            e.begin_intmap()?;
            for (k, item) in map {
                e.int_key(*k)?;
                drive(e, item)?;
            }
            e.end()
        }
        Value::Typed(t) => e.typed(t.element_type(), t.shape(), &le_bytes(t.data()), t.int_mask()),
    }
}

fn streamed(v: &Value) -> Vec<u8> {
    let mut e = Encoder::new(leafwire::DEFAULT_MAX_DEPTH);
    drive(&mut e, v).unwrap();
    e.finish().unwrap()
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map>())
}

fn table() -> Vec<Value> {
    let typed = |d, s: Vec<usize>| Value::Typed(TypedArray::with_shape(d, s).unwrap());
    vec![
        Value::Null,
        Value::Bool(true),
        Value::Int(-5),
        Value::Int(i64::MIN),
        Value::UInt(u64::MAX),
        Value::F64(1.5),
        Value::F64(f64::NAN),
        Value::F32(-0.0),
        Value::String("héllo".into()),
        Value::Bytes(vec![0, 1, 255]),
        Value::BigNum("123456789012345678901234567890".into()),
        Value::BigNum("-98765432109876543210".into()),
        Value::Array(vec![]),
        // Uniform numbers stay a generic array, as a Value says.
        Value::Array(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
        Value::Array(vec![Value::F64(1.0), Value::F64(2.5)]),
        obj(vec![]),
        Value::IntMap(IntMap::default()),
        obj(vec![
            ("name", Value::String("mesh".into())),
            ("tags", Value::Array(vec![Value::String("a".into()), Value::Null, Value::Bool(false)])),
            ("nested", obj(vec![("name", Value::Int(7)), ("x", obj(vec![("name", Value::Array(vec![]))]))])),
            ("big", Value::BigNum("-123456789012345678901234567890".into())),
            ("u", Value::UInt(1 << 63)),
        ]),
        Value::IntMap([(-1i64, Value::Int(1)), (5, obj(vec![("k", Value::F32(2.0))])), (i64::MAX, Value::IntMap(IntMap::default()))].into_iter().collect()),
        typed(TypedData::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), vec![2, 3]),
        typed(TypedData::U8(vec![]), vec![0, 4]),
        typed(TypedData::Bool(vec![true, false]), vec![2]),
        Value::Typed(TypedArray::with_int_mask(vec![1.0, 2.5, 3.0], vec![3], vec![true, false, true]).unwrap()),
        obj(vec![
            ("pts", Value::Array(vec![typed(TypedData::I16(vec![1, 2]), vec![2]), typed(TypedData::I16(vec![3, 4]), vec![2])])),
            ("cols", obj(vec![("a", typed(TypedData::U64(vec![u64::MAX]), vec![1])), ("b", typed(TypedData::F32(vec![0.5; 4]), vec![2, 2]))])),
        ]),
        Value::Array(vec![Value::Array(vec![Value::Array(vec![Value::Int(1)])]), obj(vec![("a", Value::Array(vec![]))])]),
    ]
}

#[test]
fn matches_encode_byte_for_byte() {
    for v in table() {
        let expected = leafwire::encode(&v).unwrap();
        assert_eq!(streamed(&v), expected, "{v:?}");
        leafwire::validate(&expected).unwrap();
    }
}

#[test]
fn bignum_that_fits_is_an_int() {
    for (text, v) in [("5", Value::Int(5)), ("-0", Value::Int(0)), ("18446744073709551615", Value::UInt(u64::MAX))] {
        let mut e = Encoder::new(8);
        e.bignum(text).unwrap();
        assert_eq!(e.finish().unwrap(), leafwire::encode(&v).unwrap());
    }
    for bad in ["", "-", "01", "1.5", "+1", "1e30", " 1"] {
        let mut e = Encoder::new(8);
        assert_eq!(e.bignum(bad).unwrap_err().category(), Category::Custom, "{bad:?}");
    }
}

fn misuse(f: impl FnOnce(&mut Encoder) -> leafwire::Result<()>) -> Category {
    let mut e = Encoder::new(4);
    match f(&mut e) {
        Err(err) => {
            // After an error the encoder refuses everything, including finish.
            assert!(e.null().is_err());
            assert!(e.finish().is_err());
            err.category()
        }
        Ok(()) => e.finish().unwrap_err().category(),
    }
}

#[test]
fn misuse_is_an_error() {
    use Category::*;
    assert_eq!(misuse(|_| Ok(())), Custom); // finish without a root
    assert_eq!(misuse(|e| e.end()), Custom);
    assert_eq!(misuse(|e| e.key("a")), Custom);
    assert_eq!(misuse(|e| e.int_key(1)), Custom);
    assert_eq!(misuse(|e| { e.null()?; e.null() }), Custom);
    assert_eq!(misuse(|e| e.begin_array()), Custom); // finish with an open container
    assert_eq!(misuse(|e| { e.begin_object()?; e.null() }), Custom);
    assert_eq!(misuse(|e| { e.begin_object()?; e.begin_array() }), Custom);
    assert_eq!(misuse(|e| { e.begin_object()?; e.int_key(3) }), Custom);
    assert_eq!(misuse(|e| { e.begin_object()?; e.key("a")?; e.key("b") }), Custom);
    assert_eq!(misuse(|e| { e.begin_object()?; e.key("a")?; e.end() }), Custom);
    assert_eq!(misuse(|e| { e.begin_intmap()?; e.key("a") }), Custom);
    assert_eq!(misuse(|e| { e.begin_intmap()?; e.string("x") }), Custom);
    assert_eq!(misuse(|e| { e.begin_array()?; e.key("a") }), Custom);
    assert_eq!(misuse(|e| { e.begin_array()?; e.end()?; e.end() }), Custom);
    assert_eq!(misuse(|e| { e.begin_object()?; e.key("a")?; e.int(1)?; e.key("a")?; e.int(2) }), DuplicateKey);
    assert_eq!(misuse(|e| { e.begin_intmap()?; e.int_key(1)?; e.int(1)?; e.int_key(1)?; e.begin_array()?; e.end() }), DuplicateKey);
    assert_eq!(misuse(|e| { for _ in 0..5 { e.begin_array()?; } Ok(()) }), DepthLimit);
    assert_eq!(misuse(|e| e.typed(ElementType::F64, &[2], &[0; 8], None)), LimitExceeded);
    assert_eq!(misuse(|e| e.typed(ElementType::F64, &[], &[], None)), LimitExceeded);
    assert_eq!(misuse(|e| e.typed(ElementType::U8, &[usize::MAX, 2], &[], None)), LimitExceeded);
    assert_eq!(misuse(|e| e.typed(ElementType::I64, &[1], &[0; 8], Some(&[true]))), LimitExceeded);
    assert_eq!(misuse(|e| e.typed(ElementType::F64, &[1], &1.5f64.to_le_bytes(), Some(&[true]))), LimitExceeded);
    assert_eq!(misuse(|e| e.typed(ElementType::Bool, &[1], &[2], None)), Custom);
    // Depth exactly at the limit is fine.
    let mut e = Encoder::new(2);
    e.begin_array().unwrap();
    e.begin_array().unwrap();
    assert_eq!(e.depth(), 2);
    e.end().unwrap();
    e.end().unwrap();
    assert_eq!(leafwire::decode(&e.finish().unwrap()).unwrap(), Value::Array(vec![Value::Array(vec![])]));
}


proptest! {
    #[test]
    fn arbitrary_values_match_encode(v in value()) {
        prop_assert_eq!(streamed(&v), leafwire::encode(&v).unwrap());
    }
}

#[test]
fn interned_keys() {
    let v = Value::Array(vec![obj(vec![("a", Value::Int(1)), ("b", Value::Int(2))]), obj(vec![("b", Value::Int(3)), ("a", Value::Null)])]);
    let mut e = Encoder::new(8);
    let (a, b) = (e.intern("a"), e.intern("b"));
    e.begin_array().unwrap();
    e.begin_object().unwrap();
    e.key_interned(a).unwrap();
    e.int(1).unwrap();
    e.key("b").unwrap();
    e.int(2).unwrap();
    e.end().unwrap();
    e.begin_object().unwrap();
    e.key_interned(b).unwrap();
    e.int(3).unwrap();
    e.key_interned(a).unwrap();
    e.null().unwrap();
    e.end().unwrap();
    e.end().unwrap();
    assert_eq!(e.finish().unwrap(), leafwire::encode(&v).unwrap());
    // Interned keys follow the rules of `key`; an id of another encoder beyond this one's
    // keys is refused.
    let mut big = Encoder::new(8);
    let foreign = (0..10).map(|i| big.intern(&i.to_string())).last().unwrap();
    assert_eq!(misuse(|e| { let k = e.intern("a"); e.key_interned(k) }), Category::Custom);
    assert_eq!(misuse(|e| { let k = e.intern("a"); e.begin_object()?; e.key_interned(k)?; e.int(1)?; e.key_interned(k)?; e.int(2) }), Category::DuplicateKey);
    assert_eq!(misuse(|e| { e.begin_object()?; e.key_interned(foreign) }), Category::Custom);
}

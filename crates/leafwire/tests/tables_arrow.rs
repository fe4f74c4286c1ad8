//! Tables as Arrow record batches (the `arrow` feature): types, nulls, and buffers that are
//! the table's own memory.
#![cfg(feature = "arrow")]

use leafwire::arrow_array::{
    Array, BooleanArray, Date32Array, Float64Array, Int64Array, StringArray, TimestampMillisecondArray,
};
use leafwire::arrow_schema::{DataType, TimeUnit};
use leafwire::{ColumnBuilder, ElementType, TableBuilder, Unit};

#[test]
fn columns_become_arrow_arrays_over_the_same_memory() {
    let mut t = TableBuilder::new();
    t.push_column(ColumnBuilder::from_slice("id", &[1i64, 2, 3]));
    let mut x = ColumnBuilder::numbers("x", ElementType::F64);
    x.push(0.5f64).unwrap();
    x.push_null();
    x.push(2.0f64).unwrap();
    t.push_column(x);
    let mut s = ColumnBuilder::strings("s");
    s.push_str("a").unwrap();
    s.push_str("héllo").unwrap();
    s.push_null();
    t.push_column(s);
    t.push_column(ColumnBuilder::from_slice("d", &[0i32, 1, 2]).with_unit(Unit::Date, "").unwrap());
    t.push_column(ColumnBuilder::from_slice("at", &[0i64, 1000, 2000]).with_unit(Unit::Millis, "UTC").unwrap());
    let mut b = ColumnBuilder::numbers("b", ElementType::Bool);
    for v in [1u8, 0, 1] {
        b.push_number_bytes(&[v]).unwrap();
    }
    t.push_column(b);
    let table = t.finish().unwrap();
    let body = table.body().as_ptr_range();
    let batch = table.into_record_batch().unwrap();
    assert_eq!(batch.num_rows(), 3);
    let id = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(id.values().as_ref(), &[1, 2, 3]);
    // Zero-copy: the values are the table body's bytes.
    assert!(body.contains(&(id.values().as_ptr() as *const u8)));
    let x = batch.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!((x.null_count(), x.is_null(1), x.value(2)), (1, true, 2.0));
    let s = batch.column(2).as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!((s.value(1), s.is_null(2)), ("héllo", true));
    assert!(body.contains(&s.value_data().as_ptr()));
    assert_eq!(batch.column(3).as_any().downcast_ref::<Date32Array>().unwrap().value(2), 2);
    let at = batch.column(4).as_any().downcast_ref::<TimestampMillisecondArray>().unwrap();
    assert_eq!(at.data_type(), &DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())));
    assert_eq!(at.value(1), 1000);
    let b = batch.column(5).as_any().downcast_ref::<BooleanArray>().unwrap();
    assert_eq!((b.value(0), b.value(1)), (true, false));
    assert!(batch.schema().field(1).is_nullable() && !batch.schema().field(0).is_nullable());
}

#[test]
fn a_documents_table_converts_through_a_copy_of_its_body() {
    let mut t = TableBuilder::new();
    t.push_column(ColumnBuilder::from_slice("v", &[1.5f64, 2.5]));
    let bytes = leafwire::encode(&leafwire::Value::Table(t.finish().unwrap())).unwrap();
    let doc = leafwire::Document::open(&bytes).unwrap();
    let batch = doc.root().table().unwrap().to_record_batch().unwrap();
    assert_eq!(batch.column(0).as_any().downcast_ref::<Float64Array>().unwrap().values().as_ref(), &[1.5, 2.5]);
}

//! Tables (spec §15): built, encoded inside a tree, read in place, validated, decoded,
//! recoded and written as JSON.

use leafwire::{
    decode, encode, validate, ColumnBuilder, ColumnType, Document, ElementType, Table, TableBuilder, Unit, Value,
};

fn sample() -> Table {
    let mut t = TableBuilder::new();
    t.push_column(ColumnBuilder::from_slice("id", &[1i64, 2, 3, 4, 5]));
    let mut price = ColumnBuilder::numbers("price", ElementType::F64);
    for v in [Some(1.5), None, Some(-2.25), Some(0.0), None] {
        match v {
            Some(v) => price.push(v).unwrap(),
            None => price.push_null(),
        }
    }
    t.push_column(price);
    let mut name = ColumnBuilder::strings("name");
    for v in [Some("a"), Some("héllo"), None, Some(""), Some("last")] {
        match v {
            Some(v) => name.push_str(v).unwrap(),
            None => name.push_null(),
        }
    }
    t.push_column(name);
    let day = ColumnBuilder::from_slice("day", &[0i32, 1, 365, -1, 19_000]).with_unit(Unit::Date, "").unwrap();
    t.push_column(day);
    let at =
        ColumnBuilder::from_slice("at", &[0i64, 1_381_323_977, 86_399, -1, 1]).with_unit(Unit::Seconds, "UTC").unwrap();
    t.push_column(at);
    t.finish().unwrap()
}

fn document() -> Vec<u8> {
    let mut root = leafwire::Map::default();
    root.insert("name".into(), Value::String("sample".into()));
    root.insert("data".into(), Value::Table(sample()));
    encode(&Value::Object(root)).unwrap()
}

#[test]
fn reads_columns_in_place() {
    let bytes = leafwire::AlignedBytes::new(&document());
    let doc = Document::open(&bytes).unwrap();
    let t = doc.pointer("/data").unwrap().table().unwrap();
    assert_eq!((t.rows(), t.column_count()), (5, 5));
    let id = t.get("id").unwrap();
    assert_eq!(id.as_slice::<i64>().unwrap(), &[1, 2, 3, 4, 5]);
    // Zero-copy: the slice points into the document's bytes.
    let range = bytes.as_ptr_range();
    assert!(range.contains(&(id.as_slice::<i64>().unwrap().as_ptr() as *const u8)));
    let price = t.get("price").unwrap();
    assert_eq!(price.null_count(), 2);
    assert_eq!(price.cell(1).unwrap(), Value::Null);
    assert_eq!(price.cell(2).unwrap(), Value::F64(-2.25));
    let name = t.get("name").unwrap();
    assert_eq!(name.column_type(), ColumnType::Strings { large: false });
    assert_eq!(name.str(1).unwrap(), Some("héllo"));
    assert_eq!(name.str(2).unwrap(), None);
    assert_eq!(name.str(3).unwrap(), Some(""));
    assert!(name.str(5).is_err());
    assert_eq!(t.get("at").unwrap().zone().unwrap(), "UTC");
    assert!(t.get("nope").is_err());
}

#[test]
fn validates_decodes_and_recodes() {
    let bytes = document();
    let stats = validate(&bytes).unwrap();
    assert_eq!(stats.tables, 1);
    let value = decode(&bytes).unwrap();
    assert_eq!(
        value,
        Value::Object(
            [("name".to_string(), Value::String("sample".into())), ("data".to_string(), Value::Table(sample()))]
                .into_iter()
                .collect()
        )
    );
    // encode(decode(x)) == x: placement is fixed, so the table is copied as it is.
    assert_eq!(encode(&value).unwrap(), bytes);
    let mut recoded = Vec::new();
    leafwire::recode_to_writer(&Document::open(&bytes).unwrap(), 128, &mut recoded, 1 << 20, &mut |_| {}).unwrap();
    assert_eq!(recoded, bytes);
}

#[test]
fn json_shows_cells_and_times() {
    let bytes = document();
    let json = leafwire::json::to_json(&bytes).unwrap();
    assert_eq!(
        json,
        r#"{"name":"sample","data":{"id":[1,2,3,4,5],"price":[1.5,null,-2.25,0.0,null],"name":["a","héllo",null,"","last"],"day":["1970-01-01","1970-01-02","1971-01-01","1969-12-31","2022-01-08"],"at":["1970-01-01T00:00:00Z","2013-10-09T13:06:17Z","1970-01-01T23:59:59Z","1969-12-31T23:59:59Z","1970-01-01T00:00:01Z"]}}"#
    );
}

#[test]
fn builder_refuses_ragged_and_duplicate_columns() {
    let mut t = TableBuilder::new();
    t.push_column(ColumnBuilder::from_slice("a", &[1i32, 2]));
    t.push_column(ColumnBuilder::from_slice("b", &[1i32]));
    assert!(t.finish().is_err());
    let mut t = TableBuilder::new();
    t.push_column(ColumnBuilder::from_slice("a", &[1i32]));
    t.push_column(ColumnBuilder::from_slice("a", &[1i32]));
    assert!(t.finish().is_err());
    assert!(ColumnBuilder::from_slice("d", &[1i64]).with_unit(Unit::Date, "").is_err());
    assert!(ColumnBuilder::from_slice("d", &[1i32]).with_unit(Unit::Date, "UTC").is_err());
}

#[test]
fn every_corrupted_byte_of_a_table_is_an_error_or_still_valid() {
    // Flip each byte of the table block: validation either accepts (a cell's value
    // changed) or reports a typed error; reading never panics.
    let bytes = document();
    let doc = Document::open(&bytes).unwrap();
    let range = doc.pointer("/data").unwrap().block_range().unwrap().unwrap();
    let mut rejected = 0;
    for i in range.start as usize..range.end as usize {
        let mut b = bytes.clone();
        b[i] ^= 0xA5;
        match validate(&b) {
            Ok(_) => {
                decode(&b).unwrap();
                leafwire::json::to_json(&b).ok();
            }
            Err(_) => rejected += 1,
        }
        if let Ok(d) = Document::open(&b) {
            if let Ok(t) = d.pointer("/data").and_then(|n| n.table()) {
                for c in t.columns().flatten() {
                    for r in 0..c.len().min(8) {
                        let _ = c.cell(r);
                    }
                }
            }
        }
    }
    assert!(rejected > 100, "only {rejected} corruptions were rejected");
}

#[test]
fn days_and_civil_dates_agree() {
    for days in [-800_000i64, -1, 0, 1, 59, 365, 10_957, 19_000, 2_932_896] {
        let (y, m, d) = leafwire::table::civil_from_days(days);
        assert_eq!(leafwire::table::days_from_civil(y, m, d), Some(days));
    }
    assert_eq!(leafwire::table::days_from_civil(2023, 2, 29), None);
    assert_eq!(leafwire::table::days_from_civil(2024, 2, 29), Some(19_782));
}

#[test]
fn cells_are_edited_in_place_and_tables_replaced() {
    use leafwire::{Editor, Number};
    let mut ed = Editor::new(document()).unwrap();
    let len = ed.as_bytes().len();
    ed.set_cell("/data", "id", 2, Some(Number::Int(-40))).unwrap();
    ed.set_cell("/data", "price", 1, Some(Number::Float(9.5))).unwrap();
    ed.set_cell("/data", "price", 0, None).unwrap();
    ed.set_cell("/data", "day", 4, Some(Number::Int(20_000))).unwrap();
    // In place: the document did not grow.
    assert_eq!(ed.as_bytes().len(), len);
    validate(ed.as_bytes()).unwrap();
    let doc = ed.document().unwrap();
    let t = doc.pointer("/data").unwrap().table().unwrap();
    assert_eq!(t.get("id").unwrap().as_slice::<i64>().unwrap(), &[1, 2, -40, 4, 5]);
    assert_eq!(t.get("price").unwrap().cell(0).unwrap(), Value::Null);
    assert_eq!(t.get("price").unwrap().cell(1).unwrap(), Value::F64(9.5));
    assert_eq!(t.get("day").unwrap().cell(4).unwrap(), Value::Int(20_000));
    // What cannot be done in place is refused with a typed error, and changes nothing.
    let before = ed.as_bytes().to_vec();
    assert!(ed.set_cell("/data", "name", 0, Some(Number::Int(1))).is_err());
    assert!(ed.set_cell("/data", "id", 0, None).is_err());
    assert!(ed.set_cell("/data", "id", 5, Some(Number::Int(1))).is_err());
    assert!(ed.set_cell("/data", "day", 0, Some(Number::Int(1 << 40))).is_err());
    assert!(ed.set_cell("/data", "nope", 0, Some(Number::Int(1))).is_err());
    assert!(ed.set_cell("/name", "id", 0, Some(Number::Int(1))).is_err());
    assert_eq!(ed.as_bytes(), &before[..]);
    // A new table replaces the old one, whose block becomes garbage.
    let mut small = TableBuilder::new();
    small.push_column(ColumnBuilder::from_slice("x", &[1.5f32]));
    let small = small.finish().unwrap();
    ed.set("/data", &Value::Table(small.clone())).unwrap();
    assert!(ed.garbage() > 0);
    validate(ed.as_bytes()).unwrap();
    assert_eq!(
        decode(ed.as_bytes()).unwrap(),
        Value::Object(
            [("name".to_string(), Value::String("sample".into())), ("data".to_string(), Value::Table(small))]
                .into_iter()
                .collect()
        )
    );
    ed.compact().unwrap();
    validate(ed.as_bytes()).unwrap();
}

mod generated {
    use leafwire::{decode, encode, validate, ColumnBuilder, ElementType, TableBuilder, Value};
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Col {
        Ints(Vec<Option<i32>>),
        Floats(Vec<Option<f64>>),
        Strings(Vec<Option<String>>),
    }

    fn column(rows: usize) -> impl Strategy<Value = Col> {
        prop_oneof![
            prop::collection::vec(prop::option::weighted(0.8, any::<i32>()), rows).prop_map(Col::Ints),
            prop::collection::vec(prop::option::weighted(0.8, any::<f64>()), rows).prop_map(Col::Floats),
            prop::collection::vec(prop::option::weighted(0.8, ".{0,12}"), rows).prop_map(Col::Strings),
        ]
    }

    fn table() -> impl Strategy<Value = Vec<Col>> {
        (0usize..40).prop_flat_map(|rows| prop::collection::vec(column(rows), 0..6))
    }

    proptest! {
        #[test]
        fn tables_round_trip_and_validate(cols in table()) {
            let mut t = TableBuilder::new();
            for (i, c) in cols.iter().enumerate() {
                let name = format!("c{i}");
                let mut b = match c {
                    Col::Ints(_) => ColumnBuilder::numbers(name, ElementType::I32),
                    Col::Floats(_) => ColumnBuilder::numbers(name, ElementType::F64),
                    Col::Strings(_) => ColumnBuilder::strings(name),
                };
                match c {
                    Col::Ints(v) => v.iter().for_each(|x| match x { Some(x) => b.push(*x).unwrap(), None => b.push_null() }),
                    Col::Floats(v) => v.iter().for_each(|x| match x { Some(x) => b.push(*x).unwrap(), None => b.push_null() }),
                    Col::Strings(v) => v.iter().for_each(|x| match x { Some(x) => b.push_str(x).unwrap(), None => b.push_null() }),
                }
                t.push_column(b);
            }
            let table = t.finish().unwrap();
            let value = Value::Array(vec![Value::Int(1), Value::Table(table.clone())]);
            let bytes = encode(&value).unwrap();
            validate(&bytes).unwrap();
            prop_assert_eq!(decode(&bytes).unwrap(), value);
            let view = table.view();
            for (c, col) in cols.iter().zip(view.columns()) {
                let col = col.unwrap();
                for r in 0..col.len() {
                    let cell = col.cell(r).unwrap();
                    let expected = match c {
                        Col::Ints(v) => v[r].map_or(Value::Null, |x| Value::Int(x as i64)),
                        Col::Floats(v) => v[r].map_or(Value::Null, Value::F64),
                        Col::Strings(v) => v[r].clone().map_or(Value::Null, Value::String),
                    };
                    match (&cell, &expected) {
                        (Value::F64(a), Value::F64(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
                        _ => prop_assert_eq!(cell, expected),
                    }
                }
            }
        }
    }
}

#[test]
fn serde_reads_a_table_as_a_map_of_columns() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Columns<'a> {
        id: Vec<i64>,
        price: Vec<Option<f64>>,
        #[serde(borrow)]
        name: Vec<Option<&'a str>>,
        day: Vec<i32>,
    }
    #[derive(serde::Deserialize)]
    struct Doc<'a> {
        #[serde(borrow)]
        data: Columns<'a>,
    }
    let bytes = document();
    let doc: Doc<'_> = leafwire::from_slice(&bytes).unwrap();
    assert_eq!(doc.data.id, [1, 2, 3, 4, 5]);
    assert_eq!(doc.data.price, [Some(1.5), None, Some(-2.25), Some(0.0), None]);
    assert_eq!(doc.data.name, [Some("a"), Some("héllo"), None, Some(""), Some("last")]);
    assert_eq!(doc.data.day, [0, 1, 365, -1, 19_000]);
    // As a `Value`, the table is the object of columns that spec §15.2 makes of it.
    let value: Value = leafwire::from_slice(&bytes).unwrap();
    let Value::Object(root) = value else { panic!("an object") };
    assert_eq!(root["data"], sample().view().to_value().unwrap());
}

#[test]
fn pointers_reach_columns_and_cells() {
    let bytes = leafwire::AlignedBytes::new(&document());
    let doc = Document::open(&bytes).unwrap();
    assert_eq!(doc.pointer_value("/data/name/1").unwrap(), Value::String("héllo".into()));
    assert_eq!(doc.pointer_value("/data/price/1").unwrap(), Value::Null);
    assert_eq!(doc.pointer_value("/data/price/2").unwrap(), Value::F64(-2.25));
    assert_eq!(doc.pointer_value("/data/day/2").unwrap(), Value::Int(365));
    let id = doc.pointer_value("/data/id").unwrap();
    assert_eq!(id, Value::Array((1..=5).map(Value::Int).collect()));
    assert!(matches!(doc.pointer_value("/data").unwrap(), Value::Table(_)));
    let part = doc.pointer_in_table("/data/day/2").unwrap().unwrap();
    let (day, row) = (part.column, part.row);
    assert_eq!((day.name().unwrap(), row, part.table.offset()), ("day", Some(2), doc.pointer("/data").unwrap().offset()));
    assert_eq!(leafwire::json::table_part_to_json(&day, row).unwrap(), "\"1971-01-01\"");
    assert_eq!(leafwire::json::table_part_to_json(&day, None).unwrap(), r#"["1970-01-01","1970-01-02","1971-01-01","1969-12-31","2022-01-08"]"#);
    assert!(doc.pointer_in_table("/data").unwrap().is_none() && doc.pointer_in_table("/name").unwrap().is_none());
    for (pointer, says) in [
        ("/data/nope", "no column"),
        ("/data/id/5", "past the table"),
        ("/data/id/x", "not an array index"),
        ("/data/id/0/more", "cannot step into"),
    ] {
        let e = doc.pointer_value(pointer).unwrap_err();
        assert_eq!(e.category(), leafwire::Category::NotFound, "{pointer}: {e}");
        assert!(e.to_string().contains(says) && e.to_string().contains(pointer), "{pointer}: {e}");
    }
}

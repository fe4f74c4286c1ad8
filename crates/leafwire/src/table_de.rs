//! A table through serde (spec §15.2): a map from each column's name to the sequence of its
//! cells, read in place (strings borrowed from the document; missing cells are unit, so
//! `Option` fields and `Value`'s null take them).

use serde::de::{self, value::BorrowedStrDeserializer, DeserializeSeed, Visitor};
use serde::forward_to_deserialize_any;

use crate::error::{Error, Result};
use crate::table::{ColumnRef, ColumnType, TableRef};
use crate::value::Value;

/// Hands the table to `visitor` as a map of columns.
pub(crate) fn visit_table<'de, V: Visitor<'de>>(table: TableRef<'de>, visitor: V) -> Result<V::Value> {
    visitor.visit_map(Columns { table, next: 0, column: None })
}

struct Columns<'de> {
    table: TableRef<'de>,
    next: usize,
    column: Option<ColumnRef<'de>>,
}

impl<'de> de::MapAccess<'de> for Columns<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.next >= self.table.column_count() {
            return Ok(None);
        }
        let column = self.table.column(self.next)?;
        self.next += 1;
        let name = column.name()?;
        self.column = Some(column);
        seed.deserialize(BorrowedStrDeserializer::<Error>::new(name)).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value> {
        let column =
            self.column.take().ok_or_else(|| <Error as de::Error>::custom("a column's value asked before its name"))?;
        seed.deserialize(Column(column))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.table.column_count() - self.next)
    }
}

/// One column: a sequence of cells.
struct Column<'de>(ColumnRef<'de>);

impl<'de> de::Deserializer<'de> for Column<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_seq(Cells { column: self.0, next: 0 })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct Cells<'de> {
    column: ColumnRef<'de>,
    next: usize,
}

impl<'de> de::SeqAccess<'de> for Cells<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.next >= self.column.len() {
            return Ok(None);
        }
        let row = self.next;
        self.next += 1;
        seed.deserialize(Cell { column: &self.column, row }).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.column.len() - self.next)
    }
}

/// One cell: unit when missing, else its number or string.
struct Cell<'c, 'de> {
    column: &'c ColumnRef<'de>,
    row: usize,
}

impl<'de> de::Deserializer<'de> for Cell<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if !self.column.is_valid(self.row) {
            return visitor.visit_unit();
        }
        if let ColumnType::Strings { .. } = self.column.column_type() {
            return visitor.visit_borrowed_str(self.column.str(self.row)?.unwrap_or_default());
        }
        match self.column.cell(self.row)? {
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Int(v) => visitor.visit_i64(v),
            Value::UInt(v) => visitor.visit_u64(v),
            Value::F64(v) => visitor.visit_f64(v),
            Value::F32(v) => visitor.visit_f32(v),
            _ => visitor.visit_unit(),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.column.is_valid(self.row) {
            visitor.visit_some(self)
        } else {
            visitor.visit_none()
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

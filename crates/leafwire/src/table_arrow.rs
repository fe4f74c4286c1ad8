//! Tables as Arrow record batches (the `arrow` feature). A table's columns are laid out
//! as Arrow lays out arrays (spec §15.1), so the batch's buffers are the table's own
//! memory: no value is copied except bool columns, which Arrow stores as bits.

use std::ptr::NonNull;
use std::sync::Arc;

use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    ArrayRef, BooleanArray, LargeStringArray, PrimitiveArray, RecordBatch, RecordBatchOptions, StringArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{Field, Schema};

use crate::error::{Category, Error, Result};
use crate::format::ElementType;
use crate::table::{ColumnRef, ColumnType, Table, TableRef, Unit};

fn arrow_error(e: arrow_schema::ArrowError) -> Error {
    Error::new(Category::Malformed, format!("Arrow refused a table column: {e}"))
}

impl Table {
    /// The table as a record batch whose buffers are this table's memory (it moves into
    /// the batch and lives as long as any of its arrays).
    pub fn into_record_batch(self) -> Result<RecordBatch> {
        let owner = Arc::new(self);
        let view = owner.view();
        let base = owner.body().as_ptr();
        // A buffer over `bytes` (a part of the body) that keeps the whole table alive.
        let share = |bytes: &[u8]| -> Buffer {
            let ptr = NonNull::new(bytes.as_ptr() as *mut u8).unwrap_or(NonNull::dangling());
            debug_assert!(
                bytes.is_empty()
                    || (bytes.as_ptr() >= base
                        && bytes.as_ptr() as usize + bytes.len() <= base as usize + owner.body().len())
            );
            // SAFETY: `bytes` lies in the table's body, which `owner` owns and never
            // changes; the buffer holds an `Arc` of it.
            unsafe { Buffer::from_custom_allocation(ptr, bytes.len(), owner.clone()) }
        };
        let mut fields = Vec::with_capacity(view.column_count());
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(view.column_count());
        for column in view.columns() {
            let column = column?;
            let nulls = column.validity().map(|bits| NullBuffer::new(BooleanBuffer::new(share(bits), 0, column.len())));
            let array = column_array(&column, nulls, &share)?;
            fields.push(Field::new(column.name()?, array.data_type().clone(), column.validity().is_some()));
            arrays.push(array);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(view.rows()));
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options).map_err(arrow_error)
    }
}

impl TableRef<'_> {
    /// The table as a record batch; its body is copied once (a borrowed document cannot
    /// lend Arrow its memory), the columns are not converted.
    pub fn to_record_batch(&self) -> Result<RecordBatch> {
        self.to_table()?.into_record_batch()
    }
}

fn primitive<T: ArrowPrimitiveType>(
    column: &ColumnRef<'_>,
    nulls: Option<NullBuffer>,
    share: &dyn Fn(&[u8]) -> Buffer,
) -> Result<PrimitiveArray<T>> {
    PrimitiveArray::<T>::try_new(ScalarBuffer::new(share(column.data()), 0, column.len()), nulls).map_err(arrow_error)
}

fn column_array(
    column: &ColumnRef<'_>,
    nulls: Option<NullBuffer>,
    share: &dyn Fn(&[u8]) -> Buffer,
) -> Result<ArrayRef> {
    let zone = column.zone()?;
    let zone = (!zone.is_empty()).then(|| Arc::<str>::from(zone));
    Ok(match (column.column_type(), column.unit()) {
        (ColumnType::Strings { large: false }, _) => {
            // u32 offsets under 2^31 read as Arrow's i32 ones; larger ones widen.
            let offsets: &[u32] = bytemuck::cast_slice(column.data());
            if offsets.last().is_some_and(|&o| o > i32::MAX as u32) {
                let wide: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
                let values = share(column.string_data());
                Arc::new(
                    LargeStringArray::try_new(OffsetBuffer::new(ScalarBuffer::from(wide)), values, nulls)
                        .map_err(arrow_error)?,
                )
            } else {
                let offsets = OffsetBuffer::new(ScalarBuffer::<i32>::new(share(column.data()), 0, column.len() + 1));
                Arc::new(StringArray::try_new(offsets, share(column.string_data()), nulls).map_err(arrow_error)?)
            }
        }
        (ColumnType::Strings { large: true }, _) => {
            let offsets = OffsetBuffer::new(ScalarBuffer::<i64>::new(share(column.data()), 0, column.len() + 1));
            Arc::new(LargeStringArray::try_new(offsets, share(column.string_data()), nulls).map_err(arrow_error)?)
        }
        (ColumnType::Numbers(_), Unit::Date) => Arc::new(primitive::<Date32Type>(column, nulls, share)?),
        (ColumnType::Numbers(_), Unit::Seconds) => {
            Arc::new(primitive::<TimestampSecondType>(column, nulls, share)?.with_timezone_opt(zone))
        }
        (ColumnType::Numbers(_), Unit::Millis) => {
            Arc::new(primitive::<TimestampMillisecondType>(column, nulls, share)?.with_timezone_opt(zone))
        }
        (ColumnType::Numbers(_), Unit::Micros) => {
            Arc::new(primitive::<TimestampMicrosecondType>(column, nulls, share)?.with_timezone_opt(zone))
        }
        (ColumnType::Numbers(_), Unit::Nanos) => {
            Arc::new(primitive::<TimestampNanosecondType>(column, nulls, share)?.with_timezone_opt(zone))
        }
        (ColumnType::Numbers(element), Unit::Plain) => match element {
            // Arrow's booleans are bits: the one column type that is converted.
            ElementType::Bool => Arc::new(BooleanArray::new(column.data().iter().map(|&b| b != 0).collect(), nulls)),
            ElementType::I8 => Arc::new(primitive::<Int8Type>(column, nulls, share)?),
            ElementType::I16 => Arc::new(primitive::<Int16Type>(column, nulls, share)?),
            ElementType::I32 => Arc::new(primitive::<Int32Type>(column, nulls, share)?),
            ElementType::I64 => Arc::new(primitive::<Int64Type>(column, nulls, share)?),
            ElementType::U8 => Arc::new(primitive::<UInt8Type>(column, nulls, share)?),
            ElementType::U16 => Arc::new(primitive::<UInt16Type>(column, nulls, share)?),
            ElementType::U32 => Arc::new(primitive::<UInt32Type>(column, nulls, share)?),
            ElementType::U64 => Arc::new(primitive::<UInt64Type>(column, nulls, share)?),
            ElementType::F32 => Arc::new(primitive::<Float32Type>(column, nulls, share)?),
            ElementType::F64 => Arc::new(primitive::<Float64Type>(column, nulls, share)?),
        },
    })
}

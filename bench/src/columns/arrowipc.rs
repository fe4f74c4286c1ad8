//! Arrow IPC file: 100 Float64 columns in record batches of 64 Ki rows, the
//! metadata tree as JSON in the schema's metadata. The reader maps the file
//! and decodes only the wanted columns' batches zero-copy (FileDecoder).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::convert::try_fb_to_schema;
use arrow_ipc::reader::{read_footer_length, FileDecoder};
use arrow_ipc::root_as_footer;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{DataType, Field, Schema};

use super::peer::{create, finish, map, ColumnsPeer};
use super::table::{column_name, fold_where, Query, Table, COLUMNS, PREDICATE, VALUE};
use crate::harness::Fail;

pub struct ArrowIpc;

const BATCH_ROWS: usize = 1 << 16;

fn err(e: impl std::fmt::Display) -> Fail {
    Fail::error(e)
}

impl ColumnsPeer for ArrowIpc {
    const NAME: &'static str = "arrow-ipc";
    const API: &'static str = "mmap -> Buffer (zero-copy), FileDecoder::with_projection, read_record_batch per block";
    const NOTE: &'static str = "metadata tree stored as JSON text in the schema metadata";
    const EXT: &'static str = "arrow";

    fn write(t: &Table, path: &Path) -> Result<(), Fail> {
        let meta = serde_json::to_string(&t.meta).map_err(err)?;
        let fields: Vec<Field> = (0..COLUMNS).map(|i| Field::new(column_name(i), DataType::Float64, false)).collect();
        let schema = Arc::new(Schema::new_with_metadata(fields, HashMap::from([("meta".to_string(), meta)])));
        let mut w = create(path)?;
        let mut writer = FileWriter::try_new(&mut w, &schema).map_err(err)?;
        let rows = t.columns[0].len();
        for start in (0..rows).step_by(BATCH_ROWS) {
            let end = (start + BATCH_ROWS).min(rows);
            let arrays: Vec<ArrayRef> =
                t.columns.iter().map(|c| Arc::new(Float64Array::from(c[start..end].to_vec())) as ArrayRef).collect();
            writer.write(&RecordBatch::try_new(schema.clone(), arrays).map_err(err)?).map_err(err)?;
        }
        writer.finish().map_err(err)?;
        drop(writer);
        finish(w)
    }

    fn query(path: &Path, q: Query) -> Result<f64, Fail> {
        let buffer = Buffer::from(bytes::Bytes::from_owner(map(path)?));
        let trailer = buffer.len().checked_sub(10).ok_or_else(|| Fail::Error("file too short".into()))?;
        let footer_len = read_footer_length(buffer[trailer..].try_into().map_err(err)?).map_err(err)?;
        let footer = root_as_footer(&buffer[trailer - footer_len..trailer]).map_err(err)?;
        let schema =
            Arc::new(try_fb_to_schema(footer.schema().ok_or_else(|| Fail::Error("no schema".into()))?).map_err(err)?);
        let value_idx = schema.index_of(VALUE).map_err(err)?;
        let pred_idx = schema.index_of(PREDICATE).map_err(err)?;
        let projection = if q.below.is_some() { vec![value_idx, pred_idx] } else { vec![value_idx] };
        let decoder = FileDecoder::new(schema, footer.version()).with_projection(projection);
        let mut total = 0.0;
        for block in footer.recordBatches().into_iter().flatten() {
            let len = block.bodyLength() as usize + block.metaDataLength() as usize;
            let data = buffer.slice_with_length(block.offset() as usize, len);
            let batch = decoder
                .read_record_batch(block, &data)
                .map_err(err)?
                .ok_or_else(|| Fail::Error("empty block".into()))?;
            let column = |name: &str| -> Result<&[f64], Fail> {
                let c = batch.column_by_name(name).ok_or_else(|| Fail::Error(format!("no column {name}")))?;
                Ok(c.as_primitive_opt::<Float64Type>().ok_or_else(|| Fail::Error("not Float64".into()))?.values())
            };
            let value = column(VALUE)?.iter().copied();
            // Continue the one in-order fold across batches.
            total = match q.below {
                Some(_) => fold_where(total, value.zip(column(PREDICATE)?.iter().copied()), q),
                None => fold_where(total, value.map(|v| (v, 0.0)), q),
            };
        }
        Ok(total)
    }
}

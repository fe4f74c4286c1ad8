//! Arrow IPC stream format, as people use it for a stream of messages: one
//! `RecordBatch` with one non-null Float64 column per message, through `StreamWriter`
//! (schema once, then a metadata flatbuffer and a body per batch, end marker at finish);
//! `StreamReader` reads them back. The per-batch metadata makes small messages costly:
//! that is the format, not the harness.

use std::io::{BufReader, BufWriter};
use std::sync::{Arc, OnceLock};

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{Float64Array, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::peer::{io_err, Received, Sink, Source, StreamPeer, BUFFER};
use crate::harness::Fail;

fn schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA.get_or_init(|| Arc::new(Schema::new(vec![Field::new("v", DataType::Float64, false)]))).clone()
}

pub struct ArrowIpc;

impl StreamPeer for ArrowIpc {
    const NAME: &'static str = "arrow-ipc";
    const API: &'static str =
        "writer::StreamWriter::write(&RecordBatch) / reader::StreamReader (one batch per message)";
    const NOTE: &'static str = "one Float64 column per batch; the batches are built outside the clock";
    type Item = Vec<f64>;
    type Msg = RecordBatch;
    type Writer = StreamWriter<BufWriter<Sink>>;

    fn message(item: &Vec<f64>) -> RecordBatch {
        RecordBatch::try_new(schema(), vec![Arc::new(Float64Array::from(item.clone()))]).expect("one Float64 column")
    }

    fn start(sink: Sink) -> Result<Self::Writer, Fail> {
        StreamWriter::try_new(BufWriter::with_capacity(BUFFER, sink), &schema()).map_err(io_err)
    }

    fn write(w: &mut Self::Writer, msg: &RecordBatch) -> Result<(), Fail> {
        w.write(msg).map_err(io_err)
    }

    fn flush(w: &mut Self::Writer) -> Result<(), Fail> {
        w.flush().map_err(io_err)
    }

    /// The end-of-stream marker, then a flush.
    fn finish(mut w: Self::Writer) -> Result<(), Fail> {
        w.finish().map_err(io_err)
    }

    fn read(source: Source, count: u64, got: &mut Received<'_, Vec<f64>>) -> Result<(), Fail> {
        let mut r = StreamReader::try_new(BufReader::with_capacity(BUFFER, source), None).map_err(io_err)?;
        for _ in 0..count {
            let batch = r.next().ok_or_else(|| Fail::Error("stream ended early".into()))?.map_err(io_err)?;
            let column = batch.column(0).as_primitive_opt::<Float64Type>();
            let values = column.ok_or_else(|| Fail::Error("column 0 is not Float64".into()))?.values();
            got.take(values);
        }
        Ok(())
    }
}

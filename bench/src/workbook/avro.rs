//! apache-avro: schema schemas/workbook.avsc, schema-aware serde straight to
//! and from bytes (single datum, no container header). Avro maps only have
//! string keys, so integer-keyed maps are arrays of {k, v} records.

use std::sync::OnceLock;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::writer::datum::GenericDatumWriter;
use apache_avro::Schema;
use serde::{Deserialize, Serialize};

use super::model::{Page, Row, Workbook};
use super::peer::WorkbookPeer;
use crate::harness::Fail;

// Record names must match the schema's for schema-aware serde.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Workbook")]
pub struct AvroWorkbook {
    pages: Vec<AvroPage>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "Page")]
struct AvroPage {
    name: String,
    rows: Vec<AvroRow>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "Row")]
struct AvroRow {
    key: String,
    label: String,
    value: f64,
    values: Vec<f64>,
    weights: Vec<Weight>,
    series: Vec<Series>,
}

#[derive(Serialize, Deserialize)]
struct Weight {
    k: i32,
    v: f64,
}

#[derive(Serialize, Deserialize)]
struct Series {
    k: i32,
    v: Vec<f64>,
}

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        Schema::parse_str(include_str!("../../schemas/workbook.avsc")).expect("schemas/workbook.avsc parses")
    })
}

thread_local! {
    static WRITER: GenericDatumWriter<'static> =
        GenericDatumWriter::builder(schema()).build().expect("writer for the workbook schema");
    static READER: GenericDatumReader<'static> =
        GenericDatumReader::builder(schema()).build().expect("reader for the workbook schema");
}

pub struct Avro;

impl WorkbookPeer for Avro {
    const NAME: &'static str = "apache-avro";
    const API: &'static str =
        "GenericDatumWriter::write_ser_to_vec / GenericDatumReader::read_deser (schema-aware serde)";
    const NOTE: &'static str = "schema schemas/workbook.avsc; int-keyed maps as arrays of {k, v} records";
    type Native = AvroWorkbook;

    fn to_native(w: &Workbook) -> AvroWorkbook {
        let row = |r: &Row| AvroRow {
            key: r.key.clone(),
            label: r.label.clone(),
            value: r.value,
            values: r.values.clone(),
            weights: r.weights.iter().map(|(k, v)| Weight { k: *k, v: *v }).collect(),
            series: r.series.iter().map(|(k, v)| Series { k: *k, v: v.clone() }).collect(),
        };
        AvroWorkbook {
            pages: w
                .pages
                .iter()
                .map(|p| AvroPage { name: p.name.clone(), rows: p.rows.iter().map(row).collect() })
                .collect(),
        }
    }

    fn from_native(n: AvroWorkbook) -> Workbook {
        let row = |r: AvroRow| Row {
            key: r.key,
            label: r.label,
            value: r.value,
            values: r.values,
            weights: r.weights.into_iter().map(|w| (w.k, w.v)).collect(),
            series: r.series.into_iter().map(|s| (s.k, s.v)).collect(),
        };
        Workbook {
            pages: n
                .pages
                .into_iter()
                .map(|p| Page { name: p.name, rows: p.rows.into_iter().map(row).collect() })
                .collect(),
        }
    }

    fn encode(n: &AvroWorkbook) -> Result<Vec<u8>, Fail> {
        WRITER.with(|w| w.write_ser_to_vec(n)).map_err(Fail::error)
    }

    fn decode(bytes: &[u8]) -> Result<AvroWorkbook, Fail> {
        READER.with(|r| r.read_deser(&mut &bytes[..])).map_err(Fail::error)
    }
}

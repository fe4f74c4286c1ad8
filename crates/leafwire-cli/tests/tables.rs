//! `from-csv`, `pack` and `unpack` (spec §15.4), run as a process on temporary files:
//! generated CSVs of every type, the errors (with their lines and columns), and, when the
//! shared data is present, the REFIT data package and the shared CSVs round-tripped.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use leafwire::{ColumnType, Document, ElementType, Unit};

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn leafwire(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_leafwire"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run leafwire");
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn succeed(args: &[&str]) -> String {
    let run = leafwire(args);
    assert!(run.ok && run.stderr.is_empty(), "leafwire {args:?} failed: {}", run.stderr);
    run.stdout
}

/// Expects the failure contract: non-zero exit, empty stdout, one stderr line naming
/// every string in `mentions`.
fn fail(args: &[&str], mentions: &[&str]) -> String {
    let run = leafwire(args);
    assert!(!run.ok, "leafwire {args:?} succeeded");
    assert_eq!(run.stdout, "");
    assert!(run.stderr.starts_with("leafwire: ") && run.stderr.matches('\n').count() == 1, "{:?}", run.stderr);
    for m in mentions {
        assert!(run.stderr.contains(m), "leafwire {args:?}: stderr {:?} does not mention {m:?}", run.stderr);
    }
    run.stderr
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn read_csv(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_path(path).unwrap();
    r.records().map(|rec| rec.unwrap().iter().map(String::from).collect()).collect()
}

/// A date-time's text without the date/time separator's variants or a fraction's trailing zeros.
fn time_text(s: &str) -> String {
    let s = s.replacen(' ', "T", 1);
    match s.split_once('.') {
        Some((whole, frac)) if s.contains(':') => {
            let frac = frac.trim_end_matches('0');
            if frac.is_empty() {
                whole.to_owned()
            } else {
                format!("{whole}.{frac}")
            }
        }
        _ => s,
    }
}

/// Cells equal as text, as numbers (f64), as date-times, or as booleans in any case.
fn same_cell(a: &str, b: &str) -> bool {
    a == b
        || (a.contains(':') && time_text(a) == time_text(b))
        || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
        || (a.eq_ignore_ascii_case(b) && matches!(b.to_ascii_lowercase().as_str(), "true" | "false"))
}

fn assert_same_values(original: &Path, written: &Path) {
    let (a, b) = (read_csv(original), read_csv(written));
    assert_eq!(a.len(), b.len(), "{} rows vs {}", original.display(), written.display());
    for (i, (ra, rb)) in a.iter().zip(&b).enumerate() {
        assert_eq!(ra.len(), rb.len(), "record {i}");
        for (x, y) in ra.iter().zip(rb) {
            assert!(same_cell(x, y), "{}: record {i}: {x:?} came back as {y:?}", original.display());
        }
    }
}

fn schema_types(doc: &Path) -> Vec<(String, String)> {
    let json: serde_json::Value = serde_json::from_str(&succeed(&["get", s(doc), "/schema/fields"])).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_owned(), f["type"].as_str().unwrap().to_owned()))
        .collect()
}

const EVERY_TYPE: &str = "\
int,small,big,float,flag,day,at,zoned,spaced,text,mixed,empty\r
1,-5,9000000000,1.5,TRUE,2024-02-29,2024-01-01T00:00:00.5,2024-01-01T01:00:00+01:00,2024-01-01 10:20:30,\"a, b\",2024-01-01T00:00:00Z,\r
,100,-9000000000,-2e-3,false,1970-01-01,1969-12-31T23:59:59.125,2024-01-01T00:00:00Z,2024-01-02 00:00:00,\"two\nlines \"\"quoted\"\"\",2024-01-01T00:00:00,\r
3,0,0,7,True,,,,,héllo ✓ 日本,x,\r
4,1,1,.25,false,1900-03-01,2000-01-01T12:00:00,2000-01-01T12:00:00-05:30,1999-12-31 23:59:59,,y,\r
";

#[test]
fn from_csv_infers_every_type_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("every.csv");
    fs::write(&input, EVERY_TYPE).unwrap();
    let doc = dir.path().join("every.lw");
    succeed(&["from-csv", s(&input), "-o", s(&doc)]);
    succeed(&["validate", s(&doc)]);
    let types: Vec<(String, String)> = schema_types(&doc);
    let expect = [
        ("int", "integer"),
        ("small", "integer"),
        ("big", "integer"),
        ("float", "number"),
        ("flag", "boolean"),
        ("day", "date"),
        ("at", "datetime"),
        ("zoned", "datetime"),
        ("spaced", "datetime"),
        ("text", "string"),
        ("mixed", "string"),
        ("empty", "string"),
    ];
    assert_eq!(types, expect.map(|(a, b)| (a.to_owned(), b.to_owned())).to_vec());
    assert_eq!(succeed(&["get", s(&doc), "/name"]), "\"every\"\n");

    // The table's columns, read in place.
    let bytes = leafwire::AlignedBytes::new(&fs::read(&doc).unwrap());
    let d = Document::open(&bytes).unwrap();
    let t = d.pointer("/data").unwrap().table().unwrap();
    assert_eq!(t.rows(), 4);
    let int = t.get("int").unwrap();
    assert_eq!(int.column_type(), ColumnType::Numbers(ElementType::I8));
    assert_eq!(int.null_count(), 1);
    assert_eq!(t.get("small").unwrap().column_type(), ColumnType::Numbers(ElementType::I8));
    assert_eq!(t.get("big").unwrap().as_slice::<i64>().unwrap(), &[9_000_000_000, -9_000_000_000, 0, 1]);
    assert_eq!(t.get("float").unwrap().as_slice::<f64>().unwrap(), &[1.5, -2e-3, 7.0, 0.25]);
    assert_eq!(t.get("flag").unwrap().data(), &[1, 0, 1, 0]);
    let day = t.get("day").unwrap();
    assert_eq!(day.unit(), Unit::Date);
    assert_eq!(day.as_slice::<i32>().unwrap()[..2], [19_782, 0]);
    let at = t.get("at").unwrap();
    assert_eq!((at.unit(), at.zone().unwrap()), (Unit::Millis, ""));
    assert_eq!(at.as_slice::<i64>().unwrap()[1], -875);
    let zoned = t.get("zoned").unwrap();
    assert_eq!((zoned.unit(), zoned.zone().unwrap()), (Unit::Seconds, "UTC"));
    let z = zoned.as_slice::<i64>().unwrap();
    assert_eq!((z[0], z[1]), (1_704_067_200, 1_704_067_200));
    assert_eq!(z[3], 946_728_000 + 5 * 3600 + 1800);
    assert_eq!(t.get("text").unwrap().str(1).unwrap(), Some("two\nlines \"quoted\""));
    assert_eq!(t.get("text").unwrap().str(2).unwrap(), Some("héllo ✓ 日本"));
    assert_eq!(t.get("empty").unwrap().null_count(), 4);

    // Unpacked, every value is the original (the zoned column as UTC instants).
    let out = dir.path().join("out");
    succeed(&["unpack", s(&doc), "-d", s(&out)]);
    let written = out.join("every.csv");
    let (a, b) = (read_csv(&input), read_csv(&written));
    assert_eq!(a.len(), b.len());
    for (ra, rb) in a.iter().zip(&b) {
        for (i, (x, y)) in ra.iter().zip(rb).enumerate() {
            if i == 7 {
                continue;
            }
            assert!(same_cell(x, y), "{x:?} came back as {y:?}");
        }
    }
    let zoned: Vec<&str> = b.iter().map(|r| r[7].as_str()).collect();
    assert_eq!(zoned, ["zoned", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", "", "2000-01-01T17:30:00Z"]);
    // The spaced column has a format that writes it back as it was.
    assert_eq!(b[1][8], "2024-01-01 10:20:30");
    // And the round trip is stable: from-csv of the unpacked file gives the same table.
    let again = dir.path().join("again.lw");
    succeed(&["from-csv", s(&written), "-o", s(&again)]);
    let (x, y) = (succeed(&["to-json", s(&doc)]), succeed(&["to-json", s(&again)]));
    assert_eq!(x, y);
}

#[test]
fn ragged_rows_name_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("ragged.csv");
    fs::write(&input, "a,b\n1,2\n\"multi\nline\",3\n4,5,6\n").unwrap();
    let out = dir.path().join("ragged.lw");
    fail(&["from-csv", s(&input), "-o", s(&out)], &["ragged.csv", "line 5", "3 fields", "header has 2"]);
    assert!(!out.exists());
}

#[test]
fn typed_columns_report_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("typed.csv");
    fs::write(
        &input,
        "id,price,when\n1,2.5,2020-01-01 00:00:00\n2,NA,2020-01-02 00:00:00\n3,abc,2020-01-03 00:00:00\n",
    )
    .unwrap();
    let schema = dir.path().join("schema.json");
    fs::write(
        &schema,
        r#"{"fields": [{"name": "id", "type": "integer"}, {"name": "price", "type": "number"},
            {"name": "when", "type": "datetime", "format": "fmt:%Y-%m-%d %H:%M:%S"}], "missingValues": ["", "NA"]}"#,
    )
    .unwrap();
    let out = dir.path().join("typed.lw");
    fail(
        &["from-csv", s(&input), "-o", s(&out), "--schema", s(&schema)],
        &["typed.csv", "line 4 column 2 (price)", "\"abc\""],
    );
    assert!(!out.exists());
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2, "a temporary file was left behind");

    // Fixed, it converts; NA is missing, and the schema is kept as given.
    fs::write(&input, "id,price,when\n1,2.5,2020-01-01 00:00:00\n2,NA,2020-01-02 00:00:00\n").unwrap();
    succeed(&["from-csv", s(&input), "-o", s(&out), "--schema", s(&schema)]);
    let data: serde_json::Value = serde_json::from_str(&succeed(&["get", s(&out), "/data"])).unwrap();
    assert_eq!(data["price"], serde_json::json!([2.5, null]));
    assert_eq!(succeed(&["get", s(&out), "/schema/missingValues"]), "[\"\",\"NA\"]\n");
    let unpacked = dir.path().join("u");
    succeed(&["unpack", s(&out), "-d", s(&unpacked)]);
    // Missing cells are written as the first missing value, the date-times in their format.
    assert_eq!(
        fs::read_to_string(unpacked.join("typed.csv")).unwrap(),
        "id,price,when\n1,2.5,2020-01-01 00:00:00\n2,,2020-01-02 00:00:00\n"
    );

    // A date-time that does not match its format.
    fs::write(&input, "id,price,when\n1,2.5,2020-01-01T00:00:00\n").unwrap();
    fail(&["from-csv", s(&input), "-o", s(&out), "--schema", s(&schema)], &["line 2 column 3 (when)"]);
    // A header that is not the schema's.
    fs::write(&input, "id,cost,when\n").unwrap();
    fail(&["from-csv", s(&input), "-o", s(&out), "--schema", s(&schema)], &["line 1 column 2", "cost"]);
}

#[test]
fn invalid_utf8_is_reported_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.csv");
    fs::write(&input, b"a,b,c\n1,2,3\n4,\xff\xfe,6\n".as_slice()).unwrap();
    let out = dir.path().join("bad.lw");
    fail(&["from-csv", s(&input), "-o", s(&out)], &["bad.csv", "line 3 column 2 (b)", "UTF-8"]);
    assert!(!out.exists());
}

#[test]
fn packs_and_unpacks_a_generated_package() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    fs::create_dir_all(pkg.join("data/parts")).unwrap();
    fs::write(pkg.join("data/a.csv"), "id,name,when,ok\r\n1,x,01/02/2020 10:00,yes\r\n2,-,-,no\r\n").unwrap();
    fs::write(pkg.join("data/parts/1.csv"), "n,v\n1,0.5\n").unwrap();
    fs::write(pkg.join("data/parts/2.csv"), "n,v\n2,1e300\n3,\n").unwrap();
    fs::write(
        pkg.join("schema.json"),
        r#"{"fields": [{"name": "n", "type": "integer"}, {"name": "v", "type": "number"}]}"#,
    )
    .unwrap();
    fs::write(pkg.join("readme.txt"), "hello").unwrap();
    let descriptor = pkg.join("datapackage.json");
    fs::write(
        &descriptor,
        r#"{"name": "gen", "resources": [
  {"name": "a", "path": "data/a.csv", "schema": {"fields": [
     {"name": "id", "type": "integer"}, {"name": "name", "type": "string"},
     {"name": "when", "type": "datetime", "format": "%d/%m/%Y %H:%M"},
     {"name": "ok", "type": "boolean", "trueValues": ["yes"], "falseValues": ["no"]}],
     "missingValues": ["-", ""]}},
  {"name": "parts", "path": ["data/parts/1.csv", "data/parts/2.csv"], "format": "csv",
   "dialect": {"lineTerminator": "\n"}, "schema": "schema.json"},
  {"name": "notes", "path": "readme.txt"}
]}"#,
    )
    .unwrap();
    let doc = dir.path().join("gen.lw");
    succeed(&["pack", s(&descriptor), "-o", s(&doc)]);
    succeed(&["validate", s(&doc)]);
    assert_eq!(succeed(&["get", s(&doc), "/resources/0/leafwire:path"]), "\"data/a.csv\"\n");
    let a: serde_json::Value = serde_json::from_str(&succeed(&["get", s(&doc), "/resources/0/data"])).unwrap();
    assert_eq!(a["name"], serde_json::json!(["x", null]));
    assert_eq!(a["when"], serde_json::json!(["2020-02-01T10:00:00", null]));
    assert_eq!(a["ok"], serde_json::json!([true, false]));
    let parts: serde_json::Value = serde_json::from_str(&succeed(&["get", s(&doc), "/resources/1/data"])).unwrap();
    assert_eq!(parts["n"], serde_json::json!([1, 2, 3]));
    assert_eq!(parts["v"], serde_json::json!([0.5, 1e300, null]));
    assert_eq!(succeed(&["get", s(&doc), "/resources/2/path"]), "\"readme.txt\"\n");

    let out = dir.path().join("out");
    succeed(&["unpack", s(&doc), "-d", s(&out)]);
    for f in ["data/a.csv", "data/parts/1.csv", "data/parts/2.csv"] {
        assert_eq!(fs::read(out.join(f)).unwrap(), fs::read(pkg.join(f)).unwrap(), "{f}");
    }
    let original: serde_json::Value = serde_json::from_slice(&fs::read(&descriptor).unwrap()).unwrap();
    let back: serde_json::Value = serde_json::from_slice(&fs::read(out.join("datapackage.json")).unwrap()).unwrap();
    assert_eq!(original, back);
    let schema: serde_json::Value = serde_json::from_slice(&fs::read(out.join("schema.json")).unwrap()).unwrap();
    assert_eq!(schema["fields"][1]["type"], "number");

    // Paths leaving the package are refused, on the way in and on the way out.
    for bad in ["../outside.csv", "/etc/passwd.csv", "data/../../x.csv"] {
        let d = pkg.join("bad.json");
        fs::write(&d, format!(r#"{{"resources": [{{"name": "r", "path": "{bad}", "schema": {{"fields": []}}}}]}}"#))
            .unwrap();
        fail(&["pack", s(&d), "-o", s(&dir.path().join("bad.lw"))], &["refusing"]);
        assert!(!dir.path().join("bad.lw").exists());
    }
    // A bad cell in a package names the CSV file, its line and column.
    fs::write(pkg.join("data/parts/2.csv"), "n,v\n2,1e300\nthree,\n").unwrap();
    fail(&["pack", s(&descriptor), "-o", s(&dir.path().join("bad.lw"))], &["2.csv", "line 3 column 1 (n)"]);
}

/// The shared data directory, when present (as the core's corpus tests find it).
fn shared() -> Option<PathBuf> {
    let dir = match std::env::var_os("LEAFWIRE_SHARED_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    };
    dir.is_dir().then_some(dir)
}

#[test]
fn refit_package_round_trips_byte_for_byte() {
    let Some(data) = shared() else { return };
    let package = data.join("datapackage/refit-electrical-load");
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("refit.lw");
    succeed(&["pack", s(&package.join("datapackage.json")), "-o", s(&doc)]);
    assert!(succeed(&["validate", s(&doc)]).contains("valid"));
    let bytes = leafwire::AlignedBytes::new(&fs::read(&doc).unwrap());
    leafwire::validate(&bytes).unwrap();
    let d = Document::open(&bytes).unwrap();
    let t = d.pointer("/resources/0/data").unwrap().table().unwrap();
    // Unix times of 2013-2015 fit in i32, the narrowest element that holds the column
    // (canonical form, spec §15.1), read in place.
    let unix = t.get("Unix").unwrap();
    assert_eq!(unix.column_type(), ColumnType::Numbers(ElementType::I32));
    let values = unix.as_slice::<i32>().unwrap();
    assert!(bytes.as_ptr_range().contains(&(values.as_ptr() as *const u8)));
    assert_eq!(values[0], 1_381_323_977);
    let time = t.get("Time").unwrap();
    assert_eq!((time.unit(), time.zone().unwrap()), (Unit::Seconds, ""));
    assert_eq!(time.as_slice::<i64>().unwrap()[0], 1_381_323_977); // the wall clock is UTC

    let out = dir.path().join("out");
    succeed(&["unpack", s(&doc), "-d", s(&out)]);
    let mut files = 0;
    for entry in fs::read_dir(package.join("data")).unwrap() {
        let path = entry.unwrap().path();
        let back = out.join("data").join(path.file_name().unwrap());
        assert_same_values(&path, &back);
        assert_eq!(fs::read(&path).unwrap(), fs::read(&back).unwrap(), "{}", path.display());
        files += 1;
    }
    assert_eq!(files, 20);
    let original: serde_json::Value =
        serde_json::from_slice(&fs::read(package.join("datapackage.json")).unwrap()).unwrap();
    let back: serde_json::Value = serde_json::from_slice(&fs::read(out.join("datapackage.json")).unwrap()).unwrap();
    assert_eq!(original, back);
}

#[test]
fn shared_csvs_round_trip() {
    let Some(data) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    for name in ["seattle-weather-hourly-normals", "sp500-2000", "weather"] {
        let input = data.join(format!("csv/{name}.csv"));
        let doc = dir.path().join(format!("{name}.lw"));
        succeed(&["from-csv", s(&input), "-o", s(&doc)]);
        succeed(&["unpack", s(&doc), "-d", s(dir.path())]);
        assert_same_values(&input, &dir.path().join(format!("{name}.csv")));
    }
}

/// A file of a few MiB is read in chunks on several threads, cut at record boundaries:
/// quoted fields holding newlines, commas and doubled quotes across the cuts, and errors
/// deep in the file, must come out as the one-chunk reader of stdin gives them.
#[test]
fn big_files_read_in_chunks_give_what_one_reader_gives() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id,x,note,day\n");
    for i in 0..60_000u32 {
        let note = match i % 5 {
            0 => format!("\"line one\nline two, {i}\""),
            1 => format!("\"say \"\"hi\"\" {i}\""),
            2 => String::new(),
            _ => format!("plain {i}"),
        };
        text.push_str(&format!("{i},{}.5,{note},2020-01-{:02}\n", i % 977, 1 + i % 28));
    }
    assert!(text.len() > 2 << 20, "the file must be big enough to be cut");
    let csv = dir.path().join("big.csv");
    fs::write(&csv, &text).unwrap();
    let chunked = dir.path().join("chunked.lw");
    succeed(&["from-csv", s(&csv), "-o", s(&chunked)]);
    let streamed = dir.path().join("streamed.lw");
    let out = Command::new(env!("CARGO_BIN_EXE_leafwire"))
        .args(["from-csv", "-", "-o", s(&streamed)])
        .stdin(fs::File::open(&csv).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = |p: &Path| {
        let bytes = fs::read(p).unwrap();
        let doc = Document::open(&bytes).unwrap();
        let t = doc.pointer("/data").unwrap().table().unwrap();
        t.body().to_vec()
    };
    assert_eq!(table(&chunked), table(&streamed));

    // A ragged row and invalid UTF-8 far into the file: the line is the file's line.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let ragged = dir.path().join("ragged.csv");
    let mut broken = text.clone();
    broken.push_str("1,2\n");
    fs::write(&ragged, &broken).unwrap();
    let physical_lines = lines.len() + 1;
    fail(
        &["from-csv", s(&ragged), "-o", s(&dir.path().join("r.lw"))],
        &[&format!("line {physical_lines}:"), "2 fields"],
    );
    let mut bad = text.into_bytes();
    bad.extend_from_slice(b"7,1.5,\xff\xfe,2020-01-01\n");
    let bad_path = dir.path().join("bad.csv");
    fs::write(&bad_path, &bad).unwrap();
    fail(
        &["from-csv", s(&bad_path), "-o", s(&dir.path().join("b.lw"))],
        &[&format!("line {physical_lines} column 3 (note)"), "UTF-8"],
    );
    assert!(!dir.path().join("r.lw").exists() && !dir.path().join("b.lw").exists());
}

#[test]
fn get_reaches_columns_and_cells() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("every.csv");
    fs::write(&input, EVERY_TYPE).unwrap();
    let doc = dir.path().join("every.lw");
    succeed(&["from-csv", s(&input), "-o", s(&doc)]);
    assert_eq!(succeed(&["get", s(&doc), "/data/int"]), "[1,null,3,4]\n");
    assert_eq!(succeed(&["get", s(&doc), "/data/text/1"]), "\"two\\nlines \\\"quoted\\\"\"\n");
    assert_eq!(succeed(&["get", s(&doc), "/data/float/3"]), "0.25\n");
    assert_eq!(succeed(&["get", s(&doc), "/schema/fields/0/name"]), "\"int\"\n");
    // Dates as the table's JSON writes them, not as their day counts.
    assert_eq!(succeed(&["get", s(&doc), "/data/day/0"]), "\"2024-02-29\"\n");
    assert_eq!(succeed(&["get", s(&doc), "/data/day"]), "[\"2024-02-29\",\"1970-01-01\",null,\"1900-03-01\"]\n");
    let whole: serde_json::Value = serde_json::from_str(&succeed(&["to-json", s(&doc)])).unwrap();
    for column in ["int", "float", "flag", "day", "at", "zoned", "spaced", "text", "mixed", "empty"] {
        let got: serde_json::Value = serde_json::from_str(&succeed(&["get", s(&doc), &format!("/data/{column}")])).unwrap();
        assert_eq!(got, whole["data"][column], "{column}");
    }
    fail(&["get", s(&doc), "/data/nope/0"], &["no column \"nope\"", "/data/nope/0"]);
    fail(&["get", s(&doc), "/data/int/4"], &["row 4", "/data/int/4"]);
}

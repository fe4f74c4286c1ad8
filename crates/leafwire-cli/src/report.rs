//! `validate` and `inspect`: what a file holds, for people.

use std::fmt::Write as _;
use std::path::Path;

use leafwire::{Document, Kind, Node, RootRecord, ValidateOptions};

use crate::failure::{file_name, Failure};
use crate::files::{open_mapped, write_stdout};

/// Children listed by `inspect` before it says how many more there are.
const LISTED_CHILDREN: usize = 100;
/// Characters of a string shown by `inspect`.
const PREVIEW_CHARS: usize = 40;
/// Width of the key column, beyond which keys just push their description right.
const KEY_COLUMN: usize = 24;

/// Deep validation; one summary line on success.
pub fn validate(input: &Path, max_depth: usize) -> Result<(), Failure> {
    let file = open_mapped(input)?;
    let bytes = file.as_bytes();
    let options = ValidateOptions { max_depth };
    let stats = leafwire::validate_with(bytes, &options).map_err(|e| Failure::leafwire(input, e))?;
    let line = format!(
        "{}: valid Leafwire {}, {} bytes: {} containers, {} scalars, {} strings, {} typed arrays, {} keys, max depth {}\n",
        file_name(input),
        version(bytes),
        bytes.len(),
        stats.containers,
        stats.scalars,
        stats.strings,
        stats.typed_arrays,
        stats.keys,
        stats.max_depth,
    );
    write_stdout(line.as_bytes())
}

/// The header, the dictionary and the top level of the value. Lazy: reads the header
/// and the root's direct children only, and validates nothing else.
pub fn inspect(input: &Path) -> Result<(), Failure> {
    let file = open_mapped(input)?;
    let doc = file.document().map_err(|e| Failure::leafwire(input, e))?;
    let text = summary(&doc).map_err(|e| Failure::leafwire(input, e))?;
    write_stdout(text.as_bytes())
}

fn summary(doc: &Document<'_>) -> leafwire::Result<String> {
    let bytes = doc.as_bytes();
    let record = doc.record();
    let mut out = String::new();
    let flags = u16::from_le_bytes([bytes[10], bytes[11]]);
    let _ = writeln!(out, "format       Leafwire {}, flags {flags:#06x}", version(bytes));
    let _ = writeln!(out, "size         {} bytes", record.end);
    let _ = writeln!(out, "root record  {}, generation {}", active_record(bytes, record), record.generation);
    let _ = writeln!(out, "garbage      {} bytes", record.garbage);
    let _ = writeln!(out, "dictionary   {} keys", doc.key_count());
    let root = doc.root();
    let _ = writeln!(out, "root         {}", describe(&root)?);
    let mut listed = 0;
    let total = match root.kind() {
        Kind::Object => {
            let entries: Vec<_> = root.entries()?.take(LISTED_CHILDREN).collect::<leafwire::Result<_>>()?;
            for (key, child) in entries {
                let key = serde_json::to_string(key).unwrap_or_default();
                let _ = writeln!(out, "  {key:<KEY_COLUMN$} {}", describe(&child)?);
                listed += 1;
            }
            root.len()?
        }
        Kind::IntMap => {
            for entry in root.int_entries()?.take(LISTED_CHILDREN) {
                let (key, child) = entry?;
                let _ = writeln!(out, "  {key:<KEY_COLUMN$} {}", describe(&child)?);
                listed += 1;
            }
            root.len()?
        }
        Kind::Array => {
            for (i, child) in root.iter()?.take(LISTED_CHILDREN).enumerate() {
                let _ = writeln!(out, "  {:<KEY_COLUMN$} {}", format!("[{i}]"), describe(&child?)?);
                listed += 1;
            }
            root.len()?
        }
        _ => 0,
    };
    if total > listed {
        let _ = writeln!(out, "  ... and {} more", total - listed);
    }
    Ok(out)
}

/// One line about a value: its kind, size or shape, and where its block starts.
fn describe(node: &Node<'_>) -> leafwire::Result<String> {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let what = match node.kind() {
        Kind::Null => return Ok("null".to_owned()),
        Kind::Bool => return Ok(format!("bool {}", node.as_bool()?)),
        Kind::Int => return Ok(format!("int {}", node.as_i64()?)),
        Kind::UInt => return Ok(format!("uint {}", node.as_u64()?)),
        Kind::F64 => return Ok(format!("f64 {}", ryu::Buffer::new().format(node.as_f64()?))),
        Kind::F32 => return Ok(format!("f32 {}", ryu::Buffer::new().format(node.as_f32()?))),
        Kind::String => {
            let s = node.as_str()?;
            let mut preview: String = s.chars().take(PREVIEW_CHARS).collect();
            if preview.len() < s.len() {
                preview.push('…');
            }
            format!("string, {}: {}", plural(s.len(), "byte", "bytes"), serde_json::to_string(&preview).unwrap_or_default())
        }
        Kind::Bytes => format!("bytes, {}", plural(node.as_bytes()?.len(), "byte", "bytes")),
        Kind::BigNum => format!("bignum {}", node.as_bignum()?),
        Kind::Array => format!("array, {}", plural(node.len()?, "item", "items")),
        Kind::Object => format!("object, {}", plural(node.len()?, "entry", "entries")),
        Kind::IntMap => format!("intmap, {}", plural(node.len()?, "entry", "entries")),
        Kind::TypedArray => {
            let typed = node.typed()?;
            format!("typed array of {}, shape {:?}", typed.element_type().name(), typed.shape())
        }
        Kind::Table => {
            let t = node.table()?;
            format!("table, {} × {}", plural(t.rows(), "row", "rows"), plural(t.column_count(), "column", "columns"))
        }
    };
    Ok(format!("{what}, at byte {}", node.offset()))
}

fn version(bytes: &[u8]) -> String {
    format!("{}.{}", bytes[8], bytes[9])
}

/// Which of the two root records (spec §2.2) is active: the one whose bytes are the
/// record the reader chose.
fn active_record(bytes: &[u8], record: &RootRecord) -> &'static str {
    let mut encoded = [0u8; 48];
    record.write(&mut encoded);
    if bytes[16..64] == encoded {
        "A"
    } else {
        "B"
    }
}

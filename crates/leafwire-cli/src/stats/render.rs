//! The report of a [`Stats`], as text for people or JSON for programs. Both show the same
//! numbers: sections, kinds, and the `top` largest paths with the rest summed up.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use super::{Stats, Totals};
use crate::failure::file_name;

/// The path notation, for `--help`.
pub const PATH_NOTATION: &str = "Paths are dotted, with array indices collapsed: `data.orders[].nft.name`. \
`[]` is any element of an array, `{}` any value of an intmap, and `.` alone is the root. \
A key made of anything but letters, digits, `_`, `-`, `$` and `@` is written as a JSON string \
in brackets (`a[\"x.y\"]`, `[\"\"]`), so every path reads back one way.";

fn percent(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole.max(1) as f64)
}

/// The paths listed and the rest: (listed, (paths left, their bytes)).
type Listing = (Vec<(String, Totals, Vec<String>)>, (usize, u64));

fn listing(stats: &Stats, top: usize) -> Listing {
    let paths = stats.paths();
    let shown = if top == 0 { paths.len() } else { top.min(paths.len()) };
    let rest = &paths[shown..];
    let listed = paths[..shown]
        .iter()
        .map(|(id, t, kinds)| (stats.path_text(*id), *t, kinds.iter().map(|k| k.name()).collect()))
        .collect();
    (listed, (rest.len(), rest.iter().map(|(_, t, _)| t.bytes).sum()))
}

pub fn text(stats: &Stats, input: &Path, top: usize) -> String {
    let whole = stats.file_len();
    let mut out = String::new();
    let _ = writeln!(out, "{}: {whole} bytes\n", file_name(input));
    let _ = writeln!(out, "{:>14} {:>6}  section", "bytes", "%");
    for &(name, bytes) in stats.sections() {
        let _ = writeln!(out, "{bytes:>14} {:>6}  {name}", percent(bytes, whole));
    }
    let _ = writeln!(out, "\n{:>14} {:>6} {:>10}  kind", "bytes", "%", "values");
    for (kind, t) in stats.kinds() {
        let _ = writeln!(out, "{:>14} {:>6} {:>10}  {}", t.bytes, percent(t.bytes, whole), t.count, kind.name());
    }
    let codecs = stats.codecs();
    if !codecs.is_empty() {
        let _ = writeln!(out, "\n{:>14} {:>6}  codec (packed pages)", "bytes", "%");
        for (name, bytes) in codecs {
            let _ = writeln!(out, "{bytes:>14} {:>6}  {name}", percent(bytes, whole));
        }
    }
    let _ = writeln!(out, "\n{:>14} {:>6} {:>10}  path (kinds)", "bytes", "%", "values");
    let (listed, (more, more_bytes)) = listing(stats, top);
    for (path, t, kinds) in listed {
        let _ = writeln!(
            out,
            "{:>14} {:>6} {:>10}  {path} ({})",
            t.bytes,
            percent(t.bytes, whole),
            t.count,
            kinds.join(", ")
        );
    }
    if more > 0 {
        let _ = writeln!(out, "({more} more paths, {more_bytes} bytes)");
    }
    out
}

pub fn json(stats: &Stats, input: &Path, top: usize) -> String {
    let sections: serde_json::Map<String, serde_json::Value> =
        stats.sections().iter().map(|&(name, bytes)| (name.to_owned(), json!(bytes))).collect();
    let kinds: Vec<_> =
        stats.kinds().into_iter().map(|(k, t)| json!({"kind": k.name(), "bytes": t.bytes, "count": t.count})).collect();
    let (listed, (more, more_bytes)) = listing(stats, top);
    let paths: Vec<_> = listed
        .into_iter()
        .map(|(path, t, kinds)| json!({"path": path, "bytes": t.bytes, "count": t.count, "kinds": kinds}))
        .collect();
    let report = json!({
        "file": file_name(input),
        "bytes": stats.file_len(),
        "sections": sections,
        "kinds": kinds,
        "codecs": stats.codecs().into_iter().map(|(name, bytes)| json!({"codec": name, "bytes": bytes})).collect::<Vec<_>>(),
        "paths": paths,
        "more_paths": {"paths": more, "bytes": more_bytes},
    });
    let mut text = serde_json::to_string_pretty(&report).expect("a JSON value serializes");
    text.push('\n');
    text
}

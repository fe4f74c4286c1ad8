//! `stats`: where a file's bytes go, by section, by kind of value and by path.
//!
//! A reader of one storage mode walks a document and feeds a [`Stats`]: the sections that
//! tile the file, and for every value its collapsed path, its kind and the bytes of the
//! block it owns. [`render`] turns the totals into text or JSON. The unpacked reader is
//! [`unpacked`]; a packed reader can feed the same accumulator.
//!
//! Memory is bounded by the number of distinct paths (array indices and intmap keys are
//! collapsed), not by the number of values.

mod render;
mod unpacked;

use std::collections::HashMap;
use std::path::Path;

use leafwire::ElementType;

use crate::failure::Failure;
use crate::files::{open_mapped, write_stdout};

pub use render::PATH_NOTATION;

/// How the report is printed.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Paths listed before the "(N more paths, X bytes)" line; 0 lists every path.
    pub top: usize,
    pub json: bool,
}

/// `leafwire stats FILE`.
pub fn run(input: &Path, options: &Options) -> Result<(), Failure> {
    let file = open_mapped(input)?;
    let stats = unpacked::collect(&file, input)?;
    let text = match options.json {
        true => render::json(&stats, input, options.top),
        false => render::text(&stats, input, options.top),
    };
    write_stdout(text.as_bytes())
}

/// The kind of a value, as the report groups them: typed arrays by element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Object,
    Array,
    IntMap,
    String,
    Bytes,
    BigNum,
    Typed(ElementType),
    Null,
    Bool,
    Int,
    UInt,
    F64,
    F32,
    /// A packed array's tables and structural columns (kinds, shapes, lengths, keys).
    PackedStructure,
    /// A table (spec §15), counted whole.
    Table,
    /// Values a packed group keeps whole (spec §13.3): documents or compressed JSON text.
    Residual,
}

/// Number of distinct [`ValueKind`]s: 15 plain kinds and 11 element types.
const KINDS: usize = 26;

impl ValueKind {
    /// A dense index in `0..KINDS`, also the kind's place in listings of equal size.
    fn index(self) -> usize {
        use ValueKind::*;
        match self {
            Object => 0,
            Array => 1,
            IntMap => 2,
            String => 3,
            Bytes => 4,
            BigNum => 5,
            Typed(e) => 6 + e as usize,
            Null => 17,
            Bool => 18,
            Int => 19,
            UInt => 20,
            F64 => 21,
            F32 => 22,
            PackedStructure => 23,
            Table => 24,
            Residual => 25,
        }
    }

    fn from_index(i: usize) -> ValueKind {
        use ValueKind::*;
        match i {
            0 => Object,
            1 => Array,
            2 => IntMap,
            3 => String,
            4 => Bytes,
            5 => BigNum,
            6..=16 => Typed(ElementType::from_code((i - 6) as u8).expect("element codes are 0..=10")),
            17 => Null,
            18 => Bool,
            19 => Int,
            20 => UInt,
            21 => F64,
            22 => F32,
            23 => PackedStructure,
            24 => Table,
            _ => Residual,
        }
    }

    pub fn name(self) -> String {
        use ValueKind::*;
        match self {
            Object => "object".into(),
            Array => "array".into(),
            IntMap => "intmap".into(),
            String => "string".into(),
            Bytes => "bytes".into(),
            BigNum => "bignum".into(),
            Typed(e) => format!("typed {}", e.name()),
            Null => "null".into(),
            Bool => "bool".into(),
            Int => "int".into(),
            UInt => "uint".into(),
            F64 => "f64".into(),
            F32 => "f32".into(),
            PackedStructure => "packed structure".into(),
            Table => "table".into(),
            Residual => "kept whole".into(),
        }
    }

    /// Whether values of this kind are containers (their blocks form the structure section).
    pub fn is_container(self) -> bool {
        matches!(self, ValueKind::Object | ValueKind::Array | ValueKind::IntMap)
    }
}

/// A path with array indices and intmap keys collapsed, interned: an index into [`Paths`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathId(u32);

impl PathId {
    pub const ROOT: PathId = PathId(0);
}

/// One step from a value to a child.
#[derive(Debug)]
pub enum Step<'k> {
    /// The value under an object key.
    Key(&'k str),
    /// Any element of an array (`[]`).
    Item,
    /// Any value of an intmap (`{}`).
    Entry,
}

struct PathNode {
    parent: PathId,
    step: Option<Box<str>>,
    /// `None` with `step` `None` is the root; the step kind otherwise.
    collapsed: Option<char>,
    keys: HashMap<Box<str>, PathId>,
    item: Option<PathId>,
    entry: Option<PathId>,
}

/// The tree of distinct paths seen so far.
struct Paths {
    nodes: Vec<PathNode>,
}

impl Paths {
    fn new() -> Paths {
        Paths { nodes: vec![PathNode::new(PathId::ROOT, None, None)] }
    }

    fn child(&mut self, parent: PathId, step: Step<'_>) -> PathId {
        let next = PathId(self.nodes.len() as u32);
        let node = &mut self.nodes[parent.0 as usize];
        let (id, new) = match step {
            Step::Key(key) => match node.keys.get(key) {
                Some(&id) => (id, None),
                None => {
                    node.keys.insert(key.into(), next);
                    (next, Some(PathNode::new(parent, Some(key.into()), None)))
                }
            },
            Step::Item => match node.item {
                Some(id) => (id, None),
                None => {
                    node.item = Some(next);
                    (next, Some(PathNode::new(parent, None, Some('['))))
                }
            },
            Step::Entry => match node.entry {
                Some(id) => (id, None),
                None => {
                    node.entry = Some(next);
                    (next, Some(PathNode::new(parent, None, Some('{'))))
                }
            },
        };
        if let Some(node) = new {
            self.nodes.push(node);
        }
        id
    }

    /// The path as text (see `render::PATH_NOTATION`).
    fn text(&self, id: PathId) -> String {
        let mut steps = Vec::new();
        let mut at = id;
        while at != PathId::ROOT {
            steps.push(at);
            at = self.nodes[at.0 as usize].parent;
        }
        if steps.is_empty() {
            return ".".to_owned();
        }
        let mut out = String::new();
        for &step in steps.iter().rev() {
            let node = &self.nodes[step.0 as usize];
            match (&node.step, node.collapsed) {
                (Some(key), _) if is_plain_key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                (Some(key), _) => {
                    out.push('[');
                    out.push_str(&serde_json::to_string(&**key).expect("a string serializes"));
                    out.push(']');
                }
                (None, Some('{')) => out.push_str("{}"),
                (None, _) => out.push_str("[]"),
            }
        }
        out
    }
}

impl PathNode {
    fn new(parent: PathId, step: Option<Box<str>>, collapsed: Option<char>) -> PathNode {
        PathNode { parent, step, collapsed, keys: HashMap::new(), item: None, entry: None }
    }
}

/// Whether a key is written bare in a path: letters, digits (of any script), `_`, `-`,
/// `$` and `@`. Any other key is written `["as a JSON string"]`, so a path reads back
/// unambiguously.
fn is_plain_key(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | '@'))
}

/// Bytes and number of values.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals {
    pub bytes: u64,
    pub count: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct PathTotals {
    totals: Totals,
    /// Bit `ValueKind::index` set for every kind seen at the path.
    kinds: u32,
}

/// The accumulator: sections of the file, totals by kind and by path.
pub struct Stats {
    file_len: u64,
    /// Named parts of the file in the order they are reported; they add up to `file_len`.
    sections: Vec<(&'static str, u64)>,
    by_kind: [Totals; KINDS],
    paths: Paths,
    by_path: Vec<PathTotals>,
    codecs: Vec<(&'static str, u64)>,
}

impl Stats {
    pub fn new(file_len: u64) -> Stats {
        Stats {
            file_len,
            sections: Vec::new(),
            by_kind: [Totals::default(); KINDS],
            paths: Paths::new(),
            by_path: vec![PathTotals::default()],
            codecs: Vec::new(),
        }
    }

    /// The path of `step` from `parent`, interned.
    pub fn child(&mut self, parent: PathId, step: Step<'_>) -> PathId {
        let id = self.paths.child(parent, step);
        if id.0 as usize == self.by_path.len() {
            self.by_path.push(PathTotals::default());
        }
        id
    }

    /// One value of `kind` at `path`, owning `bytes` bytes of the file.
    pub fn add(&mut self, path: PathId, kind: ValueKind, bytes: u64) {
        self.add_values(path, kind, bytes, 1);
    }

    /// `count` values of `kind` at `path` owning `bytes` bytes in all (a packed column).
    pub fn add_values(&mut self, path: PathId, kind: ValueKind, bytes: u64, count: u64) {
        let k = &mut self.by_kind[kind.index()];
        k.bytes += bytes;
        k.count += count;
        let p = &mut self.by_path[path.0 as usize];
        p.totals.bytes += bytes;
        p.totals.count += count;
        p.kinds |= 1 << kind.index();
    }

    /// `bytes` of packed pages written with `codec`.
    pub fn add_codec(&mut self, codec: &'static str, bytes: u64) {
        match self.codecs.iter_mut().find(|(n, _)| *n == codec) {
            Some((_, b)) => *b += bytes,
            None => self.codecs.push((codec, bytes)),
        }
    }

    /// Bytes of packed pages by codec, largest first (empty for unpacked files).
    pub fn codecs(&self) -> Vec<(&'static str, u64)> {
        let mut codecs = self.codecs.clone();
        codecs.sort_by_key(|&(name, bytes)| (std::cmp::Reverse(bytes), name));
        codecs
    }

    /// Adds `bytes` to the section `name` (created at the end of the list if new).
    pub fn add_section(&mut self, name: &'static str, bytes: u64) {
        match self.sections.iter_mut().find(|(n, _)| *n == name) {
            Some((_, b)) => *b += bytes,
            None => self.sections.push((name, bytes)),
        }
    }

    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Bytes the sections do not cover; 0 once a reader has accounted for the whole file.
    pub fn unattributed(&self) -> i128 {
        self.file_len as i128 - self.sections.iter().map(|&(_, b)| b as i128).sum::<i128>()
    }

    pub fn sections(&self) -> &[(&'static str, u64)] {
        &self.sections
    }

    /// Kinds seen, largest first (then most values, then the kinds' own order).
    pub fn kinds(&self) -> Vec<(ValueKind, Totals)> {
        let mut kinds: Vec<_> = (0..KINDS)
            .filter(|&i| self.by_kind[i].count > 0)
            .map(|i| (ValueKind::from_index(i), self.by_kind[i]))
            .collect();
        kinds.sort_by_key(|(k, t)| (std::cmp::Reverse(t.bytes), std::cmp::Reverse(t.count), k.index()));
        kinds
    }

    /// Every path that holds a value, largest first (then most values, then the order they
    /// were first met): (path, totals, kinds).
    pub fn paths(&self) -> Vec<(PathId, Totals, Vec<ValueKind>)> {
        let mut paths: Vec<_> = (0..self.by_path.len()).filter(|&i| self.by_path[i].totals.count > 0).collect();
        paths.sort_by_key(|&i| {
            (std::cmp::Reverse(self.by_path[i].totals.bytes), std::cmp::Reverse(self.by_path[i].totals.count), i)
        });
        paths
            .into_iter()
            .map(|i| {
                let p = self.by_path[i];
                let kinds = (0..KINDS).filter(|&k| p.kinds & (1 << k) != 0).map(ValueKind::from_index).collect();
                (PathId(i as u32), p.totals, kinds)
            })
            .collect()
    }

    pub fn path_text(&self, path: PathId) -> String {
        self.paths.text(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_collapse_and_escape() {
        let mut s = Stats::new(0);
        let data = s.child(PathId::ROOT, Step::Key("data"));
        let orders = s.child(data, Step::Key("orders"));
        let item = s.child(orders, Step::Item);
        assert_eq!(s.child(orders, Step::Item), item);
        let name = s.child(item, Step::Key("name"));
        assert_eq!(s.path_text(name), "data.orders[].name");
        let odd = s.child(item, Step::Key("a.b[\"c\"]"));
        assert_eq!(s.path_text(odd), r#"data.orders[]["a.b[\"c\"]"]"#);
        let entry = s.child(PathId::ROOT, Step::Entry);
        assert_eq!(s.path_text(entry), "{}");
        let empty = s.child(entry, Step::Key(""));
        assert_eq!(s.path_text(empty), r#"{}[""]"#);
        assert_eq!(s.path_text(PathId::ROOT), ".");
        let item = s.child(PathId::ROOT, Step::Item);
        assert_eq!(s.path_text(item), "[]");
        let name = s.child(PathId::ROOT, Step::Key("名前"));
        assert_eq!(s.path_text(name), "名前");
    }

    #[test]
    fn kind_indices_are_dense_and_reversible() {
        for i in 0..KINDS {
            assert_eq!(ValueKind::from_index(i).index(), i);
        }
    }
}

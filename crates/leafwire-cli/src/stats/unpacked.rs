//! The size breakdown of an ordinary (unpacked) document: every block a value owns, found
//! through the core's reader (`Node::block_range`), and the header, dictionary, checksum
//! table and locator from `leafwire::format`; what no block covers is garbage or padding.

use leafwire::format::dictionary::Dict;
use leafwire::format::{integrity, HEADER_LEN};
use std::path::Path;

use leafwire::{Children, Entries, Kind, Node, PathStep, Result, Stream, ValidateOptions};

use super::{PathId, Stats, Step, ValueKind};
use crate::failure::Failure;
use crate::files::Input;
use crate::READ_DEPTH;

/// Validates the document (so that it is a tree of blocks that do not overlap, and every
/// byte counted below is counted once), then walks every value, depth first, with an
/// explicit stack as deep as the document (validation bounds it by `READ_DEPTH`).
pub fn collect(file: &Input, input: &Path) -> std::result::Result<Stats, Failure> {
    let mut stats = blocks(file).map_err(|e| Failure::leafwire(input, e))?;
    // Below `end`, bytes in no block are the garbage edits left (the root record counts
    // them) or alignment padding; past `end`, a commit's journal space or trailing bytes.
    let (end, garbage) = file
        .document()
        .map(|d| (d.as_bytes().len() as u64, d.record().garbage))
        .map_err(|e| Failure::leafwire(input, e))?;
    let past_end = stats.file_len() - end;
    // Validation proved the blocks disjoint, so they cannot cover more than the document.
    let within = u64::try_from(stats.unattributed() - past_end as i128)
        .map_err(|_| Failure::internal("the blocks counted add up to more than the document"))?;
    stats.add_section("garbage", garbage.min(within));
    stats.add_section("padding", within - garbage.min(within));
    stats.add_section("past end", past_end);
    debug_assert_eq!(stats.unattributed(), 0);
    Ok(stats)
}

/// Every block of the document, counted into its section, kind and path.
fn blocks(file: &Input) -> Result<Stats> {
    let bytes = file.as_bytes();
    leafwire::validate_with(bytes, &ValidateOptions { max_depth: READ_DEPTH })?;
    file.release();
    let doc = file.document()?;
    let buf = doc.as_bytes();
    let record = doc.record();

    let mut stats = Stats::new(bytes.len() as u64);
    stats.add_section("header", HEADER_LEN as u64);
    let dictionary = match record.dictionary {
        0 => 0,
        at => {
            let dict = Dict::parse(buf, at)?;
            (dict.end() - dict.pos()) as u64
        }
    };
    stats.add_section("dictionary", dictionary);
    stats.add_section("structure", 0);
    stats.add_section("data", 0);
    let mut walker = Walker { stats, stack: Vec::new() };
    walker.walk(doc.root())?;
    let mut stats = walker.stats;
    let checksums = match integrity::is_on(buf) {
        true => {
            let table = integrity::parse(buf, buf.len())?;
            (table.end() - table.at + integrity::LOCATOR_LEN) as u64
        }
        false => 0,
    };
    stats.add_section("checksums", checksums);
    Ok(stats)
}

/// The children still to visit of a container on the walk's stack.
enum Pending<'a> {
    Entries(Entries<'a>),
    Items(Children<'a>),
    IntValues(Children<'a>),
}

struct Walker<'a> {
    stats: Stats,
    stack: Vec<(PathId, Pending<'a>)>,
}

impl<'a> Walker<'a> {
    fn walk(&mut self, root: Node<'a>) -> Result<()> {
        self.visit(PathId::ROOT, root)?;
        while let Some((parent, pending)) = self.stack.last_mut() {
            let parent = *parent;
            let next = match pending {
                Pending::Entries(entries) => entries.next().map(|e| e.map(|(key, node)| (Step::Key(key), node))),
                Pending::Items(items) => items.next().map(|e| e.map(|node| (Step::Item, node))),
                Pending::IntValues(values) => values.next().map(|e| e.map(|node| (Step::Entry, node))),
            };
            match next {
                Some(child) => {
                    let (step, node) = child?;
                    let path = self.stats.child(parent, step);
                    self.visit(path, node)?;
                }
                None => {
                    self.stack.pop();
                }
            }
        }
        Ok(())
    }

    /// Counts `node` at `path`, and puts a container's children on the stack.
    fn visit(&mut self, path: PathId, node: Node<'a>) -> Result<()> {
        let kind = match node.kind() {
            Kind::Null => ValueKind::Null,
            Kind::Bool => ValueKind::Bool,
            Kind::Int => ValueKind::Int,
            Kind::UInt => ValueKind::UInt,
            Kind::F64 => ValueKind::F64,
            Kind::F32 => ValueKind::F32,
            Kind::String => ValueKind::String,
            Kind::Bytes => ValueKind::Bytes,
            Kind::BigNum => ValueKind::BigNum,
            Kind::Array => ValueKind::Array,
            Kind::Object => ValueKind::Object,
            Kind::IntMap => ValueKind::IntMap,
            // A typed array is one value, whatever its rank: its elements are not walked.
            Kind::TypedArray => ValueKind::Typed(node.typed()?.element_type()),
            Kind::Table => ValueKind::Table,
        };
        let bytes = node.block_range()?.map_or(0, |r| r.end - r.start);
        if node.is_packed() {
            return self.packed(path, node, bytes);
        }
        self.stats.add(path, kind, bytes);
        self.stats.add_section(if kind.is_container() { "structure" } else { "data" }, bytes);
        let pending = match kind {
            ValueKind::Object => Pending::Entries(node.entries()?),
            ValueKind::Array => Pending::Items(node.iter()?),
            ValueKind::IntMap => Pending::IntValues(node.iter()?),
            _ => return Ok(()),
        };
        self.stack.push((path, pending));
        Ok(())
    }

    /// A packed array or object (spec §13): its columns by path, and what is left of its
    /// block (tables, directories) as its own structure. A packed object's values are at
    /// `path{}`; its keys are structure, as the keys of keyed objects are.
    fn packed(&mut self, path: PathId, node: Node<'a>, bytes: u64) -> Result<()> {
        self.stats.add_section("data (packed)", bytes);
        let object = node.kind() == Kind::Object;
        let mut columns_bytes = 0;
        for (steps, column) in node.packed_columns()? {
            let mut at = if object { path } else { self.stats.child(path, Step::Item) };
            for step in &steps {
                at = match step {
                    PathStep::Key(k) => self.stats.child(at, Step::Key(k)),
                    PathStep::Item => self.stats.child(at, Step::Item),
                    PathStep::Entry => self.stats.child(at, Step::Entry),
                    PathStep::EntryKey => at,
                };
            }
            let keys = matches!(steps.first(), Some(PathStep::EntryKey));
            let kind = match column.stream {
                _ if keys => ValueKind::PackedStructure,
                Stream::Bool => ValueKind::Bool,
                Stream::Int => ValueKind::Int,
                Stream::Float => ValueKind::F64,
                Stream::String => ValueKind::String,
                Stream::Residual => ValueKind::Residual,
                Stream::Kind | Stream::Shape | Stream::Len | Stream::Key => ValueKind::PackedStructure,
            };
            self.stats.add_values(at, kind, column.bytes, column.values);
            for (codec, b) in &column.codecs {
                self.stats.add_codec(codec, *b);
            }
            columns_bytes += column.bytes;
        }
        self.stats.add(path, ValueKind::PackedStructure, bytes - columns_bytes);
        Ok(())
    }
}

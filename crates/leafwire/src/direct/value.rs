//! `Value` → canonical bytes through the direct encoder: a `Value` says exactly what it
//! is, so each value maps to one slot (arrays stay arrays, typed arrays stay typed).

use std::borrow::Cow;

use super::keys::{reuse_slices, KeyGuesses};
use super::{too_many_children, write_document, Child, KeyTable, Keys, Levels, Node, Source, TypedBlock, POINTER};
use crate::error::{Category, Error, Result};
use crate::format::header;
use crate::format::numbers::signed_width;
use crate::format::{is_bignum_text, tag, FLAG_PACKED};
use crate::packed::input::{Input, View};
use crate::packed::{self, PackOptions};
use crate::table::Table;
use crate::value::{TypedArray, Value};

/// Encodes `value` canonically, accepting nesting up to `max_depth` containers; with
/// `pack`, its large arrays become packed arrays (spec §13).
pub(crate) fn encode_value(value: &Value, max_depth: usize, pack: Option<&PackOptions>) -> Result<Vec<u8>> {
    encode_input(value, max_depth, pack)
}

/// [`encode_value`] of any tree the packed encoder reads (a borrowed one in
/// `to_vec_packed`).
pub(crate) fn encode_input<T: Input>(value: &T, max_depth: usize, pack: Option<&PackOptions>) -> Result<Vec<u8>> {
    let (document, root_tag, packed_bytes, kept_whole) = with_planner(max_depth, pack, |planner| {
        let document = planner.encode(value)?;
        Ok::<_, Error>((document, planner.root_tag, planner.packed.iter().map(Vec::len).sum::<usize>(), planner.kept_whole))
    })?;
    // What the document holds outside groups, its fixed header aside.
    let outside = document.len().saturating_sub(packed_bytes + crate::format::HEADER_LEN);
    match (pack, value.view()) {
        // A root object that is not packed, with a sixteenth or more of the document
        // outside groups (a configuration, a schema, an API definition): the whole form may
        // cost what zstd makes of its JSON, where the layout's keys, structure and text do
        // not compress (a CLI's definition: 71,352 bytes as its commands' group and its
        // flags, a tenth, outside; 64,856 whole, 70,942 as zstd -3 of the JSON). So may one
        // whose groups kept whole as JSON are several and, with what is outside, an eighth
        // of it: zstd of the whole text finds what they repeat of one another, which each
        // frame alone cannot (26 regions' lists of the same 511 instance types: 22,456 bytes
        // as 26 groups kept whole, 1,244 whole, 1,065 as zstd -3). With one such group and
        // little outside, the whole form gained 1 % (twitter, update-center) for 40 % more
        // time: it is not tried.
        (Some(options), View::Object(entries))
            if !options.columns_only
                && root_tag != tag::PACKED_OBJECT
                && document.len() >= MIN_WHOLE_DOCUMENT
                && (outside * 16 > document.len()
                    || (kept_whole.groups >= 2 && (outside + kept_whole.bytes) * 8 > document.len())) =>
        {
            let Some(block) = packed::entries::pack_whole(value, entries, options)? else { return Ok(document) };
            let whole = with_planner(max_depth, None, |planner| planner.encode_packed_root(tag::PACKED_OBJECT, block))?;
            Ok(if whole.len() < document.len() { whole } else { document })
        }
        _ => Ok(document),
    }
}

/// A document smaller than this keeps its root as it is in packed mode: a few hundred
/// bytes have little for zstd to find, and stay readable in place.
const MIN_WHOLE_DOCUMENT: usize = 1024;

/// Plans `value` (no packed arrays) and hands the plan to `sink`.
pub(crate) fn plan_value(value: &Value, max_depth: usize, sink: &mut impl super::PlanSink) -> Result<()> {
    with_planner(max_depth, None, |planner| {
        let (tag, value, _) = planner.visit(value, 0)?;
        let root = Child { tag, key: 0, value };
        let source = Blocks { blocks: &planner.blocks, typed: &planner.typed, tables: &planner.tables, packed: &planner.packed };
        let keys = Keys { texts: planner.keys.texts(), hashes: planner.keys.hashes() };
        sink.planned(&mut planner.levels, keys, root, &source)
    })
}

/// Runs `f` with a planner whose lists come from this thread's scratch, and keeps them
/// for the next call.
fn with_planner<'a, R>(max_depth: usize, pack: Option<&'a PackOptions>, f: impl FnOnce(&mut Planner<'a>) -> R) -> R {
    let (levels, keys, blocks, shapes) = SCRATCH.take();
    let mut planner = Planner {
        levels,
        keys: keys.recycle(),
        blocks: reuse_slices(blocks),
        typed: Vec::new(),
        tables: Vec::new(),
        packed: Vec::new(),
        kept_whole: KeptWhole::default(),
        pack,
        max_depth,
        shapes,
        root_tag: tag::NULL,
    };
    let bytes = f(&mut planner);
    let Planner { mut levels, keys, blocks, mut shapes, .. } = planner;
    let blocks_size = blocks.capacity() * size_of::<&[u8]>();
    if levels.heap_size() + keys.heap_size() + blocks_size + shapes.heap_size() <= SCRATCH_LIMIT {
        levels.clear();
        shapes.clear();
        SCRATCH.set((levels, keys.recycle(), reuse_slices(blocks), shapes));
    }
    bytes
}

thread_local! {
    /// The planner's lists, kept between calls (per thread) so that a document does not
    /// pay for growing them again; dropped when they pass `SCRATCH_LIMIT` bytes.
    static SCRATCH: std::cell::Cell<(Levels, KeyTable<'static>, Vec<&'static [u8]>, KeyGuesses)> = std::cell::Cell::new(Default::default());
}

const SCRATCH_LIMIT: usize = 16 << 20;

/// How many keys ahead of the one being hashed an object's walk prefetches.
const KEY_PREFETCH_AHEAD: usize = 2;

/// How many packed blocks kept their values whole, and their bytes.
#[derive(Clone, Copy, Default)]
struct KeptWhole {
    groups: usize,
    bytes: usize,
}

struct Planner<'a> {
    levels: Levels,
    keys: KeyTable<'a>,
    /// Content of the string, bytes and bignum values met, by handle.
    blocks: Vec<&'a [u8]>,
    typed: Vec<Cow<'a, TypedArray>>,
    tables: Vec<Cow<'a, Table>>,
    /// Packed blocks made so far, and whether to make them.
    packed: Vec<Vec<u8>>,
    /// The packed blocks whose values were kept whole (§13.3).
    kept_whole: KeptWhole,
    pack: Option<&'a PackOptions>,
    max_depth: usize,
    /// The guesses for object keys (`KeyTable::intern_guessed`).
    shapes: KeyGuesses,
    /// The tag the root got (once `encode` has run).
    root_tag: u8,
}

impl<'a> Planner<'a> {
    fn encode<T: Input>(&mut self, value: &'a T) -> Result<Vec<u8>> {
        let (tag, value, _) = self.visit(value, 0)?;
        self.write(Child { tag, key: 0, value })
    }

    /// The document whose root is the packed `block` (tag `t`).
    fn encode_packed_root(&mut self, t: u8, block: Vec<u8>) -> Result<Vec<u8>> {
        self.levels.add_block(block.len());
        self.packed.push(block);
        self.write(Child { tag: t, key: 0, value: 0 })
    }

    /// Lays out and writes the planned document under `root`.
    fn write(&mut self, root: Child) -> Result<Vec<u8>> {
        self.root_tag = root.tag;
        let source = Blocks { blocks: &self.blocks, typed: &self.typed, tables: &self.tables, packed: &self.packed };
        let keys = Keys { texts: self.keys.texts(), hashes: self.keys.hashes() };
        let layout = self.levels.finish(keys, root, &source)?;
        let mut doc = write_document(&self.levels, keys, &layout, &source);
        if !self.packed.is_empty() {
            header::add_feature(&mut doc, FLAG_PACKED);
        }
        Ok(doc)
    }

    /// Whether packing is asked for and `v` is a kind that may pack (an object only when it
    /// has enough entries; the rest of the rules are `try_pack`'s).
    #[inline]
    fn may_pack<T: Input>(&self, v: &View<'_, T>) -> bool {
        self.pack.is_some() && !matches!(v, View::Object(entries) if entries.len() < packed::entries::MIN_OBJECT_ENTRIES)
    }

    /// `v` (whose view is `view`) as a packed array or object, when packing is asked for
    /// and pays.
    #[inline(never)]
    fn try_pack<T: Input>(&mut self, v: &T, view: &View<'_, T>) -> Result<Option<(u8, u64, u8)>> {
        let Some(options) = self.pack else { return Ok(None) };
        let (t, block) = match view {
            View::Object(entries) => (tag::PACKED_OBJECT, packed::entries::pack_object(v, entries, options)?),
            _ => (tag::PACKED, Self::pack_array(view, options)?),
        };
        let Some(block) = block else { return Ok(None) };
        let len = block.bytes.len();
        self.levels.add_block(len);
        self.packed.push(block.bytes);
        if block.kept_whole {
            self.kept_whole.groups += 1;
            self.kept_whole.bytes += len;
        }
        Ok(Some((t, (self.packed.len() - 1) as u64, POINTER)))
    }

    fn pack_array<T: Input>(view: &View<'_, T>, options: &PackOptions) -> Result<Option<packed::Packed>> {
        Ok(match view {
            View::Array(items) => packed::pack(items, options)?,
            View::Typed(t) if t.len() >= packed::MIN_GROUP_LEAVES && t.retyped_as_is() => match t.array().to_nested() {
                Value::Array(items) => packed::pack(&items, options)?,
                _ => None,
            },
            _ => None,
        })
    }

    /// Records `v` (the root at depth 0, or a child of a container at depth `depth` − 1):
    /// returns its tag, its slot value as `Child::value` holds it, and the width it needs.
    #[inline(always)]
    fn visit<T: Input>(&mut self, v: &'a T, depth: usize) -> Result<(u8, u64, u8)> {
        match self.leaf(&v.view()) {
            Some(slot) => Ok(slot),
            // The view is made again there: handing this one over kept it in memory for
            // every value (4 % more instructions to encode citm_catalog).
            None => self.visit_composite(v, depth),
        }
    }

    /// The slot of a scalar, string or bytes value (most values: inline, no call), or
    /// `None` for the others.
    #[inline(always)]
    fn leaf<T: Input>(&mut self, v: &View<'a, T>) -> Option<(u8, u64, u8)> {
        Some(match *v {
            View::Null => (tag::NULL, 0, 1),
            View::Bool(b) => (if b { tag::TRUE } else { tag::FALSE }, 0, 1),
            View::Int(x) => (tag::INT, x as u64, signed_width(x) as u8),
            // Spec §7: a value in i64 is an `int` whatever its source type.
            View::UInt(x) if x <= i64::MAX as u64 => (tag::INT, x, signed_width(x as i64) as u8),
            View::UInt(x) => (tag::UINT, x, 8),
            View::F64(x) => (tag::F64, x.to_bits(), 8),
            View::F32(x) => (tag::F32, x.to_bits() as u64, 4),
            View::String(s) => self.block(tag::STRING, s.as_bytes()),
            View::Bytes(b) => self.block(tag::BYTES, b),
            _ => return None,
        })
    }

    /// Records a bignum, container, typed array, table or packed block `v` (whose view is
    /// `view`), as `visit` does.
    #[inline(never)]
    fn visit_composite<T: Input>(&mut self, v: &'a T, depth: usize) -> Result<(u8, u64, u8)> {
        let view = v.view();
        Ok(match view {
            View::BigNum(s) => {
                if !is_bignum_text(s.as_bytes()) || s.parse::<i64>().is_ok() || s.parse::<u64>().is_ok() {
                    return Err(Error::new(
                        Category::NotRepresentable,
                        format!("BigNum({s:?}) is not an integer outside i64 and u64 (spec §5.1)"),
                    ));
                }
                self.block(tag::BIGNUM, s.as_bytes())
            }
            View::Array(_) | View::Typed(_) | View::Object(_) if self.may_pack(&view) => match self.try_pack(v, &view)? {
                Some(slot) => slot,
                None => self.container(view, depth)?,
            },
            View::Array(_) | View::Object(_) | View::IntMap(_) | View::Typed(_) => self.container(view, depth)?,
            View::Table(t) => {
                let t = t.table()?;
                self.levels.add_table(t.body().len());
                self.tables.push(t);
                (tag::TABLE, (self.tables.len() - 1) as u64, POINTER)
            }
            _ => unreachable!("leaf values are recorded by `leaf`"),
        })
    }

    /// Records a container or typed array (whose view is `view`), as `visit` does.
    #[inline]
    fn container<T: Input>(&mut self, view: View<'a, T>, depth: usize) -> Result<(u8, u64, u8)> {
        Ok(match view {
            View::Array(items) => {
                let mut node = self.open(tag::ARRAY, items.len(), depth)?;
                let index = self.levels.open(node, depth);
                for item in items {
                    self.child(item, 0, depth, &mut node)?;
                }
                self.levels.close(depth, index, node);
                (tag::ARRAY, index as u64, POINTER)
            }
            View::Object(entries) => {
                let mut node = self.open(tag::OBJECT, entries.len(), depth)?;
                let index = self.levels.open(node, depth);
                for (i, (k, item)) in entries.iter().enumerate() {
                    if let Some((ahead, _)) = entries.get(i + KEY_PREFETCH_AHEAD) {
                        super::prefetch(ahead.as_ref().as_ptr());
                    }
                    let guess = self.shapes.guess(depth, i);
                    let id = self.keys.intern_guessed(k.as_ref().as_bytes(), guess);
                    if guess != Some(id) {
                        self.shapes.note(depth, i, id);
                    }
                    self.child(item, id as u64, depth, &mut node)?;
                }
                self.levels.close(depth, index, node);
                (tag::OBJECT, index as u64, POINTER)
            }
            View::IntMap(entries) => {
                let mut node = self.open(tag::INTMAP, entries.len(), depth)?;
                let index = self.levels.open(node, depth);
                for (k, item) in entries {
                    node.key_width = node.key_width.max(signed_width(*k) as u8);
                    self.child(item, *k as u64, depth, &mut node)?;
                }
                self.levels.close(depth, index, node);
                (tag::INTMAP, index as u64, POINTER)
            }
            View::Typed(t) => {
                let t = t.array();
                self.levels.add_typed(t.element_type(), &t.shape_u64(), t.int_mask().is_some());
                self.typed.push(t);
                (tag::TYPED, (self.typed.len() - 1) as u64, POINTER)
            }
            _ => unreachable!("only containers and typed arrays come here"),
        })
    }

    /// The record of a container of `len` children at `depth`, if the limits allow it.
    #[inline]
    fn open(&self, tag: u8, len: usize, depth: usize) -> Result<Node> {
        if depth >= self.max_depth {
            return Err(Error::depth_limit(self.max_depth));
        }
        let len = u32::try_from(len).map_err(|_| too_many_children())?;
        Ok(Node::new(tag, len))
    }

    #[inline]
    fn block(&mut self, tag: u8, content: &'a [u8]) -> (u8, u64, u8) {
        self.levels.add_block(content.len());
        self.blocks.push(content);
        (tag, (self.blocks.len() - 1) as u64, POINTER)
    }

    /// Visits a child of the container `node` (at `depth`), noting what its slot needs.
    /// In line in the container's loop, as `visit` is: scalars and strings (most children)
    /// cost no call; the rest call `visit_composite`, which may recurse.
    #[inline(always)]
    fn child<T: Input>(&mut self, v: &'a T, key: u64, depth: usize, node: &mut Node) -> Result<()> {
        let (tag, value, need) = self.visit(v, depth + 1)?;
        node.need(need);
        self.levels.push(depth, Child { tag, key, value });
        Ok(())
    }
}

/// The planner's handles resolved: `Child::value` indexes `blocks` or `typed`.
struct Blocks<'p, 'a> {
    blocks: &'p [&'a [u8]],
    typed: &'p [Cow<'a, TypedArray>],
    tables: &'p [Cow<'a, Table>],
    packed: &'p [Vec<u8>],
}

impl Source for Blocks<'_, '_> {
    fn content(&self, child: &Child) -> &[u8] {
        if tag::is_packed(child.tag) {
            return &self.packed[child.value as usize];
        }
        self.blocks[child.value as usize]
    }

    fn typed(&self, child: &Child) -> TypedBlock<'_> {
        let t = &self.typed[child.value as usize];
        TypedBlock {
            element: t.element_type(),
            shape: t.shape_u64(),
            data: t.data().le_bytes(),
            mask: t.int_mask().map(Cow::Borrowed),
        }
    }

    fn table(&self, child: &Child) -> &[u8] {
        self.tables[child.value as usize].body()
    }
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use super::*;
    use crate::direct::{write_document_into, write_document_to};
    use crate::value::TypedData;

    /// Written into memory full of garbage, a document is the bytes streamed to a writer
    /// (which lays every container out again, empty ones too, and writes the data blocks
    /// after the structure rather than as the slots meet them).
    #[test]
    fn into_garbage_memory_writes_the_streamed_bytes() {
        let mut json = String::from(r#"{"e": [], "o": {}, "s": "text", "n": [1, -2, 3.5, null, true], "objs": ["#);
        for i in 0..300 {
            json +=
                &format!(r#"{{"k{i}": {i}, "s": "{}", "empty": [], "u": 18446744073709551615}},"#, "x".repeat(i % 17));
        }
        json += "{}]}";
        let Value::Object(mut map) = crate::json::parse(json.as_bytes()).unwrap() else { panic!("an object") };
        let typed = vec![
            Value::Typed(TypedArray::new(TypedData::U8(vec![1, 2, 3]))),
            Value::Typed(TypedArray::with_shape(TypedData::I16(vec![1, 2, 3, 4, 5, 6]), vec![2, 3]).unwrap()),
            Value::Typed(TypedArray::with_int_mask(vec![1.0, 2.5, 3.0], vec![3], vec![true, false, true]).unwrap()),
            Value::Typed(TypedArray::new(TypedData::F64(vec![0.5; 9]))),
        ];
        map.insert("typed".into(), Value::Array(typed));
        let value = Value::Object(map);

        let mut planner = Planner {
            levels: Levels::default(),
            keys: KeyTable::default(),
            blocks: Vec::new(),
            typed: Vec::new(),
            tables: Vec::new(),
            packed: Vec::new(),
            kept_whole: KeptWhole::default(),
            pack: None,
            max_depth: 128,
            shapes: KeyGuesses::default(),
            root_tag: tag::NULL,
        };
        let (tag, v, _) = planner.visit(&value, 0).unwrap();
        let root = Child { tag, key: 0, value: v };
        let source = Blocks { blocks: &planner.blocks, typed: &planner.typed, tables: &planner.tables, packed: &planner.packed };
        let keys = Keys { texts: planner.keys.texts(), hashes: planner.keys.hashes() };
        let layout = planner.levels.finish(keys, root, &source).unwrap();
        let mut streamed = Vec::new();
        write_document_to(&planner.levels, keys, &layout, &source, &mut streamed, 64).unwrap();
        let mut out = vec![MaybeUninit::new(0xAA); layout.end];
        let written = write_document_into(&planner.levels, keys, &layout, &source, &mut out);
        assert!(*written == *streamed);
        assert!(streamed == encode_value(&value, 128, None).unwrap());
        crate::validate(&streamed).unwrap();
    }
}

//! Packed objects (spec §13.7, tag 0x10): an object whose keys are data (plugins by name,
//! events by id) stored as the packed array of its entries `[key, value]`, the root a
//! tuple node whose position 0 holds the keys as one string column; or, in the whole
//! form, as a group of one element kept whole (§13.3), the object itself. Everything
//! about the layout of such a group lives here: which objects are packed, the checks a
//! reader makes on the group's shape, and reading the object, its keys, or one entry.

use super::group::{unshred_error, Group, PackOptions, PathStep};
use super::input::Input;
use super::residual::{self, JsonElement};
use super::shred::{kind, Role, OVER_BUDGET};
use super::{decode_budget, leaves_at_least, open_block, shred, write_block, MIN_GROUP_LEAVES};
use crate::error::{Error, Result};
use crate::value::{Map, Value};

/// An object of fewer entries than this keeps its keys in its container: its keys are
/// more likely a schema than data, and a packed object gives up lookups in place.
pub(crate) const MIN_OBJECT_ENTRIES: usize = 32;

/// The packed block of `object` (the content of a tag 0x10 block), whose `entries` are
/// its view's: its entries shredded, or the whole form where that is smaller; `None` when
/// it is too small to pack or neither form can be made. Nothing is copied: the shredder
/// reads each entry as the array `[key, value]` it stands for, and the whole form reads
/// the object.
pub(crate) fn pack_object<T: Input>(object: &T, entries: &[(T::Key, T)], options: &PackOptions) -> Result<Option<super::Packed>> {
    // An entry's key is one leaf: the values hold the rest.
    if entries.len() < MIN_OBJECT_ENTRIES || !leaves_at_least(entries.iter().map(|(_, v)| v), MIN_GROUP_LEAVES) {
        return Ok(None);
    }
    let shredded = write_block(shred::shred_entries(entries, options.stripe_values()), options)?;
    let pairs: Vec<Entry<'_, T>> = entries.iter().map(|(key, value)| Entry { key: key.as_ref(), value }).collect();
    super::or_residual_form(shredded, &pairs, || whole_group(object, options), options)
}

/// An entry of a packed object as its group holds it, the array `[key, value]`: what the
/// residual form's check writes and guesses the JSON text of.
struct Entry<'a, T> {
    key: &'a str,
    value: &'a T,
}

impl<T: Input> serde::Serialize for Entry<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(2))?;
        seq.serialize_element(self.key)?;
        seq.serialize_element(self.value)?;
        seq.end()
    }
}

impl<T: Input> JsonElement for Entry<'_, T> {
    fn json_exact(&self) -> bool {
        residual::json_exact(self.value)
    }
    /// As for the array: brackets, the quoted key, the value, a comma after each item.
    fn text_len_guess(&self) -> u64 {
        2 + (self.key.len() as u64 + 2 + 1) + (residual::text_len_guess(self.value) + 1)
    }
}

/// The packed block of `object` (whose `entries` are its view's) in the whole form
/// (§13.7), whatever its size, when its value has an exact JSON form: what the root of a
/// document that does not shred becomes.
pub(crate) fn pack_whole<T: Input>(object: &T, entries: &[(T::Key, T)], options: &PackOptions) -> Result<Option<Vec<u8>>> {
    if entries.is_empty() || !entries.iter().all(|(_, v)| residual::json_exact(v)) {
        return Ok(None);
    }
    write_block(whole_group(object, options), options)
}

fn whole_group<'v, T: Input>(object: &'v T, options: &PackOptions) -> Option<shred::Shredded<'v>> {
    shred::shred_residual(std::slice::from_ref(object), options.stripe_values())
}

/// How a packed object's group holds it (§13.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// Entries `[key, value]`, the keys in the string column of this node.
    Entries { keys: usize },
    /// One element kept whole: the object.
    Whole,
}

/// A packed object's group, its shape checked (§13.7): N ≥ 1 entries, the root a tuple
/// node of two positions holding arrays only, position 0 strings only; or one element
/// whose root node holds residual values only. Returns the group and its form.
pub(crate) fn open_object(buf: &[u8], payload: u64) -> Result<(Group<'_>, Form)> {
    let group = open_block(buf, payload)?;
    let bad = |m: &str| Error::malformed(payload, format!("packed object: {m} (spec §13.7)"));
    if group.len() == 0 {
        return Err(bad("no entries"));
    }
    let root = group.node(0);
    if root.kinds == 1 << kind::RESIDUAL && root.tuple.is_none() {
        if group.len() != 1 {
            return Err(bad("the whole form holds more than one element"));
        }
        return Ok((group, Form::Whole));
    }
    if root.tuple != Some(2) || root.kinds != 1 << kind::ARRAY {
        return Err(bad("the root node is not a tuple node of two positions"));
    }
    let keys = root.child(Role::Position(0)).ok_or_else(|| bad("no key node"))?;
    if group.node(keys).kinds != 1 << kind::STRING {
        return Err(bad("a key is not a string"));
    }
    Ok((group, Form::Entries { keys }))
}

/// The object of the packed block at `payload`, as the shredder stored its values (arrays
/// of numbers as arrays).
pub(crate) fn decode_object(buf: &[u8], payload: u64) -> Result<Value> {
    let (group, form) = open_object(buf, payload)?;
    let entries = group.elements(&mut decode_budget(buf.len()))?;
    if form == Form::Whole {
        return whole_object(entries, payload).map(Value::Object);
    }
    let mut map = Map::default();
    map.reserve(entries.len());
    for entry in entries {
        let (key, value) = split_entry(entry, payload)?;
        if map.insert(key, value).is_some() {
            return Err(Error::malformed(payload, "packed object repeats a key (spec §13.7)"));
        }
    }
    Ok(Value::Object(map))
}

/// The object a whole-form group's one element is.
fn whole_object(elements: Vec<Value>, payload: u64) -> Result<Map> {
    match <[Value; 1]>::try_from(elements) {
        Ok([Value::Object(map)]) if !map.is_empty() => Ok(map),
        _ => Err(Error::malformed(payload, "packed object: the whole form's element is not an object of entries (spec §13.7)")),
    }
}

/// The number of entries of the packed object at `payload` (the whole form decodes its
/// one element to count them).
pub(crate) fn entry_count(buf: &[u8], payload: u64) -> Result<usize> {
    match open_object(buf, payload)? {
        (group, Form::Entries { .. }) => Ok(group.len()),
        (group, Form::Whole) => Ok(whole_object(group.elements(&mut decode_budget(buf.len()))?, payload)?.len()),
    }
}

/// The keys of a packed object, in order, decoding only the key column.
pub(crate) fn keys(buf: &[u8], payload: u64) -> Result<Vec<String>> {
    match open_object(buf, payload)? {
        (group, Form::Entries { keys }) => keys_of(&group, keys, &mut decode_budget(buf.len())),
        (group, Form::Whole) => Ok(whole_object(group.elements(&mut decode_budget(buf.len()))?, payload)?.keys().cloned().collect()),
    }
}

fn keys_of(group: &Group, key_node: usize, budget: &mut u64) -> Result<Vec<String>> {
    let mut work = group.template();
    let mut keep = vec![false; work.nodes.len()];
    keep[0] = true;
    keep[key_node] = true;
    let mut totals = vec![0usize; group.column_count()];
    let mut keys = Vec::with_capacity(group.len());
    for s in 0..group.stripe_count() {
        let at = group.load_stripe(s, Some(&keep), &mut work, budget, &mut totals)?;
        let stripe = &work.nodes[key_node].texts;
        if stripe.len() != work.len {
            return Err(Error::malformed(at as u64, "packed object: a stripe's keys differ in number from its entries"));
        }
        let cost = (stripe.len() + stripe.total_len()) as u64;
        *budget = budget.checked_sub(cost).ok_or_else(|| unshred_error(OVER_BUDGET, at))?;
        keys.extend(stripe.iter().map(str::to_owned));
    }
    Ok(keys)
}

/// The value under `key` in the packed object at `payload` (`None`: no such key): the key
/// column, then the one stripe of the entry.
pub(crate) fn entry(buf: &[u8], payload: u64, key: &str) -> Result<Option<Value>> {
    let (group, form) = open_object(buf, payload)?;
    let mut budget = decode_budget(buf.len());
    let key_node = match form {
        Form::Entries { keys } => keys,
        Form::Whole => return Ok(whole_object(group.elements(&mut budget)?, payload)?.swap_remove(key)),
    };
    let Some(i) = keys_of(&group, key_node, &mut budget)?.iter().position(|k| k == key) else {
        return Ok(None);
    };
    let (_, value) = split_entry(group.element(i, &mut budget)?, payload)?;
    Ok(Some(value))
}

/// The path of `node` of a packed object's group below the object: the keys, or a value
/// (`{}`) and the steps below it.
pub(crate) fn path(group: &Group, node: usize) -> Vec<PathStep> {
    let mut steps = group.path(node);
    let mut top = node;
    while top != 0 && group.node(top).parent != 0 {
        top = group.node(top).parent;
    }
    match (group.node(top).role, steps.first_mut()) {
        (Some(Role::Position(0)), Some(first)) => *first = PathStep::EntryKey,
        (_, Some(first)) => *first = PathStep::Entry,
        // The root: no columns of its own, as a tuple node of arrays only.
        (_, None) => {}
    }
    steps
}

/// An entry's key and value (the group's shape guarantees a pair with a string first).
fn split_entry(entry: Value, at: u64) -> Result<(String, Value)> {
    if let Value::Array(pair) = entry {
        if let Ok([Value::String(key), value]) = <[Value; 2]>::try_from(pair) {
            return Ok((key, value));
        }
    }
    Err(Error::malformed(at, "packed object: an entry is not a key and a value"))
}

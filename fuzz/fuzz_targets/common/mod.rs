//! Helpers shared by the fuzz targets (each target includes this file as a module).
#![allow(dead_code)]

use leafwire::{Kind, Node, Value};

/// Nodes that also get the expensive probes (keys, indices, pointers from them).
pub const PROBED_NODES: usize = 40;
/// Deepest level the walk descends to (the core's own limit is 128).
pub const MAX_DEPTH: usize = 140;
pub const KEYS: [&str; 4] = ["", "a", "name", "0"];
pub const POINTERS: [&str; 8] = ["", "/", "/0", "/a", "/0/0/0", "/a/0/b", "/~0~1/-1", "/~2"];

/// Walks every node through every accessor of the lazy reader, spending at most
/// `budget` work units (nodes, elements, string bytes): the lazy reader does not detect
/// shared subtrees (spec §9), so a tiny unvalidated document can describe an
/// exponentially large tree.
pub struct Walk {
    pub budget: usize,
    probes: usize,
}

impl Walk {
    pub fn new(budget: usize) -> Walk {
        Walk { budget, probes: PROBED_NODES }
    }

    fn spend(&mut self, units: usize) -> bool {
        self.budget = self.budget.saturating_sub(units.max(1));
        self.budget > 0
    }

    pub fn node(&mut self, node: &Node<'_>, depth: usize) {
        if !self.spend(1) || depth > MAX_DEPTH {
            return;
        }
        let kind = node.kind();
        let _ = (node.offset(), node.is_null());
        // The accessor of the node's kind; the others (errors) only on probed nodes.
        match kind {
            Kind::Bool => drop(node.as_bool()),
            Kind::Int | Kind::UInt => drop((node.as_i64(), node.as_u64(), node.as_f64())),
            Kind::F64 => drop(node.as_f64()),
            Kind::F32 => drop((node.as_f32(), node.as_f64())),
            Kind::String => drop(node.as_str().map(|s| self.spend(s.len()))),
            Kind::Bytes => drop(node.as_bytes().map(|b| self.spend(b.len()))),
            Kind::BigNum => drop(node.as_bignum().map(|d| self.spend(d.len()))),
            _ => drop((node.len(), node.is_empty())),
        }
        match kind {
            Kind::TypedArray => self.typed(node),
            Kind::Array | Kind::Object | Kind::IntMap => self.container(node, kind, depth),
            _ => {}
        }
        if self.probes > 0 {
            self.probes -= 1;
            self.probe(node);
        }
    }

    /// Lookups by index, key and pointer from `node`, hits and misses alike.
    fn probe(&mut self, node: &Node<'_>) {
        let _ = (node.len(), node.as_bool(), node.as_i64(), node.as_u64(), node.as_f64(), node.as_f32());
        let _ = (node.as_str(), node.as_bytes(), node.as_bignum(), node.typed().map(|t| t.element_count()));
        if let Ok(len) = node.len() {
            for i in [0, len.saturating_sub(1), len, usize::MAX] {
                if let Ok(child) = node.at(i) {
                    let _ = child.kind();
                }
            }
        }
        for pointer in POINTERS {
            if let Ok(found) = node.pointer(pointer) {
                let _ = found.len();
            }
        }
        for key in KEYS {
            let _ = node.get(key).map(|n| n.kind());
        }
        for key in [0, -1, i64::MIN] {
            let _ = node.get_int(key).map(|n| n.kind());
        }
    }

    fn container(&mut self, node: &Node<'_>, kind: Kind, depth: usize) {
        let Ok(children) = node.iter() else { return };
        for child in children {
            if self.budget == 0 {
                return;
            }
            if let Ok(child) = child {
                self.node(&child, depth + 1);
            }
        }
        if kind == Kind::Object && self.probes > 0 {
            if let Ok(entries) = node.entries() {
                for (key, _) in entries.flatten().take(16) {
                    let _ = node.get(key).map(|n| n.kind());
                    let _ = node.pointer(&format!("/{}", key.replace('~', "~0").replace('/', "~1")));
                    if !self.spend(1) {
                        return;
                    }
                }
            }
        }
        if kind == Kind::IntMap && self.probes > 0 {
            if let Ok(entries) = node.int_entries() {
                for (key, _) in entries.flatten().take(16) {
                    let _ = node.get_int(key).map(|n| n.kind());
                    let _ = node.pointer(&format!("/{key}"));
                    if !self.spend(1) {
                        return;
                    }
                }
            }
        }
    }

    fn typed(&mut self, node: &Node<'_>) {
        let Ok(view) = node.typed() else { return };
        let _ = (view.element_type(), view.shape());
        let count = view.element_count();
        if !self.spend(count) {
            return;
        }
        let _ = view.bytes().len();
        for i in [0, count / 2, count.saturating_sub(1)] {
            if i < count {
                let _ = (view.element(i), view.is_masked_int(i));
            }
        }
        let _ = view.to_typed_array();
        let _ = node.as_slice::<f64>().map(|s| s.len());
        let _ = node.as_slice::<f32>().map(|s| s.len());
        let _ = node.as_slice::<i64>().map(|s| s.len());
        let _ = node.as_slice::<u32>().map(|s| s.len());
        let _ = node.as_slice::<i16>().map(|s| s.len());
        let _ = node.as_slice::<u8>().map(|s| s.len());
        // Rows of a matrix are nodes too.
        if view.shape().len() > 1 {
            if let Ok(rows) = node.iter() {
                for row in rows.flatten() {
                    if !self.spend(1) {
                        return;
                    }
                    let _ = (row.len(), row.typed().map(|r| r.element_count()));
                }
            }
        }
    }
}

/// Value equality where NaN equals NaN (bit for bit), -0.0 differs from 0.0, and an
/// integer mask of all zeros equals no mask.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && same(a, b)),
        (Value::IntMap(x), Value::IntMap(y)) => x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && same(a, b)),
        (Value::Typed(x), Value::Typed(y)) => {
            let mask = |t: &leafwire::TypedArray| t.int_mask().filter(|m| m.iter().any(|&b| b)).map(|m| m.to_vec());
            x.element_type() == y.element_type()
                && x.shape() == y.shape()
                && mask(x) == mask(y)
                && x.len() == y.len()
                && (0..x.len()).all(|i| same(&x.element(i), &y.element(i)))
        }
        _ => a == b,
    }
}

/// Whether `e` is `encode` refusing a typed array whose shape has more rows than the
/// canonical document has bytes (spec §5.2), while `validate` accepted it against the
/// longer original document: a known gap, fuzz/regressions/mutate_fields/shape-rows-vs-canonical-length.lw.
pub fn shape_rows_exceed_canonical_length(e: &leafwire::Error) -> bool {
    e.category() == leafwire::Category::LimitExceeded && e.message().contains("rows, more than")
}

/// Panics already recorded (fuzz/regressions/README.md) and not yet fixed, as (file
/// suffix, line, message, a function the backtrace must contain or ""). Only
/// `fuzz/campaign.sh` suppresses them (LEAFWIRE_FUZZ_SUPPRESS_KNOWN=1), so that a frequent
/// known panic does not end every run; the smoke test and `run.sh` still fail on them. An
/// entry stops matching as soon as the code moves.
const KNOWN_PANICS: &[(&str, u32, &str, &str)] = &[
    // None open. Entries look like
    // ("src/read/container.rs", 85, "attempt to subtract with overflow", ""), or, for a
    // panic inside the standard library, with a function of the backtrace:
    // ("iter/traits/accum.rs", 206, "attempt to multiply with overflow", "stride").
];

thread_local! {
    static SUPPRESS: bool = std::env::var_os("LEAFWIRE_FUZZ_SUPPRESS_KNOWN").is_some_and(|v| v == "1");
}

/// Runs a target's body; with LEAFWIRE_FUZZ_SUPPRESS_KNOWN=1, a panic listed in
/// `KNOWN_PANICS` ends the input quietly instead of the run. Any other panic aborts as
/// usual (the hook passes it on to libFuzzer's).
pub fn guard(body: impl FnOnce() + std::panic::UnwindSafe) {
    if !SUPPRESS.with(|s| *s) {
        return body();
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let known = info.location().is_some_and(|l| {
                let message = info.payload_as_str().unwrap_or("");
                KNOWN_PANICS.iter().any(|&(file, line, m, frame)| {
                    l.file().ends_with(file)
                        && l.line() == line
                        && message.contains(m)
                        && (frame.is_empty() || std::backtrace::Backtrace::force_capture().to_string().contains(frame))
                })
            });
            if !known {
                previous(info);
            }
        }));
    });
    let _ = std::panic::catch_unwind(body);
}

//! Arbitrary bytes as a Leafwire document: opening, walking every accessor, decoding,
//! JSON output and validation must return errors, never panic, hang or run out of memory.

#![no_main]

use leafwire::{AlignedBytes, Category, Document, Kind, Node};
use libfuzzer_sys::fuzz_target;

/// Work units (nodes, elements, string bytes) one walk may spend. The lazy reader does
/// not detect shared subtrees (spec §9), so a tiny unvalidated document can describe an
/// exponentially large tree; the walk stops at this budget instead.
const BUDGET: usize = 50_000;
/// Nodes that also get the expensive probes (keys, indices, pointers from them).
const PROBED_NODES: usize = 40;
/// Deepest level the walk descends to (the core's own limit is 128).
const MAX_DEPTH: usize = 140;
const KEYS: [&str; 4] = ["", "a", "name", "0"];
const POINTERS: [&str; 8] = ["", "/", "/0", "/a", "/0/0/0", "/a/0/b", "/~0~1/-1", "/~2"];

fuzz_target!(|data: &[u8]| {
    // 8-aligned, so zero-copy slices of typed arrays can succeed.
    let bytes = AlignedBytes::new(data);
    let Ok(doc) = Document::open(&bytes) else { return };
    let _ = (doc.record(), doc.key_count(), doc.as_bytes().len());
    for pointer in POINTERS {
        if let Ok(node) = doc.pointer(pointer) {
            let _ = (node.kind(), node.len());
        }
    }
    let mut walk = Walk { budget: BUDGET, probes: PROBED_NODES };
    walk.node(&doc.root(), 0);
    let validated = leafwire::validate(&bytes);
    // Decoding costs as much as a full walk: run it only on trees the walk finished.
    if walk.budget == 0 {
        return;
    }
    let value = doc.root().to_value();
    let json = leafwire::json::to_json(&bytes);
    if validated.is_ok() {
        // A valid document decodes; its value re-encodes into a valid canonical document
        // that is a fixed point of decode → encode (bytes compared, so NaN is fine).
        let value = value.expect("a validated document decodes");
        let canonical = leafwire::encode(&value).expect("a decoded value encodes");
        leafwire::validate(&canonical).expect("the encoder writes valid documents");
        let again = leafwire::decode(&canonical).expect("a canonical document decodes");
        assert_eq!(leafwire::encode(&again).expect("re-encode"), canonical, "canonical encoding is not a fixed point");
        if let Ok(json) = json {
            // Typed rows add JSON nesting, so only the depth limit may refuse the text.
            match leafwire::json::from_json(json.as_bytes()) {
                Ok(reparsed) => drop(leafwire::validate(&reparsed).expect("from_json writes valid documents")),
                Err(e) => assert_eq!(e.category(), Category::DepthLimit, "from_json refused to_json output: {e}"),
            }
        }
    }
});

struct Walk {
    budget: usize,
    probes: usize,
}

impl Walk {
    fn spend(&mut self, units: usize) -> bool {
        self.budget = self.budget.saturating_sub(units.max(1));
        self.budget > 0
    }

    fn node(&mut self, node: &Node<'_>, depth: usize) {
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

//! Deep validation: every rule of spec §9, each failure with its byte offset.

mod blocks;

use blocks::Blocks;

use crate::error::{Error, Result};
use crate::format::container::Geometry;
use crate::format::data;
use crate::format::dictionary::Dict;
use crate::format::typed::TypedHeader;
use crate::format::{self, hash, is_bignum_text, read_u32, read_uint, tag, ElementType, HEADER_LEN};
use crate::format::{header, integrity, FLAG_PACKED};
use crate::read::Document;
use crate::value::is_exact_integer;

/// Options of `validate_with`.
#[derive(Debug, Clone, Copy)]
pub struct ValidateOptions {
    /// Deepest nesting accepted (`Category::DepthLimit` beyond).
    pub max_depth: usize,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions { max_depth: format::DEFAULT_MAX_DEPTH }
    }
}

/// What a successful validation counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub containers: u64,
    pub scalars: u64,
    pub strings: u64,
    pub typed_arrays: u64,
    /// Packed arrays (spec §13).
    pub packed_arrays: u64,
    /// Packed objects (spec §13.7).
    pub packed_objects: u64,
    /// Tables (spec §15).
    pub tables: u64,
    pub keys: u64,
    /// Bytes inside blocks reachable from the root (header and padding excluded).
    pub reachable_bytes: u64,
    pub max_depth: usize,
}

/// Validates a whole document with the default options.
pub fn validate(bytes: &[u8]) -> Result<Stats> {
    validate_with(bytes, &ValidateOptions::default())
}

pub fn validate_with(bytes: &[u8], options: &ValidateOptions) -> Result<Stats> {
    let doc = Document::open(bytes)?;
    match walk(&doc, options, Blocks::bitmap(doc.as_bytes().len())) {
        Err(e) if e.message() == blocks::CONFLICT => walk(&doc, options, Blocks::exact()),
        other => other,
    }
}

/// One validation of `doc`, with §9.9 checked the way `blocks` does it.
fn walk(doc: &Document<'_>, options: &ValidateOptions, blocks: Blocks) -> Result<Stats> {
    let buf = doc.as_bytes();
    let dict = Dict::parse(buf, doc.record().dictionary)?;
    let mut v = Validator {
        buf,
        dict,
        options: *options,
        stats: Stats::default(),
        blocks,
        scratch: Vec::new(),
        key_hashes: Vec::new(),
        key_seen: Vec::new(),
        containers_seen: 0,
    };
    if integrity::is_on(buf) {
        // Checked first: a changed byte explains whatever else looks wrong.
        let end = buf.len();
        let table = integrity::verify(buf, end)?;
        v.blocks.claim(table.at as u64, table.end() as u64)?;
        v.blocks.claim((end - integrity::LOCATOR_LEN) as u64, end as u64)?;
    }
    if doc.record().dictionary != 0 {
        v.dictionary()?;
    }
    v.value(doc.record().root_tag, doc.record().root, 0)?;
    if header::flags(buf) & FLAG_PACKED != 0 && v.stats.packed_arrays + v.stats.packed_objects == 0 {
        return Err(Error::malformed(10, "feature bit 0 (packed) set in a document without packed arrays or objects"));
    }
    v.blocks.finish()?;
    Ok(v.stats)
}

struct Validator<'a> {
    buf: &'a [u8],
    dict: Dict,
    options: ValidateOptions,
    stats: Stats,
    /// Every block, to prove the value is a tree (§9.9).
    blocks: Blocks,
    scratch: Vec<u64>,
    /// `key_hash` of every dictionary key, by id: objects' hash indexes are checked
    /// against these instead of rehashing a key per use.
    key_hashes: Vec<u64>,
    /// Per key id, the serial of the last object that used it (duplicate-key check
    /// without sorting).
    key_seen: Vec<u32>,
    containers_seen: u32,
}

impl<'a> Validator<'a> {
    fn dictionary(&mut self) -> Result<()> {
        let pos = self.dict.pos();
        let count = self.dict.count() as u64;
        let mut keys: Vec<&[u8]> = Vec::with_capacity(count as usize);
        for id in 0..count {
            keys.push(self.dict.key_str(self.buf, id)?.as_bytes());
        }
        self.key_hashes = keys.iter().map(|k| hash::key_hash(k)).collect();
        self.key_seen = vec![0; count as usize];
        let (table_at, table_size) = self.dict.table();
        if table_size == 0 {
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(Error::malformed(pos as u64, "the dictionary holds a key twice"));
            }
        } else {
            let entry = |b: usize| read_u32(self.buf, table_at + 4 * b).unwrap() as u64;
            let used = (0..table_size).filter(|&b| entry(b) != 0).count() as u64;
            if used != count || (0..table_size).any(|b| entry(b) > count) {
                return Err(Error::malformed(
                    table_at as u64,
                    format!("dictionary table holds {used} entries for {count} keys"),
                ));
            }
            // Walking from each key's home bucket to its own entry proves it reachable;
            // a second copy of a key would share its hash and home bucket, so one of the
            // two walks passes the other's entry.
            for (id, key) in keys.iter().enumerate() {
                let hash = self.key_hashes[id];
                let mut bucket = hash::home_bucket(hash, table_size);
                loop {
                    match entry(bucket) {
                        0 => {
                            return Err(Error::malformed(
                                table_at as u64,
                                format!("dictionary table cannot reach key {id}"),
                            ))
                        }
                        e if e == id as u64 + 1 => break,
                        e if self.key_hashes[e as usize - 1] == hash && keys[e as usize - 1] == *key => {
                            return Err(Error::malformed(pos as u64, "the dictionary holds a key twice"));
                        }
                        _ => bucket = (bucket + 1) & (table_size - 1),
                    }
                }
            }
        }
        self.stats.keys = count;
        self.claim(pos as u64, self.dict.end() as u64)
    }

    fn value(&mut self, t: u8, payload: u64, depth: usize) -> Result<()> {
        self.stats.max_depth = self.stats.max_depth.max(depth);
        match t {
            tag::STRING => self.string(payload),
            tag::BYTES => {
                self.data(payload)?;
                Ok(())
            }
            tag::BIGNUM => {
                let bytes = self.data(payload)?;
                if !is_bignum_text(bytes) {
                    return Err(Error::malformed(payload, "bignum is not decimal digits"));
                }
                let digits = std::str::from_utf8(bytes).expect("decimal digits are ASCII");
                if digits.parse::<i64>().is_ok() || digits.parse::<u64>().is_ok() {
                    return Err(Error::malformed(
                        payload,
                        format!("bignum {digits} fits in 64 bits; it must be an int or uint"),
                    ));
                }
                Ok(())
            }
            tag::TYPED => self.typed(payload),
            tag::TABLE => {
                self.stats.tables += 1;
                let end = crate::format::table::check_table(self.buf, payload)?;
                self.claim(payload, end as u64)
            }
            tag::PACKED | tag::PACKED_OBJECT => self.packed(t, payload, depth),
            tag::ARRAY | tag::OBJECT | tag::INTMAP => {
                if depth >= self.options.max_depth {
                    return Err(Error::depth_limit(self.options.max_depth).at(payload));
                }
                self.blocks.enter(payload)?;
                let c = Geometry::parse(self.buf, payload, t)?;
                self.container(&c, depth)
            }
            _ => {
                self.stats.scalars += 1;
                Ok(())
            }
        }
    }

    fn container(&mut self, c: &Geometry, depth: usize) -> Result<()> {
        self.stats.containers += 1;
        let pos = c.pos as u64;
        self.claim(pos, c.end as u64)?;
        let buf = self.buf;
        // Only a container with a capacity field has spare positions (canonical ones do not).
        let spare_is_zero = c.capacity == c.count
            || (c.tags(buf)[c.count..].iter().all(|&b| b == 0)
                && c.keys(buf)[c.count * c.key_width as usize..].iter().all(|&b| b == 0)
                && c.slots(buf)[c.count * c.width as usize..].iter().all(|&b| b == 0));
        if !spare_is_zero {
            return Err(Error::malformed(pos, "spare capacity of a container is not zero"));
        }
        match c.tag {
            tag::OBJECT => self.object_keys(c)?,
            tag::INTMAP => self.int_keys(c)?,
            _ => {}
        }
        if c.has_index() {
            self.index(c)?;
        }
        if c.count > 0 {
            self.stats.max_depth = self.stats.max_depth.max(depth + 1);
        }
        // Scalars, most children, are checked here from their tag alone (a uint also needs
        // its payload); only blocks are followed.
        let tags = &buf[c.tags_at..c.tags_at + c.count];
        let width = c.width as usize;
        let mut scalars = 0;
        for (i, &t) in tags.iter().enumerate() {
            if t < tag::STRING && tag::fits_slot(t, width) {
                if t == tag::UINT {
                    let payload = read_uint(&buf[c.slots_at..], width, i);
                    if payload <= i64::MAX as u64 {
                        return Err(Error::malformed(
                            pos,
                            format!("child {i}: uint {payload} fits in i64; it must be an int"),
                        ));
                    }
                }
                scalars += 1;
                continue;
            }
            let (t, payload) = c.child(buf, i)?;
            if tag::is_pointer(t) && (payload < HEADER_LEN as u64 || payload >= buf.len() as u64) {
                return Err(Error::malformed(pos, format!("child {i} points outside the document (offset {payload})")));
            }
            self.value(t, payload, depth + 1)?;
        }
        self.stats.scalars += scalars;
        Ok(())
    }

    /// Every key id names a dictionary key, and none appears twice in the object.
    fn object_keys(&mut self, c: &Geometry) -> Result<()> {
        self.containers_seen += 1;
        let serial = self.containers_seen;
        if c.key_width == 1 {
            // Most documents have fewer than 256 keys: one byte per key id.
            let ids = &self.buf[c.keys_at..c.keys_at + c.count];
            for &id in ids {
                match self.key_seen.get_mut(id as usize) {
                    Some(seen) if *seen != serial => *seen = serial,
                    _ => return self.bad_key(c, id as u64),
                }
            }
            return Ok(());
        }
        for i in 0..c.count {
            let id = c.key(self.buf, i);
            let Some(seen) = self.key_seen.get_mut(id as usize) else {
                return Err(Error::malformed(
                    c.pos as u64,
                    format!("key id {id} is not in the dictionary of {} keys", self.dict.count()),
                ));
            };
            if *seen == serial {
                return Err(Error::malformed(c.pos as u64, "a container has the same key twice"));
            }
            *seen = serial;
        }
        Ok(())
    }

    #[cold]
    fn bad_key(&self, c: &Geometry, id: u64) -> Result<()> {
        if id >= self.key_seen.len() as u64 {
            return Err(Error::malformed(
                c.pos as u64,
                format!("key id {id} is not in the dictionary of {} keys", self.dict.count()),
            ));
        }
        Err(Error::malformed(c.pos as u64, "a container has the same key twice"))
    }

    fn int_keys(&mut self, c: &Geometry) -> Result<()> {
        self.scratch.clear();
        self.scratch.extend((0..c.count).map(|i| c.key(self.buf, i)));
        self.scratch.sort_unstable();
        if self.scratch.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::malformed(c.pos as u64, "a container has the same key twice"));
        }
        Ok(())
    }

    fn index(&mut self, c: &Geometry) -> Result<()> {
        let index = c.index_bytes(self.buf);
        let table = c.index_table();
        let entry = |b: usize| read_uint(index, c.index_entry as usize, b) as usize;
        let used = (0..table).filter(|&b| entry(b) != 0).count();
        if used != c.count || (0..table).any(|b| entry(b) > c.count) {
            return Err(Error::malformed(
                c.pos as u64,
                format!("hash index holds {used} entries for {} children", c.count),
            ));
        }
        for i in 0..c.count {
            // Object keys were checked against the dictionary by `object_keys`.
            let key = c.key(self.buf, i);
            let hash = if c.tag == tag::OBJECT { self.key_hashes[key as usize] } else { key };
            let mut bucket = hash::home_bucket(hash, table);
            loop {
                match entry(bucket) {
                    0 => return Err(Error::malformed(c.pos as u64, format!("hash index cannot reach child {i}"))),
                    e if e == i + 1 => break,
                    _ => bucket = (bucket + 1) & (table - 1),
                }
            }
        }
        Ok(())
    }

    fn string(&mut self, offset: u64) -> Result<()> {
        let bytes = self.data(offset)?;
        data::text(bytes, offset)?;
        self.stats.strings += 1;
        Ok(())
    }

    /// The content of the data block at `offset`, its whole block recorded.
    fn data(&mut self, offset: u64) -> Result<&'a [u8]> {
        let (start, end) = data::span(self.buf, offset)?;
        self.claim(offset, end as u64)?;
        Ok(&self.buf[start..end])
    }

    /// A packed array or object (spec §13): its group decoded whole, which checks feature
    /// bit 0, every rule of §13.6 and, for an object, §13.7's.
    fn packed(&mut self, t: u8, offset: u64, depth: usize) -> Result<()> {
        self.data(offset)?;
        if t == tag::PACKED_OBJECT {
            self.stats.packed_objects += 1;
        } else {
            self.stats.packed_arrays += 1;
        }
        // Decoded as `decode` decodes it: the array counts toward the nesting limit.
        let depth_left = self.options.max_depth.saturating_sub(depth);
        if depth_left == 0 {
            return Err(Error::depth_limit(self.options.max_depth).at(offset));
        }
        crate::packed::decode_block_typed(self.buf, t, offset, depth_left).map_err(|e| e.at(offset))?;
        Ok(())
    }

    fn typed(&mut self, offset: u64) -> Result<()> {
        self.stats.typed_arrays += 1;
        let h = TypedHeader::parse(self.buf, offset)?;
        let size = h.element.size();
        let data = &self.buf[h.data_pos..h.data_pos + h.count * size];
        if h.element == ElementType::Bool && data.iter().any(|&b| b > 1) {
            return Err(Error::malformed(offset, "a bool typed array holds a byte other than 0 or 1"));
        }
        if let Some(mask_pos) = h.mask_pos {
            for i in 0..h.count {
                let masked = self.buf[mask_pos + i / 8] >> (i % 8) & 1 == 1;
                let v = f64::from_le_bytes(data[i * 8..i * 8 + 8].try_into().unwrap());
                if masked && !is_exact_integer(v) {
                    return Err(Error::malformed(offset, format!("masked element {i} ({v}) is not an exact integer")));
                }
            }
        }
        self.claim(offset, h.end() as u64)
    }

    fn claim(&mut self, start: u64, end: u64) -> Result<()> {
        self.stats.reachable_bytes += end - start;
        self.blocks.claim(start, end)
    }
}

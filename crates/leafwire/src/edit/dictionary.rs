//! Growing the key dictionary (spec §§6, 8.2): new keys go into spare room when there is
//! some, else the dictionary is copied to `end` with room for half as many again.

use crate::format::sink::ByteSink;
use super::write::broken;
use super::Editor;
use crate::error::Result;
use crate::format::dictionary::{self, Dict};
use crate::format::{align, hash, write_uint};

impl Editor {
    /// The document's dictionary.
    pub(super) fn dictionary(&self) -> Result<Dict> {
        Dict::parse(&self.buf, self.record.dictionary)
    }

    /// The dictionary id of `key`, adding it (in place if there is room, else by
    /// relocating the dictionary with spare capacity) when it is new.
    pub(super) fn ensure_key(&mut self, key: &str) -> Result<u64> {
        let dict = self.dictionary()?;
        let h = hash::key_hash(key.as_bytes());
        if let Some(id) = dict.find(&self.buf, key.as_bytes(), h)? {
            return Ok(id);
        }
        let at = dict.pos();
        let (count, (table_at, table_size)) = (dict.count() as usize, dict.table());
        if at != 0 {
            let used = dict.offset(&self.buf, count);
            let room = count < dict.capacity() as usize && used + key.len() <= dict.bytes_capacity() as usize;
            if room && table_size != 0 {
                let bytes_at = dict.bytes_at();
                self.touch(bytes_at + used, key.len());
                self.buf[bytes_at + used..bytes_at + used + key.len()].copy_from_slice(key.as_bytes());
                let offset_at = dict.offsets_at() + 4 * (count + 1);
                self.touch(offset_at, 4);
                write_uint(&mut self.buf, offset_at, 4, (used + key.len()) as u64);
                self.touch(at, 4);
                write_uint(&mut self.buf, at, 4, count as u64 + 1);
                let entry_at = table_at + hash::insert(&mut self.buf[table_at..table_at + 4 * table_size], 4, h, count);
                self.touch(entry_at, 4);
                return Ok(count as u64);
            }
        }
        let new_at = self.grow_dictionary(&dict, key.as_bytes())?;
        if at != 0 {
            self.zero(at, dict.end());
        }
        self.record.dictionary = new_at as u64;
        Ok(count as u64)
    }

    /// Appends a copy of `dict` (empty: none yet) with `key` added and spare room for half
    /// as many ids and bytes again; returns the copy's offset. Offsets and key bytes are
    /// copied as they are (ids keep their order); the table is kept when it has room for the
    /// new key (as for containers, spec §8.2), else rebuilt.
    fn grow_dictionary(&mut self, dict: &Dict, key: &[u8]) -> Result<usize> {
        let count = dict.count() as usize;
        let used = if dict.pos() == 0 { 0 } else { dict.offset(&self.buf, count) };
        let (new_count, total) = (count + 1, used + key.len());
        let (old_table_at, old_table) = dict.table();
        let keep_table = old_table != 0 && old_table / 2 >= new_count;
        let cap = if keep_table { old_table / 2 } else { (new_count + new_count / 2).max(8) };
        let bytes_cap = (total + total / 2).max(64);
        let table_size = hash::dictionary_table_size(cap);
        let too_big = || broken(dict.pos(), "a dictionary over 4 GiB");
        if [new_count, cap, bytes_cap, table_size].iter().any(|&f| f > u32::MAX as usize) {
            return Err(too_big());
        }

        let new_at = align(self.buf.len(), 4);
        let (offsets_at, bytes_at, table_at, end) = dictionary::layout(new_at, cap, bytes_cap, table_size).ok_or_else(too_big)?;
        self.buf.resize(end, 0);
        for (i, field) in [new_count, cap, bytes_cap, table_size].into_iter().enumerate() {
            write_uint(&mut self.buf, new_at + 4 * i, 4, field as u64);
        }
        if dict.pos() != 0 {
            self.buf.copy_within(dict.offsets_at()..dict.offsets_at() + 4 * (count + 1), offsets_at);
            self.buf.copy_within(dict.bytes_at()..dict.bytes_at() + used, bytes_at);
        }
        for id in new_count..=cap {
            write_uint(&mut self.buf, offsets_at + 4 * id, 4, total as u64);
        }
        self.buf[bytes_at + used..bytes_at + total].copy_from_slice(key);

        let table = table_at..end;
        if keep_table {
            self.buf.copy_within(old_table_at..old_table_at + 4 * old_table, table_at);
            hash::insert(&mut self.buf[table], 4, hash::key_hash(key), count);
            return Ok(new_at);
        }
        let offset = |buf: &[u8], id: usize| u32::from_le_bytes(buf[offsets_at + 4 * id..offsets_at + 4 * id + 4].try_into().unwrap()) as usize;
        let hashes: Vec<u64> = (0..new_count).map(|id| hash::key_hash(&self.buf[bytes_at + offset(&self.buf, id)..bytes_at + offset(&self.buf, id + 1)])).collect();
        hash::fill(&mut self.buf[table], 4, hashes);
        Ok(new_at)
    }
}

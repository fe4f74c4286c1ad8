//! Keeping page checksums (spec §2.3) true across edits: every edit ends by recomputing
//! the entries of the pages it changed, moving the locator to the new end when blocks were
//! appended, and moving the table to the end with room to spare when the document
//! outgrows it. The entries are written in place like any other change, so a file commit
//! journals them with the rest (spec §8.4).

use super::Editor;
use crate::error::Result;
use crate::format::integrity::{self, Table, LOCATOR_LEN};

pub(super) struct Checksums {
    pub table: Table,
    /// The document's end when the checksums were last true; the locator ends there.
    pub sealed_end: usize,
    /// Ranges changed since then (appended bytes are implied by `sealed_end`).
    pub stale: Vec<(usize, usize)>,
}

impl Checksums {
    /// The state of a document with checksums whose bytes end at `end`.
    pub fn open(buf: &[u8], end: usize) -> Result<Checksums> {
        Ok(Checksums { table: integrity::parse(buf, end)?, sealed_end: end, stale: Vec::new() })
    }
}

impl Editor {
    /// Makes the checksums true again for the bytes as they are.
    pub(super) fn reseal(&mut self) -> Result<()> {
        let Some(sums) = self.checksums.as_ref() else { return Ok(()) };
        let (sealed_end, old_table) = (sums.sealed_end, sums.table);
        if self.buf.len() > sealed_end {
            // Blocks were appended after the locator: it becomes garbage, and a new one ends
            // the document, after a bigger table when the old one is full.
            self.zero(sealed_end - LOCATOR_LEN, sealed_end);
            let needed = integrity::pages(self.buf.len() + LOCATOR_LEN);
            if needed > old_table.capacity {
                let capacity = integrity::capacity_for(self.buf.len(), needed / 2);
                let at = integrity::append_table(&mut self.buf, capacity);
                let mut table = Table { at, count: 0, capacity };
                integrity::set_count(&mut self.buf, &mut table, old_table.count);
                let entries = old_table.entry_at(0)..old_table.entry_at(old_table.count);
                self.buf.copy_within(entries, table.entry_at(0));
                self.zero(old_table.at, old_table.end());
                self.checksums.as_mut().expect("checked above").table = table;
            }
            let table_at = self.checksums.as_ref().expect("checked above").table.at;
            integrity::append_locator(&mut self.buf, table_at);
        }
        let end = self.buf.len();
        let sums = self.checksums.as_mut().expect("checked above");
        let mut table = sums.table;
        let mut pages: Vec<usize> = std::mem::take(&mut sums.stale)
            .into_iter()
            .flat_map(|(start, stop)| start / integrity::PAGE..stop.div_ceil(integrity::PAGE))
            .chain((sealed_end - LOCATOR_LEN) / integrity::PAGE..integrity::pages(end))
            .filter(|&p| p < integrity::pages(end))
            .collect();
        pages.sort_unstable();
        pages.dedup();
        if table.count != integrity::pages(end) {
            // Written only when it changes: each field written is a page for the commit to flush.
            self.touch_journal(table.at + 4, 4);
            integrity::set_count(&mut self.buf, &mut table, integrity::pages(end));
        }
        for &page in &pages {
            self.touch_journal(table.entry_at(page), 4);
        }
        integrity::update(&mut self.buf, &table, end, pages);
        let sums = self.checksums.as_mut().expect("checked above");
        sums.table = table;
        sums.sealed_end = end;
        Ok(())
    }

    /// A compacted document gets checksums again when it had them.
    pub(super) fn reseal_compacted(&mut self, bytes: &mut Vec<u8>) -> Result<()> {
        if self.checksums.is_some() {
            integrity::seal(bytes)?;
            self.checksums = Some(Checksums::open(bytes, bytes.len())?);
        }
        Ok(())
    }
}

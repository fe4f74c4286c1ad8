//! Editing a file with atomic commits that cost the edit (spec §§8.4–8.5).
//!
//! The editor changes its bytes in place, as in memory, and remembers which bytes of the
//! committed version it changed. A commit appends the new blocks, then a redo journal of
//! those changed bytes, flushes, writes the inactive root record naming the journal,
//! flushes, applies the journal in place, flushes, and finally writes a root record without
//! the journal flag to the other slot and flushes, which frees the journal's space. An
//! 8-byte change writes a few hundred bytes, whatever the file's size, and leaves no
//! garbage.

use crate::format::sink::ByteSink;
use std::fs::OpenOptions;
use std::path::Path;

#[cfg(unix)]
use super::bytes::mapped::MappedBuf;
use super::bytes::EditBytes;
use super::io::{self, CommitIo, FileIo, HookedIo};
use super::{Editor, Trust};
use crate::error::{Category, Error, Result};
use crate::format::header::{active_record, RootRecord};
use crate::format::journal::{self, Entry};
use crate::format::{RECORD_A, RECORD_B, RECORD_LEN};

pub(super) struct FileState {
    /// Every file operation of a commit goes through this seam (tests/crash_states.rs).
    io: Box<dyn CommitIo>,
    /// Bytes below this may belong to a version a root record on disk names: a change to
    /// them reaches the file only through a journal.
    pub committed_end: usize,
    /// Ranges below `committed_end` changed since the last finished commit, unsorted.
    pub dirty: Vec<(usize, usize)>,
    /// An edit happened since the last commit.
    pub changed: bool,
    /// Compaction replaced the whole document: the next commit writes a new file.
    pub rewrite: bool,
}

/// How an editor gets a file's bytes.
#[derive(PartialEq)]
enum Load {
    Read,
    #[cfg_attr(not(unix), allow(dead_code))]
    Map,
}

/// Zeroes are written in chunks of this size when a journal's zero entry is applied.
const ZERO_CHUNK: usize = 64 << 10;

impl Editor {
    /// Opens a Leafwire file for editing; changes reach the file only on
    /// [`Editor::commit`]. The file is read into memory and validated first. A commit that
    /// a crash interrupted is finished in memory (its journal applied), and on disk by the
    /// next commit. [`Editor::map_file`] opens without reading the file.
    pub fn open_file(path: impl AsRef<Path>) -> Result<Editor> {
        Editor::open_file_with(path, Trust::Untrusted)
    }

    /// [`Editor::open_file`], validating as `trust` says.
    pub fn open_file_with(path: impl AsRef<Path>, trust: Trust) -> Result<Editor> {
        Editor::open_path(path.as_ref(), None, Load::Read, trust)
    }

    /// Opens a Leafwire file for editing through a private copy-on-write mapping (on Unix;
    /// elsewhere it is read): opening reads the header, and with [`Trust::Trusted`] nothing
    /// else, so it costs O(1) whatever the file's size; memory then holds only the pages
    /// edits change and the blocks they append. With [`Trust::Untrusted`] the document is
    /// validated through the mapping (reading it once, holding none of it).
    ///
    /// # Safety
    ///
    /// As for [`crate::MappedFile::open`]: no other process may modify or truncate the file
    /// while the editor lives (this editor's own commits are fine).
    pub unsafe fn map_file(path: impl AsRef<Path>, trust: Trust) -> Result<Editor> {
        Editor::open_path(path.as_ref(), None, Load::Map, trust)
    }

    /// Test seam of spec §8.4 (tests/crash_states.rs): [`Editor::open_file`], with `hook`
    /// called before every file operation of a commit with the operation's name
    /// (`write`, `sync`, `create-replacement`, `write-replacement`, `sync-replacement`,
    /// `rename`, `sync-dir`), its offset and its bytes; an error the hook returns fails
    /// that operation instead of performing it. Not part of the stable API.
    #[doc(hidden)]
    pub fn open_file_with_io_hook(path: impl AsRef<Path>, hook: io::Hook) -> Result<Editor> {
        Editor::open_path(path.as_ref(), Some(hook), Load::Read, Trust::Untrusted)
    }

    /// [`Editor::open_file_with_io_hook`] through [`Editor::map_file`].
    ///
    /// # Safety
    ///
    /// As for [`Editor::map_file`].
    #[doc(hidden)]
    pub unsafe fn map_file_with_io_hook(path: impl AsRef<Path>, hook: io::Hook) -> Result<Editor> {
        Editor::open_path(path.as_ref(), Some(hook), Load::Map, Trust::Untrusted)
    }

    fn open_path(path: &Path, hook: Option<io::Hook>, load: Load, trust: Trust) -> Result<Editor> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let mut bytes = match load {
            #[cfg(unix)]
            Load::Map => {
                let len = usize::try_from(file.metadata()?.len()).map_err(|_| Error::new(Category::LimitExceeded, "file too large to map"))?;
                // SAFETY: `map_file`'s caller promises that no one else changes the file.
                EditBytes::Mapped(unsafe { MappedBuf::map(&file, len) }?)
            }
            _ => EditBytes::Owned(std::fs::read(path)?),
        };
        // An interrupted commit: its changes are in memory once the journal is applied, and
        // stay dirty, so that the next commit writes them again (the journal on disk stays
        // valid until then).
        let (record, active_at) = active_record(&bytes)?;
        let mut unfinished: Vec<(usize, usize)> = Vec::new();
        let mut journal_end = 0;
        if record.journal {
            let entries = journal::parse(&bytes, record.generation, record.end)?;
            unfinished = entries.iter().map(|e| (e.at, e.at + e.len)).collect();
            journal_end = journal::extent(&bytes, record.end)?;
            journal::finish(&mut bytes)?;
        }
        let mut ed = Editor::from_bytes(bytes, trust)?;
        // Editor::new picks the slot whose bytes match the record; after a finished journal
        // that is still the slot the file's active record is in.
        debug_assert_eq!(ed.record_at, active_at);
        let real = FileIo::new(file, path.to_path_buf());
        let io: Box<dyn CommitIo> = match hook {
            Some(hook) => Box::new(HookedIo::new(real, hook)),
            None => Box::new(real),
        };
        let committed_end = ed.buf.len();
        ed.file = Some(super::file::FileState { io, committed_end, dirty: unfinished, changed: false, rewrite: false });
        if journal_end > 0 {
            ed.keep_journal(journal_end);
            ed.file.as_mut().expect("set above").changed = true;
        }
        ed.start_generation();
        Ok(ed)
    }

    /// Points the next edits at the inactive root record, one generation on.
    fn start_generation(&mut self) {
        self.record_at = if self.record_at == RECORD_A { RECORD_B } else { RECORD_A };
        self.record.generation += 1;
    }

    /// Notes that bytes `at..at + len` are about to change: their pages' checksums are
    /// recomputed when the edit ends, and below the committed end they go into the next
    /// commit's journal.
    #[inline]
    pub(super) fn touch(&mut self, at: usize, len: usize) {
        if let Some(sums) = self.checksums.as_mut() {
            if len > 0 {
                sums.stale.push((at, at + len));
            }
        }
        self.touch_journal(at, len);
    }

    /// [`Editor::touch`] for bytes no checksum covers (the checksum table's own).
    #[inline]
    pub(super) fn touch_journal(&mut self, at: usize, len: usize) {
        if let Some(fs) = self.file.as_mut() {
            if at < fs.committed_end && len > 0 {
                fs.dirty.push((at, (at + len).min(fs.committed_end)));
                if fs.dirty.len() >= 4096 && fs.dirty.len().is_power_of_two() {
                    coalesce(&mut fs.dirty);
                }
            }
        }
    }

    /// Records that an edit happened (a commit without one writes nothing).
    pub(super) fn note_change(&mut self) {
        if let Some(fs) = self.file.as_mut() {
            fs.changed = true;
        }
    }

    /// Makes the edits since the last commit durable and atomic (spec §8.4). After
    /// compaction, writes a new file and renames it over the old one instead.
    pub fn commit(&mut self) -> Result<()> {
        let Some(fs) = self.file.as_mut() else {
            return Err(Error::new(Category::Io, "commit needs an editor opened with Editor::open_file"));
        };
        if fs.rewrite {
            fs.io.create_replacement()?;
            fs.io.write_replacement(0, &self.buf)?;
            fs.io.sync_replacement()?;
            fs.io.install_replacement()?;
            fs.io.sync_dir()?;
            fs.rewrite = false;
            fs.changed = false;
            fs.committed_end = self.buf.len();
            fs.dirty.clear();
            self.start_generation();
            return Ok(());
        }
        if !fs.changed {
            return Ok(());
        }
        // Checksums cover everything up to the end that is committed (after recovering an
        // interrupted commit, the old journal's space was added since the last edit).
        self.reseal()?;
        self.record.end = self.buf.len() as u64;
        let fs = self.file.as_mut().expect("a file editor");
        coalesce(&mut fs.dirty);
        let changes = fs.dirty.clone();
        let end = self.buf.len();
        let journal = if changes.is_empty() { Vec::new() } else { journal_bytes(&self.buf, &changes, self.record.generation) };

        // (1) The new blocks and the journal, past the committed version.
        fs.io.write_at(fs.committed_end as u64, &self.buf[fs.committed_end..end])?;
        if !journal.is_empty() {
            fs.io.write_at(journal::position(end as u64), &journal)?;
        }
        fs.io.sync_data()?;

        // (2) The root record. From here it may reach the disk even if writing or syncing it
        // fails (a failed write can still reach the page cache): what it names is frozen, and
        // a retry writes the same slot and generation with a journal of everything since.
        let at = self.record_at;
        self.record.end = end as u64;
        self.record.journal = !journal.is_empty();
        self.record.write(&mut self.buf[at..at + RECORD_LEN]);
        let written = fs.io.write_at(at as u64, &self.buf[at..at + RECORD_LEN]).and_then(|()| fs.io.sync_data());
        // In memory the journal is applied already: the slot reads as a finished commit.
        self.record.journal = false;
        self.record.write(&mut self.buf[at..at + RECORD_LEN]);
        let finished = self.record;
        let journal_end = if journal.is_empty() { end } else { journal::position(end as u64) as usize + journal.len() };
        self.file.as_mut().expect("a file editor").committed_end = end;
        if let Err(err) = written {
            self.keep_journal(journal_end);
            return Err(err.into());
        }

        // Durable from here on. (3) Apply the journal in place and flush, (4) say so with a
        // record without the flag in the other slot, and flush: the journal is then free.
        // Until (4) is on disk a crash means applying the journal again, so when (3) or (4)
        // fails the journal is kept (the next commit appends after it, and frees it).
        self.start_generation();
        if journal.is_empty() {
            self.file.as_mut().expect("a file editor").changed = false;
            return Ok(());
        }
        let fs = self.file.as_mut().expect("a file editor");
        let applied = apply_in_place(fs.io.as_mut(), &self.buf, &changes).and_then(|()| fs.io.sync_data());
        if let Err(err) = applied {
            // The changes stay dirty: the next commit journals them again, in the record
            // slot after this one.
            self.keep_journal(journal_end);
            return Err(Error::new(Category::Io, format!("the commit is durable, but applying its journal in place failed (redone at the next commit or open): {err}")));
        }
        let at = self.record_at;
        let clean = RootRecord { generation: self.record.generation, ..finished };
        clean.write(&mut self.buf[at..at + RECORD_LEN]);
        let cleared = fs.io.write_at(at as u64, &self.buf[at..at + RECORD_LEN]).and_then(|()| fs.io.sync_data());
        fs.dirty.clear();
        if let Err(err) = cleared {
            // The next commit writes this slot again; the journal's record stays the durable one.
            self.keep_journal(journal_end);
            return Err(Error::new(Category::Io, format!("the commit is durable and applied, but clearing its journal flag failed (done at the next commit): {err}")));
        }
        fs.changed = false;
        self.start_generation();
        Ok(())
    }

    /// Extends the bytes to `journal_end` with zeros, counted as garbage and dirty: the file
    /// holds a journal there that the next version no longer needs.
    fn keep_journal(&mut self, journal_end: usize) {
        let end = self.buf.len();
        if journal_end <= end {
            return;
        }
        self.buf.resize(journal_end, 0);
        self.record.garbage += (journal_end - end) as u64;
        let fs = self.file.as_mut().expect("a file editor");
        fs.committed_end = journal_end;
        fs.dirty.push((end, journal_end));
    }

    /// Compaction of a file: the document is rewritten in memory, and the next commit
    /// replaces the file.
    pub(super) fn compacted_file(&mut self) {
        if let Some(fs) = self.file.as_mut() {
            fs.rewrite = true;
            fs.committed_end = 0;
            fs.dirty.clear();
        }
    }
}

/// Sorts ranges and merges those that overlap or touch.
fn coalesce(ranges: &mut Vec<(usize, usize)>) {
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for &(start, end) in ranges.iter() {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    *ranges = merged;
}

/// The journal of the (coalesced) changed ranges of `buf`: all-zero ranges as zero
/// entries, the others with their bytes, split at the entry size limit.
fn journal_bytes(buf: &[u8], dirty: &[(usize, usize)], generation: u64) -> Vec<u8> {
    let mut entries = Vec::with_capacity(dirty.len());
    for &(start, end) in dirty {
        let mut at = start;
        while at < end {
            let stop = end.min(at + journal::MAX_ENTRY);
            let bytes = &buf[at..stop];
            let data = if bytes.iter().all(|&b| b == 0) { None } else { Some(bytes) };
            entries.push(Entry { at, len: stop - at, data });
            at = stop;
        }
    }
    let mut out = Vec::new();
    journal::write(&mut out, generation, &entries);
    out
}

/// Writes the changed ranges of `buf` where they belong in the file.
fn apply_in_place(io: &mut dyn CommitIo, buf: &[u8], dirty: &[(usize, usize)]) -> std::io::Result<()> {
    let zeros = vec![0u8; ZERO_CHUNK];
    for &(start, end) in dirty {
        let bytes = &buf[start..end];
        if bytes.iter().all(|&b| b == 0) {
            for at in (start..end).step_by(ZERO_CHUNK) {
                io.write_at(at as u64, &zeros[..(end - at).min(ZERO_CHUNK)])?;
            }
        } else {
            io.write_at(start as u64, bytes)?;
        }
    }
    Ok(())
}

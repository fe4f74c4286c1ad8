//! Editing a file with atomic commits (spec §8.4).
//!
//! While a file is open, nothing reachable from its active root record is overwritten:
//! blocks below `committed_end` are copied to `end` instead of being edited in place, and
//! the garbage they leave is zeroed only after the commit that made it unreachable. The
//! editor's record goes to the inactive slot with generation + 1, so the in-memory bytes
//! are always exactly what the file will hold after the next commit.

use std::fs::OpenOptions;
use std::path::Path;

// The seam lives beside this file; it is declared here so that edit/mod.rs stays as it is.

use super::io::{self, CommitIo, FileIo, HookedIo};
use super::Editor;
use crate::error::{Category, Error, Result};
use crate::format::{RECORD_A, RECORD_B, RECORD_LEN};

pub(super) struct FileState {
    /// Every file operation of a commit goes through this seam (tests/crash_states.rs).
    io: Box<dyn CommitIo>,
    /// Bytes below this belong to the committed version and are never overwritten.
    pub committed_end: usize,
    /// Garbage below `committed_end`, zeroed after the next commit.
    pub pending: Vec<(usize, usize)>,
    /// Compaction replaced the whole document: the next commit writes a new file.
    pub rewrite: bool,
}

impl Editor {
    /// Opens a Leafwire file for copy-on-write editing; changes reach the file only on
    /// [`Editor::commit`]. The file is validated first.
    pub fn open_file(path: impl AsRef<Path>) -> Result<Editor> {
        Editor::open_file_io(path.as_ref(), None)
    }

    /// Test seam of spec §8.4 (tests/crash_states.rs): [`Editor::open_file`], with `hook`
    /// called before every file operation of a commit with the operation's name
    /// (`write`, `sync`, `create-replacement`, `write-replacement`, `sync-replacement`,
    /// `rename`, `sync-dir`), its offset and its bytes; an error the hook returns fails
    /// that operation instead of performing it. Not part of the stable API.
    #[doc(hidden)]
    pub fn open_file_with_io_hook(
        path: impl AsRef<Path>,
        hook: io::Hook,
    ) -> Result<Editor> {
        Editor::open_file_io(path.as_ref(), Some(hook))
    }

    fn open_file_io(path: &Path, hook: Option<io::Hook>) -> Result<Editor> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let mut ed = Editor::new(std::fs::read(path)?)?;
        ed.compact_threshold = 0.0;
        let committed_end = ed.buf.len();
        let real = FileIo::new(file, path.to_path_buf());
        let io: Box<dyn CommitIo> = match hook {
            Some(hook) => Box::new(HookedIo::new(real, hook)),
            None => Box::new(real),
        };
        ed.file = Some(FileState { io, committed_end, pending: Vec::new(), rewrite: false });
        ed.start_generation();
        Ok(ed)
    }

    /// Points the next edits at the inactive root record, one generation on.
    fn start_generation(&mut self) {
        self.record_at = if self.record_at == RECORD_A { RECORD_B } else { RECORD_A };
        self.record.generation += 1;
    }

    /// Makes the edits since the last commit durable and atomic: (1) write and flush the
    /// appended bytes, (2) write the inactive root record (generation + 1) and flush, then
    /// zero the garbage the commit made unreachable. After compaction, writes a new file
    /// and renames it over the old one instead.
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
        } else {
            // The record slot is written last and alone: before it is complete, its CRC
            // fails and the old record stays active.
            let end = self.buf.len();
            fs.io.write_at(fs.committed_end as u64, &self.buf[fs.committed_end..end])?;
            fs.io.sync_data()?;
            // From here the record may reach the disk even if writing or syncing it fails
            // (a failed write may still have reached the page cache), and then it points at
            // these bytes: they are frozen like a committed version's, so that edits before
            // a retry copy them instead of changing them in place. The retry writes the
            // same slot and generation, and frees what those edits replaced after it.
            fs.committed_end = end;
            let at = self.record_at;
            self.record.end = end as u64;
            self.record.write(&mut self.buf[at..at + RECORD_LEN]);
            fs.io.write_at(at as u64, &self.buf[at..at + RECORD_LEN])?;
            fs.io.sync_data()?;
            // Durable from here on: the editor moves to the next generation before
            // anything else can fail, so a later commit never rewrites the active record.
            let pending = std::mem::take(&mut fs.pending);
            self.start_generation();
            return self.zero_committed_garbage(pending);
        }
        fs.committed_end = self.buf.len();
        self.start_generation();
        Ok(())
    }

    /// Zeroes, in memory and in the file, garbage that the last commit made unreachable.
    /// On an I/O error the ranges not yet zeroed are kept for the next commit, and the
    /// error says that the commit itself took effect.
    fn zero_committed_garbage(&mut self, pending: Vec<(usize, usize)>) -> Result<()> {
        let fs = self.file.as_mut().expect("called on a file editor");
        for (i, &(start, stop)) in pending.iter().enumerate() {
            self.buf[start..stop].fill(0);
            if let Err(err) = fs.io.write_at(start as u64, &self.buf[start..stop]) {
                fs.pending.extend_from_slice(&pending[i..]);
                return Err(Error::new(Category::Io, format!("the commit is durable, but zeroing freed bytes failed (retried at the next commit): {err}")));
            }
        }
        Ok(())
    }

    /// Bytes below this offset must not be overwritten (0 when editing memory).
    pub(super) fn frozen(&self) -> usize {
        self.file.as_ref().map_or(0, |f| f.committed_end)
    }

    /// Compaction of a file: the document is rewritten in memory, and the next commit
    /// replaces the file.
    pub(super) fn compacted_file(&mut self) {
        if let Some(fs) = self.file.as_mut() {
            fs.rewrite = true;
            fs.committed_end = 0;
            fs.pending.clear();
        }
    }
}

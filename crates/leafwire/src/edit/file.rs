//! Editing a file with atomic commits (spec §8.4).
//!
//! While a file is open, nothing reachable from its active root record is overwritten:
//! blocks below `committed_end` are copied to `end` instead of being edited in place, and
//! the garbage they leave is zeroed only after the commit that made it unreachable. The
//! editor's record goes to the inactive slot with generation + 1, so the in-memory bytes
//! are always exactly what the file will hold after the next commit.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::Editor;
use crate::error::{Category, Error, Result};
use crate::format::{RECORD_A, RECORD_B, RECORD_LEN};

pub(super) struct FileState {
    file: File,
    path: PathBuf,
    /// Bytes below this belong to the committed version and are never overwritten.
    pub committed_end: usize,
    /// Garbage below `committed_end`, zeroed after the next commit.
    pub pending: Vec<(usize, usize)>,
    /// Compaction replaced the whole document: the next commit writes a new file.
    pub rewrite: bool,
}

fn write_at(file: &mut File, at: usize, bytes: &[u8]) -> Result<()> {
    file.seek(SeekFrom::Start(at as u64))?;
    file.write_all(bytes)?;
    Ok(())
}

impl Editor {
    /// Opens a Leafwire file for copy-on-write editing; changes reach the file only on
    /// [`Editor::commit`]. The file is validated first.
    pub fn open_file(path: impl AsRef<Path>) -> Result<Editor> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        let mut ed = Editor::new(std::fs::read(&path)?)?;
        ed.compact_threshold = 0.0;
        let committed_end = ed.buf.len();
        ed.file = Some(FileState { file, path, committed_end, pending: Vec::new(), rewrite: false });
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
            let tmp = fs.path.with_extension("leafwire-tmp");
            let mut file = File::create(&tmp)?;
            file.write_all(&self.buf)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &fs.path)?;
            if let Some(dir) = fs.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                File::open(dir).and_then(|d| d.sync_all()).ok();
            }
            fs.file = OpenOptions::new().read(true).write(true).open(&fs.path)?;
            fs.rewrite = false;
        } else {
            // The record slot is written last and alone: before it is complete, its CRC
            // fails and the old record stays active.
            let end = self.buf.len();
            write_at(&mut fs.file, fs.committed_end, &self.buf[fs.committed_end..end])?;
            fs.file.sync_data()?;
            let at = self.record_at;
            self.record.end = end as u64;
            self.record.write(&mut self.buf[at..at + RECORD_LEN]);
            write_at(&mut fs.file, at, &self.buf[at..at + RECORD_LEN])?;
            fs.file.sync_data()?;
            // Durable from here on: the editor moves to the next generation before
            // anything else can fail, so a later commit never rewrites the active record.
            let pending = std::mem::take(&mut fs.pending);
            fs.committed_end = end;
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
            if let Err(err) = write_at(&mut fs.file, start, &self.buf[start..stop]) {
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

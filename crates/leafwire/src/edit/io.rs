//! The file operations of a commit (spec §8.4), behind a seam so that a test can record
//! them, replay every state a power loss could leave, and inject I/O errors
//! (tests/crash_states.rs). Production uses [`FileIo`]; the test hook wraps it.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::PathBuf;

/// Every operation a commit performs on the file system, and nothing else.
pub(crate) trait CommitIo: Send + Sync {
    /// Writes `bytes` at `pos` of the open file.
    fn write_at(&mut self, pos: u64, bytes: &[u8]) -> io::Result<()>;
    /// Barrier: makes the open file's writes so far durable (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Creates (or truncates) the replacement file beside the open one (compaction).
    fn create_replacement(&mut self) -> io::Result<()>;
    /// Writes `bytes` at `pos` of the replacement file.
    fn write_replacement(&mut self, pos: u64, bytes: &[u8]) -> io::Result<()>;
    /// Barrier: makes the replacement file durable (`fsync`).
    fn sync_replacement(&mut self) -> io::Result<()>;
    /// Renames the replacement over the file; it becomes the open file.
    fn install_replacement(&mut self) -> io::Result<()>;
    /// Barrier: makes the rename durable (`fsync` of the directory, where it can be opened).
    fn sync_dir(&mut self) -> io::Result<()>;
}

/// The real files.
pub(crate) struct FileIo {
    file: File,
    path: PathBuf,
    replacement: Option<File>,
}

impl FileIo {
    pub(crate) fn new(file: File, path: PathBuf) -> FileIo {
        FileIo { file, path, replacement: None }
    }

    fn replacement_path(&self) -> PathBuf {
        self.path.with_extension("leafwire-tmp")
    }
}

fn write_at(file: &mut File, pos: u64, bytes: &[u8]) -> io::Result<()> {
    file.seek(SeekFrom::Start(pos))?;
    file.write_all(bytes)
}

fn no_replacement() -> io::Error {
    io::Error::other("no replacement file was created")
}

impl CommitIo for FileIo {
    fn write_at(&mut self, pos: u64, bytes: &[u8]) -> io::Result<()> {
        write_at(&mut self.file, pos, bytes)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn create_replacement(&mut self) -> io::Result<()> {
        let path = self.replacement_path();
        let replacement = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
        // The replacement takes the file's place: it keeps the file's permissions (a
        // private file must not become world-readable by being compacted).
        replacement.set_permissions(self.file.metadata()?.permissions())?;
        self.replacement = Some(replacement);
        Ok(())
    }

    fn write_replacement(&mut self, pos: u64, bytes: &[u8]) -> io::Result<()> {
        write_at(self.replacement.as_mut().ok_or_else(no_replacement)?, pos, bytes)
    }

    fn sync_replacement(&mut self) -> io::Result<()> {
        self.replacement.as_mut().ok_or_else(no_replacement)?.sync_all()
    }

    fn install_replacement(&mut self) -> io::Result<()> {
        if self.replacement.is_none() {
            return Err(no_replacement());
        }
        std::fs::rename(self.replacement_path(), &self.path)?;
        self.file = self.replacement.take().expect("checked above");
        Ok(())
    }

    fn sync_dir(&mut self) -> io::Result<()> {
        let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) else {
            return Ok(());
        };
        // Some platforms cannot open a directory (Windows); there the rename is all we can do.
        match File::open(dir) {
            Ok(d) => d.sync_all(),
            Err(_) => Ok(()),
        }
    }
}

/// A test's view of the commit's operations: called before each one with its name, the
/// offset and the bytes (empty for barriers); an error it returns fails the operation
/// instead of performing it.
pub type Hook = Box<dyn FnMut(&str, u64, &[u8]) -> io::Result<()> + Send + Sync>;

/// [`FileIo`] with a hook in front of every operation (tests only; see
/// `Editor::open_file_with_io_hook`).
pub(crate) struct HookedIo {
    inner: FileIo,
    hook: Hook,
}

impl HookedIo {
    pub(crate) fn new(inner: FileIo, hook: Hook) -> HookedIo {
        HookedIo { inner, hook }
    }
}

impl CommitIo for HookedIo {
    fn write_at(&mut self, pos: u64, bytes: &[u8]) -> io::Result<()> {
        (self.hook)("write", pos, bytes)?;
        self.inner.write_at(pos, bytes)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        (self.hook)("sync", 0, &[])?;
        self.inner.sync_data()
    }

    fn create_replacement(&mut self) -> io::Result<()> {
        (self.hook)("create-replacement", 0, &[])?;
        self.inner.create_replacement()
    }

    fn write_replacement(&mut self, pos: u64, bytes: &[u8]) -> io::Result<()> {
        (self.hook)("write-replacement", pos, bytes)?;
        self.inner.write_replacement(pos, bytes)
    }

    fn sync_replacement(&mut self) -> io::Result<()> {
        (self.hook)("sync-replacement", 0, &[])?;
        self.inner.sync_replacement()
    }

    fn install_replacement(&mut self) -> io::Result<()> {
        (self.hook)("rename", 0, &[])?;
        self.inner.install_replacement()
    }

    fn sync_dir(&mut self) -> io::Result<()> {
        (self.hook)("sync-dir", 0, &[])?;
        self.inner.sync_dir()
    }
}

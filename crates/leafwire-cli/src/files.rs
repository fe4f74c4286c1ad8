//! Input and output: reading files or stdin, mapping input files, writing output files so
//! a failure never leaves a half-written file behind, and streaming to stdout.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use leafwire::{AlignedBytes, Document, MappedFile};

use crate::failure::Failure;
use crate::interrupt;

/// Whether a path argument means standard input or output.
pub fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a whole file, or stdin for `-`.
pub fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    if is_std(path) {
        let mut bytes = Vec::new();
        io::stdin().lock().read_to_end(&mut bytes).map_err(|e| Failure::new(path, e))?;
        return Ok(bytes);
    }
    fs::read(path).map_err(|e| Failure::new(path, e))
}

/// A Leafwire document to read: a mapped file, or stdin read whole into an aligned
/// buffer (typed arrays need their alignment either way).
pub enum Input {
    Mapped(MappedFile),
    Read(AlignedBytes),
}

impl Input {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(file) => file.as_bytes(),
            Input::Read(bytes) => bytes.as_bytes(),
        }
    }

    pub fn document(&self) -> leafwire::Result<Document<'_>> {
        Document::open(self.as_bytes())
    }

    /// Gives back the pages a mapped file has loaded (see `MappedFile::release`), after a
    /// pass over all of it such as validation; they are mapped again when read.
    pub fn release(&self) {
        if let Input::Mapped(file) = self {
            file.release(0..file.as_bytes().len());
        }
    }
}

/// Maps a Leafwire file (only the pages actually read are loaded), or reads stdin for `-`.
pub fn open_mapped(path: &Path) -> Result<Input, Failure> {
    if is_std(path) {
        // A file whose last commit was interrupted reads as that commit finished (spec §8.5).
        let mut bytes = read_input(path)?;
        leafwire::finish_interrupted_commit(&mut bytes).map_err(|e| Failure::leafwire(path, e))?;
        return Ok(Input::Read(AlignedBytes::new(&bytes)));
    }
    // Mapping a directory fails with a puzzling "No such device"; say what it is.
    if path.is_dir() {
        return Err(Failure::new(path, "is a directory"));
    }
    // SAFETY: the command reads files it is given and writes new versions by renaming a
    // temporary over them, never in place; like every mmap reader (ripgrep, git) it asks
    // that no other program rewrite or truncate the file while it runs (README, spec §9.1).
    let file = unsafe { MappedFile::open(path) }.map_err(|e| Failure::leafwire(path, e))?;
    Ok(Input::Mapped(file))
}

/// Text read once from front to back (JSON): a mapped file, whose pages the reader can
/// give back behind it so a big input does not stay resident, or stdin (and pipes, which
/// cannot be mapped) read whole.
pub enum Text {
    Mapped(MappedFile),
    Read(Vec<u8>),
}

impl Text {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Text::Mapped(file) => file.as_bytes(),
            Text::Read(bytes) => bytes,
        }
    }

    /// Gives back the pages before `at` (see `MappedFile::release`); bytes read whole
    /// stay as they are.
    pub fn release_before(&self, at: usize) {
        if let Text::Mapped(file) = self {
            file.release(0..at);
        }
    }
}

/// Opens text to read once: mapped when `path` is a regular file, else read whole.
pub fn open_text(path: &Path) -> Result<Text, Failure> {
    if is_std(path) || !fs::metadata(path).map_err(|e| Failure::new(path, e))?.is_file() {
        return Ok(Text::Read(read_input(path)?));
    }
    // SAFETY: as for `open_mapped`: the command asks that its input files not be rewritten
    // or truncated while it runs (README, spec §9.1).
    match unsafe { MappedFile::open(path) } {
        Ok(file) => Ok(Text::Mapped(file)),
        // Some files cannot be mapped (special file systems): read those.
        Err(_) => Ok(Text::Read(read_input(path)?)),
    }
}

/// Refuses to write binary Leafwire to a terminal.
pub fn refuse_binary_terminal() -> Result<(), Failure> {
    match io::stdout().is_terminal() {
        true => Err(Failure::new(Path::new("<stdout>"), "is a terminal; not writing binary Leafwire to it (redirect it, or give -o FILE)")),
        false => Ok(()),
    }
}

/// Streams output to stdout through a buffer, as `fill` writes it. A failure halfway leaves
/// what was written so far on stdout (the command still fails, with the error on stderr),
/// as jq and serde tools do: holding the whole output back would cost its size in memory.
/// A closed pipe (`leafwire to-json f | head`) is not an error: the reader has all it wanted.
pub fn stream_stdout(fill: impl FnOnce(&mut dyn Write) -> Result<(), Failure>) -> Result<(), Failure> {
    let mut out = PipeWriter { inner: BufWriter::with_capacity(1 << 16, io::stdout().lock()), closed: false };
    let result = fill(&mut out).and_then(|()| out.flush().map_err(|e| Failure::new(Path::new("<stdout>"), e)));
    match out.closed {
        true => Ok(()),
        false => result,
    }
}

/// Stdout that remembers whether the reader closed the pipe.
struct PipeWriter<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> PipeWriter<W> {
    fn note<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::BrokenPipe) {
            self.closed = true;
        }
        result
    }
}

impl<W: Write> Write for PipeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.note(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.note(result)
    }
}

/// Writes finished bytes to `path` atomically (see `write_atomically`), or to stdout for
/// `-`. Binary Leafwire is not written to a terminal.
pub fn write_output(path: &Path, source: Option<&Path>, bytes: &[u8], binary: bool) -> Result<(), Failure> {
    if !is_std(path) {
        return write_atomically(path, source, |w| w.write_all(bytes).map_err(|e| Failure::new(path, e)));
    }
    if binary {
        refuse_binary_terminal()?;
    }
    write_stdout(bytes)
}

/// Writes `path` through `fill` into `PATH.tmp-<pid>`, synced and then renamed over
/// `path`: readers see the old file or the complete new one, and a failed `fill` leaves
/// nothing behind.
///
/// Permissions: a file being replaced keeps its mode, and a read-only one is refused; a
/// new file gets the mode of `source` (the file its content comes from, if any), less the
/// umask, so a conversion never makes a private file readable by others.
pub fn write_atomically(path: &Path, source: Option<&Path>, fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), Failure>) -> Result<(), Failure> {
    let mode = output_mode(path, source)?;
    let temp = temp_path(path);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode.create);
    let file = {
        let mut temporaries = interrupt::temporaries();
        let file = options.open(&temp).map_err(|e| Failure::new(path, e))?;
        temporaries.push(temp.clone());
        file
    };
    let mut writer = BufWriter::new(file);
    let written = fill(&mut writer).and_then(|()| {
        let file = writer.into_inner().map_err(|e| Failure::new(path, e.into_error()))?;
        #[cfg(unix)]
        if let Some(kept) = mode.keep {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(fs::Permissions::from_mode(kept)).map_err(|e| Failure::new(path, e))?;
        }
        file.sync_all().map_err(|e| Failure::new(path, e))?;
        let mut temporaries = interrupt::temporaries();
        let renamed = fs::rename(&temp, path).map_err(|e| Failure::new(path, e));
        if renamed.is_ok() {
            interrupt::forget(&mut temporaries, &temp);
        }
        renamed
    });
    if written.is_err() {
        // Best effort: the error being reported matters more than a failed clean-up.
        let mut temporaries = interrupt::temporaries();
        let _ = fs::remove_file(&temp);
        interrupt::forget(&mut temporaries, &temp);
    }
    written
}

/// The permission bits of a file written by `write_atomically`.
struct Mode {
    /// Asked for when creating the temporary file (the umask then applies).
    #[cfg_attr(not(unix), allow(dead_code))]
    create: u32,
    /// Set exactly before the rename: the mode of the file being replaced (narrowed to
    /// the source's), which the umask must not change.
    #[cfg_attr(not(unix), allow(dead_code))]
    keep: Option<u32>,
}

/// What `path` may be written with: its own mode if it exists (refusing a read-only file
/// or a directory), else that of a new file; never more than `source` allows.
fn output_mode(path: &Path, source: Option<&Path>) -> Result<Mode, Failure> {
    let existing = match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(Failure::new(path, "is a directory")),
        Ok(meta) => {
            refuse_read_only(path, &meta)?;
            Some(meta)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(Failure::new(path, e)),
    };
    let source = source.filter(|s| s.as_os_str() != "-").and_then(|s| fs::metadata(s).ok());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let bits = |meta: &fs::Metadata| meta.permissions().mode() & 0o777;
        // Never more open to others than the source; the owner may always write what
        // they made (a read-only input, like a published dataset, gives a writable output).
        let allowed = source.as_ref().map_or(0o777, |m| bits(m) | 0o200);
        match existing {
            Some(meta) => Ok(Mode { create: bits(&meta) & allowed, keep: Some(bits(&meta) & allowed) }),
            None => Ok(Mode { create: 0o666 & allowed, keep: None }),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (existing, source);
        Ok(Mode { create: 0, keep: None })
    }
}

/// Fails when `path` (which exists) may not be written: no write permission bit at all
/// (checked by mode, since root may write anything), or none for this user.
pub fn refuse_read_only(path: &Path, meta: &fs::Metadata) -> Result<(), Failure> {
    let denied = meta.permissions().readonly()
        || (meta.is_file() && matches!(OpenOptions::new().write(true).open(path), Err(e) if e.kind() == io::ErrorKind::PermissionDenied));
    match denied {
        true => Err(Failure::new(path, "is read-only; not rewriting it (make it writable first)")),
        false => Ok(()),
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(format!(".tmp-{}", std::process::id()));
    PathBuf::from(name)
}

/// Writes a finished result to stdout. A closed pipe (`leafwire to-json f | head`) is
/// not an error: the reader has all it wanted.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Failure::new(Path::new("<stdout>"), e)),
        _ => Ok(()),
    }
}

/// Runs a canonical writer `write` into `w`, through a page-checksum sealer (spec §2.3)
/// when `checksums` is set: files the command writes carry checksums unless asked not to.
pub fn with_checksums(w: &mut dyn Write, checksums: bool, output: &Path, write: impl FnOnce(&mut dyn Write) -> Result<(), Failure>) -> Result<(), Failure> {
    if !checksums {
        return write(w);
    }
    let mut sealer = leafwire::format::integrity::Sealer::new(w);
    write(&mut sealer)?;
    sealer.finish().map(drop).map_err(|e| Failure::new(output, e))
}

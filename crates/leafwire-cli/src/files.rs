//! Input and output: reading files or stdin, mapping Leafwire files, writing results so a
//! failure never leaves a half-written file or partial output behind.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use leafwire::MappedFile;

use crate::failure::Failure;

/// Reads a whole file, or stdin for `-`.
pub fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        io::stdin().lock().read_to_end(&mut bytes).map_err(|e| Failure::new(path, e))?;
        return Ok(bytes);
    }
    fs::read(path).map_err(|e| Failure::new(path, e))
}

/// Maps a Leafwire file; only the pages actually read are loaded.
pub fn open_mapped(path: &Path) -> Result<MappedFile, Failure> {
    // Mapping a directory fails with a puzzling "No such device"; say what it is.
    if path.is_dir() {
        return Err(Failure::new(path, "is a directory"));
    }
    // SAFETY: the command reads files it is given and writes new versions by renaming a
    // temporary over them, never in place; like every mmap reader (ripgrep, git) it asks
    // that no other program rewrite or truncate the file while it runs (README, spec §9.1).
    unsafe { MappedFile::open(path) }.map_err(|e| Failure::leafwire(path, e))
}

/// Writes `path` through `fill` into `PATH.tmp-<pid>`, synced and then renamed over
/// `path`: readers see the old file or the complete new one, and a failed `fill` leaves
/// nothing behind.
pub fn write_atomically(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), Failure>) -> Result<(), Failure> {
    let temp = temp_path(path);
    let file = OpenOptions::new().write(true).create_new(true).open(&temp).map_err(|e| Failure::new(path, e))?;
    let mut writer = BufWriter::new(file);
    let written = fill(&mut writer).and_then(|()| {
        let file = writer.into_inner().map_err(|e| Failure::new(path, e.into_error()))?;
        file.sync_all().map_err(|e| Failure::new(path, e))?;
        fs::rename(&temp, path).map_err(|e| Failure::new(path, e))
    });
    if written.is_err() {
        // Best effort: the error being reported matters more than a failed clean-up.
        let _ = fs::remove_file(&temp);
    }
    written
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

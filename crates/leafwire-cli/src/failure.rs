//! The one error of the command: which file, and what went wrong in it.

use std::fmt;
use std::path::Path;
use std::sync::Mutex;

/// Most digits the JSON reader (jiter) accepts before a number's decimal point.
pub const MAX_JSON_DIGITS: &str = "4,300";

/// The message of the first panic, kept by the panic hook for `Failure::panicked`.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

pub fn record_panic(message: String) {
    if let Ok(mut slot) = PANIC.lock() {
        slot.get_or_insert(message);
    }
}

/// A failure, printed as one line: `leafwire: FILE: message`.
#[derive(Debug)]
pub struct Failure {
    file: Option<String>,
    message: String,
}

impl Failure {
    pub fn new(file: &Path, message: impl fmt::Display) -> Failure {
        Failure { file: Some(file_name(file)), message: message.to_string() }
    }

    /// A core error about `file`. Its `Display` already says where: "at byte N", "at line
    /// L column C", and the pointer being resolved.
    pub fn leafwire(file: &Path, error: leafwire::Error) -> Failure {
        let name = file_name(file);
        let message = error.to_string();
        // `MappedFile::open` names the path itself; do not name it twice.
        let message = match message.strip_prefix(&name).and_then(|m| m.strip_prefix(": ")) {
            Some(rest) => rest.to_owned(),
            None => message,
        };
        Failure { file: Some(name), message }
    }

    /// An error in JSON text (a file, stdin or a command-line value). The JSON reader
    /// (jiter) refuses numbers with more than 4,300 digits before the decimal point, as
    /// Python's `int()` does, and calls that "number out of range": say which limit it is.
    pub fn json(file: &Path, error: leafwire::Error) -> Failure {
        let mut failure = Failure::leafwire(file, error);
        if let Some(rest) = failure.message.strip_prefix("number out of range") {
            failure.message = format!(
                "number longer than {MAX_JSON_DIGITS} digits{rest} (the JSON reader's limit; integers up to that size are kept exactly, as bignums)"
            );
        }
        failure
    }

    pub fn internal(message: impl fmt::Display) -> Failure {
        Failure { file: None, message: format!("internal error: {message}") }
    }

    /// A panic caught at the top: a bug, but still reported as one line.
    pub fn panicked() -> Failure {
        let what = PANIC.lock().ok().and_then(|mut slot| slot.take());
        Failure::internal(what.as_deref().unwrap_or("panicked"))
    }
}

/// How a path is named in messages; `-` is standard input.
pub fn file_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("leafwire: ")?;
        if let Some(file) = &self.file {
            write_one_line(f, file)?;
            f.write_str(": ")?;
        }
        write_one_line(f, &self.message)
    }
}

/// Writes `text` with control characters escaped, so a message quoting a key or a path
/// with a newline in it still prints as exactly one line.
fn write_one_line(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    for c in text.chars() {
        if c.is_control() {
            write!(f, "{}", c.escape_default())?;
        } else {
            write!(f, "{c}")?;
        }
    }
    Ok(())
}

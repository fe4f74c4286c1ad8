//! The one error type of the crate: small (a box), with a category callers can match,
//! a position (byte offset in a Leafwire buffer, line and column in JSON text) and, for
//! lookups, the path that failed.

use std::borrow::Cow;
use std::fmt;

/// What went wrong, for callers that react differently to different failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// The bytes are not a valid Leafwire document (bad magic, bad offset, bad tag...).
    Malformed,
    /// The document uses a major version or feature flag this reader does not know.
    Unsupported,
    /// A value has another type than the one asked for.
    WrongType,
    /// A key, index or JSON Pointer names nothing in the document.
    NotFound,
    /// Nesting deeper than the configured `max_depth`.
    DepthLimit,
    /// A size limit of the format or of the caller's options was exceeded.
    LimitExceeded,
    /// JSON text is not valid JSON.
    InvalidJson,
    /// An object in the input has the same key twice.
    DuplicateKey,
    /// A value has no representation in the target (NaN in JSON, ...).
    NotRepresentable,
    /// A typed array is not aligned in memory for a zero-copy slice.
    Misaligned,
    /// Reading or writing a file or stream failed.
    Io,
    /// A message from a serde `Serialize` or `Deserialize` implementation.
    Custom,
}

/// Where in the input an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Byte offset from the start of a Leafwire document.
    Offset(u64),
    /// One-based line and column in JSON text.
    LineColumn { line: usize, column: usize },
}

/// The error of every fallible operation in this crate.
pub struct Error(Box<ErrorImpl>);

struct ErrorImpl {
    category: Category,
    message: Cow<'static, str>,
    position: Option<Position>,
    path: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn new(category: Category, message: impl Into<Cow<'static, str>>) -> Self {
        Error(Box::new(ErrorImpl { category, message: message.into(), position: None, path: None }))
    }

    /// A malformed-document error at byte `offset`.
    pub(crate) fn malformed(offset: u64, message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(Category::Malformed, message).at(offset)
    }

    pub(crate) fn wrong_type(expected: &'static str, found: crate::Kind) -> Self {
        Error::new(Category::WrongType, format!("expected {expected}, found {found}"))
    }

    pub(crate) fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Error::new(Category::NotFound, message)
    }

    pub(crate) fn depth_limit(limit: usize) -> Self {
        Error::new(
            Category::DepthLimit,
            format!("nesting deeper than the limit of {limit} (raise max_depth)"),
        )
    }

    /// Attaches a byte offset, unless the error already has a position.
    pub(crate) fn at(mut self, offset: u64) -> Self {
        if self.0.position.is_none() {
            self.0.position = Some(Position::Offset(offset));
        }
        self
    }

    /// Moves a byte offset by `by`: an error inside a stream frame, whose offsets count from
    /// the frame's origin, told in stream offsets.
    pub(crate) fn shifted(mut self, by: u64) -> Self {
        if let Some(Position::Offset(o)) = self.0.position {
            self.0.position = Some(Position::Offset(o.saturating_add(by)));
        }
        self
    }

    pub(crate) fn at_line_column(mut self, line: usize, column: usize) -> Self {
        self.0.position = Some(Position::LineColumn { line, column });
        self
    }

    /// Attaches the path (a JSON Pointer) being looked up when the error happened.
    pub(crate) fn with_path(mut self, path: impl Into<String>) -> Self {
        if self.0.path.is_none() {
            self.0.path = Some(path.into());
        }
        self
    }

    pub(crate) fn set_path(&mut self, path: String) {
        self.0.path = Some(path);
    }

    pub fn category(&self) -> Category {
        self.0.category
    }

    pub fn position(&self) -> Option<Position> {
        self.0.position
    }

    /// The byte offset in the Leafwire document, when the error has one.
    pub fn offset(&self) -> Option<u64> {
        match self.0.position {
            Some(Position::Offset(o)) => Some(o),
            _ => None,
        }
    }

    /// The JSON Pointer being resolved when the error happened, if any.
    pub fn path(&self) -> Option<&str> {
        self.0.path.as_deref()
    }

    /// The message without position or path.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        if let Some(path) = &self.0.path {
            write!(f, " (at pointer \"{path}\")")?;
        }
        match self.0.position {
            Some(Position::Offset(o)) => write!(f, " at byte {o}"),
            Some(Position::LineColumn { line, column }) => {
                write!(f, " at line {line} column {column}")
            }
            None => Ok(()),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({:?}: {})", self.0.category, self)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(Category::Io, e.to_string())
    }
}

impl serde::ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(Category::Custom, msg.to_string())
    }
}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(Category::Custom, msg.to_string())
    }
}

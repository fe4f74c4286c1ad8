//! Progress bars on stderr for the conversions that take long on big files. Shown only when
//! stderr is a terminal (never in a pipe, a log or a test) and the input is big enough to
//! take more than about a second; otherwise every call does nothing.

use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Inputs smaller than this convert in well under a second: no bar.
pub const WORTH_SHOWING: u64 = 64 << 20;

/// How often the core reports its position while parsing JSON, in input bytes.
pub const REPORT_STEP: usize = 1 << 20;

/// One operation's progress: a bar over a known number of bytes, or a counter of bytes
/// written when the total is not known in advance.
pub struct Progress(ProgressBar);

impl Progress {
    /// A bar over `total` bytes of input, labelled `what` ("parsing").
    pub fn bar(input_len: u64, what: &'static str) -> Progress {
        if !worth_showing(input_len) {
            return Progress(ProgressBar::hidden());
        }
        let style = ProgressStyle::with_template("{msg:>9} [{bar:30}] {bytes}/{total_bytes} ({binary_bytes_per_sec}, {eta} left)")
            .expect("the template is valid")
            .progress_chars("=> ");
        Progress(ProgressBar::new(input_len).with_style(style).with_message(what))
    }

    /// A counter of bytes for a pass over an input of `input_len` bytes whose output size
    /// is not known ahead, labelled `what` ("writing").
    pub fn counter(input_len: u64, what: &'static str) -> Progress {
        if !worth_showing(input_len) {
            return Progress(ProgressBar::hidden());
        }
        let style = ProgressStyle::with_template("{spinner} {msg:>9} {bytes} ({binary_bytes_per_sec}, {elapsed})").expect("the template is valid");
        let bar = ProgressBar::no_length().with_style(style).with_message(what);
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress(bar)
    }

    pub fn set_position(&self, bytes: u64) {
        self.0.set_position(bytes);
    }

    /// A writer that counts what goes through it into this progress.
    pub fn writer<W: Write>(&self, inner: W) -> Counted<'_, W, fn(u64)> {
        self.writer_then(inner, |_| {})
    }

    /// `writer`, also calling `then` with the bytes written so far at each update.
    pub fn writer_then<W: Write, F: FnMut(u64)>(&self, inner: W, then: F) -> Counted<'_, W, F> {
        Counted { inner, progress: self, written: 0, shown: 0, then }
    }
}

impl Drop for Progress {
    /// The bar leaves no line behind: the command's own output or error follows.
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

fn worth_showing(input_len: u64) -> bool {
    input_len >= WORTH_SHOWING && io::stderr().is_terminal()
}

/// Counts bytes written for a `Progress`, updating it once per `REPORT_STEP` so the many
/// small writes of a JSON writer cost an addition each, not a bar update.
pub struct Counted<'p, W, F> {
    inner: W,
    progress: &'p Progress,
    written: u64,
    shown: u64,
    then: F,
}

impl<W, F: FnMut(u64)> Counted<'_, W, F> {
    #[inline]
    fn count(&mut self, n: usize) {
        self.written += n as u64;
        if self.written - self.shown >= REPORT_STEP as u64 {
            self.progress.set_position(self.written);
            self.shown = self.written;
            (self.then)(self.written);
        }
    }
}

impl<W: Write, F: FnMut(u64)> Write for Counted<'_, W, F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count(n);
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)?;
        self.count(buf.len());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

//! `AsyncStreamReader`: the stream reader over a Tokio `AsyncRead` (feature `tokio`).
//!
//! Parsing, bounds and errors are the blocking [`StreamReader`](super::StreamReader)'s: both
//! drive the same [`Window`], which says when it needs more bytes; this reader reads them
//! with an awaited read.

use tokio::io::{AsyncRead, AsyncReadExt};

use super::read::{Advance, Found, Window};
use super::{Frame, StreamOptions};
use crate::error::Result;
use crate::format::stream as fs;
use crate::read::Element;

/// Reads a stream from a Tokio `AsyncRead`, as [`StreamReader`](super::StreamReader) reads
/// one from a `Read`: the same frames, bounds and errors, the buffer refilled with reads of
/// at least [`StreamOptions::buffer_size`].
///
/// `next_frame` and `next_slice` are cancel-safe: a call cancelled while waiting for bytes
/// loses nothing (what was read stays in the buffer), and the next call goes on.
pub struct AsyncStreamReader<R: AsyncRead + Unpin> {
    source: R,
    window: Window,
}

impl<R: AsyncRead + Unpin> AsyncStreamReader<R> {
    /// Reads and checks the stream header.
    pub async fn new(source: R) -> Result<AsyncStreamReader<R>> {
        AsyncStreamReader::with_options(source, StreamOptions::default()).await
    }

    pub async fn with_options(source: R, options: StreamOptions) -> Result<AsyncStreamReader<R>> {
        let mut r = AsyncStreamReader { source, window: Window::new(options) };
        while r.window.lacks_header() {
            r.fill(fs::HEADER_LEN).await?;
        }
        r.window.read_header()?;
        Ok(r)
    }

    /// Reads once into the window, which makes room for bytes up to index `need` first.
    async fn fill(&mut self, need: usize) -> std::io::Result<()> {
        let spare = self.window.spare(need);
        loop {
            match self.source.read(spare).await {
                Ok(n) => {
                    self.window.received(n);
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// As [`StreamReader::next_frame`](super::StreamReader::next_frame).
    pub async fn next_frame(&mut self) -> Option<Result<Frame<'_>>> {
        let found = match self.advance().await? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(self.window.frame(found)))
    }

    /// As [`StreamReader::next_slice`](super::StreamReader::next_slice).
    pub async fn next_slice<T: Element>(&mut self) -> Option<Result<&[T]>> {
        let found = match self.advance().await? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        Some(self.window.slice(found))
    }

    /// Reads up to the next message and past it; where it lies in the window.
    async fn advance(&mut self) -> Option<Result<Found>> {
        loop {
            match self.window.advance() {
                Advance::Found(found) => return Some(Ok(found)),
                Advance::Refill(need) => {
                    if let Err(e) = self.fill(need).await {
                        return Some(Err(self.window.read_failed(e)));
                    }
                }
                Advance::Failed(e) => return Some(Err(e)),
                Advance::End => return None,
            }
        }
    }

    /// As [`StreamReader::skip`](super::StreamReader::skip).
    pub fn skip(&mut self) -> bool {
        self.window.skip()
    }

    /// The stream offset of the next frame.
    pub fn position(&self) -> u64 {
        self.window.position()
    }

    pub fn get_ref(&self) -> &R {
        &self.source
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.source
    }
}

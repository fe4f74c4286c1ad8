//! `AsyncStreamWriter`: the stream writer over a Tokio `AsyncWrite` (feature `tokio`).
//!
//! The frames are made by the blocking [`StreamWriter`], whose sink is an in-memory outbox:
//! the format's rules stay in one place, and the bytes are the blocking writer's. The
//! buffers the blocking writer hands its sink (a full buffer at a time, as it sends them to
//! any sink) wait in the outbox until they are written to the async sink, each with as few
//! writes as the sink takes.

use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::{StreamOptions, StreamWriter};
use crate::error::Result;
use crate::value::Value;
use crate::Encoder;

/// Writes messages to a Tokio `AsyncWrite` as a Leafwire stream: the bytes
/// [`StreamWriter`] writes, sent in the same buffer-sized writes.
///
/// Unlike `StreamWriter`, dropping it does not flush (as with `tokio::io::BufWriter`, a
/// drop cannot wait for the sink): call [`flush`](Self::flush) or
/// [`into_inner`](Self::into_inner). Its methods are cancel-safe in this sense: a message
/// whose call is cancelled after it was encoded is sent with the next call that sends, and
/// no byte is sent twice.
pub struct AsyncStreamWriter<W: AsyncWrite + Unpin> {
    frames: StreamWriter<Outbox>,
    sink: W,
}

impl<W: AsyncWrite + Unpin> AsyncStreamWriter<W> {
    /// A stream with the default options; its header goes to the sink with the first send.
    pub fn new(sink: W) -> Result<AsyncStreamWriter<W>> {
        AsyncStreamWriter::with_options(sink, StreamOptions::default())
    }

    pub fn with_options(sink: W, options: StreamOptions) -> Result<AsyncStreamWriter<W>> {
        Ok(AsyncStreamWriter { frames: StreamWriter::with_options(Outbox::default(), options)?, sink })
    }

    /// As [`StreamWriter::write`].
    pub async fn write<T: serde::Serialize + ?Sized>(&mut self, message: &T) -> Result<()> {
        self.frames.write(message)?;
        self.send_full_buffers().await
    }

    /// As [`StreamWriter::write_slice`].
    pub async fn write_slice<T: crate::read::Element + serde::Serialize>(&mut self, values: &[T]) -> Result<()> {
        self.frames.write_slice(values)?;
        self.send_full_buffers().await
    }

    /// As [`StreamWriter::write_value`].
    pub async fn write_value(&mut self, message: &Value) -> Result<()> {
        self.frames.write_value(message)?;
        self.send_full_buffers().await
    }

    /// As [`StreamWriter::write_json`].
    pub async fn write_json(&mut self, json: &[u8]) -> Result<()> {
        self.frames.write_json(json)?;
        self.send_full_buffers().await
    }

    /// As [`StreamWriter::write_document`].
    pub async fn write_document(&mut self, document: &[u8]) -> Result<()> {
        self.frames.write_document(document)?;
        self.send_full_buffers().await
    }

    /// As [`StreamWriter::write_encoded`].
    pub async fn write_encoded(&mut self, encoder: Encoder) -> Result<()> {
        self.frames.write_encoded(encoder)?;
        self.send_full_buffers().await
    }

    /// As [`StreamWriter::reset_keys`].
    pub async fn reset_keys(&mut self) -> Result<()> {
        self.frames.reset_keys()?;
        self.send_full_buffers().await
    }

    /// Hands every buffered frame to the sink and flushes it: a synchronization point.
    pub async fn flush(&mut self) -> Result<()> {
        self.frames.flush()?;
        self.send_full_buffers().await?;
        self.sink.flush().await?;
        Ok(())
    }

    /// Flushes and returns the sink.
    pub async fn into_inner(mut self) -> Result<W> {
        self.flush().await?;
        Ok(self.sink)
    }

    pub fn get_ref(&self) -> &W {
        &self.sink
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.sink
    }

    /// The stream offset the next frame starts at: bytes written so far, header included.
    pub fn position(&self) -> u64 {
        self.frames.position()
    }

    /// Bytes not yet written to the sink.
    pub fn buffered(&self) -> usize {
        self.frames.buffered() + self.frames.get_ref().pending()
    }

    /// Writes what the blocking writer sent to the outbox, if anything: after a message,
    /// a buffer that reached its size (or two, when the last frame took it past).
    #[inline]
    async fn send_full_buffers(&mut self) -> Result<()> {
        if self.frames.get_ref().pending() == 0 {
            return Ok(());
        }
        self.frames.get_mut().send_to(&mut self.sink).await
    }
}

/// The blocking writer's sink: the buffers it sends, kept with their bounds until they are
/// written to the async sink.
#[derive(Default)]
struct Outbox {
    bytes: Vec<u8>,
    /// Where each buffer handed over ends in `bytes`.
    ends: Vec<usize>,
    /// How much of `bytes` is in the async sink: a cancelled send goes on from there.
    written: usize,
}

impl std::io::Write for Outbox {
    /// Takes a whole buffer (`StreamWriter` sends with `write_all`, so one call is one of
    /// its buffers).
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(buffer);
        self.ends.push(self.bytes.len());
        Ok(buffer.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Outbox {
    fn pending(&self) -> usize {
        self.bytes.len() - self.written
    }

    /// Writes the buffers to `sink` in order, each with as few writes as the sink takes
    /// (never two buffers in one write: the blocking writer chose the bounds).
    async fn send_to<W: AsyncWrite + Unpin>(&mut self, sink: &mut W) -> Result<()> {
        for i in 0..self.ends.len() {
            let end = self.ends[i];
            while self.written < end {
                let n = sink.write(&self.bytes[self.written..end]).await?;
                if n == 0 {
                    return Err(std::io::Error::from(std::io::ErrorKind::WriteZero).into());
                }
                self.written += n;
            }
        }
        self.bytes.clear();
        self.ends.clear();
        self.written = 0;
        Ok(())
    }
}

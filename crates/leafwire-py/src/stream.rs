//! Streams (spec §14) from Python: `StreamWriter(sink)` writes objects as frames to any
//! object with `write` (a file) or `sendall` (a socket); `iter_stream(source)` yields
//! the messages of any object with `read` or `recv`, as Python values or, with
//! `lazy=True`, as `Frame`s read lazily as `open()` reads a document. The core's writer and
//! reader do the work; this module moves bytes across the Python boundary and objects
//! through the same encoder and decoder as `dumps` and `loads`.
//!
//! A lazy frame outlives the reader's buffer, which the next frame reuses: it owns a copy
//! of its frame's bytes (and shares a copy of the key table with the frames read while the
//! table did not change), so nothing it hands out points into the reader.

use std::io::{Read, Write};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::document::Document;
use crate::errors::{self, to_py, Side};
use crate::guard::guarded;
use crate::loads_general::{self, Arrays, Decoder};

/// A Python object written to as a byte sink: its `write`, else its `sendall`.
struct PySink {
    target: Py<PyAny>,
    method: &'static str,
    /// What the object raised, re-raised as is by the caller.
    failed: Option<PyErr>,
}

impl Write for PySink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Python::attach(|py| match self.target.bind(py).call_method1(self.method, (PyBytes::new(py, buf),)) {
            Ok(_) => Ok(buf.len()),
            Err(e) => {
                self.failed = Some(e);
                Err(std::io::Error::other(format!("the sink's {}() raised", self.method)))
            }
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Python::attach(|py| {
            let target = self.target.bind(py);
            if self.method == "write" && target.hasattr("flush").unwrap_or(false) {
                if let Err(e) = target.call_method0("flush") {
                    self.failed = Some(e);
                    return Err(std::io::Error::other("the sink's flush() raised"));
                }
            }
            Ok(())
        })
    }
}

/// A Python object read from: its `read(n)`, else its `recv(n)`.
struct PySource {
    source: Py<PyAny>,
    method: &'static str,
    failed: Option<PyErr>,
}

impl Read for PySource {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let got = self
                .source
                .bind(py)
                .call_method1(self.method, (out.len(),))
                .and_then(|b| b.cast_into::<PyBytes>().map_err(PyErr::from));
            match got {
                Ok(bytes) => {
                    let bytes = bytes.as_bytes();
                    let n = bytes.len().min(out.len());
                    out[..n].copy_from_slice(&bytes[..n]);
                    Ok(n)
                }
                Err(e) => {
                    self.failed = Some(e);
                    Err(std::io::Error::other(format!("the source's {}() raised", self.method)))
                }
            }
        })
    }
}

fn method(obj: &Bound<'_, PyAny>, names: [&'static str; 2], what: &str) -> PyResult<&'static str> {
    for name in names {
        if obj.hasattr(name)? {
            return Ok(name);
        }
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!("{what} needs an object with {}() or {}()", names[0], names[1])))
}

/// Writes Python objects to a file or socket as a Leafwire stream: one frame per object,
/// gathered in a buffer that goes out in one write when full, at `flush()` and at `close()`.
#[pyclass(unsendable, module = "leafwire")]
pub struct StreamWriter {
    inner: Option<leafwire::stream::StreamWriter<PySink>>,
    default: Option<Py<PyAny>>,
    max_depth: usize,
}

impl StreamWriter {
    fn inner(&mut self) -> PyResult<&mut leafwire::stream::StreamWriter<PySink>> {
        self.inner.as_mut().ok_or_else(|| errors::bad_argument("the StreamWriter is closed"))
    }

    /// A core error, or what the sink raised if that is why.
    fn fail(&mut self, py: Python<'_>, e: leafwire::Error) -> PyErr {
        let raised = self.inner.as_mut().and_then(|w| w.get_mut().failed.take());
        raised.unwrap_or_else(|| to_py(py, e, Side::Encode))
    }
}

guarded! {
#[pymethods]
impl StreamWriter {
    #[new]
    // 65472: leafwire::stream::DEFAULT_BUFFER_SIZE (a signature's default is a literal).
    #[pyo3(signature = (sink, /, *, buffer_size = 65472, crc = false, default = None, max_depth = 128))]
    fn new(
        sink: &Bound<'_, PyAny>,
        buffer_size: usize,
        crc: bool,
        default: Option<Py<PyAny>>,
        max_depth: usize,
    ) -> PyResult<StreamWriter> {
        let method = method(sink, ["write", "sendall"], "StreamWriter")?;
        let target = PySink { target: sink.clone().unbind(), method, failed: None };
        let options = leafwire::stream::StreamOptions { buffer_size, crc, max_depth, ..Default::default() };
        let inner = leafwire::stream::StreamWriter::with_options(target, options)
            .map_err(|e| to_py(sink.py(), e, Side::Encode))?;
        Ok(StreamWriter { inner: Some(inner), default, max_depth })
    }

    /// Writes one object as one message (encoded as `dumps` encodes it).
    fn write(&mut self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        let default = self.default.as_ref().map(|d| d.bind(py).clone());
        let document = crate::dumps_plain(py, obj, default.as_ref(), self.max_depth)?;
        let written = self.inner()?.write_document(document.as_bytes());
        written.map_err(|e| self.fail(py, e))
    }

    /// Sends every buffered frame to the sink (and flushes a file).
    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        let flushed = self.inner()?.flush();
        flushed.map_err(|e| self.fail(py, e))
    }

    /// Flushes and detaches from the sink (which stays open: it is the caller's).
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.inner.is_some() {
            self.flush(py)?;
            if let Some(w) = self.inner.take() {
                // Flushed just above: `into_inner` has nothing left to write.
                let _ = w.into_inner();
            }
        }
        Ok(())
    }

    /// Bytes written so far, header included.
    #[getter]
    fn position(&mut self) -> PyResult<u64> {
        Ok(self.inner()?.position())
    }

    fn __enter__(slf: Py<Self>) -> PyResult<Py<Self>> {
        Ok(slf)
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}
}

/// The messages of a Leafwire stream read from a file or socket, as Python objects (or
/// lazy `Frame`s).
#[pyclass(unsendable, module = "leafwire")]
pub struct StreamIterator {
    reader: Option<leafwire::stream::StreamReader<PySource>>,
    arrays: Arrays,
    max_depth: usize,
    /// Yield `Frame`s, which share this copy of the key table while it does not change.
    lazy: Option<leafwire::stream::SharedKeys>,
}

/// A stream's message read lazily: a `Document` (indexing, `get`, `pointer`, `root`,
/// `to_python`...) over its own copy of the frame's bytes, so it stays usable after the
/// iterator has moved on. Offsets in its nodes and errors count from `origin`.
#[pyclass(frozen, extends = Document, module = "leafwire", name = "Frame")]
pub struct StreamFrame {
    offset: u64,
    origin: u64,
}

guarded! {
#[pymethods]
impl StreamFrame {
    /// The stream offset of the frame (its length field).
    #[getter]
    fn offset(&self) -> PyResult<u64> {
        Ok(self.offset)
    }

    /// The stream offset that the message's block offsets count from (spec §14.3).
    #[getter]
    fn origin(&self) -> PyResult<u64> {
        Ok(self.origin)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let doc = slf.as_super().get();
        Ok(format!("<leafwire.Frame at stream offset {}, root: {}>", slf.get().offset, doc.root_node().kind()))
    }
}
}

guarded! {
#[pymethods]
impl StreamIterator {
    fn __iter__(slf: Py<Self>) -> PyResult<Py<Self>> {
        Ok(slf)
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(reader) = self.reader.as_mut() else { return Ok(None) };
        let frame = match reader.next_frame() {
            None => {
                self.reader = None;
                return Ok(None);
            }
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                let raised = reader.get_mut().failed.take();
                self.reader = None;
                return Err(raised.unwrap_or_else(|| loads_general::err(py, e)));
            }
        };
        if let Some(keys) = self.lazy.as_mut() {
            let owned = frame.to_owned_sharing(keys);
            let lazy = StreamFrame { offset: frame.offset(), origin: frame.origin() };
            let init = pyo3::PyClassInitializer::from(Document::frame(owned)).add_subclass(lazy);
            return Ok(Some(Bound::new(py, init)?.into_any().unbind()));
        }
        // No owner: arrays are copied out of the reader's buffer, which the next frame reuses.
        let mut decoder = Decoder::new(py, self.arrays, self.max_depth, None, frame.bytes());
        Ok(Some(decoder.value(&frame.root(), 0)?.unbind()))
    }

    /// The stream offset of the next frame.
    #[getter]
    fn position(&self) -> PyResult<Option<u64>> {
        Ok(self.reader.as_ref().map(|r| r.position()))
    }
}
}

guarded! {
/// Iterates over the messages of the Leafwire stream read from `source` (a binary file or
/// a socket). A stream that ends inside a frame raises `DecodeError` after every complete
/// message before it has been yielded. With `lazy=True` it yields `Frame`s, each read
/// lazily over its own copy of its frame's bytes (typed arrays are read-only numpy views
/// of that copy); `arrays` and `max_depth` then apply to nothing (pass them to
/// `Frame.to_python`).
#[pyfunction]
// 65472: leafwire::stream::DEFAULT_BUFFER_SIZE (a signature's default is a literal).
#[pyo3(signature = (source, /, *, arrays = "numpy", max_depth = 128, buffer_size = 65472, max_frame = 67108864, lazy = false))]
pub fn iter_stream(
    source: &Bound<'_, PyAny>,
    arrays: &str,
    max_depth: usize,
    buffer_size: usize,
    max_frame: u64,
    lazy: bool,
) -> PyResult<StreamIterator> {
    let arrays = Arrays::parse(arrays)?;
    let method = method(source, ["read", "recv"], "iter_stream")?;
    let from = PySource { source: source.clone().unbind(), method, failed: None };
    let options = leafwire::stream::StreamOptions { buffer_size, max_frame, ..Default::default() };
    // The header is read here, so a source that is not a stream fails at the call.
    let reader =
        leafwire::stream::StreamReader::with_options(from, options).map_err(|e| loads_general::err(source.py(), e))?;
    let lazy = lazy.then(leafwire::stream::SharedKeys::default);
    Ok(StreamIterator { reader: Some(reader), arrays, max_depth, lazy })
}
}

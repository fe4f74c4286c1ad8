//! `leafwire.open`: a lazily read document over a memory-mapped file or a caller's buffer,
//! and its nodes, which behave as read-only mappings (objects, intmaps) and sequences
//! (arrays). Scalars come out as Python values and typed arrays as read-only numpy views
//! of the bytes.
//!
//! Ownership: a `Document` owns the bytes (the mapping, or a reference to the bytes object,
//! or a held buffer export). Nodes and numpy views hold a reference to the `Document`, so
//! the bytes live as long as anything that points into them.

use std::path::PathBuf;

use leafwire::{Kind, MappedFile, Node};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyInt, PySlice, PyString, PyType};

use crate::arrays;
use crate::errors::{to_py, NotFoundError, Side};
use crate::guard::guarded;
use crate::loads_general::{err, Arrays, Decoder};
use crate::node_iter::{ArrayIter, IterWhat, MapEntries, MapIter};

/// What keeps a document's bytes alive and in place.
enum Owner {
    Mapped(#[allow(dead_code)] MappedFile),
    Bytes(#[allow(dead_code)] Py<PyBytes>),
    Buffer(#[allow(dead_code)] PyUntypedBuffer),
    /// A packed document (spec §13) laid out as an ordinary one in memory: packed arrays
    /// have no nodes to hand out lazily.
    Unpacked(#[allow(dead_code)] leafwire::AlignedBytes),
    /// A stream's message (spec §14) with its own copy of its bytes and key table, made
    /// when the stream's reader handed it out: the reader's buffer moves on.
    Frame(#[allow(dead_code)] leafwire::stream::OwnedFrame),
}

/// What a `Document` reads: a document, or a stream's message laid out as one (spec §14.3).
enum Lazy {
    Document(leafwire::Document<'static>),
    Frame { root: Node<'static>, bytes: &'static [u8] },
}

/// A Leafwire document opened lazily: nothing past the header is read until asked for.
/// Subclassed by `leafwire.Frame`, a stream's message read lazily (crate::stream).
#[pyclass(frozen, subclass, module = "leafwire", name = "Document")]
pub struct Document {
    // Declared before `owner` so it is dropped first; it borrows the owner's bytes.
    doc: Lazy,
    owner: Owner,
}

/// The bytes of a buffer export, which must be C-contiguous.
pub fn buffer_bytes(buffer: &PyUntypedBuffer) -> PyResult<&[u8]> {
    if !buffer.is_c_contiguous() {
        return Err(PyTypeError::new_err("the buffer must be C-contiguous"));
    }
    let len = buffer.len_bytes();
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: the export keeps the memory alive and its size fixed while `buffer` lives;
    // the returned slice borrows `buffer`. Leafwire never writes through it.
    Ok(unsafe { std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, len) })
}

/// The path of an existing file when `source` is a path (str or os.PathLike), `None` for
/// anything else. The file is opened once here so that a missing or unreadable one raises
/// the precise OSError subclass (FileNotFoundError, PermissionError...) with `errno`,
/// `strerror` and `filename` set, as `open()` raises it.
pub fn file_path(source: &Bound<'_, PyAny>) -> PyResult<Option<PathBuf>> {
    if !source.is_instance_of::<PyString>() && !source.hasattr("__fspath__")? {
        return Ok(None);
    }
    let path: PathBuf = source.extract()?;
    let is_dir =
        std::fs::File::open(&path).and_then(|f| f.metadata()).map_err(|e| os_error(source, e.raw_os_error()))?.is_dir();
    if is_dir {
        let eisdir: i32 = source.py().import("errno")?.getattr("EISDIR")?.extract()?;
        return Err(os_error(source, Some(eisdir)));
    }
    Ok(Some(path))
}

/// `OSError(errno, strerror, filename)`, which Python turns into the subclass for the
/// errno; `filename` is `os.fspath(source)`, as `open()` gives it.
#[cold]
fn os_error(source: &Bound<'_, PyAny>, errno: Option<i32>) -> PyErr {
    let py = source.py();
    let made = (|| -> PyResult<PyErr> {
        let os = py.import("os")?;
        let filename = os.call_method1("fspath", (source,))?;
        let Some(errno) = errno else {
            return Ok(pyo3::exceptions::PyOSError::new_err((format!("cannot open {filename}"),)));
        };
        let strerror = os.call_method1("strerror", (errno,))?;
        let err = py.get_type::<pyo3::exceptions::PyOSError>().call1((errno, strerror, filename))?;
        Ok(PyErr::from_value(err))
    })();
    made.unwrap_or_else(|e| e)
}

impl Document {
    fn from_owner(py: Python<'_>, owner: Owner) -> PyResult<Document> {
        let bytes: &[u8] = match &owner {
            Owner::Mapped(m) => m.as_bytes(),
            Owner::Bytes(b) => b.bind(py).as_bytes(),
            Owner::Buffer(b) => buffer_bytes(b)?,
            Owner::Unpacked(b) => b.as_bytes(),
            Owner::Frame(f) => f.bytes(),
        };
        if !matches!(owner, Owner::Unpacked(_)) && leafwire::is_packed_document(bytes) {
            let unpacked = py.detach(|| leafwire::unpack(bytes)).map_err(|e| err(py, e))?;
            return Document::from_owner(py, Owner::Unpacked(leafwire::AlignedBytes::new(&unpacked)));
        }
        // SAFETY: the bytes belong to `owner`, which moves into the same `Document` and is
        // dropped after `doc`; their address does not change when `owner` moves (a mapping,
        // the storage of an immutable bytes object, or an exported buffer).
        let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(bytes.as_ptr(), bytes.len()) };
        let doc = leafwire::Document::open(bytes).map_err(|e| err(py, e))?;
        Ok(Document { doc: Lazy::Document(doc), owner })
    }

    /// A stream's message, read lazily over its own bytes.
    pub(crate) fn frame(frame: leafwire::stream::OwnedFrame) -> Document {
        // SAFETY: the frame's bytes and key table are heap memory the `OwnedFrame` owns
        // (behind `Arc`s, never written), which moves into the same `Document` as `owner`
        // and is dropped after `doc`; moving it does not move them.
        let root: Node<'static> = unsafe { std::mem::transmute::<Node<'_>, Node<'static>>(frame.root()) };
        let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(frame.bytes().as_ptr(), frame.bytes().len()) };
        Document { doc: Lazy::Frame { root, bytes }, owner: Owner::Frame(frame) }
    }

    pub fn open(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Document> {
        if let Some(path) = file_path(source)? {
            // SAFETY: the documented contract of `open(path)` (its docstring, spec §9.1): the
            // file is not modified or truncated while the document or its arrays are alive.
            let mapped = unsafe { MappedFile::open(&path) }.map_err(|e| to_py(py, e, Side::Decode))?;
            return Document::from_owner(py, Owner::Mapped(mapped));
        }
        if let Ok(bytes) = source.cast::<PyBytes>() {
            return Document::from_owner(py, Owner::Bytes(bytes.clone().unbind()));
        }
        match PyUntypedBuffer::get(source) {
            Ok(buffer) => Document::from_owner(py, Owner::Buffer(buffer)),
            Err(_) => Err(PyTypeError::new_err(format!(
                "open() expects a path (str or os.PathLike) or a bytes-like object, not {}",
                source.get_type().qualname()?
            ))),
        }
    }

    /// The document's bytes (they live as long as this `Document`).
    pub(crate) fn bytes(&self) -> &'static [u8] {
        match &self.doc {
            Lazy::Document(doc) => doc.as_bytes(),
            Lazy::Frame { bytes, .. } => bytes,
        }
    }

    pub(crate) fn root_node(&self) -> Node<'static> {
        match &self.doc {
            Lazy::Document(doc) => doc.root(),
            Lazy::Frame { root, .. } => *root,
        }
    }

    fn kind_of_owner(&self) -> &'static str {
        match self.owner {
            Owner::Mapped(_) => "mapped file",
            Owner::Bytes(_) => "bytes",
            Owner::Buffer(_) => "buffer",
            Owner::Unpacked(_) => "unpacked copy",
            Owner::Frame(_) => "stream frame",
        }
    }
}

/// A node as Python sees it: a scalar value, a numpy view, or a container node.
pub fn wrap<'py>(py: Python<'py>, doc: &Bound<'py, Document>, node: Node<'static>) -> PyResult<Bound<'py, PyAny>> {
    if let Some(obj) = Decoder::scalar(py, &node, doc.get().bytes())? {
        return Ok(obj);
    }
    let base = || PyClassInitializer::from(NodeBase { doc: doc.clone().unbind(), node });
    match node.kind() {
        Kind::Array => Ok(Bound::new(py, base().add_subclass(ArrayNode))?.into_any()),
        Kind::Object | Kind::IntMap => Ok(Bound::new(py, base().add_subclass(MapNode))?.into_any()),
        Kind::Table => Ok(crate::table::Table::new(py, doc, node)?.into_any()),
        _ => {
            let typed = node.typed().map_err(|e| err(py, e))?;
            arrays::view(py, &typed, doc.as_any(), node.offset())
        }
    }
}

fn to_python<'py>(
    py: Python<'py>,
    doc: &Bound<'py, Document>,
    node: &Node<'static>,
    arrays: &str,
    max_depth: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let mode = Arrays::parse(arrays)?;
    let owner = doc.as_any();
    let mut decoder = Decoder::new(py, mode, crate::check_depth(max_depth)?, Some(owner), doc.get().bytes());
    decoder.value(node, 0)
}

fn pointer<'py>(
    py: Python<'py>,
    doc: &Bound<'py, Document>,
    node: &Node<'static>,
    path: &str,
) -> PyResult<Bound<'py, PyAny>> {
    match node.pointer(path) {
        Ok(found) => wrap(py, doc, found),
        // A table's columns and cells have no nodes (spec §15.2): the table answers.
        Err(e) => match node.pointer_in_table(path) {
            Ok(Some(part)) => crate::table::Table::part(py, doc, part),
            Ok(None) => Err(to_py(py, e, Side::Decode)),
            Err(inner) => Err(to_py(py, inner, Side::Decode)),
        },
    }
}

guarded! {
#[pymethods]
impl Document {
    /// The root value: a node for containers, a numpy view for a typed array, else a scalar.
    #[getter]
    fn root<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        wrap(slf.py(), slf, slf.get().root_node())
    }

    /// The value at a JSON Pointer (RFC 6901), "" being the root. Raises NotFoundError
    /// (a KeyError) when the path names nothing.
    fn pointer<'py>(slf: &Bound<'py, Self>, path: &str) -> PyResult<Bound<'py, PyAny>> {
        pointer(slf.py(), slf, &slf.get().root_node(), path)
    }

    /// The whole document as Python values (like `loads`, but typed arrays are views of
    /// the document's bytes when `arrays="numpy"`).
    #[pyo3(signature = (*, arrays = "numpy", max_depth = 128))]
    fn to_python<'py>(slf: &Bound<'py, Self>, arrays: &str, max_depth: usize) -> PyResult<Bound<'py, PyAny>> {
        to_python(slf.py(), slf, &slf.get().root_node(), arrays, max_depth)
    }

    /// Checks the whole document (spec §9); raises DecodeError with the offset at fault.
    #[pyo3(signature = (*, max_depth = 128))]
    fn validate(&self, py: Python<'_>, max_depth: usize) -> PyResult<()> {
        let options = leafwire::ValidateOptions { max_depth: crate::check_depth(max_depth)? };
        match &self.doc {
            Lazy::Document(doc) => leafwire::validate_with(doc.as_bytes(), &options).map(|_| ()).map_err(|e| err(py, e)),
            // A message has no document to validate: reading every value checks what it holds.
            Lazy::Frame { root, .. } => root.to_value().map(|_| ()).map_err(|e| err(py, e)),
        }
    }

    /// The document's tables (spec §15) by name, as `leafwire.Table` objects: for a Data
    /// Package (spec §15.4), each tabular resource's `name`; for a root object with `name`
    /// and a table under `data` (`leafwire from-csv`), that name; otherwise the JSON Pointer
    /// of every table found through objects and arrays.
    fn tables<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::table::tables(slf.py(), slf)
    }

    /// Length of the document in bytes.
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        Ok(self.bytes().len())
    }

    fn __getitem__<'py>(slf: &Bound<'py, Self>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        Self::root(slf)?.get_item(key)
    }

    fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Self::root(slf)?.len()
    }

    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Ok(Self::root(slf)?.try_iter()?.into_any())
    }

    fn __contains__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Self::root(slf)?.contains(key)
    }

    #[pyo3(signature = (key, default = None))]
    fn get<'py>(slf: &Bound<'py, Self>, key: &Bound<'py, PyAny>, default: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        Self::root(slf)?.call_method1("get", (key, default))
    }

    fn keys<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::root(slf)?.call_method0("keys")
    }

    fn values<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::root(slf)?.call_method0("values")
    }

    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::root(slf)?.call_method0("items")
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("<leafwire.Document of {} bytes ({}), root: {}>", self.bytes().len(), self.kind_of_owner(), self.root_node().kind()))
    }
}
}

// ---- container nodes ----

/// What object and array nodes share: the document they live in and their place in it.
/// The base class of `ObjectNode` and `ArrayNode`, so that `pointer`, `to_python`,
/// `offset` and `document` are defined once.
#[pyclass(frozen, subclass, module = "leafwire", name = "_Node")]
pub struct NodeBase {
    doc: Py<Document>,
    node: Node<'static>,
}

impl NodeBase {
    fn len(&self, py: Python<'_>) -> PyResult<usize> {
        self.node.len().map_err(|e| err(py, e))
    }

    fn wrap<'py>(&self, py: Python<'py>, node: Node<'static>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.doc.bind(py), node)
    }
}

guarded! {
#[pymethods]
impl NodeBase {
    /// The value at a JSON Pointer relative to this node.
    fn pointer<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyAny>> {
        pointer(py, self.doc.bind(py), &self.node, path)
    }

    /// This node and everything under it as Python values: a dict for an object or
    /// intmap, a list for an array.
    #[pyo3(signature = (*, arrays = "numpy", max_depth = 128))]
    fn to_python<'py>(&self, py: Python<'py>, arrays: &str, max_depth: usize) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, self.doc.bind(py), &self.node, arrays, max_depth)
    }

    /// Byte offset of the container in the document.
    #[getter]
    fn offset(&self) -> PyResult<u64> {
        Ok(self.node.offset())
    }

    #[getter]
    fn document(&self, py: Python<'_>) -> PyResult<Py<Document>> {
        Ok(self.doc.clone_ref(py))
    }
}
}

/// An object or intmap inside an open document: a read-only `collections.abc.Mapping`.
#[pyclass(frozen, mapping, extends = NodeBase, module = "leafwire", name = "ObjectNode")]
pub struct MapNode;

/// The view classes of `keys()`, `values()` and `items()`, defined in `leafwire/__init__.py`
/// as subclasses of the `collections.abc` views with fast iteration.
static KEYS_VIEW: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static VALUES_VIEW: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ITEMS_VIEW: PyOnceLock<Py<PyType>> = PyOnceLock::new();

impl NodeBase {
    fn is_object(&self) -> bool {
        self.node.kind() == Kind::Object
    }

    /// The child under `key`; `Ok(None)` when absent or of a key type this map cannot hold.
    fn lookup(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Node<'static>>> {
        let found = if self.is_object() {
            let Ok(key) = key.cast::<PyString>() else { return Ok(None) };
            self.node.get(key.to_str()?)
        } else {
            if !key.is_instance_of::<PyInt>() {
                return Ok(None);
            }
            let Ok(key) = key.extract::<i64>() else { return Ok(None) };
            self.node.get_int(key)
        };
        match found {
            Ok(node) => Ok(Some(node)),
            Err(e) if e.category() == leafwire::Category::NotFound => Ok(None),
            Err(e) => Err(err(py, e)),
        }
    }

    fn entries(&self, py: Python<'_>, what: IterWhat) -> PyResult<MapIter> {
        let entries = if self.is_object() {
            MapEntries::Object(self.node.entries().map_err(|e| err(py, e))?)
        } else {
            MapEntries::IntMap(self.node.int_entries().map_err(|e| err(py, e))?)
        };
        Ok(MapIter { doc: self.doc.clone_ref(py), entries, what })
    }
}

impl MapNode {
    fn base<'a>(slf: &'a Bound<'_, Self>) -> &'a NodeBase {
        slf.as_super().get()
    }

    fn view<'py>(
        slf: &Bound<'py, Self>,
        cell: &'static PyOnceLock<Py<PyType>>,
        name: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let class = cell.import(slf.py(), "leafwire", name)?;
        class.call1((slf,))
    }
}

guarded! {
#[pymethods]
impl MapNode {
    fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Self::base(slf).len(slf.py())
    }

    fn __getitem__<'py>(slf: &Bound<'py, Self>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let base = Self::base(slf);
        match base.lookup(slf.py(), key)? {
            Some(node) => base.wrap(slf.py(), node),
            None => Err(NotFoundError::new_err((key.clone().unbind(),))),
        }
    }

    fn __contains__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(Self::base(slf).lookup(slf.py(), key)?.is_some())
    }

    #[pyo3(signature = (key, default = None))]
    fn get<'py>(slf: &Bound<'py, Self>, key: &Bound<'py, PyAny>, default: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let (py, base) = (slf.py(), Self::base(slf));
        match base.lookup(py, key)? {
            Some(node) => base.wrap(py, node),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<MapIter> {
        Self::base(slf).entries(slf.py(), IterWhat::Keys)
    }

    fn keys<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, &KEYS_VIEW, "_NodeKeysView")
    }

    fn values<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, &VALUES_VIEW, "_NodeValuesView")
    }

    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, &ITEMS_VIEW, "_NodeItemsView")
    }

    /// Iterator over the values in order (what `values()` iterates with).
    fn _iter_values(slf: &Bound<'_, Self>) -> PyResult<MapIter> {
        Self::base(slf).entries(slf.py(), IterWhat::Values)
    }

    /// Iterator over (key, value) pairs in order (what `items()` iterates with).
    fn _iter_items(slf: &Bound<'_, Self>) -> PyResult<MapIter> {
        Self::base(slf).entries(slf.py(), IterWhat::Items)
    }

    /// "object" or "intmap".
    #[getter]
    fn kind(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        Ok(if Self::base(slf).is_object() { "object" } else { "intmap" })
    }

    fn __eq__<'py>(slf: &Bound<'py, Self>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let mapping = py.import("collections.abc")?.getattr("Mapping")?;
        if !other.is_instance(&mapping)? {
            return Ok(py.NotImplemented().into_bound(py));
        }
        let builtins = py.import("builtins")?;
        let dict = builtins.getattr("dict")?;
        let mine = dict.call1((Self::items(slf)?,))?;
        let theirs = dict.call1((other.call_method0("items")?,))?;
        Ok(mine.eq(theirs)?.into_pyobject(py)?.to_owned().into_any())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let offset = Self::base(slf).node.offset();
        Ok(format!("<leafwire {} node at offset {} with {} keys>", Self::kind(slf)?, offset, Self::__len__(slf)?))
    }
}
}

/// An array inside an open document: a read-only `collections.abc.Sequence`.
#[pyclass(frozen, sequence, extends = NodeBase, module = "leafwire", name = "ArrayNode")]
pub struct ArrayNode;

impl NodeBase {
    fn item<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
        let node = self.node.at(i).map_err(|e| err(py, e))?;
        self.wrap(py, node)
    }

    fn children(&self, py: Python<'_>) -> PyResult<ArrayIter> {
        let children = self.node.iter().map_err(|e| err(py, e))?;
        Ok(ArrayIter { doc: self.doc.clone_ref(py), children })
    }
}

impl ArrayNode {
    fn base<'a>(slf: &'a Bound<'_, Self>) -> &'a NodeBase {
        slf.as_super().get()
    }
}

guarded! {
#[pymethods]
impl ArrayNode {
    fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Self::base(slf).len(slf.py())
    }

    fn __getitem__<'py>(slf: &Bound<'py, Self>, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let (py, base) = (slf.py(), Self::base(slf));
        let len = base.len(py)?;
        if let Ok(slice) = index.cast::<PySlice>() {
            let s = slice.indices(len as isize)?;
            let mut out = Vec::with_capacity(s.slicelength);
            let mut i = s.start;
            for _ in 0..s.slicelength {
                out.push(base.item(py, i as usize)?);
                i += s.step;
            }
            return Ok(pyo3::types::PyList::new(py, out)?.into_any());
        }
        let i: isize = index.extract().map_err(|_| {
            PyTypeError::new_err(format!("array indices must be integers or slices, not {}", index.get_type().qualname().map(|n| n.to_string()).unwrap_or_default()))
        })?;
        let resolved = if i < 0 { i + len as isize } else { i };
        if resolved < 0 || resolved as usize >= len {
            return Err(PyIndexError::new_err(format!("index {i} out of range for array of length {len}")));
        }
        base.item(py, resolved as usize)
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<ArrayIter> {
        Self::base(slf).children(slf.py())
    }

    fn __reversed__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let (py, base) = (slf.py(), Self::base(slf));
        let len = base.len(py)?;
        let items = (0..len).rev().map(|i| base.item(py, i)).collect::<PyResult<Vec<_>>>()?;
        Ok(pyo3::types::PyList::new(py, items)?.try_iter()?.into_any())
    }

    fn __contains__(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        for item in Self::base(slf).children(slf.py())?.by_ref(slf.py()) {
            if item?.eq(value)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Position of the first element equal to `value` (ValueError if absent).
    fn index(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        for (i, item) in Self::base(slf).children(slf.py())?.by_ref(slf.py()).enumerate() {
            if item?.eq(value)? {
                return Ok(i);
            }
        }
        Err(pyo3::exceptions::PyValueError::new_err("value is not in the array"))
    }

    /// Number of elements equal to `value`.
    fn count(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut n = 0;
        for item in Self::base(slf).children(slf.py())?.by_ref(slf.py()) {
            n += item?.eq(value)? as usize;
        }
        Ok(n)
    }

    #[getter]
    fn kind(&self) -> PyResult<&'static str> {
        Ok("array")
    }

    fn __eq__<'py>(slf: &Bound<'py, Self>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let sequence = py.import("collections.abc")?.getattr("Sequence")?;
        if other.is_instance_of::<PyString>() || !other.is_instance(&sequence)? {
            return Ok(py.NotImplemented().into_bound(py));
        }
        let mine = Self::base(slf).children(py)?.by_ref(py).collect::<PyResult<Vec<_>>>()?;
        let theirs: Vec<Bound<'py, PyAny>> = other.try_iter()?.collect::<PyResult<_>>()?;
        if mine.len() != theirs.len() {
            return Ok(false.into_pyobject(py)?.to_owned().into_any());
        }
        for (a, b) in mine.iter().zip(&theirs) {
            if !a.eq(b)? {
                return Ok(false.into_pyobject(py)?.to_owned().into_any());
            }
        }
        Ok(true.into_pyobject(py)?.to_owned().into_any())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let base = Self::base(slf);
        Ok(format!("<leafwire array node at offset {} with {} items>", base.node.offset(), base.len(slf.py())?))
    }
}
}

// ---- iterators ----

//! Iterators of the lazy node classes: keys, values and items of an object or intmap node,
//! elements of an array node.

use leafwire::{Children, Entries, IntEntries};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::document::{wrap, Document};
use crate::guard::guarded;
use crate::loads_general::err;

pub(crate) enum MapEntries {
    Object(Entries<'static>),
    IntMap(IntEntries<'static>),
}

#[derive(Clone, Copy)]
pub(crate) enum IterWhat {
    Keys,
    Values,
    Items,
}

#[pyclass(module = "leafwire")]
pub struct MapIter {
    pub(crate) doc: Py<Document>,
    pub(crate) entries: MapEntries,
    pub(crate) what: IterWhat,
}

guarded! {
#[pymethods]
impl MapIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        Ok(slf)
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (key, node) = match &mut self.entries {
            MapEntries::Object(e) => match e.next() {
                None => return Ok(None),
                Some(entry) => {
                    let (k, n) = entry.map_err(|e| err(py, e))?;
                    (PyString::new(py, k).into_any(), n)
                }
            },
            MapEntries::IntMap(e) => match e.next() {
                None => return Ok(None),
                Some(entry) => {
                    let (k, n) = entry.map_err(|e| err(py, e))?;
                    (k.into_pyobject(py)?.into_any(), n)
                }
            },
        };
        Ok(Some(match self.what {
            IterWhat::Keys => key,
            IterWhat::Values => wrap(py, self.doc.bind(py), node)?,
            IterWhat::Items => (key, wrap(py, self.doc.bind(py), node)?).into_pyobject(py)?.into_any(),
        }))
    }
}
}

#[pyclass(module = "leafwire")]
pub struct ArrayIter {
    pub(crate) doc: Py<Document>,
    pub(crate) children: Children<'static>,
}

impl ArrayIter {
    pub(crate) fn by_ref<'a, 'py>(&'a mut self, py: Python<'py>) -> impl Iterator<Item = PyResult<Bound<'py, PyAny>>> + 'a
    where
        'py: 'a,
    {
        std::iter::from_fn(move || self.__next__(py).transpose())
    }
}

guarded! {
#[pymethods]
impl ArrayIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        Ok(slf)
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.children.next() {
            None => Ok(None),
            Some(node) => Ok(Some(wrap(py, self.doc.bind(py), node.map_err(|e| err(py, e))?)?)),
        }
    }
}
}

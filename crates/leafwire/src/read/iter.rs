//! Iterators over a container's children and entries, and the prepared object view.

use super::lookup::PreparedObject;
use super::Node;
use crate::error::Result;
use crate::format::container::Geometry;

/// Iterator over the children of a container or the rows of a typed array.
pub struct Children<'a> {
    pub(super) node: Node<'a>,
    pub(super) container: Option<Geometry>,
    pub(super) typed_len: usize,
    pub(super) next: usize,
}

impl<'a> Iterator for Children<'a> {
    type Item = Result<Node<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.next;
        let len = self.container.as_ref().map_or(self.typed_len, |c| c.count);
        if i >= len {
            return None;
        }
        self.next += 1;
        Some(match &self.container {
            Some(c) => self.node.child(c, i),
            None => self.node.typed_at(i),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.container.as_ref().map_or(self.typed_len, |c| c.count);
        (len - self.next, Some(len - self.next))
    }
}

/// Iterator over an object's (key, value) pairs.
pub struct Entries<'a> {
    pub(super) node: Node<'a>,
    pub(super) container: Geometry,
    pub(super) next: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<(&'a str, Node<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.container.count {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(self.node.key_str(self.container.key(self.node.buf, i)).and_then(|k| Ok((k, self.node.child(&self.container, i)?))))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.container.count - self.next;
        (left, Some(left))
    }
}

/// Iterator over an intmap's (key, value) pairs.
pub struct IntEntries<'a> {
    pub(super) node: Node<'a>,
    pub(super) container: Geometry,
    pub(super) next: usize,
}

impl<'a> Iterator for IntEntries<'a> {
    type Item = Result<(i64, Node<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.container.count {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(self.node.child(&self.container, i).map(|n| (self.container.key(self.node.buf, i) as i64, n)))
    }
}

/// An object prepared for many lookups ([`Node::object`]).
#[derive(Debug, Clone, Copy)]
pub struct ObjectView<'a> {
    pub(super) node: Node<'a>,
    pub(super) object: PreparedObject,
}

impl<'a> ObjectView<'a> {
    /// The value under `key`; `Category::NotFound` if there is none.
    #[inline]
    pub fn get(&self, key: &str) -> Result<Node<'a>> {
        let (tag, payload) = self.object.child(self.node.buf, self.node.keys, &self.node.dict, key.as_bytes())?;
        Ok(self.node.with(tag, payload))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.object.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The object as a node (for iteration and the other node methods).
    pub fn node(&self) -> Node<'a> {
        self.node
    }
}


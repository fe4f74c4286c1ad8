//! Packed mode (issue #12; design in spec/design/packed.md): shredding by path and
//! per-column codecs. These are the building blocks; the column group block that puts
//! them in a document (tag 0x0E, feature bit 0) is not written yet, so nothing outside
//! the tests calls them.
#![allow(dead_code)]

mod shred;

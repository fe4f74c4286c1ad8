//! The bounded-memory paths write exactly the bytes of the in-memory ones: JSON streamed
//! to a writer (`json::from_json_to_writer`) against `json::from_json_with`, a document
//! recoded node by node (`recode_to_writer`) against `encode(&decode(..))`, and
//! `Encoder::finish_to` against `Encoder::finish`. Run on the corpora and on every spec
//! vector, through a writer that accepts a few bytes per call, as a pipe may.

mod common;

use std::io::Write;

use common::corpus::corpora;
use leafwire::json::{from_json_to_writer, from_json_with, JsonOptions};

/// A writer that takes at most 7 bytes per call, so every block boundary is exercised.
struct Trickle(Vec<u8>);

impl Write for Trickle {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7);
        self.0.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A writer that fails after `left` bytes, as a full disk does.
struct FullDisk {
    left: usize,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("no space left"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}


fn streamed_json(text: &[u8], step: usize) -> (Vec<u8>, Vec<usize>) {
    let mut out = Trickle(Vec::new());
    let mut seen = Vec::new();
    let len = from_json_to_writer(text, &JsonOptions::default(), &mut out, step, &mut |at| seen.push(at)).unwrap();
    assert_eq!(len as usize, out.0.len());
    (out.0, seen)
}

fn recoded(bytes: &[u8]) -> Vec<u8> {
    let doc = leafwire::Document::open(bytes).unwrap();
    let mut out = Trickle(Vec::new());
    let mut visited = 0;
    let len = leafwire::recode_to_writer(&doc, leafwire::DEFAULT_MAX_DEPTH, &mut out, 10, &mut |n| {
        assert_eq!(n, visited + 10, "progress every 10 values");
        visited = n;
    })
    .unwrap();
    assert_eq!(len as usize, out.0.len());
    out.0
}

#[test]
fn corpus_streams_the_bytes_of_the_in_memory_encoders() {
    for corpus in corpora() {
        for (name, text) in common::json_texts(&corpus) {
            let expected = from_json_with(&text, &JsonOptions::default()).unwrap();
            let (streamed, progress) = streamed_json(&text, 4096);
            assert!(streamed == expected, "{name}: from_json_to_writer differs from from_json_with");
            assert!(progress.windows(2).all(|w| w[0] < w[1]), "{name}: progress went backwards");
            assert!(progress.iter().all(|&at| at <= text.len()), "{name}: progress past the end");
            if text.len() > 3 * 4096 {
                assert!(progress.len() >= 2, "{name}: {} bytes but {} progress calls", text.len(), progress.len());
            }
            let again = leafwire::encode(&leafwire::decode(&expected).unwrap()).unwrap();
            assert!(recoded(&expected) == again, "{name}: recode_to_writer differs from encode(decode)");
        }
    }
}

#[test]
fn spec_vectors_recode_to_the_bytes_of_encode_decode() {
    let dir = common::corpus::repo_root().join("spec/vectors");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "lw") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        // Decoding copies, so alignment does not matter to it; recoding borrows typed
        // arrays, and reads them at any alignment too.
        let Ok(value) = leafwire::decode(&bytes) else { continue };
        let expected = leafwire::encode(&value).unwrap();
        assert!(recoded(&bytes) == expected, "{}: recode differs from encode(decode)", path.display());
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} vectors checked");
}

#[test]
fn a_document_with_garbage_recodes_canonically() {
    let bytes = leafwire::json::from_json(br#"{"a": [1, 2.5, "x"], "b": {"c": [[1, 2], [3, 4]]}, "d": "long string here"}"#).unwrap();
    let mut editor = leafwire::Editor::new(bytes).unwrap();
    editor.set("/d", &leafwire::Value::String("replaced".into())).unwrap();
    editor.delete("/a/1").unwrap();
    let edited = editor.as_bytes().to_vec();
    let expected = leafwire::encode(&leafwire::decode(&edited).unwrap()).unwrap();
    assert!(expected.len() < edited.len(), "the edit left no garbage to drop");
    assert!(recoded(&edited) == expected);
}

#[test]
fn encoder_finish_to_writes_the_bytes_of_finish() {
    let build = || {
        let mut e = leafwire::Encoder::new(leafwire::DEFAULT_MAX_DEPTH);
        e.begin_object().unwrap();
        e.key("s").unwrap();
        e.string("text").unwrap();
        e.key("t").unwrap();
        e.typed(leafwire::ElementType::F64, &[3], &[0u8; 24], Some(&[true, false, false])).unwrap();
        e.key("b").unwrap();
        e.bytes(&[1, 2, 3]).unwrap();
        e.end().unwrap();
        e
    };
    let expected = build().finish().unwrap();
    let mut out = Trickle(Vec::new());
    build().finish_to(&mut out).unwrap();
    assert_eq!(out.0, expected);
}

#[test]
fn a_failing_writer_is_an_io_error_not_a_panic() {
    let text = br#"{"a": "some text that goes into the data section", "b": [1.5, 2.5, 3.5]}"#;
    let full = from_json_with(text, &JsonOptions::default()).unwrap();
    for left in [0, 10, full.len() / 2, full.len() - 1] {
        let e = from_json_to_writer(text, &JsonOptions::default(), &mut FullDisk { left }, usize::MAX, &mut |_| {}).unwrap_err();
        assert_eq!(e.category(), leafwire::Category::Io, "failing after {left} bytes: {e}");
    }
}

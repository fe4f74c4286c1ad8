//! Editing a document larger than 4 GiB, so that offsets need 8-byte slots (spec §3.2).
//!
//! Ignored by default: it needs about 9 GiB of memory and a minute on a 2-core machine,
//! more than CI should spend on one test. Run it with
//! `cargo test --release -p leafwire --test edit_large -- --ignored --nocapture`.

use leafwire::{Editor, ElementType, Encoder, Number, Value};

const BIG: usize = (1 << 32) + (1 << 20);

#[test]
#[ignore]
fn edits_past_4_gib_keep_the_document_valid() {
    let started = std::time::Instant::now();
    let zeros = vec![0u8; BIG];
    let mut e = Encoder::new(leafwire::DEFAULT_MAX_DEPTH);
    e.begin_object().unwrap();
    e.key("big").unwrap();
    e.typed(ElementType::U8, &[BIG], &zeros, None).unwrap();
    e.key("tail").unwrap();
    e.string("short").unwrap();
    e.end().unwrap();
    drop(zeros);
    let bytes = e.finish().unwrap();
    assert!(bytes.len() > BIG, "{} bytes", bytes.len());
    eprintln!("encoded {} bytes in {:.1?}", bytes.len(), started.elapsed());

    let mut ed = Editor::new(bytes).unwrap();
    ed.set_compact_threshold(0.0);
    // A longer string lands past 4 GiB: the root's slots widen to 8 bytes (relocation).
    let long = "x".repeat(300);
    ed.set("/tail", &Value::String(long.clone())).unwrap();
    ed.set("/after", &Value::Array(vec![Value::Int(1), Value::String("past 4 GiB".into())])).unwrap();
    ed.push("/after", &Value::Int(3)).unwrap();
    ed.set_element("/big", BIG - 1, Number::Int(255)).unwrap();
    ed.rename("/tail", "renamed").unwrap();
    eprintln!("edited in {:.1?}", started.elapsed());

    let stats = leafwire::validate(ed.as_bytes()).unwrap();
    assert_eq!(stats.typed_arrays, 1);
    let doc = ed.document().unwrap();
    assert_eq!(doc.pointer("/renamed").unwrap().as_str().unwrap(), long);
    assert_eq!(doc.pointer("/after/1").unwrap().as_str().unwrap(), "past 4 GiB");
    assert_eq!(doc.pointer("/after/2").unwrap().as_i64().unwrap(), 3);
    let big = doc.pointer("/big").unwrap().as_slice::<u8>().unwrap();
    assert_eq!((big.len(), big[BIG - 1], big[BIG - 2]), (BIG, 255, 0));
    assert!(doc.pointer("/tail").is_err());
    let root_offset = doc.record().root;
    assert!(root_offset > u32::MAX as u64, "the relocated root lives past 4 GiB: {root_offset}");

    ed.delete("/after").unwrap();
    leafwire::validate(ed.as_bytes()).unwrap();
    assert!(ed.document().unwrap().pointer("/after").is_err());
    eprintln!("done in {:.1?}", started.elapsed());
}

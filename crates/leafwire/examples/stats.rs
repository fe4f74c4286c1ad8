fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read(&path).unwrap();
    let bytes = leafwire::json::from_json(&text).unwrap();
    println!("{:?} size {}", leafwire::validate(&bytes).unwrap(), bytes.len());
    let doc = leafwire::Document::open(&bytes).unwrap();
    let ring = doc.pointer(&std::env::args().nth(2).unwrap_or_default()).unwrap();
    println!("{:?} {:?}", ring.kind(), ring.len());
    if let Ok(t) = ring.typed() { println!("{:?} {:?}", t.element_type(), t.shape()); }
}

//! Arbitrary bytes through packed mode's page codecs (spec/design/packed.md §5, §8): as a
//! page of ints, floats or strings (plain streams and the zstd stage), which must decode
//! to exactly the declared count or fail cleanly; and as values for the selector, whose
//! page must decode back to them bit for bit. See `leafwire::__fuzz_packed_page`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| leafwire::__fuzz_packed_page(data));

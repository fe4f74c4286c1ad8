//! A decoded string stream: all its text in one buffer, with where each string lies.
//!
//! Pages decode into this form (one copy of a page's text, no allocation per string), and
//! readers take each string when they reach it: a struct's `String` is then allocated in
//! the order the rows are built, as an unpacked decode allocates it, and a reader that
//! wants a few elements of a page allocates only theirs.

/// The strings of a stream, in order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Texts {
    text: String,
    /// Where string i lies in `text`: from and to, both char boundaries. A dictionary
    /// page's strings are spans of its dictionary's text, appended once.
    spans: Vec<(usize, usize)>,
}

/// Text that is not UTF-8, or cut inside a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotUtf8 {
    /// The offset, in the bytes given, where the text stops being UTF-8 or of the cut.
    pub byte: usize,
    /// The string the offset is in (for a cut, the string the cut ends).
    pub string: usize,
}

impl Texts {
    /// The strings `bytes` holds, string i ending at `ends[i]` (ascending, the last one
    /// at most `bytes.len()`): one UTF-8 check of the whole, then one of each cut (a cut
    /// inside a character would leave both sides invalid).
    pub fn from_utf8(bytes: Vec<u8>, ends: &[usize]) -> Result<Texts, NotUtf8> {
        debug_assert!(ends.windows(2).all(|w| w[0] <= w[1]) && ends.last().is_none_or(|&e| e <= bytes.len()));
        let text = String::from_utf8(bytes).map_err(|e| {
            let byte = e.utf8_error().valid_up_to();
            NotUtf8 { byte, string: ends.partition_point(|&end| end <= byte) }
        })?;
        if let Some(string) = ends.iter().position(|&e| !text.is_char_boundary(e)) {
            return Err(NotUtf8 { byte: ends[string], string });
        }
        let mut spans = Vec::with_capacity(ends.len());
        let mut start = 0;
        for &end in ends {
            spans.push((start, end));
            start = end;
        }
        Ok(Texts { text, spans })
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The bytes of all the strings (a dictionary's string counted at each use).
    pub fn total_len(&self) -> usize {
        self.spans.iter().map(|&(from, to)| to - from).sum()
    }

    /// String `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&str> {
        let &(from, to) = self.spans.get(i)?;
        let bytes = self.text.as_bytes().get(from..to)?;
        // SAFETY: `text` is UTF-8 and every span's ends are char boundaries: `from_utf8`
        // and `push_cut` check both, `push`/`push_with` append whole `str`s, and
        // `push_codes` and `append` shift spans by a length of whole `str`s. This read is
        // the packed decode's per-string step, where the two boundary checks of slicing
        // a `str` cost 0.7 M of the GraphQL orders' 12.2 M instructions per decode.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    }

    pub fn push(&mut self, s: &str) {
        self.push_with(|text| text.push_str(s));
    }

    /// Appends the string that `write` appends to the text.
    #[inline]
    pub fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        let from = self.text.len();
        write(&mut self.text);
        self.spans.push((from, self.text.len()));
    }

    /// Appends `text` cut into strings of the byte lengths `lens` (which sum to its
    /// length); `Err` with the offset in `text` of a cut inside a character.
    pub fn push_cut(&mut self, text: &str, lens: &[usize]) -> Result<(), NotUtf8> {
        let mut at = 0;
        for (string, &l) in lens.iter().enumerate() {
            at += l;
            if !text.is_char_boundary(at) {
                return Err(NotUtf8 { byte: at, string });
            }
        }
        let mut from = self.text.len();
        self.text.push_str(text);
        self.spans.reserve(lens.len());
        for &l in lens {
            self.spans.push((from, from + l));
            from += l;
        }
        Ok(())
    }

    /// Appends string `codes[i]` of `dict` for each i: the dictionary's text once, and a
    /// span into it per code. `None` (nothing appended) when a code is not one of `dict`'s.
    pub fn push_codes(&mut self, dict: &Texts, codes: &[i64]) -> Option<()> {
        if codes.iter().any(|&c| usize::try_from(c).map_or(true, |c| c >= dict.len())) {
            return None;
        }
        let base = self.text.len();
        self.text.push_str(&dict.text);
        self.spans.extend(codes.iter().map(|&c| {
            let (from, to) = dict.spans[c as usize];
            (base + from, base + to)
        }));
        Some(())
    }

    /// Appends the strings of `other` (a later page of the same stream).
    pub fn append(&mut self, other: Texts) {
        if self.is_empty() && self.text.capacity() < other.text.len() {
            *self = other;
            return;
        }
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.spans.extend(other.spans.iter().map(|&(from, to)| (base + from, base + to)));
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.spans.clear();
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i).expect("an index below len"))
    }
}

/// Streams are equal when their strings are, however they are laid out.
impl PartialEq for Texts {
    fn eq(&self, other: &Texts) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Texts {}

impl<S: AsRef<str>> FromIterator<S> for Texts {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Texts {
        let mut texts = Texts::default();
        for s in iter {
            texts.push(s.as_ref());
        }
        texts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_come_back_in_order() {
        let mut t: Texts = ["ab", "", "ç"].into_iter().collect();
        assert_eq!(t.iter().collect::<Vec<_>>(), ["ab", "", "ç"]);
        t.append(["x"].into_iter().collect());
        t.push_with(|s| s.push_str("0xff"));
        assert_eq!(t.iter().collect::<Vec<_>>(), ["ab", "", "ç", "x", "0xff"]);
        assert_eq!((t.len(), t.total_len(), t.get(5)), (5, 9, None));
    }

    #[test]
    fn cuts_and_text_are_checked() {
        let ok = Texts::from_utf8("aéb".as_bytes().to_vec(), &[1, 3, 4]).unwrap();
        assert_eq!(ok.iter().collect::<Vec<_>>(), ["a", "é", "b"]);
        // A cut inside "é" (bytes 1..3), and a byte that is not UTF-8 in the second string.
        assert_eq!(Texts::from_utf8("aéb".as_bytes().to_vec(), &[2, 4]), Err(NotUtf8 { byte: 2, string: 0 }));
        assert_eq!(Texts::from_utf8(vec![b'a', b'b', 0xFF], &[1, 3]), Err(NotUtf8 { byte: 2, string: 1 }));
        let mut t = Texts::default();
        assert_eq!(t.push_cut("aé", &[2, 1]), Err(NotUtf8 { byte: 2, string: 0 }));
        assert!(t.is_empty());
        t.push_cut("aé", &[1, 2]).unwrap();
        assert_eq!(t.iter().collect::<Vec<_>>(), ["a", "é"]);
    }

    #[test]
    fn dictionary_codes_share_the_dictionary_text() {
        let dict: Texts = ["yz", "é"].into_iter().collect();
        let mut t: Texts = ["a"].into_iter().collect();
        t.push_codes(&dict, &[1, 0, 1]).unwrap();
        assert_eq!(t.iter().collect::<Vec<_>>(), ["a", "é", "yz", "é"]);
        assert_eq!((t.len(), t.total_len()), (4, 1 + 2 + 2 + 2));
        assert_eq!(t, ["a", "é", "yz", "é"].into_iter().collect::<Texts>());
        assert_eq!(t.push_codes(&dict, &[0, 2]), None);
        assert_eq!(t.push_codes(&dict, &[-1]), None);
        assert_eq!(t.len(), 4);
        let mut u: Texts = ["b"].into_iter().collect();
        u.append(t);
        assert_eq!(u.iter().collect::<Vec<_>>(), ["b", "a", "é", "yz", "é"]);
    }
}

//! Where the elements of a request body's message list stand, byte for byte.
//!
//! The gateway forwards what it keeps exactly as the client wrote it: it edits
//! a body by replacing the bytes of the few messages it changes, and it knows
//! a message it has seen before by its bytes. Both need the byte span of each
//! element of one top-level array member (`messages`, `input`, `contents`),
//! found here in one pass without building the document. The scan is
//! iterative (no recursion, whatever the nesting) and refuses, with `None`,
//! anything it is not sure of; the caller has parsed the body as JSON already.

/// The byte spans `(start, end)` of the elements of the array that is the
/// member `key` of the top-level object of `text`, in order; `None` when
/// `text` is not such an object (or the member is absent or not an array).
#[must_use]
pub fn member_array_spans(text: &[u8], key: &str) -> Option<Vec<(usize, usize)>> {
    member_array(text, key).map(|(_, spans)| spans)
}

/// The byte span of the array that is the member `key` of the top-level
/// object of `text` (the first, should a key repeat), and the spans of its
/// elements, as [`member_array_spans`].
#[must_use]
pub fn member_array(text: &[u8], key: &str) -> Option<(Span, Vec<Span>)> {
    match member(text, key, true)? {
        Found::Elements(array, spans) => Some((array, spans)),
        Found::Value(_) => None,
    }
}

/// A 16-byte BLAKE3 digest of each span's bytes of `text`: what the gateway
/// knows an element it read before by.
#[must_use]
pub fn span_digests(text: &[u8], spans: &[(usize, usize)]) -> Vec<[u8; 16]> {
    let hash = |spans: &[(usize, usize)]| -> Vec<[u8; 16]> {
        spans
            .iter()
            .map(|&(start, end)| {
                let mut out = [0u8; 16];
                out.copy_from_slice(&blake3::hash(&text[start..end]).as_bytes()[..16]);
                out
            })
            .collect()
    };
    let total: usize = spans.iter().map(|&(start, end)| end - start).sum();
    if total < PARALLEL_BYTES || spans.len() < 2 {
        return hash(spans);
    }
    // A large body: its first and second halves hashed on two threads.
    let (first, second) = spans.split_at(spans.len() / 2);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| hash(second));
        let mut out = hash(first);
        out.extend(other.join().unwrap_or_else(|_| hash(second)));
        out
    })
}

/// From how many bytes of elements [`span_digests`] hashes on two threads.
const PARALLEL_BYTES: usize = 512 * 1024;

/// The byte span of the value of the member `key` of the top-level object
/// of `text` (the first, should a key repeat), or `None`.
#[must_use]
pub fn member_value_span(text: &[u8], key: &str) -> Option<(usize, usize)> {
    match member(text, key, false)? {
        Found::Value(span) => Some(span),
        Found::Elements(..) => None,
    }
}

/// A byte span `(start, end)` of a text.
pub type Span = (usize, usize);

enum Found {
    Elements((usize, usize), Vec<(usize, usize)>),
    Value((usize, usize)),
}

fn member(text: &[u8], key: &str, elements: bool) -> Option<Found> {
    let mut scan = Scan { text, at: 0 };
    scan.ws();
    scan.eat(b'{')?;
    scan.ws();
    if scan.peek()? == b'}' {
        return None;
    }
    let mut found = None;
    loop {
        scan.ws();
        let name = scan.string_value()?;
        scan.ws();
        scan.eat(b':')?;
        scan.ws();
        if name == key && found.is_none() {
            if elements {
                if scan.peek()? != b'[' {
                    return None;
                }
                let start = scan.at;
                let spans = scan.elements()?;
                found = Some(Found::Elements((start, scan.at), spans));
            } else {
                let start = scan.at;
                scan.skip_value()?;
                found = Some(Found::Value((start, scan.at)));
            }
        } else {
            scan.skip_value()?;
        }
        scan.ws();
        match scan.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    scan.ws();
    if scan.at != text.len() {
        return None;
    }
    found
}

struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Past a string (at its opening quote), without decoding it: from one
    /// quote or backslash to the next (most of a body's bytes are in strings).
    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let rest = self.text.get(self.at..)?;
            self.at += memchr::memchr2(b'"', b'\\', rest)?;
            if self.next()? == b'"' {
                return Some(());
            }
            self.next()?; // the escaped byte
        }
    }

    /// A string's text (at its opening quote), its escapes decoded.
    fn string_value(&mut self) -> Option<String> {
        let start = self.at + 1;
        self.skip_string()?;
        let raw = &self.text[start..self.at - 1];
        if !raw.contains(&b'\\') {
            return String::from_utf8(raw.to_vec()).ok();
        }
        // Rare in member names: let a JSON reader decode it.
        let quoted = &self.text[start - 1..self.at];
        match crate::parse::parse(std::str::from_utf8(quoted).ok()?, 1).ok()? {
            crate::parse::Value::Str(text) => Some(text.into_owned()),
            _ => None,
        }
    }

    /// Past one value of any kind: containers are counted with a depth, not
    /// recursed into.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => self.skip_string()?,
                        b'{' | b'[' => {
                            depth += 1;
                            self.at += 1;
                        }
                        b'}' | b']' => {
                            depth -= 1;
                            self.at += 1;
                            if depth == 0 {
                                return Some(());
                            }
                        }
                        _ => self.at += 1,
                    }
                }
            }
            _ => {
                let start = self.at;
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }

    /// The spans of an array's elements (at its `[`), and past it.
    fn elements(&mut self) -> Option<Vec<(usize, usize)>> {
        self.eat(b'[')?;
        let mut spans = Vec::new();
        self.ws();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(spans);
        }
        loop {
            self.ws();
            let start = self.at;
            self.skip_value()?;
            spans.push((start, self.at));
            self.ws();
            match self.next()? {
                b',' => {}
                b']' => return Some(spans),
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'a>(text: &'a str, key: &str) -> Option<Vec<&'a str>> {
        member_array_spans(text.as_bytes(), key)
            .map(|spans| spans.iter().map(|&(a, b)| &text[a..b]).collect())
    }

    #[test]
    fn finds_each_element_as_written() {
        let body = r#" { "model" : "m", "messages" : [ {"role": "user", "content": "a, ] } \" b"} ,
            {"role":"assistant","content":[{"type":"text","text":"[{"}]}, 3, "s", null ] , "stream": true } "#;
        assert_eq!(
            texts(body, "messages").unwrap(),
            vec![
                r#"{"role": "user", "content": "a, ] } \" b"}"#,
                r#"{"role":"assistant","content":[{"type":"text","text":"[{"}]}"#,
                "3",
                r#""s""#,
                "null",
            ]
        );
        assert_eq!(texts(body, "model"), None); // not an array
        assert_eq!(texts(body, "absent"), None);
        assert_eq!(
            texts(r#"{"messages":[]}"#, "messages").unwrap(),
            Vec::<&str>::new()
        );
        assert_eq!(
            texts(r#"{"m\u0065ssages":[1]}"#, "messages").unwrap(),
            vec!["1"]
        );
    }

    #[test]
    fn refuses_what_is_not_a_whole_object() {
        for bad in [
            "",
            "[]",
            r#"{"messages":[1,]"#,
            r#"{"messages":[1 2]}"#,
            r#"{"messages":["unterminated]}"#,
            r#"{"messages":[1]} trailing"#,
            r#"{"a" 1}"#,
            "{}",
        ] {
            assert_eq!(
                member_array_spans(bad.as_bytes(), "messages"),
                None,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_array_span_holds_its_elements() {
        let body = r#"{"a": [9], "messages" : [ 1 , {"b":[2]} ] , "z": 0}"#;
        let ((start, end), spans) = member_array(body.as_bytes(), "messages").unwrap();
        assert_eq!(&body[start..end], r#"[ 1 , {"b":[2]} ]"#);
        assert_eq!(spans.len(), 2);
        let digests = span_digests(body.as_bytes(), &spans);
        assert_ne!(digests[0], digests[1]);
        assert_eq!(digests[0], span_digests(b"1", &[(0, 1)])[0]);
    }

    #[test]
    fn a_large_list_is_hashed_alike_on_two_threads() {
        let element = format!(r#"{{"text":"{}\"q\\"}}"#, "x".repeat(4000));
        let body = format!(
            r#"{{"messages":[{}]}}"#,
            vec![element.as_str(); 300].join(",")
        );
        let (_, spans) = member_array(body.as_bytes(), "messages").unwrap();
        assert_eq!(spans.len(), 300);
        assert!(spans.iter().all(|&(a, b)| body[a..b] == element));
        let digests = span_digests(body.as_bytes(), &spans);
        let one = span_digests(element.as_bytes(), &[(0, element.len())])[0];
        assert!(digests.iter().all(|d| *d == one));
    }

    #[test]
    fn deep_nesting_is_counted_not_recursed() {
        let deep = "[".repeat(200_000) + &"]".repeat(200_000);
        let body = format!(r#"{{"messages":[{deep},1]}}"#);
        let spans = member_array_spans(body.as_bytes(), "messages").unwrap();
        assert_eq!(spans.len(), 2);
        assert_eq!(&body[spans[1].0..spans[1].1], "1");
    }
}

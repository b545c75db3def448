//! A strict JSON reader for stored conversations (`Conversation.from_json`).
//!
//! It accepts a subset of what Python's `json.loads` (with thinkseal's hooks)
//! accepts, and reads every accepted text to the same values: anything it is
//! not sure of — a duplicate key, a lone surrogate, a constant such as `NaN`,
//! an integer outside `i64`, a float that overflows, a raw control character
//! in a string, nesting deeper than asked — is *refused*, and the caller reads
//! the text the slow way, which reports the exact error. So this reader never
//! needs its own error messages: [`Refused`] only says where it stopped.
//!
//! Strings without escapes borrow from the input; the tree costs one
//! allocation per container.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::{jcs, plain};

/// A JSON value read from `'a` text.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    /// An integer literal that fits `i64` (no fraction, no exponent).
    Int(i64),
    /// A number with a fraction or an exponent, finite.
    Float(f64),
    Str(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    /// Members in document order; keys are all different.
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl<'a> Value<'a> {
    /// The member `key` of an object (`None` for a missing key or a non-object).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// The byte offset where the reader stopped: the text is not JSON, or it is
/// JSON this reader leaves to the slow path (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub at: usize,
}

/// Reads `text` as one JSON value, containers nested at most `max_depth` deep.
///
/// # Errors
///
/// [`Refused`] for anything outside the accepted subset (module documentation).
pub fn parse(text: &str, max_depth: usize) -> Result<Value<'_>, Refused> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        depth_left: max_depth,
    };
    reader.skip_space();
    let value = reader.value()?;
    reader.skip_space();
    if reader.at == reader.bytes.len() {
        Ok(value)
    } else {
        Err(reader.refuse())
    }
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth_left: usize,
}

/// Objects with more members than this check duplicates with a set, not a scan.
const SCAN_LIMIT: usize = 16;

impl<'a> Reader<'a> {
    fn refuse(&self) -> Refused {
        Refused { at: self.at }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), Refused> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.refuse())
        }
    }

    fn value(&mut self) -> Result<Value<'a>, Refused> {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Value::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            _ => Err(self.refuse()),
        }
    }

    fn word(&mut self, word: &str, value: Value<'a>) -> Result<Value<'a>, Refused> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.refuse())
        }
    }

    fn enter(&mut self) -> Result<(), Refused> {
        if self.depth_left == 0 {
            return Err(self.refuse());
        }
        self.depth_left -= 1;
        self.at += 1; // the opening bracket
        self.skip_space();
        Ok(())
    }

    fn array(&mut self) -> Result<Value<'a>, Refused> {
        self.enter()?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
        } else {
            loop {
                items.push(self.value()?);
                self.skip_space();
                match self.peek() {
                    Some(b',') => {
                        self.at += 1;
                        self.skip_space();
                    }
                    Some(b']') => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(self.refuse()),
                }
            }
        }
        self.depth_left += 1;
        Ok(Value::Array(items))
    }

    fn object(&mut self) -> Result<Value<'a>, Refused> {
        self.enter()?;
        let mut members: Vec<(Cow<'a, str>, Value<'a>)> = Vec::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
        } else {
            loop {
                if self.peek() != Some(b'"') {
                    return Err(self.refuse());
                }
                let key_at = self.at;
                let key = self.string()?;
                if members.len() < SCAN_LIMIT && members.iter().any(|(k, _)| *k == key) {
                    return Err(Refused { at: key_at });
                }
                self.skip_space();
                self.expect(b':')?;
                self.skip_space();
                members.push((key, self.value()?));
                self.skip_space();
                match self.peek() {
                    Some(b',') => {
                        self.at += 1;
                        self.skip_space();
                    }
                    Some(b'}') => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(self.refuse()),
                }
            }
        }
        if members.len() > SCAN_LIMIT {
            let mut seen = HashSet::with_capacity(members.len());
            if !members.iter().all(|(k, _)| seen.insert(k.as_ref())) {
                return Err(self.refuse());
            }
        }
        self.depth_left += 1;
        Ok(Value::Object(members))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, the grammar of
    /// RFC 8259 and of Python's scanner.
    fn number(&mut self) -> Result<Value<'a>, Refused> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.refuse()),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.require_digits()?;
            integral = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.require_digits()?;
            integral = false;
        }
        let literal = &self.text[start..self.at];
        if integral {
            literal
                .parse::<i64>()
                .map(Value::Int)
                .map_err(|_| Refused { at: start })
        } else {
            // Rust's parse rounds correctly, as Python's float() does.
            match literal.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Value::Float(x)),
                _ => Err(Refused { at: start }),
            }
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn require_digits(&mut self) -> Result<(), Refused> {
        let start = self.at;
        self.digits();
        if self.at == start {
            Err(self.refuse())
        } else {
            Ok(())
        }
    }

    /// A string after its opening quote; borrowed when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, Refused> {
        self.at += 1; // the opening quote
        let start = self.at;
        self.at += plain::plain_len(&self.bytes[start..]);
        match self.peek() {
            Some(b'"') => {
                let s = &self.text[start..self.at];
                self.at += 1;
                return Ok(Cow::Borrowed(s));
            }
            Some(b'\\') => {}
            _ => return Err(self.refuse()),
        }
        let mut owned = String::with_capacity(self.at - start + 16);
        owned.push_str(&self.text[start..self.at]);
        loop {
            let run = self.at;
            self.at += plain::plain_len(&self.bytes[run..]);
            owned.push_str(&self.text[run..self.at]);
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(Cow::Owned(owned));
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut owned)?;
                }
                _ => return Err(self.refuse()),
            }
        }
    }

    /// One escape after its backslash. A `\u` escape of a surrogate must be
    /// the high half of a pair whose low half follows at once.
    fn escape(&mut self, out: &mut String) -> Result<(), Refused> {
        let Some(kind) = self.peek() else {
            return Err(self.refuse());
        };
        self.at += 1;
        let c = match kind {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&unit) {
                    if !self.bytes[self.at..].starts_with(b"\\u") {
                        return Err(self.refuse());
                    }
                    self.at += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.refuse());
                    }
                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    unit
                };
                char::from_u32(code).ok_or_else(|| self.refuse())?
            }
            _ => return Err(self.refuse()),
        };
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, Refused> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.refuse())?;
        let mut unit = 0;
        for &d in digits {
            let v = char::from(d).to_digit(16).ok_or_else(|| self.refuse())?;
            unit = unit * 16 + v;
        }
        self.at += 4;
        Ok(unit)
    }
}

/// Nesting past the limit given to [`write_canonical`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep;

/// Appends the RFC 8785 bytes of `value` to `out`: the bytes [`crate::jcs`]
/// writes for the same value held in Python (members sorted by UTF-16 code
/// units, integers with all their digits), containers nested at most
/// `max_depth` levels (counted as `jcs::Path` counts them).
///
/// # Errors
///
/// [`TooDeep`] past `max_depth`.
pub fn write_canonical(
    out: &mut Vec<u8>,
    value: &Value<'_>,
    max_depth: usize,
) -> Result<(), TooDeep> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        // Finite by construction (the reader refuses overflow).
        Value::Float(x) => jcs::write_f64(out, *x).map_err(|_| TooDeep)?,
        Value::Str(s) => jcs::write_string(out, s),
        Value::Array(items) => {
            let inner = max_depth.checked_sub(1).ok_or(TooDeep)?;
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(out, item, inner)?;
            }
            out.push(b']');
        }
        Value::Object(members) => {
            let inner = max_depth.checked_sub(1).ok_or(TooDeep)?;
            let mut sorted: Vec<(&str, &Value<'_>)> =
                members.iter().map(|(k, v)| (k.as_ref(), v)).collect();
            jcs::sort_members(&mut sorted);
            out.push(b'{');
            for (i, (key, item)) in sorted.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                jcs::write_string(out, key);
                out.push(b':');
                write_canonical(out, item, inner)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Value<'_> {
        parse(text, 64).unwrap_or_else(|e| panic!("refused {text:?} at {}", e.at))
    }

    fn refused(text: &str) {
        assert!(parse(text, 64).is_err(), "accepted {text:?}");
    }

    #[test]
    fn reads_every_kind_of_value() {
        let v = ok(r#" {"a": [1, -0, 2.5, -1e3, true, false, null, "x\u00e9\n"], "b": {}} "#);
        let Value::Object(members) = &v else { panic!() };
        assert_eq!(members.len(), 2);
        assert_eq!(
            v.get("a"),
            Some(&Value::Array(vec![
                Value::Int(1),
                Value::Int(0),
                Value::Float(2.5),
                Value::Float(-1000.0),
                Value::Bool(true),
                Value::Bool(false),
                Value::Null,
                Value::Str(Cow::Owned("x\u{e9}\n".into())),
            ]))
        );
        assert_eq!(v.get("b"), Some(&Value::Object(vec![])));
    }

    #[test]
    fn strings_without_escapes_borrow() {
        let Value::Str(s) = ok(r#""plain ünïcode""#) else {
            panic!()
        };
        assert!(matches!(s, Cow::Borrowed("plain ünïcode")));
    }

    #[test]
    fn surrogate_pairs_combine_and_lone_halves_are_refused() {
        assert_eq!(ok(r#""\ud83d\ude00""#), Value::Str(Cow::Owned("😀".into())));
        refused(r#""\ud83d""#);
        refused(r#""\ude00""#);
        refused(r#""\ud83d\u0041""#);
        refused(r#""\ud83dx""#);
    }

    #[test]
    fn what_python_reads_differently_or_rejects_is_refused() {
        for text in [
            r#"{"a": 1, "a": 2}"#,
            "NaN",
            "-Infinity",
            "1e400",
            "123456789012345678901234567890",
            "\"tab\there\"",
            "01",
            "1.",
            ".5",
            "1e",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "[1] x",
            "\u{feff}{}",
            "",
            "\"unterminated",
            r#""\x""#,
            r#""\u12g4""#,
        ] {
            refused(text);
        }
    }

    #[test]
    fn duplicate_keys_are_found_in_large_objects_too() {
        let members: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let mut text = format!("{{{},", members.join(","));
        text.push_str("\"k7\":0}");
        refused(&text);
        text.truncate(text.len() - 7);
        text.push_str("\"k40\":0}");
        assert!(parse(&text, 4).is_ok());
    }

    #[test]
    fn depth_is_bounded() {
        assert!(parse("[[[1]]]", 3).is_ok());
        assert!(parse("[[[1]]]", 2).is_err());
        assert!(parse(&"[".repeat(100_000), 256).is_err());
    }

    #[test]
    fn canonical_bytes_match_the_json_tree_writer() {
        let text = r#"{"b": [1, 2.5, "\u00e9", null], "a": {"z": true, "\u00e9": -0.0}, "\ud83d\ude00": 1e21}"#;
        let mut out = Vec::new();
        write_canonical(&mut out, &ok(text), 8).unwrap();
        let tree = jcs::Json::Object(vec![
            (
                "b".into(),
                jcs::Json::Array(vec![
                    jcs::Json::Int("1".into()),
                    jcs::Json::Float(2.5),
                    jcs::Json::Str("é".into()),
                    jcs::Json::Null,
                ]),
            ),
            (
                "a".into(),
                jcs::Json::Object(vec![
                    ("z".into(), jcs::Json::Bool(true)),
                    ("é".into(), jcs::Json::Float(-0.0)),
                ]),
            ),
            ("😀".into(), jcs::Json::Float(1e21)),
        ]);
        assert_eq!(out, jcs::canonicalize(&tree).unwrap());
        let mut deep = Vec::new();
        assert_eq!(write_canonical(&mut deep, &ok("[[1]]"), 1), Err(TooDeep));
        assert!(write_canonical(&mut deep, &ok("[[1]]"), 2).is_ok());
    }

    #[test]
    fn integers_beyond_i64_are_refused_not_rounded() {
        assert_eq!(ok("9223372036854775807"), Value::Int(i64::MAX));
        assert_eq!(ok("-9223372036854775808"), Value::Int(i64::MIN));
        refused("9223372036854775808");
    }
}

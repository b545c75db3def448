//! RFC 8785 (JSON Canonicalization Scheme) output for JSON values.
//!
//! The primitives here are shared by the pure-Rust [`Json`] tree (tests, golden
//! vectors) and by the Python bindings, which walk Python objects and write the
//! same bytes without building a tree first.
//!
//! One documented deviation from RFC 8785: integers that are not floats (Python
//! `int`, `serde_json` arbitrary-precision integers) are written with all their
//! digits, even beyond ±2^53, instead of being rounded through an IEEE double.

use std::cmp::Ordering;
use std::fmt;

/// Containers nested deeper than this are rejected rather than risking the stack.
pub const MAX_DEPTH: usize = 256;

/// Why a value cannot be canonicalised, and where (a path like `$.args[2].x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JcsError {
    pub path: String,
    pub reason: String,
}

impl fmt::Display for JcsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

impl std::error::Error for JcsError {}

/// A JSON value as the core sees it. Object members keep insertion order here;
/// [`canonicalize`] sorts them.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// An integer written exactly: an optional `-` then decimal digits, no leading zeros.
    Int(String),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// The RFC 8785 bytes of `value`.
pub fn canonicalize(value: &Json) -> Result<Vec<u8>, JcsError> {
    let mut out = Vec::new();
    let mut path = Path::root();
    write_json(&mut out, value, &mut path)?;
    Ok(out)
}

fn write_json(out: &mut Vec<u8>, value: &Json, path: &mut Path) -> Result<(), JcsError> {
    match value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Int(digits) => {
            if !is_integer_literal(digits) {
                return Err(path.error(format!("not an integer literal: {digits:?}")));
            }
            write_integer(out, digits);
        }
        Json::Float(x) => write_f64(out, *x).map_err(|e| path.error(e.to_string()))?,
        Json::Str(s) => write_string(out, s),
        Json::Array(items) => {
            path.enter()?;
            write_array(out, items, path, write_json)?;
            path.leave();
        }
        Json::Object(members) => {
            path.enter()?;
            let mut sorted: Vec<(&str, &Json)> =
                members.iter().map(|(k, v)| (k.as_str(), v)).collect();
            sort_members(&mut sorted);
            if let Some(pair) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(path.error(format!("duplicate key {:?}", pair[0].0)));
            }
            write_object(out, &sorted, path, |out, value, path| {
                write_json(out, value, path)
            })?;
            path.leave();
        }
    }
    Ok(())
}

/// `[a,b,...]`, each item written by `write_item`, with `path` following along.
/// Shared by the [`Json`] writer and the Python encoder so both lay arrays out alike.
pub fn write_array<T, E>(
    out: &mut Vec<u8>,
    items: &[T],
    path: &mut Path,
    mut write_item: impl FnMut(&mut Vec<u8>, &T, &mut Path) -> Result<(), E>,
) -> Result<(), E> {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        path.push_index(i);
        write_item(out, item, path)?;
        path.pop();
    }
    out.push(b']');
    Ok(())
}

/// Sorts object members into RFC 8785 order (keys by UTF-16 code units).
pub fn sort_members<T>(members: &mut [(&str, T)]) {
    members.sort_by(|a, b| cmp_utf16(a.0, b.0));
}

/// `{"k":v,...}` from members already in [`sort_members`] order, each value
/// written by `write_value`.
pub fn write_object<T, E>(
    out: &mut Vec<u8>,
    members: &[(&str, T)],
    path: &mut Path,
    mut write_value: impl FnMut(&mut Vec<u8>, &T, &mut Path) -> Result<(), E>,
) -> Result<(), E> {
    out.push(b'{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(out, key);
        out.push(b':');
        path.push_key(key);
        write_value(out, value, path)?;
        path.pop();
    }
    out.push(b'}');
    Ok(())
}

/// `-?(0|[1-9][0-9]*)`.
#[must_use]
pub fn is_integer_literal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    match digits.as_bytes() {
        [] => false,
        [b'0'] => s.len() == 1, // "-0" is not an integer spelling we accept
        [first, rest @ ..] => (b'1'..=b'9').contains(first) && rest.iter().all(u8::is_ascii_digit),
    }
}

/// An integer literal (checked with [`is_integer_literal`]), written exactly,
/// except that an integer of 1e21 or more in magnitude that is exactly the value
/// of the double written for it is written as that double (`10**21` → `1e+21`).
///
/// Below 1e21 ECMAScript writes an integral double with all its digits, so an
/// int and a float of the same value already match; above, this keeps a number
/// that went through a store which turns `1e+21` into `1000000000000000000000`
/// (`PostgreSQL` `jsonb`) from changing its fingerprint. Integers no double holds
/// exactly keep all their digits (the documented deviation from RFC 8785), so
/// distinct integers never share an encoding.
pub fn write_integer(out: &mut Vec<u8>, literal: &str) {
    let magnitude = literal.strip_prefix('-').unwrap_or(literal);
    if magnitude.len() >= 22 {
        if let Ok(x) = literal.parse::<f64>() {
            if x.is_finite() && is_exactly(magnitude, x.abs()) && write_f64(out, x).is_ok() {
                return;
            }
        }
    }
    out.extend_from_slice(literal.as_bytes());
}

/// Whether the decimal integer `magnitude` is exactly the shortest decimal of `x`.
fn is_exactly(magnitude: &str, x: f64) -> bool {
    let (digits, n) = shortest_digits(x);
    let Ok(zeros) = usize::try_from(i64::from(n) - i64::try_from(digits.len()).unwrap_or(i64::MAX))
    else {
        return false; // has a fractional part: not an integer
    };
    magnitude.len() == digits.len() + zeros
        && magnitude.as_bytes().starts_with(&digits)
        && magnitude.bytes().skip(digits.len()).all(|b| b == b'0')
}

/// Orders object keys as RFC 8785 requires: by their UTF-16 code units.
#[must_use]
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A JSON string literal with the minimal escaping of ECMAScript `JSON.stringify`.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut rest = s.as_bytes();
    loop {
        let run = crate::plain::plain_len(rest);
        out.extend_from_slice(&rest[..run]);
        let Some(&b) = rest.get(run) else {
            break;
        };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x09 => out.extend_from_slice(b"\\t"),
            0x0A => out.extend_from_slice(b"\\n"),
            0x0C => out.extend_from_slice(b"\\f"),
            0x0D => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]),
        }
        rest = &rest[run + 1..];
    }
    out.push(b'"');
}

/// NaN or an infinity: not a JSON number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonFinite;

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NaN and Infinity are not JSON numbers")
    }
}

/// An IEEE double formatted as ECMAScript's `Number.prototype.toString` does
/// (ECMA-262 `Number::toString`, radix 10), which RFC 8785 adopts.
///
/// # Panics
///
/// Never: the shortest digits of a double number at most 17.
pub fn write_f64(out: &mut Vec<u8>, x: f64) -> Result<(), NonFinite> {
    if !x.is_finite() {
        return Err(NonFinite);
    }
    if x == 0.0 {
        out.push(b'0'); // both +0 and -0
        return Ok(());
    }
    if x < 0.0 {
        out.push(b'-');
    }
    let (digits, n) = shortest_digits(x.abs());
    let k = i32::try_from(digits.len()).expect("a double has at most 17 significant digits");
    if k <= n && n <= 21 {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', (n - k).unsigned_abs() as usize));
    } else if 0 < n && n <= 21 {
        let (int_part, frac) = digits.split_at(n.unsigned_abs() as usize);
        out.extend_from_slice(int_part);
        out.push(b'.');
        out.extend_from_slice(frac);
    } else if -6 < n && n <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', n.unsigned_abs() as usize));
        out.extend_from_slice(&digits);
    } else {
        out.push(digits[0]);
        if k > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if n - 1 < 0 { b'-' } else { b'+' });
        out.extend_from_slice((n - 1).unsigned_abs().to_string().as_bytes());
    }
    Ok(())
}

/// The shortest decimal digits `d1..dk` (no leading or trailing zeros) that
/// round-trip to the positive finite `x` and are closest to it, and `n` with
/// `x ≈ 0.d1..dk × 10^n`.
pub(crate) fn shortest_digits(x: f64) -> (Vec<u8>, i32) {
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(x); // e.g. "1.0", "1e21", "1.5e-9", "0.001"
    let (mantissa, exp) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).collect();
    let mut point = i32::try_from(int_part.len()).unwrap_or(0) + exp;
    let leading = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..leading);
    point -= i32::try_from(leading).unwrap_or(0);
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    (digits, point)
}

/// A JSON path under construction, for error messages: `$.tools[0].parameters`.
#[derive(Debug, Clone)]
pub struct Path {
    segments: Vec<String>,
    depth: usize,
    max_depth: usize,
    max_string: usize,
}

impl Path {
    #[must_use]
    pub fn root() -> Self {
        Self::starting_at("$")
    }

    /// A path whose root is rendered as `root` (e.g. `ToolCall.arguments`).
    #[must_use]
    pub fn starting_at(root: &str) -> Self {
        Self {
            segments: vec![root.to_owned()],
            depth: 0,
            max_depth: MAX_DEPTH,
            max_string: usize::MAX,
        }
    }

    /// This path, refusing nesting past `max_depth` levels (at most [`MAX_DEPTH`]).
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth.min(MAX_DEPTH);
        self
    }

    /// This path, refusing strings (values and keys) of more than `max_string`
    /// characters (Unicode code points), where the Python encoder checks them.
    #[must_use]
    pub fn with_max_string(mut self, max_string: usize) -> Self {
        self.max_string = max_string;
        self
    }

    /// The error for a string of `length` characters when that is over the
    /// limit (`Limits.max_string`), naming this path.
    pub fn check_string(&self, length: usize) -> Result<(), JcsError> {
        if length > self.max_string {
            let limit = self.max_string;
            return Err(self.error(format!(
                "a string of {length} characters, over the limit of {limit} (Limits.max_string)"
            )));
        }
        Ok(())
    }

    pub fn push_index(&mut self, i: usize) {
        self.segments.push(format!("[{i}]"));
    }

    pub fn push_key(&mut self, key: &str) {
        let plain = !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !key.starts_with(|c: char| c.is_ascii_digit());
        if plain {
            self.segments.push(format!(".{key}"));
        } else {
            let mut quoted = Vec::new();
            write_string(&mut quoted, key);
            self.segments
                .push(format!("[{}]", String::from_utf8_lossy(&quoted)));
        }
    }

    pub fn pop(&mut self) {
        if self.segments.len() > 1 {
            self.segments.pop();
        }
    }

    /// Count one more level of nesting, refusing past the path's limit
    /// ([`MAX_DEPTH`] unless [`Path::with_max_depth`] lowered it).
    pub fn enter(&mut self) -> Result<(), JcsError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            let limit = self.max_depth;
            return Err(self.error(format!(
                "nested deeper than {limit} levels (Limits.max_depth)"
            )));
        }
        Ok(())
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    #[must_use]
    pub fn render(&self) -> String {
        self.segments.concat()
    }

    #[must_use]
    pub fn error(&self, reason: impl Into<String>) -> JcsError {
        JcsError {
            path: self.render(),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(x: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, x).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ecmascript_numbers() {
        // Values from RFC 8785 appendix B and ECMA-262 examples.
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123_456_789.0, "123456789"),
            (0.000_001, "0.000001"),
            (1e-7, "1e-7"),
            (5e-324, "5e-324"),
            (1.797_693_134_862_315_7e308, "1.7976931348623157e+308"),
            (9_007_199_254_740_992.0, "9007199254740992"),
            (295_147_905_179_352_830_000.0, "295147905179352830000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (333_333_333.333_333_3, "333333333.3333333"),
            (1.5e-9, "1.5e-9"),
            (12.5, "12.5"),
            // Two shortest candidates: ECMAScript takes the closer one.
            (1_424_953_923_781_206.2, "1424953923781206.2"),
            (1_113_178_120_592_002.2, "1113178120592002.2"),
            (0.001, "0.001"),
            (100.0, "100"),
        ];
        for (x, want) in cases {
            assert_eq!(num(*x), *want, "formatting {x:e}");
        }
    }

    #[test]
    fn large_integers_match_the_double_they_equal() {
        let int = |digits: &str| {
            let mut out = Vec::new();
            write_integer(&mut out, digits);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(int(&format!("1{}", "0".repeat(21))), "1e+21");
        assert_eq!(int(&format!("-1{}", "0".repeat(21))), "-1e+21");
        assert_eq!(
            int(&format!("1{}1", "0".repeat(20))),
            format!("1{}1", "0".repeat(20))
        );
        assert_eq!(int("100000000000000000000"), "100000000000000000000"); // 1e20: all digits either way
        assert_eq!(int("9007199254740993"), "9007199254740993"); // 2^53 + 1: no double holds it
        assert_eq!(int(&format!("123{}", "0".repeat(300))), "1.23e+302");
        assert_eq!(
            int(&format!("1{}", "0".repeat(400))),
            format!("1{}", "0".repeat(400))
        ); // beyond doubles
    }

    #[test]
    fn non_finite_is_refused() {
        let mut out = Vec::new();
        assert_eq!(write_f64(&mut out, f64::NAN), Err(NonFinite));
        assert_eq!(write_f64(&mut out, f64::INFINITY), Err(NonFinite));
        let err = canonicalize(&Json::Array(vec![Json::Float(f64::NEG_INFINITY)])).unwrap_err();
        assert_eq!(err.path, "$[0]");
    }

    #[test]
    fn strings_escape_minimally() {
        let mut out = Vec::new();
        write_string(&mut out, "a\"b\\c\n\u{1}\u{7f}\u{2028}é😀/");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"b\\\\c\\n\\u0001\u{7f}\u{2028}é😀/\""
        );
    }

    #[test]
    fn every_byte_to_escape_is_escaped_wherever_it_stands() {
        // Around the 32- and 8-byte blocks the plain runs are scanned in, each
        // byte that needs an escape (and two that do not) at every place,
        // against the escaping done one character at a time.
        fn one_at_a_time(s: &str) -> String {
            use std::fmt::Write as _;
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\u{8}' => out.push_str("\\b"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\u{c}' => out.push_str("\\f"),
                    '\r' => out.push_str("\\r"),
                    c if u32::from(c) < 0x20 => {
                        write!(out, "\\u{:04x}", u32::from(c)).unwrap();
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        for special in ['"', '\\', '\u{0}', '\n', '\u{1f}', ' ', '\u{7f}'] {
            for len in [31, 32, 33, 40, 64, 70] {
                for at in 0..len {
                    let s: String = (0..len)
                        .map(|i| if i == at { special } else { 'a' })
                        .collect();
                    let mut out = Vec::new();
                    write_string(&mut out, &s);
                    assert_eq!(String::from_utf8(out).unwrap(), one_at_a_time(&s), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+E000 sorts before U+1F600 in code points but after it in UTF-16 (D83D...).
        assert_eq!(cmp_utf16("\u{e000}", "\u{1f600}"), Ordering::Greater);
        let value = Json::Object(vec![
            ("\u{e000}".into(), Json::Int("1".into())),
            ("\u{1f600}".into(), Json::Int("2".into())),
            ("b".into(), Json::Null),
            ("a".into(), Json::Bool(true)),
        ]);
        let got = String::from_utf8(canonicalize(&value).unwrap()).unwrap();
        assert_eq!(
            got,
            "{\"a\":true,\"b\":null,\"\u{1f600}\":2,\"\u{e000}\":1}"
        );
    }

    #[test]
    fn duplicate_keys_and_bad_integers_are_refused() {
        let dup = Json::Object(vec![("k".into(), Json::Null), ("k".into(), Json::Null)]);
        assert!(canonicalize(&dup).unwrap_err().reason.contains("duplicate"));
        for bad in ["", "-", "01", "-0", "1.0", "+1", "1e3"] {
            assert!(!is_integer_literal(bad), "{bad:?}");
        }
        for good in ["0", "-1", "123456789012345678901234567890"] {
            assert!(is_integer_literal(good), "{good:?}");
        }
    }

    #[test]
    fn depth_is_bounded() {
        let mut value = Json::Null;
        for _ in 0..=MAX_DEPTH {
            value = Json::Array(vec![value]);
        }
        let err = canonicalize(&value).unwrap_err();
        assert!(err.reason.contains("nested deeper"), "{err}");
    }

    #[test]
    fn paths_name_the_field() {
        let value = Json::Object(vec![(
            "a b".into(),
            Json::Array(vec![Json::Object(vec![(
                "x".into(),
                Json::Float(f64::NAN),
            )])]),
        )]);
        assert_eq!(canonicalize(&value).unwrap_err().path, "$[\"a b\"][0].x");
    }
}

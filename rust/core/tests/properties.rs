//! Property tests of the core: the encoding is injective, canonical JSON is
//! independent of key order and idempotent, the chain is incremental, keyed
//! BLAKE3 through the lanes equals BLAKE3 one input at a time, and the
//! stored-conversation reader (`parse`) reads every spelling of a value back.

use std::fmt::Write as _;

use proptest::prelude::*;
use thinkseal_core::digest;
use thinkseal_core::encode::encode_message;
use thinkseal_core::jcs::{canonicalize, Json};
use thinkseal_core::model::{Block, Content, ContentPart, Message, Native, Part, ToolCall};
use thinkseal_core::{lanes, parse};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-c]{0,3}", "\\PC{0,6}"]
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        (text(), proptest::option::of(text()))
            .prop_map(|(text, signature)| Block::Text { text, signature }),
        text().prop_map(|data| Block::Redacted { data }),
        (text(), text()).prop_map(|(provider, data)| Block::Opaque { provider, data }),
    ]
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        text().prop_map(Part::Text),
        (text(), text(), "[a-z{}\\[\\]:,\"0-9]{0,8}").prop_map(|(id, name, args)| Part::ToolCall(
            ToolCall {
                id,
                name,
                arguments_jcs: args.into_bytes()
            }
        )),
        block().prop_map(Part::Thinking),
        native().prop_map(Part::Native),
    ]
}

fn native() -> impl Strategy<Value = Native> {
    (text(), text(), proptest::option::of(text())).prop_map(|(provider, data, text)| Native {
        provider,
        data,
        text,
    })
}

fn bytes() -> impl Strategy<Value = Option<Vec<u8>>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..4))
}

fn content_part() -> impl Strategy<Value = ContentPart> {
    prop_oneof![
        text().prop_map(ContentPart::Text),
        (
            bytes(),
            proptest::option::of(text()),
            proptest::option::of(text())
        )
            .prop_map(|(data, media_type, url)| ContentPart::Image {
                data,
                media_type,
                url
            }),
        (
            bytes(),
            proptest::option::of(text()),
            proptest::option::of(text()),
            proptest::option::of(text()),
            any::<bool>(),
            text()
        )
            .prop_map(|(data, url, text, title, citations, media_type)| {
                ContentPart::Document {
                    data,
                    url,
                    text,
                    title,
                    citations,
                    media_type,
                }
            }),
        native().prop_map(ContentPart::Native),
    ]
}

fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        text().prop_map(Content::Text),
        proptest::collection::vec(content_part(), 0..3).prop_map(Content::Parts),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        content().prop_map(|content| Message::System { content }),
        content().prop_map(|content| Message::User { content }),
        (content(), text(), any::<bool>()).prop_map(|(content, tool_call_id, is_error)| {
            Message::Tool {
                content,
                tool_call_id,
                is_error,
            }
        }),
        proptest::collection::vec(part(), 0..4).prop_map(|parts| Message::Assistant { parts }),
    ]
}

fn json() -> impl Strategy<Value = Json> {
    json_with(text())
}

/// Strings with what JSON must or may escape.
fn awkward() -> impl Strategy<Value = String> {
    "[a\"\\\\/\u{0}\u{8}\u{c}\n\r\t\u{1f}\u{7f}\u{e9}\u{2028}\u{ffff}\u{1f600}]{0,8}"
}

fn json_with(text: impl Strategy<Value = String> + 'static) -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(|i| Json::Int(i.to_string())),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Json::Float),
        text.prop_map(Json::Str),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            proptest::collection::btree_map("[a-d\\u{e000}\\u{1f600}]{0,2}", inner, 0..4)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

fn encoded(m: &Message) -> Vec<u8> {
    let mut out = Vec::new();
    encode_message(&mut out, m);
    out
}

/// Reverse every object's member order.
fn reorder(value: &Json) -> Json {
    match value {
        Json::Array(items) => Json::Array(items.iter().map(reorder).collect()),
        Json::Object(members) => Json::Object(
            members
                .iter()
                .rev()
                .map(|(k, v)| (k.clone(), reorder(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

proptest! {
    #[test]
    fn encoding_is_injective(a in message(), b in message()) {
        prop_assert_eq!(a == b, encoded(&a) == encoded(&b));
        prop_assert_eq!(a == b, digest::message_digest(&a) == digest::message_digest(&b));
    }

    #[test]
    fn canonical_json_ignores_member_order(value in json()) {
        prop_assert_eq!(canonicalize(&value).unwrap(), canonicalize(&reorder(&value)).unwrap());
    }

    #[test]
    fn chain_extends_incrementally(msgs in proptest::collection::vec(message(), 0..12), cut in 0usize..12) {
        let digests: Vec<_> = msgs.iter().map(digest::message_digest).collect();
        let cut = cut.min(digests.len());
        let whole = digest::chain(&digest::CHAIN_START, &digests);
        let head = digest::chain(&digest::CHAIN_START, &digests[..cut]);
        let start = head.last().copied().unwrap_or(digest::CHAIN_START);
        let tail = digest::chain(&start, &digests[cut..]);
        prop_assert_eq!(&whole[..cut], &head[..]);
        prop_assert_eq!(&whole[cut..], &tail[..]);
    }
}

proptest! {
    // Lengths up to nine chunks, so that an input's chunks share lanes with
    // other inputs' chunks of every length, and trees of several levels are joined.
    #[test]
    fn lanes_equal_blake3_one_at_a_time(
        key in any::<[u8; 32]>(),
        inputs in proptest::collection::vec(
            (0usize..9_300, any::<u8>()).prop_map(|(len, seed)| {
                (0..len).map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(seed)).collect::<Vec<u8>>()
            }),
            0..24,
        ),
    ) {
        let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let expected: Vec<[u8; 32]> = slices.iter().map(|i| *blake3::keyed_hash(&key, i).as_bytes()).collect();
        prop_assert_eq!(lanes::keyed_hash_many(&key, &slices), expected);
    }
}

proptest! {
    #[test]
    fn numbers_round_trip(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        let mut out = Vec::new();
        thinkseal_core::jcs::write_f64(&mut out, x).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back: f64 = text.parse().unwrap();
        // RFC 8785 writes -0 as 0; every other value must come back bit for bit.
        let expected = if x.to_bits() == (-0.0f64).to_bits() { 0.0f64 } else { x };
        prop_assert_eq!(back.to_bits(), expected.to_bits(), "{:e} wrote {}", x, text);
    }
}

/// `value` as JSON text in one of its many spellings: `noise` picks, token by
/// token, the whitespace around it and which characters of each string are
/// written as `\u` escapes (a pair of them beyond the BMP).
fn spelled(value: &Json, noise: &[u8], at: &mut usize, out: &mut String) {
    let mut pick = || {
        let n = noise[*at % noise.len()];
        *at += 1;
        n
    };
    let space = |n: u8| [" ", "", "\n", "", "\t", "", "\r", ""][usize::from(n % 8)];
    out.push_str(space(pick()));
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(digits) => out.push_str(digits),
        Json::Float(x) => write!(out, "{x:?}").unwrap(),
        Json::Str(s) => spelled_string(s, &mut pick, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                spelled(item, noise, at, out);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                spelled_string(key, &mut || noise[(*at + i) % noise.len()], out);
                out.push(':');
                spelled(item, noise, at, out);
            }
            out.push('}');
        }
    }
    out.push_str(space(noise[(*at + 3) % noise.len()]));
}

fn spelled_string(s: &str, pick: &mut impl FnMut() -> u8, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        let must = c == '"' || c == '\\' || u32::from(c) < 0x20;
        let choice = pick();
        if let Some(escape) = short.filter(|_| choice.is_multiple_of(2)) {
            out.push_str(escape);
        } else if must || choice.is_multiple_of(3) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(out, "\\u{unit:04x}").unwrap();
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

/// The parsed value as the core's JSON tree, to compare with what was spelled.
fn tree(value: &parse::Value<'_>) -> Json {
    match value {
        parse::Value::Null => Json::Null,
        parse::Value::Bool(b) => Json::Bool(*b),
        parse::Value::Int(i) => Json::Int(i.to_string()),
        parse::Value::Float(x) => Json::Float(*x),
        parse::Value::Str(s) => Json::Str(s.to_string()),
        parse::Value::Array(items) => Json::Array(items.iter().map(tree).collect()),
        parse::Value::Object(members) => Json::Object(
            members
                .iter()
                .map(|(k, v)| (k.to_string(), tree(v)))
                .collect(),
        ),
    }
}

proptest! {
    #[test]
    fn the_reader_reads_every_spelling_back(value in json_with(awkward()), noise in proptest::collection::vec(any::<u8>(), 1..64)) {
        let mut text = String::new();
        spelled(&value, &noise, &mut 0, &mut text);
        let parsed = parse::parse(&text, 64).map_err(|e| TestCaseError::fail(format!("refused {text:?} at {}", e.at)))?;
        prop_assert_eq!(tree(&parsed), value.clone());
        let mut canonical = Vec::new();
        parse::write_canonical(&mut canonical, &parsed, 64).unwrap();
        prop_assert_eq!(canonical, canonicalize(&value).unwrap());
    }
}

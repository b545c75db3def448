//! The golden vectors of fingerprint version 1, shared with pytest
//! (tests/vectors/fingerprint-v1.json): the pure-Rust model must produce the
//! same bytes as the Python walker.

use std::path::PathBuf;

use serde_json::Value;
use thinkseal_core::digest::{self, Digest};
use thinkseal_core::encode;
use thinkseal_core::jcs::{self, Json};
use thinkseal_core::model::{Block, Context, Message, Origin, Part, Tool, ToolCall};

fn vectors() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/fingerprint-v1.json");
    let text = std::fs::read_to_string(&path).expect("vectors file");
    serde_json::from_str(&text).expect("vectors parse")
}

/// `serde_json` (arbitrary precision) to the core's JSON: integer literals stay
/// exact, every other number is read as an IEEE double.
fn to_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => {
            let text = n.to_string();
            if jcs::is_integer_literal(&text) {
                Json::Int(text)
            } else if text == "-0" {
                Json::Float(-0.0)
            } else {
                Json::Float(text.parse().expect("number"))
            }
        }
        Value::String(s) => Json::Str(s.clone()),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Object(members) => Json::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
    }
}

fn canonical(value: &Value) -> Vec<u8> {
    jcs::canonicalize(&to_json(value)).expect("canonical")
}

fn s(value: &Value) -> String {
    value.as_str().expect("string").to_owned()
}

fn part(value: &Value) -> Part {
    match value["type"].as_str().expect("part type") {
        "text" => Part::Text(s(&value["text"])),
        "tool_call" => Part::ToolCall(ToolCall {
            id: s(&value["id"]),
            name: s(&value["name"]),
            arguments_jcs: canonical(&value["arguments"]),
        }),
        "thinking" => Part::Thinking(Block::Text {
            text: s(&value["text"]),
            signature: value["signature"].as_str().map(str::to_owned),
        }),
        "redacted_thinking" => Part::Thinking(Block::Redacted {
            data: s(&value["data"]),
        }),
        "opaque_thinking" => Part::Thinking(Block::Opaque {
            provider: s(&value["provider"]),
            data: s(&value["data"]),
        }),
        other => panic!("unknown part type {other}"),
    }
}

fn message(value: &Value) -> Message {
    match value["role"].as_str().expect("role") {
        "system" => Message::System {
            content: s(&value["content"]),
        },
        "user" => Message::User {
            content: s(&value["content"]),
        },
        "tool" => Message::Tool {
            content: s(&value["content"]),
            tool_call_id: s(&value["tool_call_id"]),
            is_error: value["is_error"].as_bool().expect("is_error"),
        },
        "assistant" => Message::Assistant {
            parts: value["parts"]
                .as_array()
                .expect("parts")
                .iter()
                .map(part)
                .collect(),
        },
        other => panic!("unknown role {other}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

fn digest_from_hex(text: &Value) -> Digest {
    let text = text.as_str().expect("hex");
    let bytes: Vec<u8> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect();
    Digest::try_from(bytes.as_slice()).expect("32 bytes")
}

#[test]
fn version_and_contexts() {
    let v = vectors();
    assert_eq!(v["version"], u64::from(digest::VERSION));
    assert_eq!(v["contexts"]["message"], digest::MESSAGE_CONTEXT);
    assert_eq!(v["contexts"]["chain"], digest::CHAIN_CONTEXT);
    assert_eq!(v["contexts"]["context"], digest::CONTEXT_CONTEXT);
    assert_eq!(v["contexts"]["prefix"], digest::PREFIX_CONTEXT);
}

#[test]
fn canonical_json() {
    for case in vectors()["jcs"].as_array().expect("jcs") {
        let input: Value =
            serde_json::from_str(case["input"].as_str().expect("input")).expect("input json");
        let got = String::from_utf8(canonical(&input)).expect("utf8");
        assert_eq!(
            got,
            case["canonical"].as_str().expect("canonical"),
            "input {}",
            case["input"]
        );
    }
}

#[test]
fn messages_and_chain() {
    let v = vectors();
    let mut digests = Vec::new();
    for case in v["messages"].as_array().expect("messages") {
        let m = message(&case["message"]);
        let mut encoding = Vec::new();
        encode::encode_message(&mut encoding, &m);
        assert_eq!(hex(&encoding), case["encoding"].as_str().expect("encoding"));
        let d = digest::message_digest(&m);
        assert_eq!(hex(&d), case["digest"].as_str().expect("digest"));
        digests.push(d);
    }
    let start = digest_from_hex(&v["chain"]["start"]);
    let chain: Vec<String> = digest::chain(&start, &digests)
        .iter()
        .map(|d| hex(d))
        .collect();
    let want: Vec<String> = v["chain"]["after_each_message"]
        .as_array()
        .expect("chain")
        .iter()
        .map(s)
        .collect();
    assert_eq!(chain, want);
}

#[test]
fn context_and_prefix() {
    let v = vectors();
    let ctx = &v["context"];
    let context = Context {
        system: ctx["system"]
            .as_array()
            .expect("system")
            .iter()
            .map(s)
            .collect(),
        tools: ctx["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| Tool {
                name: s(&t["name"]),
                description: s(&t["description"]),
                parameters_jcs: canonical(&t["parameters"]),
            })
            .collect(),
        response_format_jcs: Some(canonical(&ctx["response_format"])),
    };
    let context_digest = digest::context_digest(&context);
    assert_eq!(hex(&context_digest), s(&ctx["digest"]));
    assert_eq!(
        hex(&digest::context_digest(&Context::default())),
        s(&ctx["empty_digest"])
    );

    let pre = &v["prefix"];
    let origin = Origin {
        provider: s(&pre["origin"]["provider"]),
        model: s(&pre["origin"]["model"]),
        account: pre["origin"]["account"].as_str().map(str::to_owned),
    };
    let got = digest::prefix_digest(
        1,
        &origin,
        &context_digest,
        &digest_from_hex(&pre["chain_before"]),
    );
    assert_eq!(hex(&got), s(&pre["digest"]));
}

//! Helpers shared by the vector tests: reading the JSON files under
//! tests/vectors/ into the core's model.

use std::path::PathBuf;

use serde_json::Value;
use thinkseal_core::digest::Digest;
use thinkseal_core::jcs::{self, Json};
use thinkseal_core::model::{Block, Content, ContentPart, Message, Native, Part, Tool, ToolCall};

/// A file of tests/vectors/, parsed.
pub fn vector_file(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("vectors file");
    serde_json::from_str(&text).expect("vectors parse")
}

/// `serde_json` (arbitrary precision) to the core's JSON: integer literals stay
/// exact, every other number is read as an IEEE double.
pub fn to_json(value: &Value) -> Json {
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

pub fn canonical(value: &Value) -> Vec<u8> {
    jcs::canonicalize(&to_json(value)).expect("canonical")
}

pub fn s(value: &Value) -> String {
    value.as_str().expect("string").to_owned()
}

pub fn part(value: &Value) -> Part {
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
        "native" => Part::Native(native(value)),
        "opaque_thinking" => Part::Thinking(Block::Opaque {
            provider: s(&value["provider"]),
            data: s(&value["data"]),
        }),
        other => panic!("unknown part type {other}"),
    }
}

pub fn message(value: &Value) -> Message {
    match value["role"].as_str().expect("role") {
        "system" => Message::System {
            content: content(&value["content"]),
        },
        "user" => Message::User {
            content: content(&value["content"]),
        },
        "tool" => Message::Tool {
            content: content(&value["content"]),
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

pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

pub fn digest_from_hex(text: &Value) -> Digest {
    let text = text.as_str().expect("hex");
    let bytes: Vec<u8> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect();
    Digest::try_from(bytes.as_slice()).expect("32 bytes")
}

/// Tool definitions written as `{"name", "description", "parameters"}` objects.
pub fn tools(value: &Value) -> Vec<Tool> {
    value
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| Tool {
            name: s(&t["name"]),
            description: s(&t["description"]),
            parameters_jcs: canonical(&t["parameters"]),
        })
        .collect()
}

fn opt_s(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

fn native(value: &Value) -> Native {
    Native {
        provider: s(&value["provider"]),
        data: s(&value["data"]),
        text: opt_s(&value["text"]),
    }
}

/// Standard base64 (with padding), as the stored form writes binary data.
fn base64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET.iter().position(|&a| a == c).expect("base64 digit");
        bits = (bits << 6) | u32::try_from(v).expect("digit");
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push(u8::try_from((bits >> count) & 0xff).expect("byte"));
        }
    }
    out
}

fn opt_bytes(value: &Value) -> Option<Vec<u8>> {
    value.as_str().map(base64)
}

/// Message content in its stored form, as the fingerprint reads it
/// (docs/fingerprint.md §3): cache breakpoints left out, and a lone text part
/// the same as a plain string.
pub fn content(value: &Value) -> Content {
    let Some(items) = value.as_array() else {
        return Content::Text(s(value));
    };
    let parts: Vec<ContentPart> = items
        .iter()
        .filter(|p| p["type"] != "cache_breakpoint")
        .map(|p| match p["type"].as_str().expect("content part type") {
            "text" => ContentPart::Text(s(&p["text"])),
            "image" => ContentPart::Image {
                data: opt_bytes(&p["data"]),
                media_type: opt_s(&p["media_type"]),
                url: opt_s(&p["url"]),
            },
            "document" => ContentPart::Document {
                data: opt_bytes(&p["data"]),
                url: opt_s(&p["url"]),
                text: opt_s(&p["text"]),
                title: opt_s(&p["title"]),
                citations: p["citations"].as_bool().expect("citations"),
                // Not written: PDF for data or a URL, plain text for text (§3).
                media_type: opt_s(&p["media_type"]).unwrap_or_else(|| {
                    if p["text"].is_string() {
                        "text/plain"
                    } else {
                        "application/pdf"
                    }
                    .to_owned()
                }),
            },
            "native" => ContentPart::Native(native(p)),
            other => panic!("unknown content part type {other}"),
        })
        .collect();
    match parts.as_slice() {
        [ContentPart::Text(text)] => Content::Text(text.clone()),
        _ => Content::Parts(parts),
    }
}

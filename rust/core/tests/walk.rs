//! The walk vectors (tests/vectors/walk-v1.json), checked by a second
//! implementation of the walk written from docs/fingerprint.md §6 and §7
//! alone: reasons, as-sent forms, their digests and the chain end must all
//! match what the Python package wrote.

use std::collections::HashSet;

use serde_json::Value;
use thinkseal_core::digest::{self, Digest};
use thinkseal_core::model::{Block, Content, ContentPart, Context, Message, Origin, Part};

mod common;

use common::{canonical, digest_from_hex, hex, message, s, tools, vector_file};

/// A binding read back from its text form (§7).
struct Binding {
    version: u32,
    origin: Origin,
    prefix: Digest,
    turn: Digest,
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("escape");
            out.push(u8::from_str_radix(hex, 16).expect("hex escape"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("utf-8")
}

fn parse_binding(text: &str) -> Binding {
    let rest = text
        .strip_prefix("thinkseal-binding/")
        .expect("binding prefix");
    let fields: Vec<&str> = rest.split(';').collect();
    assert_eq!(fields.len(), 6, "binding fields in {text}");
    let account = match fields[3] {
        "" => None,
        a => Some(percent_decode(a.strip_prefix('=').expect("account marker"))),
    };
    Binding {
        version: fields[0].parse().expect("version"),
        origin: Origin {
            provider: percent_decode(fields[1]),
            model: percent_decode(fields[2]),
            account,
        },
        prefix: digest_from_hex(&Value::String(fields[4].to_owned())),
        turn: digest_from_hex(&Value::String(fields[5].to_owned())),
    }
}

/// Signed Text, Redacted and Opaque blocks, and a native block of the turn
/// (the provider's own data) are sealed.
fn is_sealed(part: &Part) -> bool {
    match part {
        Part::Thinking(Block::Text { signature, .. }) => signature.is_some(),
        Part::Thinking(_) | Part::Native(_) => true,
        _ => false,
    }
}

fn call_ids(parts: &[Part]) -> Vec<&str> {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(call) => Some(call.id.as_str()),
            _ => None,
        })
        .collect()
}

/// Ids of the calls of the turn at `turn` answered by the run of tool
/// messages right after it (system messages in the run skipped).
fn answered(messages: &[Message], turn: usize, ids: &[&str]) -> HashSet<String> {
    let mut got = HashSet::new();
    for m in &messages[turn + 1..] {
        match m {
            Message::Tool { tool_call_id, .. } => {
                if ids.contains(&tool_call_id.as_str()) {
                    got.insert(tool_call_id.clone());
                }
            }
            Message::System { .. } => {}
            _ => break,
        }
    }
    got
}

/// The as-sent parts: seals taken off unless kept (a native block replaced by
/// its text, or left out), then only the first call of each answered id;
/// order kept.
fn sent_parts(parts: &[Part], kept: bool, answered: &HashSet<String>) -> Vec<Part> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for part in parts {
        match part {
            Part::ToolCall(call) => {
                if answered.contains(&call.id) && seen.insert(call.id.clone()) {
                    out.push(part.clone());
                }
            }
            Part::Thinking(Block::Text { text, .. }) if !kept => {
                if !text.is_empty() {
                    out.push(Part::Thinking(Block::Text {
                        text: text.clone(),
                        signature: None,
                    }));
                }
            }
            Part::Thinking(_) if !kept => {}
            Part::Native(native) if !kept => {
                if let Some(text) = native.text.as_ref().filter(|t| !t.is_empty()) {
                    out.push(Part::Text(text.clone()));
                }
            }
            _ => out.push(part.clone()),
        }
    }
    out
}

struct Outcome {
    report: Vec<(usize, String)>,
    sent_digests: Vec<Digest>,
    chain_end: Digest,
}

fn walk(
    messages: &[Message],
    bindings: &[Option<Binding>],
    target: &Origin,
    context: &Digest,
) -> Outcome {
    let mut chain = digest::CHAIN_START;
    let mut open: HashSet<String> = HashSet::new();
    let mut report = Vec::new();
    let mut sent_digests = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let sent = match m {
            Message::Assistant { parts } => {
                let ids = call_ids(parts);
                let answered = answered(messages, i, &ids);
                let distinct: HashSet<&str> = ids.iter().copied().collect();
                let unpaired =
                    distinct.len() < ids.len() || ids.iter().any(|id| !answered.contains(*id));
                let reason = match &bindings[i] {
                    _ if !parts.iter().any(is_sealed) => "no-sealed-thinking",
                    None => "unbound",
                    Some(b) if b.version != 1 => "version-mismatch",
                    Some(b) if b.origin != *target => "origin-mismatch",
                    Some(b) if b.turn != digest::message_digest(m) => "turn-changed",
                    Some(b) if b.prefix != digest::prefix_digest(1, target, context, &chain) => {
                        "prefix-changed"
                    }
                    Some(_) if unpaired => "unpaired-tool-call",
                    Some(_) => "kept",
                };
                report.push((i, reason.to_owned()));
                open.clone_from(&answered);
                Message::Assistant {
                    parts: sent_parts(parts, reason == "kept", &answered),
                }
            }
            Message::Tool {
                content,
                tool_call_id,
                is_error,
            } => {
                if open.remove(tool_call_id) {
                    m.clone()
                } else {
                    let status = if *is_error { " (error)" } else { "" };
                    let header = format!("[tool result for call {tool_call_id}{status}]\n");
                    Message::User {
                        content: match content {
                            Content::Text(text) => Content::Text(header + text),
                            Content::Parts(parts) => Content::Parts(
                                std::iter::once(ContentPart::Text(header))
                                    .chain(parts.iter().cloned())
                                    .collect(),
                            ),
                        },
                    }
                }
            }
            Message::User { .. } => {
                open.clear();
                m.clone()
            }
            Message::System { .. } => m.clone(),
        };
        let d = digest::message_digest(&sent);
        chain = digest::chain_step(&chain, &d);
        sent_digests.push(d);
    }
    Outcome {
        report,
        sent_digests,
        chain_end: chain,
    }
}

/// A system message's text as the context holds it: its text parts joined.
fn text_of(content: &Content) -> String {
    match content {
        Content::Text(text) => text.clone(),
        Content::Parts(parts) => parts
            .iter()
            .filter_map(|p| match p {
                ContentPart::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect(),
    }
}

fn context_of(case: &Value, messages: &[Message]) -> Context {
    Context {
        system: messages
            .iter()
            .filter_map(|m| match m {
                Message::System { content } => Some(text_of(content)),
                _ => None,
            })
            .collect(),
        tools: tools(&case["tools"]),
        response_format_jcs: match &case["response_format"] {
            Value::Null => None,
            rf => Some(canonical(rf)),
        },
    }
}

#[test]
fn walk_vectors() {
    let file = vector_file("walk-v1.json");
    assert_eq!(file["version"], 1);
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() >= 8, "walk vectors cover the cases of §6");
    for case in cases {
        let name = s(&case["name"]);
        let raw = case["messages"].as_array().expect("messages");
        let messages: Vec<Message> = raw.iter().map(message).collect();
        let bindings: Vec<Option<Binding>> = raw
            .iter()
            .map(|m| m["binding"].as_str().map(parse_binding))
            .collect();
        let t = &case["target"];
        let target = Origin {
            provider: s(&t["provider"]),
            model: s(&t["model"]),
            // An empty account is no account (docs/fingerprint.md §7).
            account: t["account"]
                .as_str()
                .filter(|a| !a.is_empty())
                .map(str::to_owned),
        };
        let context = digest::context_digest(&context_of(case, &messages));
        assert_eq!(hex(&context), s(&case["context_digest"]), "{name}: context");

        let got = walk(&messages, &bindings, &target, &context);
        let want_report: Vec<(usize, String)> = case["report"]
            .as_array()
            .expect("report")
            .iter()
            .map(|e| {
                let index = usize::try_from(e[0].as_u64().expect("index")).expect("index");
                (index, s(&e[1]))
            })
            .collect();
        assert_eq!(got.report, want_report, "{name}: report");
        let want_sent: Vec<String> = case["sent_digests"]
            .as_array()
            .expect("sent digests")
            .iter()
            .map(s)
            .collect();
        let got_sent: Vec<String> = got.sent_digests.iter().map(|d| hex(d)).collect();
        assert_eq!(got_sent, want_sent, "{name}: as-sent digests");
        // The as-sent messages written in the file hash to those digests too.
        for (m, want) in case["sent"]
            .as_array()
            .expect("sent")
            .iter()
            .zip(&want_sent)
        {
            assert_eq!(
                &hex(&digest::message_digest(&message(m))),
                want,
                "{name}: sent form"
            );
        }
        assert_eq!(
            hex(&got.chain_end),
            s(&case["chain_end"]),
            "{name}: chain end"
        );
    }
}

//! The canonical byte encoding that digests are taken over (docs/fingerprint.md §3).
//!
//! Every field is self-delimiting: a one-byte tag, then for strings and byte
//! strings an 8-byte little-endian length and the bytes, for lists an 8-byte
//! count and the items. Records start with a kind byte and list their fields in
//! a fixed order. So the encoding can be parsed back unambiguously, which makes
//! it injective: two different values never share an encoding.

use std::convert::Infallible;

use crate::model::{
    Block, Content, ContentPart, Context, Message, Native, Origin, Part, Tool, ToolCall,
};

pub mod tag {
    pub const STR: u8 = b's';
    pub const JSON: u8 = b'j';
    pub const BYTES: u8 = b'b';
    pub const NONE: u8 = b'n';
    pub const TRUE: u8 = b't';
    pub const FALSE: u8 = b'f';
    pub const LIST: u8 = b'l';

    pub const SYSTEM: u8 = b'S';
    pub const USER: u8 = b'U';
    pub const TOOL_RESULT: u8 = b'T';
    pub const ASSISTANT: u8 = b'A';

    pub const TEXT_PART: u8 = b'x';
    pub const TOOL_CALL: u8 = b'c';
    pub const THINKING_TEXT: u8 = b'k';
    pub const REDACTED: u8 = b'd';
    pub const OPAQUE: u8 = b'o';
    pub const NATIVE: u8 = b'N';
    pub const IMAGE: u8 = b'I';
    pub const DOCUMENT: u8 = b'F';

    pub const TOOL_DEF: u8 = b'w';
    pub const CONTEXT: u8 = b'C';
    pub const PREFIX: u8 = b'P';
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u64).to_le_bytes());
}

fn put_tagged(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    put_len(out, bytes.len());
    out.extend_from_slice(bytes);
}

pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_tagged(out, tag::STR, s.as_bytes());
}

/// `put_str` for text that `write` appends to `out` itself (its UTF-8 bytes
/// and nothing else), so that it needs no buffer of its own: the length is
/// filled in once the text is written. On an error, what was written stays
/// in `out`, which the caller then drops.
pub fn put_str_with<E>(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    out.push(tag::STR);
    let at = out.len();
    put_len(out, 0);
    write(out)?;
    let len = out.len() - at - 8;
    out[at..at + 8].copy_from_slice(&(len as u64).to_le_bytes());
    Ok(())
}

/// Text already in memory, as a `put_str_with` writer.
fn appended(text: &str) -> impl FnOnce(&mut Vec<u8>) -> Result<(), Infallible> + '_ {
    move |out| {
        out.extend_from_slice(text.as_bytes());
        Ok(())
    }
}

pub fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => put_str(out, s),
        None => out.push(tag::NONE),
    }
}

pub fn put_json(out: &mut Vec<u8>, jcs: &[u8]) {
    put_tagged(out, tag::JSON, jcs);
}

pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_tagged(out, tag::BYTES, bytes);
}

pub fn put_opt_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        Some(b) => put_bytes(out, b),
        None => out.push(tag::NONE),
    }
}

pub fn put_bool(out: &mut Vec<u8>, b: bool) {
    out.push(if b { tag::TRUE } else { tag::FALSE });
}

pub fn put_list_header(out: &mut Vec<u8>, count: usize) {
    out.push(tag::LIST);
    put_len(out, count);
}

// Record writers over borrowed fields. Each record's layout is defined here
// once; `encode_message` (owned model) and the Python encoder (borrowed Python
// strings, rust/python/src/encode.rs) both write through these.

// A system, user or tool record holds its content first: a string, or a list
// of content-part records. The Python encoder writes the kind byte, then the content
// (`put_str`, or `put_list_header` and the parts), then the rest of the record.

/// The fields of a tool-result record after its content.
pub fn put_tool_result_tail(out: &mut Vec<u8>, tool_call_id: &str, is_error: bool) {
    put_str(out, tool_call_id);
    put_bool(out, is_error);
}

pub fn put_image(
    out: &mut Vec<u8>,
    data: Option<&[u8]>,
    media_type: Option<&str>,
    url: Option<&str>,
) {
    out.push(tag::IMAGE);
    put_opt_bytes(out, data);
    put_opt_str(out, media_type);
    put_opt_str(out, url);
}

/// A document record: its source (exactly one of data, url, text), title,
/// citations switch and media type.
pub struct DocumentFields<'a> {
    pub data: Option<&'a [u8]>,
    pub url: Option<&'a str>,
    pub text: Option<&'a str>,
    pub title: Option<&'a str>,
    pub citations: bool,
    pub media_type: &'a str,
}

pub fn put_document(out: &mut Vec<u8>, doc: &DocumentFields<'_>) {
    out.push(tag::DOCUMENT);
    put_opt_bytes(out, doc.data);
    put_opt_str(out, doc.url);
    put_opt_str(out, doc.text);
    put_opt_str(out, doc.title);
    put_bool(out, doc.citations);
    put_str(out, doc.media_type);
}

pub fn put_native(out: &mut Vec<u8>, provider: &str, data: &str, text: Option<&str>) {
    out.push(tag::NATIVE);
    put_str(out, provider);
    put_str(out, data);
    put_opt_str(out, text);
}

/// Starts an assistant record; exactly `part_count` parts must follow.
pub fn put_assistant_header(out: &mut Vec<u8>, part_count: usize) {
    out.push(tag::ASSISTANT);
    put_list_header(out, part_count);
}

pub fn put_text_part(out: &mut Vec<u8>, text: &str) {
    let Ok(()) = put_text_part_with(out, appended(text));
}

/// A text part whose text `write` appends (see `put_str_with`).
pub fn put_text_part_with<E>(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    out.push(tag::TEXT_PART);
    put_str_with(out, write)
}

pub fn put_tool_call(out: &mut Vec<u8>, id: &str, name: &str, arguments_jcs: &[u8]) {
    out.push(tag::TOOL_CALL);
    put_str(out, id);
    put_str(out, name);
    put_json(out, arguments_jcs);
}

pub fn put_thinking_text(out: &mut Vec<u8>, text: &str, signature: Option<&str>) {
    let Ok(()) = put_thinking_text_with(out, appended(text), signature);
}

/// A thinking-text record whose text `write` appends (see `put_str_with`).
pub fn put_thinking_text_with<E>(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    signature: Option<&str>,
) -> Result<(), E> {
    out.push(tag::THINKING_TEXT);
    put_str_with(out, write)?;
    put_opt_str(out, signature);
    Ok(())
}

pub fn put_redacted(out: &mut Vec<u8>, data: &str) {
    out.push(tag::REDACTED);
    put_str(out, data);
}

pub fn put_opaque(out: &mut Vec<u8>, provider: &str, data: &str) {
    out.push(tag::OPAQUE);
    put_str(out, provider);
    put_str(out, data);
}

pub fn encode_tool_call(out: &mut Vec<u8>, call: &ToolCall) {
    put_tool_call(out, &call.id, &call.name, &call.arguments_jcs);
}

pub fn encode_block(out: &mut Vec<u8>, block: &Block) {
    match block {
        Block::Text { text, signature } => put_thinking_text(out, text, signature.as_deref()),
        Block::Redacted { data } => put_redacted(out, data),
        Block::Opaque { provider, data } => put_opaque(out, provider, data),
    }
}

fn encode_native(out: &mut Vec<u8>, native: &Native) {
    put_native(out, &native.provider, &native.data, native.text.as_deref());
}

pub fn encode_part(out: &mut Vec<u8>, part: &Part) {
    match part {
        Part::Text(text) => put_text_part(out, text),
        Part::ToolCall(call) => encode_tool_call(out, call),
        Part::Thinking(block) => encode_block(out, block),
        Part::Native(native) => encode_native(out, native),
    }
}

pub fn encode_content_part(out: &mut Vec<u8>, part: &ContentPart) {
    match part {
        ContentPart::Text(text) => put_text_part(out, text),
        ContentPart::Image {
            data,
            media_type,
            url,
        } => put_image(out, data.as_deref(), media_type.as_deref(), url.as_deref()),
        ContentPart::Document {
            data,
            url,
            text,
            title,
            citations,
            media_type,
        } => put_document(
            out,
            &DocumentFields {
                data: data.as_deref(),
                url: url.as_deref(),
                text: text.as_deref(),
                title: title.as_deref(),
                citations: *citations,
                media_type,
            },
        ),
        ContentPart::Native(native) => encode_native(out, native),
    }
}

pub fn encode_content(out: &mut Vec<u8>, content: &Content) {
    match content {
        Content::Text(text) => put_str(out, text),
        Content::Parts(parts) => {
            put_list_header(out, parts.len());
            for part in parts {
                encode_content_part(out, part);
            }
        }
    }
}

/// Appends the canonical encoding of `message` to `out`.
pub fn encode_message(out: &mut Vec<u8>, message: &Message) {
    match message {
        Message::System { content } => {
            out.push(tag::SYSTEM);
            encode_content(out, content);
        }
        Message::User { content } => {
            out.push(tag::USER);
            encode_content(out, content);
        }
        Message::Tool {
            content,
            tool_call_id,
            is_error,
        } => {
            out.push(tag::TOOL_RESULT);
            encode_content(out, content);
            put_tool_result_tail(out, tool_call_id, *is_error);
        }
        Message::Assistant { parts } => {
            put_assistant_header(out, parts.len());
            for part in parts {
                encode_part(out, part);
            }
        }
    }
}

pub fn encode_tool(out: &mut Vec<u8>, tool: &Tool) {
    out.push(tag::TOOL_DEF);
    put_str(out, &tool.name);
    put_str(out, &tool.description);
    put_json(out, &tool.parameters_jcs);
}

pub fn encode_context(out: &mut Vec<u8>, context: &Context) {
    out.push(tag::CONTEXT);
    put_list_header(out, context.system.len());
    for text in &context.system {
        put_str(out, text);
    }
    put_list_header(out, context.tools.len());
    for tool in &context.tools {
        encode_tool(out, tool);
    }
    match &context.response_format_jcs {
        Some(jcs) => put_json(out, jcs),
        None => out.push(tag::NONE),
    }
}

/// The input of a binding's prefix digest: who answered, what stood beside the
/// messages, and the chain value of every message before the turn.
pub fn encode_prefix(
    out: &mut Vec<u8>,
    version: u32,
    origin: &Origin,
    context_digest: &[u8; 32],
    chain_before: &[u8; 32],
) {
    out.push(tag::PREFIX);
    put_str(out, &version.to_string());
    put_str(out, &origin.provider);
    put_str(out, &origin.model);
    put_opt_str(out, origin.account.as_deref());
    put_bytes(out, context_digest);
    put_bytes(out, chain_before);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(m: &Message) -> Vec<u8> {
        let mut out = Vec::new();
        encode_message(&mut out, m);
        out
    }

    #[test]
    fn text_written_in_place_encodes_as_text_given() {
        for text in ["", "a", "lörem — 東京 🌧"] {
            let mut given = vec![b'#'];
            put_str(&mut given, text);
            put_thinking_text(&mut given, text, Some("sig"));
            put_text_part(&mut given, text);
            let mut written = vec![b'#'];
            let write = |out: &mut Vec<u8>| -> Result<(), ()> {
                out.extend_from_slice(text.as_bytes());
                Ok(())
            };
            put_str_with(&mut written, write).unwrap();
            put_thinking_text_with(&mut written, write, Some("sig")).unwrap();
            put_text_part_with(&mut written, write).unwrap();
            assert_eq!(written, given);
        }
        let mut out = Vec::new();
        assert_eq!(put_str_with(&mut out, |_| Err("refused")), Err("refused"));
    }

    #[test]
    fn user_message_layout_is_exact() {
        let got = enc(&Message::User {
            content: "hi".into(),
        });
        let mut want = vec![b'U', b's'];
        want.extend_from_slice(&2u64.to_le_bytes());
        want.extend_from_slice(b"hi");
        assert_eq!(got, want);
    }

    #[test]
    fn field_boundaries_cannot_shift() {
        let a = Message::Tool {
            content: "ab".into(),
            tool_call_id: "c".into(),
            is_error: false,
        };
        let b = Message::Tool {
            content: "a".into(),
            tool_call_id: "bc".into(),
            is_error: false,
        };
        assert_ne!(enc(&a), enc(&b));
    }

    #[test]
    fn roles_and_part_order_are_distinguished() {
        assert_ne!(
            enc(&Message::User {
                content: "x".into()
            }),
            enc(&Message::System {
                content: "x".into()
            })
        );
        let t = Part::Thinking(Block::Text {
            text: "t".into(),
            signature: Some("s".into()),
        });
        let x = Part::Text("x".into());
        assert_ne!(
            enc(&Message::Assistant {
                parts: vec![t.clone(), x.clone()]
            }),
            enc(&Message::Assistant { parts: vec![x, t] })
        );
        let unsigned = Part::Thinking(Block::Text {
            text: "t".into(),
            signature: None,
        });
        let empty_sig = Part::Thinking(Block::Text {
            text: "t".into(),
            signature: Some(String::new()),
        });
        assert_ne!(
            enc(&Message::Assistant {
                parts: vec![unsigned]
            }),
            enc(&Message::Assistant {
                parts: vec![empty_sig]
            })
        );
    }
}

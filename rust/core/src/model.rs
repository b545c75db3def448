//! The message model as the fingerprint sees it: only the fields that are hashed.
//!
//! Owned data, so the bindings can copy a batch out of Python and hash it with
//! the GIL released.

/// One thinking block, as the provider returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// Reasoning text; `signature` is `None` when the provider did not sign it.
    Text {
        text: String,
        signature: Option<String>,
    },
    /// Encrypted reasoning (Anthropic `redacted_thinking`, Bedrock `redactedContent`).
    Redacted { data: String },
    /// Provider-specific replay data, e.g. one `OpenRouter` `reasoning_details` item.
    Opaque { provider: String, data: String },
}

/// One tool invocation requested by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments object, already in RFC 8785 form (see [`crate::jcs`]).
    pub arguments_jcs: Vec<u8>,
}

/// A provider's own block, kept verbatim: `data` is its JSON text; `text` is
/// what other providers get instead (a cited text block's text), if anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Native {
    pub provider: String,
    pub data: String,
    pub text: Option<String>,
}

/// One part of an assistant turn, in the order the provider returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    ToolCall(ToolCall),
    Thinking(Block),
    Native(Native),
}

/// One part of a system, user or tool message's content. Cache breakpoints are
/// not part of the model: they are never fingerprinted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentPart {
    Text(String),
    /// Bytes with their media type, or a URL.
    Image {
        data: Option<Vec<u8>>,
        media_type: Option<String>,
        url: Option<String>,
    },
    /// PDF bytes, a URL or plain text; a title and a citations switch.
    Document {
        data: Option<Vec<u8>>,
        url: Option<String>,
        text: Option<String>,
        title: Option<String>,
        citations: bool,
        media_type: String,
    },
    Native(Native),
}

/// A message's content: plain text (also what a lone text part is), or parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    System {
        content: Content,
    },
    User {
        content: Content,
    },
    Tool {
        content: Content,
        tool_call_id: String,
        is_error: bool,
    },
    /// The turn's parts fix its content (the text parts, `None` when there are
    /// none), its tool calls and its thinking, and their order.
    Assistant {
        parts: Vec<Part>,
    },
}

/// A tool definition offered to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the parameters, in RFC 8785 form.
    pub parameters_jcs: Vec<u8>,
}

/// What a request carries beside its messages and what every sealed turn in it
/// depends on: all system messages (wherever they stand), tools and response format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Context {
    pub system: Vec<String>,
    pub tools: Vec<Tool>,
    /// The response format in RFC 8785 form, or `None` when there is none.
    pub response_format_jcs: Option<Vec<u8>>,
}

/// Who answered a request: provider id, configured model, optional account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub provider: String,
    pub model: String,
    pub account: Option<String>,
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

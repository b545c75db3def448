"""Writes content-v1.json: the encodings and digests of content parts
(docs/fingerprint.md §3): images, documents, native blocks, cache breakpoints
(not encoded), and the rule that a lone text part encodes like a string.

Run once when these encodings are created; never to make a failing test pass.
Both `cargo test` (rust/core/tests/vectors.rs) and pytest (tests/test_vectors.py)
check every entry. The vectors of fingerprint-v1.json are not touched: plain
string content encodes exactly as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Document,
    Image,
    Message,
    Native,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    _core,
    message_to_dict,
)

PNG = bytes.fromhex("89504e470d0a1a0a")  # the PNG signature: short, and not text
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
CITED = {"type": "text", "text": "Paris.", "citations": [{"type": "web_search_result_location", "url": "u"}]}

MESSAGES: list[Message] = [
    UserMessage(["Describe this.", Image(PNG, "image/png"), Image(url="https://example.com/a.jpg")]),
    UserMessage(
        [
            Document(PDF, title="Report", citations=True),
            Document(url="https://example.com/r.pdf"),
            Document(text="Plain words.", title="Notes"),
            "Summarise both.",
        ]
    ),
    UserMessage(["Only text.", CacheBreakpoint("1h")]),  # encodes like UserMessage("Only text.")
    UserMessage("Only text."),
    SystemMessage(["Be brief.", CacheBreakpoint(), "Cite sources."]),
    ToolMessage(["Chart:", Image(PNG, "image/png"), CacheBreakpoint()], "toolu_1", is_error=False),
    UserMessage([Native("anthropic", '{"type":"container_upload","file_id":"f1"}'), "See file."]),
    AssistantMessage.from_parts(
        [
            ThinkingBlock.Text("search", "sig"),
            Native("anthropic", '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}'),
            Native.of("anthropic", CITED, text="Paris."),
            ToolCall("toolu_2", "f", {}),
        ]
    ),
]


# Stored without a document's media type: it defaults to "application/pdf" for
# data or a URL and "text/plain" for text (docs/fingerprint.md §3).
DEFAULT_MEDIA_TYPE: list[Message] = [
    UserMessage([Document(PDF), Document(url="https://example.com/r.pdf"), "Read both."]),
    ToolMessage([Document(text="Plain words.")], "toolu_3"),
]


def _without_media_types(stored: dict[str, Any]) -> dict[str, Any]:
    for part in stored["content"]:
        if isinstance(part, dict) and part.get("type") == "document":
            del part["media_type"]
    return stored


def main() -> None:
    cases = [
        {"message": message_to_dict(m), "encoding": _core.encode_message(m).hex(), "digest": m.digest.hex()}
        for m in MESSAGES
    ]
    cases += [
        {
            "message": _without_media_types(message_to_dict(m)),
            "encoding": _core.encode_message(m).hex(),
            "digest": m.digest.hex(),
        }
        for m in DEFAULT_MEDIA_TYPE
    ]
    out = Path(__file__).with_name("content-v1.json")
    out.write_text(json.dumps({"version": 1, "messages": cases}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

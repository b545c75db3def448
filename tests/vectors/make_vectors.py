"""Writes fingerprint-v1.json, the golden vectors of fingerprint version 1.

Run once when a fingerprint version is created; never to make a failing test
pass. The vectors pin the bytes: any change to them is a new fingerprint version
(docs/fingerprint.md §9). Both `cargo test` (rust/core/tests/vectors.rs) and
pytest (tests/test_vectors.py) check every entry.
"""

from __future__ import annotations

import json
from pathlib import Path

from thinkseal import (
    AssistantMessage,
    Binding,
    Origin,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    _core,
    message_to_dict,
)

JCS_CASES = [
    '{"b":2,"a":1,"c":{"z":[],"y":{}}}',
    "[1.0, 1e2, -0.0, 0.1, 1e21, 1e-7, 123456789012345678901234567890, 4.5e-324]",
    '{"\\u20ac":"Euro","\\r":"cr","1":"one","\\ud83d\\ude00":"smile","\\u00f6":"o"}',
    '"\\u0000\\u001f\\"\\\\/\\b\\f\\n\\r\\t\\u007f\\u2028"',
    '{"numbers":[333333333.3333333,1e+30,4.50,2e-3,0.000001,1E-7]}',
    "[true,false,null]",
]

MESSAGES = [
    SystemMessage("You are terse."),
    UserMessage("Weather in Paris? \u00e9\u00e8 \U0001f600"),
    AssistantMessage(
        None,
        [ToolCall("toolu_01", "get_weather", {"city": "Paris", "units": {"temp": "C"}, "days": 1.0})],
        [ThinkingBlock.Text("I need the weather first.", "EqQBsig=="), ThinkingBlock.Redacted("EmwKAhgB")],
    ),
    ToolMessage("20\u00b0C, sunny", "toolu_01"),
    ToolMessage("timeout", "toolu_02", is_error=True),
    AssistantMessage.from_parts(
        [
            ThinkingBlock.Text("", "omitted-sig"),
            "Part one. ",
            ToolCall("toolu_03", "lookup", {}),
            ThinkingBlock.Text("more"),
            "Part two.",
        ]
    ),
    AssistantMessage(""),
    AssistantMessage(
        "Done.", thinking=[ThinkingBlock.Opaque("openrouter", '{"type":"reasoning.encrypted","data":"x"}')]
    ),
]

TOOLS = [Tool("get_weather", "Current weather", {"type": "object", "properties": {"city": {"type": "string"}}})]
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object"}}}


def main() -> None:
    jcs = [{"input": text, "canonical": _core.canonical_json(json.loads(text)).decode()} for text in JCS_CASES]
    messages = [
        {
            "message": message_to_dict(m),
            "encoding": _core.encode_message(m).hex(),
            "digest": m.digest.hex(),
        }
        for m in MESSAGES
    ]
    packed = _core.chain(_core.CHAIN_START, b"".join(m.digest for m in MESSAGES))
    chain = [packed[i : i + 32].hex() for i in range(0, len(packed), 32)]
    systems = [m.content for m in MESSAGES if isinstance(m, SystemMessage)]
    rf_jcs = _core.canonical_json(RESPONSE_FORMAT)
    context = _core.context_digest(systems, [(t.name, t.description, t._parameters_jcs) for t in TOOLS], rf_jcs)
    empty_context = _core.context_digest([], [], None)
    origin = Origin("anthropic", "claude-sonnet-4-5", "acct-1")
    prefix = _core.prefix_digest(1, origin.provider, origin.model, origin.account, context, packed[32:64])
    binding = Binding(origin, 1, prefix, MESSAGES[2].digest)
    document = {
        "version": _core.FINGERPRINT_VERSION,
        "contexts": {
            "message": _core.MESSAGE_DOMAIN,
            "chain": _core.CHAIN_DOMAIN,
            "context": _core.REQUEST_DOMAIN,
            "prefix": _core.PREFIX_DOMAIN,
        },
        "jcs": jcs,
        "messages": messages,
        "chain": {"start": _core.CHAIN_START.hex(), "after_each_message": chain},
        "context": {
            "system": systems,
            "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in TOOLS],
            "response_format": RESPONSE_FORMAT,
            "digest": context.hex(),
            "empty_digest": empty_context.hex(),
        },
        "prefix": {
            "version": 1,
            "origin": {"provider": origin.provider, "model": origin.model, "account": origin.account},
            "context": context.hex(),
            "chain_before": packed[32:64].hex(),
            "digest": prefix.hex(),
            "turn": MESSAGES[2].digest.hex(),
            "binding": str(binding),
        },
    }
    out = Path(__file__).with_name("fingerprint-v1.json")
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

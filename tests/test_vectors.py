"""The golden vectors of fingerprint version 1 (tests/vectors/fingerprint-v1.json).

The same file is checked by `cargo test` (rust/core/tests/vectors.rs), so the
Python walker and the pure-Rust model agree byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from thinkseal import Binding, Origin, SystemMessage, Tool, _core, message_from_dict

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "vectors" / "fingerprint-v1.json").read_text(encoding="utf-8")
)


def test_version_and_contexts_are_pinned() -> None:
    assert VECTORS["version"] == _core.FINGERPRINT_VERSION == 1
    assert VECTORS["contexts"] == {
        "message": _core.MESSAGE_CONTEXT,
        "chain": _core.CHAIN_CONTEXT,
        "context": _core.CONTEXT_CONTEXT,
        "prefix": _core.PREFIX_CONTEXT,
    }


@pytest.mark.parametrize("case", VECTORS["jcs"], ids=lambda c: c["input"][:30])
def test_canonical_json(case: dict[str, str]) -> None:
    assert _core.canonical_json(json.loads(case["input"])).decode() == case["canonical"]


@pytest.mark.parametrize("case", VECTORS["messages"], ids=lambda c: c["message"]["role"])
def test_message_encoding_and_digest(case: dict[str, Any]) -> None:
    message = message_from_dict(case["message"])
    assert _core.encode_message(message).hex() == case["encoding"]
    assert message.digest.hex() == case["digest"]


def test_chain() -> None:
    digests = b"".join(bytes.fromhex(c["digest"]) for c in VECTORS["messages"])
    start = bytes.fromhex(VECTORS["chain"]["start"])
    packed = _core.chain(start, digests)
    got = [packed[i : i + 32].hex() for i in range(0, len(packed), 32)]
    assert got == VECTORS["chain"]["after_each_message"]


def test_context_prefix_and_binding() -> None:
    ctx = VECTORS["context"]
    tools = [Tool(t["name"], t["description"], t["parameters"]) for t in ctx["tools"]]
    rf = _core.canonical_json(ctx["response_format"])
    digest = _core.context_digest(ctx["system"], [(t.name, t.description, t._parameters_jcs) for t in tools], rf)
    assert digest.hex() == ctx["digest"]
    assert _core.context_digest([], [], None).hex() == ctx["empty_digest"]

    pre = VECTORS["prefix"]
    o = pre["origin"]
    prefix = _core.prefix_digest(
        pre["version"],
        o["provider"],
        o["model"],
        o["account"],
        bytes.fromhex(pre["context"]),
        bytes.fromhex(pre["chain_before"]),
    )
    assert prefix.hex() == pre["digest"]
    binding = Binding(Origin(o["provider"], o["model"], o["account"]), 1, prefix, bytes.fromhex(pre["turn"]))
    assert str(binding) == pre["binding"]
    assert Binding.parse(pre["binding"]) == binding


def test_conversation_context_digest_matches_vector() -> None:
    from thinkseal import Conversation

    ctx = VECTORS["context"]
    conv = Conversation(
        [SystemMessage(s) for s in ctx["system"]],
        [Tool(t["name"], t["description"], t["parameters"]) for t in ctx["tools"]],
        ctx["response_format"],
    )
    assert conv.context_digest.hex() == ctx["digest"]

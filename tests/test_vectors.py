"""The golden vectors of fingerprint version 1 (tests/vectors/fingerprint-v1.json)
and of the walk (tests/vectors/walk-v1.json).

The same files are checked by `cargo test` (rust/core/tests/vectors.rs and
walk.rs, the latter a second implementation of the walk written from
docs/fingerprint.md), so the package and the spec agree byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from thinkseal import Binding, Conversation, Origin, SystemMessage, Tool, _core, message_from_dict, message_to_dict
from thinkseal.ledger._entries import Checker, Datum, keys

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "vectors" / "fingerprint-v1.json").read_text(encoding="utf-8")
)


def test_version_and_contexts_are_pinned() -> None:
    assert VECTORS["version"] == _core.FINGERPRINT_VERSION == 1
    assert VECTORS["contexts"] == {
        "message": _core.MESSAGE_DOMAIN,
        "chain": _core.CHAIN_DOMAIN,
        "context": _core.REQUEST_DOMAIN,
        "prefix": _core.PREFIX_DOMAIN,
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
    ctx = VECTORS["context"]
    conv = Conversation(
        [SystemMessage(s) for s in ctx["system"]],
        [Tool(t["name"], t["description"], t["parameters"]) for t in ctx["tools"]],
        ctx["response_format"],
    )
    assert conv.context_digest.hex() == ctx["digest"]


# -- walk vectors (tests/vectors/walk-v1.json; docs/fingerprint.md §6) ----------------------------

WALKS: dict[str, Any] = json.loads((Path(__file__).parent / "vectors" / "walk-v1.json").read_text(encoding="utf-8"))


def _walk_case(case: dict[str, Any]) -> tuple[list[Any], Origin, list[Tool]]:
    messages = [message_from_dict(m) for m in case["messages"]]
    target = Origin(case["target"]["provider"], case["target"]["model"], case["target"]["account"])
    tools = [Tool(t["name"], t["description"], t["parameters"]) for t in case["tools"]]
    return messages, target, tools


def _check_walk(replay: Any, case: dict[str, Any]) -> None:
    assert [[e.index, e.reason] for e in replay.report] == case["report"]
    sent = replay.sent_messages()
    assert [message_to_dict(m) for m in sent] == case["sent"]
    assert [m.digest.hex() for m in sent] == case["sent_digests"]
    assert [replay.sent(i) for i in range(len(sent))] == sent
    assert replay.chain_end.hex() == case["chain_end"]


@pytest.mark.parametrize("case", WALKS["cases"], ids=lambda c: c["name"])
def test_walk_cold(case: dict[str, Any]) -> None:
    messages, target, tools = _walk_case(case)
    conversation = Conversation(messages, tools, case["response_format"])
    assert conversation.context_digest.hex() == case["context_digest"]
    _check_walk(conversation.replay(target), case)


@pytest.mark.parametrize("case", WALKS["cases"], ids=lambda c: c["name"])
def test_walk_grown_one_message_at_a_time(case: dict[str, Any]) -> None:
    """The same decisions when every prefix was decided first (shared caches)."""
    messages, target, tools = _walk_case(case)
    conversation = Conversation([], tools, case["response_format"])
    for message in messages:
        conversation = conversation.append(message)
        conversation.replay(target)
    _check_walk(conversation.replay(target), case)


# -- content parts (tests/vectors/content-v1.json; docs/fingerprint.md §3) ---------------------------

CONTENT: dict[str, Any] = json.loads(
    (Path(__file__).parent / "vectors" / "content-v1.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CONTENT["messages"], ids=lambda c: c["message"]["role"])
def test_content_part_encoding_and_digest(case: dict[str, Any]) -> None:
    message = message_from_dict(case["message"])
    assert _core.encode_message(message).hex() == case["encoding"]
    assert message.digest.hex() == case["digest"]
    written = message_to_dict(message)
    parts = case["message"].get("content", [])
    defaulted = (
        [p for p in parts if isinstance(p, dict) and p["type"] == "document" and "media_type" not in p]
        if isinstance(parts, list)
        else []
    )
    # A stored document may leave out its default media type; the library always writes it.
    for part in defaulted:
        part["media_type"] = "text/plain" if "text" in part else "application/pdf"
    assert written == case["message"]


def test_breakpoints_are_not_encoded_and_a_lone_text_part_is_a_string() -> None:
    by_content = {json.dumps(c["message"]["content"]): c for c in CONTENT["messages"] if c["message"]["role"] == "user"}
    with_breakpoint = by_content[
        json.dumps([{"type": "text", "text": "Only text."}, {"type": "cache_breakpoint", "ttl": "1h"}])
    ]
    plain = by_content[json.dumps("Only text.")]
    assert with_breakpoint["encoding"] == plain["encoding"]


# -- ledger vectors (tests/vectors/ledger-v1.json; docs/fingerprint.md §11) ------------------------

LEDGER: dict[str, Any] = json.loads((Path(__file__).parent / "vectors" / "ledger-v1.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", LEDGER["keys"], ids=lambda c: f"{c['kind']}-{c['account']}")
def test_ledger_keys(case: dict[str, Any]) -> None:
    (key,) = keys(case["account"], [Datum(case["kind"], case["provider"], case["datum"])])
    assert key.hex() == case["key"]


@pytest.mark.parametrize("case", LEDGER["checks"], ids=lambda c: f"{c['secret'] or 'none'}-{c['binding'][:9]}")
def test_ledger_entry_checks(case: dict[str, Any]) -> None:
    checker = Checker(bytes.fromhex(case["secret"]))
    assert checker.check(bytes.fromhex(case["key"]), case["binding"]).hex() == case["check"]

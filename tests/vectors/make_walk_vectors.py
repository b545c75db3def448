"""Writes walk-v1.json: histories with a target and the walk's expected result
(docs/fingerprint.md §6): per assistant turn its reason, every message as sent,
the digest of each, and the chain value after the last.

Run once when the walk's rules change (a new fingerprint version); never to
make a failing test pass. Both `cargo test` (rust/core/tests/walk.rs, a second
implementation of §6 written from the page) and pytest (tests/test_vectors.py)
check every case.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thinkseal import (
    AssistantMessage,
    Binding,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Message,
    Native,
    Origin,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_dict,
    message_to_dict,
)
from thinkseal.testing import respond

Text = ThinkingBlock.Text
CLAUDE = Origin("anthropic", "claude-a")
OTHER_MODEL = Origin("anthropic", "claude-b")
TEAM = Origin("anthropic", "claude-a", "team a/b")  # an account that needs percent-encoding
TOOLS = (Tool("lookup", "Looks a thing up", {"type": "object", "properties": {"q": {"type": "string"}}}),)


def sealed(n: int, *calls: str, text: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        text, [ToolCall(c, "lookup", {"q": f"{n}"}) for c in calls], [Text(f"think {n}", f"sig{n}")]
    )


def start() -> Conversation:
    return Conversation([SystemMessage("Be brief."), UserMessage("Find it.")], TOOLS)


def stray_and_duplicate_results() -> tuple[Conversation, Origin]:
    conv = respond(start(), CLAUDE, sealed(1, "c1"))
    conv = conv.append(ToolMessage("found", "c1"), ToolMessage("found again", "c1"), ToolMessage("who?", "c9", True))
    conv = respond(conv.append(UserMessage("Go on.")), CLAUDE, sealed(2, text="Done."))
    return conv, CLAUDE


def unpaired_call() -> tuple[Conversation, Origin]:
    # c2 never gets a result: the turn goes out without it, unsealed; the next
    # turn was produced after that unsealed form, so it holds.
    conv = respond(start(), CLAUDE, sealed(1, "c1", "c2")).append(ToolMessage("one", "c1"), UserMessage("Skip c2."))
    conv = respond(conv, CLAUDE, sealed(2, text="Skipped."))
    return conv, CLAUDE


def duplicate_call_ids() -> tuple[Conversation, Origin]:
    turn = AssistantMessage.from_parts(
        [Text("twice", "sigd"), ToolCall("c1", "lookup", {"q": "a"}), ToolCall("c1", "lookup", {"q": "b"})]
    )
    conv = respond(start(), CLAUDE, turn).append(ToolMessage("a", "c1"), ToolMessage("b", "c1"))
    return conv, CLAUDE


def foreign_then_kept() -> tuple[Conversation, Origin]:
    # Model A's turn goes to model B unsealed; B's turn was bound over that form.
    conv = respond(start(), OTHER_MODEL, sealed(1, text="A says."))
    conv = respond(conv.append(UserMessage("And you?")), CLAUDE, sealed(2, text="B says."))
    return conv, CLAUDE


def interleaved_unsealed_keeps_order() -> tuple[Conversation, Origin]:
    # An interleaved turn from another model goes out unsealed in its own order.
    turn = AssistantMessage.from_parts(
        [
            Text("first", "s1"),
            "Looking. ",
            ToolCall("c1", "lookup", {"q": "x"}),
            ThinkingBlock.Redacted("R"),
            Text("", "s2"),
            "Again. ",
            ToolCall("c2", "lookup", {"q": "y"}),
        ]
    )
    conv = respond(start(), OTHER_MODEL, turn).append(ToolMessage("x", "c1"), ToolMessage("y", "c2"))
    conv = respond(conv, CLAUDE, sealed(2, text="Both found."))
    return conv, CLAUDE


def rebound_history() -> tuple[Conversation, Origin]:
    imported = Conversation(
        [SystemMessage("Be brief."), UserMessage("q"), sealed(1, text="a"), UserMessage("q2"), sealed(2, text="b")],
        TOOLS,
    ).rebind(TEAM)
    return imported.append(UserMessage("q3")), TEAM


def binding_without_sealed_thinking() -> tuple[Conversation, Origin]:
    conv = respond(start(), CLAUDE, sealed(1, text="sealed"))
    binding = conv[-1].thinking_binding  # type: ignore[union-attr]
    assert binding is not None
    plain = message_to_dict(AssistantMessage("plain", thinking=[Text("unsigned")]))
    plain["binding"] = str(binding)  # as a stored file could carry it
    return conv.append(UserMessage("next"), message_from_dict(plain)), CLAUDE


def edits_and_versions() -> tuple[Conversation, Origin]:
    conv = respond(start(), CLAUDE, sealed(1, text="one"))
    conv = respond(conv.append(UserMessage("u2")), CLAUDE, sealed(2, text="two"))
    conv = respond(conv.append(UserMessage("u3")), CLAUDE, sealed(3, text="three"))
    items: list[Message] = list(conv)
    turn1 = items[2]
    assert isinstance(turn1, AssistantMessage)
    old = turn1.thinking_binding
    assert old is not None
    items[2] = turn1._bound(Binding(old.origin, 2, old.prefix, old.turn))  # bound under another version
    stored = message_to_dict(items[4])
    stored["parts"][1]["text"] = "two, edited on disk"  # the binding stays, the turn no longer matches it
    items[4] = message_from_dict(stored)
    items.append(UserMessage("u4"))
    items.append(sealed(4, text="imported, never bound"))
    return conv.with_messages(items), CLAUDE


def system_in_tool_run() -> tuple[Conversation, Origin]:
    conv = respond(start(), CLAUDE, sealed(1, "c1", "c2"))
    conv = conv.append(ToolMessage("one", "c1"), SystemMessage("Mind the budget."), ToolMessage("two", "c2"))
    # The new system message changes the context, so the first turn no longer
    # holds; the next one is bound under the new context and holds.
    return respond(conv, CLAUDE, sealed(2, text="Both.")), CLAUDE


def content_parts_and_breakpoints() -> tuple[Conversation, Origin]:
    # A stray result with parts keeps them after the header; breakpoints are not fingerprinted.
    png = bytes.fromhex("89504e470d0a1a0a")
    conv = Conversation(
        [SystemMessage(["Be brief.", CacheBreakpoint()]), UserMessage(["Look:", Image(png, "image/png")])], TOOLS
    )
    conv = respond(conv, CLAUDE, sealed(1, "c1")).append(
        ToolMessage(["Chart:", Image(png, "image/png"), CacheBreakpoint()], "c1"),
        ToolMessage(["Late.", Document(text="notes")], "c7"),
        UserMessage(["Next.", CacheBreakpoint("1h")]),
    )
    return respond(conv, CLAUDE, sealed(2, text="Seen.")), CLAUDE


def unsealed_turn_keeps_text_parts_apart() -> tuple[Conversation, Origin]:
    # Two adjacent text parts of a turn that goes out unsealed stay two parts;
    # an Opaque block in it is dropped.
    turn = AssistantMessage.from_parts(
        [Text("mulls", "sig1"), "Part one. ", "Part two.", ThinkingBlock.Opaque("openrouter", '{"id":"r1"}')]
    )
    conv = respond(start(), OTHER_MODEL, turn)
    return respond(conv.append(UserMessage("More.")), CLAUDE, sealed(2, text="Kept.")), CLAUDE


def native_blocks_of_a_turn_not_kept() -> tuple[Conversation, Origin]:
    # A provider's native blocks are sealed data: a turn bound to another model
    # goes out with each one replaced by its text, or left out when it has none;
    # a turn of native blocks only, with no thinking, is sealed too.
    search = Native("anthropic", '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}')
    cited = Native("anthropic", '{"type":"text","text":"Paris.","citations":[]}', text="Paris.")
    turn = AssistantMessage.from_parts([Text("look", "sig1"), search, "It is ", cited])
    conv = respond(start(), OTHER_MODEL, turn)
    conv = respond(conv.append(UserMessage("Sure?")), OTHER_MODEL, AssistantMessage.from_parts([cited]))
    conv = respond(conv.append(UserMessage("Thanks.")), CLAUDE, sealed(3, text="Welcome."))
    unbound = AssistantMessage.from_parts(["Imported: ", search])
    return conv.append(UserMessage("Again?"), unbound, UserMessage("Bye.")), CLAUDE


def prefix_changed_before_unpaired() -> tuple[Conversation, Origin]:
    # A turn whose prefix changed and whose call goes unanswered reads as
    # prefix-changed (the earlier row of the table); a result after a user
    # message answers nothing and goes out as user text.
    conv = respond(start(), CLAUDE, sealed(1, "c1"))
    items: list[Message] = list(conv)
    items[1] = UserMessage("Find it, please.")
    items += [UserMessage("Never mind."), ToolMessage("late", "c1")]
    return conv.with_messages(items), CLAUDE


def system_parts_and_empty_account() -> tuple[Conversation, Origin]:
    # A system message's text parts join with no separator in the context; an
    # empty account is no account; a binding written with lowercase escapes
    # reads as the same binding.
    conv = Conversation([SystemMessage(["Be ", CacheBreakpoint(), "brief."]), UserMessage("Find it.")], TOOLS)
    conv = respond(conv, Origin("anthropic", "claude;a"), sealed(1, text="Found."))
    return conv.append(UserMessage("Next.")), Origin("anthropic", "claude;a", "")


def as_written_with_lowercase_escapes_and_empty_account(case: dict[str, Any]) -> None:
    """The file as another implementation must read it: the target's account
    written as "" and the binding's escape in lowercase (both read the same)."""
    case["target"]["account"] = ""
    stored = case["messages"][2]
    assert ";claude%3Ba;" in stored["binding"]
    stored["binding"] = stored["binding"].replace("claude%3Ba", "claude%3ba")


CASES: dict[str, Callable[[], tuple[Conversation, Origin]]] = {
    "stray and duplicate tool results": stray_and_duplicate_results,
    "unpaired call": unpaired_call,
    "duplicate call ids in one turn": duplicate_call_ids,
    "foreign-origin turn, then a kept turn": foreign_then_kept,
    "interleaved turn unsealed keeps its order": interleaved_unsealed_keeps_order,
    "rebound history, account with reserved characters": rebound_history,
    "binding on a turn with no sealed thinking": binding_without_sealed_thinking,
    "version mismatch, turn changed, prefix changed, unbound": edits_and_versions,
    "system message inside a tool run": system_in_tool_run,
    "content parts, breakpoints and a stray result with parts": content_parts_and_breakpoints,
    "unsealed turn keeps adjacent text parts apart, drops an Opaque block": unsealed_turn_keeps_text_parts_apart,
    "native blocks of a turn not kept give way to their text": native_blocks_of_a_turn_not_kept,
    "prefix-changed before unpaired-tool-call, a late tool result": prefix_changed_before_unpaired,
    "system text parts joined, empty account, lowercase escapes": system_parts_and_empty_account,
}


# Cases whose file form is written differently from how the library writes it.
AS_WRITTEN: dict[str, Callable[[dict[str, Any]], None]] = {
    "system text parts joined, empty account, lowercase escapes": as_written_with_lowercase_escapes_and_empty_account,
}


def case(name: str, make: Callable[[], tuple[Conversation, Origin]]) -> dict[str, Any]:
    conv, target = make()
    replay = Conversation.from_json(conv.to_json()).replay(target)  # cold: nothing cached
    sent = replay.sent_messages()
    written = {
        "name": name,
        "target": {"provider": target.provider, "model": target.model, "account": target.account},
        "messages": [message_to_dict(m) for m in conv],
        "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in conv.tools],
        "response_format": conv.response_format,
        "context_digest": conv.context_digest.hex(),
        "report": [[e.index, str(e.reason)] for e in replay.report],
        "sent": [message_to_dict(m) for m in sent],
        "sent_digests": [m.digest.hex() for m in sent],
        "chain_end": replay.chain_end.hex(),
    }
    if name in AS_WRITTEN:
        AS_WRITTEN[name](written)
    return written


def main() -> None:
    document = {"version": 1, "cases": [case(name, make) for name, make in CASES.items()]}
    out = Path(__file__).with_name("walk-v1.json")
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

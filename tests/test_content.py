"""Content parts in messages (docs/api.md "Content parts"): what each kind
accepts and refuses, how content is fingerprinted (breakpoints never), and that
everything round-trips through JSON and pickle."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Native,
    Origin,
    Reason,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
    message_from_dict,
    message_to_dict,
)
from thinkseal.testing import respond

PNG = bytes.fromhex("89504e470d0a1a0a")
PDF = b"%PDF-1.7\n"
CLAUDE = Origin("anthropic", "claude")


def sealed(n: int) -> AssistantMessage:
    return AssistantMessage(f"answer {n}", thinking=[ThinkingBlock.Text(f"t{n}", f"s{n}")])


# -- construction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "path"),
    [
        (Image, "Image"),
        (lambda: Image(PNG, "image/png", url="https://x/a.png"), "Image"),
        (lambda: Image(PNG), "Image.media_type"),
        (lambda: Image(PNG, "image/bmp"), "Image.media_type"),
        (lambda: Image(b"", "image/png"), "Image.data"),
        (lambda: Image("not bytes", "image/png"), "Image.data"),
        (lambda: Image(url="https://x/a b.png"), "Image.url"),
        (lambda: Image(url=" "), "Image.url"),
        (Document, "Document"),
        (lambda: Document(PDF, text="t"), "Document"),
        (lambda: Document(text="  "), "Document.text"),
        (lambda: Document(PDF, media_type="text/plain"), "Document.media_type"),
        (lambda: Document(text="t", media_type="application/pdf"), "Document.media_type"),
        (lambda: Document(PDF, title=""), "Document.title"),
        (lambda: Document(PDF, citations=1), "Document.citations"),
        (lambda: Native("", "{}"), "Native.provider"),
        (lambda: Native("p", "[1]"), "Native.data"),
        (lambda: Native("p", "{"), "Native.data"),
        (lambda: Native("p", '{"x": NaN}'), "Native.data"),
        (lambda: Native.of("p", {"x": float("nan")}), "Native.data"),
        (lambda: CacheBreakpoint("2h"), "CacheBreakpoint.ttl"),
        (lambda: UserMessage([CacheBreakpoint()]), "UserMessage.content[0]"),
        (lambda: UserMessage([CacheBreakpoint(), "hi"]), "UserMessage.content[0]"),
        (lambda: UserMessage(["hi", CacheBreakpoint(), CacheBreakpoint()]), "UserMessage.content[2]"),
        (lambda: UserMessage(["hi", " \n"]), "UserMessage.content[1]"),
        (lambda: UserMessage([]), "UserMessage.content"),
        (lambda: SystemMessage(["hi", Image(PNG, "image/png")]), "SystemMessage.content[1]"),
        (lambda: ToolMessage(["ok", ToolCall("c", "f", {})], "c"), "ToolMessage.content[1]"),
        (lambda: AssistantMessage.from_parts([Image(PNG, "image/png")]), "AssistantMessage.parts[0]"),
        (lambda: Tool("t", cache="5m"), "Tool.cache"),
    ],
)
def test_bad_parts_are_refused_naming_the_field(make: Any, path: str) -> None:
    with pytest.raises(ValidationError) as info:
        make()
    assert info.value.path == path
    assert path in str(info.value)


def test_parts_and_text() -> None:
    m = UserMessage(["Look: ", Image(PNG, "image/png"), "and this.", CacheBreakpoint("1h")])
    assert m.parts == m.content
    assert m.text == "Look: and this."
    assert UserMessage("plain").parts == ("plain",)
    assert UserMessage("plain").text == "plain"
    assert repr(Image(PNG, "image/png")) == "Image(data=<8 bytes>, media_type='image/png')"
    assert Document(text="notes").media_type == "text/plain"
    assert Document(PDF).media_type == "application/pdf"


def test_native_keeps_its_json_text_verbatim() -> None:
    data = '{"type": "x",  "b": 1, "a": [1.50]}'
    native = Native("anthropic", data, text="shown")
    assert native.data == data
    assert native.value == {"type": "x", "b": 1, "a": [1.5]}
    assert native.type == "x"
    assert Native.of("p", {"type": "y", "k": "é"}).data == '{"type":"y","k":"é"}'


CITED = Native.of("anthropic", {"type": "text", "text": "Paris.", "citations": []}, text="Paris.")
SERVER_TOOL = Native("anthropic", '{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}')


def test_assistant_native_parts_count_as_text_and_are_sealed() -> None:
    turn = AssistantMessage.from_parts([ThinkingBlock.Text("t", "sig"), SERVER_TOOL, "It is ", CITED])
    assert turn.content == "It is Paris."
    assert turn.has_sealed_thinking
    assert turn.has_sealed_parts
    # A native block is a provider's own data: unsealing leaves its text, or nothing.
    assert turn.unsealed().parts == (ThinkingBlock.Text("t"), "It is ", "Paris.")
    assert turn.unsealed().content == turn.content
    only_native = AssistantMessage.from_parts(["It is ", CITED])
    assert not only_native.has_sealed_thinking
    assert only_native.has_sealed_parts
    assert only_native.unsealed().parts == ("It is ", "Paris.")
    assert AssistantMessage("plain").has_sealed_parts is False


def test_with_updaters_keep_a_turns_native_parts() -> None:
    calls = [ToolCall("c1", "f", {})]
    turn = AssistantMessage.from_parts([ThinkingBlock.Text("t", "sig"), SERVER_TOOL, "It is ", CITED, *calls])
    thought = turn.with_thinking("again")
    assert thought.parts == (ThinkingBlock.Text("again"), SERVER_TOOL, "It is ", CITED, *calls)
    assert thought.content == turn.content
    assert thought.thinking_binding is None
    other = [ToolCall("c2", "g", {"x": 1})]
    called = turn.with_tool_calls(other)
    assert called.parts == (ThinkingBlock.Text("t"), SERVER_TOOL, "It is ", CITED, *other)
    # New text replaces the old, cited text included; the server tool's blocks stay.
    edited = turn.with_content("Lyon.")
    assert edited.parts == (ThinkingBlock.Text("t"), SERVER_TOOL, "Lyon.", *calls)
    assert edited.content == "Lyon."
    assert turn.with_content(None).parts == (ThinkingBlock.Text("t"), SERVER_TOOL, *calls)


# -- fingerprint ---------------------------------------------------------------------------------


def test_breakpoints_change_no_digest_but_do_change_equality() -> None:
    plain = UserMessage("hi")
    marked = UserMessage(["hi", CacheBreakpoint()])
    assert marked.digest == plain.digest == UserMessage(["hi"]).digest
    assert marked != plain
    assert UserMessage(["hi"]) == plain
    assert hash(marked) == hash(plain)
    two = UserMessage(["a", Image(PNG, "image/png")])
    assert two.digest == UserMessage(["a", Image(PNG, "image/png"), CacheBreakpoint("1h")]).digest
    assert two.digest != UserMessage(["a", Image(PNG, "image/jpeg")]).digest
    assert two.digest != UserMessage(["a", Image(url="https://x/a.png")]).digest
    assert UserMessage(["a", "b"]).digest != UserMessage("ab").digest


def test_tool_cache_is_not_part_of_the_context() -> None:
    tool = Tool("lookup", "d", {"type": "object"})
    a = Conversation([UserMessage("q")], [tool])
    b = Conversation([UserMessage("q")], [Tool("lookup", "d", {"type": "object"}, cache=CacheBreakpoint())])
    assert a.context_digest == b.context_digest
    assert a.tools != b.tools


def test_moving_the_last_breakpoint_forward_over_ten_turns_keeps_every_sealed_turn() -> None:
    """Servers move the breakpoint to the newest user message every turn: the
    old message loses it, the new one carries it. Nothing may unseal."""
    conv = Conversation([SystemMessage(["Be brief.", CacheBreakpoint()]), UserMessage(["q0", CacheBreakpoint()])])
    for n in range(10):
        conv = respond(conv, CLAUDE, sealed(n))
        items = list(conv)
        last_user = max(i for i, m in enumerate(items) if isinstance(m, UserMessage))
        items[last_user] = UserMessage(items[last_user].text)  # type: ignore[union-attr]
        conv = conv.with_messages(items).append(UserMessage([f"q{n + 1}", CacheBreakpoint("1h")]))
        reasons = [e.reason for e in Conversation.from_json(conv.to_json()).replay_report(CLAUDE)]
        assert reasons == [Reason.KEPT] * (n + 1)
        assert [e.reason for e in conv.replay_report(CLAUDE)] == reasons
    # A content edit, by contrast, unseals from there on.
    items = list(conv)
    items[1] = UserMessage(["q0", Image(PNG, "image/png")])
    assert [e.reason for e in conv.with_messages(items).replay_report(CLAUDE)] == [Reason.PREFIX_CHANGED] * 10


def test_stray_tool_result_with_parts_keeps_them_after_the_header() -> None:
    conv = Conversation([UserMessage("q"), ToolMessage(["Chart:", Image(PNG, "image/png"), CacheBreakpoint()], "c9")])
    sent = conv.replay(CLAUDE).sent(1)
    assert isinstance(sent, UserMessage)
    assert sent.content == ("[tool result for call c9]\n", "Chart:", Image(PNG, "image/png"))
    text_only = Conversation([UserMessage("q"), ToolMessage(["late", CacheBreakpoint()], "c9", is_error=True)])
    assert text_only.replay(CLAUDE).sent(1) == UserMessage("[tool result for call c9 (error)]\nlate")


# -- persistence ----------------------------------------------------------------------------------


def rich() -> Conversation:
    return Conversation(
        [
            SystemMessage(["Be brief.", CacheBreakpoint("1h"), "Cite."]),
            UserMessage(
                [
                    "See:",
                    Image(PNG, "image/png"),
                    Image(url="https://example.com/a.jpg", media_type="image/jpeg"),
                    Document(PDF, title="Report", citations=True),
                    Document(url="https://example.com/r.pdf"),
                    Document(text="notes", title="Notes"),
                    Native("anthropic", '{"type":"container_upload","file_id":"f"}'),
                    CacheBreakpoint(),
                ]
            ),
            AssistantMessage.from_parts(
                [
                    Native("anthropic", '{"type":"server_tool_use","id":"s","name":"w","input":{}}'),
                    ToolCall("c1", "f", {}),
                ]
            ),
            ToolMessage(["Chart", Image(PNG, "image/gif"), CacheBreakpoint("5m")], "c1", is_error=True),
        ],
        [Tool("f", cache=CacheBreakpoint())],
    )


def test_json_round_trip_keeps_every_part() -> None:
    conv = rich()
    text = conv.to_json()
    back = Conversation.from_json(text)
    assert back == conv
    assert [m.content if not isinstance(m, AssistantMessage) else m.parts for m in back] == [
        m.content if not isinstance(m, AssistantMessage) else m.parts for m in conv
    ]
    assert back.tools[0].cache == CacheBreakpoint()
    assert json.loads(text)["version"] == 2
    for m in conv:
        assert message_from_dict(json.loads(json.dumps(message_to_dict(m)))) == m


def test_pickle_and_copy_keep_parts() -> None:
    for m in rich():
        assert pickle.loads(pickle.dumps(m)) == m
        assert copy.deepcopy(m) == m
    assert pickle.loads(pickle.dumps(rich())) == rich()


def test_version_1_document_loads_and_its_bindings_hold() -> None:
    conv = respond(Conversation([SystemMessage("s"), UserMessage("q")]), CLAUDE, sealed(0))
    document = json.loads(conv.to_json())
    document["version"] = 1
    old = Conversation.from_json(json.dumps(document))
    assert old == conv
    assert [e.reason for e in old.replay_report(CLAUDE)] == [Reason.KEPT]


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda c: c.__setitem__(1, {"type": "image", "data": "%%%", "media_type": "image/png"}), "content[1].data"),
        (lambda c: c.__setitem__(1, {"type": "hologram"}), "content[1].type"),
        (lambda c: c.__setitem__(1, {"type": "native", "provider": "p", "data": "nope"}), "content[1]"),
        (lambda c: c.__setitem__(7, {"type": "cache_breakpoint", "ttl": "1d"}), "content[7]"),
    ],
)
def test_malformed_parts_in_a_stored_file_are_refused_naming_the_path(edit: Any, path: str) -> None:
    document = json.loads(rich().to_json())
    edit(document["messages"][1]["content"])
    with pytest.raises(ValidationError) as info:
        Conversation.from_json(json.dumps(document))
    assert info.value.path is not None
    assert info.value.path.startswith(f"$.messages[1].{path}")

"""The native reader of stored conversations (rust/python/src/load.rs via
``_load.decode_stored``) against the Python path it stands in for: for any
text, both give the same messages (field for field, digests included) or the
same ``ValidationError``."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Image,
    Limits,
    Message,
    Native,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
    _core,
    _load,
)
from thinkseal._json import FrozenDict, FrozenList, frozen, frozen_loads
from thinkseal.testing import respond

ORIGIN = Origin("anthropic", "claude-x", "acct")


@contextlib.contextmanager
def python_path() -> Iterator[None]:
    previous = _load.use_native(False)
    try:
        yield
    finally:
        _load.use_native(previous)


def deep(value: Any) -> Any:
    """A value with the exact type of every container and scalar spelled out."""
    if isinstance(value, (FrozenDict, dict)):
        return (type(value).__name__, [(k, deep(v)) for k, v in value.items()])
    if isinstance(value, (FrozenList, list, tuple)):
        return (type(value).__name__, [deep(v) for v in value])
    return (type(value).__name__, repr(value))


def snapshot(m: Any) -> Any:
    common = (type(m).__name__, m.digest, json.dumps(m.to_dict(), sort_keys=True))
    if isinstance(m, AssistantMessage):
        calls = [(c.id, c.name, deep(c.arguments), c._arguments_jcs) for c in m.tool_calls]
        return (
            *common,
            m.content_opt,
            calls,
            deep(m.parts),
            m.thinking,
            m.thinking_binding,
            None if m.thinking_binding is None else deep(m.thinking_binding._args()),
        )
    fields = (deep(m.content), deep(m._fp_content), m._breakpoints)
    if isinstance(m, ToolMessage):
        return (*common, *fields, m.tool_call_id, m.is_error)
    return (*common, *fields)


def outcome(text: str | bytes) -> Any:
    try:
        conv = Conversation.from_json(text)
    except ValidationError as err:
        return ("error", str(err), err.path)
    return ("ok", [snapshot(m) for m in conv], conv.tools, deep(conv.response_format))


def both(text: str | bytes) -> Any:
    native = outcome(text)
    with python_path():
        slow = outcome(text)
    assert native == slow
    return native


# -- generated conversations ---------------------------------------------------------------------

words = st.text(alphabet="ab \u00e9\u4e2d\U0001f600\u3000\n", max_size=5)
solid = st.text(alphabet="ab\u00e9\u4e2d\U0001f600", min_size=1, max_size=5)
numbers = st.sampled_from([0, 1, -1, 2**53 + 1, 2**63 - 1, -(2**63), 0.5, -0.0, 1e21, 1e-7, 2.0])
json_values = st.recursive(
    st.none() | st.booleans() | numbers | words,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3),
    max_leaves=8,
)
calls = st.builds(ToolCall, solid, solid, st.dictionaries(words, json_values, max_size=3))
blocks = st.one_of(
    st.builds(ThinkingBlock.Text, solid, st.none() | solid),
    st.builds(ThinkingBlock.Text, st.just(""), solid),
    st.builds(ThinkingBlock.Redacted, solid),
    st.builds(ThinkingBlock.Opaque, solid, solid),
)
assistants = st.lists(st.one_of(words, calls, blocks), max_size=4).map(AssistantMessage.from_parts)
plain = st.one_of(
    st.builds(SystemMessage, solid),
    st.builds(UserMessage, solid),
    st.builds(ToolMessage, solid, solid, st.booleans()),
    assistants,
)
other = st.one_of(
    st.builds(UserMessage, st.tuples(solid, st.just(CacheBreakpoint()))),
    st.builds(UserMessage, st.tuples(solid, st.just(Image(b"\x89PNG", "image/png")))),
)


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    conv = Conversation()
    for m in draw(st.lists(st.one_of(plain, plain, other), max_size=8)):
        if isinstance(m, AssistantMessage) and m.has_sealed_thinking and draw(st.booleans()):
            conv = respond(conv, ORIGIN, m)
        else:
            conv = conv.append(m)
    return conv


def surely_not_blank(s: str) -> bool:
    """The reader's test of a non-blank field: an ASCII character that is not whitespace
    (a field of other characters only is left to the Python path)."""
    return any(c.isascii() and not c.isspace() for c in s)


def natively_built(m: Any) -> bool:
    """Whether the native reader builds ``m`` itself (rust/python/src/load.rs)."""
    if isinstance(m, AssistantMessage):
        fields: list[str] = []
        for p in m.parts:
            if isinstance(p, Native):
                return False
            if isinstance(p, ToolCall):
                fields += [p.id, p.name]
            elif isinstance(p, ThinkingBlock.Redacted):
                fields.append(p.data)
            elif isinstance(p, ThinkingBlock.Opaque):
                fields += [p.provider, p.data]
        return all(map(surely_not_blank, fields))
    tool_id = m.tool_call_id if isinstance(m, ToolMessage) else "x"
    return isinstance(m.content, str) and surely_not_blank(m.content) and surely_not_blank(tool_id)


@settings(max_examples=300)
@given(conversations(), st.booleans())
def test_a_stored_conversation_reads_the_same_both_ways(conv: Conversation, as_bytes: bool) -> None:
    text = conv.to_json()
    result = both(text.encode() if as_bytes else text)
    assert result[0] == "ok"
    back = Conversation.from_json(text)
    # Before anything reads a digest: the reader set them, equal to the core's of the object.
    for m in (m for m in back if natively_built(m)):
        assert m._digest is not None
        assert m._digest == _core.message_digest(m)
    assert list(back) == list(conv)
    assert [m.thinking_binding for m in back if isinstance(m, AssistantMessage)] == [
        m.thinking_binding for m in conv if isinstance(m, AssistantMessage)
    ]


# -- edited documents ------------------------------------------------------------------------------

EDGE_VALUES: list[Any] = [
    "",
    " ",
    "\u3000",
    "\x1c",
    "\u00a0x",
    "a",
    "assistant",
    "tool_call",
    "thinking",
    "native",
    "x" * 40,
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**70,
    [],
    {},
    ["a"],
    {"a": 1},
    "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "1" * 64,
    "thinkseal-binding/1;p%41;m;=a;" + "0" * 64 + ";" + "1" * 64,
    "thinkseal-binding/1; ;m;;" + "0" * 64 + ";" + "1" * 64,
    "thinkseal-binding/1;p;m;a;" + "0" * 64 + ";" + "1" * 64,
    "thinkseal-binding/1;p;m;=;" + "A" * 64 + ";" + "1" * 64,
    # A byte just outside each run of hex digits, at either end of a digest,
    # and a two-byte character that makes 64 bytes of 63 characters.
    "thinkseal-binding/1;p;m;;" + "0" * 63 + "g" + ";" + "1" * 64,
    "thinkseal-binding/1;p;m;;" + "/" + "0" * 63 + ";" + "1" * 64,
    "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "1" * 63 + ":",
    "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "`" + "1" * 63,
    "thinkseal-binding/1;p;m;;" + "0" * 62 + "é" + ";" + "1" * 64,
    # A field too many, and one too few.
    "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "1" * 64 + ";",
    "thinkseal-binding/1;p;m;" + "0" * 64 + ";" + "1" * 64,
]


BINDING_TEXTS = [v for v in EDGE_VALUES if isinstance(v, str) and v.startswith("thinkseal-binding/")]


@pytest.mark.parametrize("binding", BINDING_TEXTS)
def test_every_binding_text_reads_the_same_both_ways(binding: str) -> None:
    # The reader decodes a binding's two digests itself (hex32 in
    # rust/python/src/load.rs); anything it is not sure of goes to Binding.parse.
    conv = respond(
        Conversation([UserMessage("q")]),
        Origin("p", "m"),
        AssistantMessage("a", [], [ThinkingBlock.Text("t", "sig")]),
    )
    document = json.loads(conv.to_json())
    document["messages"][1]["binding"] = binding
    both(json.dumps(document))


def test_bindings_of_one_origin_share_its_object_and_others_do_not() -> None:
    # The reader makes one Origin per distinct (provider, model, account),
    # looked up by a key of the three; an account, or its absence, tells them apart.
    origins = [Origin("p", "m"), Origin("p", "m", "a"), Origin("p", "m"), Origin("p", "ma"), Origin("p", "m", "a")]
    conv = Conversation()
    for i, origin in enumerate(origins):
        conv = respond(
            conv.append(UserMessage(f"q{i}")), origin, AssistantMessage("a", [], [ThinkingBlock.Text("t", "s")])
        )
    text = conv.to_json()
    loaded = [m.thinking_binding.origin for m in Conversation.from_json(text) if isinstance(m, AssistantMessage)]
    assert loaded == origins
    assert loaded[0] is loaded[2]
    assert loaded[1] is loaded[4]
    assert len({id(o) for o in loaded}) == 3
    both(text)


def paths(value: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield here
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, (*here, i))


def edited(document: Any, path: tuple[Any, ...], value: Any, drop: bool) -> Any:
    document = json.loads(json.dumps(document))
    *parent_path, last = path
    parent = document
    for step in parent_path:
        parent = parent[step]
    if drop and isinstance(parent, dict):
        del parent[last]
    else:
        parent[last] = value
    return document


def test_a_long_document_s_digests_hashed_beside_the_building_are_each_message_s_own() -> None:
    # Past one batch of encodings (128 KB) the reader hands batches to a second
    # thread while it builds the next messages (rust/python/src/pipeline.rs):
    # every digest must still land on its own message, in order, with
    # messages the reader leaves to the Python path in between.
    messages: list[Message] = [SystemMessage("s")]
    for i in range(600):
        messages.append(UserMessage(f"question {i} " + "x" * (i % 700)))
        if i % 50 == 7:
            messages.append(UserMessage(("with parts ", f"{i}")))  # left to the Python path
        messages.append(AssistantMessage(f"answer {i} " + "y" * (i % 300)))
    text = Conversation(messages).to_json()
    back = Conversation.from_json(text)
    native = [m for m in back if natively_built(m)]
    assert len(native) > 1_000
    assert [m._digest for m in native] == [_core.message_digest(m) for m in native]
    with python_path():
        assert [m.digest for m in Conversation.from_json(text)] == [m.digest for m in back]


@settings(max_examples=300)
@given(conversations(), st.randoms(use_true_random=False), st.booleans())
def test_an_edited_document_reads_the_same_both_ways(conv: Conversation, rnd: random.Random, only_ascii: bool) -> None:
    document = json.loads(conv.to_json())
    targets = [p for p in paths(document) if p]
    for _ in range(6):
        path = rnd.choice(targets)
        changed = edited(document, path, rnd.choice(EDGE_VALUES), drop=rnd.random() < 0.15)
        both(json.dumps(changed, ensure_ascii=only_ascii))


@settings(max_examples=200)
@given(conversations(), st.randoms(use_true_random=False))
def test_a_corrupted_text_reads_the_same_both_ways(conv: Conversation, rnd: random.Random) -> None:
    data = bytearray(conv.to_json(), "utf-8")
    for _ in range(3):
        i = rnd.randrange(len(data))
        data[i] = rnd.choice(b'"\\{}[],:0a \x00\x1f\xc3\xa9\xff')
    both(bytes(data))


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "thinkseal.conversation", "version": 2, "messages": [], "messages": []}',
        '{"format": "thinkseal.conversation", "version": 2, "messages": [{"role": "user", "content": "\\ud800"}]}',
        '{"format": "thinkseal.conversation", "version": 2, "messages": [{"role": "user", "content": NaN}]}',
        '{"format": "thinkseal.conversation", "version": 2, "messages": [{"role": "user", "content": "a", "x": 1e999}]}',  # noqa: E501
        '{"format": "thinkseal.conversation", "version": 2, "messages": [{"role": "user", "content": "a"}]} x',
        '{"format": "thinkseal.conversation", "version": 2.0, "messages": []}',
        '{"format": "thinkseal.conversation", "version": 2, "messages": {}}',
        '{"format": "thinkseal.conversation", "version": 2, "messages": [{"role": "user", "content": "a"}]}',
        "\ufeff{}",
        "[]",
        "",
    ],
)
def test_texts_at_the_edges_read_the_same_both_ways(text: str) -> None:
    both(text)
    both(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("text", ["", "a", "é", "ascii " * 50, "ascii " * 50 + "é", "東京", "\x7f", "\x80"])
def test_the_reader_s_strings_are_the_ones_python_makes(text: str) -> None:
    """ASCII text is copied into a new compact ASCII str, the rest decoded:
    each is a plain str, equal, with the same hash and ASCII flag
    (``str.isascii`` reads the flag), as a key and as a value."""
    body = json.dumps({"k": [text, {text: text}]}).encode()
    native = _core.frozen_json(body, FrozenDict, FrozenList)
    assert native is not None
    value, keyed = native["k"]
    ((key, inner),) = keyed.items()
    for s in (value, key, inner):
        assert type(s) is str
        assert s == text
        assert hash(s) == hash(text)
        assert s.isascii() == all(ord(c) < 128 for c in text)
    assert keyed[text] == text
    (loaded,) = Conversation.from_json(Conversation([UserMessage(text + "x")]).to_json())
    assert loaded.content == text + "x"
    assert loaded.content.isascii() == (text + "x").isascii()


def test_limits_are_checked_the_same_both_ways() -> None:
    conv = Conversation(
        [
            UserMessage("hello there"),
            AssistantMessage(
                "ok", [ToolCall("c1", "f", {"a": {"b": [1, {"c": "long string"}]}})], [ThinkingBlock.Text("t", "sig")]
            ),
            ToolMessage("result", "c1"),
        ]
    )
    text = conv.to_json()
    before = thinkseal.limits()
    try:
        for limits in (Limits(max_string=5), Limits(max_parts=2), Limits(max_depth=2), Limits(max_depth=3)):
            thinkseal.set_limits(limits)
            both(text)
        thinkseal.set_limits(Limits(max_depth=3))
        assert both(text)[0] == "error"
    finally:
        thinkseal.set_limits(before)


# -- the plain cases take the native path (counted) ----------------------------------------------


def test_plain_messages_are_built_natively_and_the_rest_by_message_from_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    original = _load.message_from_dict
    monkeypatch.setattr(_load, "message_from_dict", lambda m, path: built.append(path) or original(m, path=path))
    conv = Conversation(
        [
            SystemMessage("be brief"),
            UserMessage("hi \u00e9"),
            AssistantMessage("ok", [ToolCall("c1", "f", {"x": [1, 2.5, None]})], [ThinkingBlock.Text("t", "s")]),
            ToolMessage("done", "c1", is_error=True),
            AssistantMessage(None, thinking=[ThinkingBlock.Redacted("r")], tool_calls=[ToolCall("c2", "g", {})]),
            ToolMessage("done", "c2"),
            UserMessage(("look", Image(b"png", "image/png"))),
        ]
    )
    conv = respond(conv, ORIGIN, AssistantMessage("bound", thinking=[ThinkingBlock.Opaque("p", "d")]))
    back = Conversation.from_json(conv.to_json())
    assert built == ["$.messages[6]"]  # only the image message went the Python way
    assert list(back) == list(conv)
    assert back.replay(ORIGIN).report == conv.replay(ORIGIN).report


# -- request bodies read back (PreparedRequest.body) --------------------------------------------------


@settings(max_examples=300)
@given(st.lists(st.one_of(json_values, st.just(2**70), st.just(float("inf"))), max_size=4), st.booleans())
def test_a_body_reads_back_as_json_and_frozen_read_it(values: list[Any], only_ascii: bool) -> None:
    text = json.dumps({"messages": values, "x": [values]}, ensure_ascii=only_ascii).encode()
    expected = frozen(json.loads(text))
    assert deep(frozen_loads(text)) == deep(expected)
    native = _core.frozen_json(text, FrozenDict, FrozenList)
    if native is None:  # refused: only what it must leave to json (Infinity, an int past 64 bits)
        assert b"Infinity" in text or str(2**70).encode() in text
    else:
        assert deep(native) == deep(expected)


def test_only_containers_are_read_natively() -> None:
    assert _core.frozen_json(b"1", FrozenDict, FrozenList) is None
    assert _core.frozen_json(b"null", FrozenDict, FrozenList) is None
    assert frozen_loads(b"[null]") == [None]
    assert type(frozen_loads(b'{"a": [{}]}')["a"][0]) is FrozenDict


# -- stored rows (thinkseal.store): one native read of many bodies -------------------------------------


@settings(max_examples=100)
@given(conversations())
def test_stored_bodies_read_the_same_as_str_and_as_utf8_bytes(conv: Conversation) -> None:
    bodies = [json.dumps(m.to_dict(), ensure_ascii=False, separators=(",", ":")) for m in conv]
    as_str = _load.native_messages(bodies)
    as_bytes = _load.native_messages([b.encode() for b in bodies])
    if as_str is None:  # refused (e.g. a string of Unicode whitespace only): refused both ways
        assert as_bytes is None
        return
    assert as_bytes is not None
    read = [_load.message_of(v, f"$.messages[{i}]") for i, v in enumerate(as_str)]
    assert read == [_load.message_of(v, f"$.messages[{i}]") for i, v in enumerate(as_bytes)] == list(conv)


def test_stored_bodies_the_native_reader_leaves_to_the_caller() -> None:
    body = '{"role":"user","content":"hi"}'
    assert _load.native_messages([]) == []
    assert _load.native_messages([body, body.encode()]) is None  # str and bytes mixed
    assert _load.native_messages([body.encode(), b'{"role":"user","content":"\xff"}']) is None  # not UTF-8
    assert _load.native_messages([body + "," + body]) is None  # two values in one body
    values = _load.native_messages([body.encode()])
    assert values is not None
    assert values[0] == UserMessage("hi")

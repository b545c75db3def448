"""Bad input: every constructor refuses what is not valid with a ValidationError
naming the field, JSON values are checked all the way down, and no Rust panic
(or stray low-level error) ever reaches Python from the native core."""

from __future__ import annotations

import abc
import collections
import datetime
import decimal
import types
from collections.abc import Callable
from typing import Any

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Binding,
    Conversation,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ThinksealError,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
    _core,
    _load,
)
from thinkseal._json import FrozenDict, FrozenList
from thinkseal._walk import _RUN_KIT
from thinkseal.providers.anthropic import _TURN_KIT
from thinkseal.testing import respond

Text = ThinkingBlock.Text
NAN, INF = float("nan"), float("inf")
CALL = ToolCall("c1", "f", {})


def refused(make: Callable[[], Any], path: str) -> ValidationError:
    """``make()`` raises ValidationError whose ``.path`` starts with ``path`` and
    whose message names it."""
    with pytest.raises(ValidationError) as info:
        make()
    err = info.value
    assert isinstance(err, ValueError)
    assert isinstance(err, ThinksealError)
    assert err.path is not None
    assert err.path.startswith(path), (err.path, path)
    assert path in str(err)
    return err


# -- JSON values: where a JSON value goes, only JSON goes --------------------------------------------

JSON_SITES: list[tuple[str, Callable[[Any], Any], str]] = [
    ("arguments", lambda v: ToolCall("c", "f", {"v": v}), "ToolCall.arguments.v"),
    ("parameters", lambda v: Tool("t", "", {"type": "object", "v": v}), "Tool.parameters.v"),
    (
        "response_format",
        lambda v: Conversation((), (), {"type": "json_object", "v": v}),
        "Conversation.response_format.v",
    ),
]
site_ids = [s[0] for s in JSON_SITES]


class Weird:
    pass


NOT_JSON = [
    pytest.param(NAN, id="nan"),
    pytest.param(INF, id="inf"),
    pytest.param(-INF, id="-inf"),
    pytest.param([1, NAN], id="nan-in-list"),
    pytest.param({"k": INF}, id="inf-in-object"),
    pytest.param({1, 2}, id="set"),
    pytest.param(frozenset(), id="frozenset"),
    pytest.param(b"bytes", id="bytes"),
    pytest.param(bytearray(b"x"), id="bytearray"),
    pytest.param(object(), id="object"),
    pytest.param(Weird(), id="instance"),
    pytest.param(1j, id="complex"),
    pytest.param(decimal.Decimal("1.5"), id="decimal"),
    pytest.param(datetime.date(2024, 1, 1), id="date"),
    pytest.param(range(3), id="range"),
    pytest.param((x for x in [1]), id="generator"),
    pytest.param(types.MappingProxyType({"a": 1}), id="mappingproxy"),
    pytest.param(print, id="function"),
    pytest.param(Ellipsis, id="ellipsis"),
    pytest.param(10**5000, id="huge-int"),
    pytest.param(-(10**5000), id="huge-negative-int"),
    pytest.param("\ud800", id="lone-high-surrogate"),
    pytest.param("ok\udfffok", id="lone-low-surrogate"),
    pytest.param(["fine", "\udc00"], id="surrogate-in-list"),
    pytest.param({"\ud83d": 1}, id="surrogate-key"),
    pytest.param({1: "a"}, id="int-key"),
    pytest.param({None: "a"}, id="none-key"),
    pytest.param({True: "a"}, id="bool-key"),
    pytest.param({1.5: "a"}, id="float-key"),
    pytest.param({(1, 2): "a"}, id="tuple-key"),
    pytest.param({b"k": "a"}, id="bytes-key"),
    pytest.param({"ok": 1, 2: "mixed"}, id="mixed-keys"),
]


@pytest.mark.parametrize("bad", NOT_JSON)
@pytest.mark.parametrize(("site", "make", "path"), JSON_SITES, ids=site_ids)
def test_non_json_values_are_refused_naming_the_path(site, make, path, bad):
    refused(lambda: make(bad), path)


def nested(depth: int, leaf: Any = 1, kind: str = "list") -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if kind == "list" or (kind == "mixed" and i % 2) else {"k": value}
    return value


@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
@pytest.mark.parametrize(("site", "make", "path"), JSON_SITES, ids=site_ids)
def test_300_levels_deep_is_refused(site, make, path, kind):
    refused(lambda: make(nested(300, kind=kind)), path)


@pytest.mark.parametrize(("site", "make", "path"), JSON_SITES, ids=site_ids)
def test_moderate_nesting_is_accepted(site, make, path):
    make(nested(100, kind="mixed"))


def test_very_deep_nesting_does_not_overflow_the_stack():
    refused(lambda: ToolCall("c", "f", {"v": nested(100_000)}), "ToolCall.arguments")


@pytest.mark.parametrize(("site", "make", "path"), JSON_SITES, ids=site_ids)
def test_cyclic_values_are_refused(site, make, path):
    loop: list[Any] = []
    loop.append(loop)
    refused(lambda: make(loop), path)
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    refused(lambda: make(cyclic), path)


def test_nested_path_is_exact():
    err = refused(lambda: ToolCall("c", "f", {"a": [{"b": 1}, {"c d": [0, NAN]}]}), "ToolCall.arguments")
    assert err.path == 'ToolCall.arguments.a[1]["c d"][1]'


def test_large_but_printable_ints_are_accepted():
    call = ToolCall("c", "f", {"v": 10**4000, "w": -(2**200)})
    assert call.arguments["v"] == 10**4000


def test_dict_subclasses_are_json_objects():
    call = ToolCall("c", "f", {"v": collections.OrderedDict(b=1, a=2), "w": collections.defaultdict(int, x=1)})
    assert call.arguments_json == '{"v":{"a":2,"b":1},"w":{"x":1}}'


def test_top_level_must_be_an_object():
    for bad in (None, [], "x", 1, (("a", 1),), types.MappingProxyType({})):
        refused(lambda bad=bad: ToolCall("c", "f", bad), "ToolCall.arguments")
        refused(lambda bad=bad: Tool("t", "", bad), "Tool.parameters")
        if bad is not None:  # None means "no response format"
            refused(lambda bad=bad: Conversation((), (), bad), "Conversation.response_format")


def test_refused_json_leaves_nothing_half_built():
    args = {"ok": 1, "bad": NAN}
    with pytest.raises(ValidationError):
        ToolCall("c", "f", args)
    assert args == {"ok": 1, "bad": args["bad"]}  # the input is not modified


class LyingDict(dict):
    """A dict whose Python-level view differs from its real contents."""

    def items(self):  # type: ignore[override]
        return [("forged", 1)]

    def keys(self):  # type: ignore[override]
        return ["forged"]

    def __iter__(self):
        return iter(["forged"])


class LyingFloat(float):
    def __float__(self) -> float:
        return 2.0


class LyingInt(int):
    def __int__(self) -> int:
        return 7

    def __index__(self) -> int:
        return 7


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(LyingDict(real=1), id="dict-subclass"),
        pytest.param({"x": LyingFloat(1.5)}, id="float-subclass"),
        pytest.param({"x": LyingInt(3)}, id="int-subclass"),
    ],
)
def test_stored_arguments_are_what_was_hashed(value):
    # The read-only copy kept on the call must be the value the digest was taken of.
    call = ToolCall("c", "f", value)
    assert call.arguments_json == _core.canonical_json(dict(call.arguments), "x").decode()


# -- strings: valid Unicode, not blank where a name is needed ----------------------------------------

SURROGATE = "a\ud800b"


@pytest.mark.parametrize(
    ("make", "path"),
    [
        (lambda: SystemMessage(SURROGATE), "SystemMessage.content"),
        (lambda: UserMessage(SURROGATE), "UserMessage.content"),
        (lambda: AssistantMessage(SURROGATE), "AssistantMessage.content"),
        (lambda: AssistantMessage.from_parts([SURROGATE]), "AssistantMessage.parts[0]"),
        (lambda: ToolMessage(SURROGATE, "c"), "ToolMessage.content"),
        (lambda: ToolMessage("r", SURROGATE), "ToolMessage.tool_call_id"),
        (lambda: ToolCall(SURROGATE, "f", {}), "ToolCall.id"),
        (lambda: ToolCall("c", SURROGATE, {}), "ToolCall.name"),
        (lambda: ToolCall("c", "f", {SURROGATE: 1}), "ToolCall.arguments"),
        (lambda: ToolCall("c", "f", {"k": SURROGATE}), "ToolCall.arguments.k"),
        (lambda: Tool(SURROGATE), "Tool.name"),
        (lambda: Tool("t", SURROGATE), "Tool.description"),
        (lambda: Tool("t", "", {"properties": {SURROGATE: {}}}), "Tool.parameters.properties"),
        (lambda: Text(SURROGATE), "ThinkingBlock.Text.text"),
        (lambda: Text("t", SURROGATE), "ThinkingBlock.Text.signature"),
        (lambda: ThinkingBlock.Redacted(SURROGATE), "ThinkingBlock.Redacted.data"),
        (lambda: ThinkingBlock.Opaque(SURROGATE, "d"), "ThinkingBlock.Opaque.provider"),
        (lambda: ThinkingBlock.Opaque("p", SURROGATE), "ThinkingBlock.Opaque.data"),
        (lambda: Origin(SURROGATE, "m"), "Origin.provider"),
        (lambda: Origin("p", SURROGATE), "Origin.model"),
        (lambda: Origin("p", "m", SURROGATE), "Origin.account"),
        (lambda: Conversation((), (), {"type": SURROGATE}), "Conversation.response_format.type"),
        (lambda: AssistantMessage("a").with_content(SURROGATE), "AssistantMessage.content"),
        (lambda: AssistantMessage("a").with_thinking(SURROGATE), "ThinkingBlock.Text.text"),
    ],
)
def test_lone_surrogates_are_refused_everywhere(make, path):
    refused(make, path)


def test_surrogate_pairs_written_as_one_character_are_fine():
    assert UserMessage("\U0001f600").content == "\U0001f600"
    assert ToolCall("c", "f", {"\U0001f600": "\U0001f600"}).arguments == {"\U0001f600": "\U0001f600"}


# -- wrong types for every constructor field -----------------------------------------------------------

JUNK = [None, 1, 1.5, True, b"x", ["x"], {"x": 1}, object()]
NON_STR_JUNK = [j for j in JUNK if j is not None]
# Message content may be a sequence of parts: a list of a non-part is junk, a list of text is not.
CONTENT_JUNK = [[1] if j == ["x"] else j for j in JUNK] + [[], [" "], ["x", b"y"]]


def constructor_cases() -> list[Any]:
    cases: list[Any] = []

    def add(name: str, make: Callable[[Any], Any], path: str, junk: list[Any]) -> None:
        for j in junk:
            cases.append(pytest.param(make, path, j, id=f"{name}-{type(j).__name__}"))

    add("Text.text", lambda j: Text(j, "s"), "ThinkingBlock.Text.text", JUNK)
    add("Text.signature", lambda j: Text("t", j), "ThinkingBlock.Text.signature", NON_STR_JUNK)
    add("Redacted.data", ThinkingBlock.Redacted, "ThinkingBlock.Redacted.data", JUNK)
    add("Opaque.provider", lambda j: ThinkingBlock.Opaque(j, "d"), "ThinkingBlock.Opaque.provider", JUNK)
    add("Opaque.data", lambda j: ThinkingBlock.Opaque("p", j), "ThinkingBlock.Opaque.data", JUNK)
    add("SystemMessage.content", SystemMessage, "SystemMessage.content", CONTENT_JUNK)
    add("UserMessage.content", UserMessage, "UserMessage.content", CONTENT_JUNK)
    add("ToolMessage.content", lambda j: ToolMessage(j, "c"), "ToolMessage.content", CONTENT_JUNK)
    add("ToolMessage.tool_call_id", lambda j: ToolMessage("r", j), "ToolMessage.tool_call_id", JUNK)
    add(
        "ToolMessage.is_error",
        lambda j: ToolMessage("r", "c", j),
        "ToolMessage.is_error",
        [None, 1, 0, "yes", b"", [], 1.0],
    )
    add("ToolCall.id", lambda j: ToolCall(j, "f", {}), "ToolCall.id", JUNK)
    add("ToolCall.name", lambda j: ToolCall("c", j, {}), "ToolCall.name", JUNK)
    add("ToolCall.arguments", lambda j: ToolCall("c", "f", j), "ToolCall.arguments", [j for j in JUNK if j != {"x": 1}])
    add("AssistantMessage.content", AssistantMessage, "AssistantMessage.content", NON_STR_JUNK)
    add(
        "AssistantMessage.tool_calls",
        lambda j: AssistantMessage("a", j),
        "AssistantMessage.tool_calls",
        [None, 1, "calls", b"x", {"x": 1}, object()],
    )
    add(
        "AssistantMessage.tool_calls[0]",
        lambda j: AssistantMessage("a", [j]),
        "AssistantMessage.tool_calls[0]",
        [*JUNK, Text("t"), UserMessage("u")],
    )
    add(
        "AssistantMessage.thinking",
        lambda j: AssistantMessage("a", (), j),
        "AssistantMessage.thinking",
        [None, 1, "thinking", b"x", {"x": 1}, object()],
    )
    add(
        "AssistantMessage.thinking[0]",
        lambda j: AssistantMessage("a", (), [j]),
        "AssistantMessage.thinking[0]",
        [*JUNK, "text", CALL],
    )
    add("AssistantMessage.parts", AssistantMessage.from_parts, "AssistantMessage.parts", [None, 1, "x", b"x", object()])
    add(
        "AssistantMessage.parts[0]",
        lambda j: AssistantMessage.from_parts([j]),
        "AssistantMessage.parts[0]",
        [j for j in JUNK if j is not None] + [None, UserMessage("u")],
    )
    add("Tool.name", Tool, "Tool.name", JUNK)
    add("Tool.description", lambda j: Tool("t", j), "Tool.description", JUNK)
    add("Tool.parameters", lambda j: Tool("t", "", j), "Tool.parameters", [j for j in JUNK if j != {"x": 1}])
    add("Conversation.messages", Conversation, "Conversation.messages", [None, 1, "x", b"x", {"x": 1}, object()])
    add("Conversation.messages[0]", lambda j: Conversation([j]), "Conversation.messages[0]", [*JUNK, Text("t"), CALL])
    add(
        "Conversation.tools",
        lambda j: Conversation((), j),
        "Conversation.tools",
        [None, 1, "x", b"x", {"x": 1}, object()],
    )
    add("Conversation.tools[0]", lambda j: Conversation((), [j]), "Conversation.tools[0]", [*JUNK, CALL])
    add(
        "Conversation.response_format",
        lambda j: Conversation((), (), j),
        "Conversation.response_format",
        [1, 1.5, True, b"x", ["x"], object(), "json_object"],
    )
    add("Origin.provider", lambda j: Origin(j, "m"), "Origin.provider", JUNK)
    add("Origin.model", lambda j: Origin("p", j), "Origin.model", JUNK)
    add("Origin.account", lambda j: Origin("p", "m", j), "Origin.account", NON_STR_JUNK)
    zero = bytes(32)
    add("Binding.origin", lambda j: Binding(j, 1, zero, zero), "Binding.origin", [*JUNK, "p"])
    add(
        "Binding.version",
        lambda j: Binding(Origin("p", "m"), j, zero, zero),
        "Binding.version",
        [None, 1.5, True, "1", -1],
    )
    add(
        "Binding.prefix",
        lambda j: Binding(Origin("p", "m"), 1, j, zero),
        "Binding.prefix",
        [*JUNK, bytes(31), "0" * 32],
    )
    add(
        "Binding.turn",
        lambda j: Binding(Origin("p", "m"), 1, zero, j),
        "Binding.turn",
        [*JUNK, bytes(33), bytearray(32)],
    )
    return cases


@pytest.mark.parametrize(("make", "path", "junk"), constructor_cases())
def test_wrong_types_are_refused_naming_the_field(make, path, junk):
    refused(lambda: make(junk), path)


@pytest.mark.parametrize(
    ("make", "path"),
    [
        (lambda: AssistantMessage("a").with_content(5), "AssistantMessage.content"),
        (lambda: AssistantMessage("a").with_tool_calls(None), "AssistantMessage.tool_calls"),
        (lambda: AssistantMessage("a").with_tool_calls(["x"]), "AssistantMessage.tool_calls[0]"),
        (lambda: AssistantMessage("a").with_thinking(None), "AssistantMessage.thinking"),
        (lambda: AssistantMessage("a").with_thinking([5]), "AssistantMessage.thinking[0]"),
        (lambda: Conversation().append(5), "Conversation.messages[0]"),
        (lambda: Conversation().with_messages([None]), "Conversation.messages[0]"),
        (lambda: Conversation().with_tools([None]), "Conversation.tools[0]"),
        (lambda: Conversation().with_response_format(5), "Conversation.response_format"),
        (lambda: Conversation().with_response_format({"type": NAN}), "Conversation.response_format.type"),
        (lambda: Conversation().replay("anthropic"), "origin"),
        (lambda: Conversation().replay_report(None), "origin"),
        (lambda: Conversation().rebind(5), "origin"),
    ],
)
def test_updaters_validate(make, path):
    refused(make, path)


# -- the native core never panics ------------------------------------------------------------------------


class Boom(Exception):
    pass


ALLOWED = (ThinksealError, TypeError, ValueError, AttributeError, OverflowError, Boom)


def survive(fn: Callable[..., Any], *args: Any) -> BaseException | None:
    """Call ``fn``; any exception must be an ordinary, expected one, never a panic."""
    caught: BaseException | None = None
    try:
        fn(*args)
    except BaseException as err:  # the point is to see everything, panics included
        caught = err
    if caught is not None:
        assert type(caught).__name__ != "PanicException", repr(caught)
        assert isinstance(caught, Exception), repr(caught)
        assert isinstance(caught, ALLOWED), repr(caught)
        assert "internal error" not in str(caught), repr(caught)
    return caught


class BadBool:
    def __bool__(self) -> bool:
        raise Boom("bool")


class RaisingAttrs:
    def __getattr__(self, name: str) -> Any:
        raise Boom(name)


class RaisingRole:
    @property
    def role(self) -> str:
        raise Boom("role")


def fake(**attrs: Any) -> Any:
    return type("Fake", (), attrs)()


def raising_parts():
    yield "ok"
    raise Boom("parts")


class StrSub(str):
    pass


class ExplodingIter(list):
    def __iter__(self):
        raise Boom("iter")


class ExplodingTuple(tuple):
    def __iter__(self):
        raise Boom("iter")

    def __len__(self) -> int:
        raise Boom("len")


HOSTILE_MESSAGES = [
    pytest.param(None, id="none"),
    pytest.param(5, id="int"),
    pytest.param("user", id="str"),
    pytest.param(b"user", id="bytes"),
    pytest.param([], id="list"),
    pytest.param(object(), id="object"),
    pytest.param(RaisingAttrs(), id="raising-attrs"),
    pytest.param(RaisingRole(), id="raising-role"),
    pytest.param(fake(role=5), id="role-int"),
    pytest.param(fake(role=None), id="role-none"),
    pytest.param(fake(role=b"user", _fp_content="x"), id="role-bytes"),
    pytest.param(fake(role=["user"], _fp_content="x"), id="role-list"),
    pytest.param(fake(role="\ud800"), id="role-surrogate"),
    pytest.param(fake(role="developer", _fp_content="x"), id="role-unknown"),
    pytest.param(fake(role=StrSub("user"), _fp_content=StrSub("x")), id="role-str-subclass"),
    pytest.param(fake(role="user"), id="user-no-content"),
    pytest.param(fake(role="user", _fp_content=5), id="user-content-int"),
    pytest.param(
        fake(role="user", _fp_content=(fake(_fp_kind="image", data=5, media_type=None, url=None),)), id="image-data-int"
    ),
    pytest.param(fake(role="user", _fp_content=(fake(_fp_kind="hologram"),)), id="content-kind-unknown"),
    pytest.param(fake(role="user", _fp_content=[1]), id="content-list"),
    pytest.param(fake(role="user", _fp_content="\udc00"), id="user-content-surrogate"),
    pytest.param(fake(role="system", _fp_content=None), id="system-content-none"),
    pytest.param(fake(role="tool", _fp_content="c", tool_call_id="i", is_error=BadBool()), id="tool-bad-bool"),
    pytest.param(fake(role="tool", _fp_content="c", tool_call_id=3, is_error=False), id="tool-id-int"),
    pytest.param(fake(role="tool", _fp_content="c"), id="tool-missing-fields"),
    pytest.param(fake(role="assistant"), id="assistant-no-parts"),
    pytest.param(fake(role="assistant", parts=5), id="assistant-parts-int"),
    pytest.param(fake(role="assistant", parts=None), id="assistant-parts-none"),
    pytest.param(fake(role="assistant", parts=(object(),)), id="assistant-part-object"),
    pytest.param(fake(role="assistant", parts=(None,)), id="assistant-part-none"),
    pytest.param(fake(role="assistant", parts=(5,)), id="assistant-part-int"),
    pytest.param(fake(role="assistant", parts=(b"x",)), id="assistant-part-bytes"),
    pytest.param(fake(role="assistant", parts=("\ud800",)), id="assistant-part-surrogate"),
    pytest.param(fake(role="assistant", parts=raising_parts()), id="assistant-parts-raise"),
    pytest.param(fake(role="assistant", parts=ExplodingIter()), id="assistant-parts-iter-raises"),
    pytest.param(fake(role="assistant", parts=ExplodingTuple(("a", "b"))), id="assistant-parts-tuple-subclass"),
    pytest.param(fake(role="assistant", parts=["a", object()]), id="assistant-parts-list"),
    pytest.param(fake(role="assistant", parts=("a",) * 10_000 + (object(),)), id="assistant-parts-junk-last"),
    pytest.param(fake(role="assistant", parts=(RaisingAttrs(),)), id="part-raising-attrs"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind=5),)), id="part-kind-int"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind=b"text"),)), id="part-kind-bytes"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="video"),)), id="part-kind-unknown"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="text"),)), id="part-text-missing"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="text", text=1, signature=None),)), id="part-text-int"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="text", text="t", signature=5),)), id="part-sig-int"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="redacted", data=None),)), id="part-redacted-none"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="opaque", provider="p"),)), id="part-opaque-missing"),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="call", id="i", name="n"),)), id="call-no-jcs"),
    pytest.param(
        fake(role="assistant", parts=(fake(_fp_kind="call", id="i", name="n", _arguments_jcs="{}"),)), id="call-jcs-str"
    ),
    pytest.param(
        fake(role="assistant", parts=(fake(_fp_kind="call", id=1, name="n", _arguments_jcs=b"{}"),)), id="call-id-int"
    ),
    pytest.param(
        fake(role="assistant", parts=(fake(_fp_kind="call", id="i", name="n", _arguments_jcs=b"\xff\xfe"),)),
        id="call-jcs-not-utf8",
    ),
    pytest.param(fake(role="assistant", parts=(fake(_fp_kind="call", _arguments_jcs=BadBool()),)), id="call-jcs-junk"),
]


@pytest.mark.parametrize("message", HOSTILE_MESSAGES)
def test_message_functions_survive_hostile_messages(message):
    for fn in (_core.encode_message, _core.message_digest):
        survive(fn, message)
    survive(_core.message_digests, [UserMessage("fine"), message])
    survive(_core.message_digests, [message] * 300, 2)


@pytest.mark.parametrize(
    "message",
    [
        fake(role=5),
        fake(role="developer", _fp_content="x"),
        fake(role="user", _fp_content="\udc00"),
        fake(role="assistant", parts=(object(),)),
        fake(role="assistant", parts=(fake(_fp_kind="video"),)),
        fake(role="assistant", parts=(fake(_fp_kind="text", text="t", signature=5),)),
        fake(role="assistant", parts=(fake(_fp_kind="call", id="i", name="n", _arguments_jcs="{}"),)),
    ],
)
def test_malformed_messages_give_validation_errors(message):
    for fn in (_core.encode_message, _core.message_digest):
        with pytest.raises(ValidationError):
            fn(message)
    with pytest.raises(ValidationError):
        _core.message_digests([message], 1)


def test_user_exceptions_propagate_unchanged():
    assert isinstance(survive(_core.message_digest, RaisingAttrs()), (Boom, ValidationError))
    tool = fake(role="tool", _fp_content="c", tool_call_id="i", is_error=BadBool())
    assert isinstance(survive(_core.message_digest, tool), Boom)


def test_role_str_subclass_is_read_as_its_value():
    digest = _core.message_digest(fake(role=StrSub("user"), _fp_content=StrSub("x")))
    assert digest == UserMessage("x").digest


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((None,), id="none-list"),
        pytest.param(((UserMessage("u"),),), id="tuple"),
        pytest.param(("abc",), id="str"),
        pytest.param(([UserMessage("u")], -1), id="threads-negative"),
        pytest.param(([UserMessage("u")], 2**70), id="threads-huge"),
        pytest.param(([UserMessage("u")], 0), id="threads-zero"),
        pytest.param(([UserMessage("u")] * 500, 10**6), id="threads-many"),
        pytest.param(([UserMessage("u")], "2"), id="threads-str"),
        pytest.param(([UserMessage("u")], None), id="threads-none"),
        pytest.param(([UserMessage("u")], 1.5), id="threads-float"),
        pytest.param(([],), id="empty"),
    ],
)
def test_message_digests_survives_hostile_arguments(args):
    survive(_core.message_digests, *args)


def test_message_digests_threads_do_not_change_results():
    ms = [UserMessage(f"m{i}") for i in range(600)]
    expected = [m.digest for m in ms]
    for threads in (0, 1, 2, 3, 64):
        assert _core.message_digests(ms, threads) == expected


# The encodings of these pass the native pipeline's batch (128 KiB per hashing
# thread) several times, so with threads > 1 batches are hashed on another
# thread while later messages are still being encoded, and with one each batch
# is hashed as it fills (rust/python/src/pipeline.rs).
MIXED = "lörem ipsüm — 東京の天気 🌧 Grüße "


def long_history(n: int) -> list[Any]:
    out: list[Any] = []
    for i in range(n):
        text = f"{i}: " + MIXED * (40 + i % 7)
        if i % 3 == 0:
            out.append(UserMessage(text))
        elif i % 3 == 1:
            out.append(
                AssistantMessage(
                    text[:500], [ToolCall(f"c{i}", "search", {"q": text[:80]})], [ThinkingBlock.Text(text, "sig")]
                )
            )
        else:
            out.append(ToolMessage(text, f"c{i - 1}"))
    return out


def test_message_digests_pipelined_batches_match_one_thread():
    ms = long_history(400)
    assert sum(len(_core.encode_message(m)) for m in ms) > 6 * 128 * 1024  # several batches of 2 hashers
    expected = [_core.message_digest(m) for m in ms]
    for threads in (1, 2, 3, 4):
        assert _core.message_digests(ms, threads) == expected


@pytest.mark.parametrize("at", [0, 200, 399, 400])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_message_digests_error_anywhere_in_the_pipeline(at, threads):
    """A message that cannot be encoded, before, while or after batches are
    being hashed, is a ValidationError naming its field (no hang, no digest list)."""
    ms = long_history(400)
    ms.insert(at, fake(role="user", _fp_content=MIXED * 50 + "\udc00"))
    with pytest.raises(ValidationError, match=r"UserMessage\.content"):
        _core.message_digests(ms, threads)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((b"", b""), id="empty-start"),
        pytest.param((bytes(31), b""), id="short-start"),
        pytest.param((bytes(33), b""), id="long-start"),
        pytest.param((bytes(32), bytes(31)), id="short-digest"),
        pytest.param((bytes(32), bytes(33)), id="ragged-digests"),
        pytest.param(("x" * 32, b""), id="str-start"),
        pytest.param((bytes(32), "x" * 32), id="str-digests"),
        pytest.param((None, None), id="none"),
        pytest.param((bytearray(32), b""), id="bytearray"),
        pytest.param((memoryview(bytes(32)), b""), id="memoryview"),
        pytest.param((bytes(32), [bytes(32)]), id="list-digests"),
        pytest.param((5, 5), id="ints"),
    ],
)
def test_chain_survives_hostile_arguments(args):
    survive(_core.chain, *args)


@pytest.mark.parametrize(
    ("start", "digests"),
    [(b"", b""), (bytes(31), b""), (bytes(33), bytes(32)), (bytes(32), bytes(31)), (bytes(32), bytes(65))],
)
def test_chain_wrong_lengths_are_validation_errors(start, digests):
    with pytest.raises(ValidationError):
        _core.chain(start, digests)


def test_chain_of_nothing_is_nothing():
    assert _core.chain(bytes(32), b"") == b""
    assert len(_core.chain(bytes(32), bytes(96))) == 96


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("abc", [], None), id="systems-str"),
        pytest.param((["\ud800"], [], None), id="system-surrogate"),
        pytest.param(([1], [], None), id="system-int"),
        pytest.param((None, [], None), id="systems-none"),
        pytest.param(([], None, None), id="tools-none"),
        pytest.param(([], [("n", "d")], None), id="tool-short-tuple"),
        pytest.param(([], [("n", "d", b"{}", 1)], None), id="tool-long-tuple"),
        pytest.param(([], [("n", "d", "{}")], None), id="tool-jcs-str"),
        pytest.param(([], [(1, "d", b"{}")], None), id="tool-name-int"),
        pytest.param(([], [("\udfff", "d", b"{}")], None), id="tool-name-surrogate"),
        pytest.param(([], [RaisingAttrs()], None), id="tool-raising"),
        pytest.param(([], [], "json"), id="format-str"),
        pytest.param(([], [], 5), id="format-int"),
        pytest.param(([], [], [1, 2]), id="format-list-of-int"),
        pytest.param(([], [], [300]), id="format-byte-overflow"),
    ],
)
def test_context_digest_survives_hostile_arguments(args):
    survive(_core.context_digest, *args)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((-1, "p", "m", None, bytes(32), bytes(32)), id="version-negative"),
        pytest.param((2**40, "p", "m", None, bytes(32), bytes(32)), id="version-huge"),
        pytest.param(("1", "p", "m", None, bytes(32), bytes(32)), id="version-str"),
        pytest.param((1, None, "m", None, bytes(32), bytes(32)), id="provider-none"),
        pytest.param((1, "\ud800", "m", None, bytes(32), bytes(32)), id="provider-surrogate"),
        pytest.param((1, "p", "m", 5, bytes(32), bytes(32)), id="account-int"),
        pytest.param((1, "p", "m", None, bytes(31), bytes(32)), id="context-short"),
        pytest.param((1, "p", "m", None, bytes(32), bytes(64)), id="chain-long"),
        pytest.param((1, "p", "m", None, None, bytes(32)), id="context-none"),
        pytest.param((1, "p", "m", None, bytes(32), "x" * 32), id="chain-str"),
    ],
)
def test_prefix_digest_survives_hostile_arguments(args):
    survive(_core.prefix_digest, *args)


def test_prefix_digest_wrong_lengths_are_validation_errors():
    with pytest.raises(ValidationError):
        _core.prefix_digest(1, "p", "m", None, bytes(31), bytes(32))
    with pytest.raises(ValidationError):
        _core.prefix_digest(1, "p", "m", None, bytes(32), b"")


class MutatingKey(str):
    """A key whose hash empties the dict it lives in, once armed."""

    target: dict[str, Any] | None = None

    def __hash__(self) -> int:
        if self.target is not None:
            self.target.clear()
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)


class ExplodingKey(str):
    def __hash__(self) -> int:
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        raise Boom("eq")


def mutating_dict() -> dict[str, Any]:
    key = MutatingKey("k")
    d = {key: 1, "other": 2}
    key.target = d
    return d


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(RaisingAttrs(), id="raising-attrs"),
        pytest.param(ExplodingIter([1, 2]), id="list-iter-raises"),
        pytest.param({"k": ExplodingIter([1])}, id="nested-iter-raises"),
        pytest.param(mutating_dict(), id="dict-mutated-while-read"),
        pytest.param({ExplodingKey("a"): 1, "b": 2}, id="key-eq-raises"),
        pytest.param([BadBool()], id="bad-bool"),
        pytest.param(nested(10_000), id="deep"),
        pytest.param({"x": 10**5000}, id="huge-int"),
        pytest.param([float("nan")], id="nan"),
        pytest.param(object(), id="object"),
    ],
)
def test_canonical_json_survives_hostile_values(value):
    survive(_core.canonical_json, value)
    survive(_core.canonical_json, value, "root")
    survive(_core.wire_json, value)
    survive(_core.wire_json, value, "root")


@pytest.mark.parametrize("root", [5, None, b"$", "\ud800"])
def test_canonical_json_survives_hostile_roots(root):
    survive(_core.canonical_json, {"a": float("nan")}, root)
    survive(_core.canonical_json, {"a": 1}, root)
    survive(_core.wire_json, {"a": float("nan")}, root)
    survive(_core.wire_json, {"a": 1}, root)


def test_canonical_json_refuses_mutation_during_read():
    with pytest.raises(ValidationError):
        _core.canonical_json(mutating_dict())


def _raising_new(cls: object) -> object:
    raise Boom("new")


class _Abstract(abc.ABC):
    @abc.abstractmethod
    def f(self) -> None: ...


class _OwnNew:
    # object.__new__ makes its instances without calling this, as load_document does.
    def __new__(cls) -> _OwnNew:
        raise Boom("new")


_STORED = '{"format": "thinkseal.conversation", "version": 2, "messages": [{"role": "user", "content": "x"}, '
_STORED += '{"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "f", "arguments": {"a": [1]}}]}]}'


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((_STORED, ()), id="kit-empty"),
        pytest.param((_STORED, _load._KIT[:5]), id="kit-short"),
        pytest.param((_STORED, (5,) * 12), id="kit-not-callable"),
        pytest.param((_STORED, (*_load._KIT[:10], None, None)), id="kit-no-frozen"),
        pytest.param((_STORED, (dict, dict, *_load._KIT[2:])), id="kit-builtin-class"),
        pytest.param((_STORED, (_Abstract, _Abstract, *_load._KIT[2:])), id="kit-abstract-class"),
        pytest.param((_STORED, (_OwnNew, _OwnNew, *_load._KIT[2:])), id="kit-class-with-its-own-new"),
        pytest.param((None, _load._KIT), id="text-none"),
        pytest.param((5, _load._KIT), id="text-int"),
        pytest.param(("\ud800", _load._KIT), id="text-surrogate"),
        pytest.param((b"\xff{}", _load._KIT), id="text-bad-utf8"),
        pytest.param((bytearray(b"{}"), _load._KIT), id="text-bytearray"),
        pytest.param(("[" * 100_000, _load._KIT), id="text-deep"),
        pytest.param((_STORED, _load._KIT, -1), id="depth-negative"),
        pytest.param((_STORED, _load._KIT, 2**70), id="depth-huge"),
        pytest.param((_STORED, _load._KIT, 0, 0, 0), id="limits-zero"),
        pytest.param((_STORED, _load._KIT, "3"), id="depth-str"),
    ],
)
def test_load_document_survives_hostile_arguments(args):
    text, kit, *limits = args
    depth, string, parts = [*limits, 128, 2**20, 100][:3]
    survive(_core.load_document, text, kit, depth, string, parts)


class _DictWithAttributes(dict):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize("cls", [dict, _DictWithAttributes, int, _Abstract])
def test_load_document_makes_only_what_object_new_makes(cls):
    # Messages are made as object.__new__ makes them; for a class it refuses
    # (a dict's instance needs dict.__new__), nothing half-made comes back:
    # the error is object.__new__'s own, not a later one from the object.
    with pytest.raises(TypeError, match=r"^object\.__new__\(\w+\) is not safe|^Can't instantiate abstract class"):
        _core.load_document(_STORED, (cls, cls, *_load._KIT[2:]), 128, 2**20, 100)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("[1]", None, None), id="no-classes"),
        pytest.param(("[1]", FrozenDict, dict), id="list-class-not-a-list"),
        pytest.param(('{"a": 1}', list, FrozenList), id="dict-class-not-a-dict"),
        pytest.param(('{"a": [1]}', _raising_new, FrozenList), id="dict-class-raising"),
        pytest.param((None, FrozenDict, FrozenList), id="text-none"),
        pytest.param(("\ud800", FrozenDict, FrozenList), id="text-surrogate"),
        pytest.param((b"\xff[]", FrozenDict, FrozenList), id="text-bad-utf8"),
        pytest.param(("[" * 100_000, FrozenDict, FrozenList), id="text-deep"),
        pytest.param(("1", FrozenDict, FrozenList), id="scalar"),
    ],
)
def test_frozen_json_survives_hostile_arguments(args):
    survive(_core.frozen_json, *args)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((None, [("signature", None, "s")]), id="no-account"),
        pytest.param(("\ud800", [("signature", None, "s")]), id="account-surrogate"),
        pytest.param((5, [("signature", None, "s")]), id="account-int"),
        pytest.param((None, [("unknown-kind", None, "s")]), id="kind-unknown"),
        pytest.param((None, [("native", "p", "\udfff")]), id="datum-surrogate"),
        pytest.param((None, [("opaque", 3, "d")]), id="provider-int"),
        pytest.param((None, [("signature", None)]), id="short-tuple"),
        pytest.param((None, None), id="data-none"),
        pytest.param((None, "abc"), id="data-str"),
        pytest.param((None, [("signature", None, "s" * 1_000_000)] * 3), id="large"),
    ],
)
def test_ledger_keys_survive_hostile_arguments(args):
    survive(_core.ledger_keys, *args)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((b"", b"k" * 32, "b"), id="short-entry-key"),
        pytest.param((b"e" * 32, b"k" * 31, "b"), id="short-key"),
        pytest.param((b"e" * 32, b"k" * 32, "\ud800"), id="binding-surrogate"),
        pytest.param((b"e" * 32, b"k" * 32, None), id="binding-none"),
        pytest.param(("e" * 32, b"k" * 32, "b"), id="entry-key-str"),
    ],
)
def test_ledger_checks_survive_hostile_arguments(args):
    survive(_core.ledger_check, *args)


@pytest.mark.parametrize("secret", [b"", b"x" * 1_000_000, "text", None, 5])
def test_ledger_entry_keys_survive_hostile_arguments(secret):
    survive(_core.ledger_entry_key, secret)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("assistant", [AssistantMessage("a")], ()), id="kit-empty"),
        pytest.param(("assistant", [AssistantMessage("a")], (5,) * 7), id="kit-not-classes"),
        pytest.param(("assistant", [AssistantMessage("a")], (AssistantMessage,) * 7), id="kit-all-one-class"),
        pytest.param(("assistant", None, _TURN_KIT), id="group-none"),
        pytest.param(("assistant", (AssistantMessage("a"),), _TURN_KIT), id="group-tuple"),
        pytest.param(("assistant", [5], _TURN_KIT), id="group-int"),
        pytest.param(("user", [None, "x", 3.0], _TURN_KIT), id="group-junk"),
        pytest.param(("\ud800", [UserMessage("a")], _TURN_KIT), id="role-surrogate"),
        pytest.param((None, [UserMessage("a")], _TURN_KIT), id="role-none"),
        pytest.param(("assistant", [UserMessage("a")], (UserMessage, *_TURN_KIT[1:])), id="kit-misnamed"),
        pytest.param(("user", [UserMessage("x" * 3_000_000)] * 3, _TURN_KIT), id="large"),
    ],
)
def test_claude_turn_survives_hostile_arguments(args):
    survive(_core.claude_turn, *args)


def _walk_args(**changes: Any) -> tuple[Any, ...]:
    """``_core.walk_run``'s arguments for a small tool loop, with ``changes``."""
    origin = Origin("anthropic", "m")
    conv = respond(
        Conversation([UserMessage("q")]),
        origin,
        AssistantMessage(None, [ToolCall("c", "f", {})], [ThinkingBlock.Text("t", "s")]),
    )
    items = [*conv, ToolMessage("r", "c"), UserMessage("u")]
    args = {
        "items": items,
        "start": 0,
        "end": len(items),
        "total": len(items),
        "open_calls": set(),
        "chain": _core.CHAIN_START,
        "target": origin,
        "context": conv.context_digest,
        "kit": _RUN_KIT,
    }
    return tuple({**args, **changes}.values())


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(_walk_args(), id="plain"),
        pytest.param(_walk_args(kit=()), id="kit-empty"),
        pytest.param(_walk_args(kit=(5,) * 10), id="kit-not-classes"),
        pytest.param(_walk_args(kit=(UserMessage,) * 10), id="kit-all-one-class"),
        pytest.param(_walk_args(items=None), id="items-none"),
        pytest.param(_walk_args(items=(UserMessage("a"),)), id="items-tuple"),
        pytest.param(_walk_args(items=[5, None, "x", 3.0]), id="items-junk"),
        pytest.param(_walk_args(items=[fake(role="user", content="x")]), id="items-fake"),
        pytest.param(_walk_args(start=-1), id="start-negative"),
        pytest.param(_walk_args(start=10**30), id="start-huge"),
        pytest.param(_walk_args(start=3, end=1), id="end-before-start"),
        pytest.param(_walk_args(total=10**6), id="total-past-the-list"),
        pytest.param(_walk_args(open_calls=None), id="open-none"),
        pytest.param(_walk_args(open_calls=frozenset()), id="open-frozen"),
        pytest.param(_walk_args(open_calls={5, None}), id="open-junk"),
        pytest.param(_walk_args(chain=b"short"), id="chain-short"),
        pytest.param(_walk_args(chain="c" * 32), id="chain-str"),
        pytest.param(_walk_args(context=None), id="context-none"),
        pytest.param(_walk_args(target=None), id="target-none"),
        pytest.param(_walk_args(target="anthropic"), id="target-str"),
        pytest.param(_walk_args(items=[UserMessage("x" * 3_000_000)] * 3), id="large"),
    ],
)
def test_walk_run_survives_hostile_arguments(args):
    survive(_core.walk_run, *args)


def _sent_args(**changes: Any) -> tuple[Any, ...]:
    """``_core.sent_run``'s arguments for the small tool loop of ``_walk_args``, with ``changes``."""
    items, _, end, total, *_ = _walk_args()
    args = {
        "items": items,
        "bounds": (0, end, total),
        "open_calls": set(),
        "codes": bytes([0, 1, 0, 0]),
        "first": 0,
        "kit": _RUN_KIT,
    }
    return tuple({**args, **changes}.values())


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(_sent_args(), id="plain"),
        pytest.param(_sent_args(kit=(5,) * 10), id="kit-not-classes"),
        pytest.param(_sent_args(kit=()), id="kit-empty"),
        pytest.param(_sent_args(items=[5, None, "x"]), id="items-junk"),
        pytest.param(_sent_args(items=None), id="items-none"),
        pytest.param(_sent_args(bounds=(0, 4)), id="bounds-short"),
        pytest.param(_sent_args(bounds=(-1, 4, 4)), id="bounds-negative"),
        pytest.param(_sent_args(bounds=(3, 1, 10**9)), id="bounds-backwards"),
        pytest.param(_sent_args(codes=b""), id="codes-empty"),
        pytest.param(_sent_args(codes=bytes([255] * 4)), id="codes-unknown"),
        pytest.param(_sent_args(codes=bytearray(4)), id="codes-bytearray"),
        pytest.param(_sent_args(first=10**6), id="first-after"),
        pytest.param(_sent_args(first=-1), id="first-negative"),
        pytest.param(_sent_args(open_calls=["c"]), id="open-list"),
    ],
)
def test_sent_run_survives_hostile_arguments(args):
    survive(_core.sent_run, *args)


KEYS = ("anthropic", "anthropic:user")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(([UserMessage("a"), AssistantMessage("b")], KEYS, _TURN_KIT), id="plain"),
        pytest.param(([UserMessage("a")], KEYS, ()), id="kit-empty"),
        pytest.param(([UserMessage("a")], KEYS, (5,) * 8), id="kit-not-classes"),
        pytest.param(([UserMessage("a")], ("a",), _TURN_KIT), id="keys-short"),
        pytest.param(([UserMessage("a")], (None, 5), _TURN_KIT), id="keys-not-str"),
        pytest.param(([UserMessage("a")], ("\ud800", "\udfff"), _TURN_KIT), id="keys-surrogate"),
        pytest.param(((UserMessage("a"),), KEYS, _TURN_KIT), id="sent-tuple"),
        pytest.param(([5, None, "x"], KEYS, _TURN_KIT), id="sent-junk"),
        pytest.param(([UserMessage("x" * 3_000_000)] * 3, KEYS, _TURN_KIT), id="large"),
    ],
)
def test_claude_turns_survive_hostile_arguments(args):
    survive(_core.claude_turns, *args)


@pytest.mark.parametrize(
    "store",
    [5, ("anthropic:user",), ("anthropic:user", 5), ("anthropic:user", (b"x", "n")), {"anthropic:user": 7}],
)
def test_claude_turns_leave_a_turn_kept_in_a_shape_they_do_not_know(store):
    message = UserMessage("a")
    object.__setattr__(message, "_wire", store)
    assert survive(_core.claude_turns, [message], KEYS, _TURN_KIT) is None
    assert _core.claude_turns([message], KEYS, _TURN_KIT) is None  # the Python path reads it, or says what is wrong


KEY = bytes(32)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((KEY, b"", []), id="empty"),
        pytest.param((KEY, b"h", [b"x" * 17_000_000, b"y"]), id="large-part"),  # hashed on several threads
        pytest.param((KEY, b"h", [b""] * 10_000), id="many-empty"),
        pytest.param((KEY, "text", [b"d"]), id="header-str"),
        pytest.param((KEY, b"h", None), id="parts-none"),
        pytest.param((KEY, b"h", b"ab"), id="parts-bytes"),
        pytest.param((KEY, b"h", (b"a", b"b")), id="parts-tuple"),
        pytest.param((KEY, b"h", [b"a", "b"]), id="part-str"),
        pytest.param((KEY, b"h", [b"a", None]), id="part-none"),
        pytest.param((KEY, b"h", [memoryview(b"view")]), id="part-view"),
        pytest.param((b"short", b"h", [b"d"]), id="key-short"),
        pytest.param((None, b"h", [b"d"]), id="key-none"),
        pytest.param(("k" * 32, b"h", [b"d"]), id="key-str"),
    ],
)
def test_fragment_checks_survive_hostile_arguments(args):
    caught = survive(_core.fragment_check, *args)
    if caught is None:  # read: the check of the parts as one
        key, header, parts = args
        assert _core.fragment_check(key, header, parts) == _core.fragment_check(key, header, [b"".join(parts)])


@pytest.mark.parametrize("secret", [b"", b"s" * 1_000_000, "text", None, 3, memoryview(b"view")])
def test_fragment_keys_survive_hostile_arguments(secret):
    survive(_core.fragment_key, secret)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((b'{"messages":[1,2]}', "messages"), id="plain"),
        pytest.param((b"[" * 100_000, "messages"), id="deep"),
        pytest.param((b'{"messages":[' + b"[" * 100_000 + b"]}", "messages"), id="deep-unclosed"),
        pytest.param((b'{"messages":"', "messages"), id="open-string"),
        pytest.param((b"\xff\xfe", "messages"), id="not-utf8"),
        pytest.param((b'{"m\\ud800":1}', "m\ud800"), id="surrogate-key"),
        pytest.param(("text", "messages"), id="str-not-bytes"),
        pytest.param((b"{}", None), id="key-none"),
    ],
)
def test_member_spans_survive_hostile_arguments(args):
    survive(_core.member_spans, *args)
    survive(_core.member_span, *args)
    survive(_core.member_elements, *args)


def test_every_core_function_is_exercised():
    # Adding a native function means adding it to the hostile tests above.
    functions = {name for name in dir(_core) if callable(getattr(_core, name)) and not name.startswith("_")}
    assert functions == {
        "canonical_json",
        "encode_message",
        "message_digest",
        "message_digests",
        "chain",
        "context_digest",
        "prefix_digest",
        "wire_json",
        "claude_turn",
        "claude_turns",
        "walk_run",
        "sent_run",
        "load_document",
        "frozen_json",
        "ledger_keys",
        "ledger_entry_key",
        "ledger_check",
        "fragment_check",
        "fragment_key",
        "member_spans",
        "member_span",
        "member_elements",
    }


def test_hostile_messages_in_a_conversation_are_refused_up_front():
    with pytest.raises(ValidationError):
        Conversation([fake(role="user", content="x")])


# -- the error types ---------------------------------------------------------------------------------------


def test_error_hierarchy():
    assert issubclass(thinkseal.ValidationError, thinkseal.ThinksealError)
    assert issubclass(thinkseal.ValidationError, ValueError)
    assert issubclass(thinkseal.ResponseError, thinkseal.ThinksealError)
    assert issubclass(thinkseal.ResponseError, ValueError)
    assert issubclass(thinkseal.ReplayError, thinkseal.ThinksealError)
    assert not issubclass(thinkseal.ReplayError, ValueError)
    assert issubclass(thinkseal.ThinksealError, Exception)
    assert thinkseal.ThinksealError is not Exception


def test_contract_names_are_public():
    names = [
        "ThinkingBlock",
        "Message",
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolMessage",
        "ToolCall",
        "Tool",
        "Conversation",
        "Origin",
        "Binding",
        "ReplayReport",
        "PreparedRequest",
        "provider",
        "message_from_dict",
        "ThinksealError",
        "ValidationError",
        "ResponseError",
        "ReplayError",
    ]
    for name in names:
        assert name in thinkseal.__all__, name
        assert getattr(thinkseal, name) is not None
    assert all(hasattr(thinkseal, name) for name in thinkseal.__all__)

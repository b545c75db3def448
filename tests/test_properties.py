"""Property tests: the cached, incremental replay chain equals a from-scratch
recomputation (and an independent reference model); the canonical encoding is
injective; JSON values fingerprint by JSON semantics."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import assume, example, given, note
from hypothesis import strategies as st

from thinkseal import (
    FINGERPRINT_VERSION,
    AssistantMessage,
    Conversation,
    Message,
    Native,
    Origin,
    Reason,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    _core,
)
from thinkseal._walk import stray_tool_message
from thinkseal.testing import respond

Text = ThinkingBlock.Text
Redacted = ThinkingBlock.Redacted
Opaque = ThinkingBlock.Opaque

ORIGINS = (Origin("anthropic", "m"), Origin("bedrock", "m"), Origin("anthropic", "m", "acct"))
CALL_IDS = ("c0", "c1", "c2")
TOOLSETS = (
    (),
    (Tool("f", "d", {"type": "object", "properties": {"x": {"type": "integer"}}}),),
    (Tool("f", "d", {"properties": {"x": {"type": "integer"}}, "type": "object"}), Tool("g")),
)
FORMATS = (None, {"type": "json_object"}, {"json_schema": {"schema": {}, "name": "n"}, "type": "json_schema"})


# -- a reference model of the replay decision, written from docs/api.md ----------------------------


def reference_reason(m: AssistantMessage, origin: Origin, prefix: bytes, unpaired: bool) -> str:
    b = m.thinking_binding
    sealed = any(b.is_sealed for b in m.thinking) or any(isinstance(p, Native) for p in m.parts)
    if not sealed:
        return Reason.NO_SEALED_THINKING
    if b is None:
        return Reason.UNBOUND
    if b.version != FINGERPRINT_VERSION:
        return Reason.VERSION_MISMATCH
    if b.origin != origin:
        return Reason.ORIGIN_MISMATCH
    if b.turn != m.digest:
        return Reason.TURN_CHANGED
    if b.prefix != prefix:
        return Reason.PREFIX_CHANGED
    return Reason.UNPAIRED_TOOL_CALL if unpaired else Reason.KEPT


def reference_replay(conv: Conversation, origin: Origin) -> tuple[list[tuple[int, str]], list[Message], bytes]:
    """Per assistant turn (index, reason), every message as sent, and the chain end.
    Deliberately naive: no caches, one pass, pairing looked up directly."""
    items = list(conv)
    context = conv.context_digest
    chain = _core.CHAIN_START
    report: list[tuple[int, str]] = []
    sent_all: list[Message] = []

    def answered_calls(i: int) -> set[str]:
        wanted = {c.id for c in items[i].tool_calls}
        got: set[str] = set()
        j = i + 1
        while j < len(items) and items[j].role in ("tool", "system"):
            if items[j].role == "tool" and items[j].tool_call_id in wanted:
                got.add(items[j].tool_call_id)
            j += 1
        return got

    def tool_is_answer(i: int) -> bool:
        j = i - 1
        while j >= 0 and items[j].role in ("tool", "system"):
            j -= 1
        if j < 0 or items[j].role != "assistant":
            return False
        call_id = items[i].tool_call_id
        earlier = [items[k] for k in range(j + 1, i) if items[k].role == "tool" and items[k].tool_call_id == call_id]
        return call_id in answered_calls(j) and not earlier

    for i, m in enumerate(items):
        sent: Message = m
        if isinstance(m, AssistantMessage):
            answered = answered_calls(i)
            ids = [c.id for c in m.tool_calls]
            # A repeated id is never answered twice (docs/fingerprint.md §6).
            unpaired = any(c not in answered for c in ids) or len(set(ids)) < len(ids)
            prefix = _core.prefix_digest(
                FINGERPRINT_VERSION, origin.provider, origin.model, origin.account, context, chain
            )
            reason = reference_reason(m, origin, prefix, unpaired)
            report.append((i, reason))
            if reason != Reason.KEPT:
                # The turn's own parts, in order, with every seal taken off (a
                # native block gives way to its text) and only the first call
                # of each answered id.
                parts: list[Any] = []
                for p in m.parts:
                    if isinstance(p, Text) and p.text:
                        parts.append(Text(p.text))
                    elif isinstance(p, Native) and p.text:
                        parts.append(p.text)
                    elif isinstance(p, ToolCall):
                        if p.id in answered and p.id not in [q.id for q in parts if isinstance(q, ToolCall)]:
                            parts.append(p)
                    elif isinstance(p, str):
                        parts.append(p)
                sent = AssistantMessage.from_parts(parts)
        elif isinstance(m, ToolMessage) and not tool_is_answer(i):
            sent = stray_tool_message(m)  # the wording is the library's; the decision is ours
        chain = _core.chain(chain, sent.digest)[-32:]
        sent_all.append(sent)
    return report, sent_all, chain


def check_against_fresh_and_reference(conv: Conversation) -> None:
    fresh_conv = Conversation(list(conv), conv.tools, conv.response_format)
    for origin in ORIGINS:
        cached = conv.replay(origin)
        fresh = fresh_conv.replay(origin)
        got = [(e.index, e.reason) for e in cached.report]
        note(f"{origin}: cached={got}")
        assert got == [(e.index, e.reason) for e in fresh.report]
        assert cached.chain_end == fresh.chain_end
        sent = cached.sent_messages()
        assert sent == fresh.sent_messages()
        assert [cached.sent(i) for i in range(len(conv))] == sent
        ref_report, ref_sent, ref_chain = reference_replay(conv, origin)
        assert got == ref_report
        assert sent == ref_sent
        assert cached.chain_end == ref_chain
        kept = [reason == Reason.KEPT for _, reason in got]
        for (index, _), k in zip(got, kept, strict=True):
            assert cached.kept(index) == k


# -- random histories ----------------------------------------------------------------------------------

text_choice = st.sampled_from(["a", "b", "a b"])

user_op = st.tuples(st.just("user"), text_choice)
system_op = st.tuples(st.just("system"), text_choice)
tool_op = st.tuples(st.just("tool"), st.sampled_from(CALL_IDS), st.booleans())
reply_op = st.tuples(
    st.just("reply"),
    st.integers(0, len(ORIGINS) - 1),
    st.sampled_from(["sealed", "redacted", "opaque", "plain", "none", "native", "cited"]),
    st.lists(st.sampled_from(CALL_IDS), max_size=3),
    st.sampled_from([None, "", "ok"]),
    st.booleans(),
)
foreign_op = st.tuples(st.just("foreign"), st.lists(st.sampled_from(CALL_IDS), max_size=2), st.booleans())
replay_op = st.tuples(st.just("replay"), st.integers(0, len(ORIGINS) - 1))
back_op = st.tuples(st.just("back"), st.integers(0, 50))
# A whole tool loop: a sealed reply with calls, every answer, then a user message.
loop_op = st.tuples(st.just("loop"), st.integers(0, len(ORIGINS) - 1), st.integers(1, 3))

APPEND_OPS = st.one_of(user_op, system_op, tool_op, reply_op, reply_op, foreign_op, replay_op, back_op, loop_op)

edit_ops = st.one_of(
    st.tuples(st.just("drop"), st.integers(0, 50)),
    st.tuples(st.just("drop_last"), st.sampled_from(["tool", "user", "assistant", "system"])),
    st.tuples(st.just("insert"), st.integers(0, 50), st.sampled_from(["user", "system", "tool"])),
    st.tuples(st.just("edit"), st.integers(0, 50)),
    st.tuples(st.just("truncate"), st.integers(0, 50)),
    st.tuples(st.just("tools"), st.integers(0, len(TOOLSETS) - 1)),
    st.tuples(st.just("format"), st.integers(0, len(FORMATS) - 1)),
    st.tuples(st.just("rebind"), st.integers(0, len(ORIGINS) - 1)),
    st.tuples(
        st.just("json"),
    ),
)
ALL_OPS = st.one_of(APPEND_OPS, edit_ops)


def make_reply(
    kind: str, call_ids: list[str], content: str | None, n: int, interleaved: bool = False
) -> AssistantMessage:
    calls = [ToolCall(cid, "f", {"x": n}) for cid in call_ids]
    thinking = {
        "sealed": [Text(f"t{n}", f"s{n}"), Text("", f"e{n}")],
        "redacted": [Text(f"t{n}"), Redacted(f"r{n}")],
        "opaque": [Text(f"t{n}"), Opaque("openrouter", f"o{n}")],
        "plain": [Text(f"t{n}")],
        "none": [],
        "native": [Text(f"t{n}")],
        "cited": [],
    }[kind]
    if kind in ("native", "cited"):
        # A provider's own block beside the text: sealed like thinking, given
        # way to its text (or left out) when the turn is not kept.
        block = Native.of(
            "anthropic", {"type": "server_tool_use", "n": n}, text=f"cited {n}" if kind == "cited" else None
        )
        return AssistantMessage.from_parts([*thinking, block, *([] if content is None else [content]), *calls])
    if content is None and not calls:
        content = "ok"
    if interleaved:
        # Claude's interleaved order: a thinking block before each call, text between.
        parts: list[Any] = []
        for k, block in enumerate(thinking):
            parts.append(block)
            if k < len(calls):
                parts.append(calls[k])
            if content is not None:
                parts.append(f"{content} {k}")
        parts.extend(calls[len(thinking) :])
        if content is not None and not thinking:
            parts.append(content)
        return AssistantMessage.from_parts(parts)
    return AssistantMessage(content, calls, thinking)


def edited(m: Message) -> Message:
    if isinstance(m, AssistantMessage):
        return m.with_content(m.content + " edited")
    if isinstance(m, ToolMessage):
        return ToolMessage(m.content + "!", m.tool_call_id, m.is_error)
    return type(m)(m.content + "!")  # type: ignore[call-arg,attr-defined]


def apply(conv: Conversation, op: tuple[Any, ...], n: int, history: list[Conversation]) -> Conversation:
    kind = op[0]
    if kind == "user":
        return conv.append(UserMessage(op[1]))
    if kind == "system":
        return conv.append(SystemMessage(op[1]))
    if kind == "tool":
        return conv.append(ToolMessage(f"result {n}", op[1], op[2]))
    if kind == "reply":
        return respond(conv, ORIGINS[op[1]], make_reply(op[2], op[3], op[4], n, op[5]))
    if kind == "loop":
        ids = list(CALL_IDS[: op[2]])
        conv = respond(conv, ORIGINS[op[1]], make_reply("sealed", ids, None, n))
        return conv.append(*(ToolMessage(f"r{n}", i) for i in ids), UserMessage(f"after loop {n}"))
    if kind == "foreign":
        return conv.append(make_reply("sealed", op[1], "imported", n, op[2]))
    if kind == "replay":
        conv.replay(ORIGINS[op[1]])  # fills the caches at this point of history
        return conv
    if kind == "back":
        return history[op[1] % len(history)]
    items = list(conv)
    if kind == "drop" and items:
        del items[op[1] % len(items)]
        return conv.with_messages(items)
    if kind == "drop_last":
        for i in reversed(range(len(items))):
            if items[i].role == op[1]:
                del items[i]
                return conv.with_messages(items)
        return conv
    if kind == "insert":
        new = {"user": UserMessage("ins"), "system": SystemMessage("ins"), "tool": ToolMessage("ins", "c0")}[op[2]]
        items.insert(op[1] % (len(items) + 1), new)
        return conv.with_messages(items)
    if kind == "edit" and items:
        i = op[1] % len(items)
        items[i] = edited(items[i])
        return conv.with_messages(items)
    if kind == "truncate":
        return conv.with_messages(items[: op[1] % (len(items) + 1)])
    if kind == "tools":
        return conv.with_tools(TOOLSETS[op[1]])
    if kind == "format":
        return conv.with_response_format(FORMATS[op[1]])
    if kind == "rebind":
        return conv.rebind(ORIGINS[op[1]])
    if kind == "json":
        return Conversation.from_json(conv.to_json())
    return conv


def run_ops(ops: list[tuple[Any, ...]], *, check_each_step: bool) -> Conversation:
    conv = Conversation([SystemMessage("sys"), UserMessage("q")])
    history = [conv]
    for n, op in enumerate(ops):
        conv = apply(conv, op, n, history)
        history.append(conv)
        if check_each_step:
            check_against_fresh_and_reference(conv)
    return conv


@given(st.lists(APPEND_OPS, max_size=25))
def test_appended_history_cache_equals_fresh_and_reference(ops):
    run_ops(ops, check_each_step=True)


@given(st.lists(ALL_OPS, max_size=25))
@example([("loop", 0, 1), ("drop", 3)])
@example([("loop", 0, 2), ("drop", 4)])
def test_edited_history_cache_equals_fresh_and_reference(ops):
    run_ops(ops, check_each_step=True)


@given(st.lists(APPEND_OPS, max_size=30))
def test_caches_filled_late_equal_fresh(ops):
    # Only the final conversation is replayed (besides the replays inside respond).
    conv = run_ops([op for op in ops if op[0] != "replay"], check_each_step=False)
    check_against_fresh_and_reference(conv)


@given(
    st.lists(
        st.tuples(st.just("reply"), st.just(0), st.just("sealed"), st.just([]), st.just("ok"), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    st.data(),
)
def test_single_origin_edits_leave_an_unbroken_leading_run(replies, data):
    origin = ORIGINS[0]
    conv = Conversation([SystemMessage("sys"), UserMessage("q")])
    for n, op in enumerate(replies):
        conv = apply(conv, op, n, [conv]).append(UserMessage(f"u{n}"))
    assert all(e.kept for e in conv.replay_report(origin))
    position = data.draw(st.integers(0, len(conv) - 1))
    items = list(conv)
    items[position] = edited(items[position])
    report = conv.with_messages(items).replay_report(origin)
    kept = [e.kept for e in report]
    assert kept == sorted(kept, reverse=True)
    expected_kept = 0 if isinstance(items[position], SystemMessage) else sum(1 for e in report if e.index < position)
    assert sum(kept) == expected_kept


# -- encoding injectivity --------------------------------------------------------------------------------

tiny = st.text(alphabet="ab\x00\u00e9", max_size=3)
tiny_nonblank = st.text(alphabet="ab\u00e9", min_size=1, max_size=3)
tiny_numbers = st.sampled_from([0, 1, -1, 2, 0.5, -0.0, 1.0, 2.0, 100, 1e2, 2**53, float(2**53), 2**53 + 1, 1e20])
tiny_json = st.recursive(
    st.none() | st.booleans() | tiny_numbers | tiny,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tiny, inner, max_size=3),
    max_leaves=6,
)
tiny_objects = st.dictionaries(tiny, tiny_json, max_size=3)

blocks = st.one_of(
    st.builds(Text, tiny_nonblank, st.none() | tiny),
    st.builds(Text, st.just(""), tiny_nonblank),
    st.builds(Redacted, tiny_nonblank),
    st.builds(Opaque, tiny_nonblank, tiny_nonblank),
)
calls = st.builds(ToolCall, tiny_nonblank, tiny_nonblank, tiny_objects)
parts = st.lists(st.one_of(tiny, calls, blocks), max_size=4)
messages = st.one_of(
    st.builds(SystemMessage, tiny_nonblank),
    st.builds(UserMessage, tiny_nonblank),
    st.builds(ToolMessage, tiny_nonblank, tiny_nonblank, st.booleans()),
    parts.map(AssistantMessage.from_parts),
    st.builds(AssistantMessage, st.none() | tiny, st.lists(calls, max_size=2), st.lists(blocks, max_size=2)),
)


def jnorm(v: Any) -> Any:
    """A JSON value up to JSON semantics: key order, number spelling and
    array type (list/tuple) erased; booleans are not numbers. A float stands
    for the decimal number it is written as (its shortest round-trip text), an
    int for itself: the value a JSON reader such as PostgreSQL jsonb sees."""
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("num", Fraction(v))
    if isinstance(v, float):
        return ("num", Fraction(Decimal(repr(v))))
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, dict):
        return ("obj", frozenset((k, jnorm(x)) for k, x in v.items()))
    return ("arr", tuple(jnorm(x) for x in v))


def pkey(p: Any) -> Any:
    if isinstance(p, str):
        return ("x", p)
    if isinstance(p, ToolCall):
        return ("c", p.id, p.name, jnorm(p.arguments))
    return (type(p).__name__, *p._key())


def mkey(m: Message) -> Any:
    if isinstance(m, AssistantMessage):
        return ("assistant", tuple(pkey(p) for p in m.parts))
    if isinstance(m, ToolMessage):
        return ("tool", m.content, m.tool_call_id, m.is_error)
    return (m.role, m.content)


@given(messages, messages)
def test_message_encoding_is_injective(a, b):
    same = mkey(a) == mkey(b)
    assert (_core.encode_message(a) == _core.encode_message(b)) == same
    assert (_core.message_digest(a) == _core.message_digest(b)) == same
    assert (a.digest == b.digest) == same
    assert (a == b) == same


@given(messages)
def test_message_digest_is_the_batch_digest(m):
    assert _core.message_digests([m, m], 2) == [m.digest, m.digest]
    assert len(m.digest) == 32


@given(st.lists(messages, max_size=40), st.integers(1, 4))
def test_batch_digests_equal_single_digests(ms, threads):
    assert _core.message_digests(ms, threads) == [_core.message_digest(m) for m in ms]


@given(st.lists(messages, min_size=1, max_size=4), st.lists(messages, min_size=1, max_size=4))
def test_distinct_histories_have_distinct_chains(a, b):
    assume([mkey(m) for m in a] != [mkey(m) for m in b])
    start = _core.CHAIN_START
    chain_a = _core.chain(start, b"".join(m.digest for m in a))[-32:]
    chain_b = _core.chain(start, b"".join(m.digest for m in b))[-32:]
    assert chain_a != chain_b


contexts = st.tuples(
    st.lists(tiny_nonblank, max_size=3),
    st.lists(st.builds(Tool, tiny_nonblank, tiny, tiny_objects), max_size=2),
    st.none() | st.dictionaries(tiny, tiny_json, max_size=2).map(lambda d: {**d, "type": "json_object"}),
)


def context_key(ctx: tuple[Any, ...]) -> Any:
    systems, tools, fmt = ctx
    return (
        tuple(systems),
        tuple((t.name, t.description, jnorm(t.parameters)) for t in tools),
        None if fmt is None else jnorm(fmt),
    )


def context_of(ctx: tuple[Any, ...]) -> bytes:
    systems, tools, fmt = ctx
    return Conversation([SystemMessage(s) for s in systems], tools, fmt).context_digest


@given(contexts, contexts)
def test_context_digest_is_injective(a, b):
    assert (context_of(a) == context_of(b)) == (context_key(a) == context_key(b))


def test_system_boundaries_are_part_of_the_context():
    assert context_of((["ab"], [], None)) != context_of((["a", "b"], [], None))
    assert context_of((["a", "b"], [], None)) != context_of((["b", "a"], [], None))


@given(st.text(min_size=1, max_size=5), st.text(min_size=1, max_size=5), st.text(min_size=1, max_size=5))
def test_field_boundaries_cannot_shift(a, b, c):
    assume(a.strip() and b.strip() and c.strip())
    assume((a, b) != (a + c, b.removeprefix(c)))
    x = ToolMessage(a, b + c)
    y = ToolMessage(a + b, c)
    assume(mkey(x) != mkey(y))
    assert _core.encode_message(x) != _core.encode_message(y)


# -- JSON values fingerprint by JSON semantics ---------------------------------------------------------

SAFE = 2**53
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
json_numbers = st.one_of(
    st.integers(-(10**25), 10**25), finite_floats.filter(lambda x: abs(x) < 1e21 or x != int(x)), tiny_numbers
)
json_values = st.recursive(
    st.none() | st.booleans() | json_numbers | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=4), json_values, max_size=4)


def respell(v: Any, rnd: Any) -> Any:
    """Same JSON value, other spelling: keys reordered, numbers respelled, list/tuple swapped."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return float(v) if abs(v) <= SAFE and rnd.random() < 0.5 else v
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e21 and rnd.random() < 0.5:
            return int(Decimal(repr(v)))  # the integer its JSON text denotes
        if v == 0 and rnd.random() < 0.5:
            return -v
        return v
    if isinstance(v, dict):
        keys = list(v)
        rnd.shuffle(keys)
        return {k: respell(v[k], rnd) for k in keys}
    items = [respell(x, rnd) for x in v]
    return tuple(items) if rnd.random() < 0.5 else items


@given(json_values, json_values)
def test_canonical_json_equal_exactly_when_json_equal(a, b):
    assert (_core.canonical_json(a) == _core.canonical_json(b)) == (jnorm(a) == jnorm(b))


@given(json_values, st.randoms())
def test_respelled_values_canonicalise_alike(v, rnd):
    assert _core.canonical_json(respell(v, rnd)) == _core.canonical_json(v)


@given(json_objects, st.randoms())
def test_respelled_arguments_give_the_same_digest(args, rnd):
    a = AssistantMessage(None, [ToolCall("c", "f", args)])
    b = AssistantMessage(None, [ToolCall("c", "f", respell(args, rnd))])
    assert a.digest == b.digest
    assert a == b


@given(json_objects, json_objects)
def test_different_arguments_give_different_digests(x, y):
    a = AssistantMessage(None, [ToolCall("c", "f", x)])
    b = AssistantMessage(None, [ToolCall("c", "f", y)])
    assert (a.digest == b.digest) == (jnorm(x) == jnorm(y))


@given(json_objects, st.randoms())
def test_respelled_tool_parameters_give_the_same_context(params, rnd):
    a = Conversation((), [Tool("t", "d", params)])
    b = Conversation((), [Tool("t", "d", respell(params, rnd))])
    assert a.context_digest == b.context_digest


@given(json_objects, st.randoms())
def test_respelled_response_format_gives_the_same_context(fmt, rnd):
    fmt = {**fmt, "type": "json_schema"}
    a = Conversation((), (), fmt)
    b = Conversation((), (), respell(fmt, rnd))
    assert a.context_digest == b.context_digest


@given(json_objects, json_objects)
def test_different_parameters_give_different_contexts(x, y):
    a = Conversation((), [Tool("t", "d", x)]).context_digest
    b = Conversation((), [Tool("t", "d", y)]).context_digest
    assert (a == b) == (jnorm(x) == jnorm(y))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"x": 1}, {"x": 1.0}),
        ({"x": 100}, {"x": 1e2}),
        ({"x": 0}, {"x": -0.0}),
        ({"x": -0.0}, {"x": 0.0}),
        ({"x": 2**53}, {"x": float(2**53)}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"x": [1, 2]}, {"x": (1, 2)}),
        ({"x": 1e20}, {"x": 10**20}),
        ({"x": 6.223260578275355e16}, {"x": 62232605782753550}),
    ],
)
def test_spelling_differences_fingerprint_alike(a, b):
    assert ToolCall("c", "f", a) == ToolCall("c", "f", b)
    assert (
        AssistantMessage(None, [ToolCall("c", "f", a)]).digest == AssistantMessage(None, [ToolCall("c", "f", b)]).digest
    )
    assert Tool("t", "", a) == Tool("t", "", b)
    assert Conversation((), [Tool("t", "", a)]).context_digest == Conversation((), [Tool("t", "", b)]).context_digest
    ra, rb = {**a, "type": "json_object"}, {**b, "type": "json_object"}
    assert Conversation((), (), ra).context_digest == Conversation((), (), rb).context_digest


@pytest.mark.parametrize("power", [21, 22, 30, 300])
def test_large_integral_numbers_fingerprint_alike(power):
    # 1e21 and 10**21 are one JSON number (a jsonb round trip turns one into the other).
    as_float, as_int = float(f"1e{power}"), 10**power
    assert Decimal(repr(as_float)) == as_int  # the same JSON number
    assert _core.canonical_json(as_float) == _core.canonical_json(as_int)
    assert ToolCall("c", "f", {"x": as_float}) == ToolCall("c", "f", {"x": as_int})


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"x": True}, {"x": 1}),
        ({"x": False}, {"x": 0}),
        ({"x": None}, {"x": 0}),
        ({"x": "1"}, {"x": 1}),
        ({"x": 2**53 + 1}, {"x": float(2**53)}),
        ({"x": []}, {"x": {}}),
        ({"x": [1, 2]}, {"x": [2, 1]}),
        ({"x": {}}, {"x": None}),
        ({"x": 1}, {"X": 1}),
        ({"x": ""}, {"x": None}),
        ({"x": 0.1}, {"x": 0.1000000000000001}),
    ],
)
def test_real_differences_fingerprint_differently(a, b):
    assert ToolCall("c", "f", a) != ToolCall("c", "f", b)
    assert (
        AssistantMessage(None, [ToolCall("c", "f", a)]).digest != AssistantMessage(None, [ToolCall("c", "f", b)]).digest
    )
    assert Conversation((), [Tool("t", "", a)]).context_digest != Conversation((), [Tool("t", "", b)]).context_digest

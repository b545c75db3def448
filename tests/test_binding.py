"""Origin and Binding (docs/api.md "Origin and binding")."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

import thinkseal
from thinkseal import (
    AssistantMessage,
    Binding,
    Conversation,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import bind_reply

Text = ThinkingBlock.Text
SECRET_SIGNATURE = "SIGNATURE-SECRET-d41d8cd98f00b204"
SECRET_REDACTED = "REDACTED-SECRET-e3b0c44298fc1c14"
SECRET_OPAQUE = "OPAQUE-SECRET-9e107d9d372bb682"
ZERO = bytes(32)
ONES = bytes([1]) * 32


def make_binding(origin: Origin | None = None) -> Binding:
    origin = origin or Origin("anthropic", "claude-test", "team-a")
    conversation = Conversation([SystemMessage("sys"), UserMessage("hello")])
    reply = AssistantMessage(
        "answer",
        [ToolCall("c1", "f", {"q": SECRET_SIGNATURE})],
        [
            Text("thinking text", SECRET_SIGNATURE),
            ThinkingBlock.Redacted(SECRET_REDACTED),
            ThinkingBlock.Opaque("openrouter", SECRET_OPAQUE),
        ],
    )
    binding = bind_reply(conversation, origin, reply).thinking_binding
    assert binding is not None
    return binding


# -- Origin ---------------------------------------------------------------------


def test_origin_fields():
    o = Origin("anthropic", "claude-sonnet-4-5", "acct")
    assert (o.provider, o.model, o.account) == ("anthropic", "claude-sonnet-4-5", "acct")
    assert Origin("anthropic", "m").account is None


def test_empty_account_is_none():
    assert Origin("p", "m", "").account is None
    assert Origin("p", "m", "") == Origin("p", "m")
    assert Origin("p", "m", "") == Origin("p", "m", None)
    assert hash(Origin("p", "m", "")) == hash(Origin("p", "m"))


def test_origin_equality_and_hash():
    assert Origin("p", "m", "a") == Origin("p", "m", "a")
    assert Origin("p", "m", "a") != Origin("p", "m", "b")
    assert Origin("p", "m", "a") != Origin("p", "m")
    assert Origin("p", "m") != Origin("p", "m2")
    assert Origin("p", "m") != Origin("q", "m")
    assert Origin("p", "m") != ("p", "m", None)
    assert len({Origin("p", "m"), Origin("p", "m", ""), Origin("p", "m", "a")}) == 2


def test_origin_is_immutable_and_picklable():
    o = Origin("p", "m", "a")
    for name in ("provider", "model", "account"):
        with pytest.raises(AttributeError):
            setattr(o, name, "x")
    assert o.account == "a"
    assert pickle.loads(pickle.dumps(o)) == o
    assert copy.deepcopy(o) == o


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("", "m"), "provider"),
        ((" ", "m"), "provider"),
        (("p", ""), "model"),
        (("p", "\n"), "model"),
        ((None, "m"), "provider"),
        (("p", 3), "model"),
        (("p", "m", 3), "account"),
        (("p", "m", b"acct"), "account"),
        (("\ud800", "m"), "provider"),
        (("p", "m\udfff"), "model"),
        (("p", "m", "\ud800"), "account"),
    ],
)
def test_origin_validation_names_the_field(args, field):
    with pytest.raises(ValidationError) as info:
        Origin(*args)
    assert info.value.path == f"Origin.{field}"


def test_origin_replace_protocol_validates():
    o = Origin("p", "m", "a")
    assert o.__replace__(model="m2") == Origin("p", "m2", "a")
    assert o.__replace__(account="") == Origin("p", "m")
    with pytest.raises(ValidationError):
        o.__replace__(provider="")


# -- Binding --------------------------------------------------------------------


def test_binding_records_origin_and_current_version():
    origin = Origin("anthropic", "claude-test", "team-a")
    b = make_binding(origin)
    assert b.origin == origin
    assert b.version == thinkseal.FINGERPRINT_VERSION
    assert isinstance(b.version, int)


def test_binding_is_frozen():
    b = make_binding()
    for name in ("origin", "version", "prefix", "turn"):
        with pytest.raises(AttributeError):
            setattr(b, name, None)
    with pytest.raises(AttributeError):
        del b.origin
    assert b.version == thinkseal.FINGERPRINT_VERSION


def test_parse_inverts_str():
    b = make_binding()
    text = str(b)
    assert isinstance(text, str)
    parsed = Binding.parse(text)
    assert parsed == b
    assert hash(parsed) == hash(b)
    assert str(parsed) == text


def test_binding_equality_and_hash():
    a = Binding(Origin("p", "m"), 1, ZERO, ONES)
    assert a == Binding(Origin("p", "m"), 1, ZERO, ONES)
    assert a == Binding(Origin("p", "m", ""), 1, ZERO, ONES)
    assert a != Binding(Origin("p", "m", "x"), 1, ZERO, ONES)
    assert a != Binding(Origin("p", "m"), 2, ZERO, ONES)
    assert a != Binding(Origin("p", "m"), 1, ONES, ONES)
    assert a != Binding(Origin("p", "m"), 1, ZERO, ZERO)
    assert a != str(a)
    assert len({a, Binding.parse(str(a))}) == 1


def test_binding_is_picklable():
    b = make_binding()
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(b, protocol=protocol)) == b
    assert copy.copy(b) == b
    assert copy.deepcopy(b) == b


def test_str_never_contains_secret_data():
    b = make_binding()
    for text in (str(b), repr(b)):
        for secret in (SECRET_SIGNATURE, SECRET_REDACTED, SECRET_OPAQUE, "thinking text", "answer", "hello", "sys"):
            assert secret not in text
        assert SECRET_SIGNATURE[:12] not in text


def test_str_names_origin_and_version():
    b = make_binding(Origin("anthropic", "claude-test", "team-a"))
    text = str(b)
    assert "anthropic" in text
    assert "claude-test" in text
    assert "team-a" in text
    assert str(thinkseal.FINGERPRINT_VERSION) in text


def test_bindings_differ_for_different_origins_and_requests():
    a = make_binding(Origin("anthropic", "m1"))
    b = make_binding(Origin("anthropic", "m2"))
    c = make_binding(Origin("anthropic", "m1", "acct"))
    assert len({str(a), str(b), str(c)}) == 3
    assert a.turn == b.turn == c.turn  # the turn half fingerprints the reply only
    assert len({a.prefix, b.prefix, c.prefix}) == 3


def test_version_zero_binding_round_trips():
    b = Binding(Origin("p", "m"), 0, ZERO, ONES)
    assert b.version == 0
    assert Binding.parse(str(b)) == b


origin_text = st.text(min_size=1, max_size=12).filter(lambda s: s.strip())


@given(
    provider=origin_text,
    model=origin_text,
    account=st.none() | st.text(max_size=12),
    version=st.integers(min_value=0, max_value=10**6),
    prefix=st.binary(min_size=32, max_size=32),
    turn=st.binary(min_size=32, max_size=32),
)
def test_parse_inverts_str_for_any_origin(provider, model, account, version, prefix, turn):
    b = Binding(Origin(provider, model, account), version, prefix, turn)
    text = str(b)
    assert Binding.parse(text) == b
    assert "\n" not in text


@given(
    a=st.tuples(origin_text, origin_text, st.none() | st.text(max_size=6)),
    b=st.tuples(origin_text, origin_text, st.none() | st.text(max_size=6)),
)
def test_distinct_origins_give_distinct_text(a, b):
    oa, ob = Origin(*a), Origin(*b)
    ba, bb = Binding(oa, 1, ZERO, ZERO), Binding(ob, 1, ZERO, ZERO)
    assert (str(ba) == str(bb)) == (oa == ob)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "thinkseal-binding/1;p;m;;" + "0" * 64,
        "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "0" * 63,
        "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "G" * 64,
        "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "A" * 64,
        "thinkseal-binding/x;p;m;;" + "0" * 64 + ";" + "0" * 64,
        "thinkseal-binding/-1;p;m;;" + "0" * 64 + ";" + "0" * 64,
        "thinkseal-binding/1;;m;;" + "0" * 64 + ";" + "0" * 64,
        "thinkseal-binding/1;p;;;" + "0" * 64 + ";" + "0" * 64,
        "thinkseal-binding/1;p;m;acct;" + "0" * 64 + ";" + "0" * 64,
        "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "0" * 64 + ";",
        " thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "0" * 64,
        "thinkseal-binding/1;p;m;;" + "0" * 64 + ";" + "0" * 64 + "\n",
        "thinkseal-binding/1;p;m;;;" + "0" * 64 + ";" + "0" * 64,
        "thinkseal-binding/1;%20;m;;" + "0" * 64 + ";" + "0" * 64,
    ],
)
def test_parse_refuses_malformed_text(text):
    with pytest.raises(ValidationError) as info:
        Binding.parse(text)
    assert info.value.path is not None
    assert info.value.path.startswith(("Binding", "Origin"))


@pytest.mark.parametrize("value", [None, 1, b"thinkseal-binding/1", ["x"]])
def test_parse_refuses_non_strings(value):
    with pytest.raises(ValidationError):
        Binding.parse(value)  # type: ignore[arg-type]


def test_parse_refuses_huge_version_with_validation_error():
    # A version too long for int() must be a ValidationError like any other bad text.
    text = "thinkseal-binding/" + "1" * 5000 + ";p;m;;" + "0" * 64 + ";" + "0" * 64
    with pytest.raises(ValidationError):
        Binding.parse(text)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("not an origin", 1, ZERO, ZERO), "origin"),
        ((Origin("p", "m"), -1, ZERO, ZERO), "version"),
        ((Origin("p", "m"), "1", ZERO, ZERO), "version"),
        ((Origin("p", "m"), True, ZERO, ZERO), "version"),
        ((Origin("p", "m"), 1.0, ZERO, ZERO), "version"),
        ((Origin("p", "m"), 1, bytes(31), ZERO), "prefix"),
        ((Origin("p", "m"), 1, ZERO, bytes(33)), "turn"),
        ((Origin("p", "m"), 1, "0" * 32, ZERO), "prefix"),
        ((Origin("p", "m"), 1, ZERO, bytearray(32)), "turn"),
    ],
)
def test_binding_constructor_validates(args, field):
    with pytest.raises(ValidationError) as info:
        Binding(*args)
    assert info.value.path == f"Binding.{field}"


def test_binding_is_exported():
    assert "Binding" in thinkseal.__all__
    assert "Origin" in thinkseal.__all__
    assert thinkseal.Binding is Binding
    assert thinkseal.Origin is Origin

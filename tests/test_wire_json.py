"""The native wire encoder (``_core.wire_json``, behind ``providers._wire.dumps``)
writes exactly the bytes of ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"), allow_nan=False).encode()``; where the stdlib fails with a
``ValueError`` (NaN, infinities, lone surrogates, circular values) it raises a
``ValidationError`` (also a ``ValueError``) naming the path, and its
``TypeError``s are the stdlib's."""

from __future__ import annotations

import enum
import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkseal import UserMessage, ValidationError, _core
from thinkseal._json import FrozenDict, FrozenList
from thinkseal.providers._wire import dumps


def stdlib(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


# Every code point, lone surrogates included (hypothesis leaves them out by default).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)
VALID_TEXT = st.text(max_size=20)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | VALID_TEXT
    | ANY_TEXT
)
KEYS = VALID_TEXT | ANY_TEXT | st.integers() | st.floats() | st.booleans() | st.none()
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple) | st.dictionaries(KEYS, inner, max_size=4)
    ),
    max_leaves=20,
)


@given(VALUES)
def test_same_bytes_or_same_kind_of_error_as_the_stdlib(value: Any) -> None:
    try:
        expected = stdlib(value)
    except ValueError:  # NaN / infinity (ValueError), lone surrogate (UnicodeEncodeError)
        with pytest.raises(ValidationError):
            _core.wire_json(value)
        return
    assert _core.wire_json(value) == expected
    assert dumps(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        0.0,
        -0.0,
        1e16,
        1e-05,
        0.0001,
        1.5e-07,
        12345678901234567.0,
        5e-324,
        1.7976931348623157e308,
        0.1 + 0.2,
        10**100,
        -(10**19),
        "\x00\x1f\x7f\u2028\u2029\ufeff",
        '"\\/\b\f\n\r\t',
        "é東京🌧️",
        {"b": 1, "a": 2},  # key order as given
        {1: "int", 2.5: "float", False: "bool", None: "none"},
        FrozenDict(a=FrozenList([1, (2, 3)])),
        [],
        {},
        (),
    ],
)
def test_edge_values(value: Any) -> None:
    assert _core.wire_json(value) == stdlib(value)


class Colour(enum.IntEnum):
    RED = 1


class Text(str):
    def __str__(self) -> str:
        return "not me"


def test_subclasses_are_written_as_their_base_type() -> None:
    value = {"n": Colour.RED, "t": Text("me"), "f": type("F", (float,), {})(1.5)}
    assert _core.wire_json(value) == stdlib(value) == b'{"n":1,"t":"me","f":1.5}'


class Plain(str):
    pass


# Each way CPython stores a str whose code units are one byte: compact ASCII
# (text right after the short header), compact Latin-1 (after the longer
# one), and a subclass's instance (text in a block of its own), ASCII or not.
# The native reader tells ASCII from the text's place, and scans the rest.
ONE_BYTE_TEXTS = ["", "a", "plain ascii " * 9, "é", "café", "\x80", "\xff" * 40, "x" * 31 + "\xe9"]


@pytest.mark.parametrize("text", ONE_BYTE_TEXTS + [Plain(t) for t in ONE_BYTE_TEXTS], ids=repr)
def test_one_byte_text_of_every_storage(text: str) -> None:
    assert _core.wire_json({"t": text}) == stdlib({"t": text})
    assert _core.wire_json(text).decode() == json.dumps(text, ensure_ascii=False)
    # The canonical bytes (the encoder's read of the text) are the stdlib's too.
    assert _core.canonical_json({"t": text}) == stdlib({"t": str(text)})


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"a": [1, float("nan")]}, "$.a[1]"),
        ({"a": {"b": float("inf")}}, "$.a.b"),
        ([{"x y": "\ud800"}], '$[0]["x y"]'),
        ({"\udc00": 1}, "$"),
        ({"pair": "\ud83c\udf27"}, "$.pair"),  # two lone surrogates in a str, never one character
    ],
)
def test_values_the_wire_cannot_hold_name_their_path(value: Any, path: str) -> None:
    with pytest.raises(ValueError, match=r"JSON compliant|surrogate"):
        stdlib(value)
    with pytest.raises(ValidationError) as err:
        _core.wire_json(value)
    assert err.value.path == path


def test_circular_values_are_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        stdlib(loop)
    with pytest.raises(ValidationError):
        _core.wire_json(loop)


@pytest.mark.parametrize("value", [{"x": object()}, {(1, 2): 1}, {"s": {1, 2}}, b"bytes"])
def test_type_errors_are_the_stdlibs(value: Any) -> None:
    with pytest.raises(TypeError) as expected:
        stdlib(value)
    with pytest.raises(TypeError) as err:
        _core.wire_json(value)
    assert str(err.value) == str(expected.value)


# UCS-2 text is read four code units at a time where they are ASCII; every
# alignment of the non-ASCII (and of a lone surrogate) against those blocks.
@pytest.mark.parametrize("lead", range(9))
@pytest.mark.parametrize("odd", ["é", "東京", "—x", "\u07ff\u0800", "ab\uffff"])
def test_text_at_every_alignment(lead: int, odd: str) -> None:
    for text in ("a" * lead + odd + "tail text", "a" * lead + odd, odd + "b" * lead + "東"):
        assert _core.wire_json(text) == stdlib(text)
        data = text.encode()
        encoded = _core.encode_message(UserMessage(text))
        assert encoded.endswith(len(data).to_bytes(8, "little") + data)
        broken = text[:lead] + "\udc00" + text[lead:]
        with pytest.raises(ValidationError):
            _core.wire_json(broken)
        with pytest.raises(ValidationError, match=r"UserMessage\.content"):
            # UserMessage itself refuses the text: an object of the same shape.
            _core.encode_message(SimpleNamespace(role="user", _fp_content=broken))

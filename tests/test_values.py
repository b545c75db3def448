"""The value types (thinking blocks, Origin, Binding, Tool, ToolCall) share one
derivation of equality, hashing, pickling, ``__replace__`` and repr from their
declared fields (``_frozen.Value``)."""

from __future__ import annotations

import pickle

import pytest

from thinkseal import Binding, Origin, ThinkingBlock, Tool, ToolCall, ValidationError

BINDING = Binding(Origin("p", "m", "a"), 1, bytes(32), bytes(range(32)))
VALUES = [
    ThinkingBlock.Text("t", "s"),
    ThinkingBlock.Redacted("d"),
    ThinkingBlock.Opaque("p", "d"),
    Origin("p", "m"),
    Origin("p", "m", "a"),
    BINDING,
    Tool("t", "d", {"type": "object", "properties": {"x": {"type": "number"}}}),
    ToolCall("c1", "f", {"b": [1, {"c": None}], "a": "x"}),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_one_derivation(value):
    twin = pickle.loads(pickle.dumps(value))
    assert twin == value
    assert hash(twin) == hash(value)
    assert value.__replace__() == value
    assert [v for v in VALUES if v == value] == [value]


def test_origins_are_equal_exactly_when_their_fields_are():
    origins = [Origin("p", "m"), Origin("p", "m", "a"), Origin("p", "n"), Origin("q", "m"), Origin("p", "m", "b")]
    for a in origins:
        for b in origins:
            assert (a == b) is (a is b)
            assert (a != b) is (a is not b)
    assert Origin("p", "m", "") == Origin("p", "m", None) == Origin("p", "m")
    assert hash(Origin("p", "m", "")) == hash(Origin("p", "m"))
    assert hash(Origin("p", "m", "a")) == hash(pickle.loads(pickle.dumps(Origin("p", "m", "a"))))
    assert Origin("p", "m") != ("p", "m", None)
    assert Origin("p", "m") != ThinkingBlock.Opaque("p", "m")
    assert len({Origin("p", "m"), Origin("p", "m"), Origin("p", "m", "a")}) == 2


def test_a_subclass_with_a_key_of_its_own_compares_by_it():
    # Equality and hashing go by ``_key``, whichever class defines it.
    class ByProvider(Origin):
        __slots__ = ()

        def _key(self) -> tuple[object, ...]:
            return (self.provider,)

    assert ByProvider("p", "m") == ByProvider("p", "n")
    assert hash(ByProvider("p", "m")) == hash(ByProvider("p", "n"))
    assert Origin("p", "m") != Origin("p", "n")
    assert ByProvider("p", "m") != Origin("p", "m")


def test_kinds_with_equal_fields_differ():
    assert ThinkingBlock.Text("a", "b") != ThinkingBlock.Opaque("a", "b")


def test_a_subclass_that_declares_no_fields_compares_as_its_base():
    class Named(Origin):
        __slots__ = ()

    assert Named("p", "m") == Origin("p", "m")
    assert hash(Named("p", "m")) == hash(Origin("p", "m"))
    assert Named("p", "m").__replace__(model="n") == Origin("p", "n")


def test_json_values_pickle_as_plain_dicts_and_compare_by_canonical_json():
    call = ToolCall("c1", "f", {"n": 1, "m": 2})
    assert call.__reduce__() == (ToolCall, ("c1", "f", {"n": 1, "m": 2}))
    assert type(call.__reduce__()[1][2]) is dict
    assert call == ToolCall("c1", "f", {"m": 2, "n": 1.0})
    assert hash(call) == hash(ToolCall("c1", "f", {"m": 2, "n": 1.0}))
    assert Tool("t").__reduce__() == (Tool, ("t", "", {"type": "object", "properties": {}}, None))


def test_copies_go_through_the_constructor():
    with pytest.raises(ValidationError):
        Tool("t").__replace__(parameters=[])
    with pytest.raises(ValidationError):
        Origin("p", "m").__replace__(provider=" ")
    with pytest.raises(ValidationError):
        BINDING.__replace__(prefix=b"short")
    assert BINDING.__reduce__() == (Binding.parse, (str(BINDING),))


def test_repr():
    assert repr(Origin("p", "m")) == "Origin(provider='p', model='m')"
    assert repr(Origin("p", "m", "a")) == "Origin(provider='p', model='m', account='a')"
    assert repr(ThinkingBlock.Text("t")) == "ThinkingBlock.Text(text='t', signature=None)"
    assert repr(ToolCall("c", "f", {"a": [1]})) == "ToolCall(id='c', name='f', arguments={'a': [1]})"
    assert repr(Tool("t")) == "Tool(name='t', description='', parameters={'type': 'object', 'properties': {}})"
    assert repr(BINDING) == f"Binding({str(BINDING)!r})"

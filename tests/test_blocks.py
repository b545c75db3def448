"""ThinkingBlock: the three kinds, sealing, validation and value semantics (docs/api.md "Thinking blocks")."""

from __future__ import annotations

import copy
import pickle

import pytest

import thinkseal
from thinkseal import ThinkingBlock, ValidationError

Text = ThinkingBlock.Text
Redacted = ThinkingBlock.Redacted
Opaque = ThinkingBlock.Opaque

ALL_BLOCKS = [
    Text("reasoning"),
    Text("reasoning", "sig"),
    Text("", "sig-only"),
    Redacted("ZW5jcnlwdGVk"),
    Opaque("openrouter", '{"type":"reasoning.encrypted","data":"x"}'),
]


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_every_kind_is_a_thinking_block(block):
    assert isinstance(block, ThinkingBlock)


def test_kinds_are_distinct_classes():
    assert not isinstance(Text("t"), (Redacted, Opaque))
    assert not isinstance(Redacted("d"), (Text, Opaque))
    assert not isinstance(Opaque("p", "d"), (Text, Redacted))


def test_kinds_are_reachable_from_the_package():
    assert thinkseal.ThinkingBlock.Text is Text
    assert thinkseal.ThinkingBlock.Redacted is Redacted
    assert thinkseal.ThinkingBlock.Opaque is Opaque


def _describe(block: ThinkingBlock) -> tuple[str, ...]:
    match block:
        case ThinkingBlock.Text(text=t, signature=s):
            return ("text", t, str(s))
        case ThinkingBlock.Redacted(data=d):
            return ("redacted", d)
        case ThinkingBlock.Opaque(provider=p, data=d):
            return ("opaque", p, d)
    return ("none",)


def test_structural_pattern_matching_by_keyword():
    assert _describe(Text("t", "s")) == ("text", "t", "s")
    assert _describe(Text("t")) == ("text", "t", "None")
    assert _describe(Redacted("d")) == ("redacted", "d")
    assert _describe(Opaque("openrouter", "d")) == ("opaque", "openrouter", "d")


def test_structural_pattern_matching_by_position():
    match Text("t", "s"):
        case ThinkingBlock.Text(t, s):
            assert (t, s) == ("t", "s")
        case _:
            pytest.fail("positional match failed")
    match Opaque("p", "d"):
        case ThinkingBlock.Opaque(p, d):
            assert (p, d) == ("p", "d")
        case _:
            pytest.fail("positional match failed")


# -- sealing ------------------------------------------------------------------


def test_text_is_sealed_only_when_signed():
    assert Text("t", "sig").is_sealed is True
    assert Text("", "sig").is_sealed is True
    assert Text("t").is_sealed is False
    assert Text("t", None).is_sealed is False


def test_redacted_and_opaque_are_always_sealed():
    assert Redacted("d").is_sealed is True
    assert Opaque("p", "d").is_sealed is True


def test_empty_signature_is_normalised_to_none():
    block = Text("t", signature="")
    assert block.signature is None
    assert block.is_sealed is False
    assert block == Text("t")
    assert hash(block) == hash(Text("t"))


def test_fields_are_kept_exactly():
    block = Text("  spaced\nthinking ", " sig ")
    assert block.text == "  spaced\nthinking "
    assert block.signature == " sig "
    assert Redacted("abc=").data == "abc="
    opaque = Opaque("openrouter", " {x} ")
    assert (opaque.provider, opaque.data) == ("openrouter", " {x} ")


def test_unicode_is_kept_without_normalisation():
    composed, decomposed = "\u00e9", "e\u0301"
    assert Text(composed).text == composed
    assert Text(decomposed).text == decomposed
    assert Text(composed) != Text(decomposed)


# -- validation ---------------------------------------------------------------


def test_signed_empty_text_is_valid_and_sealed():
    block = Text("", signature="s")
    assert block.text == ""
    assert block.signature == "s"
    assert block.is_sealed


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Text(""), "text"),
        (lambda: Text("", ""), "text"),
        (lambda: Text("", None), "text"),
        (lambda: Redacted(""), "data"),
        (lambda: Opaque("", "data"), "provider"),
        (lambda: Opaque("openrouter", ""), "data"),
    ],
)
def test_empty_values_are_refused(make, field):
    with pytest.raises(ValidationError) as info:
        make()
    assert isinstance(info.value, ValueError)
    assert field in (info.value.path or "")
    assert field in str(info.value)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Text(5), "text"),  # type: ignore[arg-type]
        (lambda: Text(None), "text"),  # type: ignore[arg-type]
        (lambda: Text(b"bytes"), "text"),  # type: ignore[arg-type]
        (lambda: Text("t", 5), "signature"),  # type: ignore[arg-type]
        (lambda: Text("t", b"sig"), "signature"),  # type: ignore[arg-type]
        (lambda: Redacted(None), "data"),  # type: ignore[arg-type]
        (lambda: Redacted(b"data"), "data"),  # type: ignore[arg-type]
        (lambda: Opaque(1, "d"), "provider"),  # type: ignore[arg-type]
        (lambda: Opaque("p", {"a": 1}), "data"),  # type: ignore[arg-type]
    ],
)
def test_wrong_types_are_refused_naming_the_field(make, field):
    with pytest.raises(ValidationError) as info:
        make()
    assert field in (info.value.path or "")


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Text("a\ud800b"), "text"),
        (lambda: Text("t", "\udfff"), "signature"),
        (lambda: Text("", "\ud83d"), "signature"),
        (lambda: Redacted("\udc00"), "data"),
        (lambda: Opaque("\ud800", "d"), "provider"),
        (lambda: Opaque("p", "x\ud800"), "data"),
    ],
)
def test_lone_surrogates_are_refused(make, field):
    with pytest.raises(ValidationError) as info:
        make()
    assert field in (info.value.path or "")


def test_string_subclasses_are_stored_as_plain_str():
    class Loud(str):
        def __str__(self) -> str:
            return "LOUD"

    block = Text(Loud("quiet"), Loud("sig"))
    assert type(block.text) is str
    assert type(block.signature) is str
    assert block.text == "quiet"
    assert block == Text("quiet", "sig")


# -- value semantics ----------------------------------------------------------


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_attributes_cannot_be_assigned_or_deleted(block):
    name = block.__match_args__[0]
    with pytest.raises(AttributeError):
        setattr(block, name, "changed")
    with pytest.raises(AttributeError):
        delattr(block, name)
    with pytest.raises(AttributeError):
        block.extra = 1  # new attributes are refused as well
    assert getattr(block, name) == getattr(copy.copy(block), name)


def test_signature_cannot_be_added_after_construction():
    block = Text("t")
    with pytest.raises(AttributeError):
        block.signature = "forged"  # type: ignore[misc]
    assert block.signature is None
    assert not block.is_sealed


def test_equality_is_by_value():
    assert Text("t", "s") == Text("t", "s")
    assert Text("t", "s") != Text("t", "s2")
    assert Text("t", "s") != Text("t2", "s")
    assert Text("t", "s") != Text("t")
    assert Redacted("d") == Redacted("d")
    assert Redacted("d") != Redacted("e")
    assert Opaque("p", "d") == Opaque("p", "d")
    assert Opaque("p", "d") != Opaque("q", "d")
    assert Opaque("p", "d") != Opaque("p", "e")


def test_different_kinds_are_never_equal():
    assert Text("d", "d") != Redacted("d")
    assert Redacted("d") != Opaque("d", "d")
    assert Text("p") != Opaque("p", "p")
    assert Text("t") != "t"
    assert Redacted("d") != ("d",)


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_hashable_and_consistent_with_equality(block):
    twin = pickle.loads(pickle.dumps(block))
    assert twin == block
    assert hash(twin) == hash(block)
    assert len({block, twin}) == 1


def test_blocks_work_as_set_members_and_dict_keys():
    blocks = {Text("a"), Text("a"), Text("a", "s"), Redacted("a"), Opaque("p", "a")}
    assert len(blocks) == 4
    index = {Text("a", "s"): 1}
    assert index[Text("a", "s")] == 1


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_picklable(block, protocol):
    restored = pickle.loads(pickle.dumps(block, protocol=protocol))
    assert type(restored) is type(block)
    assert restored == block
    assert restored.is_sealed == block.is_sealed


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_copy_and_deepcopy_are_equal(block):
    assert copy.copy(block) == block
    assert copy.deepcopy(block) == block


def test_replace_protocol_validates_the_new_value():
    block = Text("t", "s")
    assert block.__replace__(text="u") == Text("u", "s")
    with pytest.raises(ValidationError):
        Text("t").__replace__(text="")
    with pytest.raises(ValidationError):
        Redacted("d").__replace__(data="")


def test_pickle_cannot_build_an_invalid_block():
    block = Text("t")
    func, args = block.__reduce__()[:2]
    with pytest.raises(ValidationError):
        func("", None)
    assert func(*args) == block


def test_repr_names_the_kind():
    assert "Text" in repr(Text("t", "s"))
    assert "Redacted" in repr(Redacted("d"))
    assert "Opaque" in repr(Opaque("p", "d"))


def test_the_common_bases_are_not_values() -> None:
    with pytest.raises(TypeError, match="common base"):
        ThinkingBlock()
    with pytest.raises(TypeError, match="common base"):
        thinkseal.Message()

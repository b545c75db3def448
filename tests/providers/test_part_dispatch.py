"""Content-part dispatch is exhaustive in every adapter: a part of a kind an
adapter has not been taught is refused by name, at its place in the
conversation, never sent as some other kind or silently dropped. A new kind
is taught in one place (``_content.PART_TYPES`` and each adapter's ``match``,
which mypy checks with ``assert_never``)."""

from __future__ import annotations

import pytest

import thinkseal
from thinkseal import Conversation, Image, ToolCall, ToolMessage, UserMessage, ValidationError, _content
from thinkseal.providers import PROVIDER_IDS

from .sealed import OPTIONS

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452")


class Audio(Image):
    """A part kind the model does not have yet (encoded as its base, so that
    a conversation can hold one and every adapter meets it)."""

    __slots__ = ()


def conversations() -> list[Conversation]:
    sound = Audio(PNG, "image/png")
    call = thinkseal.AssistantMessage(None, [ToolCall("c1", "f", {})])
    return [
        Conversation([UserMessage(["Listen:", sound])]),
        Conversation([UserMessage("q"), call, ToolMessage(["heard", sound], "c1"), UserMessage("so?")]),
    ]


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_every_adapter_refuses_an_untaught_part_kind_by_name(provider_id: str) -> None:
    adapter = thinkseal.provider(provider_id)
    for conversation in conversations():
        with pytest.raises(ValidationError, match="Audio content part") as err:
            adapter.prepare(conversation, model="m", **OPTIONS[provider_id])
        assert err.value.path is not None
        assert "messages[" in err.value.path or "content[" in err.value.path


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_once_taught_the_kind_goes_out(provider_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Taught as an image (here: listed in ``PART_TYPES``, as its base's case
    already handles it), the same part goes out wherever an image would."""
    monkeypatch.setattr(_content, "PART_TYPES", (*_content.PART_TYPES, Audio))
    adapter = thinkseal.provider(provider_id)
    conversation = conversations()[0]
    plain = Conversation([UserMessage(["Listen:", Image(PNG, "image/png")])])
    outcomes = []
    for conv in (plain, conversation):
        try:
            outcomes.append(adapter.prepare(conv, model="m", **OPTIONS[provider_id]).content)
        except ValidationError as err:  # a provider that takes no images refuses both alike
            outcomes.append(str(err))
    assert outcomes[0] == outcomes[1]

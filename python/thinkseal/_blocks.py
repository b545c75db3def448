"""Thinking blocks: the reasoning a model returned, kept as the provider returned it.

Typed by ``_blocks.pyi`` (nested classes under ``ThinkingBlock``); the classes
are defined flat here and attached to ``ThinkingBlock`` at the end.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from ._errors import ValidationError
from ._frozen import Value, check_optional_str, check_str


class ThinkingBlock(Value):
    """Base of ``ThinkingBlock.Text``, ``ThinkingBlock.Redacted``, ``ThinkingBlock.Opaque``."""

    __slots__ = ()
    # Read by the native core to tell the block kinds apart.
    _fp_kind: ClassVar[str]

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        if cls is ThinkingBlock:
            raise TypeError("ThinkingBlock is the common base; make a ThinkingBlock.Text, .Redacted or .Opaque")
        return super().__new__(cls)

    @property
    def is_sealed(self) -> bool:
        raise NotImplementedError


class Text(ThinkingBlock):
    __slots__ = ("signature", "text")
    __match_args__ = ("text", "signature")
    _fp_kind = "text"
    text: str
    signature: str | None

    def __init__(self, text: str, signature: str | None = None) -> None:
        text = check_str(text, "ThinkingBlock.Text.text")
        signature = check_optional_str(signature, "ThinkingBlock.Text.signature") or None
        if not text and signature is None:
            raise ValidationError(
                "ThinkingBlock.Text.text: an unsigned thinking block must have text",
                path="ThinkingBlock.Text.text",
            )
        self._init(text=text, signature=signature)

    @property
    def is_sealed(self) -> bool:
        return self.signature is not None


class Redacted(ThinkingBlock):
    __slots__ = ("data",)
    __match_args__ = ("data",)
    _fp_kind = "redacted"
    data: str

    def __init__(self, data: str) -> None:
        self._init(data=check_str(data, "ThinkingBlock.Redacted.data", blank_ok=False))

    @property
    def is_sealed(self) -> bool:
        return True


class Opaque(ThinkingBlock):
    __slots__ = ("data", "provider")
    __match_args__ = ("provider", "data")
    _fp_kind = "opaque"
    provider: str
    data: str

    def __init__(self, provider: str, data: str) -> None:
        self._init(
            provider=check_str(provider, "ThinkingBlock.Opaque.provider", blank_ok=False),
            data=check_str(data, "ThinkingBlock.Opaque.data", blank_ok=False),
        )

    @property
    def is_sealed(self) -> bool:
        return True


def unsigned_text(text: str) -> Text:
    """An unsigned ``Text`` from text already validated (unsealing copies)."""
    block = Text.__new__(Text)
    block._init(text=text, signature=None)
    return block


for _cls in (Text, Redacted, Opaque):
    _cls.__qualname__ = f"ThinkingBlock.{_cls.__name__}"
    setattr(ThinkingBlock, _cls.__name__, _cls)
del _cls

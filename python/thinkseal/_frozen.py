"""Shared plumbing for thinkseal's immutable value types."""

from __future__ import annotations

from typing import Any, NoReturn

from ._errors import ValidationError


class Frozen:
    """Base of the immutable types: attributes are set once, in the constructor."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__qualname__} is immutable; use its with_* methods")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__qualname__} is immutable")

    def _init(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)


def check_str(value: object, path: str, *, blank_ok: bool = True) -> str:
    """``value`` as an exact ``str`` of valid Unicode, or ``ValidationError`` naming ``path``."""
    if not isinstance(value, str):
        raise ValidationError(f"{path}: expected str, got {type(value).__name__}", path=path)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(
                f"{path}: string is not valid Unicode (it contains a lone surrogate)", path=path
            ) from None
    if not blank_ok and not value.strip():
        raise ValidationError(f"{path}: must not be blank", path=path)
    return str.__str__(value)


def check_optional_str(value: object, path: str) -> str | None:
    return None if value is None else check_str(value, path)


def check_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(f"{path}: expected bool, got {type(value).__name__}", path=path)
    return value


def check_sequence(value: object, path: str) -> tuple[Any, ...]:
    """A list or tuple as a tuple; a string or mapping is refused (a common slip)."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise ValidationError(f"{path}: expected a sequence, got {type(value).__name__}", path=path)
    return tuple(value)

"""Reading the dict forms back (``message_from_dict``, ``Conversation.from_json``):
field access on decoded JSON that fails with the document path of the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._errors import ValidationError


class Reader:
    """The fields of one decoded JSON object at ``path``; anything missing or of
    the wrong type raises ``ValidationError`` naming ``path.key``."""

    __slots__ = ("data", "path")

    def __init__(self, data: object, path: str) -> None:
        if not isinstance(data, Mapping):
            raise ValidationError(f"{path}: expected an object, got {type(data).__name__}", path=path)
        self.data = data
        self.path = path

    def get(self, key: str, *, default: object = ..., kind: type | tuple[type, ...] = object) -> Any:
        if key not in self.data:
            if default is ...:
                raise ValidationError(f"{self.path}.{key}: missing", path=f"{self.path}.{key}")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds and int in kinds):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise ValidationError(
                f"{self.path}.{key}: expected {names}, got {type(value).__name__}", path=f"{self.path}.{key}"
            )
        return value


def reroot(path: str, err: ValidationError) -> ValidationError:
    """``err`` (raised by a constructor, with a path like ``Tool.name``) re-rooted
    at the document path of the value being loaded."""
    if err.path is not None and err.path.startswith(path):
        return err
    inner = err.path or ""
    return ValidationError(f"{path}: {err}", path=f"{path}.{inner}" if inner else path)

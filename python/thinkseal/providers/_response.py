"""Reading provider responses: every failure is a ``ResponseError`` naming the
JSON path of the offending field. Unknown extra fields are ignored."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar, overload

from .._errors import ResponseError, ThinksealError
from .._json import finite_loads
from .._limits import limits

T = TypeVar("T")
_MISSING: Any = object()

_KIND_NAMES = {str: "string", int: "integer", bool: "boolean", list: "array", dict: "object", float: "number"}


def error_text(value: object, limit: int = 500) -> str:
    """A provider's error detail as short text, whatever its shape: a value
    nested too deeply to render (repr and json recurse) says so instead of
    raising ``RecursionError``."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)
        except (RecursionError, ValueError, TypeError):
            text = f"<{type(value).__name__} too deeply nested to show>"
    return text if len(text) <= limit else text[:limit] + "..."


def check_depth(depth: int, path: str) -> None:
    """Refuse a response value nested past ``Limits.max_depth`` with a
    ``ResponseError`` at ``path`` (for the recursive copies made of unknown
    blocks, which would otherwise raise ``RecursionError``)."""
    limit = limits().max_depth
    if depth > limit:
        raise ResponseError(f"nested deeper than {limit} levels (Limits.max_depth)", path=path)


def _describe(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds if k is not type(None)) + (
        " or null" if type(None) in kinds else ""
    )


class Node:
    """A JSON value in a response, with its path (``$.content[1].signature``)."""

    __slots__ = ("path", "value")

    def __init__(self, value: Any, path: str = "$") -> None:
        self.value = value
        self.path = path

    def error(self, message: str) -> ResponseError:
        return ResponseError(message, path=self.path)

    def object(self) -> Node:
        if not isinstance(self.value, Mapping):
            raise self.error(f"expected an object, got {type(self.value).__name__}")
        return self

    def child(self, key: str | int) -> Node:
        sub = f"{self.path}[{key}]" if isinstance(key, int) else f"{self.path}.{key}"
        return Node(self.value[key], sub)

    def has(self, key: str) -> bool:
        return isinstance(self.value, Mapping) and key in self.value and self.value[key] is not None

    @overload
    def get(self, key: str, kind: type[T]) -> T: ...
    @overload
    def get(self, key: str, kind: tuple[type, ...]) -> Any: ...
    def get(self, key: str, kind: Any) -> Any:
        """The required field ``key`` of this object, of type ``kind``."""
        self.object()
        if key not in self.value:
            raise ResponseError("missing required field", path=f"{self.path}.{key}")
        return self._typed(key, kind)

    def opt(self, key: str, kind: Any, default: Any = None) -> Any:
        """Field ``key`` when present and not null, else ``default``."""
        self.object()
        if self.value.get(key) is None:
            return default
        return self._typed(key, kind)

    def _typed(self, key: str, kind: Any) -> Any:
        value = self.value[key]
        ok = isinstance(value, kind) and not (isinstance(value, bool) and kind in (int, float))
        if not ok:
            raise ResponseError(f"expected {_describe(kind)}, got {type(value).__name__}", path=f"{self.path}.{key}")
        return value

    def node(self, key: str) -> Node:
        """The required object field ``key`` as a node."""
        self.get(key, dict)
        return self.child(key)

    def opt_node(self, key: str) -> Node | None:
        return self.child(key) if self.opt(key, dict) is not None else None

    def items(self, key: str, *, required: bool = True) -> Iterator[Node]:
        """The elements of the array field ``key`` as nodes (none if optional and absent)."""
        values = self.get(key, list) if required else self.opt(key, list, [])
        base = f"{self.path}.{key}"
        for i, v in enumerate(values):
            yield Node(v, f"{base}[{i}]")

    def text(self, key: str) -> str:
        """A required string field, checked to be valid Unicode."""
        return valid_text(self.get(key, str), f"{self.path}.{key}")


def valid_text(value: str, path: str) -> str:
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ResponseError("string is not valid Unicode (lone surrogate)", path=path) from None
    return value


def parse_arguments(raw: object, path: str) -> dict[str, Any]:
    """Tool-call arguments given as a JSON object or as JSON text of one."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            value = finite_loads(raw)
        except (ValueError, RecursionError) as err:
            raise ResponseError(f"tool-call arguments are not valid JSON: {err}", path=path) from None
        if not isinstance(value, dict):
            raise ResponseError("tool-call arguments must be a JSON object", path=path)
        return value
    raise ResponseError(f"expected an object or JSON text, got {type(raw).__name__}", path=path)


def b64_text(value: object, path: str) -> str:
    """Base64 text of a Blob given as bytes (boto3) or as base64 text (HTTP JSON)."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, str):
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ResponseError("expected base64 data", path=path) from None
        return value
    raise ResponseError(f"expected bytes or base64 text, got {type(value).__name__}", path=path)


def wrap_errors(path: str, exc: ThinksealError) -> ResponseError:
    """A validation failure of a value read from a response, as a ``ResponseError`` at ``path``."""
    return ResponseError(str(exc), path=path)

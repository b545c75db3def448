"""What the converters share: reading decoded JSON with the path of every field
(every failure a ``ValidationError`` naming it, never ``KeyError`` or
``TypeError``), base64 and data URLs, and the compact JSON of kept blocks."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from .._content import CacheBreakpoint, Native
from .._errors import ValidationError
from .._messages import AssistantMessage, Part
from .._reader import reroot

T = TypeVar("T")
_MISSING: Final[Any] = object()
_DATA_URL: Final = re.compile(r"data:(?P<media>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)


def fail(path: str, message: str) -> ValidationError:
    return ValidationError(f"{path}: {message}", path=path)


def kind_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def expect(value: object, kind: type[T] | tuple[type, ...], path: str, what: str | None = None) -> T:
    """``value`` if it is a ``kind`` (a ``bool`` is not an ``int``), else ``ValidationError`` at ``path``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = what or " or ".join(k.__name__ for k in kinds)
        raise fail(path, f"expected {names}, got {kind_name(value)}")
    return value  # type: ignore[return-value]


class Obj:
    """One decoded JSON object at ``path``: field access that fails with the
    path of the field."""

    __slots__ = ("path", "value")

    def __init__(self, value: object, path: str) -> None:
        self.value: Mapping[str, Any] = expect(value, Mapping, path, "an object")
        self.path = path

    def at(self, key: str) -> str:
        return f"{self.path}.{key}"

    def has(self, key: str) -> bool:
        return self.value.get(key) is not None

    def get(self, key: str, kind: type[T] | tuple[type, ...], default: Any = _MISSING) -> T:
        """The field ``key``; a missing or null field gives ``default`` (or raises when there is none)."""
        value = self.value.get(key)
        if value is None:
            if default is _MISSING:
                raise fail(self.at(key), "missing")
            return default  # type: ignore[no-any-return]
        return expect(value, kind, self.at(key))

    def text(self, key: str, default: Any = _MISSING) -> str:
        return self.get(key, str, default)

    def obj(self, key: str) -> Obj:
        return Obj(self.get(key, Mapping), self.at(key))

    def opt_obj(self, key: str) -> Obj | None:
        return Obj(self.value[key], self.at(key)) if self.has(key) else None

    def list(self, key: str, default: Any = _MISSING) -> list[tuple[Any, str]]:
        """The items of the array ``key`` with their paths."""
        items: Sequence[Any] = self.get(key, (list, tuple), default)
        return [(item, f"{self.at(key)}[{i}]") for i, item in enumerate(items or ())]

    def only(self, *keys: str) -> bool:
        """Every non-null field is one of ``keys``."""
        return all(k in keys for k, v in self.value.items() if v is not None)


def items_of(value: object, path: str) -> list[tuple[Any, str]]:
    """A JSON array (a list or tuple) as items with their paths."""
    seq: Sequence[Any] = expect(value, (list, tuple), path, "a list")
    return [(item, f"{path}[{i}]") for i, item in enumerate(seq)]


def made(path: str, build: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``build(*args, **kwargs)`` (a thinkseal constructor) with its
    ``ValidationError`` re-rooted at ``path``, the field being imported."""
    try:
        return build(*args, **kwargs)
    except ValidationError as err:
        raise reroot(path, err) from None


def b64decode(value: str, path: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise fail(path, "not valid base64") from None


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(url: str) -> tuple[str, str] | None:
    """``(media type, base64 data)`` of a ``data:<type>;base64,`` URL, else None."""
    match = _DATA_URL.fullmatch(url)
    return (match["media"], match["data"]) if match else None


def without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: without_nulls(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, (list, tuple)):
        return [without_nulls(v) for v in value]
    return value


def compact(value: Any, path: str, *, sort: bool = False) -> str:
    """``value`` as compact JSON text (sorted keys, no null members when ``sort``:
    how the adapters store response items)."""
    try:
        return json.dumps(
            without_nulls(value) if sort else value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError, RecursionError) as err:
        raise fail(path, f"not JSON: {err}") from None


def native(provider: str, value: Mapping[str, Any], path: str, text: str | None = None) -> Native:
    """A block kept verbatim as ``Native(provider, ...)``."""
    return made(path, Native, provider, compact(value, path), text)


def arguments(value: object, path: str) -> Mapping[str, Any]:
    """Tool-call arguments given as a JSON object or as its JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError as err:
            raise fail(path, f"not valid JSON: {err}") from None
    return expect(value, Mapping, path, "a JSON object")


def assistant(parts: Sequence[Part], path: str) -> AssistantMessage:
    return made(path, AssistantMessage.from_parts, parts)


def refuse(index: int, where: str, what: object, target: str, hint: str = "") -> ValidationError:
    """The export error for a part the target format cannot hold."""
    path = f"messages[{index}]{where}"
    described = what if isinstance(what, str) else _describe(what)
    return fail(path, f"{target} cannot hold {described}{'; ' + hint if hint else ''}")


def _describe(part: object) -> str:
    from .._blocks import ThinkingBlock  # noqa: PLC0415  (cycle-free, keeps the top cheap)

    if isinstance(part, ThinkingBlock.Text):
        return "a signed thinking block" if part.is_sealed else "unsigned thinking text"
    if isinstance(part, ThinkingBlock.Redacted):
        return "a redacted thinking block"
    if isinstance(part, ThinkingBlock.Opaque):
        return f"an opaque thinking block of {part.provider!r}"
    if isinstance(part, Native):
        return f"a native block of {part.provider!r}"
    return f"a {type(part).__name__}"


def breakpoint_of(node: Obj) -> list[CacheBreakpoint]:
    """The cache breakpoint a block's ``cache_control`` marks (Anthropic's shape,
    also OpenAI-compatible servers' extension), as a list of none or one."""
    control = node.opt_obj("cache_control")
    if control is None:
        return []
    if control.text("type") != "ephemeral" or not control.only("type", "ttl"):
        raise fail(control.path, 'expected {"type": "ephemeral"} with an optional "ttl"')
    return [made(control.at("ttl"), CacheBreakpoint, control.get("ttl", str, None))]

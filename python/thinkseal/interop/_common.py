"""What the converters share: reading decoded JSON with the path of every field
(every failure a ``ValidationError`` naming it, never ``KeyError``,
``TypeError`` or ``RecursionError``), checking the free JSON values they keep
against ``thinkseal.limits()``, base64 and data URLs, and the compact JSON of
kept blocks."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from .._content import CacheBreakpoint, Native
from .._errors import ValidationError
from .._limits import limits
from .._messages import AssistantMessage, Part
from .._reader import reroot

T = TypeVar("T")
_MISSING: Final[Any] = object()
_SHOWN: Final = 40  # characters of a rejected value an error message repeats
# Integers this long (in bits) may be past Python's digit limit for writing them as text.
_LONG_INT_BITS: Final = 64
_DATA_URL: Final = re.compile(r"data:(?P<media>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)


def fail(path: str, message: str) -> ValidationError:
    return ValidationError(f"{path}: {message}", path=path)


def kind_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def shown(value: str) -> str:
    """``repr(value)``, cut short: an error message names a bad value, it does not carry it."""
    return repr(value) if len(value) <= _SHOWN else f"{value[:_SHOWN]!r}... ({len(value)} characters)"


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
        for key in self.value:
            if not isinstance(key, str):
                raise fail(path, f"object key {key!r:.{_SHOWN}} is not a string")

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


Convert = Callable[[Any], Any]


def json_value(value: object, path: str, *, level: int = 1, convert: Convert | None = None) -> Any:
    """``value`` checked as JSON held to ``thinkseal.limits()``, as plain dicts
    and lists: ``ValidationError`` at the path of the first offending field for
    a value that is not JSON (NaN and Infinity included), an object key that is
    not a string, a string with a lone surrogate or over ``max_string``, an
    integer too long to write, or nesting past ``max_depth``. ``value`` is at
    nesting level ``level`` of the JSON value it belongs to.

    ``convert`` (a library's own serializer) turns a value of another type
    into JSON, which is then checked the same way; without it such a value is
    refused. The walk keeps its own stack, so no depth of input can exhaust
    Python's."""
    bounds = limits()
    out: list[Any] = [None]
    # (value, where its copy goes, under which key, trail of the path, level, converted already)
    stack: list[tuple[Any, Any, Any, Any, int, bool]] = [(value, out, 0, None, level, False)]
    while stack:
        item, into, key, trail, depth, converted = stack.pop()
        if item is None or isinstance(item, (bool, str)):
            if isinstance(item, str):
                _check_text(item, trail, path, bounds.max_string)
            into[key] = item
        elif isinstance(item, int):
            if item.bit_length() > _LONG_INT_BITS:
                try:
                    int.__repr__(item)
                except ValueError:
                    raise fail(_path(path, trail), "integer is too large to write (Python's int digit limit)") from None
            into[key] = item
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise fail(_path(path, trail), "NaN and Infinity are not JSON numbers")
            into[key] = item
        elif isinstance(item, (Mapping, list, tuple)):
            if depth > bounds.max_depth:
                raise fail(_path(path, trail), f"nested deeper than {bounds.max_depth} levels (Limits.max_depth)")
            copy: Any
            members: list[tuple[Any, Any]]
            if isinstance(item, Mapping):
                copy, members = {}, list(item.items())
                for k, _ in members:
                    if not isinstance(k, str):
                        raise fail(_path(path, trail), f"object key {k!r:.{_SHOWN}} is not a string")
                    _check_text(k, trail, path, bounds.max_string)
                    copy[k] = None
            else:
                copy, members = [None] * len(item), list(enumerate(item))
            # Pushed last first, so the members are checked in order and the first bad one is named.
            for k, v in reversed(members):
                if _plain_leaf(v, bounds.max_string):
                    copy[k] = v  # the common case, without a trip through the stack
                else:
                    stack.append((v, copy, k, (trail, k), depth + 1, converted))
            into[key] = copy
        elif convert is not None and not converted:
            try:
                plain = convert(item)
            except Exception as err:  # the serializer's own exception says why
                reason = str(err).splitlines()[0] if str(err) else type(err).__name__
                raise fail(_path(path, trail), f"not a JSON value (a {kind_name(item)}: {reason:.200})") from None
            stack.append((plain, into, key, trail, depth, True))
        else:
            raise fail(_path(path, trail), f"{kind_name(item)} is not a JSON value")
    return out[0]


def _plain_leaf(value: object, string_limit: int) -> bool:
    """``value`` is a JSON scalar that needs no further look: None, a bool, a
    short int, or an ASCII string within the limit (exact types only)."""
    if type(value) is str:
        return len(value) <= string_limit and value.isascii()
    if type(value) is int:
        return value.bit_length() <= _LONG_INT_BITS
    return value is None or type(value) is bool


def _check_text(text: str, trail: Any, root: str, limit: int) -> None:
    if len(text) > limit:
        raise fail(_path(root, trail), f"{len(text)} characters, over the limit of {limit} (Limits.max_string)")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise fail(_path(root, trail), "string is not valid Unicode (it contains a lone surrogate)") from None


def _path(root: str, trail: Any) -> str:
    """The path of a field from its trail, ``(parent trail, key or index)`` pairs:
    built only for an error, so the walk makes no strings."""
    steps: list[str] = []
    while trail is not None:
        trail, step = trail
        steps.append(f"[{step}]" if isinstance(step, int) else f".{step}")
    return root + "".join(reversed(steps))


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
    """``value`` (checked by ``json_value``) as compact JSON text (sorted keys,
    no null members when ``sort``: how the adapters store response items)."""
    plain = json_value(value, path)
    return dumps(without_nulls(plain) if sort else plain)


def dumps(plain: Any) -> str:
    """Compact JSON text of a value ``json_value`` has checked."""
    return json.dumps(plain, ensure_ascii=False, separators=(",", ":"))


def native(
    provider: str, value: Mapping[str, Any], path: str, text: str | None = None, *, sort: bool = False
) -> Native:
    """A block kept verbatim as ``Native(provider, ...)`` (its keys sorted and
    null members left out when ``sort``)."""
    return made(path, Native, provider, compact(value, path, sort=sort), text)


def arguments(value: object, path: str) -> dict[str, Any]:
    """Tool-call arguments given as a JSON object or as its JSON text, checked by ``json_value``."""
    if isinstance(value, str):
        if len(value) > limits().max_string:
            limit = limits().max_string
            raise fail(path, f"{len(value)} characters, over the limit of {limit} (Limits.max_string)")
        try:
            # json reads NaN and Infinity; json_value then refuses them at their own path.
            value = json.loads(value) if value.strip() else {}
        except RecursionError:
            # json's own recursion limit, far past Limits.max_depth
            raise fail(path, f"nested deeper than {limits().max_depth} levels (Limits.max_depth)") from None
        except ValueError as err:
            raise fail(path, f"not valid JSON: {err}") from None
    expect(value, Mapping, path, "a JSON object")
    checked: dict[str, Any] = json_value(value, path)
    return checked


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

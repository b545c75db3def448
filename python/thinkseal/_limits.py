"""Limits that protect a server from hostile or runaway input: how deeply a
JSON value may nest, how long one string may be, how many parts one message
may have, and how large one stored conversation or provider response may be.

One process-wide ``Limits`` value, read where input arrives (``limits()``) and
set once at start-up (``set_limits``). Going over a limit is a
``ValidationError`` (or, for a provider's answer, a ``ResponseError``) that
names the field and the limit, never a crash, a hang or unbounded memory.

The defaults are far above what real conversations use (a 1M-token context is
a few MB) and far below what would exhaust a server.
"""

from __future__ import annotations

from typing import Final

from . import _frozen
from ._errors import ValidationError
from ._frozen import Value

# The native JSON walkers' own ceiling (rust/core/src/jcs.rs: MAX_DEPTH).
DEPTH_CEILING: Final[int] = 256


def _positive(value: object, name: str, ceiling: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValidationError(f"Limits.{name}: expected a positive int, got {value!r}", path=f"Limits.{name}")
    if ceiling is not None and value > ceiling:
        raise ValidationError(f"Limits.{name}: at most {ceiling}, got {value}", path=f"Limits.{name}")
    return value


class Limits(Value):
    """``max_depth``: levels of nesting of one JSON value (tool-call arguments,
    tool schemas, response formats, options; at most 256). ``max_string``:
    characters of one string. ``max_parts``: parts of one message (content
    parts; an assistant turn's text segments, tool calls, thinking blocks and
    native blocks). ``max_body``: bytes of one stored conversation
    (``Conversation.from_json``) or one provider response body or stream
    (``thinkseal.Client``)."""

    __slots__ = ("max_body", "max_depth", "max_parts", "max_string")
    __match_args__ = ("max_depth", "max_string", "max_parts", "max_body")
    max_depth: int
    max_string: int
    max_parts: int
    max_body: int

    def __init__(
        self,
        max_depth: int = 128,
        max_string: int = 64 * 2**20,
        max_parts: int = 10_000,
        max_body: int = 512 * 2**20,
    ) -> None:
        self._init(
            max_depth=_positive(max_depth, "max_depth", DEPTH_CEILING),
            max_string=_positive(max_string, "max_string"),
            max_parts=_positive(max_parts, "max_parts"),
            max_body=_positive(max_body, "max_body"),
        )


DEFAULT_LIMITS: Final[Limits] = Limits()
_frozen.STRING_LIMIT[0] = DEFAULT_LIMITS.max_string
_current: list[Limits] = [DEFAULT_LIMITS]


def limits() -> Limits:
    """The limits in force."""
    return _current[0]


def set_limits(new: Limits) -> Limits:
    """Put ``new`` in force for the whole process; returns the limits it replaces."""
    if not isinstance(new, Limits):
        raise ValidationError("set_limits: expected a thinkseal.Limits", path="limits")
    old, _current[0] = _current[0], new
    _frozen.STRING_LIMIT[0] = new.max_string
    return old


def over(what: str, size: int, limit: int, unit: str, path: str) -> ValidationError:
    """The error for ``size`` over ``limit`` (named in ``Limits`` as ``what``)."""
    return ValidationError(f"{path}: {size} {unit}, over the limit of {limit} (Limits.{what})", path=path)


def check_parts(count: int, path: str) -> None:
    """Refuse a message with more than ``Limits.max_parts`` parts."""
    limit = _current[0].max_parts
    if count > limit:
        raise over("max_parts", count, limit, "parts", path)


def check_body(size: int, path: str) -> None:
    """Refuse a document or response body of more than ``Limits.max_body`` bytes."""
    limit = _current[0].max_body
    if size > limit:
        raise over("max_body", size, limit, "bytes", path)

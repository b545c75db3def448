"""JSON values as thinkseal stores them: validated, canonicalised and frozen.

Tool-call arguments, tool parameters and response formats are JSON. They are
checked and written in RFC 8785 form by the native core (which names the path
of anything that is not JSON), then deep-copied into read-only containers, so a
stored value can never drift from the digest that was taken of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn, TypeAlias

from . import _core
from ._errors import ValidationError
from ._limits import limits

# What "JSON" means in the docs. Signatures take ``Mapping[str, object]`` (as the
# provider SDKs do): a recursive alias makes mypy reject ordinary dict literals
# such as {"type": "object", "properties": {}}; the core checks the values at run time.
JSON: TypeAlias = Mapping[str, "JSON"] | list["JSON"] | tuple["JSON", ...] | str | int | float | bool | None

__all__ = ["JSON", "FrozenDict", "FrozenList", "check_json", "finite_loads", "freeze_json", "frozen", "frozen_loads"]


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is read-only: thinkseal JSON values are immutable")


class FrozenDict(dict[str, Any]):
    """A read-only ``dict``: equal to, and serialisable like, a plain dict."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        # Consistent with dict equality (equal dicts have equal key sets).
        return hash(frozenset(self.keys()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    # A copy is for changing: copy.copy and copy.deepcopy give a plain, mutable dict.
    # (The copy module is imported here, by then already loaded: not on ``import thinkseal``.)
    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        from copy import deepcopy  # noqa: PLC0415

        return {k: deepcopy(v, memo) for k, v in self.items()}

    def __repr__(self) -> str:
        return dict.__repr__(self)


class FrozenList(list[Any]):
    """A read-only ``list``: equal to, and serialisable like, a plain list."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = clear = extend = insert = pop = remove = reverse = sort = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(len(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    # A copy is for changing: copy.copy and copy.deepcopy give a plain, mutable list.
    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        from copy import deepcopy  # noqa: PLC0415

        return [deepcopy(v, memo) for v in self]

    def __repr__(self) -> str:
        return list.__repr__(self)


def _freeze(value: Any) -> Any:
    # Only called after the core validated `value`, so every case here is JSON.
    # The base types' own methods are used, not the value's: a subclass could
    # show Python something other than what the core (reading the C-level
    # contents) hashed.
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, dict):
        return FrozenDict({str.__str__(k): _freeze(v) for k, v in dict.items(value)})
    if isinstance(value, tuple):
        return FrozenList(_freeze(v) for v in tuple.__iter__(value))
    return FrozenList(_freeze(v) for v in list.__iter__(value))


def frozen(value: Any) -> Any:
    """A read-only version of a JSON-ready value built by thinkseal itself (a
    request body): dicts and lists become ``FrozenDict``/``FrozenList``, and
    what is frozen already is shared as it is, so freezing a body whose cached
    parts were frozen when cached costs one look per part."""
    if isinstance(value, (FrozenDict, FrozenList)):
        return value
    if isinstance(value, dict):
        return FrozenDict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return FrozenList(frozen(v) for v in value)
    return value


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def finite_loads(text: str | bytes) -> Any:
    """``json.loads`` refusing ``NaN``, ``Infinity`` and ``-Infinity`` (JSON
    has no such numbers) with a ``ValueError``, as it refuses any other text
    that is not JSON; callers name the field in their own error."""
    import json  # noqa: PLC0415 - not on import thinkseal's path

    return json.loads(text, parse_constant=_refuse_constant)


def frozen_loads(data: bytes) -> Any:
    """``frozen(json.loads(data))`` for a JSON array or object thinkseal wrote
    itself (a request body read back from its bytes): read by the native
    reader, which builds the read-only containers directly, or by ``json``
    when the native reader refuses the text."""
    value = _core.frozen_json(data, FrozenDict, FrozenList)
    if value is None:
        import json  # noqa: PLC0415 - not on import thinkseal's path

        value = frozen(json.loads(data))
    return value


def freeze_json(value: object, root: str) -> tuple[Any, bytes]:
    """Validate ``value`` as JSON and return ``(frozen copy, RFC 8785 bytes)``.

    Raises ``ValidationError`` naming the path under ``root`` when it is not JSON,
    nests deeper than ``Limits.max_depth`` or holds a string (or key) longer
    than ``Limits.max_string``.
    """
    current = limits()
    canonical = _core.canonical_json(value, root, current.max_depth, current.max_string)
    return _freeze(value), canonical


def check_json(value: object, root: str) -> None:
    """Refuse ``value`` (as ``freeze_json`` would) unless it is JSON within the limits."""
    current = limits()
    _core.canonical_json(value, root, current.max_depth, current.max_string)


def require_object(value: object, root: str) -> None:
    """Refuse anything but a JSON object (a ``dict``) at ``root``."""
    if not isinstance(value, dict):
        raise ValidationError(f"{root}: expected a JSON object (dict), got {type(value).__name__}", path=root)

"""Tool definitions offered to the model, and their dict form in a stored
conversation (docs/persistence.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._content import CacheBreakpoint
from ._errors import ValidationError
from ._frozen import Value, check_str
from ._json import freeze_json, require_object
from ._reader import Reader, reroot

_EMPTY_PARAMETERS: Mapping[str, object] = {"type": "object", "properties": {}}


class Tool(Value):
    """A tool the model may call. ``parameters`` is a JSON Schema object (read-only).
    ``cache`` places a prompt-caching breakpoint after this tool's definition
    (not fingerprinted: moving it unseals nothing)."""

    __slots__ = ("_parameters_jcs", "cache", "description", "name", "parameters")
    __match_args__ = ("name", "description", "parameters", "cache")
    _repr_omit_none = frozenset({"cache"})
    name: str
    description: str
    parameters: Mapping[str, Any]
    cache: CacheBreakpoint | None
    _parameters_jcs: bytes

    def __init__(
        self,
        name: str,
        description: str = "",
        parameters: Mapping[str, object] = _EMPTY_PARAMETERS,
        cache: CacheBreakpoint | None = None,
    ) -> None:
        require_object(parameters, "Tool.parameters")
        frozen, canonical = freeze_json(parameters, "Tool.parameters")
        if cache is not None and not isinstance(cache, CacheBreakpoint):
            raise ValidationError(
                f"Tool.cache: expected a CacheBreakpoint or None, got {type(cache).__name__}", path="Tool.cache"
            )
        self._init(
            name=check_str(name, "Tool.name", blank_ok=False),
            description=check_str(description, "Tool.description"),
            parameters=frozen,
            cache=cache,
            _parameters_jcs=canonical,
        )

    def _args(self) -> tuple[Any, ...]:
        return (self.name, self.description, dict(self.parameters), self.cache)

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.description, self._parameters_jcs, self.cache)


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    data: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    if tool.cache is not None:
        data["cache"] = {"ttl": tool.cache.ttl}
    return data


def tool_from_dict(data: object, path: str) -> Tool:
    r = Reader(data, path)
    try:
        return Tool(
            r.get("name", kind=str),
            r.get("description", default="", kind=str),
            r.get("parameters", default=_EMPTY_PARAMETERS, kind=dict),
            _cache_from(r.get("cache", default=None, kind=(dict, type(None))), f"{path}.cache"),
        )
    except ValidationError as err:
        raise reroot(path, err) from err


def _cache_from(data: object, path: str) -> CacheBreakpoint | None:
    if data is None:
        return None
    return CacheBreakpoint(Reader(data, path).get("ttl", default=None, kind=(str, type(None))))

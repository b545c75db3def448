"""Tool definitions offered to the model, and their dict form in a stored
conversation (docs/persistence.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._errors import ValidationError
from ._frozen import Value, check_str
from ._json import freeze_json, require_object
from ._reader import Reader, reroot

_EMPTY_PARAMETERS: Mapping[str, object] = {"type": "object", "properties": {}}


class Tool(Value):
    """A tool the model may call. ``parameters`` is a JSON Schema object (read-only)."""

    __slots__ = ("_parameters_jcs", "description", "name", "parameters")
    __match_args__ = ("name", "description", "parameters")
    name: str
    description: str
    parameters: Mapping[str, Any]
    _parameters_jcs: bytes

    def __init__(self, name: str, description: str = "", parameters: Mapping[str, object] = _EMPTY_PARAMETERS) -> None:
        require_object(parameters, "Tool.parameters")
        frozen, canonical = freeze_json(parameters, "Tool.parameters")
        self._init(
            name=check_str(name, "Tool.name", blank_ok=False),
            description=check_str(description, "Tool.description"),
            parameters=frozen,
            _parameters_jcs=canonical,
        )

    def _args(self) -> tuple[Any, ...]:
        return (self.name, self.description, dict(self.parameters))

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.description, self._parameters_jcs)


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def tool_from_dict(data: object, path: str) -> Tool:
    r = Reader(data, path)
    try:
        return Tool(
            r.get("name", kind=str),
            r.get("description", default="", kind=str),
            r.get("parameters", default=_EMPTY_PARAMETERS, kind=dict),
        )
    except ValidationError as err:
        raise reroot(path, err) from err

"""Tool definitions offered to the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._frozen import Frozen, check_str
from ._json import freeze_json, require_object

_EMPTY_PARAMETERS: Mapping[str, object] = {"type": "object", "properties": {}}


class Tool(Frozen):
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

    def _key(self) -> tuple[str, str, bytes]:
        return (self.name, self.description, self._parameters_jcs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tool):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> tuple[Any, ...]:
        return (Tool, (self.name, self.description, dict(self.parameters)))

    def __replace__(self, **changes: Any) -> Tool:
        fields = {"name": self.name, "description": self.description, "parameters": self.parameters}
        return Tool(**{**fields, **changes})

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, description={self.description!r}, parameters={dict(self.parameters)!r})"

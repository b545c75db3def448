"""The caller's options and the conversation's response format, checked the
same way by every adapter (the rules per provider: docs/providers.md).

- ``check_reserved``: a body field thinkseal fills itself (from the conversation
  or from ``prepare``'s own arguments) is refused as an option, in one wording.
  Each adapter keeps its table of such fields (most extend ``BODY_FIELDS``),
  frozen, with a hint each.
- ``frozen_options``: the options, reserved ones refused, as frozen JSON, so a
  body does not change when the caller's dict does.
- ``check_number`` / ``check_choice`` / ``check_flag`` / ``check_object``: one
  option value of a documented type.
- ``response_format``: ``Conversation.response_format`` checked against the
  types a provider takes; each adapter then spells it for its wire.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from .._errors import ValidationError
from .._json import freeze_json

# Body fields every adapter but Bedrock's fills from the conversation or from
# prepare()'s own arguments, with where they come from instead.
BODY_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "model": "pass the model as prepare(..., model=...)",
        "messages": "messages come from the conversation",
        "tools": "tools come from Conversation.tools (they are part of the fingerprint)",
        "stream": "pass prepare(..., stream=True)",
    }
)


def check_reserved(options: Mapping[str, Any], table: Mapping[str, str]) -> None:
    """Refuse the first option that ``table`` (field -> where it comes from) names."""
    for key in options:
        hint = table.get(key)
        if hint is not None:
            raise ValidationError(f"{key}: set by thinkseal, not an option; {hint}", path=key)


def frozen_options(options: Mapping[str, Any], reserved: Mapping[str, str]) -> dict[str, Any]:
    """Frozen JSON copies of ``options`` (a value that is not JSON raises at its
    path), after refusing those ``reserved`` names (see ``check_reserved``)."""
    check_reserved(options, reserved)
    return {name: freeze_json(value, name)[0] for name, value in options.items()}


def check_number(
    options: Mapping[str, Any],
    key: str,
    low: float | None = None,
    high: float | None = None,
    *,
    integer: bool = False,
    path: str | None = None,
) -> None:
    """``options[key]``, when given and not null, is a number (an integer if
    ``integer``) within ``low..high`` inclusive."""
    value = options.get(key)
    if value is None:
        return
    where = path or key
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        kind = "an integer" if integer else "a number"
        raise ValidationError(f"{where}: expected {kind}, got {type(value).__name__}", path=where)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"<= {high}" if low is None else f"between {low} and {high}"
        raise ValidationError(f"{where}: must be {bounds}, got {value!r}", path=where)


def check_openai_sampling(options: Mapping[str, Any]) -> None:
    """The OpenAI chat-completions sampling ranges that OpenAI-style providers
    document alike: temperature 0-2, top_p 0-1, both penalties -2-2."""
    check_number(options, "temperature", 0, 2)
    check_number(options, "top_p", 0, 1)
    check_number(options, "frequency_penalty", -2, 2)
    check_number(options, "presence_penalty", -2, 2)


def check_choice(value: object, allowed: Sequence[str], path: str) -> None:
    if value is not None and value not in allowed:
        expected = ", ".join(repr(a) for a in allowed)
        raise ValidationError(f"{path}: expected one of {expected}, got {value!r}", path=path)


def check_flag(value: object, path: str) -> None:
    if value is not None and not isinstance(value, bool):
        raise ValidationError(f"{path}: expected a boolean, got {type(value).__name__}", path=path)


def check_object(options: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = options.get(key)
    if value is not None and not isinstance(value, Mapping):
        raise ValidationError(f"{key}: expected an object, got {type(value).__name__}", path=key)
    return value


# The members a provider may need in a json_schema format: (their type, as said in errors).
_SCHEMA_MEMBERS: Final[Mapping[str, tuple[type, str]]] = MappingProxyType(
    {"name": (str, "a string"), "schema": (Mapping, "a JSON Schema object")}
)
_FORMAT_PATH: Final[str] = "Conversation.response_format"


def response_format(
    fmt: Mapping[str, Any] | None, provider: str, supported: Collection[str], *, needs: Sequence[str] = ()
) -> Mapping[str, Any] | None:
    """``fmt`` (a conversation's ``response_format``, OpenAI's shape) when
    ``provider`` takes its type, one of ``supported``. A ``json_schema`` format
    must hold a ``json_schema`` object with the members in ``needs`` ("name",
    "schema"). Anything else raises ``ValidationError`` at the field's path in
    the conversation."""
    if fmt is None:
        return None
    kind = fmt["type"]
    if kind not in supported:
        raise ValidationError(
            f"response_format.type: {provider} supports {', '.join(sorted(supported))}; got {kind!r}",
            path=f"{_FORMAT_PATH}.type",
        )
    if kind == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, Mapping):
            raise ValidationError(
                f"response_format.json_schema: {provider} needs an object", path=f"{_FORMAT_PATH}.json_schema"
            )
        for member in needs:
            member_type, what = _SCHEMA_MEMBERS[member]
            if not isinstance(spec.get(member), member_type):
                raise ValidationError(
                    f"response_format.json_schema.{member}: {provider} needs {what}",
                    path=f"{_FORMAT_PATH}.json_schema.{member}",
                )
    return fmt

"""Reading stored JSON: ``Conversation.from_json`` and the store's message
rows are read here.

``decode_stored`` first tries the native reader (rust/python/src/load.rs),
which builds the plain messages (text content, the usual parts of assistant
turns, bindings) itself, digests included, and refuses whatever it is not
sure of; a refused text is read by ``strict_loads``, and a message the native
reader left as a dict is built by ``message_from_dict`` as before. Either way
the result is the same objects and the same errors, field for field
(tests/test_load.py compares the two paths).
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from . import _core
from ._binding import Binding, Origin
from ._blocks import Opaque, Redacted, Text
from ._errors import ThinksealError, ValidationError
from ._json import FrozenDict, FrozenList
from ._limits import limits
from ._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_dict,
)

# What load.rs makes objects with, in the order it reads them.
_KIT: tuple[object, ...] = (
    SystemMessage,
    UserMessage,
    ToolMessage,
    AssistantMessage,
    ToolCall,
    Text,
    Redacted,
    Opaque,
    Binding,
    Origin,
    FrozenDict,
    FrozenList,
)


# Whether the native reader is tried first (tests/test_load.py and the fuzz
# target ``from_json`` turn it off to compare the two paths).
_NATIVE = [True]


def use_native(on: bool) -> bool:
    """Turn the native reader on or off (process-wide); returns the previous setting."""
    previous, _NATIVE[0] = _NATIVE[0], on
    return previous


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: with a repeated key, readers
    disagree on which value counts (Python keeps the last, others the first),
    so a stored file could mean one thing here and another elsewhere."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValidationError(f"$: the key {repeated!r} appears twice in one object", path="$")
    return value


def refuse_constant(name: str) -> None:
    raise ValidationError(f"$: {name} is not valid JSON", path="$")


def strict_loads(text: str | bytes | bytearray) -> Any:
    """``json.loads`` refusing repeated keys and ``NaN``/``Infinity``.

    Raises ``ValidationError`` for those; ``ValueError`` (``JSONDecodeError``,
    bad UTF-8, Python's digit limit) and ``RecursionError`` pass through.
    """
    import json  # noqa: PLC0415 - not on import thinkseal's path

    return json.loads(text, parse_constant=refuse_constant, object_pairs_hook=unique_keys)


def _native(text: str | bytes | bytearray) -> Any:
    """``text`` read by the native reader under the current limits (None: refused)."""
    if not _NATIVE[0]:
        return None
    current = limits()
    return _core.load_document(text, _KIT, current.max_depth, current.max_string, current.max_parts)


def message_of(value: Any, path: str) -> Message:
    """A message the native reader built as it is; anything else (the dict it
    left, or a value ``json`` decoded) through ``message_from_dict``."""
    return value if isinstance(value, Message) else message_from_dict(value, path=path)


def messages_of(values: list[Any], path: str) -> list[Message]:
    """``message_of`` of every item of ``values``, item ``i`` at ``path[i]``
    (the path is written only for an item that is not a message already)."""
    if all(map(isinstance, values, repeat(Message))):  # the native reader built them all
        return list(values)
    return [v if isinstance(v, Message) else message_from_dict(v, path=f"{path}[{i}]") for i, v in enumerate(values)]


def native_messages(bodies: list[str] | list[bytes]) -> list[Any] | None:
    """The stored messages ``bodies`` (one JSON object each, all ``str`` or all
    UTF-8 ``bytes``) read by the native reader in one pass: per body a message
    object, or the dict the native reader left to ``message_from_dict``
    (``message_of`` takes both). ``None`` when it refuses the text (bytes that
    are not UTF-8 among them), the bodies mix ``str`` and ``bytes``, or they
    do not make exactly one value each."""
    if not bodies:
        return []
    text: str | bytes
    try:
        if isinstance(bodies[0], bytes):
            text = b'{"messages":[' + b",".join(bodies) + b"]}"
        else:
            text = '{"messages":[' + ",".join(bodies) + "]}"
    except TypeError:  # str and bytes mixed: read one by one by the caller
        return None
    document = _native(text)
    if not isinstance(document, dict) or len(document) != 1:
        return None
    messages = document.get("messages")
    return messages if isinstance(messages, list) and len(messages) == len(bodies) else None


def decode_stored(text: str | bytes | bytearray) -> Any:
    """The JSON value of ``text``, an object's ``messages`` list holding the
    message objects the native reader built (the rest as ``json`` decodes
    them; ``message_of`` takes both). Errors as ``strict_loads``, with
    ``ValueError`` and ``RecursionError`` turned into ``ValidationError`` at ``$``."""
    document = _native(text)
    if document is not None:
        return document
    try:
        return strict_loads(text)
    except ThinksealError:
        raise
    except (ValueError, RecursionError) as err:
        raise ValidationError(f"$: not valid JSON: {err}", path="$") from None

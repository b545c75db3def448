"""Editing a request body in place: the few wire messages the gateway changes
are replaced by their new bytes, and every other byte (the kept messages,
fields thinkseal does not model, the client's own spacing) stays as the client
wrote it. A body with nothing to change is not touched at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import _core
from .._errors import ValidationError
from ..providers._wire import dumps


def spans(raw: bytes, field: str) -> list[tuple[int, int]]:
    """The byte spans of the elements of the top-level list ``field`` of ``raw``
    (which the caller has read as a JSON object with that list)."""
    found = _core.member_spans(raw, field)
    if found is None:
        raise ValidationError(f"{field}: expected a list of messages", path=field)
    return found


class Splice:
    """A replacement for one element that is zero or more elements in its
    place (``edited``): a turn the client wrote as several consecutive items
    (the Responses API's reasoning, message and call items) goes out as
    however many items its new form has."""

    __slots__ = ("elements",)

    def __init__(self, elements: Sequence[object]) -> None:
        self.elements = tuple(elements)

    def __repr__(self) -> str:
        return f"Splice({list(self.elements)!r})"


def edited(raw: bytes, field: str, replacements: Mapping[int, object | None]) -> bytes:
    """``raw`` with the elements of list ``field`` at the given positions
    replaced by the JSON of their new value, removed (None), or replaced by
    the elements of a ``Splice`` (none: removed). Every other byte is kept:
    the untouched elements, the separators between them, and everything
    around the list."""
    if not replacements:
        return raw
    where = spans(raw, field)
    # Each element out, with the original element it stands for.
    out_elements: list[tuple[int, bytes]] = []
    for k, (start, end) in enumerate(where):
        if k not in replacements:
            out_elements.append((k, raw[start:end]))
            continue
        value = replacements[k]
        if isinstance(value, Splice):
            out_elements.extend((k, dumps(element)) for element in value.elements)
        elif value is not None:
            out_elements.append((k, dumps(value)))
    out: list[bytes] = [raw[: where[0][0]]] if where else [raw]
    for n, (_, data) in enumerate(out_elements):
        if n:
            previous = out_elements[n - 1][0]
            # The separator after the element before, as written (within a splice, the one after its original).
            out.append(raw[where[previous][1] : where[previous + 1][0]] if previous + 1 < len(where) else b",")
        out.append(data)
    if where:
        out.append(raw[where[-1][1] :])
    return b"".join(out)


def replaced_member(raw: bytes, key: str, value: object) -> bytes:
    """``raw`` (a JSON object) with the value of its top-level member ``key``
    replaced by ``value``, where it was: the gateway's model map."""
    found = _core.member_span(raw, key)
    if found is None:
        raise ValidationError(f"{key}: the request has none", path=key)
    start, end = found
    return raw[:start] + dumps(value) + raw[end:]

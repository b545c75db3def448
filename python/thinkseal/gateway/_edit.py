"""Editing a request body in place: the few wire messages the gateway changes
are replaced by their new bytes, and every other byte (the kept messages,
fields thinkseal does not model, the client's own spacing) stays as the client
wrote it. A body with nothing to change is not touched at all."""

from __future__ import annotations

from collections.abc import Mapping

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


def edited(raw: bytes, field: str, replacements: Mapping[int, object | None]) -> bytes:
    """``raw`` with the elements of list ``field`` at the given positions
    replaced by the JSON of their new value, or removed (None). Every other
    byte is kept: the untouched elements, the separators between them, and
    everything around the list."""
    if not replacements:
        return raw
    where = spans(raw, field)
    kept = [k for k in range(len(where)) if k not in replacements or replacements[k] is not None]
    out: list[bytes] = [raw[: where[0][0]]] if where else [raw]
    for n, k in enumerate(kept):
        if n:
            previous = kept[n - 1]
            out.append(raw[where[previous][1] : where[previous + 1][0]])  # the separator after it, as written
        start, end = where[k]
        out.append(dumps(replacements[k]) if k in replacements else raw[start:end])
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

"""Claude on Vertex AI (``POST .../publishers/anthropic/models/{model}:rawPredict``).

What Claude on Vertex AI requires, and what thinkseal does about it, is in
docs/providers.md#claude-on-vertex-ai. In short:

- The Messages API without ``model`` in the body (it is in the path, built
  from the ``project`` and ``region``/``location`` options, which never reach
  the body) and with ``anthropic_version: "vertex-2023-10-16"``; no
  ``anthropic-version`` header; betas in the ``anthropic-beta`` header.
- Everything else is the ``anthropic`` adapter's own code: this module's
  ``Adapter`` subclasses it and only routes the request (path, body head,
  headers).
- Its own origin: ``vertex-anthropic`` turns, signatures and ``Native`` blocks
  never cross with ``anthropic``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Final
from urllib.parse import quote

from .._errors import ValidationError
from .._frozen import check_str
from . import anthropic
from ._connection import CLAUDE_REJECTIONS, Connection

# The body's API version on Vertex (Anthropic's "Claude on Vertex AI" page).
VERTEX_VERSION: Final[str] = "vertex-2023-10-16"

_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {
        **anthropic.Adapter.reserved,
        "model": "pass the model as prepare(..., model=...) (it goes in the path)",
        "anthropic_version": f"thinkseal sets it to {VERTEX_VERSION!r}",
        "anthropic_beta": "pass betas=[...] (they go out as the anthropic-beta header)",
    }
)
# RFC 3986 path-segment characters the SDK leaves as they are, less ";" (which
# some servers cut a segment at; the SDK escapes it in the model too).
_SAFE: Final[str] = "!$&'()*+,=:@"


def _segment(value: object, name: str) -> str:
    """A ``project`` or ``region`` option as a path segment."""
    if value is None:
        raise ValidationError(
            f"{name}: required by Claude on Vertex AI (prepare(..., project=..., region=...); it goes in the path)",
            path=name,
        )
    text = check_str(value, name, blank_ok=False)
    if text.strip(".") == "":
        raise ValidationError(f"{name}: {text!r} is not a path segment", path=name)
    return quote(text, safe=_SAFE)


class _Wire(anthropic._Wire):
    """The Messages API's wire under Vertex's provider id (its fragment caches,
    native blocks and error messages)."""

    key = "vertex-anthropic"
    name = "Claude on Vertex AI"


class Adapter(anthropic.Adapter):
    id = _Wire.key
    connection = Connection("https://{location}-aiplatform.googleapis.com", "google", rejections=CLAUDE_REJECTIONS)
    wire: ClassVar[anthropic._Wire] = _Wire()
    reserved: ClassVar[Mapping[str, str]] = _RESERVED

    def route(self, model: str, stream: bool, options: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, str]]:
        project = _segment(options.pop("project", None), "project")
        if "location" in options:
            if "region" in options:
                raise ValidationError("location: the same as region; give one of them", path="location")
            region = _segment(options.pop("location"), "location")
        else:
            region = _segment(options.pop("region", None), "region")
        action = "streamRawPredict" if stream else "rawPredict"
        model_path = f"publishers/anthropic/models/{quote(model, safe=_SAFE)}:{action}"
        path = f"/v1/projects/{project}/locations/{region}/{model_path}"
        return path, {"anthropic_version": VERTEX_VERSION}, {"content-type": "application/json"}


__all__ = ["VERTEX_VERSION", "Adapter"]

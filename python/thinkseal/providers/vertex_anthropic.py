"""Claude on Vertex AI (``POST .../publishers/anthropic/models/{model}:rawPredict``).

What Claude on Vertex AI requires, and what thinkseal does about it (the rules,
their sources and the provider's error strings are in
docs/providers.md#claude-on-vertex-ai; this is how the module implements them):

- Vertex serves Anthropic's Messages API with two differences in the request
  (docs/providers.md, Claude on Vertex AI): the model is not in the body but in
  the endpoint URL, and ``anthropic_version`` is a body field, not a header,
  and must be ``"vertex-2023-10-16"``. So the path is
  ``/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict``
  (``:streamRawPredict`` with ``stream=True``, whose body also says
  ``"stream": true``), relative to the region's host
  (``https://{region}-aiplatform.googleapis.com``; ``global``:
  ``https://aiplatform.googleapis.com``; ``us``/``eu``:
  ``https://aiplatform.{us|eu}.rep.googleapis.com``). Path segments are
  percent-encoded as the official SDK's ``AnthropicVertex`` encodes them (``@``
  of a dated model id stays as it is).
- ``project`` and ``region`` are ``prepare`` options that only route the
  request: they never reach the body, and a missing or blank one raises
  ``ValidationError``. ``region`` is the official SDK's name for it;
  ``location``, the path's (and ``vertex-gemini``'s) name, is taken too (one of
  the two). They are not part of the origin; give ``account=`` to keep the
  turns of different projects apart.
- Headers: no ``anthropic-version``; ``anthropic-beta`` for the ``betas``
  option and the binding-controls beta, as a header (what the official SDK
  sends; a beta given only in the body has been reported ignored by Vertex for
  some features), so the ``anthropic_beta`` body field is refused as an
  option, as are ``model`` and ``anthropic_version``.
- Everything else is the Anthropic Messages API's, and is the ``anthropic``
  adapter's own code (this module only routes it): ``max_tokens`` required,
  system messages, tool pairing, content parts, cache breakpoints, thinking
  replayed part by part only while kept, thinking options checked in Claude's
  wording, ``ReplayError`` for a tool loop whose turn would lose its leading
  thinking (unless ``block_binding`` drops it), ``response_format``, replies,
  reply metadata, streams and deltas.
- Its own origin: ``vertex-anthropic`` is another provider id than
  ``anthropic``, so a turn produced through one is ``origin-mismatch`` for the
  other, and its signatures never cross (Vertex and Anthropic's API are
  separate endpoints; nothing documents that a signature of one holds at the
  other). Likewise a reply block thinkseal does not read is kept as
  ``Native("vertex-anthropic", block)`` and goes back verbatim only to Claude on
  Vertex AI; every other adapter, ``anthropic`` included, gets its text if it
  has any.
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

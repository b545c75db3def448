"""Gemini on Vertex AI: ``POST
/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent``
(``:streamGenerateContent?alt=sse`` with ``stream=True``).

What Vertex AI requires, and what thinkseal does about it (the rules, their
sources and the provider's error strings are in
docs/providers.md#gemini-on-vertex-ai; this is how the module implements them):

- The project, the location and the model live in the path, never in the
  body: ``prepare(conversation, model=..., project="my-project",
  location="us-central1")`` (both required; ``location="global"`` for the
  global endpoint). The base URL is the location's
  (``https://us-central1-aiplatform.googleapis.com``, or
  ``https://aiplatform.googleapis.com`` for ``global``). Credentials are the
  caller's (an OAuth bearer token). Pass an account
  (``thinkseal.provider("vertex-gemini", account=...)``, e.g. the project) to
  keep signatures from crossing projects or credentials.
- The bodies and replies are the Gemini API's (``providers/_gemini.py`` and
  ``providers/_gemini_reply.py``). ``vertex-gemini`` is its own origin: a
  Gemini API turn goes to Vertex unsealed, and the other way round.
- Vertex's own rule, in its wording: ``includeThoughts`` needs thinking on (a
  ``thinkingBudget`` of 0 turns it off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final
from urllib.parse import quote

from .._errors import ValidationError
from ._connection import VERTEX_INVALID_SIGNATURE, Connection
from ._gemini import GeminiProvider, method

__all__ = ["Adapter", "base_url"]

# Project ids (and domain-scoped "example.com:project"), project numbers; locations such as us-central1, global.
_PROJECT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]*")
_LOCATION: Final = re.compile(r"[a-z][a-z0-9-]*")
# Vertex AI's wording (docs/providers.md, Vertex AI).
INCLUDE_THOUGHTS_WITHOUT_THINKING: Final[str] = (
    "Unable to submit request because Thinking_config.include_thoughts is only enabled when thinking is enabled.. "
    "Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)


def base_url(location: str) -> str:
    """The Vertex AI endpoint that ``req.path`` is relative to for ``location``."""
    if location == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def _take(options: dict[str, Any], name: str, pattern: re.Pattern[str]) -> str:
    value = options.pop(name, None)
    if value is None:
        raise ValidationError(
            f"{name}: required by vertex-gemini (it is part of the path); pass prepare(..., {name}=...)", path=name
        )
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise ValidationError(f"{name}: expected a Vertex AI {name} name, got {value!r}", path=name)
    return value


def _include_thoughts(generation: Mapping[str, Any]) -> None:
    thinking = generation.get("thinkingConfig") or {}
    if thinking.get("includeThoughts") is True and thinking.get("thinkingBudget") == 0:
        raise ValidationError(INCLUDE_THOUGHTS_WITHOUT_THINKING, path="generationConfig.thinkingConfig.includeThoughts")


class Adapter(GeminiProvider):
    """Gemini through Vertex AI's publisher-model endpoint."""

    id: ClassVar[str] = "vertex-gemini"
    connection = Connection(
        "https://{location}-aiplatform.googleapis.com", "google", rejections=(VERTEX_INVALID_SIGNATURE,)
    )
    service_checks = (_include_thoughts,)

    def locate(self, model: str, options: dict[str, Any], stream: bool) -> str:
        project = _take(options, "project", _PROJECT)
        location = _take(options, "location", _LOCATION)
        return (
            f"/v1/projects/{project}/locations/{location}/publishers/google/models/{quote(model, safe='')}"
            f"{method(stream)}"
        )

"""The Gemini API's ``generateContent`` (``POST /v1beta/models/{model}:generateContent``,
``:streamGenerateContent?alt=sse`` with ``stream=True``).

What the Gemini API requires, and what thinkseal does about it, is in
docs/providers.md#gemini. In short:

- The model lives in the path (percent-encoded), not in the body; base URL
  ``https://generativelanguage.googleapis.com``.
- Everything else (thought signatures and their dummy value, thought summaries,
  tool calls without ids, function responses, content parts, options) is
  Google's shared ``generateContent`` wire: ``providers/_gemini.py`` and
  ``providers/_gemini_reply.py``, shared with ``vertex-gemini``, which is a
  separate origin: no signature crosses between the two.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final
from urllib.parse import quote

from ._connection import GEMINI_CORRUPTED, Connection
from ._gemini import GeminiProvider, method
from ._gemini_reply import generated_call_id

__all__ = ["BASE_URL", "Adapter", "generated_call_id"]

BASE_URL: Final[str] = "https://generativelanguage.googleapis.com"


class Adapter(GeminiProvider):
    """The Gemini API (Google AI Studio keys)."""

    id: ClassVar[str] = "gemini"
    connection = Connection(
        "https://generativelanguage.googleapis.com",
        "x-goog-api-key",
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        rejections=(GEMINI_CORRUPTED,),
    )

    def locate(self, model: str, options: dict[str, Any], stream: bool) -> str:
        return f"/v1beta/models/{quote(model, safe='')}{method(stream)}"

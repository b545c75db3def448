"""thinkseal inside the OpenAI Agents SDK (``openai-agents``, package ``agents``).

``ThinksealModel(provider_id, model, *, options=None, ledger=None, client=None,
**client_options)`` is an ``agents`` ``Model`` that sends every request of an
``Agent`` run through thinkseal to any thinkseal provider (Claude, Gemini,
OpenAI's Responses API, OpenRouter, ...); ``ThinksealModelProvider(provider_id,
...)`` makes one per model name, for ``RunConfig(model_provider=...)``.

The agent keeps its history as Responses items. Each call converts them to a
``Conversation``, attaches it to the ledger (sealed data recorded earlier is
recognised and replayed where it still holds; the rest goes out unsealed),
sends it, records the reply and returns it as Responses output items, with
the sealed data that the Responses format has no field for (Claude's
signatures and redacted thinking, Gemini's and OpenRouter's opaque blocks) in
reasoning items' ``provider_data``, so it survives ``result.to_input_list()``,
JSON and sessions. docs/frameworks/agents.md has the details.

This module imports ``agents`` (and ``openai``); ``import thinkseal`` does not.
"""

from __future__ import annotations

from ._model import ThinksealModel, ThinksealModelProvider

__all__ = ["ThinksealModel", "ThinksealModelProvider"]

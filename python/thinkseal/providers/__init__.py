"""Provider adapters, one module per wire format. ``thinkseal.provider(id)`` picks one."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from .._errors import ValidationError
from ._base import Built, PreparedRequest, Provider, StreamAccumulator, StreamParser

PROVIDER_IDS: tuple[str, ...] = (
    "anthropic",
    "bedrock",
    "openrouter",
    "deepseek",
    "zai",
    "ollama",
    "mistral",
    "vertex-anthropic",
    "gemini",
    "vertex-gemini",
    "gemini-openai",
    "openai",
    "openai-responses",
)

__all__ = ["PROVIDER_IDS", "Built", "PreparedRequest", "Provider", "StreamAccumulator", "StreamParser", "provider"]


def provider(id: str, account: str | None = None, *, aliases: Mapping[str, str] | None = None) -> Provider:  # noqa: A002
    """The adapter for provider ``id`` (one of ``PROVIDER_IDS``); ``account``
    becomes ``Origin.account`` of every request it prepares. ``aliases`` maps a
    model id to the name its turns are bound under (``Origin.model``), so that
    two ids of one model keep each other's thinking; off by default."""
    if id not in PROVIDER_IDS:
        raise ValidationError(f"provider: unknown id {id!r}; expected one of {', '.join(PROVIDER_IDS)}", path="id")
    if account is not None and not isinstance(account, str):
        raise ValidationError("provider: account must be a string or None", path="account")
    # A module name cannot hold "-": "vertex-anthropic" lives in vertex_anthropic.py.
    module = importlib.import_module(f"{__name__}.{id.replace('-', '_')}")
    adapter: Provider = module.Adapter(account=account or None, aliases=aliases)
    return adapter

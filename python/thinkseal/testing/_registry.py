"""Which emulator serves which provider id, and ``emulate``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType

from ._server import Emulator
from .anthropic import AnthropicEmulator
from .bedrock import BedrockEmulator
from .chat import ChatEmulator
from .gemini import GeminiEmulator
from .gemini_openai import GeminiOpenAIEmulator
from .mistral import MistralEmulator
from .ollama import OllamaEmulator
from .openai_responses import ResponsesEmulator

__all__ = ["EMULATORS", "EMULATOR_IDS", "emulate", "emulator"]

# (port, require_auth) -> a new, unstarted emulator of the provider.
Factory = Callable[[int, bool], Emulator]

EMULATORS: Mapping[str, Factory] = MappingProxyType(
    {
        "anthropic": lambda port, auth: AnthropicEmulator("anthropic", port=port, require_auth=auth),
        "bedrock": lambda port, auth: BedrockEmulator(port=port, require_auth=auth),
        "openrouter": lambda port, auth: ChatEmulator("openrouter", port=port, require_auth=auth),
        "deepseek": lambda port, auth: ChatEmulator("deepseek", port=port, require_auth=auth),
        "zai": lambda port, auth: ChatEmulator("zai", port=port, require_auth=auth),
        "ollama": lambda port, auth: OllamaEmulator(port=port, require_auth=auth),
        "mistral": lambda port, auth: MistralEmulator(port=port, require_auth=auth),
        "vertex-anthropic": lambda port, auth: AnthropicEmulator("vertex-anthropic", port=port, require_auth=auth),
        "gemini": lambda port, auth: GeminiEmulator("gemini", port=port, require_auth=auth),
        "vertex-gemini": lambda port, auth: GeminiEmulator("vertex-gemini", port=port, require_auth=auth),
        "gemini-openai": lambda port, auth: GeminiOpenAIEmulator(port=port, require_auth=auth),
        "openai": lambda port, auth: ChatEmulator("openai", port=port, require_auth=auth),
        "openai-responses": lambda port, auth: ResponsesEmulator(port=port, require_auth=auth),
    }
)
"""Every provider id of ``thinkseal.providers.PROVIDER_IDS`` and how to make its emulator."""

EMULATOR_IDS: tuple[str, ...] = tuple(EMULATORS)
"""The provider ids that have an emulator (all of ``thinkseal.providers.PROVIDER_IDS``)."""


def emulator(provider_id: str, *, port: int = 0, require_auth: bool = True, control: bool = False) -> Emulator:
    """A new, unstarted emulator of ``provider_id`` (``start()`` it, or use it in ``with``)."""
    try:
        make = EMULATORS[provider_id]
    except KeyError:
        raise ValueError(f"no emulator for {provider_id!r}; known: {', '.join(EMULATOR_IDS)}") from None
    made = make(port, require_auth)
    made.control = control
    return made


@contextmanager
def emulate(provider_id: str, *, port: int = 0, require_auth: bool = True, control: bool = False) -> Iterator[Emulator]:
    """The started emulator of ``provider_id`` for the ``with`` block, stopped after it.

    ``port``: 0 (an ephemeral port) or the port to listen on, for suites in
    other languages that need a fixed address. ``require_auth``: answer a
    request without the provider's auth header with its 401. ``control``:
    also serve the test-only control endpoint under ``/_thinkseal`` (scripts
    and faults as JSON, the requests received; docs/testing.md)."""
    with emulator(provider_id, port=port, require_auth=require_auth, control=control) as running:
        yield running

"""Local provider emulators for the adapter tests.

Each emulator is a real HTTP server on 127.0.0.1 (an ephemeral port) that
enforces its provider's thinking rules (signatures bound to the model and the
conversation prefix, tool pairing, the tool-loop leading-thinking rule) and
answers violations with the provider's own error JSON, so the tests can prove
both that thinkseal's requests are accepted and that a naive client's are not.

``EMULATORS`` maps every provider id of ``thinkseal.providers.PROVIDER_IDS`` to
what the cross-provider tests need of that provider (a test asserts it covers
the registry exactly): a new provider is its adapter module, its emulator
module and one entry here.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from thinkseal import ThinkingBlock

from .anthropic import AnthropicEmulator
from .bedrock import BedrockEmulator
from .chat import ChatEmulator
from .gemini import GeminiEmulator
from .gemini import Reply as GeminiReply
from .mistral import MistralEmulator
from .mistral import Reply as MistralReply
from .ollama import OllamaEmulator
from .ollama import Reply as OllamaReply
from .openai_responses import ResponsesEmulator

# The k-th reply's thinking as the provider returns it, and the secrets in it
# (signatures, redacted or opaque data) as they appear in a request body.
Sealed = Callable[[int], tuple[list[ThinkingBlock], list[str]]]


@dataclass(frozen=True)
class Emulated:
    """One provider as the cross-provider tests drive it.

    ``serve()``: a running emulator, as the base URL that ``req.path`` is
    relative to, that answers the next request with a short text reply.
    ``options``: the least options a request needs.
    """

    serve: Callable[[], AbstractContextManager[str]]
    sealed: Sealed
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _claude_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    redacted = base64.b64encode(f"RED-{k}~".encode()).decode()
    return [ThinkingBlock.Text(f"think {k}", f"SIG-{k}~"), ThinkingBlock.Redacted(redacted)], [f"SIG-{k}~", redacted]


def _openrouter_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    item = json.dumps({"type": "reasoning.encrypted", "data": f"OPQ-{k}~", "index": 0}, separators=(",", ":"))
    return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque("openrouter", item)], [f"OPQ-{k}~"]


def _mistral_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    return [ThinkingBlock.Text(f"think {k}", f"MSIG-{k}~")], [f"MSIG-{k}~"]


def _gemini_sealed(provider: str) -> Sealed:
    # A thought summary and the signature that goes on the part after it.
    def sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
        signature = f"GSIG{k}x{provider[0]}"
        marker = json.dumps({"thoughtSignature": signature}, separators=(",", ":"))
        return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque(provider, marker)], [signature]

    return sealed


def _openai_responses_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    # A reasoning item with its summary and its encrypted content.
    item = {"encrypted_content": f"ENC{k}~", "id": f"rs_{k}", "summary": [], "type": "reasoning"}
    return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque("openai-responses", json.dumps(item))], [f"ENC{k}~"]


def _unsigned(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    return [ThinkingBlock.Text(f"think {k}")], []  # plain-text reasoning: nothing sealed


def _started(make: Callable[[], Any]) -> Callable[[], AbstractContextManager[str]]:
    """An emulator whose ``start()`` returns its base URL and ``stop()`` ends it."""

    @contextmanager
    def serve() -> Iterator[str]:
        emulator = make()
        try:
            yield emulator.start()
        finally:
            emulator.stop()

    return serve


def _scripted(make: Callable[[], Any], reply: Callable[[], Any]) -> Callable[[], AbstractContextManager[str]]:
    """A scripted emulator (``queue``, ``start``, ``url``, ``close``) answering one short reply."""

    @contextmanager
    def serve() -> Iterator[str]:
        emulator = make()
        emulator.queue(reply())
        emulator.start()
        try:
            yield emulator.url
        finally:
            emulator.close()

    return serve


def _chat(provider: str) -> Callable[[], AbstractContextManager[str]]:
    @contextmanager
    def serve() -> Iterator[str]:
        with ChatEmulator(provider) as emulator:
            yield emulator.base_url

    return serve


@contextmanager
def _openai_responses() -> Iterator[str]:
    with ResponsesEmulator() as emulator:  # answers with a short text reply
        yield emulator.base_url


# One emulator serves the Gemini API's and Vertex AI's paths.
_GEMINI = _scripted(GeminiEmulator, lambda: GeminiReply(text="Done."))

EMULATORS: Mapping[str, Emulated] = MappingProxyType(
    {
        "anthropic": Emulated(_started(AnthropicEmulator), _claude_sealed, MappingProxyType({"max_tokens": 1024})),
        "bedrock": Emulated(_started(BedrockEmulator), _claude_sealed),
        "openrouter": Emulated(_chat("openrouter"), _openrouter_sealed),
        "deepseek": Emulated(_chat("deepseek"), _unsigned),
        "zai": Emulated(_chat("zai"), _unsigned),
        "ollama": Emulated(_scripted(OllamaEmulator, lambda: OllamaReply(content="Done.")), _unsigned),
        "mistral": Emulated(_scripted(MistralEmulator, lambda: MistralReply(content="Done.")), _mistral_sealed),
        # The same emulator serves Vertex's path (with its own signing key).
        "vertex-anthropic": Emulated(
            _started(AnthropicEmulator),
            _claude_sealed,
            MappingProxyType({"max_tokens": 1024, "project": "test-project", "region": "us-east5"}),
        ),
        "gemini": Emulated(_GEMINI, _gemini_sealed("gemini")),
        "vertex-gemini": Emulated(
            _GEMINI,
            _gemini_sealed("vertex-gemini"),
            MappingProxyType({"project": "test-project", "location": "us-central1"}),
        ),
        "openai": Emulated(_chat("openai"), _unsigned),
        "openai-responses": Emulated(_openai_responses, _openai_responses_sealed),
    }
)

"""Test helpers for code that uses thinkseal: histories whose assistant turns are
bound exactly as a provider's ``PreparedRequest.receive`` binds them, without
calling a provider::

    from thinkseal import AssistantMessage, Conversation, Origin, ThinkingBlock, UserMessage
    from thinkseal.testing import respond

    claude = Origin("anthropic", "claude-sonnet-4-5")
    reply = AssistantMessage("Hello.", thinking=[ThinkingBlock.Text("Greet back.", signature="sig")])
    conv = respond(Conversation([UserMessage("Hi")]), claude, reply)
    assert conv.replay_report(claude)[0].kept

Both helpers bind through ``conversation.replay(origin).bind(reply)``, the call
every provider adapter makes, so such a history replays as a received one
would.

Provider emulators: for every provider id of ``thinkseal.providers.PROVIDER_IDS``,
a real HTTP server on 127.0.0.1 that enforces that provider's thinking rules
(signatures over the prefix and the model, tool pairing, the providers' replay
rules) and answers violations with the provider's own error bodies::

    import thinkseal
    from thinkseal import Conversation, UserMessage
    from thinkseal.testing import Fault, Step, emulate

    with emulate("anthropic") as emu:
        emu.script(Step(thinking="Look it up.", calls=[("lookup", {"q": 1})]))
        req = thinkseal.provider("anthropic").prepare(
            Conversation([UserMessage("Hi")]), model="claude-sonnet-4-5", **emu.thinking_options
        )
        # POST req.content to emu.base_url + req.path with req.headers and an x-api-key

``Step`` scripts one reply (each provider returns its thinking its own way),
``Fault`` injects errors, malformed or truncated answers, delays and hangs,
``rotate_keys()`` makes every seal issued so far stale, ``require_auth`` checks
the provider's auth header. ``Step`` and ``Fault`` have a JSON form
(``to_json``/``from_json``), which ``thinkseal emulate --script FILE`` and the
test-only control endpoint (``emulate(..., control=True)``, under
``/_thinkseal``) take from suites in any language. The pytest fixture ``thinkseal_emulator`` comes
with the ``thinkseal.testing.pytest_plugin`` plugin. docs/testing.md has the
details.

Some emulators also check request bodies against an official SDK's request
types (``openai`` for the OpenAI-style chat, Gemini OpenAI-compatible and Responses emulators,
``mistralai`` for Mistral): that check runs only when that SDK is installed;
every provider rule is enforced without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._binding import Origin
from .._conversation import Conversation
from .._messages import AssistantMessage

if TYPE_CHECKING:
    from ._registry import EMULATOR_IDS, emulate, emulator
    from ._server import Emulator, Fault, Rejection, Request, Response, Step
    from .anthropic import AnthropicEmulator
    from .bedrock import BedrockEmulator
    from .chat import ChatEmulator
    from .gemini import GeminiEmulator
    from .gemini_openai import GeminiOpenAIEmulator
    from .mistral import MistralEmulator
    from .ollama import OllamaEmulator
    from .openai_responses import ResponsesEmulator

# The emulators are imported when first used (the pytest plugin, a submodule,
# stays cheap to import).
_LAZY = {
    "EMULATOR_IDS": "._registry",
    "emulate": "._registry",
    "emulator": "._registry",
    "Emulator": "._server",
    "Fault": "._server",
    "Rejection": "._server",
    "Request": "._server",
    "Response": "._server",
    "Step": "._server",
    "AnthropicEmulator": ".anthropic",
    "BedrockEmulator": ".bedrock",
    "ChatEmulator": ".chat",
    "GeminiEmulator": ".gemini",
    "GeminiOpenAIEmulator": ".gemini_openai",
    "MistralEmulator": ".mistral",
    "OllamaEmulator": ".ollama",
    "ResponsesEmulator": ".openai_responses",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "EMULATOR_IDS",
    "AnthropicEmulator",
    "BedrockEmulator",
    "ChatEmulator",
    "Emulator",
    "Fault",
    "GeminiEmulator",
    "GeminiOpenAIEmulator",
    "MistralEmulator",
    "OllamaEmulator",
    "Rejection",
    "Request",
    "Response",
    "ResponsesEmulator",
    "Step",
    "bind_reply",
    "emulate",
    "emulator",
    "respond",
]


def bind_reply(conversation: Conversation, origin: Origin, reply: AssistantMessage) -> AssistantMessage:
    """``reply`` bound to ``conversation`` as it would be sent to ``origin``
    (as if ``origin``'s provider had just returned it)."""
    return conversation.replay(origin).bind(reply)


def respond(conversation: Conversation, origin: Origin, reply: AssistantMessage) -> Conversation:
    """``conversation`` with ``reply`` appended, bound as ``origin``'s provider would bind it."""
    return conversation.append(bind_reply(conversation, origin, reply))

"""What the OpenAI-shaped gateway tests share: routes to the emulators, the
official ``openai`` client pointed at a base URL (the gateway's route, or the
emulator itself for the control runs without the gateway), and the answer's
thinkseal headers beside the parsed reply.

The gateway itself runs under uvicorn through ``conftest.serve``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import openai

CHAT_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a number up.",
            "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]},
        },
    }
]
RESPONSES_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "lookup",
        "description": "Look a number up.",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "integer"}},
            "required": ["q"],
            "additionalProperties": False,
        },
    }
]


# What a client appends to the provider's base URL as the openai SDK takes it (Mistral's
# SDK base URL has no /v1; the openai SDK's does).
SDK_SUFFIX = {"mistral": "/v1"}


def thinking(emu: Any) -> dict[str, Any]:
    """The emulator's options that turn reasoning on; for Gemini without thought
    summaries, which a client would send back inside the content (see the
    recovery test)."""
    if emu.provider == "gemini-openai":
        return {"extra_body": {"google": {"thinking_config": {"thinking_level": "high"}}}}
    return dict(emu.thinking_options)


def route(emu: Any, provider: str, prefix: str | None = None) -> dict[str, Any]:
    """A gateway route to the emulator ``emu`` of ``provider``."""
    return {"prefix": prefix or f"/{provider}", "provider": provider, "upstream": emu.base_url}


def host_route(emu: Any, provider: str, prefix: str | None = None) -> tuple[dict[str, Any], str]:
    """``route``, with the emulator's host as the upstream (docs/gateway.md's
    other form), and the provider's base path, which a client then puts after
    the route's prefix (``/openrouter/api/v1``)."""
    parts = urlsplit(emu.base_url)
    return {**route(emu, provider, prefix), "upstream": f"{parts.scheme}://{parts.netloc}"}, parts.path


class Client:
    """The ``openai`` client at ``base_url``; ``sent`` keeps the bytes of
    each request body it sent (observed by an httpx hook, not changed)."""

    def __init__(self, base_url: str) -> None:
        self.sent: list[bytes] = []

        def keep(request: httpx.Request) -> None:
            self.sent.append(request.read())

        self.http = httpx.Client(event_hooks={"request": [keep]})
        self.sdk = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0, http_client=self.http)

    def close(self) -> None:
        self.http.close()


class Answer:
    """One answer: its ``status``, the parsed reply (None for an error) and its
    thinkseal headers (None when it came without them)."""

    def __init__(self, status: int, reply: Any, headers: httpx.Headers | None) -> None:
        self.status = status
        self.reply = reply
        self.headers = headers

    @property
    def kept(self) -> int | None:
        return _count(self.headers, "thinkseal-kept")

    @property
    def unsealed(self) -> int | None:
        return _count(self.headers, "thinkseal-unsealed")


def _count(headers: httpx.Headers | None, name: str) -> int | None:
    value = None if headers is None else headers.get(name)
    return None if value is None else int(value)


def ask(create: Callable[..., Any], **kwargs: Any) -> Answer:
    """Call an SDK ``with_raw_response.create`` and return the answer; a
    refusal (the emulator's 4xx, relayed) is an answer too."""
    try:
        raw = create(**kwargs)
    except openai.APIStatusError as err:
        return Answer(err.status_code, None, err.response.headers)
    return Answer(raw.status_code, raw.parse(), raw.headers)

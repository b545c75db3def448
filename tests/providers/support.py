"""Test support shared by the provider tests: driving the official SDKs with a
prepared body, the recorded fixtures, and the checks every prepared request
must pass."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import openai

from thinkseal.testing.chat import sdk_request_errors

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Arguments of an SDK method that are not body fields.
_NOT_BODY = frozenset({"self", "extra_body", "extra_headers", "extra_query", "timeout"})


def sdk_call(create: Callable[..., Any], body: Mapping[str, Any]) -> Any:
    """The SDK method ``create`` with ``body``: the fields it knows as arguments,
    anything else (a provider's own fields) through ``extra_body``."""
    known_names = frozenset(inspect.signature(create).parameters) - _NOT_BODY
    known = {k: v for k, v in body.items() if k in known_names}
    extra = {k: v for k, v in body.items() if k not in known_names}
    return create(**known, extra_body=extra or None)


def sdk_create(client: openai.OpenAI, body: Mapping[str, Any]) -> Any:
    """``client.chat.completions.create`` with ``body`` (see ``sdk_call``)."""
    return sdk_call(client.chat.completions.create, body)


def responses_create(client: openai.OpenAI, body: Mapping[str, Any]) -> Any:
    """``client.responses.create`` with ``body`` (see ``sdk_call``)."""
    return sdk_call(client.responses.create, body)


def fixture(provider: str, name: str) -> Any:
    """A recorded response (``<name>.json``) or stream (``<name>.stream.json``)."""
    return json.loads((FIXTURES / provider / f"{name}.json").read_text(encoding="utf-8"))


def check_request(req: Any, provider: str) -> dict[str, Any]:
    """The checks every prepared chat-completions request must pass: its bytes
    are its body, the path is the provider's, and the body validates against
    the openai SDK's request type once the provider's extensions are removed."""
    assert json.loads(req.content) == req.body
    assert req.path == "/chat/completions"
    errors = sdk_request_errors(req.body, provider)
    assert errors is None, errors
    return dict(req.body)


def assert_recognised(sent: Any, parsed: Any, path: str = "$") -> None:
    """Every field of ``sent`` survives, unchanged, in ``parsed`` (an SDK model's
    dump of it): the SDK's request model knows every field thinkseal sends
    (pydantic models ignore unknown fields, so validating alone proves little)."""
    if isinstance(sent, dict):
        assert isinstance(parsed, dict), f"{path}: the SDK model read {parsed!r}"
        for key, value in sent.items():
            assert key in parsed, f"{path}.{key}: unknown to the SDK model (dropped)"
            assert_recognised(value, parsed[key], f"{path}.{key}")
    elif isinstance(sent, list):
        assert isinstance(parsed, list), f"{path}: the SDK model read {parsed!r}"
        assert len(parsed) == len(sent), f"{path}: the SDK model read {parsed!r}"
        for i, (a, b) in enumerate(zip(sent, parsed, strict=True)):
            assert_recognised(a, b, f"{path}[{i}]")
    else:
        assert sent == parsed, f"{path}: sent {sent!r}, the SDK model read {parsed!r}"

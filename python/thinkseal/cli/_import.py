"""``thinkseal import``: another library's stored history (JSON) as a
thinkseal conversation (``Conversation.to_json()``), through
``thinkseal.interop``.

``FILE`` is a JSON list of messages, or an object with the request's fields:
``messages``/``system``/``tools``/``output_config`` (``anthropic``),
``messages``/``tools``/``response_format`` (``openai``, chat completions),
``input``/``instructions``/``tools``/``text`` (``openai-responses``); for
``pydantic-ai``, what ``ModelMessagesTypeAdapter.dump_json`` writes. Other
fields of a stored request (``model``, ``max_tokens``, ...) are ignored.
Imported sealed thinking is unbound: ``Conversation.rebind(origin)`` vouches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import AssistantMessage
from ._input import InputError, attached, read_json, read_text

__all__ = ["run"]

# format -> (the field holding the messages, the keyword fields the converter takes)
FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "anthropic": ("messages", ("system", "tools", "output_config")),
    "openai": ("messages", ("tools", "response_format")),
    "openai-responses": ("input", ("instructions", "tools", "text")),
}


def _converter(source: str) -> Callable[..., Conversation]:
    if source == "anthropic":
        from ..interop import anthropic  # noqa: PLC0415

        return anthropic.import_messages
    from ..interop import openai  # noqa: PLC0415

    return openai.import_chat if source == "openai" else openai.import_responses


def _request(source: str, data: Any, path: str) -> tuple[Any, dict[str, Any]]:
    """The messages and the converter's keyword arguments in ``data``."""
    key, keywords = FIELDS[source]
    if isinstance(data, list):
        return data, {}
    if not isinstance(data, dict) or key not in data:
        raise InputError(f'{path}: expected a JSON list of messages or an object with "{key}"')
    messages = data[key]
    if source == "openai-responses" and isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]  # input may be a plain prompt
    return messages, {k: data[k] for k in keywords if data.get(k) is not None}


def _pydantic_ai(path: str) -> Conversation:
    try:
        import pydantic  # noqa: PLC0415
        from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: PLC0415
    except ImportError:
        raise InputError("--from pydantic-ai needs pydantic-ai: pip install pydantic-ai-slim") from None
    from ..interop import pydantic_ai  # noqa: PLC0415

    text = read_text(path)
    read_json(path, text)  # not JSON: this command's message, not pydantic's
    try:
        messages = ModelMessagesTypeAdapter.validate_json(text)  # bytes are base64 in this JSON
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InputError(
            f"{path}: not pydantic-ai messages ({err.error_count()} errors; first at {where or '$'}: {first['msg']})"
        ) from None
    return pydantic_ai.import_messages(messages)


def run(args: argparse.Namespace) -> int:
    path = args.file
    try:
        if args.source == "pydantic-ai":
            conversation = _pydantic_ai(path)
        else:
            messages, keywords = _request(args.source, read_json(path), path)
            conversation = _converter(args.source)(messages, **keywords)
    except ValidationError as err:
        raise InputError(f"{path}: {err}") from None
    conversation, recognised = attached(conversation, args.ledger, args.account)
    text = conversation.to_json()
    if args.output is None:
        print(text)
        return 0
    try:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    except OSError as err:
        raise InputError(f"{args.output}: cannot write: {err.strerror or err}") from None
    turns = [m for m in conversation if isinstance(m, AssistantMessage)]
    sealed = sum(1 for m in turns if m.has_sealed_thinking)
    bound = sum(1 for m in turns if m.thinking_binding is not None)
    how = f"ledger: {recognised}" if recognised else "unbound until attached to a ledger or Conversation.rebind"
    print(
        f"thinkseal: wrote {args.output}: {len(conversation)} messages, {len(turns)} assistant turn(s) "
        f"({sealed} with sealed thinking, {bound} bound; {how}), {len(conversation.tools)} tool(s)",
        file=sys.stderr,
    )
    return 0

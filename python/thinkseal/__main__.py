"""``python -m thinkseal``: the replay report of a stored conversation for a target.

With no arguments it reads the bundled example (a Claude tool loop with signed,
redacted and omitted thinking) and decides it for the model that produced it.
Try ``--target deepseek:deepseek-chat`` or ``--edit 1`` to see turns unseal.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from . import AssistantMessage, Conversation, Origin, ThinksealError, UserMessage, provider


def _origin(text: str) -> Origin:
    provider, _, rest = text.partition(":")
    model, _, account = rest.partition(":")
    if not provider or not model:
        raise argparse.ArgumentTypeError("expected PROVIDER:MODEL or PROVIDER:MODEL:ACCOUNT")
    return Origin(provider, model, account or None)


def _load(path: str | None) -> Conversation:
    if path is None:
        data = resources.files("thinkseal.examples").joinpath("weather.json").read_bytes()
    else:
        data = Path(path).read_bytes()
    # Bytes: from_json reports a file that is not UTF-8 as invalid JSON (a ValidationError).
    return Conversation.from_json(data)


def _default_target(conversation: Conversation) -> Origin:
    for message in conversation:
        if isinstance(message, AssistantMessage) and message.thinking_binding is not None:
            return message.thinking_binding.origin
    return Origin("anthropic", "claude-sonnet-4-5")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m thinkseal", description=__doc__.splitlines()[0])
    parser.add_argument(
        "conversation", nargs="?", help="a file written by Conversation.to_json() (default: bundled example)"
    )
    parser.add_argument(
        "--target", type=_origin, help="PROVIDER:MODEL[:ACCOUNT] (default: the origin of the first bound turn)"
    )
    parser.add_argument(
        "--edit", type=int, metavar="INDEX", help="replace message INDEX by an edited user message first"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--body", action="store_true", help="also print the request body the target's provider adapter would send"
    )
    parser.add_argument(
        "--option",
        action="append",
        type=_option,
        default=[],
        metavar="KEY=VALUE",
        help="a request option for --body (VALUE read as JSON, else as a string), e.g. --option project=my-project",
    )
    args = parser.parse_args(argv)
    try:
        conversation = _load(args.conversation)
        if args.edit is not None:
            messages = list(conversation)
            edited = messages[args.edit]
            text = edited.content if isinstance(edited, AssistantMessage) else edited.text
            messages[args.edit] = UserMessage(f"(edited) {text}".strip())
            conversation = conversation.with_messages(messages)
        target = args.target or _default_target(conversation)
        report = conversation.replay_report(target)
        body = _body(conversation, target, dict(args.option)) if args.body else None
    except (ThinksealError, OSError, IndexError) as err:
        print(f"thinkseal: {err}", file=sys.stderr)
        return 2
    if args.json:
        entries = [{"index": e.index, "kept": e.kept, "reason": e.reason} for e in report]
        document: dict[str, object] = {"target": repr(target), "turns": entries}
        if body is not None:
            document["body"] = body
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    print(f"target: {target!r}   messages: {len(conversation)}   assistant turns: {len(report)}")
    for entry in report:
        turn = conversation[entry.index]
        assert isinstance(turn, AssistantMessage)
        mark = "sealed  " if entry.kept else "unsealed"
        summary = turn.content[:50] or ", ".join(f"{c.name}({c.id})" for c in turn.tool_calls)
        print(f"  [{entry.index:>3}] {mark} {entry.reason:<20} {len(turn.thinking)} thinking block(s)  {summary}")
    if body is not None:
        print(json.dumps(body, indent=2, ensure_ascii=False))
    return 0


def _option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def _body(conversation: Conversation, target: Origin, options: dict[str, Any]) -> object:
    """The body ``provider(target.provider)`` prepares for ``target.model`` with
    ``options`` (Claude's required ``max_tokens`` defaults to 4096)."""
    if target.provider in ("anthropic", "vertex-anthropic"):
        options.setdefault("max_tokens", 4096)
    adapter = provider(target.provider, account=target.account)
    return adapter.prepare(conversation, model=target.model, **options).body


if __name__ == "__main__":
    sys.exit(main())

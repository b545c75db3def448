"""``thinkseal report``: which assistant turns the next request to the target
replays sealed and why the others go out unsealed, and whether the adapter
would refuse that request (exit status 1)."""

from __future__ import annotations

import argparse
from typing import Any

from .._conversation import Conversation
from .._errors import ReplayError
from .._messages import AssistantMessage, UserMessage
from .._replay import ReplayReport
from ..providers import provider
from ._input import InputError, attached, default_target, load_conversation, request_options, target_text
from ._output import Out, dumps

__all__ = ["report_rows", "run", "turn_summary"]


def _edited(conversation: Conversation, index: int) -> Conversation:
    messages = list(conversation)
    try:
        edited = messages[index]
    except IndexError:
        raise InputError(f"--edit {index}: no such message (the conversation has {len(messages)})") from None
    text = edited.content if isinstance(edited, AssistantMessage) else getattr(edited, "text", "")
    messages[index] = UserMessage(f"(edited) {text}".strip())
    return conversation.with_messages(messages)


def turn_summary(turn: AssistantMessage, width: int = 50) -> str:
    """The turn's text (cut to ``width``), or its tool calls."""
    text = " ".join(turn.content.split())
    if text:
        return text if len(text) <= width else text[: width - 3] + "..."
    return ", ".join(f"{c.name}({c.id})" for c in turn.tool_calls)


def report_json(conversation: Conversation, report: ReplayReport) -> list[dict[str, Any]]:
    turns = []
    for entry in report:
        turn = conversation[entry.index]
        assert isinstance(turn, AssistantMessage)
        turns.append(
            {
                "index": entry.index,
                "kept": entry.kept,
                "reason": entry.reason,
                "thinking_blocks": len(turn.thinking),
                "summary": turn_summary(turn),
            }
        )
    return turns


def report_rows(out: Out, conversation: Conversation, report: ReplayReport) -> list[list[str]]:
    """The table rows of ``report``: index, replay (kept/unsealed), reason, thinking, content."""
    rows = []
    for entry in report:
        turn = conversation[entry.index]
        assert isinstance(turn, AssistantMessage)
        replay = out.paint("kept", "green") if entry.kept else out.paint("unsealed", "yellow")
        blocks = len(turn.thinking)
        rows.append(
            [
                str(entry.index),
                replay,
                entry.reason,
                f"{blocks} block{'s' if blocks != 1 else ''}",
                turn_summary(turn),
            ]
        )
    return rows


REPORT_HEADERS = (">index", "replay", "reason", "thinking", "content")


def run(args: argparse.Namespace) -> int:
    out = Out()
    conversation, name = load_conversation(args.file)
    conversation, recognised = attached(conversation, args.ledger, args.account)
    if args.edit is not None:
        conversation = _edited(conversation, args.edit)
    target = args.target or default_target(conversation)
    report = conversation.replay_report(target)
    options = request_options(target, args.option)
    adapter = provider(target.provider, account=target.account)
    rejected: ReplayError | None = None
    body: Any = None
    try:
        request = adapter.prepare(conversation, model=target.model, **options)
        body = request.body if args.body else None  # decoded from the bytes: only when shown
    except ReplayError as err:
        rejected = err

    if args.json:
        document: dict[str, Any] = {
            "file": name,
            "target": target_text(target),
            "messages": len(conversation),
            "ledger": recognised,
            "turns": report_json(conversation, report),
            "next_request": {"accepted": True}
            if rejected is None
            else {"accepted": False, "index": rejected.index, "reason": rejected.reason, "error": str(rejected)},
        }
        if args.body and body is not None:
            document["body"] = body
        out.json(document)
        return 0 if rejected is None else 1

    kept = sum(1 for e in report if e.kept)
    out.line(
        f"{out.paint(name, 'bold')}  target {out.paint(target_text(target), 'cyan')}  "
        f"{len(conversation)} messages, {len(report)} assistant turn{'' if len(report) == 1 else 's'}, "
        f"{kept} replayed sealed" + (f"; ledger: {recognised}" if recognised else "")
    )
    if len(report):
        out.table(REPORT_HEADERS, report_rows(out, conversation, report))
    if rejected is None:
        out.line(f"next request: {out.paint('accepted', 'green')}")
    else:
        verdict = out.paint("would be rejected", "red", "bold")
        out.line(f"next request: {verdict} (turn {rejected.index}, {rejected.reason})")
        out.line(f"  {rejected}")
    if args.body and body is not None:
        out.line(dumps(body))
    return 0 if rejected is None else 1

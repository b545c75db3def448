"""thinkseal's stream (typed deltas, then the ``Reply``) as the Responses
stream events openai-agents' Runner takes: ``response.created``, a delta
event per delta (text, reasoning text, function call arguments), then one
``response.output_item.done`` per output item and ``response.completed``
with the whole ``Response``, whose output the Runner acts on."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ..._reply import Reply, TextDelta, ThinkingDelta, ToolCallDelta
from ._items import FAKE_ID, RESPONSES

if TYPE_CHECKING:
    from agents.items import TResponseStreamEvent

    from ..._messages import AssistantMessage
    from ..._reply import Delta


async def events(
    items: AsyncIterator[Delta | Reply],
    provider_id: str,
    model: str,
    to_output: Callable[[AssistantMessage], list[Any]],
) -> AsyncIterator[TResponseStreamEvent]:
    from openai.types.responses import (  # noqa: PLC0415
        Response,
        ResponseCompletedEvent,
        ResponseCreatedEvent,
        ResponseFunctionCallArgumentsDeltaEvent,
        ResponseOutputItemDoneEvent,
        ResponseReasoningSummaryTextDeltaEvent,
        ResponseReasoningTextDeltaEvent,
        ResponseTextDeltaEvent,
    )

    from ._model import usage_of  # noqa: PLC0415 - the one usage mapping

    sequence = 0

    def seq() -> int:
        nonlocal sequence
        sequence += 1
        return sequence - 1

    def response(output: list[Any], usage: Any = None) -> Any:
        return Response(
            id=FAKE_ID,
            created_at=time.time(),
            model=model,
            object="response",
            output=output,
            tool_choice="auto",
            tools=[],
            parallel_tool_calls=False,
            usage=usage,
        )

    # Each block or call gets an output index in the order it first streams, as the items will be laid out.
    slots: dict[tuple[str, int], int] = {}

    def slot(kind: str, index: int) -> int:
        return slots.setdefault((kind, index), len(slots))

    yield ResponseCreatedEvent(type="response.created", response=response([]), sequence_number=seq())
    async for item in items:
        if isinstance(item, TextDelta):
            yield ResponseTextDeltaEvent(
                type="response.output_text.delta",
                item_id=FAKE_ID,
                output_index=slot("text", item.index),
                content_index=0,
                delta=item.text,
                logprobs=[],
                sequence_number=seq(),
            )
        elif isinstance(item, ThinkingDelta):
            at = slot("thinking", item.index)
            if provider_id == RESPONSES:  # OpenAI streams its reasoning summary
                yield ResponseReasoningSummaryTextDeltaEvent(
                    type="response.reasoning_summary_text.delta",
                    item_id=FAKE_ID,
                    output_index=at,
                    summary_index=0,
                    delta=item.text,
                    sequence_number=seq(),
                )
            else:
                yield ResponseReasoningTextDeltaEvent(
                    type="response.reasoning_text.delta",
                    item_id=FAKE_ID,
                    output_index=at,
                    content_index=0,
                    delta=item.text,
                    sequence_number=seq(),
                )
        elif isinstance(item, ToolCallDelta):
            at = slot("call", item.index)
            if item.arguments:
                yield ResponseFunctionCallArgumentsDeltaEvent(
                    type="response.function_call_arguments.delta",
                    item_id=FAKE_ID,
                    output_index=at,
                    delta=item.arguments,
                    sequence_number=seq(),
                )
        else:
            output = to_output(item.message)
            for index, done in enumerate(output):
                yield ResponseOutputItemDoneEvent(
                    type="response.output_item.done", item=done, output_index=index, sequence_number=seq()
                )
            counts = usage_of(item.usage, provider_id)
            usage = {
                "input_tokens": counts.input_tokens,
                "input_tokens_details": counts.input_tokens_details.model_dump(),
                "output_tokens": counts.output_tokens,
                "output_tokens_details": {"reasoning_tokens": counts.output_tokens_details.reasoning_tokens},
                "total_tokens": counts.total_tokens,
            }
            yield ResponseCompletedEvent(
                type="response.completed", response=response(output, usage), sequence_number=seq()
            )

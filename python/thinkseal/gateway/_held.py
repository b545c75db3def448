"""Conversations the gateway decided before, kept so that the next request of
the same session decides only its new turns: an agent re-sends its history
with one more step, the read cache gives the very same message objects for the
same bytes (and the ledger the same bound copies of its turns), and a
conversation made from a held one by ``with_messages`` keeps the held one's
replay decisions for the leading messages that are the same objects.

A held conversation is found by a length and the identity of its message
at that length (its end, and its last assistant turn); holding the conversation holds that message, so the identity
cannot be taken by another object while it is held. Bounded, least recently used
first out."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

from .._conversation import Conversation
from .._messages import AssistantMessage, Message

DEFAULT_SIZE: Final[int] = 4_096  # conversations (their messages are shared with the read cache)


class HeldConversations:
    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._held: OrderedDict[tuple[int, int], Conversation] = OrderedDict()

    def resume(self, conversation: Conversation) -> Conversation:
        """``conversation``, made from the longest held conversation whose last
        message it holds at the same place (with that one's tools and response
        format), so its replay decisions are reused; and held in its place."""
        items = conversation.messages
        resumed = conversation
        for length in range(len(items), 0, -1):
            base = self._held.get((length, id(items[length - 1])))
            if base is None:
                continue
            if base.tools == conversation.tools and base.response_format == conversation.response_format:
                resumed = base.with_messages(items)
                self._forget(base)  # the session has moved on: one conversation held per session
            break
        for key in _keys(items):
            self._held[key] = resumed
        while len(self._held) > self.size:
            self._held.popitem(last=False)
        return resumed

    def __len__(self) -> int:
        return len(self._held)

    def _forget(self, conversation: Conversation) -> None:
        for key in _keys(conversation.messages):
            if self._held.get(key) is conversation:
                del self._held[key]


def _keys(items: Sequence[Message]) -> list[tuple[int, int]]:
    """Where a conversation is held: by its end and by its last assistant turn
    (the next request adds to it, or sends what follows that turn differently:
    a retried prompt)."""
    return [(length, id(items[length - 1])) for length in {len(items), _through_last_turn(items)} if length > 0]


def _through_last_turn(items: Sequence[Message]) -> int:
    """The length of ``items`` up to and with its last assistant turn (0: none)."""
    for i in range(len(items) - 1, -1, -1):
        if isinstance(items[i], AssistantMessage):
            return i + 1
    return 0

"""Helpers for tests: bind a reply the way a provider's ``receive`` does.

Not part of the public API; provider adapters call ``Replay.bind`` themselves.
"""

from __future__ import annotations

from ._binding import Origin
from ._conversation import Conversation
from ._messages import AssistantMessage


def bind_reply(conversation: Conversation, origin: Origin, reply: AssistantMessage) -> AssistantMessage:
    """``reply`` bound to ``conversation`` as it would be sent to ``origin``."""
    return conversation.replay(origin).bind(reply)


def respond(conversation: Conversation, origin: Origin, reply: AssistantMessage) -> Conversation:
    """``conversation`` with ``reply`` appended, bound as a provider would bind it."""
    return conversation.append(bind_reply(conversation, origin, reply))

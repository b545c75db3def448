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
would. Provider emulators will join them here.
"""

from __future__ import annotations

from ._binding import Origin
from ._conversation import Conversation
from ._messages import AssistantMessage

__all__ = ["bind_reply", "respond"]


def bind_reply(conversation: Conversation, origin: Origin, reply: AssistantMessage) -> AssistantMessage:
    """``reply`` bound to ``conversation`` as it would be sent to ``origin``
    (as if ``origin``'s provider had just returned it)."""
    return conversation.replay(origin).bind(reply)


def respond(conversation: Conversation, origin: Origin, reply: AssistantMessage) -> Conversation:
    """``conversation`` with ``reply`` appended, bound as ``origin``'s provider would bind it."""
    return conversation.append(bind_reply(conversation, origin, reply))

"""LangChain: ``ChatThinkseal``, a ``langchain_core`` chat model that sends
through thinkseal (its ledger recognising the sealed thinking LangChain hands
back), and converters between LangChain messages and thinkseal's:
``import_messages(messages) -> Conversation``, ``export_message(message_or_reply)
-> AIMessage``, ``export_messages(conversation) -> list[BaseMessage]``.

Importing this module imports ``langchain_core``; ``import thinkseal`` does not.
docs/frameworks/langchain.md has the block layout and the scenarios.
"""

from __future__ import annotations

from ._convert import export_message, export_messages, import_messages
from ._model import ChatThinkseal

__all__ = ["ChatThinkseal", "export_message", "export_messages", "import_messages"]

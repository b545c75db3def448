"""LiteLLM: ``ThinksealCallback``, a LiteLLM callback (SDK and proxy) that
checks each request's history against the seal ledger before LiteLLM sends
it, takes out the sealed thinking that no longer holds, and records each
reply's sealed data; and ``import_messages``, LiteLLM's chat messages (with
Claude's ``thinking_blocks``) as a ``Conversation``.

Importing this module imports ``litellm``. See docs/frameworks/litellm.md.
"""

from __future__ import annotations

from ._callback import ThinksealCallback
from ._convert import import_messages, import_reply

__all__ = ["ThinksealCallback", "import_messages", "import_reply"]

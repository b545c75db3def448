"""thinkseal: keep an LLM's thinking exactly as each provider returned it, and
replay it only where it still holds.

See README.md for a tour and docs/api.md for the contract.
"""

from __future__ import annotations

from ._binding import FINGERPRINT_VERSION, Binding, Origin
from ._blocks import ThinkingBlock
from ._content import CacheBreakpoint, ContentPart, Document, Image, Native
from ._conversation import Conversation
from ._errors import ReplayError, ResponseError, ThinksealError, ValidationError
from ._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_dict,
    message_to_dict,
)
from ._replay import Reason, ReasonName, Replay, ReplayEntry, ReplayReport
from ._reply import Delta, Reply, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from ._tool import Tool
from .providers import PreparedRequest, provider

__version__ = "0.1.0"

__all__ = [
    "FINGERPRINT_VERSION",
    "AssistantMessage",
    "Binding",
    "CacheBreakpoint",
    "ContentPart",
    "Conversation",
    "Delta",
    "Document",
    "Image",
    "Message",
    "Native",
    "Origin",
    "PreparedRequest",
    "Reason",
    "ReasonName",
    "Replay",
    "ReplayEntry",
    "ReplayError",
    "ReplayReport",
    "Reply",
    "ResponseError",
    "SystemMessage",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ThinksealError",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolMessage",
    "Usage",
    "UserMessage",
    "ValidationError",
    "message_from_dict",
    "message_to_dict",
    "provider",
]

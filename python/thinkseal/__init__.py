"""thinkseal: keep an LLM's thinking exactly as each provider returned it, and
replay it only where it still holds.

See README.md for a tour and docs/api.md for the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._binding import FINGERPRINT_VERSION, Binding, Origin
from ._blocks import ThinkingBlock
from ._content import CacheBreakpoint, ContentPart, Document, Image, Native
from ._conversation import Conversation
from ._errors import ConflictError, ProviderError, ReplayError, ResponseError, ThinksealError, ValidationError
from ._limits import DEFAULT_LIMITS, Limits, limits, set_limits
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
from ._replay import Replay, ReplayEntry, ReplayReport
from ._reply import Delta, Recovery, Reply, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from ._tool import Tool
from ._walk import Reason, ReasonName

if TYPE_CHECKING:
    from .client import AsyncClient, Client
    from .ledger import AsyncLedger, Attached, Ledger
    from .providers import PreparedRequest, provider

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_LIMITS",
    "FINGERPRINT_VERSION",
    "AssistantMessage",
    "AsyncClient",
    "AsyncLedger",
    "Attached",
    "Binding",
    "CacheBreakpoint",
    "Client",
    "ConflictError",
    "ContentPart",
    "Conversation",
    "Delta",
    "Document",
    "Image",
    "Ledger",
    "Limits",
    "Message",
    "Native",
    "Origin",
    "PreparedRequest",
    "ProviderError",
    "Reason",
    "ReasonName",
    "Recovery",
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
    "limits",
    "message_from_dict",
    "message_to_dict",
    "provider",
    "set_limits",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use, so ``import thinkseal`` stays light (tests/interop/test_imports.py):
    # the clients import httpx, the ledger logging, and the adapters are needed only once a
    # request is prepared.
    if name in ("Client", "AsyncClient"):
        package = "client"
    elif name in ("Ledger", "AsyncLedger", "Attached"):
        package = "ledger"
    elif name in ("provider", "PreparedRequest", "providers"):
        package = "providers"
    else:
        raise AttributeError(f"module 'thinkseal' has no attribute {name!r}")
    # Not ``from . import providers``: that asks this function for "providers" first.
    from importlib import import_module  # noqa: PLC0415

    module = import_module(f"{__name__}.{package}")
    value = module if name == package else getattr(module, name)
    globals()[name] = value  # later look-ups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

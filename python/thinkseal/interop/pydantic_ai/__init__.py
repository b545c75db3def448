"""pydantic-ai: ``ModelMessage`` lists to a ``Conversation`` and back
(``import_messages``, ``import_history``, ``export_messages``; ``_convert``),
and ``ThinksealModel``, a pydantic-ai ``Model`` that sends an agent's requests
through thinkseal (``_model``).

Importing this package imports no pydantic-ai: the converters import it
inside their functions, and ``ThinksealModel`` (whose class derives from
pydantic-ai's ``Model``) is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._convert import Dropped, ImportedHistory, export_messages, import_history, import_messages

if TYPE_CHECKING:
    from ._model import ThinksealModel

__all__ = ["Dropped", "ImportedHistory", "ThinksealModel", "export_messages", "import_history", "import_messages"]


def __getattr__(name: str) -> Any:
    if name == "ThinksealModel":
        from ._model import ThinksealModel  # noqa: PLC0415 - imports pydantic-ai

        return ThinksealModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Fixture loading for the interop tests (the recorded provider responses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent.parent / "providers" / "fixtures"


def fixture(provider: str, name: str) -> Any:
    return json.loads((FIXTURES / provider / name).read_text())

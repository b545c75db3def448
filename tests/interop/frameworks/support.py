"""What the framework adapters' tests share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class Refusals:
    """The statuses of the 4xx answers an emulator gave since this was made
    (or last cleared), read live from its public ``rejections``."""

    def __init__(self, emu: Any) -> None:
        self._emu = emu
        self._start = len(emu.rejections)

    def _since(self) -> list[int]:
        return [refused.status for refused in self._emu.rejections[self._start :]]

    def __iter__(self) -> Iterator[int]:
        return iter(self._since())

    def __len__(self) -> int:
        return len(self._since())

    def __eq__(self, other: object) -> bool:
        return self._since() == other

    __hash__ = None  # type: ignore[assignment]

    def clear(self) -> None:
        self._start = len(self._emu.rejections)

    def __repr__(self) -> str:
        return f"Refusals({self._since()!r})"

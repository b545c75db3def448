"""Output rendering of the ``thinkseal`` command: colour (ANSI codes, only on
a terminal and never when ``NO_COLOR`` is set), aligned tables and JSON."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, Final, TextIO

__all__ = ["Out", "colour_enabled", "dumps", "visible_len"]

_CODES: Final = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")


def colour_enabled(stream: TextIO) -> bool:
    """Colour only on a terminal, and not when ``NO_COLOR`` is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # a closed stream
        return False


def visible_len(text: str) -> int:
    """The width of ``text`` on screen (colour codes take none)."""
    return len(_ANSI.sub("", text))


def dumps(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as JSON text (non-ASCII kept)."""
    return json.dumps(value, indent=indent, ensure_ascii=False)


class Out:
    """Where a command writes: ``stream`` (default: ``sys.stdout`` at the time
    of the call), painted when ``colour`` (default: ``colour_enabled(stream)``)."""

    def __init__(self, stream: TextIO | None = None, *, colour: bool | None = None) -> None:
        self.stream = sys.stdout if stream is None else stream
        self.colour = colour_enabled(self.stream) if colour is None else colour

    def paint(self, text: str, *styles: str) -> str:
        """``text`` in ``styles`` (``"bold"``, ``"red"``, ...) when colour is on."""
        if not self.colour or not styles or not text:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def line(self, text: str = "") -> None:
        print(text, file=self.stream)

    def json(self, value: Any, *, indent: int | None = 2) -> None:
        """``value`` as JSON, never painted (it is for programs)."""
        print(dumps(value, indent=indent), file=self.stream)

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]], *, indent: int = 2) -> None:
        """Rows under ``headers``, columns aligned; cells may already be painted.
        A column whose header starts with ``>`` is right-aligned."""
        right = [h.startswith(">") for h in headers]
        names = [h.lstrip(">") for h in headers]
        widths = [visible_len(n) for n in names]
        for row in rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], visible_len(cell))

        def render(cells: Sequence[str], last_free: bool) -> str:
            out = []
            for i, cell in enumerate(cells):
                pad = " " * (widths[i] - visible_len(cell))
                if right[i]:
                    out.append(pad + cell)
                elif i == len(cells) - 1 and last_free:
                    out.append(cell)
                else:
                    out.append(cell + pad)
            return " " * indent + "  ".join(out)

        self.line(render([self.paint(n, "dim") for n in names], True).rstrip())
        for row in rows:
            self.line(render(row, True))

"""What a ledger keeps and how an entry is checked (docs/fingerprint.md §11).

A bound turn's **sealed data** are the signatures of its signed thinking
blocks, the data of its redacted and opaque blocks and the JSON text of its
native parts. Each datum's **key** is a keyed BLAKE3 hash of the datum, its
kind, its provider (for opaque and native data) and the account it is scoped
to; the entry under that key is the turn's binding (as text) with a **check**
over key and binding, so that a truncated or edited entry is noticed. Nothing
else is stored: no content, no sealed bytes, no credential.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from .. import _core
from .._binding import Binding
from .._blocks import ThinkingBlock
from .._content import Native
from .._messages import AssistantMessage

# The binding text of an entry whose datum was recorded under two different
# bindings: it parses as no binding, so the turn is never re-bound from it.
CONFLICT: Final[str] = "!conflict"
# How many verified entries a ledger remembers (about 200 bytes each).
VERIFIED_MEMO: Final[int] = 65_536


class Datum(NamedTuple):
    """One sealed datum: ``kind`` ("signature", "redacted", "opaque",
    "native"), the ``provider`` it belongs to (None for signatures and redacted
    data, which name none), and the datum itself."""

    kind: str
    provider: str | None
    data: str


class Entry(NamedTuple):
    """A stored entry: the binding's text (or ``CONFLICT``), its check, and
    when it expires (seconds since the epoch; None: never)."""

    binding: str
    check: bytes
    expires: float | None


def sealed_data(turn: AssistantMessage) -> list[Datum]:
    """The sealed data of ``turn``, in the order of its parts."""
    data: list[Datum] = []
    for part in turn.parts:
        if isinstance(part, ThinkingBlock.Text):
            if part.signature:
                data.append(Datum("signature", None, part.signature))
        elif isinstance(part, ThinkingBlock.Redacted):
            data.append(Datum("redacted", None, part.data))
        elif isinstance(part, ThinkingBlock.Opaque):
            data.append(Datum("opaque", part.provider, part.data))
        elif isinstance(part, Native):
            data.append(Datum("native", part.provider, part.data))
    return data


def keys(account: str | None, data: Sequence[Datum]) -> list[bytes]:
    """The ledger keys of ``data`` under ``account``."""
    return list(_core.ledger_keys(account or None, [(d.kind, d.provider, d.data) for d in data]))


class Checker:
    """Makes and verifies entry checks for one ledger secret."""

    __slots__ = ("_key", "_verified")

    def __init__(self, secret: bytes) -> None:
        self._key = _core.ledger_entry_key(secret)
        # Entries verified and parsed before (an agent's history is looked up again
        # on every step): the check is a function of key, binding and secret, so a
        # stored entry read again verifies the same. Bounded: cleared when full.
        self._verified: dict[tuple[bytes, str, bytes], Binding | str] = {}

    def check(self, key: bytes, binding: str) -> bytes:
        return bytes(_core.ledger_check(self._key, key, binding))

    def binding_of(self, key: bytes, entry: Entry | None, now: float) -> Binding | str | None:
        """The binding ``entry`` holds for ``key``; None when there is no live
        entry; ``"invalid"`` when the entry does not verify or parse, and
        ``"conflict"`` when the datum was recorded under two bindings."""
        if entry is None or (entry.expires is not None and entry.expires <= now):
            return None
        memo = (key, entry.binding, entry.check)
        found = self._verified.get(memo)
        if found is None:
            found = self._verify(key, entry)
            if len(self._verified) >= VERIFIED_MEMO:
                self._verified.clear()
            self._verified[memo] = found
        return found

    def _verify(self, key: bytes, entry: Entry) -> Binding | str:
        if entry.check != self.check(key, entry.binding):
            return "invalid"
        if entry.binding == CONFLICT:
            return "conflict"
        try:
            return Binding.parse(entry.binding)
        except ValueError:  # thinkseal.ValidationError included
            return "invalid"

"""``Origin`` (who answered) and ``Binding`` (the fingerprint of what they answered)."""

from __future__ import annotations

import re
from typing import Any

from . import _core
from ._errors import ValidationError
from ._frozen import Value, check_str

FINGERPRINT_VERSION: int = _core.FINGERPRINT_VERSION


class Origin(Value):
    """The provider adapter id, the configured model and, optionally, the account.

    ``model`` is the model the request was configured with, not the one a router
    reports having served. An empty ``account`` is the same as ``None``.
    """

    __slots__ = ("account", "model", "provider")
    __match_args__ = ("provider", "model", "account")
    _repr_omit_none = frozenset({"account"})
    provider: str
    model: str
    account: str | None

    def __init__(self, provider: str, model: str, account: str | None = None) -> None:
        self._init(
            provider=check_str(provider, "Origin.provider", blank_ok=False),
            model=check_str(model, "Origin.model", blank_ok=False),
            account=None if account is None else (check_str(account, "Origin.account") or None),
        )


_HEX64 = "[0-9a-f]{64}"
# Compiled on first use (``re`` keeps it), not on ``import thinkseal``: a quarter
# of a millisecond, and most processes never parse a binding.
_BINDING_PATTERN = rf"thinkseal-binding/([0-9]{{1,9}});([^;]*);([^;]*);([^;]*);({_HEX64});({_HEX64})"


# What percent-encoding leaves as it is: most provider ids and model names are
# only this, and need no urllib (which costs milliseconds of ``import thinkseal``).
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:@/+")


def _field(text: str) -> str:
    if _PLAIN.issuperset(text):
        return text
    from urllib.parse import quote  # noqa: PLC0415

    return quote(text, safe="-._~:@/+")


def _unfield(text: str) -> str:
    if "%" not in text:
        return text
    from urllib.parse import unquote  # noqa: PLC0415

    return unquote(text)


class Binding(Value):
    """The fingerprint of the request a sealed turn answered, and of the turn itself.

    Opaque to users: compare, store (``str(b)``, ``Binding.parse``) and read
    ``.origin`` and ``.version``. It holds two digests, kept apart so a replay
    report can say which one no longer matches: ``prefix`` over the version,
    origin, request context and every earlier message as sent, and ``turn``
    over the turn as received. It never contains thinking, signatures or data.
    """

    __slots__ = ("origin", "prefix", "turn", "version")
    __match_args__ = ("origin", "version", "prefix", "turn")
    origin: Origin
    version: int
    prefix: bytes
    turn: bytes

    def __init__(self, origin: Origin, version: int, prefix: bytes, turn: bytes) -> None:
        if not isinstance(origin, Origin):
            raise ValidationError("Binding.origin: expected Origin", path="Binding.origin")
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise ValidationError("Binding.version: expected a non-negative int", path="Binding.version")
        for name, digest in (("prefix", prefix), ("turn", turn)):
            if not isinstance(digest, bytes) or len(digest) != 32:
                raise ValidationError(f"Binding.{name}: expected 32 bytes", path=f"Binding.{name}")
        self._init(origin=origin, version=version, prefix=prefix, turn=turn)

    def __str__(self) -> str:
        o = self.origin
        account = "" if o.account is None else "=" + _field(o.account)
        return (
            f"thinkseal-binding/{self.version};{_field(o.provider)};{_field(o.model)};"
            f"{account};{self.prefix.hex()};{self.turn.hex()}"
        )

    @classmethod
    def parse(cls, text: str) -> Binding:
        """The binding written by ``str(binding)``; ``ValidationError`` if ``text`` is not one."""
        match = re.fullmatch(_BINDING_PATTERN, text) if isinstance(text, str) else None
        if match is None:
            raise ValidationError(f"Binding: not a thinkseal binding: {text!r:.80}", path="Binding")
        version, provider, model, account, prefix, turn = match.groups()
        if account and not account.startswith("="):
            raise ValidationError(f"Binding: malformed account field in {text!r:.80}", path="Binding")
        origin = Origin(_unfield(provider), _unfield(model), _unfield(account[1:]) if account else None)
        return cls(origin, int(version), bytes.fromhex(prefix), bytes.fromhex(turn))

    def __reduce__(self) -> tuple[Any, ...]:
        # Through the text form, so a pickle is checked as strictly as a stored binding.
        return (Binding.parse, (str(self),))

    def __repr__(self) -> str:
        return f"Binding({str(self)!r})"

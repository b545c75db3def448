"""Reading a secret argument (the ledger's ``secret``, a store's
``fragment_secret``): the bytes a key is derived from."""

from __future__ import annotations

from ._errors import ValidationError


def secret_bytes(secret: object, name: str) -> bytes:
    """``secret`` as bytes (None: empty, no secret; a str: its UTF-8).
    ``ValidationError`` names ``name`` for another type or a str that is not
    valid Unicode (a lone surrogate)."""
    if secret is None:
        return b""
    if isinstance(secret, str):
        try:
            return secret.encode()
        except UnicodeEncodeError:
            raise ValidationError(f"{name}: not valid Unicode (a lone surrogate)", path=name) from None
    if isinstance(secret, (bytes, bytearray)):
        return bytes(secret)
    raise ValidationError(f"{name}: expected str or bytes, got {type(secret).__name__}", path=name)

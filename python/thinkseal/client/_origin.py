"""Where a client's credentials go: to the origin (scheme, host and port) of
its base URL, and nowhere else.

- ``base_url`` must be an ``http://`` or ``https://`` URL with a host and no
  credentials of its own (``user:password@``): httpx would send those as Basic
  auth in place of the provider's key, and they would show in ``repr``.
- A redirect answer is followed only when all of these hold: the httpx client
  given as ``http_client`` follows redirects (``follow_redirects=True``), the
  status keeps the method and the body (307, 308), the target has the same
  origin as the URL sent, and that client's ``max_redirects`` is not used up.
  Each hop is a new request: the body is sent again from the start and the
  credentials are signed for the new URL (SigV4 signs the path). Any other
  redirect is a ``ProviderError`` of type ``"redirect"`` that says why, so no
  header the client sets (the provider's key, a SigV4 or OAuth signature, the
  caller's ``headers=``) and no request body (the conversation) reaches
  another origin. Refusing, rather than following without the credentials, is
  the safer choice: the body itself is the caller's data.

The target is resolved and compared with httpx's own URL parser, the one that
decides where the connection goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from .._errors import ProviderError, ValidationError
from ._auth import lowered
from ._errors import request_id

if TYPE_CHECKING:
    import httpx

REDIRECT: Final[str] = "redirect"  # ProviderError.type of a redirect not followed
REDIRECT_STATUSES: Final[frozenset[int]] = frozenset({301, 302, 303, 307, 308})
# 301, 302 and 303 turn a POST into a GET without its body (httpx, browsers): never an answer.
KEEPS_BODY: Final[frozenset[int]] = frozenset({307, 308})
_DEFAULT_PORTS: Final[Mapping[str, int]] = {"http": 80, "https": 443}
_SHOWN: Final[int] = 200  # characters of a hostile server's origin kept in a message


def checked_base_url(url: object) -> str:
    """``url`` without its trailing slash, or a ``ValidationError`` that does
    not repeat it (it may hold a password)."""
    if not isinstance(url, str) or not url.strip():
        raise ValidationError("base_url: expected a non-blank string", path="base_url")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ValidationError("base_url: not a URL", path="base_url") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.netloc:
        raise ValidationError("base_url: expected an http:// or https:// URL with a host", path="base_url")
    if "@" in parts.netloc:
        raise ValidationError(
            "base_url: credentials in the URL are not accepted (pass api_key= or headers=)", path="base_url"
        )
    return url.rstrip("/")


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """Scheme, host and port (the scheme's default when not given)."""
    return url.scheme, url.host, url.port if url.port is not None else _DEFAULT_PORTS.get(url.scheme)


def _shown(url: httpx.URL) -> str:
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}"[:_SHOWN]


def redirect(
    provider: str,
    sent: httpx.URL,
    status: int,
    headers: Mapping[str, str],
    *,
    follow: bool,
    hops: int,
    max_hops: int,
) -> str | ProviderError:
    """The URL to send to next after a 3xx answer to the request sent to
    ``sent`` (``hops`` redirects followed so far), or the ``ProviderError`` that
    says why it is not followed."""
    import httpx  # noqa: PLC0415 - the clients' transport, already imported by them

    def refused(why: str) -> ProviderError:
        return ProviderError(
            f"not followed: {why}",
            provider=provider,
            status=status,
            type=REDIRECT,
            request_id=request_id(lowered(headers)),
        )

    location = headers.get("location")
    if status not in REDIRECT_STATUSES or not location:
        return refused(f"HTTP {status} is not an answer, and names no redirect to follow")
    try:
        target = sent.join(location)
    except httpx.InvalidURL:
        return refused("its Location is not a URL")
    if origin(target) != origin(sent):
        return refused(
            f"it points to another origin ({_shown(target)}) than the one the credentials are for ({_shown(sent)})"
        )
    if status not in KEEPS_BODY:
        return refused(f"HTTP {status} would send the request again as a GET, without its body")
    if not follow:
        return refused("the http client does not follow redirects (httpx follow_redirects=False)")
    if hops >= max_hops:
        return refused(f"more than {max_hops} redirects (the http client's max_redirects)")
    return str(target)

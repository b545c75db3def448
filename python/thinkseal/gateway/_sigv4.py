"""The credentials of a request to a ``bedrock`` route: a Bedrock API key
(``Authorization: Bearer``) or AWS Signature Version 4.

A bearer token is forwarded as it came (or replaced by the route's
``api_key_env``), like any provider's key. A SigV4 signature is not: the
client signed the gateway's host and path (the route's prefix included) and
the body as it wrote it, so upstream it no longer verifies, whether or not the
gateway edits the body. The gateway signs the exact bytes it sends, for the
upstream's host and path, with the route's own AWS keys (``aws_region``,
``aws_access_key_id_env``, ``aws_secret_access_key_env``,
``aws_session_token_env``); the client's signature and what goes with it
(``x-amz-date``, ``x-amz-security-token``, ``x-amz-content-sha256``) are taken
off. A route with keys also signs a request that came with no credential. A
signed request to a route without keys is refused (``upstream_credential``):
forwarding a signature that cannot verify would only move the failure
upstream, with a less helpful error.

The account a reply is recorded under is that of the credential the upstream
request goes with: the bearer token, or the route's access key id when the
gateway signs (never the secret, and never the client's signature, which
changes with every request).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

from .._errors import ValidationError
from ._config import AwsKeys, Route

__all__ = ["resigned", "upstream_credential"]

SIGV4: Final = "AWS4-HMAC-SHA256"
# The client's signature and the headers made with it, stale once the host, path or body change.
_SIGNING_HEADERS: Final = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"})
# The headers botocore's signer sets, copied back onto the request sent.
_SET_BY_SIGNER: Final = ("authorization", "x-amz-date", "date", "x-amz-security-token")

CANNOT_RESIGN: Final = (
    "authorization: this request is signed with AWS Signature Version 4, which covers the gateway's host, "
    "path and body and so does not verify upstream; this route has no AWS credentials to sign it again. "
    "Configure the route's aws_region, aws_access_key_id_env and aws_secret_access_key_env "
    "(docs/gateway.md, Bedrock), or send a Bedrock API key (Authorization: Bearer) instead"
)


def client_signed(headers: Mapping[str, str]) -> bool:
    """Whether the client signed the request with SigV4 (its ``Authorization``)."""
    return headers.get("authorization", "").lstrip().startswith(SIGV4)


def upstream_credential(route: Route, headers: Mapping[str, str], client_credential: str | None) -> str | None:
    """The credential the upstream request carries (the account is derived from
    it): the route's key, the route's access key id where the gateway signs,
    or the client's own. A SigV4 request the route cannot sign again raises
    ``ValidationError`` at ``authorization``."""
    if route.api_key:
        return route.api_key
    if route.provider != "bedrock":
        return client_credential
    signed = client_signed(headers)
    if signed and route.aws is None:
        raise ValidationError(CANNOT_RESIGN, path="authorization")
    if route.aws is not None and (signed or not client_credential):
        return route.aws.access_key_id
    return client_credential


def resigned(route: Route, method: str, url: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
    """The headers to send ``body`` to ``url`` with: for a ``bedrock`` route
    whose keys sign this request, ``headers`` without the client's signature
    and with the route's, over these very bytes; where the route's key
    replaced the client's credential, without what came with the client's
    signature; else ``headers`` as they are."""
    if route.provider != "bedrock":
        return headers
    if route.api_key:
        return {k: v for k, v in headers.items() if k == "authorization" or k not in _SIGNING_HEADERS}
    if route.aws is None or (headers.get("authorization") and not client_signed(headers)):
        return headers  # a bearer token (or nothing, for the upstream to refuse): as it came
    return _signed(route.aws, method, url, body, {k: v for k, v in headers.items() if k not in _SIGNING_HEADERS})


def _signed(keys: AwsKeys, method: str, url: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
    import httpx  # noqa: PLC0415
    from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth  # type: ignore[import-untyped]  # noqa: PLC0415
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]  # noqa: PLC0415
    from botocore.credentials import Credentials  # type: ignore[import-untyped]  # noqa: PLC0415

    # The URL as httpx sends it (its escapes), so the path signed is the path the upstream reads.
    sent = str(httpx.URL(url))
    request = AWSRequest(method=method, url=sent, data=body, headers=dict(headers))
    credentials = Credentials(keys.access_key_id, keys.secret_access_key, keys.session_token)
    signer = SigV4Auth(credentials, "bedrock", keys.region)
    # SigV4Auth.add_auth's steps, without its debug log of the canonical request (which holds the session token).
    request.context["timestamp"] = datetime.now(UTC).strftime(SIGV4_TIMESTAMP)
    signer._modify_request_before_signing(request)
    canonical = signer.canonical_request(request)
    signature = signer.signature(signer.string_to_sign(request, canonical), request)
    signer._inject_signature_to_request(request, signature)
    out = dict(headers)
    for name in _SET_BY_SIGNER:
        value = request.headers.get(name)
        if value is not None:
            out[name] = value
        else:
            out.pop(name, None)
    return out

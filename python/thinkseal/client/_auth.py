"""Credentials on a request, per ``Connection.auth``:

- ``x-api-key`` (Anthropic), ``x-goog-api-key`` (Gemini API): the key in that header;
- ``bearer`` (OpenAI, OpenRouter, DeepSeek, Z.ai, Mistral): ``Authorization: Bearer``;
- ``optional-bearer`` (Ollama): the same, only when a key is given;
- ``aws`` (Bedrock): a Bedrock API key as a bearer token when one is given
  (``AWS_BEARER_TOKEN_BEDROCK``), otherwise AWS Signature Version 4 over the
  exact bytes sent, with botocore's signer and credential chain (the
  ``bedrock`` extra; imported when first used);
- ``google`` (Vertex AI): an OAuth access token: ``api_key`` when given, else
  google-auth credentials (``credentials=`` or Application Default
  Credentials), refreshed when expired (the ``vertex`` extra; imported when
  first used).

Keys come from ``api_key=`` or the first set variable of ``Connection.key_env``.
A missing required key, or one a header cannot carry (a trailing newline), is
a ``ValidationError`` when the client is made, not a 401 or a protocol error
later; so is a ``headers=`` entry a header cannot carry. Keys never appear in
errors or ``repr``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Final

from .._errors import ValidationError
from ..providers._connection import Connection

_REGION: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# RFC 9110 field values (without obs-text, which httpx does not send) and tokens.
_HEADER_VALUE: Final = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?")
_HEADER_NAME: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def env_key(connection: Connection) -> str | None:
    for name in connection.key_env:
        value = os.environ.get(name)
        if value:
            return value
    return None


class Auth:
    """Adds credentials to one request's headers (``sign``). ``needs_body``: the
    credentials cover the body's bytes (then ``sign`` gets them)."""

    needs_body = False

    def sign(self, url: str, content: bytes, headers: dict[str, str]) -> None:
        raise NotImplementedError


class HeaderAuth(Auth):
    def __init__(self, name: str, value: str | None) -> None:
        self._name = name
        self._value = value

    def sign(self, url: str, content: bytes, headers: dict[str, str]) -> None:
        if self._value is not None:
            headers[self._name] = self._value


class AwsAuth(Auth):
    """SigV4 for the ``bedrock`` service in ``region``."""

    needs_body = True

    def __init__(self, region: str, credentials: Any) -> None:
        from botocore.auth import SigV4Auth  # type: ignore[import-untyped]  # noqa: PLC0415

        if credentials is None:
            import botocore.session  # type: ignore[import-untyped]  # noqa: PLC0415

            credentials = botocore.session.Session().get_credentials()
        if credentials is None:
            raise ValidationError(
                "bedrock: no AWS credentials (pass credentials=, set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                "or a profile; or a Bedrock API key as api_key= or AWS_BEARER_TOKEN_BEDROCK)",
                path="credentials",
            )
        self._signer = SigV4Auth(credentials, "bedrock", region)

    def sign(self, url: str, content: bytes, headers: dict[str, str]) -> None:
        from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]  # noqa: PLC0415

        request = AWSRequest(method="POST", url=url, data=content, headers=dict(headers))
        self._signer.add_auth(request)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in request.headers:
                headers[name.lower()] = request.headers[name]


class GoogleAuth(Auth):
    """A bearer token from google-auth credentials, refreshed when not valid."""

    def __init__(self, credentials: Any) -> None:
        if credentials is None:
            import google.auth  # noqa: PLC0415

            credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
        self._credentials = credentials

    def sign(self, url: str, content: bytes, headers: dict[str, str]) -> None:
        credentials = self._credentials
        if not credentials.valid:
            from google.auth.transport.requests import Request  # noqa: PLC0415

            credentials.refresh(Request())
        token = header_value(str(credentials.token), "credentials", what="the access token from google-auth")
        headers["authorization"] = f"Bearer {token}"


def make_auth(provider: str, connection: Connection, api_key: str | None, credentials: Any, region: str | None) -> Auth:
    """The credentials of a client for ``provider``."""
    if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
        raise ValidationError("api_key: expected a non-blank string", path="api_key")
    key = api_key if api_key is not None else env_key(connection)
    if key is not None:
        key = header_value(key, "api_key", what="the API key")
    scheme = connection.auth
    if scheme == "aws":
        if key is not None:
            return HeaderAuth("authorization", f"Bearer {key}")
        if region is None:
            raise ValidationError("bedrock: no region (pass region= or set AWS_REGION)", path="region")
        return AwsAuth(region, credentials)
    if scheme == "google":
        return HeaderAuth("authorization", f"Bearer {key}") if key is not None else GoogleAuth(credentials)
    if scheme == "optional-bearer":
        return HeaderAuth("authorization", None if key is None else f"Bearer {key}")
    if key is None:
        where = " or set " + " / ".join(connection.key_env) if connection.key_env else ""
        raise ValidationError(f"{provider}: no API key (pass api_key={where})", path="api_key")
    if scheme == "bearer":
        return HeaderAuth("authorization", f"Bearer {key}")
    return HeaderAuth(scheme, key)


def aws_region(region: str | None) -> str | None:
    """``region``, or the AWS environment's (``AWS_REGION``, ``AWS_DEFAULT_REGION``).
    It becomes part of the host the credentials go to, so it must be a region
    name: ``us-east-1.example#`` would send them to ``example``."""
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region is not None and (not isinstance(region, str) or _REGION.fullmatch(region) is None):
        raise ValidationError(
            f"region: expected an AWS region name such as us-east-1, got {region!r:.60}", path="region"
        )
    return region


def header_value(value: str, path: str, *, what: str) -> str:
    """``value`` when a header can carry it as it is: visible ASCII, with
    spaces or tabs only inside. Otherwise a ``ValidationError`` that does not
    repeat it: httpx would raise a bare ``UnicodeEncodeError``, or h11 an error
    quoting the whole value (the key) after the request was retried."""
    if _HEADER_VALUE.fullmatch(value) is None:
        raise ValidationError(
            f"{path}: {what} holds a character an HTTP header cannot carry "
            "(a line break, a control character, non-ASCII, or a space at either end; "
            "a key read from a file often ends in a newline)",
            path=path,
        )
    return value


def checked_headers(headers: object) -> dict[str, str]:
    """The caller's ``headers=``, names lower-cased, each one a header can carry."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise ValidationError("headers: expected a mapping of header names to values", path="headers")
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or _HEADER_NAME.fullmatch(name) is None:
            raise ValidationError(f"headers: {name!r:.60} is not a header name", path="headers")
        if not isinstance(value, str):
            raise ValidationError(f"headers.{name}: expected a string", path=f"headers.{name}")
        checked[name.lower()] = header_value(value, f"headers.{name}", what="the value")
    return checked


def lowered(headers: Mapping[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}

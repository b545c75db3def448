"""The gateway's configuration: a TOML or JSON file (YAML when PyYAML is
installed), or the same as a mapping (docs/gateway.md has the reference).

    [gateway]
    ledger = "sqlite:///var/lib/thinkseal/ledger.db"   # memory | sqlite:///PATH | postgres://... | redis://...
    unknown_seals = "keep"                              # keep | unseal
    recover = true

    [[routes]]
    prefix = "/anthropic"                               # what clients put in their base URL
    provider = "anthropic"                              # a thinkseal provider id
    upstream = "https://api.anthropic.com"
    models = { "claude-opus-x" = "claude-sonnet-y" }

Every upstream is named here: the gateway reaches no other host (no open
proxy). Secrets (upstream keys, client tokens, the ledger's and the account
hash's keys) are read from environment variables the file names, never from
the file itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from .._errors import ValidationError
from .._limits import limits

__all__ = ["AwsKeys", "Config", "Route", "load_config"]

UNKNOWN_SEALS: Final[tuple[str, ...]] = ("keep", "unseal")
_PREFIX: Final = re.compile(r"(/[A-Za-z0-9._~-]+)+")
# The default key of the account hash: fixed, so a fleet derives the same account
# from the same credential without configuration; set account_key_env to keep
# accounts unlinkable across deployments.
DEFAULT_ACCOUNT_KEY: Final[bytes] = b"thinkseal gateway account v1"
# The wire bytes each route's surface keeps what it read for (gateway/_read_cache.py).
DEFAULT_READ_CACHE_MIB: Final[int] = 64


def _fail(path: str, message: str) -> ValidationError:
    return ValidationError(f"{path}: {message}", path=path)


def _string(value: object, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, "expected a non-blank string")
    return value


def _env(table: Mapping[str, Any], name: str, path: str) -> str | None:
    """The value of the environment variable ``table[name]`` names, if it names one."""
    variable = table.get(name)
    if variable is None:
        return None
    variable = _string(variable, f"{path}.{name}")
    value = os.environ.get(variable)
    if not value:
        raise _fail(f"{path}.{name}", f"the environment variable {variable} is not set")
    return value


def _namespace(value: object) -> str | None:
    """A PostgreSQL schema / Redis key prefix for the ledger: a plain identifier."""
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", value):
        raise _fail("gateway.ledger_namespace", "expected an identifier (letters, digits, _; at most 63)")
    return value


class Route:
    """One upstream: requests to ``prefix`` + a provider path go to
    ``upstream`` + that path, through the ``provider`` adapter's rules.
    ``models`` maps a model a client asks for to the one sent (and bound
    under); ``api_key``, when set, replaces the client's credential;
    ``aws`` (a ``bedrock`` route) signs requests again with the route's own
    AWS keys (``_sigv4``)."""

    __slots__ = ("api_key", "aws", "models", "prefix", "provider", "upstream")

    def __init__(
        self,
        prefix: str,
        provider: str,
        upstream: str,
        models: Mapping[str, str] | None = None,
        api_key: str | None = None,
        aws: AwsKeys | None = None,
    ) -> None:
        self.prefix = prefix
        self.provider = provider
        self.upstream = upstream.rstrip("/")
        self.models = dict(models or {})
        self.api_key = api_key
        self.aws = aws

    @property
    def sent_secret(self) -> str | None:
        """The secret the upstream request carries as it is (an upstream may echo
        it): the route's key, or its AWS session token (the secret access key
        itself never leaves the gateway, only a signature made with it)."""
        return self.api_key or (self.aws.session_token if self.aws is not None else None)

    @classmethod
    def of(cls, table: object, path: str) -> Route:
        from ..providers import PROVIDER_IDS  # noqa: PLC0415

        if not isinstance(table, Mapping):
            raise _fail(path, "expected a table")
        prefix = _string(table.get("prefix"), f"{path}.prefix").rstrip("/")
        if not _PREFIX.fullmatch(prefix):
            raise _fail(f"{path}.prefix", "expected a path such as /anthropic")
        provider = _string(table.get("provider"), f"{path}.provider")
        if provider not in PROVIDER_IDS:
            raise _fail(
                f"{path}.provider", f"unknown provider id {provider!r}; expected one of {', '.join(PROVIDER_IDS)}"
            )
        upstream = _string(table.get("upstream"), f"{path}.upstream")
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
            raise _fail(f"{path}.upstream", "expected an http(s) URL with a host and no credentials")
        models = table.get("models") or {}
        if not isinstance(models, Mapping) or not all(
            isinstance(k, str) and k and isinstance(v, str) and v for k, v in models.items()
        ):
            raise _fail(f"{path}.models", "expected a table of model names to model names")
        api_key = _env(table, "api_key_env", path)
        aws = AwsKeys.of(table, path, provider)
        if aws is not None and api_key is not None:
            raise _fail(f"{path}.api_key_env", "give either a Bedrock API key or the route's AWS credentials, not both")
        return cls(prefix, provider, upstream, models, api_key, aws)

    def __repr__(self) -> str:  # never the key
        key = ", api_key=<set>" if self.api_key else ""
        aws = f", aws={self.aws!r}" if self.aws is not None else ""
        return f"Route({self.prefix!r}, {self.provider!r}, {self.upstream!r}{key}{aws})"


# A route's AWS keys: the region, and the variables holding the credentials.
_AWS_KEYS: Final[tuple[str, ...]] = (
    "aws_region",
    "aws_access_key_id_env",
    "aws_secret_access_key_env",
    "aws_session_token_env",
)
_REGION: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_TOKEN: Final = re.compile(r"[\x21-\x7e]+")  # visible ASCII, nothing else


class AwsKeys:
    """The AWS credentials a ``bedrock`` route signs its upstream requests with
    (Signature Version 4, for the ``bedrock`` service in ``region``)."""

    __slots__ = ("access_key_id", "region", "secret_access_key", "session_token")

    def __init__(
        self, region: str, access_key_id: str, secret_access_key: str, session_token: str | None = None
    ) -> None:
        self.region = region
        self.access_key_id = access_key_id
        self.secret_access_key = secret_access_key
        self.session_token = session_token

    @classmethod
    def of(cls, table: Mapping[str, Any], path: str, provider: str) -> AwsKeys | None:
        """The keys a route table names (None: it names none)."""
        given = [k for k in _AWS_KEYS if table.get(k) is not None]
        if not given:
            return None
        if provider != "bedrock":
            raise _fail(f"{path}.{given[0]}", "AWS credentials are for a route with provider 'bedrock'")
        for name in _AWS_KEYS[:3]:
            if table.get(name) is None:
                raise _fail(f"{path}.{name}", "needed with the other aws_* keys (region, key id and secret)")
        region = _string(table.get("aws_region"), f"{path}.aws_region")
        if not _REGION.fullmatch(region):
            raise _fail(f"{path}.aws_region", "expected an AWS region name such as us-east-1")
        values = {name: _env(table, name, path) for name in _AWS_KEYS[1:]}
        for name, value in values.items():
            # They go into headers or the signing key as they are: a stray newline is a mistake, said here.
            if value is not None and not _TOKEN.fullmatch(value):
                raise _fail(f"{path}.{name}", "the variable's value holds white space or a control character")
        key_id, secret, token = values.values()
        assert key_id is not None  # required above
        assert secret is not None
        return cls(region, key_id, secret, token)

    def __repr__(self) -> str:  # never the secret nor the token
        return f"AwsKeys({self.region!r}, {self.access_key_id!r}, secret=<set>)"


class Config:
    """The gateway's settings (see the module docstring)."""

    __slots__ = (
        "account_key",
        "client_tokens",
        "ledger",
        "ledger_namespace",
        "ledger_secret",
        "max_body",
        "read_cache_bytes",
        "recover",
        "routes",
        "timeout",
        "unknown_seals",
    )

    def __init__(
        self,
        routes: Sequence[Route],
        *,
        ledger: str = "memory",
        ledger_namespace: str | None = None,
        ledger_secret: str | None = None,
        unknown_seals: str = "keep",
        recover: bool = True,
        client_tokens: Sequence[str] = (),
        account_key: bytes = DEFAULT_ACCOUNT_KEY,
        max_body: int | None = None,
        timeout: float = 600.0,
        read_cache_mib: int = DEFAULT_READ_CACHE_MIB,
    ) -> None:
        if not routes:
            raise _fail("routes", "at least one route is needed")
        prefixes = [r.prefix for r in routes]
        if len(set(prefixes)) != len(prefixes):
            raise _fail("routes", "two routes have the same prefix")
        if unknown_seals not in UNKNOWN_SEALS:
            raise _fail("gateway.unknown_seals", f"expected one of {', '.join(UNKNOWN_SEALS)}")
        self.routes = tuple(sorted(routes, key=lambda r: len(r.prefix), reverse=True))  # longest prefix first
        self.ledger = ledger
        self.ledger_namespace = ledger_namespace
        self.ledger_secret = ledger_secret
        self.unknown_seals = unknown_seals
        self.recover = recover
        self.client_tokens = frozenset(client_tokens)
        self.account_key = account_key
        self.max_body = limits().max_body if max_body is None else max_body
        self.timeout = timeout
        self.read_cache_bytes = read_cache_mib * 2**20

    @classmethod
    def of(cls, document: object) -> Config:
        """A configuration from its decoded form (the file's tables)."""
        if not isinstance(document, Mapping):
            raise _fail("$", "expected a table")
        gateway = document.get("gateway") or {}
        if not isinstance(gateway, Mapping):
            raise _fail("gateway", "expected a table")
        routes = document.get("routes")
        if not isinstance(routes, list):
            raise _fail("routes", "expected a list of route tables")
        tokens = _env(gateway, "client_tokens_env", "gateway")
        account_key = _env(gateway, "account_key_env", "gateway")
        max_body = gateway.get("max_body")
        if max_body is not None and (not isinstance(max_body, int) or isinstance(max_body, bool) or max_body < 1):
            raise _fail("gateway.max_body", "expected a positive number of bytes")
        timeout = gateway.get("timeout", 600.0)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise _fail("gateway.timeout", "expected a positive number of seconds")
        recover = gateway.get("recover", True)
        if not isinstance(recover, bool):
            raise _fail("gateway.recover", "expected true or false")
        read_cache = gateway.get("read_cache_mib", DEFAULT_READ_CACHE_MIB)
        if not isinstance(read_cache, int) or isinstance(read_cache, bool) or not 0 <= read_cache <= 1 << 20:
            raise _fail("gateway.read_cache_mib", "expected a number of MiB from 0 to 1048576")
        return cls(
            [Route.of(r, f"routes[{i}]") for i, r in enumerate(routes)],
            ledger=_string(gateway.get("ledger", "memory"), "gateway.ledger"),
            ledger_namespace=_namespace(gateway.get("ledger_namespace")),
            ledger_secret=_env(gateway, "ledger_secret_env", "gateway"),
            unknown_seals=_string(gateway.get("unknown_seals", "keep"), "gateway.unknown_seals"),
            recover=recover,
            client_tokens=[t for t in (tokens or "").split(",") if t.strip()],
            account_key=DEFAULT_ACCOUNT_KEY if account_key is None else account_key.encode(),
            max_body=max_body,
            timeout=float(timeout),
            read_cache_mib=read_cache,
        )

    def route_of(self, path: str) -> tuple[Route, str] | None:
        """The route serving ``path`` and the provider path after its prefix."""
        for route in self.routes:
            if path == route.prefix or path.startswith(route.prefix + "/"):
                return route, path[len(route.prefix) :] or "/"
        return None


def load_config(path: str | os.PathLike[str]) -> Config:
    """The configuration in the file at ``path``: TOML (``.toml``), JSON
    (``.json``) or YAML (``.yaml``/``.yml``, with PyYAML installed)."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    suffix = file.suffix.lower()
    try:
        if suffix == ".toml":
            import tomllib  # noqa: PLC0415

            document: object = tomllib.loads(text)
        elif suffix == ".json":
            document = json.loads(text)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml  # type: ignore[import-untyped]  # noqa: PLC0415
            except ImportError:
                raise _fail(str(file), "a YAML configuration needs PyYAML (pip install pyyaml); or use TOML") from None
            document = yaml.safe_load(text)
        else:
            raise _fail(str(file), "expected a .toml, .json or .yaml file")
    except ValueError as err:  # tomllib's and json's errors, without the file's content
        raise _fail(str(file), f"not valid {suffix[1:].upper()}: {type(err).__name__}") from None
    return Config.of(document)

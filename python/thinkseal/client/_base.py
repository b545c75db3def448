"""What ``Client`` and ``AsyncClient`` share: their arguments, made into an
``Exchange`` (the decisions) and an httpx client (made here, imported only
when a client is made, so ``import thinkseal`` does not load httpx); building
one request and deciding on a redirect answer (``_origin``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from .._errors import ProviderError, ValidationError
from .._reply import Reply
from ..providers import PreparedRequest
from ._exchange import Exchange, ReplayErrorPolicy
from ._origin import redirect

if TYPE_CHECKING:
    from ..ledger import AsyncLedger, Ledger

H = TypeVar("H")


def timeout_of(value: object) -> Any:
    import httpx  # noqa: PLC0415 - the clients' transport, imported when a client is made

    if isinstance(value, httpx.Timeout):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValidationError("timeout: expected a positive number of seconds or an httpx.Timeout", path="timeout")
    return httpx.Timeout(float(value))


class ClientBase(Generic[H]):
    """A provider's HTTP API, for one adapter id.

    ``api_key`` defaults to the provider's usual environment variable
    (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ...); Bedrock signs with
    botocore (``credentials=``, ``region=``) and Vertex AI uses google-auth
    credentials. ``base_url`` overrides the provider's. ``account`` and
    ``aliases`` are the adapter's (``thinkseal.provider``). ``timeout`` is in
    seconds (or an ``httpx.Timeout``); ``max_retries`` retries of rate limits,
    server errors, timeouts and lost connections. ``on_replay_error``: what to
    do when ``prepare`` raises ``ReplayError`` — ``"raise"`` (default),
    ``"drop_block"`` or ``"disable_thinking"`` (the ways out its message
    names); the ``Reply`` records the one taken. ``http_client``: the httpx
    client to send with (``httpx.Client`` or ``httpx.AsyncClient``; not closed
    with this one); its ``follow_redirects`` decides whether a same-origin 307
    or 308 is followed, and no redirect to another origin ever is (``_origin``).
    ``ledger``: a ``thinkseal.Ledger`` (``AsyncClient``: also an
    ``AsyncLedger``) that records every reply the client returns, so a history
    that comes back without its bindings can be attached (docs/ledger.md). A
    ledger that cannot be written is logged, and the reply returned.
    """

    # The httpx class this client sends with when it makes its own.
    _http_class: ClassVar[str]

    def __init__(
        self,
        provider_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        account: str | None = None,
        aliases: Mapping[str, str] | None = None,
        http_client: H | None = None,
        timeout: Any = 600.0,
        max_retries: int = 2,
        on_replay_error: ReplayErrorPolicy = "raise",
        credentials: Any = None,
        region: str | None = None,
        headers: Mapping[str, str] | None = None,
        ledger: Ledger | AsyncLedger | None = None,
    ) -> None:
        if ledger is not None:
            from ..ledger._recording import checked_ledger  # noqa: PLC0415 - only when one is given

            ledger = checked_ledger(ledger, asynchronous=self._http_class == "AsyncClient")
        self._ledger: Any = ledger
        self._exchange = Exchange(
            provider_id,
            api_key=api_key,
            base_url=base_url,
            account=account,
            aliases=aliases,
            credentials=credentials,
            region=region,
            max_retries=max_retries,
            on_replay_error=on_replay_error,
            headers=headers,
        )
        import httpx  # noqa: PLC0415 - imported when a client is made, not with thinkseal

        self._timeout = timeout_of(timeout)
        self._owned = http_client is None
        self._http: H = (
            http_client if http_client is not None else getattr(httpx, self._http_class)(timeout=self._timeout)
        )

    def _request(self, request: PreparedRequest, url: str, content: Any) -> Any:
        """The httpx request of one hop to ``url``, with its credentials signed for that URL."""
        http: Any = self._http
        return http.build_request("POST", url, content=content, headers=self._exchange.request_headers(request, url))

    def _next_hop(self, response: Any, hops: int) -> str | ProviderError:
        """Where to send after the 3xx ``response``, or why not (``_origin.redirect``)."""
        http: Any = self._http
        return redirect(
            self.provider,
            response.request.url,
            response.status_code,
            response.headers,
            follow=bool(http.follow_redirects),
            hops=hops,
            max_hops=http.max_redirects,
        )

    def _record(self, reply: Reply) -> Reply:
        """``reply``, recorded in the client's (sync) ledger first."""
        if self._ledger is None:
            return reply
        from ..ledger._recording import record_reply  # noqa: PLC0415 - loaded with the ledger

        return record_reply(self._ledger, reply)

    async def _arecord(self, reply: Reply) -> Reply:
        """``reply``, recorded in the client's ledger (either kind) first."""
        if self._ledger is None:
            return reply
        from ..ledger._recording import arecord_reply  # noqa: PLC0415

        return await arecord_reply(self._ledger, reply)

    @property
    def provider(self) -> str:
        """The adapter id this client sends to."""
        return self._exchange.adapter.id

    def __repr__(self) -> str:
        return f"thinkseal.{type(self).__name__}({self.provider!r}, base_url={self._exchange.base_url!r})"

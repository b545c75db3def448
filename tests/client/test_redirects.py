"""Credentials never leave the origin (scheme, host, port) they were configured
for: every adapter's auth kind (derived from the registry), sync and async,
sent and streamed, against hostile servers on loopback that redirect and
record what reaches them. A same-origin 307 or 308 is followed when the httpx
client follows redirects, with the body sent again and the credentials signed
for the new URL; every other redirect is a ``ProviderError`` of type
``"redirect"``; a base URL never carries credentials of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
from botocore.credentials import Credentials as AwsCredentials  # type: ignore[import-untyped]
from google.oauth2.credentials import Credentials as GoogleCredentials

import thinkseal
from thinkseal import Conversation, ProviderError, UserMessage, ValidationError
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import emulator

from .conftest import HostileFactory
from .drive import DRIVERS, Driver
from .hostile import Answer, Hostile, Seen, forward
from .test_loop import MODELS

HELLO = Conversation([UserMessage("Hello")])
SECRET = "s3cret-key-0123456789"
EXTRA = "extra-credential-9876543210"  # a caller's own header (``headers=``), e.g. a gateway's key
REGION = "us-east-1"
FOLLOW = {"follow_redirects": True}


def _credentials(provider: str) -> list[tuple[str, dict[str, Any]]]:
    """Every way a client of ``provider`` can hold credentials, by its ``Connection.auth``."""
    auth = thinkseal.provider(provider).connection.auth
    if auth == "aws":
        sigv4 = AwsCredentials("AKID" + SECRET, "aws-secret-key", "session-" + SECRET)
        return [("bedrock-api-key", {"api_key": SECRET, "region": REGION}), ("sigv4", {"credentials": sigv4})]
    if auth == "google":
        return [("access-token", {"api_key": SECRET}), ("google-auth", {"credentials": GoogleCredentials(SECRET)})]
    return [(auth, {"api_key": SECRET})]


CREDENTIALS = [
    pytest.param(provider, kw, id=f"{provider}-{name}")
    for provider in PROVIDER_IDS
    for name, kw in _credentials(provider)
]


def _client_kw(kw: dict[str, Any]) -> dict[str, Any]:
    """The client's arguments: the credentials, the caller's extra header, no retries."""
    kw = {"api_key": None, "region": REGION, **kw, "headers": {"x-gateway-key": EXTRA}, "max_retries": 0}
    return kw


def _call(driver: Driver, provider: str, base_url: str, **kw: Any) -> thinkseal.Reply:
    options = dict(emulator(provider).options)
    return driver.call(provider, base_url, HELLO, MODELS[provider], options=options, **kw)


@pytest.fixture(scope="module")
def emulators() -> Iterator[dict[str, Any]]:
    """One started emulator of each provider for the whole module (stopping one takes a while)."""
    started = {provider: emulator(provider).start() for provider in PROVIDER_IDS}
    try:
        yield started
    finally:
        for running in started.values():
            running.stop()


def _carries_credentials(seen: Seen) -> bool:
    return any(SECRET in value or EXTRA in value for value in seen.headers.values())


def _redirect_to(target: str, status: int = 307) -> Any:
    def answer(seen: Seen, server: Hostile) -> Answer:
        return Answer(status, {"location": target + seen.path})

    return answer


def test_the_auth_kinds_covered_are_the_registry_s() -> None:
    kinds = {thinkseal.provider(p).connection.auth for p in PROVIDER_IDS}
    assert kinds == {"x-api-key", "x-goog-api-key", "bearer", "optional-bearer", "aws", "google"}


@pytest.mark.parametrize("driver", DRIVERS, ids=str)
@pytest.mark.parametrize(("provider", "kw"), CREDENTIALS)
def test_no_credential_follows_a_redirect_to_another_origin(
    provider: str, kw: dict[str, Any], driver: Driver, hostile: HostileFactory
) -> None:
    elsewhere = hostile(lambda seen, server: Answer(200, {"content-type": "application/json"}, b"{}"))
    redirector = hostile(_redirect_to(elsewhere.url))
    error = _raised(lambda: _call(driver, provider, redirector.url, http=FOLLOW, **_client_kw(kw)))
    assert [_carries_credentials(seen) for seen in redirector.seen] == [True]  # the test did send credentials
    assert not any(_carries_credentials(seen) for seen in elsewhere.seen)  # none reached the other origin
    assert elsewhere.seen == []  # nor anything else: the body is the caller's conversation
    assert isinstance(error, ProviderError)
    assert (error.status, error.type) == (307, "redirect")
    assert "another origin" in error.message
    assert SECRET not in str(error)


def _raised(call: Callable[[], object]) -> BaseException | None:
    try:
        call()
    except Exception as error:  # which error it is, is what the test checks
        return error
    return None


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("change", ["port", "host", "scheme"])
def test_a_redirect_changing_port_host_or_scheme_is_refused(
    change: str, status: int, asynchronous: bool, hostile: HostileFactory
) -> None:
    elsewhere = hostile(lambda seen, server: Answer(200, {}, b"{}"))
    targets = {
        "port": elsewhere.url,
        "host": "http://localhost:{port}",  # the same server under another name: another origin
        "scheme": "https://127.0.0.1:{port}",
    }

    def answer(seen: Seen, server: Hostile) -> Answer:
        return Answer(status, {"location": targets[change].format(port=server.port) + seen.path})

    redirector = hostile(answer)
    with pytest.raises(ProviderError) as caught:
        _call(Driver(asynchronous, False), "anthropic", redirector.url, http=FOLLOW, **_client_kw({"api_key": SECRET}))
    assert (caught.value.status, caught.value.type) == (status, "redirect")
    assert "another origin" in caught.value.message
    assert len(redirector.seen) == 1
    assert elsewhere.seen == []


@pytest.mark.parametrize("driver", DRIVERS, ids=str)
@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_a_same_origin_307_or_308_is_followed_with_the_body_and_credentials(
    provider: str, status: int, driver: Driver, emulators: dict[str, Any], hostile: HostileFactory
) -> None:
    emu = emulators[provider]
    before = len(emu.requests)
    emu_path = emu.base_url.removeprefix(emu.server_url)

    def answer(seen: Seen, server: Hostile) -> Answer:
        if seen.path.startswith("/moved"):
            return forward(seen, emu.server_url, seen.path.removeprefix("/moved"))
        # a relative Location for 307, an absolute one (same origin) for 308
        location = "/moved" + seen.path if status == 307 else f"{server.url}/moved{seen.path}"
        return Answer(status, {"location": location})

    front = hostile(answer)
    reply = _call(driver, provider, front.url + emu_path, http=FOLLOW, api_key=SECRET, region=REGION)
    assert reply.message.content
    assert [seen.path.startswith("/moved") for seen in front.seen] == [False, True]
    first, moved = front.seen
    assert moved.body == first.body  # the whole body again, from its start
    assert [request.raw for request in emu.requests[before:]] == [first.body]  # the emulator parsed and accepted it
    assert _carries_credentials(moved)  # same origin: the credentials go along


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_sigv4_is_signed_again_for_the_redirected_url(asynchronous: bool, hostile: HostileFactory) -> None:
    credentials = AwsCredentials("AKIDEXAMPLE", "aws-secret-key", "session-token")

    def answer(seen: Seen, server: Hostile) -> Answer:
        if seen.path.startswith("/moved"):
            return Answer(400, {"content-type": "application/json"}, b'{"message": "stop here"}')
        return Answer(307, {"location": "/moved" + seen.path})

    front = hostile(answer)
    with pytest.raises(ProviderError, match="stop here"):
        _call(
            Driver(asynchronous, False), "bedrock", front.url, http=FOLLOW, **_client_kw({"credentials": credentials})
        )
    assert len(front.seen) == 2
    for seen in front.seen:  # each hop signed for the URL it went to
        assert _sigv4_signature(seen, front.url + seen.path, credentials) in seen.headers["authorization"]


def _sigv4_signature(seen: Seen, url: str, credentials: AwsCredentials) -> str:
    """The SigV4 signature of ``seen`` as sent to ``url``, over the headers it says it signed."""
    authorization = seen.headers["authorization"]
    signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    headers = {name: seen.headers[name] for name in signed if name != "host"}
    request = AWSRequest(method=seen.method, url=url, data=seen.body, headers=headers)
    request.context["timestamp"] = seen.headers["x-amz-date"]
    signer = SigV4Auth(credentials, "bedrock", REGION)
    signature = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    return f"Signature={signature}"


@pytest.mark.parametrize("driver", DRIVERS, ids=str)
def test_a_redirect_is_an_error_when_the_http_client_does_not_follow_redirects(
    driver: Driver, hostile: HostileFactory
) -> None:
    redirector = hostile(lambda seen, server: Answer(307, {"location": "/moved" + seen.path}))
    with pytest.raises(ProviderError) as caught:
        _call(driver, "openai", redirector.url, api_key=SECRET, max_retries=2)  # thinkseal's own httpx client
    assert (caught.value.status, caught.value.type) == (307, "redirect")
    assert "does not follow redirects" in caught.value.message
    assert len(redirector.seen) == 1  # not retried either


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_same_origin_redirect_that_would_drop_the_body_is_refused(status: int, hostile: HostileFactory) -> None:
    redirector = hostile(lambda seen, server: Answer(status, {"location": "/moved" + seen.path}))
    with pytest.raises(ProviderError) as caught:
        _call(Driver(False, False), "gemini", redirector.url, http=FOLLOW, api_key=SECRET)
    assert (caught.value.status, caught.value.type) == (status, "redirect")
    assert "as a GET" in caught.value.message
    assert len(redirector.seen) == 1


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_redirect_loop_stops_at_the_http_client_s_max_redirects(asynchronous: bool, hostile: HostileFactory) -> None:
    looping = hostile(lambda seen, server: Answer(308, {"location": seen.path + "x"}))
    with pytest.raises(ProviderError) as caught:
        _call(
            Driver(asynchronous, True),
            "ollama",
            looping.url,
            http={"follow_redirects": True, "max_redirects": 3},
            max_retries=0,
        )
    assert (caught.value.status, caught.value.type) == (308, "redirect")
    assert "more than 3 redirects" in caught.value.message
    assert len(looping.seen) == 4


@pytest.mark.parametrize(
    ("status", "location"), [(300, "/elsewhere"), (304, None), (307, None), (308, ""), (307, "http://[::1")]
)
def test_a_3xx_without_a_usable_location_is_a_provider_error(
    status: int, location: str | None, hostile: HostileFactory
) -> None:
    headers = {} if location is None else {"location": location}
    server = hostile(lambda seen, s: Answer(status, headers, b'{"id": "x"}'))
    with pytest.raises(ProviderError) as caught:
        _call(Driver(False, False), "deepseek", server.url, http=FOLLOW, api_key=SECRET, max_retries=0)
    # httpx itself refuses a Location it cannot parse: a protocol error, as for no answer
    expected = (None, "connection_error") if location == "http://[::1" else (status, "redirect")
    assert (caught.value.status, caught.value.type) == expected
    assert len(server.seen) == 1


# -- the base URL itself ------------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    [
        f"http://user:{SECRET}@127.0.0.1:9",
        f"https://{SECRET}@api.example",
        f"http://127.0.0.1:9\\@{SECRET}.example",  # a backslash some parsers take for a slash
    ],
)
@pytest.mark.parametrize("client_class", [thinkseal.Client, thinkseal.AsyncClient], ids=["sync", "async"])
def test_a_base_url_with_credentials_is_refused_without_repeating_them(base_url: str, client_class: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        client_class("openai", api_key="k", base_url=base_url)
    assert caught.value.path == "base_url"
    assert "credentials" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_a_base_url_with_credentials_from_the_environment_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"https://me:{SECRET}@proxy.example")
    with pytest.raises(ValidationError) as caught:
        thinkseal.Client("anthropic", api_key="k")
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("base_url", ["ftp://127.0.0.1/", "127.0.0.1:8080", "http://", "http://[::1", 42])
def test_a_base_url_that_is_not_an_http_url_is_refused(base_url: object) -> None:
    with pytest.raises(ValidationError) as caught:
        thinkseal.Client("openai", api_key="k", base_url=base_url)  # type: ignore[arg-type]
    assert caught.value.path == "base_url"


def test_a_base_url_with_credentials_never_reaches_the_wire(hostile: HostileFactory) -> None:
    """Before the check, httpx sent the URL's user:password as Basic auth in
    place of the provider's key."""
    server = hostile(lambda seen, s: Answer(400, {}, b"{}"))
    url = server.url.replace("http://", f"http://user:{SECRET}@")
    with pytest.raises(ValidationError):
        _call(Driver(False, False), "openai", url, api_key="k")
    assert server.seen == []


@pytest.mark.parametrize("region", ["evil.example#", "us-east-1.evil.example/", "us-east-1@evil", "US East"])
def test_a_bedrock_region_must_be_a_region_name(region: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The region is part of the host the credentials go to."""
    with pytest.raises(ValidationError) as caught:
        thinkseal.Client("bedrock", api_key=SECRET, region=region)
    assert caught.value.path == "region"
    monkeypatch.setenv("AWS_REGION", region)
    with pytest.raises(ValidationError):
        thinkseal.Client("bedrock", api_key=SECRET)

"""Credentials and headers a request cannot carry are refused when the client
is made, with an error that does not repeat them: before, a key read from a
file with its newline went out to h11, which refused it in a message quoting
the key (after the retries), and a non-ASCII one escaped as a bare
``UnicodeEncodeError``."""

from __future__ import annotations

from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, ProviderError, UserMessage, ValidationError
from thinkseal.providers import PROVIDER_IDS

from .conftest import HostileFactory
from .drive import DRIVERS, Driver
from .hostile import Answer

SECRET = "sk-s3cret-0123456789"
BAD = [SECRET + "\n", SECRET + "\r\nx-injected: 1", "sk-sécret-0123456789", SECRET + "\x00", " " + SECRET]
KEYED = [p for p in PROVIDER_IDS if thinkseal.provider(p).connection.auth != "aws"] + ["bedrock"]


@pytest.mark.parametrize("key", BAD, ids=repr)
@pytest.mark.parametrize("provider", KEYED)
def test_a_key_a_header_cannot_carry_is_refused_without_repeating_it(provider: str, key: str) -> None:
    with pytest.raises(ValidationError) as caught:
        thinkseal.Client(provider, api_key=key, region="us-east-1")
    assert caught.value.path == "api_key"
    assert "s3cret" not in str(caught.value)
    assert "sécret" not in str(caught.value)


def test_a_key_from_the_environment_is_checked_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "\n")
    with pytest.raises(ValidationError) as caught:
        thinkseal.Client("anthropic")
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("value", BAD, ids=repr)
def test_a_header_value_a_header_cannot_carry_is_refused_without_repeating_it(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        thinkseal.AsyncClient("openai", api_key="k", headers={"X-Gateway-Key": value})
    assert caught.value.path == "headers.X-Gateway-Key"
    assert "s3cret" not in str(caught.value)
    assert "sécret" not in str(caught.value)


@pytest.mark.parametrize("headers", [{"bad name": "v"}, {"x-ok:": "v"}, {"": "v"}, {"x-ok": 1}, ["x-ok"]], ids=repr)
def test_headers_that_are_not_headers_are_refused(headers: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        thinkseal.Client("openai", api_key="k", headers=headers)
    assert str(caught.value.path).startswith("headers")


@pytest.mark.parametrize("driver", DRIVERS, ids=str)
def test_a_key_with_a_newline_never_reaches_the_wire_or_an_error(driver: Driver, hostile: HostileFactory) -> None:
    server = hostile(lambda seen, s: Answer(401, {}, b'{"error": {"message": "no"}}'))
    with pytest.raises((ValidationError, ProviderError)) as caught:
        driver.call("openai", server.url, Conversation([UserMessage("hi")]), "m", api_key=SECRET + "\n")
    assert SECRET not in str(caught.value)
    assert isinstance(caught.value, ValidationError)
    assert server.seen == []


def test_inner_spaces_and_tabs_are_header_values() -> None:
    client = thinkseal.Client("openai", api_key="k", headers={"x-note": "two words\tand a tab", "x-empty": ""})
    assert client._exchange.headers == {"x-note": "two words\tand a tab", "x-empty": ""}

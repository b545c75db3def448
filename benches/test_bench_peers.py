"""Benchmarks (pytest-benchmark) of the stateless path, stored JSON -> body
bytes, for thinkseal and its peers (skipped with a message when a peer is not
installed: pip install -e '.[bench]'). `python -m benches.compare` runs the
whole comparison (steady state, forks, cold fingerprint, memory) and the plot."""

from __future__ import annotations

from typing import Any

import pytest

from thinkseal import Conversation

from . import _peers
from ._workload import bound_history

N = 1_000


@pytest.fixture(scope="module")
def conv() -> Conversation:
    return Conversation(bound_history(N, _peers.ORIGIN))


@pytest.mark.benchmark(group="stateless")
def test_stateless_thinkseal(benchmark: Any, conv: Conversation) -> None:
    assert benchmark(_peers.thinkseal_stateless(conv.to_json()))


@pytest.mark.benchmark(group="stateless")
def test_stateless_pydantic_ai(benchmark: Any, conv: Conversation) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed (pip install -e '.[bench]')")
    assert benchmark(_peers.pydantic_ai_stateless(_peers.pydantic_ai_stored(conv)))


@pytest.mark.benchmark(group="stateless")
def test_stateless_litellm(benchmark: Any, conv: Conversation) -> None:
    pytest.importorskip("litellm", reason="LiteLLM is not installed (pip install -e '.[bench]')")
    assert benchmark(_peers.litellm_stateless(_peers.litellm_stored(conv)))


@pytest.mark.benchmark(group="stateless-full")
def test_full_path_thinkseal(benchmark: Any, conv: Conversation) -> None:
    received = _peers.Received()
    assert benchmark(_peers.thinkseal_full(conv.to_json(), received)).message.content == "ok"
    assert min(received.sizes) > N * 1_000  # the whole history went out


@pytest.mark.benchmark(group="stateless-full")
def test_full_path_pydantic_ai(benchmark: Any, conv: Conversation) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed (pip install -e '.[bench]')")
    received = _peers.Received()
    assert benchmark(_peers.pydantic_ai_full(_peers.pydantic_ai_stored(conv), received)).parts
    assert min(received.sizes) > N * 1_000

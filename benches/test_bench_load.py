"""Benchmarks (pytest-benchmark) of reading a stored conversation,
``Conversation.from_json``: the native reader (rust/python/src/load.rs) against
the Python path it stands in for (``json`` + ``message_from_dict``), in the
same run, on the same 1,000 bound messages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from thinkseal import Conversation, _load

from . import _peers
from ._workload import bound_history

N = 1_000


@pytest.fixture(scope="module")
def stored() -> str:
    return Conversation(bound_history(N, _peers.ORIGIN)).to_json()


@pytest.fixture
def python_path() -> Iterator[None]:
    previous = _load.use_native(False)
    yield
    _load.use_native(previous)


@pytest.mark.benchmark(group="from_json")
def test_from_json_native(benchmark: Any, stored: str) -> None:
    assert len(benchmark(Conversation.from_json, stored)) == N


@pytest.mark.benchmark(group="from_json")
def test_from_json_python_path(benchmark: Any, stored: str, python_path: None) -> None:
    assert len(benchmark(Conversation.from_json, stored)) == N

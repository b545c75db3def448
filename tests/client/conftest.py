"""Fixtures of the client tests: every way of calling a client, and emulators
started on demand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from thinkseal.testing import Emulator, emulate

from .drive import DRIVERS, Driver


@pytest.fixture(params=DRIVERS, ids=str)
def driver(request: pytest.FixtureRequest) -> Driver:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def emulator_of() -> Iterator[Any]:
    """``emulator_of(provider_id)``: a started emulator, stopped at teardown."""
    with_blocks: list[Any] = []

    def start(provider_id: str) -> Emulator:
        context = emulate(provider_id)
        with_blocks.append(context)
        return context.__enter__()

    yield start
    for context in reversed(with_blocks):
        context.__exit__(None, None, None)

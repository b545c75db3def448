"""Fixtures of the client tests: every way of calling a client, and emulators
and hostile servers started on demand."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from thinkseal.testing.pytest_plugin import EmulatorFactory

from .drive import DRIVERS, Driver
from .hostile import Answer, Hostile, Seen

HostileFactory = Callable[[Callable[[Seen, Hostile], Answer]], Hostile]


@pytest.fixture(params=DRIVERS, ids=str)
def driver(request: pytest.FixtureRequest) -> Driver:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def emulator_of(thinkseal_emulator: EmulatorFactory) -> EmulatorFactory:
    """``emulator_of(provider_id)``: a started emulator, stopped at teardown
    (the public ``thinkseal_emulator`` fixture of ``thinkseal.testing``)."""
    return thinkseal_emulator


@pytest.fixture
def hostile() -> Iterator[HostileFactory]:
    """``hostile(answer)``: a started ``Hostile`` server, stopped at teardown."""
    started: list[Hostile] = []

    def make(answer: Callable[[Seen, Hostile], Answer]) -> Hostile:
        started.append(Hostile(answer))
        return started[-1]

    try:
        yield make
    finally:
        for server in reversed(started):
            server.stop()

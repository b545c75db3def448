"""Fixtures of the client tests: every way of calling a client, and emulators
started on demand."""

from __future__ import annotations

import pytest

from thinkseal.testing.pytest_plugin import EmulatorFactory

from .drive import DRIVERS, Driver


@pytest.fixture(params=DRIVERS, ids=str)
def driver(request: pytest.FixtureRequest) -> Driver:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def emulator_of(thinkseal_emulator: EmulatorFactory) -> EmulatorFactory:
    """``emulator_of(provider_id)``: a started emulator, stopped at teardown
    (the public ``thinkseal_emulator`` fixture of ``thinkseal.testing``)."""
    return thinkseal_emulator

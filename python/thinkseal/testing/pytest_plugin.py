"""The pytest plugin of ``thinkseal.testing`` (registered as the ``thinkseal``
``pytest11`` entry point): the ``thinkseal_emulator`` fixture.

``thinkseal_emulator("anthropic")`` returns a started emulator of that provider
(``require_auth=True`` unless told otherwise) that is stopped when the test
ends. The emulators are imported only when the fixture is first used.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

import pytest

if TYPE_CHECKING:
    from ._server import Emulator

__all__ = ["EmulatorFactory", "thinkseal_emulator"]


class EmulatorFactory(Protocol):
    """The ``thinkseal_emulator`` fixture: a started emulator of a provider id."""

    def __call__(self, provider_id: str, *, port: int = 0, require_auth: bool = True) -> Emulator: ...


@pytest.fixture
def thinkseal_emulator() -> Iterator[EmulatorFactory]:
    """A factory of started provider emulators, each stopped at teardown."""
    from ._registry import emulator  # noqa: PLC0415 (keep the plugin cheap to import)

    started: list[Emulator] = []

    def make(provider_id: str, *, port: int = 0, require_auth: bool = True) -> Emulator:
        running = emulator(provider_id, port=port, require_auth=require_auth).start()
        started.append(running)
        return running

    try:
        yield make
    finally:
        for running in reversed(started):
            running.stop()

"""``thinkseal emulate``: a provider's enforcing emulator in the foreground,
for test suites in other languages. The first line printed is the base URL
(with ``--json``, one JSON object); it serves until Ctrl-C or SIGTERM.
``--script FILE`` queues scripted replies and faults (the JSON form of
``thinkseal.testing``'s ``Step`` and ``Fault``); the test-only control
endpoint under ``<server_url>/_thinkseal`` takes more while it runs."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import Any

from ._input import InputError, read_json
from ._output import Out

__all__ = ["run"]


def _script(path: str) -> Any:
    """The script document at ``path``, read (``InputError`` naming the file and member)."""
    from ..testing._control import read_script  # noqa: PLC0415 - the emulators only for this command

    try:
        return read_script(read_json(path))
    except ValueError as err:
        raise InputError(f"{path}: not a script: {err}") from None


def run(args: argparse.Namespace) -> int:
    from ..testing import EMULATOR_IDS, emulator  # noqa: PLC0415 - the emulators only for this command
    from ..testing._control import CONTROL_PATH, apply  # noqa: PLC0415

    if args.provider not in EMULATOR_IDS:
        raise InputError(f"no emulator for {args.provider!r}; known: {', '.join(EMULATOR_IDS)}")
    script = _script(args.script) if args.script is not None else None
    out = Out()
    stop = threading.Event()
    previous = _on_signals(stop)
    try:
        emu = emulator(args.provider, port=args.port, require_auth=not args.no_auth, control=True)
        if script is not None:
            apply(emu, script)
        try:
            emu.start()
        except OSError as err:
            raise InputError(f"cannot listen on 127.0.0.1:{args.port}: {err.strerror or err}") from None
        try:
            if args.json:
                document: dict[str, Any] = {
                    "provider": args.provider,
                    "base_url": emu.base_url,
                    "server_url": emu.server_url,
                    "control_url": emu.server_url + CONTROL_PATH,
                    "require_auth": emu.require_auth,
                    "options": dict(emu.options),
                    "thinking_options": dict(emu.thinking_options),
                }
                out.json(document, indent=None)
            else:
                out.line(emu.base_url)
            out.stream.flush()
            print(
                f"thinkseal: {args.provider} emulator serving at {emu.base_url} "
                f"({'auth required' if emu.require_auth else 'no auth'}); Ctrl-C to stop",
                file=sys.stderr,
                flush=True,
            )
            while not stop.wait(0.2):
                pass
        finally:
            emu.stop()
    except KeyboardInterrupt:
        pass
    finally:
        _restore(previous)
    return 0


_Handler = Any


def _on_signals(stop: threading.Event) -> dict[int, _Handler]:
    """SIGINT and SIGTERM set ``stop`` (only the main thread can install handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore(previous: dict[int, _Handler]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)

"""Scripts as JSON, and the test-only control endpoint that takes them over HTTP.

A script document is ``{"steps": [...], "faults": [...]}`` (either member may
be left out) or a bare array of steps; each step and fault is in the JSON form
of ``Step.to_json`` and ``Fault.to_json``. ``thinkseal emulate --script FILE``
reads one at start. An emulator made with ``control=True`` (as ``thinkseal
emulate`` makes it) also answers, under ``CONTROL_PATH`` — a path no provider
serves — whatever language a test suite is written in:

- ``GET /_thinkseal/script``: the steps still queued (a provider-native reply
  as null) and how many faults are pending;
- ``POST /_thinkseal/script``: a script document appended (steps after those
  queued, faults after those pending); ``PUT``: the same, in place of what is
  queued; ``DELETE``: nothing queued any more;
- ``GET /_thinkseal/requests``: every request received, in order (method,
  path, headers, parsed ``body`` or null, and ``raw`` as text); ``DELETE``:
  forget them;
- ``POST /_thinkseal/rotate-keys``: ``Emulator.rotate_keys``.

Control requests are not recorded, take no fault and need no credentials:
the endpoint is for tests on 127.0.0.1, never a provider's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._server import CONTROL_PATH, Fault, Response, Step, parse_body

if TYPE_CHECKING:
    from ._server import Emulator

__all__ = ["CONTROL_PATH", "Script", "answer", "apply", "read_script"]


@dataclass(frozen=True)
class Script:
    """A script document read: the steps to queue and the faults to apply."""

    steps: tuple[Step, ...] = ()
    faults: tuple[Fault, ...] = ()


def read_script(document: Any) -> Script:
    """``document`` (parsed JSON) as a ``Script``; ``ValueError`` naming the
    member for anything that is not one."""
    if isinstance(document, list):
        document = {"steps": document}
    if not isinstance(document, dict):
        raise ValueError('expected {"steps": [...], "faults": [...]} or an array of steps')
    unknown = sorted(set(document) - {"steps", "faults"})
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown member (expected steps, faults)")
    steps, faults = document.get("steps", []), document.get("faults", [])
    if not isinstance(steps, list):
        raise ValueError("steps: expected an array")
    if not isinstance(faults, list):
        raise ValueError("faults: expected an array")
    return Script(
        tuple(Step.from_json(step, f"steps[{k}]") for k, step in enumerate(steps)),
        tuple(Fault.from_json(fault, f"faults[{k}]") for k, fault in enumerate(faults)),
    )


def apply(emulator: Emulator, script: Script) -> None:
    """Queue ``script``'s steps and faults on ``emulator``, after what is queued."""
    if script.steps:
        emulator.script(*script.steps)
    for fault in script.faults:
        emulator.fault(fault)


def _error(status: int, message: str) -> Response:
    return Response(status, {"error": {"type": "control_error", "message": message}})


def _queued(emulator: Emulator) -> Response:
    steps, faults = emulator._pending()
    return Response(body={"steps": [s.to_json() if isinstance(s, Step) else None for s in steps], "faults": faults})


def _requests(emulator: Emulator) -> Response:
    listed = [
        {
            "method": r.method,
            "path": r.path,
            "headers": dict(r.headers),
            "body": r.body,
            "raw": r.raw.decode("utf-8", "replace"),
        }
        for r in emulator.requests
    ]
    return Response(body={"requests": listed})


def answer(emulator: Emulator, method: str, path: str, raw: bytes) -> Response:
    """The control endpoint's answer to ``method path`` with body ``raw``."""
    route = path.split("?", 1)[0].removeprefix(CONTROL_PATH)
    if route == "/script":
        if method == "GET":
            return _queued(emulator)
        if method == "DELETE":
            emulator.clear_script()
            emulator.clear_faults()
            return _queued(emulator)
        if method in ("POST", "PUT"):
            document, problem = parse_body(raw)
            if problem is not None:
                return _error(400, f"not JSON: {problem.detail} at line {problem.line} column {problem.column}")
            try:
                script = read_script(document)
            except ValueError as err:
                return _error(400, f"not a script: {err}")
            if method == "PUT":
                emulator.clear_script()
                emulator.clear_faults()
            apply(emulator, script)
            return _queued(emulator)
    elif route == "/requests":
        if method == "GET":
            return _requests(emulator)
        if method == "DELETE":
            emulator.clear_requests()
            return _requests(emulator)
    elif route == "/rotate-keys":
        if method == "POST":
            emulator.rotate_keys()
            return Response(body={"rotated": True})
    else:
        return _error(404, f"no control endpoint {path!r}; see docs/testing.md")
    return _error(405, f"{method} is not served at {path!r}")

"""``thinkseal gateway --config FILE [--host H] [--port N]``: the gateway
(docs/gateway.md) served by uvicorn in the foreground until Ctrl-C or
SIGTERM, which end it cleanly (requests in flight are finished, exit status
0). The first line printed is its base URL; the gateway's JSON log lines go to
stderr. uvicorn is imported only by this command (the ``gateway`` extra)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from typing import Any

from ._input import InputError
from ._output import Out

__all__ = ["run"]


def _server(gateway: Any, host: str, port: int) -> Any:
    try:
        import uvicorn  # noqa: PLC0415 - only this command serves
    except ImportError:
        raise InputError("the gateway needs uvicorn: pip install 'thinkseal[gateway]' (or uvicorn)") from None

    return uvicorn.Server(
        uvicorn.Config(
            gateway,
            host=host,
            port=port,
            lifespan="on",
            log_level="warning",
            access_log=False,  # the gateway logs each request itself, without content or secrets
            server_header=False,  # the upstream's own date and server headers are relayed
            date_header=False,
        )
    )


def _on_signals(server: Any) -> None:
    """Ctrl-C and SIGTERM stop the gateway (a second one: without waiting for
    requests in flight). Installed over uvicorn's own handlers once it serves:
    uvicorn would raise the signal again after its shutdown (a
    KeyboardInterrupt, a death by SIGTERM) where this command ends with status
    0. uvicorn puts its predecessors back when it stops."""

    def stop(signum: int, frame: Any) -> None:
        server.force_exit = server.should_exit
        server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)


def _logging() -> None:
    """The gateway's log lines (one JSON object each) on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in ("thinkseal.gateway", "thinkseal.ledger"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def run(args: argparse.Namespace) -> int:
    from ..gateway import app, load_config  # noqa: PLC0415

    config = load_config(args.config)
    server = _server(app(config), args.host, args.port)
    _logging()
    out = Out()

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            _on_signals(server)
            port = next(s.getsockname()[1] for listener in server.servers for s in listener.sockets)
            host = f"[{args.host}]" if ":" in args.host else args.host
            out.line(f"http://{host}:{port}")
            out.stream.flush()
            routes = ", ".join(f"{r.prefix} -> {r.provider}" for r in config.routes)
            print(f"thinkseal: gateway serving at http://{host}:{port} ({routes}); Ctrl-C to stop", file=sys.stderr)
        await task

    try:
        asyncio.run(serve())
    except SystemExit:  # uvicorn's answer to a port it cannot listen on (it logged why)
        raise InputError(f"cannot serve on {args.host}:{args.port}") from None
    if not server.started:
        raise InputError(f"cannot serve on {args.host}:{args.port}")
    return 0

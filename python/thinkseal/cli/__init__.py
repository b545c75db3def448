"""The ``thinkseal`` command (the console script; ``python -m thinkseal`` runs
the same): ``report``, ``body``, ``import``, ``emulate``, ``demo`` and ``gateway``.

Imported only by the script, never by ``import thinkseal``. ``_args`` parses,
``_output`` renders (tables, colour, JSON), ``_input`` reads files, and each
command is one module (``_report``, ``_body``, ``_import``, ``_emulate``,
``_demo``, ``_gateway``) with ``run(args) -> int``.

Exit status: 0 on success; 1 when the adapter would refuse the next request
(``ReplayError``) or a demo step did not behave as described; 2 for a usage or
input error (a one-line ``thinkseal: ...`` message on stderr, never a traceback).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    from .._errors import ThinksealError  # noqa: PLC0415
    from ._args import parse  # noqa: PLC0415
    from ._input import InputError  # noqa: PLC0415

    try:
        args = parse(sys.argv[1:] if argv is None else argv)
    except SystemExit as done:  # --help, --version, or a usage error argparse reported
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    module = importlib.import_module(f"{__name__}._{args.command}")
    try:
        status: int = module.run(args)
    except BrokenPipeError:
        _quiet_stdout()
        return 1
    except (InputError, ThinksealError) as err:
        print(f"thinkseal: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"thinkseal: {err.strerror or err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return status


def _quiet_stdout() -> None:
    """After the reader of a pipe went away: no second error when Python flushes stdout at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass

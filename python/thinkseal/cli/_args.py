"""Argument parsing of the ``thinkseal`` command: one parser per subcommand,
and the old ``python -m thinkseal [FILE] [--target ...]`` invocation read as
``thinkseal report``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from .._binding import Origin

__all__ = ["COMMANDS", "IMPORT_FORMATS", "build_parser", "origin", "parse"]

COMMANDS: tuple[str, ...] = ("report", "body", "import", "emulate", "demo", "gateway")
IMPORT_FORMATS: tuple[str, ...] = ("anthropic", "openai", "openai-responses", "pydantic-ai")
_TOP_LEVEL = ("-h", "--help", "--version")

DESCRIPTION = "Keep an LLM's thinking as each provider returned it, and replay it only where it still holds."
EPILOG = (
    "Without a command, thinkseal runs `report` (on the bundled example when no FILE is given). "
    "`thinkseal COMMAND --help` describes each command."
)


def origin(text: str) -> Origin:
    """``PROVIDER:MODEL[:ACCOUNT]`` as an ``Origin``."""
    provider, _, rest = text.partition(":")
    model, _, account = rest.partition(":")
    if not provider or not model:
        raise argparse.ArgumentTypeError("expected PROVIDER:MODEL or PROVIDER:MODEL:ACCOUNT")
    return Origin(provider, model, account or None)


def option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``: VALUE read as JSON, else as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def port(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {number}")
    return number


def _json_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as one JSON document")


def _request_flags(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--target",
        type=origin,
        required=required,
        metavar="PROVIDER:MODEL[:ACCOUNT]",
        help="the provider adapter and model of the next request"
        + ("" if required else " (default: the origin of the first bound turn)"),
    )
    parser.add_argument(
        "--option",
        action="append",
        type=option,
        default=[],
        metavar="KEY=VALUE",
        help="a request option of the adapter's prepare() (VALUE read as JSON, else as a string), "
        "e.g. --option project=my-project; repeatable. Claude's max_tokens defaults to 4096",
    )


def _ledger_flags(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--ledger",
        metavar="URL",
        help=f"a seal ledger to attach the history to first ({what}): sqlite:///PATH, postgresql://... or "
        "redis://... (docs/ledger.md)",
    )
    parser.add_argument(
        "--account", metavar="ACCOUNT", help="the account the history's turns were recorded under (with --ledger)"
    )


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="thinkseal", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"thinkseal {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    report = commands.add_parser(
        "report",
        help="the replay report of a stored conversation, and whether the next request would be rejected",
        description="Which assistant turns the next request to the target replays sealed, and why the others "
        "go out unsealed. Exit status 1 when the adapter refuses the next request (ReplayError), "
        "2 for a usage or input error, 0 otherwise.",
    )
    report.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="a file written by Conversation.to_json(); - for stdin "
        "(default: a bundled example, a Claude tool loop with signed, redacted and omitted thinking)",
    )
    _request_flags(report, required=False)
    report.add_argument(
        "--edit", type=int, metavar="INDEX", help="replace message INDEX by an edited user message first"
    )
    report.add_argument("--body", action="store_true", help="also print the body of the next request")
    _ledger_flags(report, "turns it recognises are decided as bound")
    _json_flag(report, "the report")

    body = commands.add_parser(
        "body",
        help="the request the target's adapter would send for a stored conversation",
        description="The method, URL path, headers and JSON body of the next request to the target.",
    )
    body.add_argument("file", metavar="FILE", help="a file written by Conversation.to_json(); - for stdin")
    _request_flags(body, required=True)
    body.add_argument("--stream", action="store_true", help="the streaming request")
    _json_flag(body, "the request (path, headers, body)")

    imports = commands.add_parser(
        "import",
        help="convert another library's stored history into a thinkseal conversation",
        description="Read another library's stored history (JSON) and write Conversation.to_json(). "
        "Imported sealed thinking is not bound: the report shows it as unbound until "
        "Conversation.rebind(origin) vouches for it.",
    )
    imports.add_argument("--from", dest="source", required=True, choices=IMPORT_FORMATS, help="the input format")
    imports.add_argument(
        "file",
        metavar="FILE",
        help="a JSON list of messages, or an object with messages/system/tools (openai-responses: "
        "input/instructions/tools; pydantic-ai: ModelMessagesTypeAdapter JSON); - for stdin",
    )
    imports.add_argument("-o", "--output", metavar="OUT", help="write the conversation here (default: stdout)")
    _ledger_flags(imports, "turns it recognises are written bound")

    emulate = commands.add_parser(
        "emulate",
        help="run a provider's enforcing emulator in the foreground",
        description="Serve the enforcing emulator of PROVIDER on 127.0.0.1 until Ctrl-C or SIGTERM. The first "
        "line printed is its base URL (with --json: one JSON object). Replies are scripted with --script and, "
        "while it runs, through the test-only control endpoint under <server_url>/_thinkseal (docs/testing.md).",
    )
    emulate.add_argument("provider", metavar="PROVIDER", help="a provider id (thinkseal.testing.EMULATOR_IDS)")
    emulate.add_argument("--port", type=port, default=0, help="the port to listen on (default 0: any free port)")
    emulate.add_argument("--no-auth", action="store_true", help="accept requests without the provider's auth header")
    emulate.add_argument(
        "--script",
        metavar="FILE",
        help='scripted replies: a JSON file {"steps": [...], "faults": [...]} (or an array of steps), each in '
        "thinkseal.testing's JSON form of Step and Fault; - for stdin. More can be sent at run time to the "
        "test-only control endpoint, POST <server_url>/_thinkseal/script",
    )
    _json_flag(emulate, "the address")

    demo = commands.add_parser(
        "demo",
        help="a tool-using agent loop against the Anthropic emulator (no network, no keys)",
        description="A tool loop through thinkseal.Client against the Anthropic emulator: thinking replayed, "
        "history pruned, model switched, a signature rejection survived. Every step is checked; the exit "
        "status is 1 if one did not behave as described.",
    )
    _json_flag(demo, "the steps")

    gateway = commands.add_parser(
        "gateway",
        help="serve the thinkseal gateway: provider APIs with sealed thinking kept where it holds",
        description="Serve the HTTP gateway of docs/gateway.md in the foreground until Ctrl-C or SIGTERM. Clients "
        "point their base URL at a route (e.g. ANTHROPIC_BASE_URL=http://127.0.0.1:8080/anthropic). The first "
        "line printed is the gateway's base URL; its JSON log lines go to stderr.",
    )
    gateway.add_argument(
        "--config", required=True, metavar="FILE", help="the configuration: a .toml or .json file (docs/gateway.md)"
    )
    gateway.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    gateway.add_argument(
        "--port", type=port, default=8080, help="the port to listen on (default 8080; 0: any free port)"
    )
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` parsed; without a command (the old ``python -m thinkseal`` form)
    it is read as ``report``. Usage errors exit (``SystemExit(2)``)."""
    args = list(argv)
    if not args or (args[0] not in COMMANDS and args[0] not in _TOP_LEVEL):
        args = ["report", *args]
    return build_parser().parse_args(args)

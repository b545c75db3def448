"""``thinkseal body``: the request the target's adapter would send next for a
stored conversation — method, URL path, headers and the JSON body."""

from __future__ import annotations

import argparse
import sys

from .._errors import ReplayError
from ..providers import provider
from ._input import load_conversation, request_options, target_text
from ._output import Out, dumps

__all__ = ["run"]

METHOD = "POST"  # every adapter's requests are POSTs


def run(args: argparse.Namespace) -> int:
    out = Out()
    conversation, _ = load_conversation(args.file)
    target = args.target
    options = request_options(target, args.option)
    adapter = provider(target.provider, account=target.account)
    try:
        request = adapter.prepare(conversation, model=target.model, stream=args.stream, **options)
    except ReplayError as err:
        print(f"thinkseal: the next request would be rejected: {err}", file=sys.stderr)
        return 1
    headers = dict(request.headers)
    if args.json:
        out.json(
            {
                "target": target_text(target),
                "method": METHOD,
                "path": request.path,
                "headers": headers,
                "body": request.body,
            }
        )
        return 0
    out.line(f"{out.paint(METHOD, 'bold')} {out.paint(request.path, 'cyan')}")
    for name, value in headers.items():
        out.line(f"{out.paint(name, 'dim')}: {value}")
    out.line()
    out.line(dumps(request.body))
    return 0

"""The thinkseal gateway: an HTTP gateway in front of the providers that makes
sealed thinking safe for any client, in any language (docs/gateway.md).

    thinkseal gateway --config gateway.toml --port 8080
    # or, in Python: uvicorn.run(thinkseal.gateway.app("gateway.toml"))

Clients point their base URL at a route (``ANTHROPIC_BASE_URL=http://gw:8080/anthropic``).
Every reply is recorded in the seal ledger; every history is checked against
it, and what no longer holds for the upstream goes out unsealed, with the
library's decision. Imported only by the ``gateway`` command or by name.
"""

from __future__ import annotations

from ._app import Gateway, app
from ._config import Config, Route, load_config

__all__ = ["Config", "Gateway", "Route", "app", "load_config"]

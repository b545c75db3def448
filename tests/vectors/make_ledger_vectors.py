"""Writes ledger-v1.json: ledger keys of sealed data and entry checks
(docs/fingerprint.md §11), for another implementation to share a ledger.

Run once when the ledger's rules change (new context strings); never to make a
failing test pass. `cargo test` (rust/core/tests/ledger.rs) and pytest
(tests/test_vectors.py) check every case.
"""

from __future__ import annotations

import json
from pathlib import Path

from thinkseal import _core

DATA = [
    (None, "signature", None, "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"),
    ("team-a", "signature", None, "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"),
    ("", "signature", None, "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"),  # an empty account is no account
    (None, "redacted", None, "EmwKAhgBEgy3va3pzix/LafPsn4a"),
    (None, "opaque", "openrouter", '{"type":"reasoning.encrypted","data":"gAAA","index":0}'),
    (None, "opaque", "openai-responses", '{"encrypted_content":"gAAA","id":"rs_1","summary":[],"type":"reasoning"}'),
    ("org é", "native", "anthropic", '{"type":"web_search_tool_result","content":[]}'),
    (None, "native", "gemini", '{"executableCode":{"code":"print(1)","language":"PYTHON"}}'),
]
BINDING = (
    "thinkseal-binding/1;anthropic;claude-sonnet-4-5;;"
    "19de534ea1cc823f6d38e44a3968f46beefa50e474e24bf80af9a5e9747efabb;"
    "634c83242bb501b8d51306bd86634c77fa59969dde3f43916917c8f7b7a02627"
)
SECRETS = [b"", b"fleet secret"]


def main() -> None:
    keys = []
    for account, kind, provider, datum in DATA:
        (key,) = _core.ledger_keys(account, [(kind, provider, datum)])
        keys.append({"account": account, "kind": kind, "provider": provider, "datum": datum, "key": bytes(key).hex()})
    checks = []
    for secret in SECRETS:
        entry_key = _core.ledger_entry_key(secret)
        for binding in (BINDING, "!conflict"):
            key = bytes.fromhex(keys[0]["key"])
            check = _core.ledger_check(entry_key, key, binding)
            checks.append(
                {
                    "secret": secret.hex(),
                    "entry_key": bytes(entry_key).hex(),
                    "key": key.hex(),
                    "binding": binding,
                    "check": bytes(check).hex(),
                }
            )
    document = {"version": 1, "keys": keys, "checks": checks}
    out = Path(__file__).with_name("ledger-v1.json")
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

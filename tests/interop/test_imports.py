"""``import thinkseal`` stays fast: no interop module and no SDK comes with it,
and the interop modules import their SDK only when a function needs it.

What the import costs is measured by ``benches/import_time.py`` and never
asserted here: these tests check, each in a fresh process, which modules it
loads, and that the names loaded on first use are all still there."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SDKS = (
    "anthropic",
    "openai",
    "boto3",
    "botocore",
    "pydantic_ai",
    "mistralai",
    "ollama",
    "google.genai",
    "httpx",
    # The frameworks of the adapters (thinkseal.interop.agents, .langchain, .litellm).
    "agents",
    "langchain_core",
    "litellm",
)

# Sub-packages ``import thinkseal`` leaves for first use (``thinkseal.provider``,
# ``thinkseal.Client`` or an explicit import loads them).
LAZY_PACKAGES = ("providers", "client", "store", "interop", "testing", "cli", "examples")

# Standard-library modules only some paths need, imported where they are used
# (stored JSON, percent-encoded bindings, base64 image data, deep copies, the
# clients and stores), or that nothing on the import path should need.
LAZY_STDLIB = (
    "json",
    "urllib",
    "base64",
    "copy",
    "threading",
    "importlib",
    "asyncio",
    "sqlite3",
    "dataclasses",
    "inspect",
    "logging",
    "socket",
    "ssl",
    "http",
    "email",
)


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_import_thinkseal_imports_no_interop_and_no_sdk() -> None:
    modules = loaded_after("import thinkseal")
    assert not any(m.startswith("thinkseal.interop") for m in modules)
    assert not [m for m in modules if m.split(".")[0] in SDKS or m in SDKS]


def test_importing_an_interop_module_imports_no_sdk() -> None:
    code = "from thinkseal.interop import anthropic, openai, pydantic_ai, bedrock"
    modules = loaded_after(code)
    assert "thinkseal.interop.pydantic_ai" in modules
    assert not [m for m in modules if m.split(".")[0] in SDKS or m in SDKS]


def test_import_thinkseal_loads_no_sub_package_and_no_rarely_needed_stdlib_module() -> None:
    # Counted against a bare interpreter: what site and .pth files load is not the import's doing.
    loaded = loaded_after("import thinkseal") - loaded_after("")
    sub_packages = {m.split(".")[1] for m in loaded if m.startswith("thinkseal.")}
    assert sorted(sub_packages & set(LAZY_PACKAGES)) == []
    assert sorted({m.split(".")[0] for m in loaded} & set(LAZY_STDLIB)) == []


def test_every_public_name_is_listed_and_importable_after_a_bare_import() -> None:
    code = textwrap.dedent(
        """
        import thinkseal

        assert set(thinkseal.__all__) <= set(dir(thinkseal)), set(thinkseal.__all__) - set(dir(thinkseal))
        for name in thinkseal.__all__:
            exec(f"from thinkseal import {name}", {})
        # The sub-package itself, as when ``import thinkseal`` loaded it.
        assert "anthropic" in thinkseal.providers.PROVIDER_IDS
        import thinkseal.client
        import thinkseal.providers

        assert thinkseal.provider is thinkseal.providers.provider
        assert thinkseal.PreparedRequest is thinkseal.providers.PreparedRequest
        assert (thinkseal.Client, thinkseal.AsyncClient) == (thinkseal.client.Client, thinkseal.client.AsyncClient)
        try:
            thinkseal.no_such_name
        except AttributeError as err:
            assert "no_such_name" in str(err)
        else:
            raise AssertionError("thinkseal.no_such_name resolved")
        print("ok")
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["ok"]

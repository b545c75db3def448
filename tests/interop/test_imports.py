"""``import thinkseal`` stays fast: no interop module and no SDK comes with it,
and the interop modules import their SDK only when a function needs it."""

from __future__ import annotations

import subprocess
import sys

SDKS = ("anthropic", "openai", "boto3", "botocore", "pydantic_ai", "mistralai", "ollama", "google.genai", "httpx")


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

"""The agent-server example (examples/agent_server): the same FastAPI app on
pydantic-ai alone and on pydantic-ai with thinkseal, driven under uvicorn by
its scenario against thinkseal's emulators, at a small size."""

from __future__ import annotations

from typing import Any

import pytest
from examples.agent_server import scenario

SESSIONS = 4


@pytest.fixture(scope="module")
def summaries() -> dict[str, dict[str, Any]]:
    return {app: scenario.run(app, SESSIONS) for app in ("thinkseal", "pydantic-ai")}


def test_every_step_ran_for_every_session_and_the_app_restarted(summaries: dict[str, dict[str, Any]]) -> None:
    steps = len(scenario.BEFORE_RESTART) + len(scenario.AFTER_RESTART)
    for summary in summaries.values():
        assert summary["restarted"] is True
        assert summary["app_requests"] == steps * SESSIONS
        assert summary["app_transport_errors"] == 0
        # Every agent run reached its provider: tool loops on Anthropic, a run on OpenRouter.
        assert summary["upstream_requests"]["anthropic"] > SESSIONS * 4
        assert summary["upstream_requests"]["openrouter"] >= SESSIONS
        assert summary["streamed_characters"] > 0


def test_with_thinkseal_no_request_is_rejected_and_seals_still_go_back(summaries: dict[str, dict[str, Any]]) -> None:
    summary = summaries["thinkseal"]
    print("\nthinkseal:", summary)
    assert summary["rejections"] == 0
    assert summary["app_failures"] == 0
    # Not by dropping every seal: the tool loops replay their signed thinking, on both providers.
    assert summary["upstream_requests_replaying_sealed_thinking"]["anthropic"] >= SESSIONS * 4
    assert summary["upstream_requests_replaying_sealed_thinking"]["openrouter"] >= 1


def test_pydantic_ai_alone_is_rejected(summaries: dict[str, dict[str, Any]]) -> None:
    summary = summaries["pydantic-ai"]
    print("\npydantic-ai:", summary)
    assert summary["rejections"] >= 1
    assert summary["rejections_by_step"].get("after model switch", 0) == SESSIONS
    assert summary["app_failures"] == summary["rejections"]  # each refusal reached the client as a failure


def test_the_thinkseal_app_is_no_longer_than_the_plain_one() -> None:
    lines = scenario.line_counts()
    assert lines["app_thinkseal.py"]["code"] <= lines["app_pydantic_ai.py"]["code"]
    assert (
        lines["app_thinkseal.py"]["code_without_docstrings"] <= lines["app_pydantic_ai.py"]["code_without_docstrings"]
    )

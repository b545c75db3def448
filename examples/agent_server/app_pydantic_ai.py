"""An agent server on pydantic-ai alone.

A FastAPI app: a pydantic-ai ``Agent`` with two tools, and sessions whose
history is the agent's own message history, kept as pydantic-ai's JSON in a
SQLite file (a restart loses nothing). Each session runs on a provider and
model it can switch (Claude on Anthropic, or a model on OpenRouter).

    POST /sessions/{id}/messages   {"prompt": ...}            run the agent (tool loops inside)
    GET  /sessions/{id}/stream?prompt=...                     the same, streamed as server-sent events
    POST /sessions/{id}/model      {"provider": ..., "model": ...}
    POST /sessions/{id}/prune      {"keep": n}                keep the last n exchanges

Configuration: ``create_app(...)`` arguments, or the environment
(``AGENT_STORE``, ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``,
``OPENROUTER_BASE_URL``, ``OPENROUTER_API_KEY``).

    uvicorn --factory examples.agent_server.app_pydantic_ai:create_app
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import AsyncIterator
from typing import Literal

from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse
from openai import AsyncOpenAI
from pydantic import BaseModel, Field
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openrouter import OpenRouterModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openrouter import OpenRouterProvider
from pydantic_ai.settings import ModelSettings

DEFAULT_MODEL = ("anthropic", "claude-sonnet-4-5")
WEATHER = {"paris": "18°C, cloudy", "rome": "24°C, sunny", "oslo": "6°C, rain"}
FACTS = {"paris": "Capital of France, 2.1 million people.", "rome": "Capital of Italy, 2.8 million people."}

agent = Agent(instructions="You are a concise travel assistant. Use the tools for facts; answer in one sentence.")


@agent.tool_plain
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return WEATHER.get(city.lower(), "no report")


@agent.tool_plain
def lookup(topic: str) -> str:
    """Look a topic up in the travel guide."""
    return FACTS.get(topic.lower(), "no entry")


class Prompt(BaseModel):
    prompt: str


class ModelChoice(BaseModel):
    provider: Literal["anthropic", "openrouter"]
    model: str


class Prune(BaseModel):
    keep: int = Field(ge=1)


class Sessions:
    """Each session's provider, model and history (pydantic-ai's JSON) in one SQLite file."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, provider TEXT, model TEXT, history BLOB)"
        )

    def load(self, session: str) -> tuple[str, str, list[ModelMessage]]:
        row = self.db.execute("SELECT provider, model, history FROM sessions WHERE id = ?", (session,)).fetchone()
        if row is None:
            return (*DEFAULT_MODEL, [])
        return row[0], row[1], ModelMessagesTypeAdapter.validate_json(row[2])

    def save(self, session: str, provider: str, model: str, history: list[ModelMessage]) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?)",
                (session, provider, model, ModelMessagesTypeAdapter.dump_json(history)),
            )


def create_app(
    store: str | None = None,
    *,
    anthropic_url: str | None = None,
    anthropic_key: str | None = None,
    openrouter_url: str | None = None,
    openrouter_key: str | None = None,
) -> FastAPI:
    env = os.environ.get
    sessions = Sessions(store or env("AGENT_STORE", "sessions.db"))
    anthropic = AnthropicProvider(
        base_url=anthropic_url or env("ANTHROPIC_BASE_URL"), api_key=anthropic_key or env("ANTHROPIC_API_KEY")
    )
    openrouter = OpenRouterProvider(
        openai_client=AsyncOpenAI(
            base_url=openrouter_url or env("OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1"),
            api_key=openrouter_key or env("OPENROUTER_API_KEY"),
        )
    )

    @functools.cache
    def model_for(provider: str, name: str) -> tuple[Model, ModelSettings]:
        if provider == "anthropic":
            thinking = {"type": "enabled", "budget_tokens": 1024}
            return AnthropicModel(name, provider=anthropic), {"max_tokens": 2048, "anthropic_thinking": thinking}
        reasoning = {"effort": "medium"}
        return OpenRouterModel(name, provider=openrouter), {"max_tokens": 2048, "openrouter_reasoning": reasoning}

    app = FastAPI(title="Agent server (pydantic-ai)")

    @app.post("/sessions/{session}/messages")
    async def message(session: str, body: Prompt) -> dict[str, str]:
        provider, name, history = sessions.load(session)
        model, settings = model_for(provider, name)
        try:
            result = await agent.run(body.prompt, message_history=history, model=model, model_settings=settings)
        except ModelHTTPError as exc:
            raise HTTPException(502, {"provider": provider, "status": exc.status_code, "body": exc.body}) from exc
        sessions.save(session, provider, name, result.all_messages())
        return {"output": result.output}

    @app.get("/sessions/{session}/stream")
    async def stream(session: str, prompt: str) -> StreamingResponse:
        provider, name, history = sessions.load(session)
        model, settings = model_for(provider, name)

        async def events() -> AsyncIterator[str]:
            try:
                async with agent.run_stream(
                    prompt, message_history=history, model=model, model_settings=settings
                ) as run:
                    async for delta in run.stream_text(delta=True):
                        yield f"data: {json.dumps(delta)}\n\n"
            except ModelHTTPError as exc:
                error = {"provider": provider, "status": exc.status_code, "body": exc.body}
                yield f"event: error\ndata: {json.dumps(error)}\n\n"
                return
            sessions.save(session, provider, name, run.all_messages())
            yield "event: done\ndata: {}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    @app.post("/sessions/{session}/model")
    async def switch_model(session: str, body: ModelChoice) -> dict[str, str]:
        _, _, history = sessions.load(session)
        sessions.save(session, body.provider, body.model, history)
        return {"provider": body.provider, "model": body.model}

    @app.post("/sessions/{session}/prune")
    async def prune(session: str, body: Prune) -> dict[str, int]:
        provider, name, history = sessions.load(session)
        # An exchange starts at each request carrying a user prompt (tool returns do not start one).
        starts = [
            i
            for i, m in enumerate(history)
            if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
        ]
        if len(starts) > body.keep:
            history = history[starts[-body.keep] :]
        sessions.save(session, provider, name, history)
        return {"messages": len(history)}

    return app

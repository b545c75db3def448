"""The provider emulators as fixtures: each one a real server on 127.0.0.1,
started for the test and stopped after it, and the official SDK client that
talks to it (no retries, test credentials)."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import boto3  # type: ignore[import-untyped]
import botocore.client  # type: ignore[import-untyped]
import ollama
import pytest
from mistralai.client import Mistral

from thinkseal.testing import AnthropicEmulator, BedrockEmulator, MistralEmulator, OllamaEmulator


@pytest.fixture
def anthropic_emulator() -> Iterator[AnthropicEmulator]:
    with AnthropicEmulator() as server:
        yield server


@pytest.fixture
def anthropic_client(anthropic_emulator: AnthropicEmulator) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=anthropic_emulator.base_url, api_key="test", max_retries=0)


@pytest.fixture
def bedrock_emulator() -> Iterator[BedrockEmulator]:
    with BedrockEmulator() as server:
        yield server


@pytest.fixture
def bedrock_client(bedrock_emulator: BedrockEmulator) -> botocore.client.BaseClient:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=bedrock_emulator.base_url,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=botocore.client.Config(retries={"max_attempts": 1}),
    )


@pytest.fixture
def mistral_emulator() -> Iterator[MistralEmulator]:
    with MistralEmulator() as server:
        yield server


@pytest.fixture
def mistral_client(mistral_emulator: MistralEmulator) -> Mistral:
    return Mistral(api_key="test-key", server_url=mistral_emulator.base_url)


@pytest.fixture
def ollama_emulator() -> Iterator[OllamaEmulator]:
    # llama3.2 cannot think: test_ollama checks that thinking with it is refused.
    with OllamaEmulator(non_thinking_models=("llama3.2",)) as server:
        yield server


@pytest.fixture
def ollama_client(ollama_emulator: OllamaEmulator) -> ollama.Client:
    return ollama.Client(host=ollama_emulator.base_url)

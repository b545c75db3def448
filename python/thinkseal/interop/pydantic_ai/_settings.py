"""pydantic-ai's generic ``ModelSettings`` as each provider's own request
fields, for ``ThinksealModel``: thinkseal's adapters take the provider's field
names (``max_tokens``, ``generationConfig.maxOutputTokens``, ...), so a
setting pydantic-ai names once goes where each wire format wants it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._errors import ValidationError

_CLAUDE: Final = {
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "stop_sequences": "stop_sequences",
}
_CHAT: Final = {
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "stop_sequences": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
_GEMINI: Final = {
    "max_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "stop_sequences": "stopSequences",
    "seed": "seed",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
}

# provider id -> (the object the fields go in, or None for the body itself; generic name -> field name)
FIELDS: Final[dict[str, tuple[str | None, Mapping[str, str]]]] = {
    "anthropic": (None, _CLAUDE),
    "vertex-anthropic": (None, _CLAUDE),
    "bedrock": (
        "inferenceConfig",
        {"max_tokens": "maxTokens", "temperature": "temperature", "top_p": "topP", "stop_sequences": "stopSequences"},
    ),
    "openrouter": (None, _CHAT),
    "deepseek": (None, _CHAT),
    "zai": (None, _CHAT),
    "openai": (None, _CHAT),
    "gemini-openai": (None, _CHAT),
    "mistral": (None, {**_CHAT, "seed": "random_seed"}),
    "openai-responses": (None, {"max_tokens": "max_output_tokens", "temperature": "temperature", "top_p": "top_p"}),
    "gemini": ("generationConfig", _GEMINI),
    "vertex-gemini": ("generationConfig", _GEMINI),
    "ollama": (
        "options",
        {
            "max_tokens": "num_predict",
            "temperature": "temperature",
            "top_p": "top_p",
            "top_k": "top_k",
            "stop_sequences": "stop",
            "seed": "seed",
            "presence_penalty": "presence_penalty",
            "frequency_penalty": "frequency_penalty",
        },
    ),
}

# Settings pydantic-ai applies itself, or that ThinksealModel reads elsewhere (extra_body).
HANDLED: Final = frozenset(
    {"request_timeout", "first_event_timeout", "framing_announcement", "thinking", "cache", "tool_choice", "extra_body"}
)
GENERIC: Final = frozenset(
    {
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "timeout",
        "max_retries",
        "parallel_tool_calls",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "stop_sequences",
        "extra_headers",
        "citations",
        "service_tier",
    }
)


def unsupported(provider_id: str) -> frozenset[str]:
    """The generic settings the provider's mapping does not send (pydantic-ai warns about those that matter)."""
    _, names = FIELDS.get(provider_id, (None, {}))
    return GENERIC - set(names)


def options_for(provider_id: str, base: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` (the model's provider-native ``options``) with the mapped
    ``settings`` over it, then ``settings["extra_body"]`` over everything:
    the request options thinkseal's adapter takes."""
    out = dict(base)
    into, names = FIELDS.get(provider_id, (None, {}))
    mapped = {names[k]: v for k, v in settings.items() if k in names and v is not None}
    if mapped and into is None:
        out.update(mapped)
    elif mapped and into is not None:
        nested = out.get(into, {})
        if not isinstance(nested, Mapping):
            raise ValidationError(f"options.{into}: expected an object", path=f"options.{into}")
        out[into] = {**nested, **mapped}
    extra = settings.get("extra_body")
    if extra is not None:
        if not isinstance(extra, Mapping):
            raise ValidationError("model_settings.extra_body: expected an object", path="model_settings.extra_body")
        out.update(extra)
    return out

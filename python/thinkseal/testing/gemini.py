"""A local stand-in for ``generateContent`` on the Gemini API and on Vertex AI,
enforcing the thought-signature rules thinkseal relies on.

It serves both path shapes (``/v1beta/models/{model}:generateContent`` and
``/v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent``,
each also as ``:streamGenerateContent?alt=sse``) and answers scripted replies.

- Signing: every ``thoughtSignature`` it returns is an HMAC over the service
  (Gemini API or Vertex AI), the model, the account (the ``x-goog-api-key``
  header; Vertex: the bearer token and the project), the ``systemInstruction``,
  the ``tools``, every content before the reply as the request sent it, the
  reply's parts before the signed part, and the signed part itself. On a later
  request every signature is verified against what is sent now: a signature
  from another model, account or service, over a changed prefix, or moved to
  another part is answered with Google's 400 (``CORRUPTED`` on the Gemini API,
  ``VERTEX_INVALID`` on Vertex AI). Google documents strict validation for the
  current turn only and says nothing of a prefix binding: checking every
  signature against its prefix is this emulator's stricter, assumed rule. The
  dummy signatures Google documents are accepted anywhere.
- Gemini 3's rule (models not named ``gemini-1``/``gemini-2``): the first
  ``functionCall`` of every model content in the current turn (after the last
  user content with a part that is not a ``functionResponse``) must carry a
  signature, else ``MISSING`` (``VERTEX_MISSING``).
- Where signatures go, as the thought-signature page describes Gemini 3: on
  the first function call of a reply with calls, else on the last part; a
  stream without calls sends the signature in a last chunk with empty text
  (the page's FAQ 3). Thought summaries are returned with ``includeThoughts``.
- Function calling: a model content with calls must follow a user content,
  and be answered by the next content with as many ``functionResponse``
  parts, by name in call order (``PAIRING``, ``FC_POSITION``).
- ``thinkingConfig`` with both a budget and a level: ``BOTH_BUDGET_AND_LEVEL``.

Replies are scripted with ``Step`` (its thinking becomes a thought summary,
returned with ``includeThoughts``, and the signature goes on the part after
it) or the provider-native ``Reply``. Error bodies are Google's: ``{"error": {"code": 400, "message", "status":
"INVALID_ARGUMENT"}}``. Where each string comes from is in
docs/providers.md (Gemini, Vertex AI).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ._server import BodyProblem, Emulator, Request, RequestRejected, Response, Step

MISSING = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
    "call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
VERTEX_MISSING = (
    "Unable to submit request because function call `default_api:{name}` in the {position}. content block is "
    "missing a `thought_signature`. Learn more: https://docs.cloud.google.com/vertex-ai/generative-ai/docs/"
    "thought-signatures"
)
CORRUPTED = "Corrupted thought signature."
VERTEX_INVALID = (
    "Unable to submit request because Thought signature is not valid.. Learn more: "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)
PAIRING = (
    "Please ensure that the number of function response parts is equal to the number of function call parts of "
    "the function call turn."
)
FC_POSITION = (
    "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
)
BOTH_BUDGET_AND_LEVEL = "You can only set only one of thinking budget and thinking level."
DUMMIES = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")

_GEMINI_PATH = re.compile(r"/v1beta/models/([^/:?]+):(generateContent|streamGenerateContent)(\?alt=sse)?")
_VERTEX_PATH = re.compile(
    r"/v1/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:?]+)"
    r":(generateContent|streamGenerateContent)(\?alt=sse)?"
)
_TOP_LEVEL = frozenset(
    {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings", "cachedContent"}
)
_DATA = ("text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult")


def _error(message: str, code: int = 400, status: str = "INVALID_ARGUMENT") -> RequestRejected:
    return RequestRejected(code, {"error": {"code": code, "message": message, "status": status}})


def canon(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def strict(model: str) -> bool:
    return re.match(r"gemini-[12](\.|-|$)", model) is None


_ABSENT = object()


@dataclass
class Reply:
    """A scripted reply: a thought summary (returned with ``includeThoughts``),
    answer text, function calls ``(name, args)`` (with ids when ``ids``), and a
    cut stream (no chunk with ``finishReason``)."""

    thought: str = ""
    text: str = ""
    calls: Sequence[tuple[str, Mapping[str, Any]]] = ()
    ids: bool = False
    cut: bool = False


# Members whose values are the caller's data, not the API's structure.
_DATA_MEMBERS = frozenset({"args", "response", "parametersJsonSchema", "parameters", "responseJsonSchema"})


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


# Members without presence whose proto3 default reads as absent.
_DEFAULTS_AS_ABSENT: Mapping[str, Any] = MappingProxyType({"thought": False})


def _normal(value: Any) -> Any:
    """A request value as the API reads it (the protobuf JSON mapping; see
    docs/providers.md, "Which spellings are the same request"): members in
    camelCase (the SDK writes some in snake_case), null members and
    ``thought: false`` as absent, base64 (signatures, blobs) in one alphabet
    without padding (the SDK writes URL-safe); the caller's data (function
    arguments and responses, schemas) left as it is."""
    if isinstance(value, dict):
        out = {}
        for name, item in value.items():
            member = _camel(name)
            default = _DEFAULTS_AS_ABSENT.get(member, _ABSENT)
            if item is None or (type(item) is type(default) and item == default):
                continue
            if member in ("thoughtSignature", "data") and isinstance(item, str) and item not in DUMMIES:
                out[member] = item.replace("-", "+").replace("_", "/").rstrip("=")
            else:
                out[member] = item if member in _DATA_MEMBERS else _normal(item)
        return out
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


@dataclass
class Signer:
    """Signs reply parts and verifies replayed ones (see the module docstring)."""

    service: str
    model: str
    account: str
    body: Mapping[str, Any]
    secret: bytes = field(default=b"gemini-emulator-secret")

    def sign(self, prefix: Sequence[Any], before: Sequence[Any], part: Mapping[str, Any]) -> str:
        material = canon(
            {
                "service": self.service,
                "model": self.model,
                "account": self.account,
                "system": _normal(self.body.get("systemInstruction") or self.body.get("system_instruction")),
                "tools": _normal(self.body.get("tools")),
                "contents": _normal(list(prefix)),
                "before": _normal(list(before)),
                "part": _normal({k: v for k, v in part.items() if k != "thoughtSignature"}),
            }
        )
        return base64.b64encode(hmac.new(self.secret, material, hashlib.sha256).digest()).decode()


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class GeminiEmulator(Emulator):
    """Scripted replies behind the enforced rules, on both services' paths.
    ``provider`` ("gemini" or "vertex-gemini") only picks ``options``: both
    paths are served. Script with ``Step``, or the provider-native ``Reply``
    (``queue(Reply(...))``) for call ids or a cut stream."""

    def __init__(self, provider: str = "gemini", *, port: int = 0, require_auth: bool = False) -> None:
        if provider not in ("gemini", "vertex-gemini"):
            raise ValueError(f"not a Gemini provider: {provider!r}")
        super().__init__(port=port, require_auth=require_auth)
        self.provider = provider
        self._secret = b"gemini-emulator-secret"

    @property
    def options(self) -> Mapping[str, Any]:
        if self.provider == "vertex-gemini":
            return MappingProxyType({"project": "test-project", "location": "us-central1"})
        return MappingProxyType({})

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        thinking = {"generationConfig": {"thinkingConfig": {"thinkingLevel": "HIGH", "includeThoughts": True}}}
        return MappingProxyType({**self.options, **thinking})

    def queue(self, *replies: Reply) -> None:
        """Queue provider-native replies (each answers one request)."""
        with self._lock:
            self._script.extend(replies)

    def _reply(self) -> Reply:
        item = self._take()
        if item is None:
            return Reply(text="Done.")
        if isinstance(item, Step):
            return Reply(thought=item.thinking or "", text=item.text or "", calls=list(item.calls))
        assert isinstance(item, Reply)
        return item

    def _rotate(self) -> None:
        self._secret = hashlib.sha256(self._secret + b"/rotated").digest()

    def _streaming(self, request: Request) -> bool:
        return ":streamGenerateContent" in request.path

    def _error(self, status: int, message: str) -> Response:
        google = _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return Response(status, {"error": {"code": status, "message": message, "status": google}})

    def _authorized(self, request: Request) -> bool:
        if _VERTEX_PATH.fullmatch(request.path) is not None:
            value = request.headers.get("authorization", "")
            return value.startswith("Bearer ") and bool(value.removeprefix("Bearer ").strip())
        keys = parse_qs(urlsplit(request.path).query).get("key", [])
        return bool(request.headers.get("x-goog-api-key")) or any(keys)

    def _auth_error(self) -> Response:
        if self.provider == "vertex-gemini":
            return self._error(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
                "other valid authentication credential.",
            )
        return self._error(401, "API key not valid. Please pass a valid API key.")

    def _serves(self, request: Request) -> bool:
        return _GEMINI_PATH.fullmatch(request.path) is not None or _VERTEX_PATH.fullmatch(request.path) is not None

    def _invalid_json(self, problem: BodyProblem) -> Response:
        if problem.kind == "depth":
            message = "Invalid JSON payload received. Message nesting too deep (emulator wording)."
        elif problem.at_end:
            message = "Invalid JSON payload received. Unexpected end of string."
        else:
            message = f"Invalid JSON payload received. Unexpected token.\n{problem.found}\n^"
        return self._error(400, message)

    def _too_large(self) -> Response:
        return self._error(400, f"Request payload size exceeds the limit: {self.max_body_bytes} bytes.")

    def _answer(self, request: Request) -> Response:
        # Checked and signed as the API reads it: the protobuf JSON mapping's
        # spellings (field names in either case, null as absent...) as one.
        body = _normal(request.body) if isinstance(request.body, dict) else request.body
        path = request.path
        headers = request.headers
        if (match := _GEMINI_PATH.fullmatch(path)) is not None:
            service, model, action, sse = "gemini", unquote(match[1]), match[2], match[3]
            account = headers.get("x-goog-api-key", "")
        elif (match := _VERTEX_PATH.fullmatch(path)) is not None:
            service, model, action, sse = "vertex", unquote(match[3]), match[4], match[5]
            account = f"{match[1]}/{headers.get('authorization', '')}"
        else:
            raise _error(f"Method not found: {path}", 404, "NOT_FOUND")
        stream = action == "streamGenerateContent"
        if stream and not sse:
            raise _error("emulator: streamGenerateContent is served as SSE only (?alt=sse)")
        with self._lock:
            signer = Signer(service, model, account, body if isinstance(body, dict) else {}, self._secret)
            check_request(body, signer)
            reply = self._reply()
            number = len(self._requests)
        thinking = ((body.get("generationConfig") or {}).get("thinkingConfig") or {}).get("includeThoughts") is True
        parts = reply_parts(reply, signer, body["contents"], thinking)
        response = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": 12,
                "candidatesTokenCount": 7,
                "thoughtsTokenCount": 30,
                "totalTokenCount": 49,
            },
            "modelVersion": model,
            "responseId": f"resp-{number}",
        }
        if not stream:
            return Response(body=response)
        chunks = stream_chunks(response, cut=reply.cut)
        lines = [b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks]
        return Response(chunks=lines, content_type="text/event-stream")


def check_request(body: Any, signer: Signer) -> None:
    """Raise ``RequestRejected`` for a body the service refuses."""
    if not isinstance(body, dict):
        raise _error("Invalid JSON payload received. Expected an object.")
    for name in body:
        if name not in _TOP_LEVEL:
            raise _error(f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.')
    thinking = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
    if thinking.get("thinkingBudget") is not None and thinking.get("thinkingLevel") is not None:
        raise _error(BOTH_BUDGET_AND_LEVEL)
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _error("* GenerateContentRequest.contents: contents is not specified")
    for i, content in enumerate(contents):
        _check_content(content, i)
    _check_calls(contents)
    _check_signatures(contents, signer)
    if strict(signer.model):
        _check_current_turn(contents, signer.service)


def _check_content(content: Any, i: int) -> None:
    if not isinstance(content, dict) or content.get("role") not in ("user", "model"):
        raise _error(f"* GenerateContentRequest.contents[{i}].role: must be 'user' or 'model'")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise _error(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
    for j, part in enumerate(parts):
        data = [k for k in _DATA if isinstance(part, dict) and k in part]
        if len(data) != 1:
            raise _error(f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required oneof field 'data'")


def _calls(content: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [p["functionCall"] for p in content["parts"] if "functionCall" in p]


def _check_calls(contents: list[Any]) -> None:
    for i, content in enumerate(contents):
        calls = _calls(content)
        if content["role"] != "model" or not calls:
            continue
        if i == 0 or contents[i - 1]["role"] != "user":
            raise _error(FC_POSITION)
        after = contents[i + 1] if i + 1 < len(contents) else None
        if after is None:
            continue  # the model's own last step, continued by the caller
        responses = [p["functionResponse"] for p in after["parts"] if "functionResponse" in p]
        if after["role"] != "user" or len(responses) != len(calls):
            raise _error(PAIRING)
        for call, response in zip(calls, responses, strict=True):
            if response.get("name") != call.get("name") or response.get("id") != call.get("id"):
                raise _error(PAIRING)


def _check_signatures(contents: list[Any], signer: Signer) -> None:
    for i, content in enumerate(contents):
        for j, part in enumerate(content["parts"]):
            signature = part.get("thoughtSignature")
            if signature is None or signature in DUMMIES:
                continue
            expected = signer.sign(contents[:i], content["parts"][:j], part)
            if content["role"] != "model" or _bytes(signature) != _bytes(expected):
                raise _error(CORRUPTED if signer.service == "gemini" else VERTEX_INVALID)


def _bytes(signature: Any) -> bytes | None:
    """A signature's bytes: base64 in either alphabet (the SDK writes URL-safe)."""
    if not isinstance(signature, str):
        return None
    padding = "=" * (-len(signature) % 4)  # the SDK may leave it out
    try:
        return base64.urlsafe_b64decode(signature.replace("+", "-").replace("/", "_") + padding)
    except ValueError:
        return None


def _check_current_turn(contents: list[Any], service: str) -> None:
    start = 0
    for i, content in enumerate(contents):
        if content["role"] == "user" and any("functionResponse" not in p for p in content["parts"]):
            start = i
    for i in range(start + 1, len(contents)):
        content = contents[i]
        first = next((p for p in content["parts"] if "functionCall" in p), None)
        if content["role"] == "model" and first is not None and not first.get("thoughtSignature"):
            template = MISSING if service == "gemini" else VERTEX_MISSING
            raise _error(template.format(name=first["functionCall"].get("name"), position=i + 1))


def reply_parts(reply: Reply, signer: Signer, contents: list[Any], thinking: bool) -> list[dict[str, Any]]:
    """The reply's parts as a whole response has them, signed."""
    parts: list[dict[str, Any]] = []
    if thinking and reply.thought:
        parts.append({"text": reply.thought, "thought": True})
    if reply.text:
        parts.append({"text": reply.text})
    for k, (name, args) in enumerate(reply.calls):
        call: dict[str, Any] = {"name": name, "args": dict(args)}
        if reply.ids:
            call = {"id": f"call-{len(contents)}-{k}", **call}
        parts.append({"functionCall": call})
    signed = next((j for j, p in enumerate(parts) if "functionCall" in p), len(parts) - 1)
    if signed >= 0:
        parts[signed]["thoughtSignature"] = signer.sign(contents, parts[:signed], parts[signed])
    return parts


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_chunks(response: Mapping[str, Any], *, cut: bool = False) -> list[dict[str, Any]]:
    """``response`` as ``streamGenerateContent`` chunks: text in fragments,
    calls whole, a text reply's signature in a last chunk with empty text;
    the last chunk carries ``finishReason`` (none when ``cut``)."""
    candidate = response["candidates"][0]
    pieces: list[dict[str, Any]] = []
    trailing: str | None = None
    for part in candidate["content"]["parts"]:
        if "functionCall" in part:
            pieces.append(part)
            continue
        signature = part.get("thoughtSignature")
        fragments = _pieces(part["text"], 2 if part.get("thought") else 3)
        for fragment in fragments:
            pieces.append({"text": fragment, **({"thought": True} if part.get("thought") else {})})
        if signature is not None:
            trailing = signature
    if trailing is not None:
        pieces.append({"text": "", "thoughtSignature": trailing})
    chunks = []
    for k, piece in enumerate(pieces):
        chunk: dict[str, Any] = {
            "candidates": [{"content": {"role": "model", "parts": [piece]}, "index": 0}],
            "modelVersion": response["modelVersion"],
            "responseId": response["responseId"],
        }
        if k == len(pieces) - 1 and not cut:
            chunk["candidates"][0]["finishReason"] = candidate["finishReason"]
            chunk["usageMetadata"] = response["usageMetadata"]
        chunks.append(chunk)
    return chunks


def sse_events(raw: bytes) -> list[dict[str, Any]]:
    """The data objects of an SSE body, as a client decodes them."""
    events = []
    for block in raw.decode().replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events

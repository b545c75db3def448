"""An emulator of OpenAI's Responses API for the openai-responses adapter.

A real HTTP server on 127.0.0.1 (an ephemeral port) that answers
``POST /v1/responses`` (base URL ``<server>/v1``) and rejects, with OpenAI's
error body ``{"error": {"message", "type", "param", "code"}}`` and OpenAI's own
strings, what OpenAI rejects:

- a body that does not validate against the ``openai`` SDK's
  ``ResponseCreateParams`` (unknown keys are errors, not ignored);
- a reasoning item not followed directly by an output item (a message of the
  assistant, a function call, ...): "Item '…' of type 'reasoning' was provided
  without its required following item.";
- a reasoning item whose encrypted content was not issued to this organisation
  (the bearer key) for this model: "The encrypted content … could not be
  verified." (code ``invalid_encrypted_content``). The emulator encrypts
  nothing, but signs each item's content over the organisation, the model and
  the prefix (instructions, tools and every input item before the item, each
  read the way the model reads it, so an output item and its input form are the
  same). A valid item whose prefix changed is dropped and reported in the
  response's ``input_transformations`` (reason ``prefix_mismatch``), as the
  SDK's ``Response`` type documents;
- a reasoning item without encrypted content that the server did not store for
  this organisation: "Item with id '…' not found. Items are not persisted when
  `store` is set to false. ...";
- an output item id (``fc_…``, ``msg_…``) sent without the reasoning item that
  preceded it: "Item '…' of type '…' was provided without its required
  'reasoning' item: '…'.";
- a ``function_call_output`` without its ``function_call`` ("No tool call found
  for function call output with call_id …."), and a function call without its
  output ("No tool output found for function call ….");
- a ``previous_response_id`` it did not store for this organisation ("Previous
  response with id '…' not found.").

Responses with ``store`` (the default) are kept, with their input and output,
for ``previous_response_id``; ``include: ["reasoning.encrypted_content"]``
returns the reasoning's encrypted content. Tests script the model's replies
(``Turn``) and drive it with the official ``openai`` SDK or with raw bytes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
import pydantic_core
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)

from .chat import LocalServer, _canonical, _drain, _pieces, _strict, sdk_call

BASE_PATH = "/v1"
REASONING_WITHOUT_FOLLOWING = "Item '{id}' of type 'reasoning' was provided without its required following item."
ITEM_WITHOUT_REASONING = (
    "Item '{id}' of type '{type}' was provided without its required 'reasoning' item: '{reasoning}'."
)
OUTPUT_WITHOUT_CALL = "No tool call found for function call output with call_id {call_id}."
CALL_WITHOUT_OUTPUT = "No tool output found for function call {call_id}."
UNVERIFIED = "The encrypted content {short} could not be verified."
NOT_PERSISTED = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` "
    "set to true, or remove this item from your input."
)
PREVIOUS_NOT_FOUND = "Previous response with id '{id}' not found."

# Input item types that are a model's output (what may follow a reasoning item).
OUTPUT_TYPES = frozenset(
    {
        "function_call",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "custom_tool_call",
    }
)

_NON_STREAMING = _strict(ResponseCreateParamsNonStreaming)
_STREAMING = _strict(ResponseCreateParamsStreaming)


def sdk_request_errors(body: Mapping[str, Any]) -> str | None:
    """Why ``body`` does not validate against the openai SDK's
    ``ResponseCreateParams`` (unknown keys refused), or None when it does."""
    validator = _STREAMING if body.get("stream") else _NON_STREAMING
    try:
        _drain(validator.validate_python(dict(body)))
    except pydantic_core.ValidationError as exc:
        return str(exc)
    return None


def sdk_create(client: openai.OpenAI, body: Mapping[str, Any]) -> Any:
    """``client.responses.create`` with ``body`` (see ``chat.sdk_call``)."""
    return sdk_call(client.responses.create, body)


# -- scripted replies ------------------------------------------------------------------


@dataclass
class Turn:
    """One scripted model reply. ``reasoning``: the summary parts of its reasoning
    item (``()``: a reasoning item without summary; None: no reasoning item).
    ``reasoning_per_call``: a reasoning item before each function call too."""

    content: str | None = None
    reasoning: Sequence[str] | None = ()
    tool_calls: Sequence[tuple[str, str, Mapping[str, Any]]] = ()
    phase: str | None = None
    annotations: Sequence[Mapping[str, Any]] = ()
    reasoning_per_call: bool = False


@dataclass
class Received:
    path: str
    raw: bytes
    body: Any
    org: str


@dataclass
class _Stored:
    org: str
    context: list[Any]


@dataclass
class _State:
    replies: deque[Turn] = field(default_factory=deque)
    stored: dict[str, _Stored] = field(default_factory=dict)  # response id -> what it saw and said
    reasoning_orgs: dict[str, str] = field(default_factory=dict)  # stored reasoning item id -> organisation
    needs_reasoning: dict[str, str] = field(default_factory=dict)  # output item id -> the reasoning item before it
    requests: list[Received] = field(default_factory=list)
    count: int = 0


def _kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type") or "message")


def _as_read(item: Mapping[str, Any]) -> Any:
    """An input item the way the model reads it: ids, statuses and the spelling
    of text parts left out, so an output item and its input form are equal."""
    kind = _kind(item)
    if kind == "reasoning":
        return ["reasoning", item.get("id")]
    if kind == "function_call":
        try:
            arguments = json.loads(item.get("arguments") or "{}")
        except ValueError:
            arguments = item.get("arguments")
        return ["function_call", item.get("call_id"), item.get("name"), arguments]
    if kind == "function_call_output":
        return ["function_call_output", item.get("call_id"), item.get("output")]
    if kind == "message":
        content = item.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        read = []
        for part in parts:
            if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
                read.append(["text", part.get("text")])
            else:
                read.append(part)
        return ["message", item.get("role"), read]
    return {k: v for k, v in item.items() if k not in ("id", "status")}


class ResponsesEmulator(LocalServer):
    """OpenAI's Responses API, as far as reasoning, tool pairing and stored state go."""

    base_path = BASE_PATH

    def __init__(self) -> None:
        super().__init__()
        self._secret = b"emulator-secret-openai-responses"
        self._state = _State()
        self._lock = threading.Lock()

    def answer(self, path: str, raw: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, bool]:
        key = (headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        return self.handle(path, raw, key)

    def client(self, key: str = "org-a") -> openai.OpenAI:
        """An SDK client whose API key is its organisation here."""
        return openai.OpenAI(base_url=self.base_url, api_key=key, max_retries=0)

    # -- scripting and inspection -------------------------------------------------

    def reply(self, turn: Turn | None = None, /, **fields: Any) -> None:
        """Queue the model's next reply (``Turn`` fields as keywords)."""
        with self._lock:
            self._state.replies.append(turn or Turn(**fields))

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._state.requests)

    # -- the API ---------------------------------------------------------------------

    def handle(self, path: str, raw: bytes, org: str) -> tuple[int, bytes, bool]:
        with self._lock:
            if path != BASE_PATH + "/responses":
                return self._error(f"Invalid URL (POST {path})", status=404, kind="invalid_request_error")
            try:
                body = json.loads(raw)
            except ValueError as exc:
                return self._error(f"We could not parse the JSON body of your request. ({exc})")
            self._state.requests.append(Received(path, raw, body, org))
            if not isinstance(body, dict):
                return self._error("The body must be a JSON object.")
            errors = sdk_request_errors(body)
            if errors is not None:
                return self._error(f"the body does not match ResponseCreateParams: {errors}")
            previous = body.get("previous_response_id")
            context: list[Any] = []
            if previous is not None:
                stored = self._state.stored.get(previous)
                if stored is None or stored.org != org:
                    return self._error(
                        PREVIOUS_NOT_FOUND.format(id=previous),
                        param="previous_response_id",
                        code="previous_response_not_found",
                    )
                context = list(stored.context)
            given = body["input"]
            items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
            full = context + items
            checked = self._check(body, org, full, len(context))
            if isinstance(checked, tuple):
                return checked
            turn = self._state.replies.popleft() if self._state.replies else Turn(content="ok", reasoning=None)
            response = self._respond(body, org, full, turn, checked)
            if body.get("stream"):
                return 200, self._sse(response), True
            return 200, _canonical(response), False

    def _error(
        self, message: str, *, param: str | None = "input", code: str | None = None, status: int = 400, kind: str = ""
    ) -> tuple[int, bytes, bool]:
        error = {"message": message, "type": kind or "invalid_request_error", "param": param, "code": code}
        return status, _canonical({"error": error}), False

    def _prefix(self, body: Mapping[str, Any], items: Sequence[Any]) -> str:
        read = {
            "instructions": body.get("instructions"),
            "tools": body.get("tools"),
            "input": [_as_read(i) for i in items],
        }
        return hashlib.sha256(_canonical(read)).hexdigest()

    def _seal(self, org: str, model: str, item_id: str, prefix: str) -> str:
        payload = _canonical({"org": org, "model": model, "id": item_id, "prefix": prefix})
        mac = hmac.new(self._secret, payload, hashlib.sha256).digest()
        return "gAAAAA" + base64.urlsafe_b64encode(payload + b"." + mac).decode()

    def _open(self, token: str) -> dict[str, Any] | None:
        try:
            raw = base64.urlsafe_b64decode(token.removeprefix("gAAAAA").encode())
            payload, mac = raw.rsplit(b".", 1)
        except ValueError:
            return None
        if not hmac.compare_digest(mac, hmac.new(self._secret, payload, hashlib.sha256).digest()):
            return None
        opened: dict[str, Any] = json.loads(payload)
        return opened

    def _check(
        self, body: Mapping[str, Any], org: str, full: list[Any], first_new: int
    ) -> tuple[int, bytes, bool] | list[dict[str, Any]]:
        """An error response, or the input transformations (items dropped)."""
        store = body.get("store", True) is not False
        transformations: list[dict[str, Any]] = []
        calls: dict[str, int] = {}
        answered: set[str] = set()
        for j, item in enumerate(full):
            kind = _kind(item)
            new = j >= first_new
            if kind == "reasoning" and new:
                after = full[j + 1] if j + 1 < len(full) else None
                follows = after is not None and (
                    _kind(after) in OUTPUT_TYPES or (_kind(after) == "message" and after.get("role") == "assistant")
                )
                if not follows:
                    return self._error(REASONING_WITHOUT_FOLLOWING.format(id=item.get("id")))
                problem = self._check_reasoning(body, org, full, j, store, transformations)
                if problem is not None:
                    return problem
            item_id = item.get("id")
            needed = self._state.needs_reasoning.get(item_id) if new and isinstance(item_id, str) else None
            if needed is not None:
                before = full[j - 1] if j else None
                if before is None or _kind(before) != "reasoning" or before.get("id") != needed:
                    return self._error(ITEM_WITHOUT_REASONING.format(id=item_id, type=kind, reasoning=needed))
            if kind == "function_call":
                calls[item["call_id"]] = j
            elif kind == "function_call_output":
                if item.get("call_id") not in calls:
                    return self._error(OUTPUT_WITHOUT_CALL.format(call_id=item.get("call_id")))
                answered.add(item["call_id"])
        for call_id in calls:
            if call_id not in answered:
                return self._error(CALL_WITHOUT_OUTPUT.format(call_id=call_id))
        return transformations

    def _check_reasoning(
        self,
        body: Mapping[str, Any],
        org: str,
        full: list[Any],
        j: int,
        store: bool,
        transformations: list[dict[str, Any]],
    ) -> tuple[int, bytes, bool] | None:
        item = full[j]
        token = item.get("encrypted_content")
        if not token:
            if self._state.reasoning_orgs.get(item.get("id")) == org and store:
                return None
            message = NOT_PERSISTED if not store else "Item with id '{id}' not found."
            return self._error(message.format(id=item.get("id")))
        opened = self._open(token)
        if opened is None or opened["org"] != org or opened["model"] != body["model"] or opened["id"] != item["id"]:
            short = f"{token[:4]}...{token[-4:]}"
            return self._error(UNVERIFIED.format(short=short), param=None, code="invalid_encrypted_content")
        if opened["prefix"] != self._prefix(body, full[:j]):
            transformations.append(
                {"id": item["id"], "action": "removed", "reason": "prefix_mismatch", "type": "reasoning"}
            )
        return None

    # -- replies -------------------------------------------------------------------------

    def _respond(
        self, body: Mapping[str, Any], org: str, full: list[Any], turn: Turn, transformations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        state = self._state
        state.count += 1
        n = state.count
        store = body.get("store", True) is not False
        encrypted = "reasoning.encrypted_content" in (body.get("include") or [])
        output: list[dict[str, Any]] = []

        def reason(k: int) -> None:
            if turn.reasoning is None:
                return
            item: dict[str, Any] = {
                "id": f"rs_{n:04d}{k:02d}",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": t} for t in turn.reasoning],
            }
            if encrypted:
                item["encrypted_content"] = self._seal(
                    org, body["model"], item["id"], self._prefix(body, full + output)
                )
            if store:
                state.reasoning_orgs[item["id"]] = org
            output.append(item)

        def follows(item: dict[str, Any]) -> None:
            if output and output[-1]["type"] == "reasoning":
                state.needs_reasoning[item["id"]] = output[-1]["id"]
            output.append(item)

        reason(0)
        if turn.content is not None:
            text = {"type": "output_text", "text": turn.content, "annotations": [dict(a) for a in turn.annotations]}
            message: dict[str, Any] = {
                "id": f"msg_{n:04d}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
            if turn.phase is not None:
                message["phase"] = turn.phase
            follows(message)
        for k, (call_id, name, args) in enumerate(turn.tool_calls):
            if k and turn.reasoning_per_call:
                reason(k)
            call = {
                "id": f"fc_{n:04d}{k:02d}",
                "type": "function_call",
                "status": "completed",
                "call_id": call_id,
                "name": name,
                "arguments": json.dumps(args),
            }
            follows(call)
        response: dict[str, Any] = {
            "id": f"resp_{n:04d}{hashlib.sha256(org.encode()).hexdigest()[:8]}",
            "object": "response",
            "created_at": 1767225600 + n,
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "model": body["model"],
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": "medium", "summary": None},
            "store": store,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": body.get("tools") or [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": 20 * n,
                "input_tokens_details": {"cached_tokens": 10 * (n - 1), "cache_write_tokens": 10},
                "output_tokens": 30,
                "output_tokens_details": {"reasoning_tokens": 12 if turn.reasoning is not None else 0},
                "total_tokens": 20 * n + 30,
            },
            "metadata": {},
        }
        if transformations:
            response["input_transformations"] = transformations
        if store:
            state.stored[response["id"]] = _Stored(org, full + output)
        return response

    def _sse(self, response: Mapping[str, Any]) -> bytes:
        events = list(self._events(response))
        lines = []
        for number, event in enumerate(events):
            data = {"type": event.pop("type"), "sequence_number": number, **event}
            lines.append(b"event: " + data["type"].encode() + b"\ndata: " + _canonical(data) + b"\n\n")
        return b"".join(lines)

    def _events(self, response: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """``response`` as the events OpenAI streams it in."""
        snapshot = {**response, "status": "in_progress", "output": [], "usage": None}
        yield {"type": "response.created", "response": snapshot}
        yield {"type": "response.in_progress", "response": snapshot}
        for index, item in enumerate(response["output"]):
            base = {"output_index": index}
            kind = item["type"]
            if kind == "reasoning":
                yield {**base, "type": "response.output_item.added", "item": {**item, "summary": []}}
                for s, part in enumerate(item["summary"]):
                    ids = {**base, "item_id": item["id"], "summary_index": s}
                    yield {
                        **ids,
                        "type": "response.reasoning_summary_part.added",
                        "part": {"type": "summary_text", "text": ""},
                    }
                    for piece in _pieces(part["text"]):
                        yield {**ids, "type": "response.reasoning_summary_text.delta", "delta": piece}
                    yield {**ids, "type": "response.reasoning_summary_text.done", "text": part["text"]}
                    yield {**ids, "type": "response.reasoning_summary_part.done", "part": part}
            elif kind == "message":
                yield {
                    **base,
                    "type": "response.output_item.added",
                    "item": {**item, "status": "in_progress", "content": []},
                }
                for c, part in enumerate(item["content"]):
                    ids = {**base, "item_id": item["id"], "content_index": c}
                    empty = {**part, "text": "", "annotations": []}
                    yield {**ids, "type": "response.content_part.added", "part": empty}
                    for piece in _pieces(part["text"]):
                        yield {**ids, "type": "response.output_text.delta", "delta": piece, "logprobs": []}
                    yield {**ids, "type": "response.output_text.done", "text": part["text"], "logprobs": []}
                    yield {**ids, "type": "response.content_part.done", "part": part}
            elif kind == "function_call":
                added = {**item, "status": "in_progress", "arguments": ""}
                yield {**base, "type": "response.output_item.added", "item": added}
                ids = {**base, "item_id": item["id"]}
                for piece in _pieces(item["arguments"]):
                    yield {**ids, "type": "response.function_call_arguments.delta", "delta": piece}
                yield {
                    **ids,
                    "type": "response.function_call_arguments.done",
                    "arguments": item["arguments"],
                    "name": item["name"],
                }
            yield {**base, "type": "response.output_item.done", "item": item}
        yield {"type": "response.completed", "response": dict(response)}

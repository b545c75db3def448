"""An emulator of OpenAI's Responses API for the openai-responses adapter.

A real HTTP server on 127.0.0.1 (an ephemeral port) that answers
``POST /v1/responses`` (base URL ``<server>/v1``) and rejects, with OpenAI's
error body ``{"error": {"message", "type", "param", "code"}}`` and OpenAI's own
strings, what OpenAI rejects:

- a body that does not validate against the ``openai`` SDK's
  ``ResponseCreateParams`` (unknown keys are errors, not ignored), once the
  defaults the API fills in are filled (``with_defaults``: a function tool's
  ``strict``, which the SDK's type marks required);
- a reasoning item not followed directly by an output item (a message of the
  assistant, a function call, ...): "Item '…' of type 'reasoning' was provided
  without its required following item."; with ``store`` on (the default), the
  same for a reasoning item the server stored that is not followed by the item
  that followed it, with that item's id (a message or function call sent back
  without its ``msg_``/``fc_`` id, as OpenAI answers it);
- a reasoning item whose encrypted content was not issued to this organisation
  (the bearer key) for this model: "The encrypted content … could not be
  verified." (code ``invalid_encrypted_content``). The emulator encrypts
  nothing, but signs each item's content over the organisation, the model and
  the prefix (instructions, tools and every input item before the item, each
  read the way the model reads it, so an output item and its input form are the
  same, and so are the spellings docs/providers.md lists as the same
  request). A valid item whose prefix changed is dropped and reported in the
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
returns the reasoning's encrypted content. Replies are scripted with ``Step``
(or the provider-native ``Turn``). The check against the openai SDK's
``ResponseCreateParams`` runs only when the openai SDK is installed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._ids import tool_call_id
from ._server import BodyProblem, Emulator, Request, Response, Step, load_once, parse_body
from .chat import OPENAI_INVALID_JSON, Validate, _canonical, _pieces, strict_validator

if TYPE_CHECKING:
    import openai

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


def _load_validators() -> tuple[Validate, Validate] | None:
    """(non-streaming, streaming) validators of the openai SDK's
    ``ResponseCreateParams``, or None when the SDK is not installed."""
    try:
        from openai.types.responses.response_create_params import (  # noqa: PLC0415 (optional SDK)
            ResponseCreateParamsNonStreaming,
            ResponseCreateParamsStreaming,
        )
    except ImportError:
        return None
    return strict_validator(ResponseCreateParamsNonStreaming), strict_validator(ResponseCreateParamsStreaming)


_validators = load_once(_load_validators)


def with_defaults(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with the defaults the API fills in where the SDK's types mark a
    member required: a function tool without ``strict`` is strict (OpenAI's
    function calling guide: omitted, the Responses API normalises the schema
    into strict mode; ``strict: false`` opts out)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return dict(body)
    filled = [
        {**tool, "strict": True}
        if isinstance(tool, dict) and tool.get("type") == "function" and "strict" not in tool
        else tool
        for tool in tools
    ]
    return {**body, "tools": filled}


def sdk_request_errors(body: Mapping[str, Any]) -> str | None:
    """Why ``body`` does not validate against the openai SDK's
    ``ResponseCreateParams`` (unknown keys refused), or None when it does (or
    when the openai SDK is not installed)."""
    validators = _validators()
    if validators is None:
        return None
    try:
        (validators[1] if body.get("stream") else validators[0])(with_defaults(body))
    except ValueError as exc:
        return str(exc)
    return None


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
class _Stored:
    org: str
    context: list[Any]


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
        return ["function_call_output", item.get("call_id"), _read_parts(item.get("output"))]
    if kind == "message":
        return ["message", item.get("role"), _read_parts(item.get("content"))]
    return {k: v for k, v in item.items() if k not in ("id", "status") and v is not None}


def _read_parts(content: Any) -> list[Any]:
    """Message content (or a call's output) as one spelling: a string as one
    text part, every text part type (``input_text``, ``output_text``) as text
    alone (annotations and logprobs are what the model said about it, not
    what it reads); other parts without null members."""
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    read: list[Any] = []
    for part in parts:
        if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
            read.append(["text", part.get("text")])
        elif isinstance(part, Mapping):
            read.append({k: v for k, v in part.items() if v is not None})
        else:
            read.append(part)
    return read


def _read_tools(tools: Any) -> Any:
    """Tool definitions as one spelling: null members left out, and a function
    tool's ``strict`` as the API fills it in (``with_defaults``)."""
    if not isinstance(tools, list):
        return tools
    filled = with_defaults({"tools": tools})["tools"]
    return [{k: v for k, v in t.items() if v is not None} if isinstance(t, Mapping) else t for t in filled]


_ERROR_TYPES = {
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


class ResponsesEmulator(Emulator):
    """OpenAI's Responses API, as far as reasoning, tool pairing and stored state go.

    The bearer key is the organisation. Script replies with ``Step``, or with
    the provider-native ``Turn`` (``reply(Turn(...))``) for what a ``Step``
    cannot say (summary parts, phases, annotations, a reasoning item per call)."""

    provider = "openai-responses"
    base_path = BASE_PATH

    def __init__(self, *, port: int = 0, require_auth: bool = False) -> None:
        super().__init__(port=port, require_auth=require_auth)
        self._secret = b"emulator-secret-openai-responses"
        self._stored: dict[str, _Stored] = {}  # response id -> what it saw and said
        self._reasoning_orgs: dict[str, str] = {}  # stored reasoning item id -> organisation
        self._needs_reasoning: dict[str, str] = {}  # output item id -> the reasoning item before it
        self._following: dict[str, str] = {}  # stored reasoning item id -> the id of the item after it
        self._count = 0

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        return MappingProxyType({"reasoning": {"effort": "medium", "summary": "auto"}})

    def client(self, key: str = "org-a") -> openai.OpenAI:
        """An SDK client whose API key is its organisation here (needs the openai SDK)."""
        import openai  # noqa: PLC0415 (the SDK is optional)

        return openai.OpenAI(base_url=self.base_url, api_key=key, max_retries=0)

    # -- scripting ---------------------------------------------------------------------

    def reply(self, turn: Turn | None = None, /, **fields: Any) -> None:
        """Queue the model's next reply as a provider-native ``Turn`` (or its fields as keywords)."""
        with self._lock:
            self._script.append(turn or Turn(**fields))

    def _turn(self) -> Turn:
        item = self._take()
        if item is None:
            return Turn(content="Done.", reasoning=None)
        if not isinstance(item, Step):
            assert isinstance(item, Turn)
            return item
        calls = [
            (tool_call_id(self.provider, f"{self._count}/{k}/{name}"), name, args)
            for k, (name, args) in enumerate(item.calls)
        ]
        reasoning = None if item.thinking is None else [item.thinking]
        return Turn(content=item.text, reasoning=reasoning, tool_calls=calls)

    def _rotate(self) -> None:
        self._secret = hashlib.sha256(self._secret + b"/rotated").digest()

    # -- the API ---------------------------------------------------------------------

    def _serves(self, request: Request) -> bool:
        return request.path.split("?")[0] == BASE_PATH + "/responses"

    def _prepare(self) -> None:
        _validators()

    def _invalid_json(self, problem: BodyProblem) -> Response:
        error = {"message": OPENAI_INVALID_JSON, "type": "invalid_request_error", "param": None, "code": None}
        return Response(400, {"error": error})

    def _answer(self, request: Request) -> Response:
        key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        status, payload, chunks = self._handle(request.path.split("?")[0], request.raw, key)
        if chunks is not None:
            return Response(chunks=chunks, content_type="text/event-stream")
        return Response(status, data=payload)

    def handle(self, path: str, raw: bytes, org: str) -> tuple[int, bytes, bool]:
        """(status, body, whether it is a stream) for one request; no HTTP involved."""
        headers = {"authorization": f"Bearer {org}"}
        self._record(Request("POST", path, MappingProxyType(headers), raw, None))
        status, payload, chunks = self._handle(path, raw, org)
        return (status, b"".join(chunks), True) if chunks is not None else (status, payload, False)

    def _error(self, status: int, message: str) -> Response:
        kind, code = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
        return Response(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})

    def _authorized(self, request: Request) -> bool:
        value = request.headers.get("authorization", "")
        return value.startswith("Bearer ") and bool(value.removeprefix("Bearer ").strip())

    def _auth_error(self) -> Response:
        return self._error(
            401,
            "You didn't provide an API key. You need to provide your API key in an Authorization header using "
            "Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        )

    def _handle(self, path: str, raw: bytes, org: str) -> tuple[int, bytes, list[bytes] | None]:
        with self._lock:
            if path != BASE_PATH + "/responses":
                return self._fail(f"Invalid URL (POST {path})", status=404, kind="invalid_request_error")
            body, unreadable = parse_body(raw, self.max_depth)
            if unreadable is not None:
                refused = self._invalid_json(unreadable)
                return refused.status, refused.payload(), None
            if not isinstance(body, dict):
                return self._fail("The body must be a JSON object.")
            errors = sdk_request_errors(body)
            if errors is not None:
                return self._fail(f"the body does not match ResponseCreateParams: {errors}")
            previous = body.get("previous_response_id")
            context: list[Any] = []
            if previous is not None:
                stored = self._stored.get(previous)
                if stored is None or stored.org != org:
                    return self._fail(
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
            response = self._respond(body, org, full, self._turn(), checked)
            if body.get("stream"):
                return 200, b"", self._sse(response)
            return 200, _canonical(response), None

    def _fail(
        self, message: str, *, param: str | None = "input", code: str | None = None, status: int = 400, kind: str = ""
    ) -> tuple[int, bytes, None]:
        error = {"message": message, "type": kind or "invalid_request_error", "param": param, "code": code}
        return status, _canonical({"error": error}), None

    def _prefix(self, body: Mapping[str, Any], items: Sequence[Any]) -> str:
        read = {
            "instructions": body.get("instructions"),
            "tools": _read_tools(body.get("tools")),
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
        except ValueError:
            return None
        # payload "." mac, the MAC 32 bytes long: split by length, since the MAC may hold a "." byte.
        payload, dot, mac = raw[:-33], raw[-33:-32], raw[-32:]
        if dot != b".":
            return None
        if not hmac.compare_digest(mac, hmac.new(self._secret, payload, hashlib.sha256).digest()):
            return None
        opened: dict[str, Any] = json.loads(payload)
        return opened

    def _check(
        self, body: Mapping[str, Any], org: str, full: list[Any], first_new: int
    ) -> tuple[int, bytes, None] | list[dict[str, Any]]:
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
                # Stored, the item after it is known by id: it must come back with it.
                expected = self._following.get(item.get("id")) if store else None
                if after is None or not follows or (expected is not None and after.get("id") != expected):
                    return self._fail(REASONING_WITHOUT_FOLLOWING.format(id=item.get("id")))
                problem = self._check_reasoning(body, org, full, j, store, transformations)
                if problem is not None:
                    return problem
            item_id = item.get("id")
            needed = self._needs_reasoning.get(item_id) if new and isinstance(item_id, str) else None
            if needed is not None:
                before = full[j - 1] if j else None
                if before is None or _kind(before) != "reasoning" or before.get("id") != needed:
                    return self._fail(ITEM_WITHOUT_REASONING.format(id=item_id, type=kind, reasoning=needed))
            if kind == "function_call":
                calls[item["call_id"]] = j
            elif kind == "function_call_output":
                if item.get("call_id") not in calls:
                    return self._fail(OUTPUT_WITHOUT_CALL.format(call_id=item.get("call_id")))
                answered.add(item["call_id"])
        for call_id in calls:
            if call_id not in answered:
                return self._fail(CALL_WITHOUT_OUTPUT.format(call_id=call_id))
        return transformations

    def _check_reasoning(
        self,
        body: Mapping[str, Any],
        org: str,
        full: list[Any],
        j: int,
        store: bool,
        transformations: list[dict[str, Any]],
    ) -> tuple[int, bytes, None] | None:
        item = full[j]
        token = item.get("encrypted_content")
        if not token:
            if self._reasoning_orgs.get(item.get("id")) == org and store:
                return None
            message = NOT_PERSISTED if not store else "Item with id '{id}' not found."
            return self._fail(message.format(id=item.get("id")))
        opened = self._open(token)
        if opened is None or opened["org"] != org or opened["model"] != body["model"] or opened["id"] != item["id"]:
            short = f"{token[:4]}...{token[-4:]}"
            return self._fail(UNVERIFIED.format(short=short), param=None, code="invalid_encrypted_content")
        if opened["prefix"] != self._prefix(body, full[:j]):
            transformations.append(
                {"id": item["id"], "action": "removed", "reason": "prefix_mismatch", "type": "reasoning"}
            )
        return None

    # -- replies -------------------------------------------------------------------------

    def _respond(
        self, body: Mapping[str, Any], org: str, full: list[Any], turn: Turn, transformations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self._count += 1
        n = self._count
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
                self._reasoning_orgs[item["id"]] = org
            output.append(item)

        def follows(item: dict[str, Any]) -> None:
            if output and output[-1]["type"] == "reasoning":
                self._needs_reasoning[item["id"]] = output[-1]["id"]
                if store:
                    self._following[output[-1]["id"]] = item["id"]
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
            self._stored[response["id"]] = _Stored(org, full + output)
        return response

    def _sse(self, response: Mapping[str, Any]) -> list[bytes]:
        events = list(self._events(response))
        lines = []
        for number, event in enumerate(events):
            data = {"type": event.pop("type"), "sequence_number": number, **event}
            lines.append(b"event: " + data["type"].encode() + b"\ndata: " + _canonical(data) + b"\n\n")
        return lines

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

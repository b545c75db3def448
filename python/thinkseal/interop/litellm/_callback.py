"""``ThinksealCallback``: the LiteLLM callback that checks each request's
history against the seal ledger before LiteLLM sends it, and records each
reply's sealed data after.

Where LiteLLM lets a callback change a request (litellm 1.110):

- ``acompletion`` (and the proxy, whose router calls it once it picked a
  deployment): ``async_pre_call_deployment_hook(kwargs, call_type)``, with the
  deployment's own ``model`` and the OpenAI-format ``messages``; what it
  returns is what LiteLLM sends.
- the proxy, before routing: ``async_pre_call_hook(user_api_key_dict, cache,
  data, call_type)``. ``data["model"]`` is then the proxy's model name, not the
  upstream one, so this hook acts only when the callback was given its
  ``model`` or the name carries a LiteLLM provider prefix; otherwise the
  deployment hook, which runs next, does the work.
- ``completion`` (sync) runs neither, nor any other hook that may change
  ``messages``. Its only in-process call before sending is
  ``log_pre_api_call``, whose ``kwargs["additional_args"]["complete_input_dict"]``
  is the provider body LiteLLM is about to encode: the callback takes the stale
  sealed blocks out of that body in place (Claude's Messages format only), and
  LiteLLM swallows any error raised there.

The replay decision is thinkseal's: the history is converted
(``_convert.import_messages``), attached to the ledger, and decided for the
origin (``prepare(...).report``); each assistant turn that is not kept loses its
sealed data in the request, and nothing else changes. After the reply the
callback binds it to that decision and records it: from
``async_post_call_success_deployment_hook``, which ``acompletion`` awaits
before it returns (streams: ``async_log_success_event``), and from
``log_success_event``, which LiteLLM runs in a thread after ``completion``
returned (so the next sync request of the session waits for it).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from litellm.integrations.custom_logger import CustomLogger

from ..._binding import Origin
from ..._conversation import Conversation
from ..._errors import ReplayError, ThinksealError, ValidationError
from ..._messages import AssistantMessage
from ..._replay import Replay
from ._convert import (
    CLAUDE_IDS,
    Datum,
    digest,
    import_messages,
    import_reply,
    scrub_claude_body,
    sealed_data,
    unsealed_messages,
)

if TYPE_CHECKING:
    from ...ledger import AsyncLedger, Ledger

log = logging.getLogger("thinkseal.interop.litellm")

ON_REPLAY_ERROR: Final = ("disable_thinking", "raise")
# Decisions waiting for their reply, most recent last: a reply is bound to the
# decision its request was sent under (several requests may be in flight).
STASH_SIZE: Final = 256
# The request fields that turn Claude's thinking on in LiteLLM's API.
THINKING_FIELDS: Final = ("thinking", "reasoning_effort")
# Seconds a sync request waits for the previous reply of its session to be recorded.
REPLY_WAIT: Final = 5.0


class _Decision:
    """One request's replay decision: the attached conversation, its replay,
    the turns that go out unsealed and the ``ReplayError`` prepare raised."""

    __slots__ = ("conversation", "error", "replay", "unsealed")

    def __init__(
        self, conversation: Conversation, replay: Replay, unsealed: list[int], error: ReplayError | None
    ) -> None:
        self.conversation = conversation
        self.replay = replay
        self.unsealed = unsealed
        self.error = error

    def stale(self) -> set[Datum]:
        out: set[Datum] = set()
        for i in self.unsealed:
            turn = self.conversation[i]
            assert isinstance(turn, AssistantMessage)
            out |= sealed_data(turn)
        return out


class ThinksealCallback(CustomLogger):
    """A LiteLLM callback that replays sealed thinking only where it still
    holds: register it with ``litellm.callbacks = [ThinksealCallback(...)]``
    (or the proxy's ``litellm_settings.callbacks``).

    ``provider_id``: the thinkseal provider id of the upstream API LiteLLM
    calls (``"anthropic"``). ``model``: the model its turns are bound under;
    by default each request's own ``model`` without LiteLLM's provider prefix
    (``"anthropic/claude-sonnet-4-5"`` -> ``"claude-sonnet-4-5"``).
    ``ledger``: a ``thinkseal.Ledger`` (or an ``AsyncLedger``, for
    ``acompletion`` and the proxy only) that every reply is recorded in;
    without one no sealed thinking is replayed. ``account`` and ``aliases``
    as ``thinkseal.Client`` takes them.

    ``on_replay_error``: what to do with a request that continues a Claude
    tool loop whose thinking can no longer be replayed (thinkseal's
    ``ReplayError``; Claude would answer 400): ``"disable_thinking"``
    (default) sends that request without thinking, as LiteLLM's own
    ``modify_params`` does; ``"raise"`` raises the ``ReplayError`` from
    ``acompletion`` (and the proxy) instead.
    """

    def __init__(
        self,
        provider_id: str,
        model: str | None = None,
        *,
        ledger: Ledger | AsyncLedger | None = None,
        account: str | None = None,
        aliases: Mapping[str, str] | None = None,
        on_replay_error: Literal["disable_thinking", "raise"] = "disable_thinking",
    ) -> None:
        from ...ledger._recording import checked_ledger  # noqa: PLC0415
        from ...providers import provider  # noqa: PLC0415

        super().__init__()
        self._provider = provider(provider_id, account, aliases=aliases)
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValidationError("model: expected a model id, or None for each request's own", path="model")
        checked_ledger(ledger)
        if on_replay_error not in ON_REPLAY_ERROR:
            raise ValidationError(
                f"on_replay_error: expected one of {', '.join(ON_REPLAY_ERROR)}", path="on_replay_error"
            )
        self.provider_id = provider_id
        self.model = model
        self.ledger = ledger
        self.account: str | None = account or None
        self.on_replay_error: Literal["disable_thinking", "raise"] = on_replay_error
        self._claude = provider_id in CLAUDE_IDS
        self._stash: OrderedDict[str, _Decision] = OrderedDict()
        self._in_flight: OrderedDict[str, tuple[int, threading.Event]] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        model = f", {self.model!r}" if self.model else ""
        ledger = ", ledger" if self.ledger is not None else ""
        return f"ThinksealCallback({self.provider_id!r}{model}{ledger})"

    # -- the decision --------------------------------------------------------------------

    def _model_of(self, model: object, prefix: object = None) -> str | None:
        """The model a request's turns are bound under (None: not known here)."""
        if self.model is not None:
            return self.model
        if not isinstance(model, str) or not model.strip():
            return None
        if isinstance(prefix, str) and prefix:
            return model.removeprefix(f"{prefix}/")
        head, sep, rest = model.partition("/")
        return rest if sep and rest and head in _litellm_providers() else None

    def _decide(self, attached: Conversation, model: str, request: Mapping[str, Any]) -> _Decision:
        thinking = _thinking_option(request)
        origin = Origin(self.provider_id, self._provider.aliases.get(model, model), self.account)
        error: ReplayError | None = None
        try:
            if self.provider_id == "anthropic" and thinking is not None:
                # Only the decision is used: the options prepare needs, nothing the request says otherwise.
                budget = thinking.get("budget_tokens")
                max_tokens = budget + 1024 if isinstance(budget, int) else 1024
                replay = self._provider.prepare(attached, model=model, max_tokens=max_tokens, thinking=thinking).replay
            else:
                replay = attached.replay(origin)
        except ReplayError as exc:
            error = exc
            replay = attached.replay(origin)
        unsealed = [entry.index for entry in replay.report if not entry.kept and _sealed(attached[entry.index])]
        return _Decision(attached, replay, unsealed, error)

    def _keep(self, model: str, decision: _Decision, *conversations: Conversation) -> None:
        keys = [digest(model, conversation) for conversation in conversations]
        with self._lock:  # LiteLLM logs sync replies from its own threads
            for key in keys:
                self._stash[key] = decision
                self._stash.move_to_end(key)
            while len(self._stash) > STASH_SIZE:
                self._stash.popitem(last=False)

    def _kept(self, model: str, request: Mapping[str, Any]) -> _Decision | None:
        key = digest(model, _key_conversation(request))
        with self._lock:
            return self._stash.get(key)

    def _attach(self, conversation: Conversation) -> Conversation:
        from ...ledger import AsyncLedger  # noqa: PLC0415

        if self.ledger is None:
            return conversation
        if isinstance(self.ledger, AsyncLedger):
            log.warning("an AsyncLedger serves acompletion and the proxy only; this sync call replays no thinking")
            return conversation
        return self.ledger.attach(conversation, account=self.account).conversation

    async def _attach_async(self, conversation: Conversation) -> Conversation:
        from ...ledger import AsyncLedger  # noqa: PLC0415

        if isinstance(self.ledger, AsyncLedger):
            return (await self.ledger.attach(conversation, account=self.account)).conversation
        return self._attach(conversation)

    # -- the OpenAI-format request (acompletion, the proxy) --------------------------------

    def _rewrite(
        self, request: dict[str, Any], model: str, conversation: Conversation, attached: Conversation
    ) -> dict[str, Any]:
        """``request`` as it should go out: a new dict, the turns not kept
        unsealed, thinking off after a ``ReplayError`` (or the error raised)."""
        decision = self._decide(attached, model, request)
        if decision.error is not None and self.on_replay_error == "raise":
            raise decision.error
        out = dict(request)
        if decision.unsealed:
            out["messages"] = unsealed_messages(request["messages"], decision.unsealed, self._claude)
        if decision.error is not None:
            log.info("thinking off for this request: %s", decision.error)
            for field in THINKING_FIELDS:
                out.pop(field, None)
        # LiteLLM logs the request either as given or as changed here: the reply finds its decision by both.
        self._keep(model, decision, _key_conversation(request), _key_conversation(out))
        return out

    async def _rewrite_async(self, request: Any) -> dict[str, Any] | None:
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            return None  # not a chat request (embeddings, images, ...)
        model = self._model_of(request.get("model"), request.get("custom_llm_provider"))
        if model is None:
            return None
        conversation = _conversation_of(request)
        return self._rewrite(request, model, conversation, await self._attach_async(conversation))

    async def async_pre_call_deployment_hook(self, kwargs: dict[str, Any], call_type: Any) -> dict[str, Any] | None:
        return await self._rewrite_async(kwargs)

    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        return await self._rewrite_async(data)

    # -- the provider body (sync completion) ---------------------------------------------

    def log_pre_api_call(self, model: Any, messages: Any, kwargs: Any) -> None:
        if not isinstance(kwargs, dict) or (kwargs.get("litellm_params") or {}).get("acompletion"):
            return  # the async hooks changed this request before LiteLLM built its body
        body = (kwargs.get("additional_args") or {}).get("complete_input_dict")
        bound_as = self._model_of(kwargs.get("model"), kwargs.get("custom_llm_provider"))
        request = _request_of(kwargs)
        if not isinstance(body, dict) or request is None or bound_as is None:
            return
        if not self._claude:
            log.warning("sync completion: only Claude's request body can be changed; %s is sent as built", model)
            return
        self._wait_for_replies(request["messages"])
        conversation = _conversation_of(request)
        decision = self._decide(self._attach(conversation), bound_as, request)
        scrub_claude_body(body, decision.stale())
        if decision.error is not None:
            if self.on_replay_error == "raise":
                raise decision.error  # LiteLLM logs it and sends the request; Claude answers 400
            log.info("thinking off for this request: %s", decision.error)
            body.pop("thinking", None)
        self._keep(bound_as, decision, _key_conversation(request))
        self._sent(kwargs, len(request["messages"]))

    # -- recording -----------------------------------------------------------------------

    def _reply_of(self, request_data: Any, response: Any) -> tuple[AssistantMessage, str, dict[str, Any]] | None:
        """The reply, its model and its request (None: the reply has no sealed
        thinking, or this is not a chat reply)."""
        if not isinstance(request_data, dict):
            return None
        reply = import_reply(request_data.get("complete_streaming_response") or response)
        if reply is None or not reply.has_sealed_thinking:
            return None
        model = self._model_of(request_data.get("model"), request_data.get("custom_llm_provider"))
        request = _request_of(request_data)
        return None if model is None or request is None else (reply, model, request)

    def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        from ...ledger import Ledger  # noqa: PLC0415

        try:
            found = self._reply_of(kwargs, response_obj)
            if found is None or not isinstance(self.ledger, Ledger):
                return
            reply, model, request = found
            decision = self._kept(model, request)
            if decision is None:  # no hook saw this request: the decision it would have had
                decision = self._decide(self._attach(_conversation_of(request)), model, request)
            self.ledger.record(decision.replay.bind(reply))
        except ThinksealError as exc:
            log.warning("reply not recorded: %s", exc)
        finally:
            self._answered(kwargs)

    def log_failure_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self._answered(kwargs)

    async def _record_async(self, request_data: Any, response: Any) -> None:
        from ...ledger import AsyncLedger  # noqa: PLC0415

        try:
            found = self._reply_of(request_data, response)
            if found is None or self.ledger is None:
                return
            reply, model, request = found
            decision = self._kept(model, request)
            if decision is None:
                decision = self._decide(await self._attach_async(_conversation_of(request)), model, request)
            bound = decision.replay.bind(reply)
            if isinstance(self.ledger, AsyncLedger):
                await self.ledger.record(bound)
            else:
                self.ledger.record(bound)
        except ThinksealError as exc:
            log.warning("reply not recorded: %s", exc)

    async def async_post_call_success_deployment_hook(
        self, request_data: dict[str, Any], response: Any, call_type: Any
    ) -> None:
        # Awaited before acompletion returns, so the next request of the session finds the reply recorded.
        await self._record_async(request_data, response)

    async def async_log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        if isinstance(kwargs, dict) and kwargs.get("complete_streaming_response") is not None:
            await self._record_async(kwargs, response_obj)  # a stream's reply exists only once it is logged

    # -- sync replies in flight ----------------------------------------------------------

    def _sent(self, kwargs: Mapping[str, Any], size: int) -> None:
        """A sync request went out: its reply is recorded from LiteLLM's
        logging thread, after ``completion`` returned."""
        call = kwargs.get("litellm_call_id")
        if isinstance(call, str):
            with self._lock:
                self._in_flight[call] = (size, threading.Event())
                while len(self._in_flight) > STASH_SIZE:
                    self._in_flight.popitem(last=False)

    def _answered(self, kwargs: Any) -> None:
        call = kwargs.get("litellm_call_id") if isinstance(kwargs, dict) else None
        with self._lock:
            entry = self._in_flight.pop(call, None) if isinstance(call, str) else None
        if entry is not None:
            entry[1].set()

    def _wait_for_replies(self, messages: Sequence[object]) -> None:
        """Wait (a little) for the recording of a reply this history holds
        whose request is still being logged: ``completion`` returns before
        LiteLLM's thread calls ``log_success_event``."""
        with self._lock:
            pending = list(self._in_flight.values())
        for size, answered in pending:
            following = messages[size] if size < len(messages) else None
            role = following.get("role") if isinstance(following, Mapping) else getattr(following, "role", None)
            if role == "assistant" and not answered.is_set():
                answered.wait(REPLY_WAIT)


def _litellm_providers() -> frozenset[str]:
    import litellm  # noqa: PLC0415

    return frozenset(str(getattr(p, "value", p)) for p in litellm.provider_list)


def _thinking_option(request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The request's Claude ``thinking`` setting; LiteLLM's ``reasoning_effort``
    turns it on too (the budget does not change the decision)."""
    thinking = request.get("thinking")
    if isinstance(thinking, Mapping):
        return dict(thinking)
    if request.get("reasoning_effort") not in (None, "none", "disable"):
        return {"type": "enabled", "budget_tokens": 1024}
    return None


def _request_of(kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The request fields of LiteLLM's logging ``kwargs`` (its call details)
    that the decision reads: the messages as given, tools, response format
    and thinking."""
    messages = kwargs.get("messages")
    if not isinstance(messages, list):
        return None
    optional = kwargs.get("optional_params") or {}
    request = {"messages": messages}
    for field in ("tools", "response_format", *THINKING_FIELDS):
        value = kwargs.get(field)
        value = optional.get(field) if value is None else value
        if value is not None:
            request[field] = value
    return request


def _conversation_of(request: Mapping[str, Any]) -> Conversation:
    messages: Sequence[object] = request["messages"]
    return import_messages(messages, tools=request.get("tools"), response_format=request.get("response_format"))


def _key_conversation(request: Mapping[str, Any]) -> Conversation:
    """The messages alone: what finds a reply's decision again. LiteLLM's
    logged tools and response format can differ from the request's (its JSON
    mode is a tool for Claude), its messages do not."""
    return import_messages(request["messages"])


def _sealed(message: object) -> bool:
    return isinstance(message, AssistantMessage) and message.has_sealed_thinking

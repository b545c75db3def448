"""The store interface, written once over a backend's few primitive reads and
writes (``_head``, ``_read``, ``_insert``, ``_append_rows`` ...): every backend
stores the same rows (``_codec``) and gets the same checks."""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import Message
from ._codec import (
    CHAIN_START,
    ContextRow,
    Head,
    Integrity,
    MessageRow,
    build,
    chain_of,
    check_length,
    check_new_messages,
    check_session_id,
    conflict,
    context_changed,
    encode_context,
    encode_messages,
    extend,
    import_document,
    new_session_id,
)

__all__ = ["AsyncStore", "Store"]


def _check_conversation(conversation: object) -> Conversation:
    if not isinstance(conversation, Conversation):
        raise ValidationError(
            f"conversation: expected a Conversation, got {type(conversation).__name__}", path="conversation"
        )
    return conversation


def _initial(conversation: Conversation | None) -> tuple[list[MessageRow], bytes, ContextRow | None]:
    if conversation is None:
        return [], CHAIN_START, None
    conversation = _check_conversation(conversation)
    rows, chain = encode_messages(conversation.messages, 0, CHAIN_START)
    context = encode_context(conversation, 0, 0) if context_changed(conversation, None) else None
    return rows, chain, context


def _tail(
    session_id: str, head: Head, conversation: Conversation, expected: int
) -> tuple[list[MessageRow], bytes, ContextRow | None]:
    """The rows that store ``conversation`` over a session whose head is
    ``head`` (already checked to have ``expected`` messages)."""
    if len(conversation) < expected or chain_of(conversation, expected) != head.chain:
        raise conflict(
            session_id,
            expected,
            head.length,
            f"session {session_id!r}: the conversation does not extend the stored one "
            f"(its first {expected} messages differ from the {head.length} stored); refresh and retry",
        )
    rows, chain = encode_messages(conversation.messages[expected:], expected, head.chain)
    context = (
        encode_context(conversation, head.contexts, expected) if context_changed(conversation, head.context) else None
    )
    return rows, chain, context


def _fork_length(head: Head, length: int | None) -> int:
    if length is None:
        return head.length
    length = check_length(length, "length")
    if length > head.length:
        raise ValidationError(f"length: the session has {head.length} messages, not {length}", path="length")
    return length


# How many sessions' heads a store remembers (see ``_Heads``).
_KNOWN_HEADS = 4096


T = TypeVar("T")

# An async store decodes more rows than this in a worker thread, so the event
# loop keeps serving other tasks meanwhile: the decoding holds the GIL, but in
# slices (CPython switches threads every few milliseconds), not for the whole
# load. Fewer rows are decoded in place, where a thread would cost more than it
# frees.
OFF_LOOP_ROWS = 1_000


async def _off_loop(rows: int, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, in a worker thread when it decodes more than ``OFF_LOOP_ROWS`` rows."""
    if rows <= OFF_LOOP_ROWS:
        return function(*args)
    return await asyncio.to_thread(function, *args)


class _Heads:
    """The last head a store read or wrote per session. ``append`` and ``save``
    start from it when it has the length the caller gives, saving a read: the
    write is conditional on that head, so a stale one only costs a
    ``ConflictError`` (and is forgotten then)."""

    def __init__(self) -> None:
        self._heads: dict[str, Head] = {}

    def get(self, session_id: str, length: int) -> Head | None:
        head = self._heads.get(session_id)
        return head if head is not None and head.length == length else None

    def put(self, session_id: str, head: Head) -> None:
        if len(self._heads) >= _KNOWN_HEADS:
            self._heads.clear()
        self._heads[session_id] = head

    def written(self, session_id: str, head: Head, rows: int, chain: bytes, context: ContextRow | None) -> None:
        contexts = head.contexts + (context is not None)
        self.put(session_id, Head(head.length + rows, chain, contexts, context or head.context))

    def forget(self, session_id: str) -> None:
        self._heads.pop(session_id, None)


class Store(abc.ABC):
    """A conversation store (sync). See docs/store.md.

    Sessions are append-only: ``append`` and ``save`` write only new messages
    (one row or entry each), conditionally on the length the caller loaded;
    ``load`` verifies every row it reads; ``refresh`` reads only new rows.
    Safe to share between threads.
    """

    def __init__(self) -> None:
        self._known = _Heads()

    def _head_for(self, session_id: str, expected: int) -> Head:
        return self._known.get(session_id, expected) or self._head(session_id)

    def _write(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        try:
            self._append_rows(session_id, head, rows, chain, context)
        except BaseException:
            self._known.forget(session_id)
            raise
        self._known.written(session_id, head, len(rows), chain, context)

    def _read_known(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        head, rows = self._read(session_id, start)
        self._known.put(session_id, head)
        return head, rows

    # -- backend primitives ---------------------------------------------------------

    @abc.abstractmethod
    def _head(self, session_id: str) -> Head:
        """The session's row (``SessionNotFoundError`` when absent)."""

    @abc.abstractmethod
    def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        """The session's row and its message rows from ``start`` on, in one snapshot."""

    @abc.abstractmethod
    def _insert(self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> None:
        """Create the session with these rows (``ConflictError`` when it exists)."""

    @abc.abstractmethod
    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        """Add the rows atomically if the session still has ``head``'s length,
        chain value and context count, else raise ``ConflictError``."""

    @abc.abstractmethod
    def _sessions(self) -> list[str]: ...

    @abc.abstractmethod
    def _delete(self, session_id: str) -> bool: ...

    @abc.abstractmethod
    def _fork(self, source: str, length: int, session_id: str) -> None:
        """Copy the first ``length`` rows of ``source`` (and the context rows up
        to that position) into a new session (``ConflictError`` when it exists)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connections this store opened (not ones it was given)."""

    # -- the interface ------------------------------------------------------------------

    def create(self, conversation: Conversation | None = None, *, session_id: str | None = None) -> str:
        """A new session holding ``conversation`` (empty by default); returns its
        id (a random hex id unless ``session_id`` is given). ``ConflictError``
        when ``session_id`` exists."""
        session_id = new_session_id(session_id)
        rows, chain, context = _initial(conversation)
        self._insert(session_id, rows, chain, context)
        return session_id

    def load(self, session_id: str) -> Conversation:
        """The stored conversation: every message, and the latest tools and
        response format. Each row is checked against its digest and chain value;
        a row that does not check is loaded as stored and logged (positions only),
        and the replay rules unseal its turn and every later sealed turn."""
        session_id = check_session_id(session_id)
        head, rows = self._read_known(session_id, 0)
        return build(session_id, head, rows)[0]

    def verify(self, session_id: str) -> Integrity:
        """Which stored rows do not match their digests or chain values."""
        session_id = check_session_id(session_id)
        head, rows = self._read_known(session_id, 0)
        _, bad, bad_context = build(session_id, head, rows)
        return Integrity(session_id, head.length, bad, bad_context)

    def length(self, session_id: str) -> int:
        """The number of stored messages (one small read)."""
        return self._head(check_session_id(session_id)).length

    def append(self, session_id: str, messages: Sequence[Message] | Message, *, expected_length: int) -> int:
        """Store ``messages`` after the first ``expected_length`` messages and
        return the new length. ``ConflictError`` (nothing written) when the
        session no longer has ``expected_length`` messages."""
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        new = check_new_messages(messages)
        head = self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        rows, chain = encode_messages(new, expected, head.chain)
        self._write(session_id, head, rows, chain, None)
        return expected + len(new)

    def save(self, session_id: str, conversation: Conversation, *, expected_length: int) -> int:
        """Store the messages of ``conversation`` past ``expected_length``, and its
        tools and response format when they changed (a new context row). The
        first ``expected_length`` messages must be the stored ones
        (``ConflictError`` otherwise, as for a length that no longer holds)."""
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        conversation = _check_conversation(conversation)
        head = self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        rows, chain, context = _tail(session_id, head, conversation, expected)
        if rows or context is not None:
            self._write(session_id, head, rows, chain, context)
        return len(conversation)

    def refresh(self, session_id: str, conversation: Conversation) -> Conversation:
        """``conversation`` (held from an earlier ``load``) brought up to date:
        reads only the rows past its length (and the one before, to check that it
        is a prefix of the stored session), appends them (keeping its replay
        caches) and takes the latest context. When it is not a prefix, the
        session is loaded whole."""
        session_id = check_session_id(session_id)
        conversation = _check_conversation(conversation)
        head, rows = self._read_known(session_id, max(len(conversation) - 1, 0))
        updated = extend(session_id, conversation, head, rows)
        return updated if updated is not None else self.load(session_id)

    def list_sessions(self) -> list[str]:
        """Every stored session id, oldest first."""
        return self._sessions()

    def delete(self, session_id: str) -> bool:
        """Remove the session and its rows; False when there was none."""
        self._known.forget(session_id)
        return self._delete(check_session_id(session_id))

    def fork(self, source: str, /, *, length: int | None = None, session_id: str | None = None) -> str:
        """A new session holding the first ``length`` messages of ``source`` (all
        by default) and the context in force there; returns its id. Copied in the
        database, bindings and all, so its sealed turns hold as they did."""
        source = check_session_id(source)
        new_id = new_session_id(session_id)
        self._fork(source, _fork_length(self._head(source), length), new_id)
        return new_id

    def import_json(self, text: str | bytes, *, session_id: str | None = None) -> str:
        """A new session from a ``Conversation.to_json`` document (one bulk write)."""
        return self.create(import_document(text), session_id=session_id)

    def export_json(self, session_id: str) -> str:
        """The session as a ``Conversation.to_json`` document."""
        return self.load(session_id).to_json()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncStore(abc.ABC):
    """The asyncio form of ``Store``: the same methods, awaited."""

    def __init__(self) -> None:
        self._known = _Heads()

    async def _head_for(self, session_id: str, expected: int) -> Head:
        return self._known.get(session_id, expected) or await self._head(session_id)

    async def _write(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        try:
            await self._append_rows(session_id, head, rows, chain, context)
        except BaseException:
            self._known.forget(session_id)
            raise
        self._known.written(session_id, head, len(rows), chain, context)

    async def _read_known(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        head, rows = await self._read(session_id, start)
        self._known.put(session_id, head)
        return head, rows

    @abc.abstractmethod
    async def _head(self, session_id: str) -> Head: ...

    @abc.abstractmethod
    async def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]: ...

    @abc.abstractmethod
    async def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None: ...

    @abc.abstractmethod
    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None: ...

    @abc.abstractmethod
    async def _sessions(self) -> list[str]: ...

    @abc.abstractmethod
    async def _delete(self, session_id: str) -> bool: ...

    @abc.abstractmethod
    async def _fork(self, source: str, length: int, session_id: str) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the connections this store opened (not ones it was given)."""

    async def create(self, conversation: Conversation | None = None, *, session_id: str | None = None) -> str:
        session_id = new_session_id(session_id)
        rows, chain, context = _initial(conversation)
        await self._insert(session_id, rows, chain, context)
        return session_id

    async def load(self, session_id: str) -> Conversation:
        session_id = check_session_id(session_id)
        head, rows = await self._read_known(session_id, 0)
        return (await _off_loop(len(rows), build, session_id, head, rows))[0]

    async def verify(self, session_id: str) -> Integrity:
        session_id = check_session_id(session_id)
        head, rows = await self._read_known(session_id, 0)
        _, bad, bad_context = await _off_loop(len(rows), build, session_id, head, rows)
        return Integrity(session_id, head.length, bad, bad_context)

    async def length(self, session_id: str) -> int:
        return (await self._head(check_session_id(session_id))).length

    async def append(self, session_id: str, messages: Sequence[Message] | Message, *, expected_length: int) -> int:
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        new = check_new_messages(messages)
        head = await self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        rows, chain = encode_messages(new, expected, head.chain)
        await self._write(session_id, head, rows, chain, None)
        return expected + len(new)

    async def save(self, session_id: str, conversation: Conversation, *, expected_length: int) -> int:
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        conversation = _check_conversation(conversation)
        head = await self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        rows, chain, context = _tail(session_id, head, conversation, expected)
        if rows or context is not None:
            await self._write(session_id, head, rows, chain, context)
        return len(conversation)

    async def refresh(self, session_id: str, conversation: Conversation) -> Conversation:
        session_id = check_session_id(session_id)
        conversation = _check_conversation(conversation)
        head, rows = await self._read_known(session_id, max(len(conversation) - 1, 0))
        updated = await _off_loop(len(rows), extend, session_id, conversation, head, rows)
        return updated if updated is not None else await self.load(session_id)

    async def list_sessions(self) -> list[str]:
        return await self._sessions()

    async def delete(self, session_id: str) -> bool:
        self._known.forget(session_id)
        return await self._delete(check_session_id(session_id))

    async def fork(self, source: str, /, *, length: int | None = None, session_id: str | None = None) -> str:
        source = check_session_id(source)
        new_id = new_session_id(session_id)
        await self._fork(source, _fork_length(await self._head(source), length), new_id)
        return new_id

    async def import_json(self, text: str | bytes, *, session_id: str | None = None) -> str:
        return await self.create(import_document(text), session_id=session_id)

    async def export_json(self, session_id: str) -> str:
        return (await self.load(session_id)).to_json()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

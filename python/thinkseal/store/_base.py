"""The store interface, written once over a backend's few primitive reads and
writes (``_head``, ``_read``, ``_row``, ``_insert``, ``_append_rows``,
``_replace_rows`` ...): every backend stores the same rows (``_codec``) and gets
the same checks."""

from __future__ import annotations

import abc
import asyncio
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

from .._binding import FINGERPRINT_VERSION
from .._conversation import Conversation
from .._errors import ConflictError, ValidationError
from .._frozen import check_bool
from .._messages import Message
from ._codec import (
    CHAIN_START,
    ContextRow,
    FragmentIndex,
    FragmentRow,
    Head,
    Integrity,
    MessageRow,
    Session,
    SessionInfo,
    SessionNotFoundError,
    Tail,
    build,
    chain_of,
    check_length,
    check_new_messages,
    check_session_id,
    check_writable,
    conflict,
    context_changed,
    encode_context,
    encode_messages,
    encode_metadata,
    extend,
    import_document,
    info_of,
    new_session_id,
    row_slices,
)
from ._fragments import fragment_key
from ._lazy import load_lazy

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


def _replaced(head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None, epoch: int) -> Head:
    contexts = 0 if context is None else 1
    return Head(len(rows), chain, contexts, context, FINGERPRINT_VERSION, epoch, head.metadata, chain)


# How many sessions' heads a caller (a thread, or an asyncio task) remembers.
_KNOWN_HEADS = 256


T = TypeVar("T")

# An async store decodes rows in a worker thread (``asyncio.to_thread``) when
# there are more than OFF_LOOP_ROWS of them or their JSON passes
# OFF_LOOP_BYTES, and refreshes a conversation of more than OFF_LOOP_HELD
# messages there (its chain is checked). The worker reads the rows in slices
# (``_codec.SLICE_BYTES``), each one native call that gives the GIL back after
# it, so the event loop keeps serving other tasks meanwhile. Less is decoded in
# place, where a thread would cost more than it frees (about 1 ms at most).
OFF_LOOP_ROWS = 200
OFF_LOOP_BYTES = 128 * 1024
OFF_LOOP_HELD = 20_000


class _Heads:
    """The last head the caller read or wrote per session, where the caller is
    the current thread (sync stores) or asyncio task (async stores).
    ``append``, ``save`` and ``replace`` start from it when it has the length
    the caller gives: that saves a read, and it is the head the caller's
    conversation came from, so a session replaced since (even back to the same
    length) fails the write's condition. A stale one costs a ``ConflictError``,
    and stays until the caller reads the session again (``refresh``, ``load``,
    ``length``, ``info``): retried blind, the write conflicts again."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _map(self) -> dict[str, Head]:
        heads: dict[str, Head] | None = getattr(self._local, "heads", None)
        if heads is None:
            heads = self._local.heads = {}
        return heads

    def get(self, session_id: str, length: int) -> Head | None:
        head = self._map().get(session_id)
        return head if head is not None and head.length == length else None

    def put(self, session_id: str, head: Head) -> None:
        heads = self._map()
        if len(heads) >= _KNOWN_HEADS:
            heads.clear()
        heads[session_id] = head

    def written(self, session_id: str, head: Head, rows: int, chain: bytes, context: ContextRow | None) -> None:
        contexts = head.contexts + (context is not None)
        new = head._replace(length=head.length + rows, chain=chain, contexts=contexts, last_chain=chain)
        self.put(session_id, new._replace(context=context or head.context))

    def forget(self, session_id: str) -> None:
        self._map().pop(session_id, None)


class _TaskHeads(_Heads):
    """``_Heads`` per asyncio task (forgotten with the task)."""

    def __init__(self) -> None:
        self._tasks: weakref.WeakKeyDictionary[asyncio.Task[Any], dict[str, Head]] = weakref.WeakKeyDictionary()

    def _map(self) -> dict[str, Head]:
        task = asyncio.current_task()
        if task is None:
            return {}
        heads = self._tasks.get(task)
        if heads is None:
            heads = self._tasks[task] = {}
        return heads


class Store(abc.ABC):
    """A conversation store (sync). See docs/store.md.

    Sessions are append-only: ``append`` and ``save`` write only new messages
    (one row or entry each), conditionally on the length the caller loaded;
    ``replace`` rewrites a session whole, atomically and under the same
    condition; ``load`` verifies every row it reads; ``refresh`` reads only new
    rows. Safe to share between threads. Every backend's constructor takes
    ``fragment_secret`` (str or bytes, the same for every worker): the key of
    the checks of the rows a lazy load sends from (docs/store.md).
    """

    def __init__(self, fragment_secret: bytes | str | None = None) -> None:
        self._known = _Heads()
        # The key of the fragment rows' checks (docs/persistence.md, "Prepared fragments").
        self._fragment_key = fragment_key(fragment_secret)

    def _head_for(self, session_id: str, expected: int) -> Head:
        return self._known.get(session_id, expected) or self._head(session_id)

    def _write(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        try:
            self._append_rows(session_id, head, rows, chain, context)
        except ConflictError:
            raise  # the head stays: retried without a fresh read, the write conflicts again
        except BaseException:
            self._known.forget(session_id)
            raise
        self._known.written(session_id, head, len(rows), chain, context)

    def _read_known(self, session_id: str, start: int) -> tuple[Head, Any]:
        head, raw = self._read(session_id, start)
        self._known.put(session_id, head)
        return head, raw

    def _head_known(self, session_id: str) -> Head:
        head = self._head(session_id)
        self._known.put(session_id, head)
        return head

    def _build(self, session_id: str, head: Head, raw: Any) -> tuple[Conversation, Integrity]:
        return build(session_id, head, row_slices(session_id, 0, head.length, raw, self._row))

    # -- backend primitives ---------------------------------------------------------

    @abc.abstractmethod
    def _head(self, session_id: str) -> Head:
        """The session's row (``SessionNotFoundError`` when absent)."""

    @abc.abstractmethod
    def _read(self, session_id: str, start: int) -> tuple[Head, Any]:
        """The session's row and its message rows from ``start`` to its length,
        in one snapshot, as the backend returns them (``_row`` reads each)."""

    @staticmethod
    @abc.abstractmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow:
        """Message row ``position`` from an item of what ``_read`` returned,
        checked (touches nothing of the store: run in a worker thread)."""

    @abc.abstractmethod
    def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None:
        """Create the session with these rows (``ConflictError`` when it exists)."""

    @abc.abstractmethod
    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        """Add the rows atomically if the session still has ``head``'s length,
        chain value, context count and epoch, else raise ``ConflictError``."""

    @abc.abstractmethod
    def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int:
        """Replace every message and context row atomically under the same
        condition as ``_append_rows``; returns the session's new epoch."""

    @abc.abstractmethod
    def _set_metadata(self, session_id: str, metadata: str) -> bool:
        """Store the metadata text; False when there is no such session."""

    @abc.abstractmethod
    def _sessions(self) -> list[str]: ...

    @abc.abstractmethod
    def _infos(self) -> list[SessionInfo]: ...

    @abc.abstractmethod
    def _delete(self, session_id: str) -> bool: ...

    @abc.abstractmethod
    def _fork(self, source: str, length: int, session_id: str) -> None:
        """Copy the first ``length`` rows of ``source`` (and the context rows up
        to that position, the metadata and the version) into a new session
        (``ConflictError`` when it exists)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connections this store opened (not ones it was given)."""

    # -- backend primitives of the prepared fragments (``_fragments``) ----------------------

    @abc.abstractmethod
    def _rows_between(self, session_id: str, start: int, end: int) -> list[Any]:
        """Message rows ``start..end`` as the backend returns them (``_row``
        reads each), in order; fewer when rows are missing."""

    @abc.abstractmethod
    def _rows_at(self, session_id: str, positions: Sequence[int]) -> list[Any]:
        """The message rows at ``positions`` (ascending, few), in that order;
        fewer when rows are missing."""

    @abc.abstractmethod
    def _fragment_index(self, session_id: str) -> list[tuple[bytes, str, int, int, bytes]]:
        """Every fragment row of the session as ``(target, wire_key, start,
        end, entry)``, without their data (small: read on every lazy load)."""

    def _fragment_index_and_tail(self, session_id: str, back: int) -> tuple[list[FragmentIndex], Tail | None, object]:
        """``_fragment_index``; where the backend reads them in the same
        request (PostgreSQL, Redis), the session row and its message rows from
        ``back`` before the end of its last fragment row (from the start when
        it has none): what a lazy load reads after planning its run when that
        run ends there; and what ``_fragments`` may be given to read in fewer
        round trips (Redis: the entries as read). None and None here: the load
        reads the rows after its plan."""
        return self._fragment_index(session_id), None, None

    @abc.abstractmethod
    def _fragments(self, session_id: str, target: bytes, hint: object = None) -> list[FragmentRow]:
        """The session's fragment rows of ``target`` as ``(wire_key, start,
        end, entry, data)``, the data as the list of parts it was read in
        (``data_parts``; one part on SQLite), never joined. ``hint``: what
        ``_fragment_index_and_tail`` gave with the index; the rows are read
        afresh whatever it holds."""

    @abc.abstractmethod
    def _put_fragment(
        self, session_id: str, target: bytes, wire_key: str, start: int, end: int, entry: bytes, data: bytes
    ) -> None:
        """Write the fragment row ``(target, wire_key, start)`` (replacing one
        there) and delete the rows of the same target and wire key whose start
        lies strictly between ``start`` and ``end`` (merged into this one), in
        one atomic write; nothing when the session does not exist."""

    # -- the interface ------------------------------------------------------------------

    def create(
        self,
        conversation: Conversation | None = None,
        *,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """A new session holding ``conversation`` (empty by default) and
        ``metadata`` (a small JSON object; empty by default); returns its id (a
        random hex id unless ``session_id`` is given). ``ConflictError`` when
        ``session_id`` exists."""
        session_id = new_session_id(session_id)
        text = encode_metadata(metadata)
        rows, chain, context = _initial(conversation)
        self._insert(session_id, rows, chain, context, text)
        return session_id

    def load(self, session_id: str, *, lazy: bool = False) -> Conversation:
        """The stored conversation: every message, and the latest tools and
        response format. Each row is checked against its digest and chain value;
        a row that does not check is loaded as stored and logged (positions only),
        and the replay rules unseal its turn and every later sealed turn.

        ``lazy=True``: for a worker that prepares one request from it. The rows
        before what earlier requests to a target prepared are read only when
        something touches their messages (so the store must stay open), and
        ``prepare`` for such a target maps the new messages only; see
        docs/store.md, "Lazy loads and prepared fragments"."""
        session_id = check_session_id(session_id)
        if check_bool(lazy, "lazy"):
            return load_lazy(self, session_id)
        head, raw = self._read_known(session_id, 0)
        return self._build(session_id, head, raw)[0]

    def load_session(self, session_id: str) -> Session:
        """``load`` and ``info`` from one read: ``Session(conversation, info)``."""
        session_id = check_session_id(session_id)
        head, raw = self._read_known(session_id, 0)
        return Session(self._build(session_id, head, raw)[0], info_of(session_id, head))

    def info(self, session_id: str) -> SessionInfo:
        """The session's row: length, metadata, fingerprint version (one small read)."""
        session_id = check_session_id(session_id)
        return info_of(session_id, self._head_known(session_id))

    def set_metadata(self, session_id: str, metadata: Mapping[str, Any]) -> None:
        """Replace the session's metadata (a small JSON object). Independent of
        the messages: it never makes an append conflict."""
        session_id = check_session_id(session_id)
        if not self._set_metadata(session_id, encode_metadata(metadata)):
            raise SessionNotFoundError(session_id)

    def verify(self, session_id: str) -> Integrity:
        """Which stored rows do not match their digests or chain values."""
        session_id = check_session_id(session_id)
        head, raw = self._read_known(session_id, 0)
        return self._build(session_id, head, raw)[1]

    def length(self, session_id: str) -> int:
        """The number of stored messages (one small read)."""
        return self._head_known(check_session_id(session_id)).length

    def append(self, session_id: str, messages: Sequence[Message] | Message, *, expected_length: int) -> int:
        """Store ``messages`` after the first ``expected_length`` messages and
        return the new length. ``ConflictError`` (nothing written) when the
        session no longer has ``expected_length`` messages, or was replaced
        since this thread read it."""
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        new = check_new_messages(messages)
        head = self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        check_writable(session_id, head)
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
        check_writable(session_id, head)
        rows, chain, context = _tail(session_id, head, conversation, expected)
        if rows or context is not None:
            self._write(session_id, head, rows, chain, context)
        return len(conversation)

    def replace(self, session_id: str, conversation: Conversation, *, expected_length: int) -> int:
        """Replace the whole session with ``conversation`` (messages, tools,
        response format; the metadata stays), atomically, if it still has
        ``expected_length`` messages and was not replaced since this thread read
        it (``ConflictError`` otherwise, nothing written). Written under the
        current fingerprint version. Returns the new length."""
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        conversation = _check_conversation(conversation)
        head = self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        rows, chain, context = _initial(conversation)
        try:
            epoch = self._replace_rows(session_id, head, rows, chain, context)
        except ConflictError:
            raise
        except BaseException:
            self._known.forget(session_id)
            raise
        self._known.put(session_id, _replaced(head, rows, chain, context, epoch))
        return len(rows)

    def migrate(self, session_id: str) -> int:
        """Re-encode a session stored under another fingerprint version under
        the current one (``replace`` with its loaded conversation); returns its
        length. A session of the current version is left as it is. Bindings are
        kept as stored: its sealed turns still read ``version-mismatch`` until
        ``Conversation.rebind`` by a caller who vouches for them."""
        session_id = check_session_id(session_id)
        head, raw = self._read_known(session_id, 0)
        if head.version == FINGERPRINT_VERSION:
            return head.length
        conversation = self._build(session_id, head, raw)[0]
        return self.replace(session_id, conversation, expected_length=head.length)

    def refresh(self, session_id: str, conversation: Conversation) -> Conversation:
        """``conversation`` (held from an earlier ``load``) brought up to date:
        reads only the rows past its length (and the one before, to check that it
        is a prefix of the stored session), appends them (keeping its replay
        caches) and takes the latest context. When it is not a prefix, the
        session is loaded whole."""
        session_id = check_session_id(session_id)
        conversation = _check_conversation(conversation)
        start = max(len(conversation) - 1, 0)
        head, raw = self._read_known(session_id, start)
        updated = extend(session_id, conversation, head, row_slices(session_id, start, head.length, raw, self._row))
        return updated if updated is not None else self.load(session_id)

    def list_sessions(self) -> list[str]:
        """Every stored session id, oldest first."""
        return self._sessions()

    def sessions(self) -> list[SessionInfo]:
        """Every stored session's ``SessionInfo``, oldest first."""
        return self._infos()

    def delete(self, session_id: str) -> bool:
        """Remove the session and its rows; False when there was none."""
        self._known.forget(session_id)
        return self._delete(check_session_id(session_id))

    def fork(self, source: str, /, *, length: int | None = None, session_id: str | None = None) -> str:
        """A new session holding the first ``length`` messages of ``source`` (all
        by default), the context in force there and its metadata; returns its
        id. Copied in the database, bindings and all, so its sealed turns hold
        as they did."""
        source = check_session_id(source)
        new_id = new_session_id(session_id)
        self._fork(source, _fork_length(self._head(source), length), new_id)
        return new_id

    def import_json(
        self, text: str | bytes, *, session_id: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> str:
        """A new session from a ``Conversation.to_json`` document (one bulk write)."""
        return self.create(import_document(text), session_id=session_id, metadata=metadata)

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

    def __init__(self, fragment_secret: bytes | str | None = None) -> None:
        self._known: _Heads = _TaskHeads()
        # For the sync store a lazy load reads through (``_lazy_twin``), made
        # later: a secret that is not str or bytes is refused here already.
        fragment_key(fragment_secret)
        self._fragment_secret = fragment_secret

    async def _head_for(self, session_id: str, expected: int) -> Head:
        return self._known.get(session_id, expected) or await self._head(session_id)

    async def _write(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        try:
            await self._append_rows(session_id, head, rows, chain, context)
        except ConflictError:
            raise
        except BaseException:
            self._known.forget(session_id)
            raise
        self._known.written(session_id, head, len(rows), chain, context)

    async def _read_known(self, session_id: str, start: int) -> tuple[Head, Any]:
        head, raw = await self._read(session_id, start)
        self._known.put(session_id, head)
        return head, raw

    async def _head_known(self, session_id: str) -> Head:
        head = await self._head(session_id)
        self._known.put(session_id, head)
        return head

    def _build(self, session_id: str, head: Head, raw: Any) -> tuple[Conversation, Integrity]:
        return build(session_id, head, row_slices(session_id, 0, head.length, raw, self._row))

    def _extend(self, session_id: str, held: Conversation, head: Head, start: int, raw: Any) -> Conversation | None:
        return extend(session_id, held, head, row_slices(session_id, start, head.length, raw, self._row))

    async def _off_loop(self, raw: Sequence[Any], function: Callable[..., T], *args: Any, held: int = 0) -> T:
        """``function(*args)`` decoding ``raw``: in a worker thread unless it is
        small (``OFF_LOOP_ROWS``, ``OFF_LOOP_BYTES``, ``OFF_LOOP_HELD``)."""
        if len(raw) <= OFF_LOOP_ROWS and held <= OFF_LOOP_HELD and self._raw_bytes(raw) <= OFF_LOOP_BYTES:
            return function(*args)
        return await asyncio.to_thread(function, *args)

    # -- backend primitives (as for Store, awaited) ------------------------------------

    @abc.abstractmethod
    async def _head(self, session_id: str) -> Head: ...

    @abc.abstractmethod
    async def _read(self, session_id: str, start: int) -> tuple[Head, Any]: ...

    @staticmethod
    @abc.abstractmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow: ...

    @staticmethod
    @abc.abstractmethod
    def _raw_bytes(raw: Any) -> int:
        """Bytes of JSON in what ``_read`` returned (asked only of a few rows)."""

    @abc.abstractmethod
    async def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None: ...

    @abc.abstractmethod
    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None: ...

    @abc.abstractmethod
    async def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int: ...

    @abc.abstractmethod
    async def _set_metadata(self, session_id: str, metadata: str) -> bool: ...

    @abc.abstractmethod
    async def _sessions(self) -> list[str]: ...

    @abc.abstractmethod
    async def _infos(self) -> list[SessionInfo]: ...

    @abc.abstractmethod
    async def _delete(self, session_id: str) -> bool: ...

    @abc.abstractmethod
    async def _fork(self, source: str, length: int, session_id: str) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the connections this store opened (not ones it was given)."""

    @abc.abstractmethod
    def _lazy_twin(self) -> Store:
        """A sync store of the same database, made once, that lazy loads read
        and write through (in worker threads, but for a touch of an unread
        message); ``close`` closes it."""

    async def create(
        self,
        conversation: Conversation | None = None,
        *,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        session_id = new_session_id(session_id)
        text = encode_metadata(metadata)
        rows, chain, context = _initial(conversation)
        await self._insert(session_id, rows, chain, context, text)
        return session_id

    async def load(self, session_id: str, *, lazy: bool = False) -> Conversation:
        session_id = check_session_id(session_id)
        if check_bool(lazy, "lazy"):  # read in a worker thread through a sync store of the database: docs/store.md
            return await asyncio.to_thread(load_lazy, self._lazy_twin(), session_id, None, True)
        head, raw = await self._read_known(session_id, 0)
        return (await self._off_loop(raw, self._build, session_id, head, raw))[0]

    async def load_session(self, session_id: str) -> Session:
        session_id = check_session_id(session_id)
        head, raw = await self._read_known(session_id, 0)
        conversation = (await self._off_loop(raw, self._build, session_id, head, raw))[0]
        return Session(conversation, info_of(session_id, head))

    async def info(self, session_id: str) -> SessionInfo:
        session_id = check_session_id(session_id)
        return info_of(session_id, await self._head_known(session_id))

    async def set_metadata(self, session_id: str, metadata: Mapping[str, Any]) -> None:
        session_id = check_session_id(session_id)
        if not await self._set_metadata(session_id, encode_metadata(metadata)):
            raise SessionNotFoundError(session_id)

    async def verify(self, session_id: str) -> Integrity:
        session_id = check_session_id(session_id)
        head, raw = await self._read_known(session_id, 0)
        return (await self._off_loop(raw, self._build, session_id, head, raw))[1]

    async def length(self, session_id: str) -> int:
        return (await self._head_known(check_session_id(session_id))).length

    async def append(self, session_id: str, messages: Sequence[Message] | Message, *, expected_length: int) -> int:
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        new = check_new_messages(messages)
        head = await self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        check_writable(session_id, head)
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
        check_writable(session_id, head)
        rows, chain, context = _tail(session_id, head, conversation, expected)
        if rows or context is not None:
            await self._write(session_id, head, rows, chain, context)
        return len(conversation)

    async def replace(self, session_id: str, conversation: Conversation, *, expected_length: int) -> int:
        session_id = check_session_id(session_id)
        expected = check_length(expected_length, "expected_length")
        conversation = _check_conversation(conversation)
        head = await self._head_for(session_id, expected)
        if head.length != expected:
            raise conflict(session_id, expected, head.length)
        rows, chain, context = _initial(conversation)
        try:
            epoch = await self._replace_rows(session_id, head, rows, chain, context)
        except ConflictError:
            raise
        except BaseException:
            self._known.forget(session_id)
            raise
        self._known.put(session_id, _replaced(head, rows, chain, context, epoch))
        return len(rows)

    async def migrate(self, session_id: str) -> int:
        session_id = check_session_id(session_id)
        head, raw = await self._read_known(session_id, 0)
        if head.version == FINGERPRINT_VERSION:
            return head.length
        conversation = (await self._off_loop(raw, self._build, session_id, head, raw))[0]
        return await self.replace(session_id, conversation, expected_length=head.length)

    async def refresh(self, session_id: str, conversation: Conversation) -> Conversation:
        session_id = check_session_id(session_id)
        conversation = _check_conversation(conversation)
        start = max(len(conversation) - 1, 0)
        head, raw = await self._read_known(session_id, start)
        updated = await self._off_loop(
            raw, self._extend, session_id, conversation, head, start, raw, held=len(conversation)
        )
        return updated if updated is not None else await self.load(session_id)

    async def list_sessions(self) -> list[str]:
        return await self._sessions()

    async def sessions(self) -> list[SessionInfo]:
        return await self._infos()

    async def delete(self, session_id: str) -> bool:
        self._known.forget(session_id)
        return await self._delete(check_session_id(session_id))

    async def fork(self, source: str, /, *, length: int | None = None, session_id: str | None = None) -> str:
        source = check_session_id(source)
        new_id = new_session_id(session_id)
        await self._fork(source, _fork_length(await self._head(source), length), new_id)
        return new_id

    async def import_json(
        self, text: str | bytes, *, session_id: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> str:
        return await self.create(import_document(text), session_id=session_id, metadata=metadata)

    async def export_json(self, session_id: str) -> str:
        return (await self.load(session_id)).to_json()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

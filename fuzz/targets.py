"""Fuzz targets: each takes the fuzzer's bytes and feeds them to one entry point.

The rule every target enforces: only ``thinkseal.ThinksealError`` subclasses may
escape thinkseal. Any other exception (``RecursionError``, ``KeyError``,
``TypeError``, ``UnicodeError``, ``AttributeError``...) propagates, and the
fuzzer reports it as a finding. Inputs the stdlib ``json`` module cannot decode
are skipped: they never reach thinkseal.
"""

from __future__ import annotations

import contextlib
import json
from array import array
from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any

import thinkseal
from thinkseal import Conversation, ThinksealError, UserMessage, _core, _load
from thinkseal.providers import PROVIDER_IDS, PreparedRequest

# The least options each adapter needs to prepare a request (those the
# emulators of python/thinkseal/testing/ are driven with); a provider not
# listed needs none.
OPTIONS: Mapping[str, Mapping[str, Any]] = {
    "anthropic": {"max_tokens": 1024},
    "vertex-anthropic": {"max_tokens": 1024, "project": "test-project", "region": "us-east5"},
    "vertex-gemini": {"project": "test-project", "location": "us-central1"},
}

MODEL = "fuzz-model"
CONVERSATION = Conversation([UserMessage("What is the weather in Paris?")])

_SKIP = object()  # the input is not JSON: nothing to test


def _decode(data: bytes) -> Any:
    """The JSON value of ``data``, or ``_SKIP`` when the stdlib rejects it."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, too many digits
        return _SKIP


def _stored(data: bytes) -> Any:
    """What ``Conversation.from_json`` makes of ``data``: the messages as they
    would be written back, with their types and digests, or the error."""
    try:
        conv = Conversation.from_json(data)
    except ThinksealError as err:
        return (type(err).__name__, str(err), getattr(err, "path", None))
    return ([type(m).__name__ for m in conv], [m.digest for m in conv], conv.to_json())


def from_json(data: bytes) -> None:
    """Also: the native reader (thinkseal._load) and the Python path agree."""
    native = _stored(data)
    previous = _load.use_native(False)
    try:
        slow = _stored(data)
    finally:
        _load.use_native(previous)
    if native != slow:
        raise AssertionError(f"the native and Python readers differ: {native!r:.300} != {slow!r:.300}")


def digests(data: bytes) -> None:
    """Also: the digests of a batch of messages (their encodings hashed side by
    side in SIMD lanes, rust/core/src/lanes.rs), as ``Conversation.from_json``
    reads them and as ``message_digests`` makes them on one and two threads,
    equal the digest of each message hashed alone."""
    try:
        messages = list(Conversation.from_json(data))
    except ThinksealError:
        return
    alone = [_core.message_digest(m) for m in messages]
    batches = {
        "as read": [m.digest for m in messages],
        "one thread": _core.message_digests(messages, 1),
        "two threads, three times over": _core.message_digests(messages * 3, 2),
    }
    for name, batch in batches.items():
        if batch != alone * (len(batch) // max(len(alone), 1)):
            raise AssertionError(f"the digests {name} differ from the digests made alone")


def _texts(data: bytes) -> list[str]:
    """Strings of every storage `CPython` has made of ``data``: its bytes as
    Latin-1 (one byte a unit, maybe ASCII), the same with a unit past U+00FF
    (UCS-2), and its UTF-16 units with lone surrogates kept (UCS-2, or UCS-4
    where a pair makes a character past U+FFFF)."""
    latin1 = data.decode("latin-1")
    utf16 = data[: len(data) // 2 * 2].decode("utf-16-le", "surrogatepass")
    return [latin1, latin1 + "\u0100", "\u0100" + latin1, utf16, utf16 + "\U0001f327"]


def text(data: bytes) -> None:
    """Also: a string's JSON as the wire writes it, its UTF-8 transcoded from
    the string's storage (rust/core/src/utf8.rs), is ``json.dumps``' bytes,
    and a string with a lone surrogate is refused as ``str.encode`` refuses it."""
    for s in _texts(data):
        try:
            want: bytes | None = json.dumps(s, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            want = None
        try:
            got: bytes | None = _core.wire_json(s)
        except ThinksealError:
            got = None
        if got != want:
            raise AssertionError(f"the wire JSON of a {len(s)}-character string differs from json.dumps'")


def _same_both_ways(
    result: Callable[[bytes], Any], data: bytes, owner: type, python: Mapping[str, Any], what: str
) -> None:
    """``result(data)`` as it is, and again with ``owner``'s attributes set to
    ``python`` (its native paths switched off): the two must be equal."""
    native = result(data)
    saved = {name: owner.__dict__[name] for name in python}
    for name, value in python.items():
        setattr(owner, name, value)
    try:
        slow = result(data)
    finally:
        for name, value in saved.items():
            setattr(owner, name, value)
    if native != slow:
        raise AssertionError(f"{what} differ: {native!r:.300} != {slow!r:.300}")


def _anthropic_body(data: bytes) -> Any:
    """The Anthropic body of the stored conversation ``data`` (or the error),
    its messages read fresh, so no wire fragment cached by another call is reused."""
    try:
        conv = Conversation.from_json(data)
        return thinkseal.provider("anthropic").prepare(conv, model=MODEL, max_tokens=1024).content
    except ThinksealError as err:
        return (type(err).__name__, getattr(err, "path", None))


def anthropic_turns(data: bytes) -> None:
    """Also: the Anthropic wire turns laid out and written natively
    (rust/python/src/claude.rs) and built by the Python path make the same
    body, or fail alike."""
    from thinkseal.providers import _claude, anthropic  # noqa: PLC0415 - this target's only

    python_turns = {"native_turn": _claude.Wire.native_turn, "native_turns": _claude.Wire.native_turns}
    _same_both_ways(_anthropic_body, data, anthropic._Wire, python_turns, "the native and Python turns")


# The targets a stored conversation's replay is decided for by the `walk` target.
WALK_TARGETS = (thinkseal.Origin("anthropic", MODEL), thinkseal.Origin("anthropic", MODEL, "acct"))


def _decisions(data: bytes) -> Any:
    """The replay decisions of the stored conversation ``data`` for each of
    ``WALK_TARGETS`` (reasons, chain, the messages as sent), read fresh."""
    try:
        conv = Conversation.from_json(data)
    except ThinksealError:
        return None
    out = []
    for origin in WALK_TARGETS:
        replay = conv.replay(origin)
        sent = [(type(m).__name__, m.digest) for m in replay.sent_messages()]
        out.append(([(e.index, e.reason) for e in replay.report], replay.chain_end, sent))
    return out


def walk(data: bytes) -> None:
    """Also: the replay walk and ``sent_messages`` with their native runs
    (rust/python/src/walk.rs) and the Python loops alone decide alike."""
    from thinkseal import _walk  # noqa: PLC0415 - this target's only

    def no_run(self: Any, items: Any, bounds: tuple[int, int, int], *rest: Any) -> int:
        return bounds[0]  # nothing taken natively: the Python loop decides every message

    _same_both_ways(_decisions, data, _walk.Walk, {"run": no_run}, "the native run and the Python walk")
    _same_both_ways(_decisions, data, _walk.Pairing, {"run": no_run}, "the native pairing and the Python one")


def message_from_dict(data: bytes) -> None:
    value = _decode(data)
    if value is _SKIP:
        return
    with contextlib.suppress(ThinksealError):
        thinkseal.message_from_dict(value)


def _prepare(provider_id: str, *, stream: bool) -> PreparedRequest:
    adapter = thinkseal.provider(provider_id)
    return adapter.prepare(CONVERSATION, model=MODEL, stream=stream, **OPTIONS.get(provider_id, {}))


def _receive(provider_id: str) -> Callable[[bytes], None]:
    req = _prepare(provider_id, stream=False)  # once: a bad harness fails at import, not as a finding

    def target(data: bytes) -> None:
        value = _decode(data)
        if value is _SKIP:
            return
        with contextlib.suppress(ThinksealError):
            req.receive(value)

    target.__name__ = f"receive_{provider_id}"
    return target


def _stream(provider_id: str) -> Callable[[bytes], None]:
    req = _prepare(provider_id, stream=True)

    def target(data: bytes) -> None:
        value = _decode(data)
        if value is _SKIP:
            return
        events = value if isinstance(value, list) else [value]
        try:
            accumulator = req.stream()
            for event in events:
                accumulator.feed(event)
            accumulator.finish()
        except ThinksealError:
            pass

    target.__name__ = f"stream_{provider_id}"
    return target


# The gateway surfaces that read a body's list element by element (and the path each serves).
GATEWAY_PATHS: Mapping[str, str] = {
    "anthropic": "/v1/messages",
    "openrouter": "/api/v1/chat/completions",
    "openai-responses": "/responses",
    "gemini": "/v1beta/models/fuzz-model:generateContent",
}


def _read(surface: Any, data: bytes, path: str, *, whole: bool) -> Any:
    """What a gateway surface reads from the body ``data`` (or the error's type and path)."""
    from thinkseal.gateway._surfaces import document_of  # noqa: PLC0415

    try:
        incoming = surface.read(document_of(data), path) if whole else surface.read_body(data, path)
    except ThinksealError as err:
        return (type(err).__name__, getattr(err, "path", None))
    return (incoming.conversation.to_json(), incoming.turns, dict(incoming.lengths), incoming.model, incoming.stream)


def _gateway(provider_id: str) -> Callable[[bytes], None]:
    """Also: reading a body element by element (one surface for every input, its
    cache kept as a server keeps it) gives what a whole read gives."""
    from thinkseal.gateway._surfaces import surface_of  # noqa: PLC0415

    path = GATEWAY_PATHS[provider_id]
    cached = surface_of(thinkseal.provider(provider_id))

    def target(data: bytes) -> None:
        got = _read(cached, data, path, whole=False)
        expected = _read(surface_of(thinkseal.provider(provider_id)), data, path, whole=True)
        if got != expected:
            raise AssertionError(f"the cached and whole reads differ: {got!r:.300} != {expected!r:.300}")

    target.__name__ = f"gateway_{provider_id}"
    return target


_FRAGMENT_TARGET = b"t" * 32
_FRAGMENT_CHAINS = (b"a" * 32, b"b" * 32)


def fragments(data: bytes) -> None:
    """The bytes as a fragment row's data, with a check made for them (the
    check's key is public: anyone who writes the store can make one), read
    back whole and cut into parts (of 1 to 64 bytes, by the first byte): the
    same ``Data`` that holds together, or None both ways; never an exception.
    The wire runs a cache keeps of it are its wire messages, each once."""
    from thinkseal.store._fragments import (  # noqa: PLC0415 - the store's only
        OPEN_KEY,
        Data,
        data_check,
        encode,
        read_data,
        read_entry,
        wire_runs,
    )

    empty = Data((), array("I"), None, b"\0" * 3, b"c" * 96, array("q"))
    entry, _ = encode(_FRAGMENT_TARGET, "messages", 10, 13, 13, _FRAGMENT_CHAINS, [], empty, OPEN_KEY)
    checked = read_entry(_FRAGMENT_TARGET, "messages", 10, 13, entry, OPEN_KEY)
    assert checked is not None
    checked = checked._replace(data_check=data_check(checked, [data]))
    read = read_data(checked, [data])
    size = 1 + (data[0] % 64 if data else 0)
    parts = [data[i : i + size] for i in range(0, len(data), size)] or [b""]
    in_parts = read_data(checked, parts)
    assert (read is None) == (in_parts is None), "read whole and in parts differ"
    if read is None or in_parts is None:
        return
    wire = b"".join(read.wire)
    assert len(wire) == sum(read.sizes) + max(len(read.sizes) - 1, 0), "the wire messages are not their sizes"
    assert b"".join(in_parts.wire) == wire, "read in parts, the wire messages differ"
    assert (in_parts.sizes, in_parts.codes, in_parts.chain) == (read.sizes, read.codes, read.chain)
    assert len(read.codes) == 3, "the reason codes are not the range's"
    assert len(read.chain) == 96, "the chain values are not the range's"
    ends = array("q", accumulate(read.sizes))
    runs = wire_runs(in_parts.wire, ends, 0, len(read.sizes)) if read.sizes else []
    assert [i for i, _ in runs] == sorted({i for i, _ in runs}), "the runs are out of order"
    # ``wire_runs`` takes the byte between two messages to be the comma that
    # ``encode`` writes there (a row that checks was written by a holder of the key).
    if all(wire[end + i : end + i + 1] == b"," for i, end in enumerate(ends[:-1])):
        assert b",".join(bytes(run) for _, run in runs) == wire, "the runs are not the wire messages"


def _targets() -> dict[str, Callable[[bytes], None]]:
    targets: dict[str, Callable[[bytes], None]] = {
        "from_json": from_json,
        "message_from_dict": message_from_dict,
        "fragments": fragments,
        "anthropic_turns": anthropic_turns,
        "walk": walk,
        "digests": digests,
        "text": text,
    }
    for provider_id in PROVIDER_IDS:
        targets[f"receive:{provider_id}"] = _receive(provider_id)
    for provider_id in PROVIDER_IDS:
        targets[f"stream:{provider_id}"] = _stream(provider_id)
    for provider_id in GATEWAY_PATHS:
        targets[f"gateway:{provider_id}"] = _gateway(provider_id)
    return targets


TARGETS: dict[str, Callable[[bytes], None]] = _targets()

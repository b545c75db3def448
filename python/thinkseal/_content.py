"""Content parts: what a system, user or tool message (and, for native blocks, an
assistant turn) carries besides plain text.

- ``Image``: bytes with their media type, or a URL.
- ``Document``: PDF bytes, a URL, or plain text; a title and a citations switch.
- ``Native(provider, data, text=None)``: one block of a provider's own wire
  form, kept verbatim (compact JSON text) and sent only to that provider; other
  providers get ``text`` when there is one (a cited text block), else nothing.
- ``CacheBreakpoint(ttl=None)``: a prompt-caching breakpoint after the part
  before it. Breakpoints are not fingerprinted: moving one never unseals.

A plain ``str`` in a sequence is a text part. The fingerprint of each kind is
in docs/fingerprint.md §3; a sequence that is one text part (breakpoints aside)
fingerprints exactly like that string.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, TypeAlias

from ._errors import ValidationError
from ._frozen import Value, check_bool, check_optional_str, check_sequence, check_str
from ._json import check_json, finite_loads
from ._limits import check_parts

IMAGE_MEDIA_TYPES: Final[tuple[str, ...]] = ("image/jpeg", "image/png", "image/gif", "image/webp")
DOCUMENT_MEDIA_TYPES: Final[tuple[str, ...]] = ("application/pdf", "text/plain")
CACHE_TTLS: Final[tuple[str, ...]] = ("5m", "1h")


def _check_bytes(value: object, path: str) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise ValidationError(f"{path}: expected bytes, got {type(value).__name__}", path=path)
    data = bytes(value)
    if not data:
        raise ValidationError(f"{path}: must not be empty", path=path)
    return data


def _check_url(value: object, path: str) -> str:
    url = check_str(value, path, blank_ok=False)
    if url != url.strip() or any(c.isspace() for c in url):
        raise ValidationError(f"{path}: a URL has no white space", path=path)
    return url


def _one_source(path: str, **sources: object) -> None:
    given = [name for name, value in sources.items() if value is not None]
    if len(given) != 1:
        names = ", ".join(sources)
        raise ValidationError(f"{path}: give exactly one of {names} (got {len(given)})", path=path)


class Image(Value):
    """An image: ``data`` (bytes) with its ``media_type``, or a ``url``."""

    __slots__ = ("data", "media_type", "url")
    __match_args__ = ("data", "media_type", "url")
    _fp_kind: ClassVar[str] = "image"
    data: bytes | None
    media_type: str | None
    url: str | None

    def __init__(self, data: bytes | None = None, media_type: str | None = None, url: str | None = None) -> None:
        _one_source("Image", data=data, url=url)
        media = check_optional_str(media_type, "Image.media_type")
        if data is not None:
            data = _check_bytes(data, "Image.data")
            if media not in IMAGE_MEDIA_TYPES:
                raise ValidationError(
                    f"Image.media_type: expected one of {', '.join(IMAGE_MEDIA_TYPES)}, got {media!r}",
                    path="Image.media_type",
                )
        elif media is not None and media not in IMAGE_MEDIA_TYPES:
            raise ValidationError(
                f"Image.media_type: expected one of {', '.join(IMAGE_MEDIA_TYPES)}, got {media!r}",
                path="Image.media_type",
            )
        self._init(data=data, media_type=media, url=None if url is None else _check_url(url, "Image.url"))

    def __repr__(self) -> str:
        if self.data is not None:
            return f"Image(data=<{len(self.data)} bytes>, media_type={self.media_type!r})"
        return f"Image(url={self.url!r})"


class Document(Value):
    """A document: PDF ``data`` (bytes), a ``url``, or plain ``text``; an optional
    ``title``, and ``citations`` to ask the provider to cite it (where it can)."""

    __slots__ = ("citations", "data", "media_type", "text", "title", "url")
    __match_args__ = ("data", "url", "text", "title", "citations", "media_type")
    _fp_kind: ClassVar[str] = "document"
    data: bytes | None
    url: str | None
    text: str | None
    title: str | None
    citations: bool
    media_type: str

    def __init__(
        self,
        data: bytes | None = None,
        url: str | None = None,
        text: str | None = None,
        title: str | None = None,
        citations: bool = False,
        media_type: str | None = None,
    ) -> None:
        _one_source("Document", data=data, url=url, text=text)
        if text is not None:
            text = check_str(text, "Document.text", blank_ok=False)
        default = "text/plain" if text is not None else "application/pdf"
        media = check_optional_str(media_type, "Document.media_type") or default
        if media != default:
            raise ValidationError(
                f"Document.media_type: a document given as {'text' if text is not None else 'data or url'} "
                f"is {default!r}, got {media!r}",
                path="Document.media_type",
            )
        self._init(
            data=None if data is None else _check_bytes(data, "Document.data"),
            url=None if url is None else _check_url(url, "Document.url"),
            text=text,
            title=None if title is None else check_str(title, "Document.title", blank_ok=False),
            citations=check_bool(citations, "Document.citations"),
            media_type=media,
        )

    def __repr__(self) -> str:
        if self.data is not None:
            source = f"data=<{len(self.data)} bytes>"
        elif self.url is not None:
            source = f"url={self.url!r}"
        else:
            source = f"text={self.text!r}"
        extra = "".join(
            [f", title={self.title!r}" if self.title is not None else "", ", citations=True" if self.citations else ""]
        )
        return f"Document({source}{extra})"


class Native(Value):
    """One block of ``provider``'s own wire form, kept verbatim: ``data`` is its
    JSON text (an object). Only that provider's adapter sends it, unchanged;
    other providers get ``text`` (for example a cited text block's text), or
    nothing when it is None."""

    __slots__ = ("data", "provider", "text")
    __match_args__ = ("provider", "data", "text")
    _fp_kind: ClassVar[str] = "native"
    provider: str
    data: str
    text: str | None

    def __init__(self, provider: str, data: str, text: str | None = None) -> None:
        data = check_str(data, "Native.data", blank_ok=False)
        try:
            value = finite_loads(data)
        except (ValueError, RecursionError) as err:
            raise ValidationError(f"Native.data: not valid JSON: {err}", path="Native.data") from None
        if not isinstance(value, dict):
            raise ValidationError("Native.data: expected a JSON object", path="Native.data")
        # Held to the limits every other JSON value is (nesting, string length,
        # lone surrogates written as escapes), so that no adapter reading it
        # later meets what it cannot handle.
        check_json(value, "Native.data")
        self._init(
            provider=check_str(provider, "Native.provider", blank_ok=False),
            data=data,
            text=check_optional_str(text, "Native.text"),
        )

    @classmethod
    def of(cls, provider: str, block: Any, text: str | None = None) -> Native:
        """A native block from a decoded JSON object, written as compact JSON."""
        import json  # noqa: PLC0415 - not on import thinkseal's path

        try:
            data = json.dumps(block, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError, RecursionError) as err:
            raise ValidationError(f"Native.data: not JSON: {err}", path="Native.data") from None
        return cls(provider, data, text)

    @property
    def value(self) -> dict[str, Any]:
        """The block, decoded (a new dict each time)."""
        import json  # noqa: PLC0415 - not on import thinkseal's path

        decoded: dict[str, Any] = json.loads(self.data)
        return decoded

    @property
    def type(self) -> str | None:
        """The block's ``"type"`` member, where it has one."""
        kind = self.value.get("type")
        return kind if isinstance(kind, str) else None


class CacheBreakpoint(Value):
    """A prompt-caching breakpoint after the part before it (or, as
    ``Tool(cache=...)``, after that tool definition). ``ttl`` is None (the
    provider's default), "5m" or "1h". Not part of any fingerprint."""

    __slots__ = ("ttl",)
    __match_args__ = ("ttl",)
    _fp_kind: ClassVar[str] = "cache"
    ttl: str | None

    def __init__(self, ttl: str | None = None) -> None:
        if ttl is not None and ttl not in CACHE_TTLS:
            raise ValidationError(
                f"CacheBreakpoint.ttl: expected None or one of {', '.join(CACHE_TTLS)}, got {ttl!r}",
                path="CacheBreakpoint.ttl",
            )
        self._init(ttl=ttl)


ContentPart: TypeAlias = str | Image | Document | Native | CacheBreakpoint

# The content part types, exactly: every adapter dispatches with a ``match``
# over ``ContentPart`` ending in ``assert_never`` (so mypy names each adapter
# that does not handle a type added to the union), after ``unknown_part``, which
# names a type that is not one of these, for the adapter to refuse it by name: a subclass of a part type
# may carry what the base's wire form would drop, so it is not taken for it.
PART_TYPES: Final[tuple[type, ...]] = (str, Image, Document, Native, CacheBreakpoint)


def unknown_part(part: object, provider: str) -> str | None:
    """None when the exact type of ``part`` is one of ``PART_TYPES`` (a
    ``str`` subclass counts as text: its characters are what is sent);
    otherwise why ``provider``'s adapter refuses it, naming the type."""
    if type(part) in PART_TYPES or isinstance(part, str):
        return None
    return f"a {type(part).__name__} content part is of a kind {provider} is not taught to send"


Content: TypeAlias = str | tuple[ContentPart, ...]

# Which part kinds each role's content may hold.
SYSTEM_PARTS: Final[tuple[type, ...]] = (str, CacheBreakpoint)
USER_PARTS: Final[tuple[type, ...]] = (str, Image, Document, Native, CacheBreakpoint)
TOOL_PARTS: Final[tuple[type, ...]] = (str, Image, Document, Native, CacheBreakpoint)


def check_content(value: object, path: str, allowed: tuple[type, ...]) -> Content:
    """``value`` as message content: a non-blank ``str``, or a sequence of parts
    of the ``allowed`` kinds with at least one part that is not a breakpoint,
    every text part non-blank, and every breakpoint right after another part."""
    if isinstance(value, str):
        return check_str(value, path, blank_ok=False)
    parts = check_sequence(value, path)
    check_parts(len(parts), path)
    checked: list[ContentPart] = []
    for i, part in enumerate(parts):
        where = f"{path}[{i}]"
        if isinstance(part, str):
            checked.append(check_str(part, where, blank_ok=False))
            continue
        if not isinstance(part, allowed):
            names = ", ".join("str" if k is str else k.__name__ for k in allowed)
            raise ValidationError(f"{where}: expected one of {names}, got {type(part).__name__}", path=where)
        if isinstance(part, CacheBreakpoint) and (not checked or isinstance(checked[-1], CacheBreakpoint)):
            raise ValidationError(f"{where}: a cache breakpoint must follow a content part", path=where)
        checked.append(part)  # type: ignore[arg-type]  # one of ``allowed``, all content part kinds
    if not any(not isinstance(p, CacheBreakpoint) for p in checked):
        raise ValidationError(f"{path}: needs at least one content part", path=path)
    return tuple(checked)


def fingerprinted(content: Content) -> Content:
    """What of ``content`` is fingerprinted: breakpoints dropped, and a single
    text part as that string (so it fingerprints like plain ``str`` content)."""
    if isinstance(content, str):
        return content
    parts = tuple(p for p in content if not isinstance(p, CacheBreakpoint))
    if len(parts) == 1 and isinstance(parts[0], str):
        return parts[0]
    return parts


def breakpoints(content: Content) -> tuple[tuple[int, str | None], ...]:
    """The breakpoints of ``content`` as (index of the part before, ttl) pairs."""
    if isinstance(content, str):
        return ()
    return tuple((i - 1, p.ttl) for i, p in enumerate(content) if isinstance(p, CacheBreakpoint))


def text_of(content: Content) -> str:
    """The text parts of ``content`` joined with no separator."""
    if isinstance(content, str):
        return content
    return "".join(p for p in content if isinstance(p, str))


def as_parts(content: Content) -> tuple[ContentPart, ...]:
    return (content,) if isinstance(content, str) else content

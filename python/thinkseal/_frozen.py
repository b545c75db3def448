"""Shared plumbing for thinkseal's immutable value types."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, NoReturn, Self

from ._errors import ValidationError


class Frozen:
    """Base of the immutable types: attributes are set once, in the constructor."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__qualname__} is immutable; use its with_* methods")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__qualname__} is immutable")

    def _init(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)


class Value(Frozen):
    """Base of the value types (thinking blocks, ``Origin``, ``Binding``, ``Tool``,
    ``ToolCall``): everything but validation is derived from one declaration.

    A subclass declares ``__match_args__``: its constructor's parameters, in
    order, each stored as the attribute of that name. From it come

    - ``__eq__`` and ``__hash__`` over ``_key()``. A value equals only values of
      the class that declared the fields (a subclass that declares none compares
      as that class does).
    - ``__reduce__`` (pickling, ``copy``) and ``__replace__`` (``copy.replace``),
      both through the constructor, so every copy is validated again.
    - ``__repr__``: ``Kind(name=value, ...)``, leaving out the fields named in
      ``_repr_omit_none`` while they are None.

    ``_args()`` are the constructor arguments (by default the attributes) and
    ``_key()`` what equality compares (by default ``_args()``); a type that
    stores JSON overrides both, to pass plain dicts and to compare canonical bytes.
    """

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]]
    _value_class: ClassVar[type[Value]]
    _repr_omit_none: ClassVar[frozenset[str]] = frozenset()
    _fields: ClassVar[Callable[[Any], tuple[Any, ...]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__match_args__" in cls.__dict__:
            cls._value_class = cls
            # One C-level getter for the fields (equality runs on hot paths:
            # every replay decision compares a binding's origin).
            names = cls.__match_args__
            get = attrgetter(*names)
            cls._fields = staticmethod(get if len(names) > 1 else lambda value: (get(value),))

    def _args(self) -> tuple[Any, ...]:
        return type(self)._fields(self)

    def _key(self) -> tuple[Any, ...]:
        return self._args()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Value) or other._value_class is not self._value_class:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self._value_class.__name__, self._key()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._args())

    def __replace__(self, **changes: Any) -> Self:
        fields = dict(zip(self.__match_args__, self._args(), strict=True))
        fields.update(changes)
        return type(self)(**fields)

    def __repr__(self) -> str:
        omit = self._repr_omit_none
        args = ", ".join(
            f"{name}={value!r}"
            for name, value in zip(self.__match_args__, self._args(), strict=True)
            if value is not None or name not in omit
        )
        return f"{type(self).__qualname__}({args})"


# The longest string check_str takes (``Limits.max_string``; set by ``thinkseal.set_limits``).
STRING_LIMIT: list[int] = [64 * 2**20]


def check_str(value: object, path: str, *, blank_ok: bool = True) -> str:
    """``value`` as an exact ``str`` of valid Unicode, or ``ValidationError`` naming ``path``."""
    if not isinstance(value, str):
        raise ValidationError(f"{path}: expected str, got {type(value).__name__}", path=path)
    if len(value) > STRING_LIMIT[0]:
        raise ValidationError(
            f"{path}: {len(value)} characters, over the limit of {STRING_LIMIT[0]} (Limits.max_string)", path=path
        )
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(
                f"{path}: string is not valid Unicode (it contains a lone surrogate)", path=path
            ) from None
    if not blank_ok and not value.strip():
        raise ValidationError(f"{path}: must not be blank", path=path)
    return str.__str__(value)


def check_optional_str(value: object, path: str) -> str | None:
    return None if value is None else check_str(value, path)


def check_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(f"{path}: expected bool, got {type(value).__name__}", path=path)
    return value


def check_sequence(value: object, path: str) -> tuple[Any, ...]:
    """A list or tuple as a tuple; a string or mapping is refused (a common slip)."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise ValidationError(f"{path}: expected a sequence, got {type(value).__name__}", path=path)
    return tuple(value)

"""Parameter dataclasses: every scheduler's (and generator's) parameters, checked on creation.

A scheduler declares its parameters as a frozen dataclass deriving from :class:`Params`; each
field's annotation is its type.  Creating one checks every value against its annotation
(``int``, ``float``, ``bool``, ``str``, ``Literal[...]``, ``X | None``, ``tuple[float, ...]``;
``Any`` is not checked), so an ill-typed value is a :class:`ParamsError` naming the field,
and :meth:`Params.from_dict` names an unknown key and lists the known ones.  ``int`` is
accepted where ``float`` is declared (and converted); ``bool`` is not an ``int`` here.
"""

from __future__ import annotations

import dataclasses
import numbers
import types
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = ["NoParams", "Params", "ParamsError"]

P = TypeVar("P", bound="Params")


class ParamsError(TypeError):
    """A parameter that is unknown, missing or of the wrong type; the message names it."""


def _describe(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " or ".join(repr(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in get_args(tp))
    if tp is type(None):
        return "None"
    if origin is tuple:
        return f"a sequence of {_describe(get_args(tp)[0])}"
    return getattr(tp, "__name__", str(tp))


def _coerce(tp: Any, value: Any) -> tuple[bool, Any]:
    """``(ok, value)``: whether ``value`` fits annotation ``tp``, and its normalized form."""
    if tp is Any:
        return True, value
    origin = get_origin(tp)
    if origin is Literal:
        return any(value == a and isinstance(value, bool) == isinstance(a, bool)
                   for a in get_args(tp)), value
    if origin in (Union, types.UnionType):
        for arg in get_args(tp):
            ok, v = _coerce(arg, value)
            if ok:
                return True, v
        return False, value
    if tp is type(None):
        return value is None, value
    if origin is tuple:
        if isinstance(value, (str, bytes, Mapping)):
            return False, value
        try:
            items = list(value)
        except TypeError:
            return False, value
        elem = get_args(tp)[0]
        out = []
        for x in items:
            ok, v = _coerce(elem, x)
            if not ok:
                return False, value
            out.append(v)
        return True, tuple(out)
    if tp is bool:
        return isinstance(value, bool), value
    if tp is int:  # numpy integers are Integral; bool is not accepted as a number
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        return ok, int(value) if ok else value
    if tp is float:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if tp is str:
        return isinstance(value, str), value
    if isinstance(tp, type):
        return isinstance(value, tp), value
    return True, value


@dataclasses.dataclass(frozen=True)
class Params:
    """Base of the parameter dataclasses (frozen; fields checked on creation)."""

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            ok, v = _coerce(hints.get(f.name, Any), value)
            if not ok:
                raise ParamsError(f"{type(self).__name__}.{f.name}: expected "
                                  f"{_describe(hints[f.name])}, got {value!r}")
            if v is not value:
                object.__setattr__(self, f.name, v)
        self.check()

    def check(self) -> None:
        """Checks across fields, or of ranges (raise :class:`ValueError` naming the field)."""

    @classmethod
    def from_dict(cls: type[P], params: Mapping[str, Any] | None = None, *,
                  where: str = "") -> P:
        """An instance from a mapping; an unknown key is a :class:`ParamsError` naming it
        (prefixed by ``where``, e.g. ``schedulers[1].params``) and listing the known ones."""
        params = dict(params or {})
        names = [f.name for f in dataclasses.fields(cls)]
        prefix = f"{where}." if where else ""
        for key in params:
            if key not in names:
                known = ", ".join(names) or "(none)"
                raise ParamsError(f"{prefix}{key}: unknown parameter of {cls.__name__}; "
                                  f"known: {known}")
        try:
            return cls(**params)
        except ParamsError as exc:
            if where:
                msg = str(exc).split(": ", 1)
                field = msg[0].split(".", 1)[-1]
                raise ParamsError(f"{prefix}{field}: {msg[1] if len(msg) > 1 else ''}"
                                  ) from None
            raise

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (tuples stay tuples)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def replace(self: P, **changes: Any) -> P:
        return dataclasses.replace(self, **changes)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))


@dataclasses.dataclass(frozen=True)
class NoParams(Params):
    """For a scheduler without parameters."""


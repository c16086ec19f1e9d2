"""Parameter dataclasses: every scheduler's (and generator's) parameters, checked on creation.

A scheduler declares its parameters as a frozen dataclass deriving from :class:`Params`; each
field's annotation is its type.  Creating one checks every value against its annotation
with :func:`check_value` (``int``, ``float``, ``bool``, ``str``, ``Literal[...]``, unions,
tuples and lists, paths, nested dataclasses given as tables; ``Any`` is not checked), so an
ill-typed value is a :class:`ParamsError` naming the field, and :meth:`Params.from_dict`
names an unknown key and lists the known ones.  ``int`` is accepted where ``float`` is
declared (and converted), lists become tuples; ``bool`` is not an ``int`` here.  The
workload generators' parameters (:mod:`coflowopt.workloads.registry`) use the same checker.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar, Union

import numpy as np

__all__ = ["NoParams", "Params", "ParamsError", "TypeMismatch", "check_value", "describe",
           "field_hints"]

P = TypeVar("P", bound="Params")


class ParamsError(TypeError):
    """A parameter that is unknown, missing or of the wrong type; the message names it.
    ``field``: its path inside the parameters, ``problem``: the message without the place."""

    def __init__(self, message: str, *, field: str = "", problem: str = ""):
        super().__init__(message)
        self.field, self.problem = field, problem


class TypeMismatch(Exception):
    """A value that does not fit its annotation, at ``where``.  ``matched``: the value had the
    right outer shape (a list, a table) and failed inside, so a union reports this error
    rather than its own."""

    def __init__(self, where: str, problem: str, matched: bool = False):
        super().__init__(problem)
        self.where, self.problem, self.matched = where, problem, matched


def _inner(exc: TypeMismatch) -> TypeMismatch:
    exc.matched = True
    return exc


def field_hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of a dataclass's fields."""
    hints = getattr(cls, "__param_hints__", None)
    if hints is None:
        hints = typing.get_type_hints(cls)
    return hints


def describe(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return "anything"
    if tp is type(None) or tp is None:
        return "None"
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a) for a in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {describe(args[0])}"
        return "a list [" + ", ".join(describe(a) for a in args) + "]"
    if origin in (list, Sequence, typing.Sequence):
        return f"a list of {describe(args[0]) if args else 'values'}"
    if origin is os.PathLike or tp is os.PathLike:
        return "a file path"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return f"a table of {tp.__name__} fields"
    return getattr(tp, "__name__", str(tp))


def _depth(where: str) -> int:
    return where.count(".") + where.count("[")


def _as_sequence(value: Any) -> Any:
    """A 1-d numpy array as a list (its items as Python scalars); anything else as is."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return value.tolist()
    return value


def check_value(value: Any, tp: Any, where: str) -> Any:
    """``value`` checked against the annotation ``tp`` (lists become tuples, ints floats,
    tables dataclasses), for parameters given as plain data (TOML, JSON, keywords); raises
    :class:`TypeMismatch` naming the place (``where``, e.g. ``mix.shares[1]``)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    bad = TypeMismatch(where, f"expected {describe(tp)}, got {value!r}")
    if tp is Any:
        return value
    if tp is type(None) or tp is None:
        if value is None:
            return None
        raise bad
    if origin in (Union, types.UnionType):
        errors = []
        for arm in args:
            try:
                return check_value(value, arm, where)
            except TypeMismatch as exc:
                errors.append(exc)
        inside = [e for e in errors if e.matched]
        raise max(inside, key=lambda e: _depth(e.where)) if inside else bad
    if origin is Literal:
        if any(type(value) is type(a) and value == a for a in args):
            return value
        raise bad
    if tp is bool:
        if isinstance(value, bool | np.bool_):
            return bool(value)
        raise bad
    if tp is int:
        if isinstance(value, int | np.integer) and not isinstance(value, bool):
            return value
        raise bad
    if tp is float:
        if isinstance(value, int | float | np.integer | np.floating) \
                and not isinstance(value, bool):
            return float(value)
        raise bad
    if tp is str:
        if isinstance(value, str):
            return value
        raise bad
    if origin is tuple:
        value = _as_sequence(value)
        if not isinstance(value, list | tuple):
            raise bad
        if args and not (len(args) == 2 and args[1] is Ellipsis) and len(value) != len(args):
            raise bad
        items = [args[0]] * len(value) if len(args) == 2 and args[1] is Ellipsis \
            else list(args or [Any] * len(value))
        try:
            return tuple(check_value(v, a, f"{where}[{i}]")
                         for i, (v, a) in enumerate(zip(value, items, strict=True)))
        except TypeMismatch as exc:
            raise _inner(exc) from None
    if origin in (list, Sequence, typing.Sequence):
        value = _as_sequence(value)
        if not isinstance(value, list | tuple):
            raise bad
        item = args[0] if args else Any
        try:
            out = [check_value(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        except TypeMismatch as exc:
            raise _inner(exc) from None
        return out if origin is list else tuple(out)
    if origin is os.PathLike or tp is os.PathLike:
        if isinstance(value, str | os.PathLike):
            return value
        raise bad
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if isinstance(value, Mapping):
            return _dataclass_from(tp, value, where)
        raise bad
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise bad
    return value  # an annotation this checker does not know: passed on


def _dataclass_from(cls: type, data: Mapping[str, Any], where: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls)
    kw = {}
    for k, v in data.items():
        if k not in fields:
            raise TypeMismatch(f"{where}.{k}",
                               f"unknown field of {cls.__name__} (known: {', '.join(fields)})",
                               matched=True)
        try:
            kw[k] = check_value(v, hints.get(k, Any), f"{where}.{k}")
        except TypeMismatch as exc:
            raise _inner(exc) from None
    try:
        return cls(**kw)
    except (TypeError, ValueError) as exc:
        raise TypeMismatch(where, str(exc), matched=True) from None


@dataclasses.dataclass(frozen=True)
class Params:
    """Base of the parameter dataclasses (frozen; fields checked on creation)."""

    def __post_init__(self) -> None:
        hints = field_hints(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            try:
                v = check_value(value, hints.get(f.name, Any), f.name)
            except TypeMismatch as exc:
                raise ParamsError(f"{type(self).__name__}.{exc.where}: {exc.problem}",
                                  field=exc.where, problem=exc.problem) from None
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
                problem = f"unknown parameter of {cls.__name__}; known: {known}"
                raise ParamsError(f"{prefix}{key}: {problem}", field=key, problem=problem)
        try:
            return cls(**params)
        except ParamsError as exc:
            if not where:
                raise
            raise ParamsError(f"{prefix}{exc.field}: {exc.problem}", field=exc.field,
                              problem=exc.problem) from None

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


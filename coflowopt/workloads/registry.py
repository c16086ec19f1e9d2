"""One table of the workload generators: the names ``coflowopt gen``, bench suites and
notebooks use, what each builds, and its parameters, checked before anything is built.

=======================  ======================================================  =====
name                     function                                                time
=======================  ======================================================  =====
``synthetic``            :func:`~coflowopt.workloads.synthetic.synthetic_trace`  ms
``trace``                :func:`~coflowopt.workloads.trace.read_trace`           ms
``ggen_fan_in_fan_out``  :func:`~coflowopt.workloads.dags.ggen_fan_in_fan_out`   unit
``rooted_trees``         :func:`~coflowopt.workloads.dags.rooted_trees`          unit
``layered_dags``         :func:`~coflowopt.workloads.dags.layered_dags`          unit
``tpcds_like``           :func:`~coflowopt.workloads.dags.tpcds_like`            unit
``fb2010_jobs``          :func:`~coflowopt.workloads.dags.fb2010_jobs`           ms
=======================  ======================================================  =====

Older names still work as aliases and are not listed by :func:`generators`: ``ggen``,
``fan-in`` and ``fan-out`` (``rooted_trees`` with ``kind`` fixed), ``layered``, ``tpcds``,
``fb2010`` (``fb2010_jobs``, as ``coflowopt gen fb2010`` always meant), ``synthetic_trace``
and ``read_trace``.

Each generator's parameters are a frozen dataclass (:attr:`Generator.params`) made from the
function's keyword arguments: the same names, annotations and defaults (``seed`` is not a
parameter: :func:`build` passes it).  :meth:`Generator.parse` checks plain data (a TOML table,
a dict) against it: unknown names, missing required ones and values of the wrong type are a
:class:`ParamError` naming the generator and the field (``params.n_coflows: expected int, got
'ten'``); an ``int`` is accepted for a ``float``, a list for a tuple, a table for a dataclass
(e.g. ``mix = {shares = [...]}`` for :class:`~coflowopt.workloads.dags.CoflowClassMix`).

Path parameters (``trace``'s ``path``, ``fb2010_jobs``'s ``trace``) take a file path,
relative to ``base_dir``, or ``"fb2010"`` for the trace :func:`~coflowopt.workloads.find_fb2010`
locates.

``build(name, params, seed)`` equals the direct call with the same arguments::

    build("synthetic", {"n_coflows": 30}, seed=1) == synthetic_trace(30, seed=1)
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.params import TypeMismatch, check_value, field_hints
from coflowopt.workloads import dags, synthetic, trace

__all__ = [
    "FB2010",
    "Generator",
    "ParamError",
    "aliases",
    "build",
    "canonical_name",
    "generator",
    "generators",
    "register",
]

#: The path value that means "the located FB2010 trace".
FB2010 = "fb2010"


class ParamError(ValueError):
    """A workload parameter that does not fit its generator.

    ``field`` is the path inside the parameters (``"n_coflows"``, ``"mix.shares[1]"``; ``""``
    for the table itself) and ``problem`` the message without the place.
    """

    def __init__(self, generator: str, field: str, problem: str):
        self.generator, self.field, self.problem = generator, field, problem
        where = f"params.{field}" if field else "params"
        super().__init__(f"workload generator {generator!r}: {where}: {problem}")


@dataclass(frozen=True)
class Generator:
    """One entry of the table.

    ``name``: the canonical name; ``func``: the function, called as ``func(**params)`` (plus
    ``seed=`` when ``seeded``); ``summary``: one line; ``time_unit``: the unit of the
    instances it builds with its defaults (``"ms"``: MB and ms of trace work; ``"unit"``:
    normalized, capacity 1); ``params``: the frozen dataclass of its parameters;
    ``path_params``: parameters that are file paths, with their default (``"fb2010"``: the
    located trace); ``aliases``: other names that resolve to it, each with the parameters it
    fixes (``fan-in`` fixes ``kind = "fan-in"``); ``fixed``: the parameters fixed by the name
    this entry was looked up by and ``alias`` that name (both empty for the canonical name);
    ``convert``: an optional hook
    applied to the plain parameters before they are checked; ``extra_params``: the function
    takes ``**kwargs``, so names outside ``params`` are passed on unchecked.
    """

    name: str
    func: Callable[..., Instance]
    summary: str
    time_unit: str
    params: type
    seeded: bool = True
    path_params: Mapping[str, str | None] = field(default_factory=dict)
    aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    alias: str = ""
    convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    extra_params: bool = False

    @property
    def fields(self) -> tuple[dataclasses.Field[Any], ...]:
        """The parameter fields (name, type, default)."""
        return dataclasses.fields(self.params)

    def defaults(self) -> dict[str, Any]:
        """Parameter name -> default (required parameters left out)."""
        return {f.name: f.default for f in self.fields if f.default is not dataclasses.MISSING}

    def required(self) -> tuple[str, ...]:
        """Names of the parameters without a default."""
        return tuple(f.name for f in self.fields if f.default is dataclasses.MISSING)

    def parse(self, params: Mapping[str, Any] | Any = None, *,
              base_dir: str | os.PathLike[str] | None = None) -> Any:
        """``params`` (plain data, or already an instance of :attr:`params`) checked and
        converted into an instance of :attr:`params`.

        With ``base_dir``, path parameters are also resolved against it (``"fb2010"``: the
        located trace) and must name existing files.  Raises :class:`ParamError`.
        """
        if isinstance(params, self.params):
            obj, extra = params, {}
        else:
            data = dict(params or {})
            if self.convert is not None:
                data = self.convert(data)
            for k, v in self.fixed.items():
                if k in data and data[k] != v:
                    raise ParamError(self.name, k, f"{data[k]!r} conflicts with the generator "
                                     f"name {self.alias!r}, which fixes {k} = {v!r}; name "
                                     f"{self.name!r} to choose {k}")
                data[k] = v
            obj, extra = self._from_data(data)
        if base_dir is not None and self.path_params:
            resolved = _resolve_paths(self, obj, Path(base_dir))
            obj = dataclasses.replace(obj, **resolved)
        if extra:
            object.__setattr__(obj, "_extra", extra)
        return obj

    def _from_data(self, data: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if "seed" in data and self.seeded:
            raise ParamError(self.name, "seed", "the seed is not a parameter: it comes from "
                             "the suite's seeds (or build's seed argument)")
        known = {f.name: f for f in self.fields}
        extra = {k: v for k, v in data.items() if k not in known}
        if extra and not self.extra_params:
            k = sorted(extra)[0]
            raise ParamError(self.name, k,
                             f"unknown parameter (known: {', '.join(known) or '(none)'})")
        hints = field_hints(self.params)
        kw: dict[str, Any] = {}
        for name, f in known.items():
            if name not in data:
                if f.default is dataclasses.MISSING:
                    raise ParamError(self.name, name, "missing (required parameter)")
                continue
            try:
                kw[name] = check_value(data[name], hints[name], name)
            except TypeMismatch as exc:
                raise ParamError(self.name, exc.where, exc.problem) from None
        return self.params(**kw), extra

    def kwargs(self, params: Any) -> dict[str, Any]:
        """The keyword arguments of the call for a parsed parameter object (seed excluded)."""
        kw = {f.name: getattr(params, f.name) for f in self.fields}
        kw.update(getattr(params, "_extra", {}))
        return kw

    def build(self, params: Mapping[str, Any] | Any = None,
              seed: int | np.random.Generator | None = None, *,
              base_dir: str | os.PathLike[str] = ".") -> Instance:
        """The instance for ``params`` and ``seed`` (ignored when not :attr:`seeded`)."""
        kw = self.kwargs(self.parse(params, base_dir=base_dir))
        if self.seeded:
            kw["seed"] = seed
        return self.func(**kw)


# -- path parameters ---------------------------------------------------------------------------


def _resolve_paths(gen: Generator, params: Any, base_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, default in gen.path_params.items():
        value = getattr(params, key)
        if value is None:
            value = default
        if value is None:
            raise ParamError(gen.name, key, f"missing (required parameter): a file path or "
                             f"{FB2010!r}")
        if isinstance(value, Instance):
            continue
        if not isinstance(value, str | os.PathLike):
            raise ParamError(gen.name, key, f"expected a file path, got {value!r}")
        if str(value) == FB2010:
            found = trace.find_fb2010()
            if found is None:
                raise ParamError(
                    gen.name, key, "the FB2010 trace was not found: put FB2010-1Hr-150-0.txt "
                    "(GitHub coflow/coflow-benchmark) under shared/data/fb2010/ or set "
                    "COFLOWOPT_FB2010")
            out[key] = str(found)
            continue
        p = Path(os.path.expanduser(str(value)))
        if not p.is_absolute():
            p = base_dir / p
        if not p.is_file():
            raise ParamError(gen.name, key, f"file not found: {p}")
        out[key] = str(p)
    return out


# -- the table ---------------------------------------------------------------------------------


_TABLE: dict[str, Generator] = {}
_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}


def _params_class(name: str, func: Callable[..., Any]) -> tuple[type, bool, bool]:
    """A frozen dataclass of ``func``'s keyword arguments (``seed`` left out); whether ``func``
    takes ``seed``; whether it takes ``**kwargs``."""
    sig = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # unresolvable annotations: check nothing
        hints = {}
    specs: list[tuple[str, Any, Any]] = []
    resolved: dict[str, Any] = {}
    seeded = extra = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            extra = True
            continue
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if p.name == "seed":
            seeded = True
            continue
        tp = hints.get(p.name, Any)
        resolved[p.name] = tp
        if p.default is p.empty:
            specs.append((p.name, tp, dataclasses.field()))
        else:
            specs.append((p.name, tp, dataclasses.field(default=p.default)))
    cls_name = "".join(part.capitalize() for part in name.replace("-", "_").split("_")) + "Params"
    cls = dataclasses.make_dataclass(cls_name, specs, frozen=True, kw_only=True)
    cls.__module__ = __name__
    cls.__doc__ = f"Parameters of the workload generator {name!r} ({func.__module__}." \
                  f"{func.__qualname__}, without seed)."
    cls.__param_hints__ = resolved  # type: ignore[attr-defined]
    return cls, seeded, extra


def register(name: str, func: Callable[..., Instance], *, summary: str = "",
             time_unit: str = "unit", params: type | None = None,
             path_params: Mapping[str, str | None] | None = None,
             aliases: Mapping[str, Mapping[str, Any]] | Sequence[str] = (),
             convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Generator:
    """Add a generator to the table and return its entry.

    ``params``: a frozen dataclass of its parameters; by default one is made from ``func``'s
    keyword arguments (names, annotations, defaults; ``seed`` left out).  ``aliases``: other
    names, or a mapping alias -> parameters that alias fixes.  ``summary`` defaults to the
    first line of ``func``'s docstring.  Raises ``ValueError`` for a name already taken.
    """
    derived, seeded, extra = _params_class(name, func)
    if params is not None:
        if not (isinstance(params, type) and dataclasses.is_dataclass(params)):
            raise TypeError(f"register({name!r}): params must be a dataclass type")
        derived = params
    alias_map = ({a: {} for a in aliases} if not isinstance(aliases, Mapping)
                 else {a: dict(v) for a, v in aliases.items()})
    for n in (name, *alias_map):
        if n in _TABLE or n in _ALIASES:
            raise ValueError(f"workload generator {n!r} registered twice")
    doc = (func.__doc__ or "").strip().splitlines()
    gen = Generator(name=name, func=func, summary=summary or (doc[0] if doc else ""),
                    time_unit=time_unit, params=derived, seeded=seeded,
                    path_params=dict(path_params or {}), aliases=alias_map, convert=convert,
                    extra_params=extra)
    _TABLE[name] = gen
    for a, fixed in alias_map.items():
        _ALIASES[a] = (name, fixed)
    return gen


def canonical_name(name: str) -> str:
    """The canonical name of ``name`` (itself, or what an alias stands for); ``KeyError``
    lists the known names."""
    return generator(name).name


def generator(name: str) -> Generator:
    """The entry for ``name`` (a canonical name or an alias: then with the parameters the
    alias fixes in :attr:`Generator.fixed`).  ``KeyError`` lists the known names."""
    if name in _TABLE:
        return _TABLE[name]
    if name in _ALIASES:
        canon, fixed = _ALIASES[name]
        gen = _TABLE[canon]
        return dataclasses.replace(gen, fixed=dict(fixed), alias=name) if fixed else gen
    raise KeyError(f"unknown workload generator {name!r} (known: {', '.join(sorted(_TABLE))}; "
                   f"older names: {', '.join(sorted(_ALIASES))})")


def generators() -> dict[str, Generator]:
    """The canonical entries by name, sorted (aliases are not listed; see :func:`aliases`)."""
    return dict(sorted(_TABLE.items()))


def aliases() -> dict[str, str]:
    """Alias -> canonical name."""
    return {a: canon for a, (canon, _) in sorted(_ALIASES.items())}


def build(name: str, params: Mapping[str, Any] | Any = None,
          seed: int | np.random.Generator | None = None, *,
          base_dir: str | os.PathLike[str] = ".") -> Instance:
    """The instance that generator ``name`` builds from ``params`` (checked: see
    :meth:`Generator.parse`) and ``seed``; the same as calling the function directly."""
    return generator(name).build(params, seed, base_dir=base_dir)


def _register_builtins() -> None:
    register("synthetic", synthetic.synthetic_trace, time_unit="ms",
             summary="FB-like synthetic trace fitted to FB2010 (MB and ms; `load` compresses "
                     "the arrivals to a target port utilisation)",
             aliases=("synthetic_trace",))
    register("trace", trace.read_trace, time_unit="ms", path_params={"path": None},
             summary='a coflow-benchmark trace file: `path`, or "fb2010" for the located FB2010 '
                     "trace (not seeded)",
             aliases=("read_trace",))
    register("ggen_fan_in_fan_out", dags.ggen_fan_in_fan_out,
             summary="job DAGs by GGen's fan-in/fan-out method (4 to 64 coflows per job)",
             aliases=("ggen",))
    register("rooted_trees", dags.rooted_trees,
             summary='rooted trees of coflows, kind "fan-in" or "fan-out"',
             aliases={"fan-in": {"kind": "fan-in"}, "fan-out": {"kind": "fan-out"}})
    register("layered_dags", dags.layered_dags,
             summary="layered random DAGs (edges between consecutive layers)",
             aliases=("layered",))
    register("tpcds_like", dags.tpcds_like,
             summary="TPC-DS-like query plans: scans, a join tree and an aggregation chain",
             aliases=("tpcds",))
    register("fb2010_jobs", dags.fb2010_jobs, time_unit="ms", path_params={"trace": FB2010},
             summary="the FB2010 coflows cut into multi-stage jobs (needs the trace)",
             aliases=("fb2010",))


_register_builtins()

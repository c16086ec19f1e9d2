"""The workload generators a suite can name, and the per-process instance cache.

A generator is called as ``func(seed=seed, **params)`` and returns an
:class:`~coflowopt.Instance`.  Built in:

==========================  ===========================================================
``synthetic``               :func:`~coflowopt.workloads.synthetic.synthetic_trace` (FB-like;
                            ``n_coflows`` [150], ``ports`` [150], ``capacity``); MB and ms
``trace``                   :func:`~coflowopt.workloads.read_trace` of ``path`` (a file, relative
                            to the suite's folder, or ``"fb2010"`` for
                            :func:`~coflowopt.workloads.find_fb2010`); not seeded
``ggen_fan_in_fan_out``,    the job-DAG generators of :mod:`coflowopt.workloads.dags` with their
``rooted_trees``,           keyword arguments (``n_jobs`` required; ``mix`` as a table
``layered_dags``,           ``{classes = [[min_w, max_w, min_len, max_len], ...], shares = [...]}``)
``tpcds_like``
``fb2010_jobs``             :func:`~coflowopt.workloads.dags.fb2010_jobs`; ``trace`` as ``path``
                            above (default ``"fb2010"``)
==========================  ===========================================================

Add one with :func:`register_workload`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from coflowopt.model import Instance

__all__ = [
    "WorkloadGenerator",
    "build_workload",
    "get_generator",
    "register_workload",
    "workload_generators",
]

FB2010 = "fb2010"


@dataclass(frozen=True)
class WorkloadGenerator:
    """A registered workload generator.

    ``seeded``: whether the instance depends on the seed (a trace file does not).
    ``path_params``: parameters that are file paths, with their default (``"fb2010"`` means the
    located FB2010 trace); relative paths resolve against the suite file's folder.
    ``convert``: turns TOML values into the objects the function takes (e.g. ``mix``).
    """

    name: str
    func: Callable[..., Instance]
    seeded: bool = True
    path_params: dict[str, str | None] = field(default_factory=dict)
    convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    summary: str = ""


_GENERATORS: dict[str, WorkloadGenerator] = {}


def register_workload(name: str, *, seeded: bool = True,
                      path_params: Mapping[str, str | None] | None = None,
                      convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                      summary: str = "") -> Callable[[Callable[..., Instance]],
                                                     Callable[..., Instance]]:
    """Decorator: make ``func(seed=..., **params) -> Instance`` available to suites as
    ``generator = name``."""

    def deco(func: Callable[..., Instance]) -> Callable[..., Instance]:
        if name in _GENERATORS:
            raise ValueError(f"workload generator {name!r} registered twice")
        doc = (func.__doc__ or "").strip().splitlines()
        _GENERATORS[name] = WorkloadGenerator(name, func, seeded, dict(path_params or {}),
                                              convert, summary or (doc[0] if doc else ""))
        return func

    return deco


def workload_generators() -> dict[str, WorkloadGenerator]:
    """All registered workload generators by name (a copy)."""
    return dict(sorted(_GENERATORS.items()))


def get_generator(name: str) -> WorkloadGenerator:
    """The generator registered as ``name``; ``KeyError`` lists the known names."""
    try:
        return _GENERATORS[name]
    except KeyError:
        raise KeyError(f"unknown workload generator {name!r} "
                       f"(known: {', '.join(sorted(_GENERATORS))})") from None


def resolve_path_params(gen: WorkloadGenerator, params: Mapping[str, Any],
                        base_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """``params`` with every path parameter made absolute and checked to exist.

    Raises ``FileNotFoundError(param_name, message)``.
    """
    from coflowopt.workloads import find_fb2010

    out = dict(params)
    for key, default in gen.path_params.items():
        value = out.get(key, default)
        if value is None:
            raise FileNotFoundError(key, "missing (required field): a file path or \"fb2010\"")
        if not isinstance(value, str | os.PathLike):
            raise FileNotFoundError(key, f"expected a file path, got {value!r}")
        if str(value) == FB2010:
            found = find_fb2010()
            if found is None:
                raise FileNotFoundError(
                    key, "the FB2010 trace was not found: put FB2010-1Hr-150-0.txt (GitHub "
                    "coflow/coflow-benchmark) under shared/data/fb2010/ or set COFLOWOPT_FB2010")
            out[key] = str(found)
            continue
        p = Path(os.path.expanduser(str(value)))
        if not p.is_absolute():
            p = Path(base_dir) / p
        if not p.is_file():
            raise FileNotFoundError(key, f"file not found: {p}")
        out[key] = str(p)
    return out


def build_workload(generator: str, params: Mapping[str, Any], seed: int,
                   base_dir: str | os.PathLike[str] = ".") -> Instance:
    """The instance of one workload spec and seed (cached per process: schedulers that share a
    workload and seed in one worker build it once)."""
    return _build_cached(generator, json.dumps(dict(params), sort_keys=True), int(seed),
                         str(base_dir))


@lru_cache(maxsize=4)
def _build_cached(generator: str, params_json: str, seed: int, base_dir: str) -> Instance:
    gen = get_generator(generator)
    params = resolve_path_params(gen, json.loads(params_json), base_dir)
    if gen.convert is not None:
        params = gen.convert(params)
    return gen.func(seed=seed, **params)


# -- built-in generators -----------------------------------------------------------------------


def _synthetic(*, seed: int, n_coflows: int = 150, ports: int = 150,
               capacity: float | None = None) -> Instance:
    """FB-like synthetic trace (the embedded workload)."""
    from coflowopt.workloads import GBPS_MB_PER_MS
    from coflowopt.workloads.synthetic import synthetic_trace

    return synthetic_trace(n_coflows, seed=seed, ports=ports,
                           capacity=GBPS_MB_PER_MS if capacity is None else capacity)


def _trace(*, seed: int, path: str, capacity: float | None = None,
           round_to_mappers: bool = False) -> Instance:
    """A coflow-benchmark trace file (seed unused)."""
    from coflowopt.workloads import GBPS_MB_PER_MS, read_trace

    del seed
    return read_trace(path, capacity=GBPS_MB_PER_MS if capacity is None else capacity,
                      round_to_mappers=round_to_mappers)


def _convert_mix(params: dict[str, Any]) -> dict[str, Any]:
    from coflowopt.workloads.dags import CoflowClassMix

    mix = params.get("mix")
    if isinstance(mix, Mapping):
        kw: dict[str, Any] = dict(mix)
        if "classes" in kw:
            kw["classes"] = tuple(tuple(c) for c in kw["classes"])
        if "shares" in kw:
            kw["shares"] = tuple(kw["shares"])
        params = {**params, "mix": CoflowClassMix(**kw)}
    return params


def _register_builtins() -> None:
    from coflowopt.workloads import dags

    register_workload("synthetic")(_synthetic)
    register_workload("trace", seeded=False, path_params={"path": None})(_trace)
    for name in ("ggen_fan_in_fan_out", "rooted_trees", "layered_dags", "tpcds_like"):
        register_workload(name, convert=_convert_mix)(getattr(dags, name))
    register_workload("fb2010_jobs", path_params={"trace": FB2010})(dags.fb2010_jobs)


_register_builtins()

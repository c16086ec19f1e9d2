"""Benchmark suites as data: parse and check a TOML suite before anything runs.

A suite is workloads x schedulers x seeds, the metrics to report, and what each result is
compared with: the instance's lower bound (:func:`coflowopt.bounds.lower_bounds`, for every
metric that has one), the scheduler's proven factor (from the registry), published figures
(``[[references]]``) and, optionally, the exact optimum (another scheduler of the suite).

The file format (all field paths in error messages are 0-based, e.g. ``schedulers[2].name``)::

    name = "default"                      # required; results go to results/<name>/
    description = "..."                   # optional
    seeds = [0, 1, 2]                     # or an int n for 0..n-1; default [0]
    metrics = ["avg_cct", "weighted_completion"]   # keys of coflowopt.metrics.summary
    timeout = 120                         # seconds per task; optional (no limit)
    isolate = false                       # true: every task in a fresh subprocess (hard limit)
    imports = ["my_pkg.my_schedulers"]    # modules that register extra schedulers/workloads
    optimum = "label"                     # optional: the scheduler whose results are optimal
    per_coflow = true                     # keep per-coflow CCTs (for the CDF plots)

    [[workloads]]
    name = "fb-like-150"                  # required, unique
    generator = "synthetic"               # required: a name in coflowopt.workloads.generators()
    params = { n_coflows = 150, ports = 150 }   # its parameters (checked here, by type)
    seeds = [0]                           # optional: overrides the suite's seeds

    [[schedulers]]
    name = "sequential"                   # required: a name in coflowopt.schedulers.registry()
    label = "sequential"                  # optional, unique; defaults to name
    params = { }                          # the algorithm's keyword arguments
    timeout = 30                          # optional: overrides the suite's timeout
    workloads = ["fb-like-150"]           # optional: only these workloads (default: all)
    algorithm_seeds = 10                  # optional [1]: runs per instance, each with its own
                                          # algorithm seed (the same instance; rows differ in
                                          # algorithm_seed), e.g. for the spread of a randomized
                                          # algorithm (RSD) on one instance
    semantics = "fluid"                   # or "coflowsim": CoflowSim's semantics
                                          # (coflowopt.sim.coflowsim; name is then one of
                                          # CoflowSim's schedulers, params CoflowSimParams fields)

    [[references]]                        # published figures, shown next to the measurements
    scheduler = "varys"                   # registry name or label (need not be in this suite)
    workload = "fb2010"                   # a workload name of this suite
    metric = "avg_cct"
    value = 28528
    source = "..."
"""

from __future__ import annotations

import importlib
import json
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "Reference",
    "SchedulerSpec",
    "Suite",
    "SuiteError",
    "WorkloadSpec",
    "bound_names",
    "import_plugins",
    "known_metrics",
    "load_suite",
    "parse_suite",
    "suite_from_dict",
]

class SuiteError(ValueError):
    """A suite that cannot run; the message names the file and the field path."""


@dataclass(frozen=True)
class WorkloadSpec:
    """One workload: a generator of :mod:`coflowopt.workloads.registry` (its name as written,
    canonical or an alias) and its parameters.  ``seeds`` overrides the suite's seeds for this
    workload."""

    name: str
    generator: str
    params: dict[str, Any] = field(default_factory=dict)
    seeds: tuple[int, ...] | None = None


@dataclass(frozen=True)
class SchedulerSpec:
    """One algorithm run: registry ``name``, a unique ``label`` (default: the name), its
    keyword arguments, an optional per-task ``timeout`` in seconds, and the simulator
    ``semantics`` (``"fluid"``, or ``"coflowsim"`` for :func:`coflowopt.sim.coflowsim.coflowsim`,
    where ``name`` is a CoflowSim scheduler and ``params`` are
    :class:`~coflowopt.sim.coflowsim.CoflowSimParams` fields).  ``workloads``: the names of
    the workloads it runs on (``None``: all), e.g. a job-DAG algorithm on the DAG workloads
    only.  ``algorithm_seeds``: how many runs per (workload, seed), run ``k`` with the
    algorithm seed :func:`coflowopt.bench.tasks.algorithm_seed` ``(seed, k)`` (run 0 is the
    usual one)."""

    name: str
    label: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    semantics: str = "fluid"
    workloads: tuple[str, ...] | None = None
    algorithm_seeds: int = 1

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name)
        if self.workloads is not None:
            object.__setattr__(self, "workloads", tuple(self.workloads))

    def runs_on(self, workload: str) -> bool:
        """Whether this scheduler runs on the workload named ``workload``."""
        return self.workloads is None or workload in self.workloads


@dataclass(frozen=True)
class Reference:
    """A published figure: ``metric`` of ``scheduler`` (registry name or label) on
    ``workload`` is ``value``, from ``source``."""

    scheduler: str
    workload: str
    metric: str
    value: float
    source: str = ""


@dataclass(frozen=True)
class Suite:
    """A benchmark suite (see the module docstring for the file format).

    ``source`` is the file it came from (for messages) and ``base_dir`` the folder that
    relative paths in workload parameters are resolved against.
    """

    name: str
    workloads: tuple[WorkloadSpec, ...]
    schedulers: tuple[SchedulerSpec, ...]
    seeds: tuple[int, ...] = (0,)
    metrics: tuple[str, ...] = ("avg_cct",)
    description: str = ""
    timeout: float | None = None
    isolate: bool = False
    imports: tuple[str, ...] = ()
    references: tuple[Reference, ...] = ()
    optimum: str | None = None
    per_coflow: bool = True
    source: str = "<suite>"
    base_dir: str = "."

    def check(self) -> None:
        """Everything that can be checked before running: scheduler names and parameters
        against the registry, generator names and parameters, trace files, metrics, labels.
        Raises :class:`SuiteError` naming the file and field."""
        _check_suite(self)

    def to_dict(self) -> dict[str, Any]:
        """The suite as plain data in the file's shape (:func:`suite_from_dict` reads it)."""
        d: dict[str, Any] = {
            "name": self.name, "description": self.description, "seeds": list(self.seeds),
            "metrics": list(self.metrics), "isolate": self.isolate,
            "imports": list(self.imports), "per_coflow": self.per_coflow,
        }
        if self.timeout is not None:
            d["timeout"] = self.timeout
        if self.optimum is not None:
            d["optimum"] = self.optimum
        d["workloads"] = []
        for w in self.workloads:
            wd: dict[str, Any] = {"name": w.name, "generator": w.generator,
                                  "params": dict(w.params)}
            if w.seeds is not None:
                wd["seeds"] = list(w.seeds)
            d["workloads"].append(wd)
        d["schedulers"] = []
        for s in self.schedulers:
            sd: dict[str, Any] = {"name": s.name, "label": s.label, "params": dict(s.params)}
            if s.timeout is not None:
                sd["timeout"] = s.timeout
            if s.semantics != "fluid":
                sd["semantics"] = s.semantics
            if s.workloads is not None:
                sd["workloads"] = list(s.workloads)
            if s.algorithm_seeds != 1:
                sd["algorithm_seeds"] = s.algorithm_seeds
            d["schedulers"].append(sd)
        d["references"] = [
            {"scheduler": r.scheduler, "workload": r.workload, "metric": r.metric,
             "value": r.value, "source": r.source} for r in self.references
        ]
        return d

    def seeds_of(self, workload: WorkloadSpec) -> tuple[int, ...]:
        """The seeds a workload runs with."""
        return self.seeds if workload.seeds is None else workload.seeds

    @property
    def n_tasks(self) -> int:
        return sum(len(self.seeds_of(w)) * s.algorithm_seeds for w in self.workloads
                   for s in self.schedulers if s.runs_on(w.name))


# -- parsing -----------------------------------------------------------------------------------


class _Table:
    """Typed access to one TOML table; every error names ``source: path.field``."""

    def __init__(self, data: Any, path: str, source: str):
        self.source, self.path = source, path
        if not isinstance(data, Mapping):
            raise self.error("", f"expected a table, got {type(data).__name__}")
        self.data = data
        self.used: set[str] = set()

    def where(self, key: str) -> str:
        if not key:
            return self.path or "(top level)"
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str, msg: str) -> SuiteError:
        return SuiteError(f"{self.source}: {self.where(key)}: {msg}")

    def get(self, key: str, required: bool = False) -> Any:
        self.used.add(key)
        if key not in self.data:
            if required:
                raise self.error(key, "missing (required field)")
            return None
        return self.data[key]

    def text(self, key: str, required: bool = False, default: str | None = None) -> Any:
        v = self.get(key, required)
        if v is None:
            return default
        if not isinstance(v, str) or (required and not v.strip()):
            raise self.error(key, f"expected a non-empty string, got {v!r}")
        return v

    def flag(self, key: str, default: bool) -> bool:
        v = self.get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise self.error(key, f"expected true or false, got {v!r}")
        return v

    def seconds(self, key: str) -> float | None:
        v = self.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0 \
                or not math.isfinite(v):
            raise self.error(key, f"expected a number of seconds > 0, got {v!r}")
        return float(v)

    def number(self, key: str, required: bool = False) -> float | None:
        v = self.get(key, required)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise self.error(key, f"expected a finite number, got {v!r}")
        return float(v)

    def seeds(self, key: str) -> tuple[int, ...] | None:
        v = self.get(key)
        if v is None:
            return None
        if isinstance(v, int) and not isinstance(v, bool):
            if v < 1:
                raise self.error(key, f"expected a count >= 1 or a list of seeds, got {v}")
            return tuple(range(v))
        if not isinstance(v, list) or not v:
            raise self.error(key, f"expected a non-empty list of integers, got {v!r}")
        for i, s in enumerate(v):
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise self.error(f"{key}[{i}]", f"expected an integer >= 0, got {s!r}")
        if len(set(v)) != len(v):
            raise self.error(key, f"duplicate seeds in {v}")
        return tuple(v)

    def count(self, key: str, default: int) -> int:
        v = self.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise self.error(key, f"expected an integer >= 1, got {v!r}")
        return v

    def strings(self, key: str) -> tuple[str, ...] | None:
        v = self.get(key)
        if v is None:
            return None
        if not isinstance(v, list):
            raise self.error(key, f"expected a list of strings, got {v!r}")
        for i, s in enumerate(v):
            if not isinstance(s, str) or not s:
                raise self.error(f"{key}[{i}]", f"expected a non-empty string, got {s!r}")
        return tuple(v)

    def params(self, key: str = "params") -> dict[str, Any]:
        v = self.get(key)
        if v is None:
            return {}
        if not isinstance(v, Mapping):
            raise self.error(key, f"expected a table of keyword arguments, got {v!r}")
        return dict(v)

    def tables(self, key: str, required: bool = False) -> list[_Table]:
        v = self.get(key, required)
        if v is None:
            return []
        if not isinstance(v, list) or (required and not v):
            raise self.error(key, "expected one or more [[" + key + "]] tables")
        return [_Table(item, f"{self.where(key)}[{i}]", self.source) for i, item in enumerate(v)]

    def done(self) -> None:
        extra = sorted(set(self.data) - self.used)
        if extra:
            known = ", ".join(sorted(self.used))
            raise self.error(extra[0], f"unknown field (known here: {known})")


def suite_from_dict(data: Mapping[str, Any], *, source: str = "<suite>",
                    base_dir: str | os.PathLike[str] = ".", check: bool = True) -> Suite:
    """Build a :class:`Suite` from plain data shaped like the TOML file.  With ``check``
    (default) also run :meth:`Suite.check`."""
    top = _Table(data, "", source)
    name = top.text("name", required=True)
    description = top.text("description", default="")
    seeds = top.seeds("seeds") or (0,)
    metrics = top.strings("metrics") or ("avg_cct",)
    timeout = top.seconds("timeout")
    isolate = top.flag("isolate", False)
    imports = top.strings("imports") or ()
    optimum = top.text("optimum")
    per_coflow = top.flag("per_coflow", True)
    workloads = []
    for t in top.tables("workloads", required=True):
        workloads.append(WorkloadSpec(
            name=t.text("name", required=True), generator=t.text("generator", required=True),
            params=t.params(), seeds=t.seeds("seeds")))
        t.done()
    schedulers = []
    for t in top.tables("schedulers", required=True):
        nm = t.text("name", required=True)
        schedulers.append(SchedulerSpec(name=nm, label=t.text("label", default=nm),
                                        params=t.params(), timeout=t.seconds("timeout"),
                                        semantics=t.text("semantics", default="fluid"),
                                        workloads=t.strings("workloads"),
                                        algorithm_seeds=t.count("algorithm_seeds", 1)))
        t.done()
    references = []
    for t in top.tables("references"):
        references.append(Reference(
            scheduler=t.text("scheduler", required=True),
            workload=t.text("workload", required=True),
            metric=t.text("metric", required=True), value=t.number("value", required=True),
            source=t.text("source", default="")))
        t.done()
    top.done()
    suite = Suite(name=name, workloads=tuple(workloads), schedulers=tuple(schedulers),
                  seeds=seeds, metrics=metrics, description=description, timeout=timeout,
                  isolate=isolate, imports=imports, references=tuple(references),
                  optimum=optimum, per_coflow=per_coflow, source=source,
                  base_dir=str(Path(base_dir).resolve()))
    if check:
        suite.check()
    return suite


def parse_suite(text: str, *, source: str = "<string>",
                base_dir: str | os.PathLike[str] = ".", check: bool = True) -> Suite:
    """Parse suite TOML text (see the module docstring)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{source}: not valid TOML: {exc}") from None
    return suite_from_dict(data, source=source, base_dir=base_dir, check=check)


def load_suite(path: str | os.PathLike[str], *, check: bool = True) -> Suite:
    """Read and check a suite file; relative paths inside resolve against its folder.  A
    ``suite.json`` (as saved in a results folder) is read too."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise SuiteError(f"{p}: suite file not found") from None
    if p.suffix == ".json":
        data = json.loads(text)
        base = data.pop("base_dir", str(p.parent))
        return suite_from_dict(data, source=str(p), base_dir=base, check=check)
    return parse_suite(text, source=str(p), base_dir=p.parent, check=check)


# -- checks ------------------------------------------------------------------------------------


def import_plugins(modules: Sequence[str] = ()) -> None:
    """Import the plugin ``modules`` (they add schedulers with
    :func:`coflowopt.schedulers.register`); the built-in schedulers need no import."""
    for name in modules:
        importlib.import_module(name)


@lru_cache(maxsize=1)
def _probe() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from coflowopt.bounds import lower_bounds
    from coflowopt.metrics import summary
    from coflowopt.model import Instance
    from coflowopt.schedulers import get
    from coflowopt.validate import validate

    inst = Instance.from_arrays(2, [0, 1], [1, 0], [1.0, 2.0], [0, 1], coflow_job=[0, 0],
                                n_jobs=1, starts_after=[[0, 1]], job_deadline=[10.0])
    keys = tuple(summary(validate(inst, get("sequential")(inst))))
    return keys, tuple(lower_bounds(inst))


def known_metrics() -> tuple[str, ...]:
    """Every metric name :func:`coflowopt.metrics.summary` can report."""
    return _probe()[0]


def bound_names() -> tuple[str, ...]:
    """Metrics that have a lower bound of the same name in :func:`coflowopt.bounds.lower_bounds`."""
    return _probe()[1]


def _err(suite: Suite, where: str, msg: str) -> SuiteError:
    return SuiteError(f"{suite.source}: {where}: {msg}")


def _check_suite(suite: Suite) -> None:
    from coflowopt.params import ParamsError
    from coflowopt.schedulers import get
    from coflowopt.schedulers.registry import SEMANTICS
    from coflowopt.workloads.registry import ParamError, generator

    if not suite.workloads:
        raise _err(suite, "workloads", "no workloads")
    if not suite.schedulers:
        raise _err(suite, "schedulers", "no schedulers")
    for i, mod in enumerate(suite.imports):
        try:
            import_plugins([mod])
        except ImportError as exc:
            raise _err(suite, f"imports[{i}]", f"cannot import {mod!r}: {exc}") from None
    known = known_metrics()
    for i, m in enumerate(suite.metrics):
        if m not in known:
            raise _err(suite, f"metrics[{i}]", f"unknown metric {m!r} (known: {', '.join(known)})")
    seen: dict[str, int] = {}
    for i, w in enumerate(suite.workloads):
        if w.name in seen:
            raise _err(suite, f"workloads[{i}].name",
                       f"duplicate workload name {w.name!r} (also workloads[{seen[w.name]}])")
        seen[w.name] = i
        try:
            gen = generator(w.generator)
        except KeyError as exc:
            raise _err(suite, f"workloads[{i}].generator", exc.args[0]) from None
        try:  # names, types, required ones, files: all before anything runs
            gen.parse(w.params, base_dir=suite.base_dir)
        except ParamError as exc:
            where = f"workloads[{i}].params" + (f".{exc.field}" if exc.field else "")
            raise _err(suite, where, f"{exc.problem} (generator {gen.name!r})") from None
    labels: dict[str, int] = {}
    for i, s in enumerate(suite.schedulers):
        if s.semantics not in SEMANTICS:
            raise _err(suite, f"schedulers[{i}].semantics",
                       f"unknown semantics {s.semantics!r} (known: {', '.join(SEMANTICS)})")
        try:
            info = get(s.name, s.semantics)
        except KeyError as exc:
            raise _err(suite, f"schedulers[{i}].name", exc.args[0]) from None
        if s.label in labels:
            raise _err(suite, f"schedulers[{i}].label",
                       f"duplicate label {s.label!r} (also schedulers[{labels[s.label]}]); "
                       "give each run of the same scheduler its own label")
        labels[s.label] = i
        for name in s.workloads or ():
            if name not in seen:
                raise _err(suite, f"schedulers[{i}].workloads",
                           f"{name!r} is not a workload of this suite (workloads: "
                           f"{', '.join(seen)})")
        for k in s.params:
            if k in ("instance", "seed"):
                raise _err(suite, f"schedulers[{i}].params.{k}", "set by the harness; remove it")
        try:
            info.make_params(s.params, where=f"schedulers[{i}].params")
        except ParamsError as exc:  # names the field already
            raise SuiteError(f"{suite.source}: {exc}") from None
        except ValueError as exc:  # a check across fields
            raise _err(suite, f"schedulers[{i}].params", str(exc)) from None
        try:
            json.dumps(s.params, sort_keys=True)
        except TypeError as exc:
            raise _err(suite, f"schedulers[{i}].params", f"not plain data: {exc}") from None
    if suite.optimum is not None and suite.optimum not in labels:
        raise _err(suite, "optimum", f"{suite.optimum!r} is not a scheduler label of this suite "
                   f"(labels: {', '.join(labels)})")
    for i, r in enumerate(suite.references):
        if r.workload not in seen:
            raise _err(suite, f"references[{i}].workload",
                       f"{r.workload!r} is not a workload of this suite")
        if r.metric not in known:
            raise _err(suite, f"references[{i}].metric", f"unknown metric {r.metric!r}")

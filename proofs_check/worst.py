"""Worst-case finder: a seeded local search for small instances that raise ALG / OPT.

``coflowopt verify --worst NAME`` runs it.  The algorithm is any registry entry; its factor is
the registry's (:attr:`~coflowopt.schedulers.SchedulerInfo.factor`, *proven*: [R] in the paper,
[C] by our reconstruction) and, optionally, a *claimed but unproven* one passed by the user
(``--claim 3``: Chen, arXiv 2311.11296, claims 3 and ``2 + 1/LB`` for ordering flows by an LP;
Rohwedder and Schnaars, ICALP 2025, state 140/41 and 4.36).  The search never leaves the class
the factor is stated for: the entry's ``factor_assumes`` (``"release 0"``: every release 0;
``"single-stage"``: no precedence edges) and ``factor_params`` fix what is generated and how
the algorithm is run, and :meth:`~coflowopt.schedulers.SchedulerInfo.factor_for` is asked on
every instance.

The search [C] (ours): start from a random instance of the class, perturb one thing at a time
(a flow's volume, ingress or egress port or coflow; a flow, coflow or port added or removed; a
weight doubled, halved or moved by one; a release moved; a precedence edge toggled for DAG
algorithms), keep the change when ALG / OPT does not go down (ties kept: plateaus are walked),
restart after ``patience`` evaluations without a strict gain, alternately from a fresh random
instance and from the best one kicked by ``kick`` random moves.  One ``numpy`` generator from
``seed`` makes every choice, and ``evaluations`` bounds the search, so the same seed and budget
give the same search on any machine; ``seconds`` is a wall cap on top (a run it stops says how
many evaluations it made, to rerun them exactly).

Which bound each ratio uses (:data:`ESTIMATES`):

- ``exact``: against the fluid optimum by completion-order enumeration
  (:func:`coflowopt.lp.fluid_optimum`; equal releases, at most 5 coflows): the true ratio;
- ``lower estimate``: against ``OPT_slot``, the slotted MILP's schedule (validated, so its
  value is at least OPT): the true ratio is at least this, so a value above a factor still
  breaks it;
- ``upper estimate``: against the best LP lower bound (:func:`coflowopt.lp.best_lower_bound`):
  the true ratio is at most this; never a violation (``reference="lb"`` searches on it and
  then re-evaluates the worst instance against the optimum).

A ratio above a proven factor (exact or lower estimate) is a defect: :attr:`WorstResult.verdict`
is ``"violation"`` and the command exits 1; above a claimed factor it is a ``"finding"``.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from coflowopt.model import CoflowSpec, Instance, JobSpec, build_instance
from coflowopt.params import Params
from coflowopt.validate import ValidSchedule, validate

from .reference import EXACT, LB, SLOT, fluid_eligible, objective_of

__all__ = [
    "ESTIMATES",
    "Factor",
    "Job",
    "Judged",
    "Shape",
    "WorstParams",
    "WorstResult",
    "check_written",
    "chen_lb",
    "evaluate",
    "find_worst",
    "format_worst",
    "instance_class",
    "judge",
    "parse_factor",
    "perturb",
    "random_shape",
    "shape_of",
    "summary_dict",
    "write_worst",
]

#: what a ratio is, by the bound it divides by (see the module docstring)
ESTIMATES = ("exact", "lower estimate", "upper estimate")
_SOUND = ("exact", "lower estimate")  # a ratio that can break a factor
RTOL = 1e-6
METRICS = ("weighted_completion", "weighted_jct", "makespan")

Flow = tuple[int, int, int]  # (ingress, egress, volume)


# -- factors --------------------------------------------------------------------------------

_OPS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg,
    ast.UAdd: operator.pos}
#: names a factor expression may use (their values: :func:`_names`)
NAMES = ("m", "n", "mu", "LB")


def _check_expr(node: ast.AST) -> None:
    if isinstance(node, ast.Expression):
        _check_expr(node.body)
    elif isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        _check_expr(node.left)
        _check_expr(node.right)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        _check_expr(node.operand)
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        pass
    elif not (isinstance(node, ast.Name) and node.id in NAMES):
        raise ValueError(f"not an arithmetic expression in {', '.join(NAMES)}")


def _eval(node: ast.AST, names: Mapping[str, float]) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body, names)
    if isinstance(node, ast.BinOp):
        return _OPS[type(node.op)](_eval(node.left, names), _eval(node.right, names))
    if isinstance(node, ast.UnaryOp):
        return _OPS[type(node.op)](_eval(node.operand, names))
    if isinstance(node, ast.Name):
        return float(names[node.id])
    return float(node.value)  # type: ignore[attr-defined]


def _compile(text: str) -> ast.Expression:
    # implicit products as the papers write them: "2m+1" is 2*m + 1, "2(m+1)" is 2*(m+1)
    src = re.sub(r"(\d)\s*([A-Za-z(])", r"\1*\2", text.strip().replace("^", "**"))
    tree = ast.parse(src, mode="eval")
    _check_expr(tree)
    return tree


def chen_lb(instance: Instance) -> float:
    """``LB = min_k (r_k + rho_k)``: the smallest release plus isolation time over the coflows,
    the ``LB`` of Chen's claimed ``2 + 1/LB`` (arXiv 2311.11296, abstract [R]; that it is this
    minimum is our reading [C], which reproduces the paper's examples' values)."""
    if instance.n_coflows == 0:
        return 0.0
    return float(np.min(instance.release + instance.isolation_time))


def _names(instance: Instance) -> dict[str, float]:
    mu = np.bincount(instance.coflow_job, minlength=instance.n_jobs).max(initial=1)
    return {"m": float(instance.ports), "n": float(instance.n_coflows), "mu": float(mu),
            "LB": chen_lb(instance)}


@dataclass(frozen=True)
class Factor:
    """A factor to compare the worst ratio with.

    ``text``: as stated; ``status``: ``"proven"`` (the registry's, tagged ``source`` ``"R"`` or
    ``"C"``) or ``"claimed"`` (passed by the user, unproven); ``expr``: the arithmetic
    expression it parsed to (``None``: no constant, e.g. ``O(mu g(m))``); ``with_releases``:
    the expression for instances with a release > 0 when the text gives two (``"4 / 5"``).
    """

    text: str
    status: str
    source: str = "R"
    expr: str | None = None
    with_releases: str | None = None

    @property
    def label(self) -> str:
        tag = f"[{self.source}] proven" if self.status == "proven" else "claimed, unproven"
        return f"{self.text} ({tag})"

    def value(self, instance: Instance) -> float | None:
        """The factor on ``instance`` (``m``, ``n``, ``mu`` and ``LB`` from it), ``None`` when
        there is no constant."""
        expr = self.expr
        if self.with_releases is not None and bool(np.any(instance.release > 0)):
            expr = self.with_releases
        if expr is None:
            return None
        return _eval(_compile(expr), _names(instance))


def _leading_expression(text: str) -> str | None:
    """The longest run of leading words that is an arithmetic expression ("1 (exact, one
    coflow)" -> "1", "4 x LP" -> "4")."""
    words = text.split()
    for k in range(len(words), 0, -1):
        cand = " ".join(words[:k])
        try:
            _compile(cand)
        except (SyntaxError, ValueError):
            continue
        return cand
    return None


# prose such as "4 x LP without releases, 5 x LP with them": the expression before each phrase
_WITHOUT = re.compile(r"(\S+)(?:\s+(?:x|×)\s+\w+)?\s+without\s+release")
_WITH = re.compile(r"(\S+)(?:\s+(?:x|×)\s+\w+)?\s+with\s+(?:release|them)")


def _expression_before(rx: re.Pattern[str], text: str) -> str | None:
    m = rx.search(text)
    if m is None:
        return None
    return _leading_expression(m.group(1).strip(",;:"))


def parse_factor(text: str | None, status: str = "proven", source: str = "R") -> Factor | None:
    """A :class:`Factor` from a registry or command-line text; ``None`` for no factor.

    ``"O(...)"`` has no constant (``expr=None``); ``"A / B"`` (a slash between spaces, as the
    ordering-LP factors "4 / 5" are written) and prose ``"... A x LP without releases, B x LP
    with them ..."`` are ``A`` with every release 0 and ``B`` with releases; otherwise the
    first arithmetic expression in ``m`` (ports), ``n`` (coflows), ``mu`` (coflows per job)
    and ``LB`` (:func:`chen_lb`) is the factor (``"1 (exact, one coflow)"`` is 1).
    ``ValueError`` when no expression can be read.
    """
    if text is None or text.strip() in ("", "-"):
        return None
    t = text.strip()
    if re.match(r"^\(?\s*O\s*\(", t):
        return Factor(t, status, source)
    parts = t.split(" / ")
    if len(parts) == 2:
        a, b = (_leading_expression(p) for p in parts)
        if a is not None and b is not None and a == parts[0].strip():
            return Factor(t, status, source, a, b)
    pair = [_expression_before(rx, t) for rx in (_WITHOUT, _WITH)]
    if pair[0] is not None and pair[1] is not None:
        return Factor(t, status, source, pair[0], pair[1])
    words = t.split()
    expr = next((e for k in range(len(words))
                 if (e := _leading_expression(" ".join(words[k:]))) is not None), None)
    if expr is None:
        raise ValueError(f"factor {text!r}: no arithmetic expression to read (names allowed: "
                         f"{', '.join(NAMES)})")
    return Factor(t, status, source, expr)


# -- the search space -------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One job of a search point: its coflows (each a sorted tuple of ``(src, dst, volume)``),
    integer weight and release, and Starts-After edges ``(a, b)``, ``a < b``, between its
    coflows.  Single-stage points have one coflow per job (weight and release are the
    coflow's)."""

    coflows: tuple[tuple[Flow, ...], ...]
    weight: int = 1
    release: int = 0
    edges: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Shape:
    """A search point: hashable, so evaluations are cached by it."""

    ports: int
    jobs: tuple[Job, ...]

    @property
    def n_coflows(self) -> int:
        return sum(len(j.coflows) for j in self.jobs)

    @property
    def n_flows(self) -> int:
        return sum(len(c) for j in self.jobs for c in j.coflows)

    def instance(self, dag: bool) -> Instance:
        """The instance (unit capacities, theory units); ``dag``: jobs carry the weights,
        releases and edges (else one coflow per job, single-stage)."""
        if not dag:
            return build_instance(self.ports, coflows=[
                CoflowSpec(list(j.coflows[0]), id=f"c{k}", release=float(j.release),
                           weight=float(j.weight)) for k, j in enumerate(self.jobs)])
        return build_instance(self.ports, jobs=[
            JobSpec([CoflowSpec(list(c), id=f"j{k}c{i}") for i, c in enumerate(j.coflows)],
                    list(j.edges), id=f"j{k}", release=float(j.release), weight=float(j.weight))
            for k, j in enumerate(self.jobs)])


@dataclass(frozen=True)
class WorstParams(Params):
    """Bounds of the search space and the search's knobs.

    ``ports``, ``coflows``: inclusive ranges; ``flows_per_coflow``, ``flows``: at most this
    many; volumes in ``1..vmax``, weights in ``1..wmax``, releases in ``0..rmax`` (when the
    class allows releases); ``horizon``: at most this sum of volumes plus the largest release
    (keeps the slotted MILP small); ``coflows_per_job``: DAG points; ``patience``: evaluations
    without a strict gain before a restart; ``kick``: random moves applied to the best point on
    every other restart; ``milp_seconds``: the slotted MILP's time limit (a MILP that reaches it
    still gives a schedule, so a valid ``OPT_slot``, but the run is then no longer
    machine-independent: counted in :attr:`WorstResult.time_limited`).
    """

    ports: tuple[int, int] = (2, 4)
    coflows: tuple[int, int] = (2, 5)
    flows_per_coflow: int = 4
    flows: int = 12
    vmax: int = 6
    wmax: int = 64
    rmax: int = 4
    horizon: int = 40
    coflows_per_job: int = 3
    patience: int = 40
    kick: int = 3
    milp_seconds: float = 20.0

    def check(self) -> None:
        lo, hi = self.ports
        if not 1 <= lo <= hi:
            raise ValueError(f"WorstParams.ports: need 1 <= low <= high, got {self.ports}")
        lo, hi = self.coflows
        if not 1 <= lo <= hi:
            raise ValueError(f"WorstParams.coflows: need 1 <= low <= high, got {self.coflows}")
        for name in ("flows_per_coflow", "flows", "vmax", "wmax", "horizon", "coflows_per_job",
                     "patience"):
            if getattr(self, name) < 1:
                raise ValueError(f"WorstParams.{name}: must be >= 1, got {getattr(self, name)}")
        if self.rmax < 0 or self.kick < 0 or not self.milp_seconds > 0:
            raise ValueError("WorstParams: rmax and kick must be >= 0, milp_seconds > 0")


@dataclass(frozen=True)
class InstanceClass:
    """What the search may generate: releases (``False``: every release 0) and job DAGs."""

    releases: bool
    dag: bool

    def describe(self) -> str:
        return (("job DAGs" if self.dag else "single-stage coflows") + ", "
                + ("integer releases" if self.releases else "every release 0")
                + ", integer volumes, unit capacities")


def instance_class(info: Any, assumes: tuple[str, ...] = (), *, own: bool = False
                   ) -> InstanceClass:
    """The class the factor of registry entry ``info`` is stated for (its ``factor_assumes``;
    ``own=True``: a factor or claim given by the user, whose class ``assumes`` alone states),
    narrowed by ``assumes`` (the same vocabulary): releases unless ``"release 0"``; job DAGs
    for an entry designed for them (``job_objective``) unless ``"single-stage"``."""
    every = tuple(assumes) + (() if own else tuple(info.factor_assumes))
    dag = bool(info.job_objective and info.multistage) and "single-stage" not in every
    return InstanceClass(releases="release 0" not in every, dag=dag)


def _fits(s: Shape, P: WorstParams, cls: InstanceClass) -> bool:
    if not P.ports[0] <= s.ports <= P.ports[1]:
        return False
    if not P.coflows[0] <= s.n_coflows <= P.coflows[1] or s.n_flows > P.flows:
        return False
    vol = 0
    for j in s.jobs:
        if not (1 <= j.weight <= P.wmax and 0 <= j.release <= (P.rmax if cls.releases else 0)):
            return False
        if not j.coflows or len(j.coflows) > (P.coflows_per_job if cls.dag else 1):
            return False
        for c in j.coflows:
            if not 1 <= len(c) <= P.flows_per_coflow:
                return False
            if any(not (0 <= a < s.ports and 0 <= b < s.ports and 1 <= v <= P.vmax)
                   for a, b, v in c):
                return False
            vol += sum(v for _, _, v in c)
    return vol + max(j.release for j in s.jobs) <= P.horizon


def _flow(rng: np.random.Generator, m: int, vmax: int) -> Flow:
    return (int(rng.integers(m)), int(rng.integers(m)), int(rng.integers(1, vmax + 1)))


def _coflow(rng: np.random.Generator, m: int, P: WorstParams) -> tuple[Flow, ...]:
    k = int(rng.integers(1, min(3, P.flows_per_coflow) + 1))
    return tuple(sorted(_flow(rng, m, min(P.vmax, 3)) for _ in range(k)))


def shape_of(instance: Instance, dag: bool) -> Shape:
    """The search point of ``instance`` (to start a search from a known instance): integer
    volumes, weights and releases and unit capacities required (``ValueError`` naming the
    field otherwise).  ``dag=False``: one coflow per job, its own weight and release."""
    inst = instance
    if not inst.fabric.is_uniform or not np.all(inst.fabric.capacity_in == 1.0):
        raise ValueError("start instance: the finder uses unit capacities")
    cols = {"flows.volume": inst.flow_volume, "coflows.weight": inst.coflow_weight,
            "coflows.release": inst.coflow_release, "jobs.weight": inst.job_weight,
            "jobs.release": inst.job_release}
    for name, col in cols.items():
        if np.any(col != np.round(col)):
            raise ValueError(f"start instance: {name} must be integers for the finder")
    flows = [tuple(sorted((int(inst.flow_src[i]), int(inst.flow_dst[i]),
                           int(inst.flow_volume[i])) for i in inst.flows_of(c)))
             for c in range(inst.n_coflows)]
    if not dag:
        if inst.starts_after.shape[0]:
            raise ValueError("start instance: has precedence edges, the class is single-stage")
        return Shape(inst.ports, tuple(
            Job((flows[c],), int(inst.coflow_weight[c]), int(inst.release[c]))
            for c in range(inst.n_coflows)))
    jobs = []
    for j in range(inst.n_jobs):
        members = np.flatnonzero(inst.coflow_job == j)
        pos = {int(c): k for k, c in enumerate(members)}
        edges = tuple(sorted((pos[int(a)], pos[int(b)]) for a, b in inst.starts_after
                             if int(a) in pos))
        jobs.append(Job(tuple(flows[c] for c in members), int(inst.job_weight[j]),
                        int(inst.job_release[j]), edges))
    return Shape(inst.ports, tuple(jobs))


def _widened(P: WorstParams, s: Shape) -> WorstParams:
    """``P`` widened just enough to contain ``s`` (a start point outside the bounds)."""
    c = [len(f) for j in s.jobs for f in j.coflows]
    return P.replace(
        ports=(min(P.ports[0], s.ports), max(P.ports[1], s.ports)),
        coflows=(min(P.coflows[0], s.n_coflows), max(P.coflows[1], s.n_coflows)),
        flows_per_coflow=max(P.flows_per_coflow, *c), flows=max(P.flows, s.n_flows),
        vmax=max([P.vmax] + [v for j in s.jobs for f in j.coflows for _, _, v in f]),
        wmax=max(P.wmax, *(j.weight for j in s.jobs)),
        rmax=max(P.rmax, *(j.release for j in s.jobs)),
        horizon=max(P.horizon, sum(v for j in s.jobs for f in j.coflows for _, _, v in f)
                    + max(j.release for j in s.jobs)),
        coflows_per_job=max(P.coflows_per_job, *(len(j.coflows) for j in s.jobs)))


def random_shape(rng: np.random.Generator, P: WorstParams, cls: InstanceClass) -> Shape:
    """A fresh random point of the class (drawn until it fits the bounds)."""
    for _ in range(1000):
        m = int(rng.integers(P.ports[0], P.ports[1] + 1))
        n = int(rng.integers(P.coflows[0], P.coflows[1] + 1))
        cfs = [_coflow(rng, m, P) for _ in range(n)]
        if cls.dag:
            cut = sorted(set(int(x) for x in rng.integers(1, n + 1, size=int(rng.integers(n)))))
            groups = [cfs[a:b] for a, b in zip([0, *cut], [*cut, n], strict=True) if b > a]
        else:
            groups = [[c] for c in cfs]
        jobs = []
        for g in groups:
            edges = tuple((a, b) for a in range(len(g)) for b in range(a + 1, len(g))
                          if rng.random() < 0.5)
            jobs.append(Job(tuple(g), int(rng.integers(1, min(P.wmax, 4) + 1)),
                            int(rng.integers(0, P.rmax + 1)) if cls.releases else 0, edges))
        s = Shape(m, tuple(jobs))
        if _fits(s, P, cls):
            return s
    raise ValueError(f"WorstParams: no random instance fits the bounds {P}")


# -- moves: each changes one thing, or returns None where it does not apply ----------------


def _pick(rng: np.random.Generator, s: Shape) -> tuple[int, int]:
    """A uniform (job, coflow) position."""
    pos = [(j, c) for j, job in enumerate(s.jobs) for c in range(len(job.coflows))]
    return pos[int(rng.integers(len(pos)))]


def _with_job(s: Shape, j: int, job: Job) -> Shape:
    return Shape(s.ports, (*s.jobs[:j], job, *s.jobs[j + 1:]))


def _with_coflow(s: Shape, j: int, c: int, flows: list[Flow] | None) -> Shape:
    """``s`` with coflow ``(j, c)`` replaced by ``flows`` (``None``: removed, with its job when
    it was the job's only coflow; the job's edges renumbered)."""
    job = s.jobs[j]
    if flows is not None:
        cfs = list(job.coflows)
        cfs[c] = tuple(sorted(flows))
        return _with_job(s, j, replace(job, coflows=tuple(cfs)))
    if len(job.coflows) == 1:
        return Shape(s.ports, s.jobs[:j] + s.jobs[j + 1:])
    edges = tuple((a - (a > c), b - (b > c)) for a, b in job.edges if c not in (a, b))
    cfs = job.coflows[:c] + job.coflows[c + 1:]
    return _with_job(s, j, replace(job, coflows=cfs, edges=edges))


def _edit_flow(rng: np.random.Generator, s: Shape, change: Callable[[Flow], Flow]) -> Shape:
    """``s`` with one uniformly chosen flow replaced by ``change(flow)``."""
    j, c = _pick(rng, s)
    flows = list(s.jobs[j].coflows[c])
    i = int(rng.integers(len(flows)))
    flows[i] = change(flows[i])
    return _with_coflow(s, j, c, flows)


def _move_volume(rng: np.random.Generator, s: Shape, P: WorstParams,
                 cls: InstanceClass) -> Shape | None:
    def change(f: Flow) -> Flow:
        step = int(rng.integers(3))
        v = f[2] + 1 if step == 0 else f[2] - 1 if step == 1 else int(rng.integers(1, P.vmax + 1))
        return (f[0], f[1], v)

    return _edit_flow(rng, s, change)


def _move_port(rng: np.random.Generator, s: Shape, P: WorstParams,
               cls: InstanceClass) -> Shape | None:
    def change(f: Flow) -> Flow:
        p = int(rng.integers(s.ports))
        return (p, f[1], f[2]) if rng.random() < 0.5 else (f[0], p, f[2])

    return _edit_flow(rng, s, change)


def _move_add_flow(rng: np.random.Generator, s: Shape, P: WorstParams,
                   cls: InstanceClass) -> Shape | None:
    j, c = _pick(rng, s)
    return _with_coflow(s, j, c, [*s.jobs[j].coflows[c], _flow(rng, s.ports, P.vmax)])


def _move_drop_flow(rng: np.random.Generator, s: Shape, P: WorstParams,
                    cls: InstanceClass) -> Shape | None:
    j, c = _pick(rng, s)
    flows = list(s.jobs[j].coflows[c])
    if len(flows) < 2:
        return None
    del flows[int(rng.integers(len(flows)))]
    return _with_coflow(s, j, c, flows)


def _move_regroup_flow(rng: np.random.Generator, s: Shape, P: WorstParams,
                       cls: InstanceClass) -> Shape | None:
    """A flow moves to another coflow (membership)."""
    (j, c), (k, d) = _pick(rng, s), _pick(rng, s)
    if (j, c) == (k, d) or len(s.jobs[j].coflows[c]) < 2:
        return None
    flows = list(s.jobs[j].coflows[c])
    f = flows.pop(int(rng.integers(len(flows))))
    t = _with_coflow(s, j, c, flows)
    return _with_coflow(t, k, d, [*t.jobs[k].coflows[d], f])


def _move_add_coflow(rng: np.random.Generator, s: Shape, P: WorstParams,
                     cls: InstanceClass) -> Shape | None:
    new = _coflow(rng, s.ports, P)
    if cls.dag and rng.random() < 0.5:
        j = int(rng.integers(len(s.jobs)))
        job = s.jobs[j]
        n = len(job.coflows)
        edges = job.edges + tuple((a, n) for a in range(n) if rng.random() < 0.5)
        return _with_job(s, j, replace(job, coflows=(*job.coflows, new), edges=edges))
    w = int(rng.integers(1, min(P.wmax, 4) + 1))
    r = int(rng.integers(0, P.rmax + 1)) if cls.releases else 0
    return Shape(s.ports, (*s.jobs, Job((new,), w, r)))


def _move_drop_coflow(rng: np.random.Generator, s: Shape, P: WorstParams,
                      cls: InstanceClass) -> Shape | None:
    j, c = _pick(rng, s)
    return _with_coflow(s, j, c, None)


def _move_weight(rng: np.random.Generator, s: Shape, P: WorstParams,
                 cls: InstanceClass) -> Shape | None:
    j = int(rng.integers(len(s.jobs)))
    w = s.jobs[j].weight
    w = (w * 2, w // 2, w + 1, w - 1)[int(rng.integers(4))]
    return _with_job(s, j, replace(s.jobs[j], weight=w))


def _move_release(rng: np.random.Generator, s: Shape, P: WorstParams,
                  cls: InstanceClass) -> Shape | None:
    if not cls.releases:
        return None
    j = int(rng.integers(len(s.jobs)))
    r = s.jobs[j].release + (1 if rng.random() < 0.5 else -1)
    return _with_job(s, j, replace(s.jobs[j], release=r))


def _move_ports(rng: np.random.Generator, s: Shape, P: WorstParams,
                cls: InstanceClass) -> Shape | None:
    """One port more (unused until a later move uses it) or less (its flows moved to a
    random remaining port)."""
    if rng.random() < 0.5:
        return Shape(s.ports + 1, s.jobs)
    m = s.ports - 1
    if m < 1:
        return None

    def fix(p: int) -> int:
        return p if p < m else int(rng.integers(m))

    jobs = tuple(replace(j, coflows=tuple(tuple(sorted((fix(a), fix(b), v) for a, b, v in c))
                                          for c in j.coflows)) for j in s.jobs)
    return Shape(m, jobs)


def _move_edge(rng: np.random.Generator, s: Shape, P: WorstParams,
               cls: InstanceClass) -> Shape | None:
    if not cls.dag:
        return None
    j = int(rng.integers(len(s.jobs)))
    job = s.jobs[j]
    n = len(job.coflows)
    if n < 2:
        return None
    a = int(rng.integers(n - 1))
    b = int(rng.integers(a + 1, n))
    edges = set(job.edges) ^ {(a, b)}
    return _with_job(s, j, replace(job, edges=tuple(sorted(edges))))


MOVES: tuple[Callable[..., Shape | None], ...] = (
    _move_volume, _move_volume, _move_port, _move_port, _move_add_flow, _move_drop_flow,
    _move_regroup_flow, _move_add_coflow, _move_drop_coflow, _move_weight, _move_weight,
    _move_release, _move_ports, _move_edge)


def perturb(rng: np.random.Generator, s: Shape, P: WorstParams, cls: InstanceClass,
            tries: int = 50) -> Shape:
    """One random move that applies, changes ``s`` and stays in the bounds (``s`` itself when
    none is found in ``tries`` draws)."""
    for _ in range(tries):
        t = MOVES[int(rng.integers(len(MOVES)))](rng, s, P, cls)
        if t is not None and t != s and _fits(t, P, cls):
            return t
    return s


# -- evaluation -------------------------------------------------------------------------------


@dataclass
class Judged:
    """One evaluated instance.  ``ratio`` = ``alg / opt``; ``estimate``: one of
    :data:`ESTIMATES`, ``reference`` names the bound (``OPT (fluid, exact)``,
    ``OPT_slot (...)``, ``LP lower bound``); ``factor`` / ``claim``: their values on this
    instance; ``refused``: why it was not run (outside what the algorithm supports);
    ``defect``: an invalid schedule, an error, or a value below the optimum."""

    ratio: float | None = None
    estimate: str = ""
    reference: str = ""
    alg: float = math.nan
    opt: float = math.nan
    factor: float | None = None
    claim: float | None = None
    refused: str | None = None
    defect: str | None = None
    time_limited: bool = False
    alg_schedule: ValidSchedule | None = field(default=None, repr=False)
    opt_schedule: ValidSchedule | None = field(default=None, repr=False)

    @property
    def sound(self) -> bool:
        """The ratio can break a factor (exact, or a lower estimate of the true ratio)."""
        return self.ratio is not None and self.estimate in _SOUND

    def score(self) -> float:
        """What the search maximises: the ratio over the target (the claim, else the proven
        factor, else 1), so an instance-dependent factor (``2m+1``, ``2 + 1/LB``) is compared
        fairly; ``-inf`` for no ratio."""
        if self.ratio is None:
            return -math.inf
        target = self.claim if self.claim is not None else self.factor
        return self.ratio / target if target else self.ratio


def judge(j: Judged) -> str:
    """The verdict on one instance: ``"defect"`` (invalid schedule, error, value below the
    optimum), ``"violation"`` (a sound ratio above the proven factor), ``"finding"`` (a sound
    ratio above the claimed factor), ``"inconclusive"`` (only an upper estimate above a
    factor: never a violation), ``"within"`` otherwise; ``"reported"`` when there is no factor
    or claim to compare with, ``"no ratio"`` when there is no ratio."""
    if j.defect:
        return "defect"
    if j.ratio is None:
        return "no ratio"
    if j.factor is None and j.claim is None:
        return "reported"
    above_f = j.factor is not None and j.ratio > j.factor * (1 + RTOL)
    above_c = j.claim is not None and j.ratio > j.claim * (1 + RTOL)
    if j.sound:
        return "violation" if above_f else "finding" if above_c else "within"
    return "inconclusive" if (above_f or above_c) else "within"


def _reference(inst: Instance, metric: str, mode: str, P: WorstParams
               ) -> tuple[float, str, str, ValidSchedule | None, bool]:
    """``(value, reference name, estimate, valid OPT schedule, time-limited)``."""
    from coflowopt.lp import SolveParams, Status, best_lower_bound, fluid_optimum
    from coflowopt.lp.timeindexed import TimeIndexedParams, time_indexed_model

    if mode == "opt":
        if fluid_eligible(inst):
            sol = fluid_optimum(inst, metric)
            if sol.status is Status.OPTIMAL and sol.schedule is not None:
                v = validate(inst, sol.schedule)
                return objective_of(v, metric), EXACT, "exact", v, False
        model = time_indexed_model(inst, TimeIndexedParams(objective=metric))
        sol = model.solve(SolveParams(time_limit=P.milp_seconds))
        if sol.schedule is not None:
            v = validate(inst, sol.schedule)
            return (objective_of(v, metric), SLOT, "lower estimate", v,
                    sol.status is not Status.OPTIMAL)
    return best_lower_bound(inst, metric).value, LB, "upper estimate", None, False


# exceptions that mean "this instance is outside what the algorithm runs": a refusal, not a bug
def _soft_errors() -> tuple[type[BaseException], ...]:
    from coflowopt.schedulers.registry import (
        NoFeasibleSchedule,
        SolverStopped,
        UnsupportedInstance,
    )

    return (UnsupportedInstance, NoFeasibleSchedule, SolverStopped, NotImplementedError)


@dataclass(frozen=True)
class _Setup:
    """What every evaluation of one search shares (``registry_factor``: the proven factor is
    the entry's, so :meth:`~coflowopt.schedulers.SchedulerInfo.factor_for` says where it
    applies)."""

    info: Any
    factor: Factor | None
    claim: Factor | None
    registry_factor: bool
    metric: str
    params: dict[str, Any]
    cls: InstanceClass
    P: WorstParams
    reference: str
    seed: int
    note: str = ""


def evaluate(shape: Shape, st: _Setup) -> Judged:
    """Run the algorithm on ``shape`` and divide by the reference (see the module docstring)."""
    from .reference import run_validated

    inst = shape.instance(st.cls.dag)
    why = st.info.refusal(inst)
    if why is not None:
        return Judged(refused=why)
    covered = st.factor is not None and (
        not st.registry_factor or st.info.factor_for(st.metric, inst, st.params) is not None)
    if st.factor is not None and not covered and st.claim is None:
        return Judged(refused="outside the class the factor is stated for")
    # with a claim the class is the claim's: the proven factor is compared where it applies
    j = Judged(factor=st.factor.value(inst) if covered else None,
               claim=st.claim.value(inst) if st.claim else None)
    try:
        alg, v, problem = run_validated(st.info, inst, st.metric, seed=st.seed, **st.params)
    except _soft_errors() as exc:
        return Judged(refused=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a crash on a valid instance in the class is a defect too
        j.defect = f"{type(exc).__name__}: {exc}"
        return j
    if alg is None:
        j.defect = problem
        return j
    j.alg, j.alg_schedule = alg, v
    opt, j.reference, j.estimate, j.opt_schedule, j.time_limited = _reference(
        inst, st.metric, st.reference, st.P)
    j.opt = opt
    tol = RTOL * max(1.0, abs(alg))
    if j.estimate != "lower estimate" and alg < opt - tol:
        j.defect = f"ALG {alg:.6g} below the {j.reference} {opt:.6g}"
    j.ratio = alg / opt if opt > 0 else 1.0
    return j


# -- the search -------------------------------------------------------------------------------


@dataclass
class WorstResult:
    """The outcome of :func:`find_worst`.

    ``worst``: the evaluated point with the highest score (:meth:`Judged.score`) among those
    whose ratio the search used (sound ones for ``reference="opt"``), and ``shape``/``instance``
    its instance; ``confirmed``: with ``reference="lb"``, the worst point re-evaluated against
    the optimum (that is what decides the verdict); ``first_defect``: the first instance with a
    defect or a violation, if any.  ``evaluations``: proposals judged (cache hits included),
    ``distinct``: distinct instances run, ``refused``: of them not run, ``by_estimate``: how
    many ratios of each kind; ``stopped_by``: ``"evaluations"`` or ``"seconds"``;
    ``history``: ``(evaluation, ratio)`` at every new global worst.
    """

    algorithm: str
    metric: str
    params: dict[str, Any]
    factor: Factor | None
    claim: Factor | None
    cls: InstanceClass
    reference: str
    seed: int
    search: WorstParams
    worst: Judged | None = None
    shape: Shape | None = None
    confirmed: Judged | None = None
    first_defect: tuple[Judged, Shape] | None = None
    evaluations: int = 0
    distinct: int = 0
    refused: int = 0
    restarts: int = 0
    time_limited: int = 0
    by_estimate: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stopped_by: str = "evaluations"
    history: list[tuple[int, float]] = field(default_factory=list)
    factor_class: tuple[str, ...] = ()
    factor_note: str = ""

    @property
    def decisive(self) -> Judged | None:
        """The evaluation the verdict is about: the confirmed one, else the worst."""
        return self.confirmed if self.confirmed is not None else self.worst

    @property
    def instance(self) -> Instance | None:
        return None if self.shape is None else self.shape.instance(self.cls.dag)

    @property
    def verdict(self) -> str:
        """``"defect"``/``"violation"`` (exit 1), ``"finding"``, ``"inconclusive"``,
        ``"within"``, or ``"no ratio"`` (see :func:`judge`)."""
        if self.first_defect is not None:
            return judge(self.first_defect[0])
        d = self.decisive
        return "no ratio" if d is None else judge(d)


def _setup(algorithm: Any, *, metric: str | None, params: Mapping[str, Any] | None,
           factor: str | None, claim: str | None, assumes: tuple[str, ...], reference: str,
           search: WorstParams, seed: int) -> _Setup:
    from coflowopt.schedulers import SchedulerInfo, get

    info = algorithm if isinstance(algorithm, SchedulerInfo) else get(str(algorithm))
    if info.semantics != "fluid":
        raise ValueError(f"{info.name}: the finder runs fluid-semantics entries only")
    if reference not in ("opt", "lb"):
        raise ValueError(f"reference: expected 'opt' or 'lb', got {reference!r}")
    metric = metric or info.factor_metric or (
        "weighted_jct" if info.job_objective else "weighted_completion")
    if metric not in METRICS:
        raise ValueError(f"metric: expected one of {METRICS}, got {metric!r}")
    p = dict(info.factor_params)
    p.update(params or {})
    note = ""
    info.make_params(p)  # unknown or ill-typed parameters fail here, before any work
    if factor is not None:
        fac = parse_factor(factor, "proven", "C")
        note = "given with --factor, in place of the registry's"
    elif info.factor is not None and metric == info.factor_metric:
        fac = parse_factor(info.factor, "proven", info.factor_source)
        probe = info.make_params(p)
        if any(getattr(probe, k) != v for k, v in info.factor_params):
            fac = None  # the factor needs parameter values this run does not use
            note = (f"the registered factor {info.factor_label} needs "
                    + ", ".join(f"{k}={v!r}" for k, v in info.factor_params))
    else:
        fac = None
        if info.factor is not None:
            note = f"the registered factor {info.factor_label} bounds {info.objective}"
    cl = parse_factor(claim, "claimed") if claim is not None else None
    own = factor is not None or cl is not None
    return _Setup(info, fac, cl, factor is None and fac is not None, metric, p,
                  instance_class(info, assumes, own=own), search, reference, int(seed), note)


def _drop_schedules(j: Judged, res: WorstResult) -> None:
    """Forget ``j``'s schedules unless it is the worst point or the first defect."""
    if j is not res.worst and (res.first_defect is None or j is not res.first_defect[0]):
        j.alg_schedule = j.opt_schedule = None


def find_worst(algorithm: Any, *, evaluations: int | None = None, seconds: float | None = None,
               seed: int = 0, claim: str | None = None, factor: str | None = None,
               params: Mapping[str, Any] | None = None, assumes: tuple[str, ...] = (),
               metric: str | None = None, reference: str = "opt",
               search: WorstParams | None = None, start: Shape | Instance | None = None,
               progress: Callable[[WorstResult], None] | None = None) -> WorstResult:
    """Search for the instance with the worst ALG / OPT of ``algorithm`` (a registry name or
    entry).

    ``evaluations``: the budget in evaluations (reproducible); ``seconds``: a wall cap (at
    least one of them; the search stops at whichever comes first).  ``claim``: a claimed,
    unproven factor (``"3"``, ``"2 + 1/LB"``); ``factor``: replaces the registry's proven
    factor text (e.g. when it is prose).  ``params``: the algorithm's parameters (its
    ``factor_params`` are applied first).  ``assumes``: the class of a ``claim`` or ``factor``
    (``"release 0"``, ``"single-stage"``); without either, it narrows the class of the
    registry's factor (its ``factor_assumes``).  With a claim, the proven factor is compared
    on the instances it covers.  ``metric``: defaults to the entry's ``factor_metric``.
    ``reference``: ``"opt"`` (fluid optimum or ``OPT_slot``) or ``"lb"`` (LP lower bounds only;
    the worst point is then re-evaluated against the optimum).  ``start``: the first point (a
    :class:`Shape` or an :class:`~coflowopt.model.Instance`, e.g. a known bad instance; the
    bounds widen to contain it; default: a random one).  ``search``: the bounds and knobs
    (:class:`WorstParams`).  ``progress(result)``: called after every evaluation.
    """
    if evaluations is None and seconds is None:
        raise ValueError("find_worst: give evaluations, seconds or both")
    P = search or WorstParams()
    st = _setup(algorithm, metric=metric, params=params, factor=factor, claim=claim,
                assumes=tuple(assumes), reference=reference, search=P, seed=seed)
    if isinstance(start, Instance):
        start = shape_of(start, st.cls.dag)
    if start is not None:
        if not st.cls.releases and any(j.release for j in start.jobs):
            raise ValueError("start instance: has releases, the class is every release 0")
        P = _widened(P, start)
        st = replace(st, P=P)
    res = WorstResult(st.info.name, st.metric, st.params, st.factor, st.claim, st.cls,
                      reference, st.seed, P)
    res.factor_note = st.note
    if st.registry_factor:
        res.factor_class = tuple(st.info.factor_assumes) + tuple(
            f"{k}={v!r}" for k, v in st.info.factor_params)
    rng = np.random.default_rng([int(seed), 32])
    cache: dict[Shape, Judged] = {}
    t0 = time.perf_counter()

    def judged(s: Shape) -> Judged:
        res.evaluations += 1
        if s in cache:
            return cache[s]
        j = cache[s] = evaluate(s, st)
        res.distinct += 1
        res.refused += j.refused is not None
        res.time_limited += j.time_limited
        if j.ratio is not None:
            res.by_estimate[j.estimate] = res.by_estimate.get(j.estimate, 0) + 1
        if res.first_defect is None and judge(j) in ("defect", "violation"):
            res.first_defect = (j, s)
        usable = j.ratio is not None and (reference == "lb" or j.sound)
        if usable and (res.worst is None or j.score() > res.worst.score() + 1e-12):
            if res.worst is not None:
                _drop_schedules(res.worst, res)
            res.worst, res.shape = j, s
            res.history.append((res.evaluations, float(j.ratio)))  # type: ignore[arg-type]
        _drop_schedules(j, res)  # memory stays flat over long searches
        if progress is not None:
            progress(res)
        return j

    def out_of_budget() -> bool:
        if evaluations is not None and res.evaluations >= evaluations:
            res.stopped_by = "evaluations"
            return True
        if seconds is not None and time.perf_counter() - t0 >= seconds:
            res.stopped_by = "seconds"
            return True
        return False

    def usable_score(j: Judged) -> float:
        return j.score() if (reference == "lb" or j.sound) and j.ratio is not None \
            else -math.inf

    cur = start if start is not None else random_shape(rng, P, st.cls)
    cur_score = usable_score(judged(cur))
    local_best, stale = cur_score, 0
    while not out_of_budget():
        if stale >= P.patience:  # restart: fresh point, or the worst one kicked
            res.restarts += 1
            if res.restarts % 2 == 0 and res.shape is not None:
                cur = res.shape
                for _ in range(P.kick):
                    cur = perturb(rng, cur, P, st.cls)
            else:
                cur = random_shape(rng, P, st.cls)
            cur_score = usable_score(judged(cur))
            local_best, stale = cur_score, 0
            continue
        cand = perturb(rng, cur, P, st.cls)
        sc = usable_score(judged(cand))
        if sc >= cur_score - 1e-12 and sc > -math.inf:
            cur, cur_score = cand, sc
        if sc > local_best + 1e-9:
            local_best, stale = sc, 0
        else:
            stale += 1
    if reference == "lb" and res.shape is not None:
        res.confirmed = evaluate(res.shape, replace(st, reference="opt"))
    res.seconds = time.perf_counter() - t0
    return res


# -- output -----------------------------------------------------------------------------------


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)


def summary_dict(res: WorstResult) -> dict[str, Any]:
    """The result as plain JSON-ready values (no schedules)."""
    d = res.decisive

    def factor(f: Factor | None) -> dict[str, Any] | None:
        return None if f is None else {"text": f.text, "status": f.status, "source": f.source,
                                       "expr": f.expr, "with_releases": f.with_releases}

    return {
        "algorithm": res.algorithm, "metric": res.metric, "params": res.params,
        "factor": factor(res.factor), "claim": factor(res.claim),
        "factor_value": _num(d.factor) if d else None,
        "claim_value": _num(d.claim) if d else None,
        "class": res.cls.describe(), "reference_mode": res.reference, "seed": res.seed,
        "verdict": res.verdict,
        "ratio": _num(d.ratio) if d else None, "estimate": d.estimate if d else None,
        "reference": d.reference if d else None,
        "alg": _num(d.alg) if d else None, "opt": _num(d.opt) if d else None,
        "search_ratio": _num(res.worst.ratio) if res.worst else None,
        "search_estimate": res.worst.estimate if res.worst else None,
        "evaluations": res.evaluations, "distinct_instances": res.distinct,
        "refused": res.refused, "restarts": res.restarts, "time_limited": res.time_limited,
        "by_estimate": res.by_estimate, "seconds": round(res.seconds, 3),
        "stopped_by": res.stopped_by, "history": res.history,
        "factor_class": list(res.factor_class), "search_params": res.search.to_dict(),
    }


def _schedule_paths(path: str | os.PathLike[str]) -> tuple[str, str]:
    p = os.fspath(path)
    stem = p[:-5] if p.endswith(".json") else p
    return stem + ".opt-schedule.json", stem + ".alg-schedule.json"


def write_worst(res: WorstResult, path: str | os.PathLike[str]) -> dict[str, str]:
    """Write the worst instance as interchange JSON (``coflowopt run --trace PATH`` reads it;
    the search's summary rides along in an added ``"worst_case"`` field, which readers
    ignore), and beside it the validated OPT schedule (``<stem>.opt-schedule.json``, where the
    ratio used one) and the algorithm's (``<stem>.alg-schedule.json``); returns the paths."""
    from coflowopt.interchange import instance_to_dict, save_schedule, write_atomic

    d, shape = res.decisive, res.shape
    if res.first_defect is not None and (d is None or judge(res.first_defect[0]) == "defect"):
        d, shape = res.first_defect  # an invalid schedule or a crash: that instance first
    if d is None or shape is None:
        raise ValueError("write_worst: the search evaluated no instance with a ratio")
    out = {"instance": os.fspath(path)}
    opt_path, alg_path = _schedule_paths(path)
    body = instance_to_dict(shape.instance(res.cls.dag))
    info = summary_dict(res)
    if d.opt_schedule is not None:
        save_schedule(d.opt_schedule.schedule, opt_path)
        out["opt_schedule"] = info["opt_schedule"] = opt_path
    if d.alg_schedule is not None:
        save_schedule(d.alg_schedule.schedule, alg_path)
        out["alg_schedule"] = info["alg_schedule"] = alg_path
    body["worst_case"] = info
    write_atomic(path, [json.dumps(body, indent=1, allow_nan=False)])
    return out


def check_written(path: str | os.PathLike[str]) -> tuple[Instance, dict[str, Any], float | None]:
    """Reload a file of :func:`write_worst`: the instance, its ``"worst_case"`` summary, and
    the objective of its OPT schedule re-validated against the reloaded instance (``None``
    when the ratio used no schedule)."""
    from coflowopt.interchange import load_instance, load_schedule

    inst = load_instance(path)
    with open(path, encoding="utf-8") as fh:
        info = json.load(fh)["worst_case"]
    opt = None
    if info.get("opt_schedule"):
        opt = objective_of(validate(inst, load_schedule(info["opt_schedule"])), info["metric"])
    return inst, info, opt



def _what(j: Judged) -> str:
    if j.estimate == "exact":
        return "the true ratio"
    if j.estimate == "lower estimate":
        return "a lower estimate: OPT_slot >= OPT, so the true ratio is at least this"
    return "an UPPER estimate: a lower bound on OPT, so the true ratio is at most this"


def format_worst(res: WorstResult) -> str:
    """The finder's report, as ``coflowopt verify --worst`` prints it."""
    lines = []
    f, c = res.factor, res.claim
    lines.append(f"algorithm {res.algorithm}: {res.metric}, params {res.params or '{}'}; "
                 f"instances: {res.cls.describe()}")
    stated = f"; stated for {', '.join(res.factor_class)}" if res.factor_class else ""
    if f is not None and res.factor_note:
        stated += f"; {res.factor_note}"
    lines.append("factor: " + (f.label + stated if f is not None
                               else "none applies" + (f" ({res.factor_note})"
                                                      if res.factor_note else ""))
                 + ("" if f is None or f.expr is not None else " (no constant: nothing to "
                    "break)"))
    if c is not None:
        lines.append(f"claim: {c.label}")
    est = ", ".join(f"{k} {v}" for k, v in sorted(res.by_estimate.items())) or "none"
    lines.append(f"searched {res.evaluations} evaluations ({res.distinct} distinct instances, "
                 f"{res.refused} refused; ratios: {est}), {res.restarts} restarts, "
                 f"{res.seconds:.1f}s, stopped by the {res.stopped_by} budget"
                 + (f" (rerun exactly with --evaluations {res.evaluations})"
                    if res.stopped_by == "seconds" else ""))
    if res.time_limited:
        lines.append(f"note: {res.time_limited} slotted MILPs stopped at their time limit "
                     "(their OPT_slot is still a valid schedule, but the run is then not "
                     "machine-independent)")
    w = res.worst
    if w is None:
        lines.append("no instance with a ratio was evaluated")
    else:
        lines.append(f"worst ratio found: {w.ratio:.6g} = ALG {w.alg:.6g} / {w.opt:.6g} "
                     f"({w.reference}): {_what(w)}")
    if res.confirmed is not None:
        k = res.confirmed
        lines.append("re-evaluated against the optimum: " + (
            f"{k.ratio:.6g} = ALG {k.alg:.6g} / {k.opt:.6g} ({k.reference}): {_what(k)}"
            if k.ratio is not None else f"no ratio ({k.refused or k.defect})"))
    d = res.decisive
    for name, val in (("proven factor", d.factor if d else None),
                      ("claimed factor", d.claim if d else None)):
        if d is not None and d.ratio is not None and val is not None:
            lines.append(f"  vs {name} {val:.6g} on this instance: ratio / factor = "
                         f"{d.ratio / val:.4f}")
    v = res.verdict
    if v in ("defect", "violation"):
        j, s = res.first_defect if res.first_defect is not None else (d, res.shape)
        what = j.defect if v == "defect" else (
            f"ratio {j.ratio:.6g} > proven factor {j.factor:.6g} ({_what(j)})")
        lines.append(f"!!! DEFECT in {res.algorithm}: {what}")
        if s is not None:
            lines.append(f"!!! instance: ports {s.ports}, {s.n_coflows} coflows, "
                         f"{s.n_flows} flows")
    elif v == "finding":
        lines.append(f"FINDING: the claimed factor {c.text if c else ''} is exceeded "
                     f"({_what(d) if d else ''}); the claim is unproven, so this is a "
                     "result, not a defect")
    elif v == "inconclusive":
        lines.append("inconclusive: only an upper estimate exceeds a factor; never a violation")
    else:
        lines.append(f"verdict: {v}" + (" (no factor or claim to compare with)"
                                         if v == "reported" else ""))
    return "\n".join(lines)

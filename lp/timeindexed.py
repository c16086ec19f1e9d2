"""Time-indexed (slotted) formulations: the weighted-CCT MILP, PS(E), and a fluid lower-bound LP.

Slots (as in the CoFair paper, De Pellegrini et al., IEEE TPDS 2022): slot ``t = 1..T`` is the
interval ``((t-1) Delta, t Delta]``; ``Delta = 1`` by default.  ``x_i(t) in [0, 1]`` is the fraction
of flow ``i`` sent in slot ``t``, at the constant rate ``v_i x_i(t) / Delta`` over the slot.  A
coflow released at ``r_j`` may use slot ``t`` only when the whole slot lies after its release,
``(t-1) Delta >= r_j``, and a coflow's completion ``C_j`` is the end of its last slot with service.

**What the numbers mean** (document every ratio by the bound it uses):

- The MILP optimum ``OPT_slot(T)`` is the best *slotted* schedule that ends by the horizon ``T``.
  Every slotted schedule is a fluid (preemptive, piecewise-constant) schedule, so
  ``OPT_slot >= OPT_fluid``: **the slotted optimum is an upper bound on the true optimum**, and
  on integer data it can exceed it.  Conversely a fluid schedule with completions ``C_j`` gives a
  slotted one with completions ``ceil(C_j / Delta) Delta`` (same service, counted per slot), so
  ``OPT_slot <= sum_j w_j ceil(C_j / Delta) Delta`` for every feasible schedule that ends by
  ``T Delta`` and has releases on the slot grid.
- The LP relaxation of the MILP (:meth:`TimeIndexedModel.relaxation`) is a lower bound on
  ``OPT_slot`` only: its completion constraint (6) counts whole slots.
- :func:`time_indexed_lower_bound` is an LP that is a lower bound on ``OPT_fluid`` (hence on every
  schedule): it keeps the slot capacities but replaces (6) by mean-busy-time inequalities that
  hold for every fluid schedule, and its last slot absorbs any overflow, so no horizon makes it
  invalid.

The MILP is PS(E) of the CoFair paper (constraints (3)-(8); exact algebra ours [C]) with (7)
optional; ``E = inf`` gives the plain
time-indexed weighted-CCT MILP.  It is extended, as the multi-stage model of Shafiee and Ghaderi
(ToN 2021) needs, with Starts-After edges (a successor's flow may use slot ``t`` only if every
predecessor completed by ``t - 1``) and with the job-level objectives (weighted JCT, makespan).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

from .backends import solve
from .model import INF, LinearProgram, ModelBuilder, SolveParams, SolveResult

__all__ = [
    "OBJECTIVES",
    "ExactSolution",
    "ModelTooLarge",
    "TimeIndexedModel",
    "TimeIndexedParams",
    "slot_horizon",
    "solve_time_indexed",
    "time_indexed_lower_bound",
    "time_indexed_model",
]

OBJECTIVES = ("weighted_completion", "weighted_jct", "makespan")
_EPS = 1e-9
#: up to this horizon the per-flow completion cuts write their cumulative sums out in full
_DENSE_CUMULATIVE_SLOTS = 30


@dataclass(frozen=True)
class TimeIndexedParams:
    """Parameters of the time-indexed models.

    - ``horizon``: number of slots ``T`` (``None``: :func:`slot_horizon`, the makespan of a
      slot-aligned sequential schedule, or the last deadline when ``E`` is finite);
    - ``slot``: slot length ``Delta`` (time units);
    - ``objective``: ``"weighted_completion"`` (``sum_j w_j C_j`` over coflows, absolute
      times), ``"weighted_jct"`` (``sum_j w_j C_j`` over jobs) or ``"makespan"``;
    - ``E``, ``phi``: the slowdown constraint (7) ``phi_j (C_j - r_j) <= E C_j^0`` (``E = inf``:
      none; ``phi`` default 1 per coflow);
    - ``max_columns``: refuse (:class:`ModelTooLarge`) a model estimated to need more columns
      than this before building it (``None``: no limit);
    - ``cuts``: add valid inequalities that tighten the relaxation and never cut off a slotted
      schedule: ``C_j >= r_j + C_j^0``, ``C_c >= C_u + C_c^0`` on Starts-After edges, and
      ``X_j(t) <= sum_{u<=t} x_i(u)`` for every flow ``i`` of ``j`` (a coflow is complete only
      when each of its flows is; (4) averages over the flows).  Mean-busy-time rows, used by
      :func:`time_indexed_lower_bound`, slowed the MILP down in our tests and are left out.
    """

    horizon: int | None = None
    slot: float = 1.0
    objective: str = "weighted_completion"
    E: float = INF
    phi: Any = None
    cuts: bool = True
    max_columns: int | None = 2_000_000

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective: expected one of {OBJECTIVES}, got {self.objective!r}")
        if not (self.slot > 0 and math.isfinite(self.slot)):
            raise ValueError(f"slot: must be finite and > 0, got {self.slot}")
        if self.horizon is not None and int(self.horizon) < 1:
            raise ValueError(f"horizon: need at least one slot, got {self.horizon}")
        if math.isnan(self.E) or self.E <= 0:
            raise ValueError(f"E: must be > 0 (inf for no slowdown constraint), got {self.E}")


class ModelTooLarge(ValueError):
    """A time-indexed model that would exceed ``max_columns``; the message gives its size and
    a slot length that would fit."""


def _check_size(what: str, inst: Instance, per_slot: int, T: int, slot: float,
                max_columns: int | None) -> None:
    """Refuse before building a model of about ``per_slot x T`` columns (the time-indexed
    variables; the handful of per-coflow ones are left out)."""
    cols = per_slot * T
    if max_columns is None or cols <= max_columns:
        return
    k = math.ceil(cols / max_columns)
    while per_slot * slot_horizon(inst, slot * k) > max_columns:
        k = math.ceil(k * 1.25)
    raise ModelTooLarge(
        f"{what}: about {cols:,} columns ({per_slot:,} per slot x {T:,} slots of {slot:g} "
        f"{inst.time_unit}; {inst.n_coflows:,} coflows) exceed max_columns={max_columns:,}; use "
        f"a coarser slot (slot={slot * k:g} or more) or raise max_columns")


def _params(params: TimeIndexedParams | None, kw: dict[str, Any]) -> TimeIndexedParams:
    """``params`` with the keyword overrides ``kw`` applied (defaults when ``params`` is None)."""
    if params is None:
        return TimeIndexedParams(**kw)
    return replace(params, **kw) if kw else params


def coflow_preferences(instance: Instance, phi: Any) -> np.ndarray:
    if phi is None:
        return np.ones(instance.n_coflows)
    arr = np.broadcast_to(np.asarray(phi, dtype=np.float64), (instance.n_coflows,)).copy()
    if not np.all(np.isfinite(arr) & (arr > 0)):
        k = int(np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))[0])
        raise ValueError(f"phi[{k}]: preference weights must be finite and > 0, got {arr[k]}")
    return arr


def deadlines(instance: Instance, E: float, phi: Any = None) -> np.ndarray:
    """``D_j = r_j + E C_j^0 / phi_j`` (constraint (7) read as a deadline; ``inf`` for
    ``E = inf``)."""
    if math.isinf(E):
        return np.full(instance.n_coflows, INF)
    return instance.release + E * instance.isolation_time / coflow_preferences(instance, phi)


def slot_horizon(instance: Instance, slot: float = 1.0) -> int:
    """Slots used by a slot-aligned sequential schedule: coflows one at a time in a
    topological order of (release, position), each starting on the slot grid after its
    release and its predecessors and lasting ``ceil(C_j^0 / Delta)`` slots.  A feasible
    slotted schedule always fits in this many slots."""
    inst = instance
    if inst.n_coflows == 0:
        return 1
    rank = np.empty(inst.n_coflows, dtype=np.int64)
    rank[inst.topological_order] = np.arange(inst.n_coflows)
    order = np.lexsort((rank, inst.release))
    rel_slot = np.ceil(inst.release / slot - _EPS).astype(np.int64)
    dur = np.ceil(inst.isolation_time / slot - _EPS).astype(np.int64)
    ptr, pred = inst.predecessors_ptr
    done = np.zeros(inst.n_coflows, dtype=np.int64)
    placed = np.zeros(inst.n_coflows, dtype=bool)
    t = 0
    pending = list(order)
    while pending:  # any order respecting releases; predecessors first
        i = next(k for k, c in enumerate(pending) if placed[pred[ptr[c]:ptr[c + 1]]].all())
        c = pending.pop(i)
        p = pred[ptr[c]:ptr[c + 1]]
        start = max(t, int(rel_slot[c]), int(done[p].max()) if p.size else 0)
        done[c] = start + int(dur[c])
        placed[c] = True
        t = done[c] if dur[c] > 0 else t
    return max(1, int(done.max()))


@dataclass(frozen=True, eq=False)
class ExactSolution:
    """A solved formulation: the solver's result, the schedule it encodes (``None`` for a
    relaxation, which is a bound and not a schedule, or when no solution was found), and what
    the value means (``kind``).  Pass ``schedule`` through :func:`coflowopt.validate` before
    reporting any objective of it."""

    result: SolveResult
    schedule: Schedule | None
    kind: str
    completion: np.ndarray | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> float:
        return self.result.objective

    @property
    def bound(self) -> float:
        return self.result.bound

    @property
    def status(self) -> Any:
        return self.result.status

    def __repr__(self) -> str:
        return (f"ExactSolution({self.kind!r}, {self.result.status.value}, "
                f"value={self.value:.6g}, bound={self.bound:.6g})")


@dataclass(frozen=True, eq=False)
class TimeIndexedModel:
    """A built time-indexed model: the :class:`LinearProgram` and the maps to decode it.

    ``xf``, ``xt``: flow position and slot (1-based) of each ``x`` column, in order.
    """

    instance: Instance
    params: TimeIndexedParams
    lp: LinearProgram
    horizon: int
    xf: np.ndarray
    xt: np.ndarray
    kind: str

    def relaxation(self) -> LinearProgram:
        """The LP relaxation (a lower bound on the slotted optimum ``OPT_slot`` only; see the
        module docstring for a bound on the fluid optimum)."""
        return self.lp.relax()

    def schedule(self, x: np.ndarray) -> Schedule:
        """The slotted schedule encoded by the ``x`` columns of solution ``x``: in slot ``t``,
        flow ``i`` runs at ``v_i x_i(t) / Delta``.  Values below ``1e-9`` are dropped and each
        flow's fractions rescaled to sum to one (solver round-off)."""
        inst, d = self.instance, self.params.slot
        xv = self.lp.values(x, "x").copy()
        xv[xv < 1e-9] = 0.0
        tot = np.bincount(self.xf, weights=xv, minlength=inst.n_flows)
        scale = np.divide(1.0, tot, out=np.zeros_like(tot), where=tot > 0)
        xv = xv * scale[self.xf]
        keep = xv > 0
        f, t = self.xf[keep], self.xt[keep]
        rate = inst.flow_volume[f] * xv[keep] / d
        bp = np.arange(self.horizon + 1, dtype=np.float64) * d
        return Schedule.from_segments(bp, f, rate, t - 1, t,
                                      meta={"scheduler": self.kind, "slot": d})

    def completion(self, x: np.ndarray) -> np.ndarray:
        """The ``C_j`` columns of solution ``x`` (time units)."""
        return self.lp.values(x, "C").copy()

    def solve(self, params: SolveParams | None = None, *, backend: str = "highs",
              relax: bool = False, **overrides: Any) -> ExactSolution:
        """Solve the MILP (or, with ``relax=True``, its LP relaxation: a bound, no schedule)."""
        lp = self.relaxation() if relax else self.lp
        res = solve(lp, params, backend=backend, **overrides)
        kind = f"{self.kind} LP relaxation" if relax else self.kind
        if relax or not res.has_solution:
            return ExactSolution(res, None, kind,
                                 self.completion(res.x) if res.x is not None else None)
        assert res.x is not None
        return ExactSolution(res, self.schedule(res.x), kind, self.completion(res.x))


def _work_flows(inst: Instance) -> np.ndarray:
    return np.flatnonzero(inst.flow_volume > 0)


def time_indexed_model(instance: Instance, params: TimeIndexedParams | None = None, *,
                       floor: np.ndarray | None = None, kind: str = "slotted MILP",
                       **kw: Any) -> TimeIndexedModel:
    """The time-indexed MILP PS(E) of the CoFair paper (TPDS 2022) on a slotted horizon.

    Variables: ``x_i(t) in [0, 1]`` (only slots allowed by release and deadline), the
    cumulative fraction ``Z_j(t) = (1/V_j) sum_i v_i sum_{u<=t} x_i(u)`` as an explicit column
    (keeps the matrix sparse), completion indicators ``X_j(t) in {0, 1}``, ``C_j >= 0``::

        min   sum_j w_j C_j                       (or weighted JCT, or makespan)
        (3)   sum_t x_i(t) = 1                                  every flow i
        (Z)   Z_j(t) - Z_j(t-1) - sum_i (v_i/V_j) x_i(t) = 0     every coflow j, slot t
        (4)   X_j(t) <= Z_j(t)
        (5)   x_i(t) = 0 for (t-1) Delta < r_j                   (column not created)
        (6)   C_j = Delta * sum_{t=0}^{T-1} (1 - X_j(t)),  X_j(0) = 0
        (7)   phi_j (C_j - r_j) <= E C_j^0                       (bound on C_j; E finite)
        (8)   sum_{i through port l} v_i x_i(t) <= B_l Delta      every port l, slot t
        (SA)  x_i(t) <= X_u(t-1)                                 every Starts-After u -> j(i)
        (M)   X_j(t) <= X_j(t+1);  X_j(t) = 0 for t Delta < r_j + C_j^0

    (6) is written as an equality (our reading of the paper's ``>=`` [C] is tight at every optimum)
    and the weighted-completion objective is put on the binaries, ``sum_j w_j Delta (T - sum_t
    X_j(t))``, so that integer weights make the objective integral for the solver.  (M) is
    valid (completion is monotone, and no coflow completes before its isolation time) and
    removes symmetric solutions.  With ``params.cuts`` the inequalities listed in
    :class:`TimeIndexedParams` are added.
    ``floor`` (per flow, volume per time unit) adds the static-progress rows of SPS (see
    :func:`coflowopt.lp.progress.sps_model`).  Coflows without volume complete when released
    and their predecessors are complete (``X_j(t) <= X_u(t)``).
    """
    p = _params(params, kw)
    inst = instance
    d = float(p.slot)
    m, n_c = inst.ports, inst.n_coflows
    wf = _work_flows(inst)
    F = wf.size
    fc = inst.flow_coflow[wf].astype(np.int64)
    v = inst.flow_volume[wf]
    V = inst.coflow_size
    work = V > 0
    c0 = inst.isolation_time
    D = deadlines(inst, p.E, p.phi)
    if p.horizon is not None:
        T = int(p.horizon)
    else:
        T = slot_horizon(inst, d)
        if math.isfinite(p.E) and n_c:
            T = max(1, min(T, math.floor(float(D.max()) / d + _EPS)))
        if floor is not None and F:
            # every flow at its floor rate from its release on finishes within these slots
            fl = np.asarray(floor, dtype=np.float64)
            need = np.ceil(inst.release[fc] / d - _EPS) + np.ceil(
                v / np.maximum(fl, 1e-300) / d - _EPS)
            T = max(T, int(need.max()))
    # x per flow and slot (plus U for the cumulative cuts, Y for floors), X and Z per coflow
    per_slot = F * (1 + int(p.cuts and T > _DENSE_CUMULATIVE_SLOTS) + int(floor is not None))
    _check_size(kind, inst, per_slot + 2 * n_c, T, d, p.max_columns)
    t_min = np.ceil(inst.release / d - _EPS).astype(np.int64) + 1
    t_max = np.full(n_c, T, dtype=np.int64)
    if math.isfinite(p.E):
        t_max = np.minimum(T, np.floor(D / d + _EPS)).astype(np.int64)
    slots = np.arange(1, T + 1)
    mask = (slots[None, :] >= t_min[fc][:, None]) & (slots[None, :] <= t_max[fc][:, None])
    xf_local, xt0 = np.nonzero(mask)  # xt0: 0-based slot
    n_x = xf_local.size

    # zero-work coflows: Z fixed at 1, X_j(t) = 0 before the release; a coflow with work
    # cannot be complete before slot ceil((r_j + C_j^0) / Delta)
    Wlb = np.zeros((n_c, T))
    Wlb[~work] = 1.0
    earliest = np.ceil((inst.release + c0) / d - _EPS)
    earliest[~work] = np.ceil(inst.release[~work] / d - _EPS)
    Xub = (slots[None, :] >= earliest[:, None]).astype(float)

    b = ModelBuilder(kind.replace(" ", "_"))
    xcol = b.add_columns("x", n_x, lb=0.0, ub=1.0)
    # objective sum_j w_j C_j with C_j = Delta (T - sum_{t<T} X_j(t)) (row (6), an equality):
    # written on the binaries X, so that integer weights give an integral objective
    xcost = np.zeros((n_c, T))
    if p.objective == "weighted_completion":
        xcost[:, :-1] = -(inst.coflow_weight * d)[:, None]
    Xcol = b.add_columns("X", (n_c, T), lb=0.0, ub=Xub, integer=True, cost=xcost)
    Wcol = b.add_columns("Z", (n_c, T), lb=Wlb, ub=1.0)
    c_lb = (inst.release + c0) if p.cuts else np.zeros(n_c)
    c_ub = np.where(np.isfinite(D), D + _EPS * np.maximum(1.0, np.abs(D)), INF)
    obj = p.objective
    Ccol = b.add_columns("C", n_c, lb=c_lb, ub=c_ub)

    # (3) every flow finishes
    b.add_rows("volume", F, xf_local, xcol, 1.0, lower=1.0, upper=1.0)
    # (Z) cumulative progress of each coflow with work
    wj = np.flatnonzero(work)
    rows = [np.arange(n_c * T).reshape(n_c, T)[wj].ravel()]
    cols = [Wcol[wj].ravel()]
    vals = [np.ones(wj.size * T)]
    if T > 1:
        rows.append(np.arange(n_c * T).reshape(n_c, T)[wj][:, 1:].ravel())
        cols.append(Wcol[wj][:, :-1].ravel())
        vals.append(-np.ones(wj.size * (T - 1)))
    rows.append(fc[xf_local] * T + xt0)
    cols.append(xcol)
    vals.append(-(v / np.where(V[fc] > 0, V[fc], 1.0))[xf_local])
    zrows = np.concatenate(rows)
    keep_rows = work[zrows // T]
    # renumber: only rows of coflows with work exist
    row_id = np.full(n_c * T, -1, dtype=np.int64)
    live = np.repeat(work, T)
    row_id[live] = np.arange(int(live.sum()))
    b.add_rows("progress", int(live.sum()), row_id[zrows[keep_rows]],
               np.concatenate(cols)[keep_rows], np.concatenate(vals)[keep_rows],
               lower=0.0, upper=0.0)
    # (4) X_j(t) <= Z_j(t)
    nct = n_c * T
    b.add_rows("complete", nct, np.r_[np.arange(nct), np.arange(nct)],
               np.r_[Xcol.ravel(), Wcol.ravel()], np.r_[np.ones(nct), -np.ones(nct)],
               upper=0.0)
    # (M) completion is monotone: X_j(t) <= X_j(t+1) (valid; removes symmetric solutions)
    if T > 1:
        nm = n_c * (T - 1)
        b.add_rows("monotone", nm, np.r_[np.arange(nm), np.arange(nm)],
                   np.r_[Xcol[:, :-1].ravel(), Xcol[:, 1:].ravel()],
                   np.r_[np.ones(nm), -np.ones(nm)], upper=0.0)
    # (6) C_j + Delta * sum_{t=1}^{T-1} X_j(t) >= Delta * T
    tt = np.arange(T - 1)
    b.add_rows("completion", n_c,
               np.r_[np.arange(n_c), np.repeat(np.arange(n_c), T - 1)],
               np.r_[Ccol, Xcol[:, tt].ravel()],
               np.r_[np.ones(n_c), np.full(n_c * (T - 1), d)], lower=d * T, upper=d * T)
    # (8) port capacity per slot
    src, dst = inst.flow_src[wf].astype(np.int64), inst.flow_dst[wf].astype(np.int64)
    for side, port, cap in (("capacity_in", src, inst.fabric.capacity_in),
                            ("capacity_out", dst, inst.fabric.capacity_out)):
        b.add_rows(side, m * T, port[xf_local] * T + xt0, xcol, v[xf_local],
                   upper=np.repeat(cap * d, T))
    # (SA) Starts-After: x_i(t) <= X_u(t-1)
    _precedence_rows(b, inst, wf, fc, xf_local, xt0, xcol, Xcol, T, work)
    # objective columns
    if obj != "weighted_completion":
        _objective_rows(b, inst, Ccol, obj)
    U = None
    if F and (floor is not None or (p.cuts and T > _DENSE_CUMULATIVE_SLOTS)):
        U = _flow_cumulative(b, xf_local, xt0, xcol, F, T)
    if p.cuts:
        _chain_rows(b, inst, Ccol)
        _flow_completion_cuts(b, fc, xf_local, xt0, xcol, Xcol, F, T, U)
    if floor is not None:
        _floor_rows(b, np.asarray(floor, dtype=np.float64), v, xf_local, xt0, xcol, T, d, U)
    offset = float(inst.coflow_weight.sum() * d * T) if obj == "weighted_completion" else 0.0
    lp = b.build(offset=offset, meta={"horizon": T, "slot": d, "objective": obj, "E": p.E})
    return TimeIndexedModel(inst, p, lp, T, wf[xf_local], xt0 + 1, kind)


def _flow_cumulative(b: ModelBuilder, xf_local: np.ndarray, xt0: np.ndarray, xcol: np.ndarray,
                     F: int, T: int) -> np.ndarray:
    """Columns ``U_i(t) = U_i(t-1) + x_i(t)`` (the cumulative fraction of flow ``i`` by the end
    of slot ``t``), shape ``(F, T)``."""
    U = b.add_columns("U", (F, T), lb=0.0, ub=1.0)
    n = F * T
    r = np.arange(n).reshape(F, T)
    rows = [r.ravel(), r[xf_local, xt0]]
    cols = [U.ravel(), xcol]
    vals = [np.ones(n), -np.ones(xcol.size)]
    if T > 1:
        rows.append(r[:, 1:].ravel())
        cols.append(U[:, :-1].ravel())
        vals.append(-np.ones(F * (T - 1)))
    b.add_rows("flow_progress", n, np.concatenate(rows), np.concatenate(cols),
               np.concatenate(vals), lower=0.0, upper=0.0)
    return U


def _flow_completion_cuts(b: ModelBuilder, fc: np.ndarray, xf_local: np.ndarray,
                          xt0: np.ndarray, xcol: np.ndarray, Xcol: np.ndarray, F: int, T: int,
                          U: np.ndarray | None) -> None:
    """``X_j(t) <= sum_{u<=t} x_i(u)`` for every flow ``i`` of ``j``: through the columns ``U``
    when given (five nonzeros per (i, t)), else with the sums written out (``F T^2 / 2``
    nonzeros; faster for short horizons)."""
    if F == 0:
        return
    n = F * T
    r = np.arange(n).reshape(F, T)
    if U is not None:
        b.add_rows("flow_complete", n, np.r_[r.ravel(), r.ravel()],
                   np.r_[Xcol[fc].ravel(), U.ravel()], np.r_[np.ones(n), -np.ones(n)],
                   upper=0.0)
        return
    # each x column (i, u) enters the rows (i, t) for t >= u
    reps = T - xt0
    rows_f = np.repeat(xf_local, reps)
    rows_t = np.repeat(xt0, reps) + (np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps,
                                                                      reps))
    cols = np.repeat(xcol, reps)
    b.add_rows("flow_complete", n, np.r_[r.ravel(), r[rows_f, rows_t]],
               np.r_[Xcol[fc].ravel(), cols], np.r_[np.ones(n), -np.ones(cols.size)],
               upper=0.0)


def _precedence_rows(b: ModelBuilder, inst: Instance, wf: np.ndarray, fc: np.ndarray,
                     xf_local: np.ndarray, xt0: np.ndarray, xcol: np.ndarray, Xcol: np.ndarray,
                     T: int, work: np.ndarray) -> None:
    e = inst.starts_after.astype(np.int64)
    if not e.size:
        return
    # flow-level rows: for each x column of a successor's flow and each predecessor u
    order = np.argsort(e[:, 1], kind="stable")
    e = e[order]
    ptr = np.zeros(inst.n_coflows + 1, dtype=np.int64)
    np.cumsum(np.bincount(e[:, 1], minlength=inst.n_coflows), out=ptr[1:])
    cof = fc[xf_local]
    n_pred = ptr[cof + 1] - ptr[cof]
    k = np.repeat(np.arange(xcol.size), n_pred)
    pos = np.repeat(ptr[cof], n_pred) + (np.arange(k.size) - np.repeat(np.cumsum(n_pred)
                                                                       - n_pred, n_pred))
    u = e[pos, 0]
    t0 = xt0[k]
    n = k.size
    has_prev = t0 >= 1
    rows = np.r_[np.arange(n), np.flatnonzero(has_prev)]
    cols = np.r_[xcol[k], Xcol[u[has_prev], t0[has_prev] - 1]]
    vals = np.r_[np.ones(n), -np.ones(int(has_prev.sum()))]
    b.add_rows("starts_after", n, rows, cols, vals, upper=0.0)
    # coflows without volume: X_c(t) <= X_u(t)
    empty = ~work[e[:, 1]]
    if empty.any():
        ee = e[empty]
        ne = ee.shape[0] * T
        r = np.arange(ne)
        b.add_rows("starts_after_empty", ne, np.r_[r, r],
                   np.r_[Xcol[ee[:, 1]].ravel(), Xcol[ee[:, 0]].ravel()],
                   np.r_[np.ones(ne), -np.ones(ne)], upper=0.0)


def _objective_rows(b: ModelBuilder, inst: Instance, Ccol: np.ndarray, obj: str) -> None:
    n_c = inst.n_coflows
    if obj == "weighted_jct":
        CJ = b.add_columns("CJ", inst.n_jobs, lb=0.0, cost=inst.job_weight)
        b.add_rows("job_completion", n_c, np.r_[np.arange(n_c), np.arange(n_c)],
                   np.r_[CJ[inst.coflow_job], Ccol], np.r_[np.ones(n_c), -np.ones(n_c)],
                   lower=0.0)
    else:
        cmax = b.add_columns("Cmax", (), lb=0.0, cost=1.0)
        b.add_rows("makespan", n_c, np.r_[np.arange(n_c), np.arange(n_c)],
                   np.r_[np.full(n_c, int(cmax)), Ccol], np.r_[np.ones(n_c), -np.ones(n_c)],
                   lower=0.0)


def _chain_rows(b: ModelBuilder, inst: Instance, Ccol: np.ndarray) -> None:
    """``C_c >= C_u + C_c^0`` on every Starts-After edge (valid for every fluid schedule)."""
    e = inst.starts_after.astype(np.int64)
    if e.size:
        ne = e.shape[0]
        b.add_rows("chain", ne, np.r_[np.arange(ne), np.arange(ne)],
                   np.r_[Ccol[e[:, 1]], Ccol[e[:, 0]]], np.r_[np.ones(ne), -np.ones(ne)],
                   lower=inst.isolation_time[e[:, 1]])


def _mean_busy_time_rows(b: ModelBuilder, inst: Instance, wf: np.ndarray, fc: np.ndarray,
                         v: np.ndarray, xf_local: np.ndarray, xt0: np.ndarray,
                         xcol: np.ndarray, Ccol: np.ndarray, d: float) -> None:
    """Mean busy time (valid for every fluid schedule): on port ``l`` coflow ``j``'s load
    ``p_lj`` is served at rate ``<= B_l`` and is complete by ``C_j``, so its mean service time
    is ``M_lj <= C_j - p_lj / (2 B_l)``; service in slot ``t`` happens after
    ``max((t-1) Delta, r_j)``, so
    ``C_j >= p_lj / (2 B_l) + (1/p_lj) sum_{i on l} v_i sum_t max((t-1) Delta, r_j) x_i(t)``.
    """
    m = inst.ports
    rel = inst.release
    lo_time = np.maximum(xt0 * d, rel[fc[xf_local]])
    for side, port, cap in (("in", inst.flow_src[wf].astype(np.int64), inst.fabric.capacity_in),
                            ("out", inst.flow_dst[wf].astype(np.int64),
                             inst.fabric.capacity_out)):
        key = fc * m + port
        uk, inv = np.unique(key, return_inverse=True)
        load = np.bincount(inv, weights=v, minlength=uk.size)
        cj, pl = uk // m, uk % m
        n = uk.size
        rows = np.r_[np.arange(n), inv[xf_local]]
        cols = np.r_[Ccol[cj], xcol]
        vals = np.r_[np.ones(n), -(v[xf_local] * lo_time / load[inv[xf_local]])]
        b.add_rows(f"mean_busy_time_{side}", n, rows, cols, vals,
                   lower=load / (2.0 * cap[pl]))


def _floor_rows(b: ModelBuilder, floor: np.ndarray, v: np.ndarray, xf_local: np.ndarray,
                xt0: np.ndarray, xcol: np.ndarray, T: int, d: float, U: np.ndarray | None
                ) -> None:
    """SPS static-progress floor: ``v_i x_i(t) >= a_i Delta (1 - Y_i(t))`` in every allowed
    slot, ``Y_i(t) <= U_i(t)`` (``U_i`` the flow's cumulative fraction, ``Y_i`` binary)."""
    F = v.size
    if floor.shape != (F,):
        raise ValueError(f"floor: expected {F} values (one per flow with volume), got "
                         f"{floor.shape}")
    if F == 0 or U is None:
        return
    Y = b.add_columns("Y", (F, T), lb=0.0, ub=1.0, integer=True)
    n = F * T
    r = np.arange(n).reshape(F, T)
    b.add_rows("flow_finished", n, np.r_[r.ravel(), r.ravel()], np.r_[Y.ravel(), U.ravel()],
               np.r_[np.ones(n), -np.ones(n)], upper=0.0)
    k = xcol.size
    a = floor[xf_local] * d
    b.add_rows("progress_floor", k, np.r_[np.arange(k), np.arange(k)],
               np.r_[xcol, Y[xf_local, xt0]], np.r_[v[xf_local], a], lower=a)


def solve_time_indexed(instance: Instance, params: TimeIndexedParams | None = None,
                       solve_params: SolveParams | None = None, *, backend: str = "highs",
                       **kw: Any) -> ExactSolution:
    """Build and solve the slotted MILP; ``ExactSolution.schedule`` is the optimal slotted
    schedule (validate it before use).  See the module docstring for what its value bounds."""
    return time_indexed_model(instance, params, **kw).solve(solve_params, backend=backend)


def time_indexed_lower_bound(instance: Instance, params: TimeIndexedParams | None = None,
                             solve_params: SolveParams | None = None, *,
                             backend: str = "highs", **kw: Any) -> ExactSolution:
    """An LP lower bound on the fluid optimum (every feasible schedule), time-indexed.

    Variables ``x_i(t) >= 0`` for slots ``t = 1..T`` that end after ``r_j`` (and, with a finite
    ``E``, start before ``D_j``), and ``C_j``::

        min  sum_j w_j C_j    (or weighted JCT / makespan)
        sum_t x_i(t) = 1;   sum_{i on l} v_i x_i(t) <= B_l Delta   for t < T
        C_j >= r_j + C_j^0;   C_c >= C_u + C_c^0 (Starts-After);   C_j <= D_j
        C_j >= p_lj / (2 B_l) + (1/p_lj) sum_{i on l} v_i sum_t max((t-1) Delta, r_j) x_i(t)

    The last slot ``T`` has no capacity row: it stands for all time after ``(T-1) Delta``, so
    any fluid schedule maps to a feasible point whatever ``T`` is, with objective at most its
    own; the LP optimum is therefore ``<= OPT_fluid``.  ``T`` (default: :func:`slot_horizon`)
    and ``Delta`` only change how tight it is.  The result carries no schedule.
    """
    p = _params(params, kw)
    inst = instance
    d = float(p.slot)
    m, n_c = inst.ports, inst.n_coflows
    wf = _work_flows(inst)
    F = wf.size
    fc = inst.flow_coflow[wf].astype(np.int64)
    v = inst.flow_volume[wf]
    D = deadlines(inst, p.E, p.phi)
    T = int(p.horizon) if p.horizon is not None else slot_horizon(inst, d)
    _check_size("time_indexed_lower_bound", inst, F, T, d, p.max_columns)
    t_min = np.floor(inst.release / d + _EPS).astype(np.int64) + 1
    t_max = np.full(n_c, T, dtype=np.int64)
    if math.isfinite(p.E):
        t_max = np.minimum(T, np.ceil(D / d - _EPS)).astype(np.int64)
    t_min = np.minimum(t_min, T)
    slots = np.arange(1, T + 1)
    mask = (slots[None, :] >= t_min[fc][:, None]) & (slots[None, :] <= t_max[fc][:, None])
    xf_local, xt0 = np.nonzero(mask)
    b = ModelBuilder("time_indexed_lower_bound")
    xcol = b.add_columns("x", xf_local.size, lb=0.0, ub=INF)
    ccost = inst.coflow_weight if p.objective == "weighted_completion" else 0.0
    c_ub = np.where(np.isfinite(D), D + _EPS * np.maximum(1.0, np.abs(D)), INF)
    Ccol = b.add_columns("C", n_c, lb=inst.release + inst.isolation_time, ub=c_ub, cost=ccost)
    b.add_rows("volume", F, xf_local, xcol, 1.0, lower=1.0, upper=1.0)
    src, dst = inst.flow_src[wf].astype(np.int64), inst.flow_dst[wf].astype(np.int64)
    inner = xt0 < T - 1
    for side, port, cap in (("capacity_in", src, inst.fabric.capacity_in),
                            ("capacity_out", dst, inst.fabric.capacity_out)):
        if T > 1:
            b.add_rows(side, m * (T - 1), (port[xf_local] * (T - 1) + xt0)[inner],
                       xcol[inner], v[xf_local][inner], upper=np.repeat(cap * d, T - 1))
    if p.objective != "weighted_completion":
        _objective_rows(b, inst, Ccol, p.objective)
    _chain_rows(b, inst, Ccol)
    _mean_busy_time_rows(b, inst, wf, fc, v, xf_local, xt0, xcol, Ccol, d)
    lp = b.build(meta={"horizon": T, "slot": d, "objective": p.objective})
    res = solve(lp, solve_params, backend=backend)
    comp = lp.values(res.x, "C").copy() if res.x is not None else None
    return ExactSolution(res, None, "time-indexed LP lower bound (fluid)", comp)

"""Slowdown feasibility (Theorem 2 of the CoFair paper: De Pellegrini et al., "Fair Coflow
Scheduling via Controlled Slowdown", IEEE TPDS 2022), the minimum slowdown ``E*`` by bisection,
and MPS (its Alg. 1).  The theorem's statement is recovered [R]; its appendix LP was not, so both
LPs below are ours [C] (tags: docs/families/index.md).  With a fixed ``E`` the slowdown constraint
(7), ``phi_j (C_j - r_j) <= E C_j^0``, is a deadline ``D_j = r_j + E C_j^0 / phi_j`` for every flow
of coflow ``j``; deciding whether all deadlines can be met is a linear feasibility problem.

- **LP-interval(E)** (default, exact for the fluid model): cut time at the distinct values of
  ``{r_j} u {D_j}`` (and 0) into ``I_k = (tau_{k-1}, tau_k]``; variables ``y_i(k) in [0, 1]``
  (the fraction of flow ``i`` served in ``I_k``) for the intervals inside ``[r_j, D_j]``::

      sum_k y_i(k) = 1                                          every flow i
      sum_{i through l} v_i y_i(k) <= B_l (tau_k - tau_{k-1})    every port l, interval k

  Serving ``v_i y_i(k)`` at constant rate over ``I_k`` meets every port capacity, so a
  feasible point is a schedule meeting all deadlines (returned, validate it); conversely any
  such schedule gives a feasible point.  Hence feasible <=> some fluid schedule meets all
  ``D_j``.  The capacity rows are divided by the time span ``tau_K - tau_0`` so that every
  coefficient is O(1) and the solver's absolute tolerance (1e-7) is relative to the span: on
  trace-like data isolation times range over five orders of magnitude, and unscaled LPs near
  ``E*`` took minutes.
- **LP-slot(E)** (the slotted form that matches the paper's complexity count): variables ``x_i(t)``
  for slots ``t = ceil(r_j / Delta) + 1 .. floor(D_j / Delta)``, ``sum_t x_i(t) = 1``, capacity (8).
  Feasible <=> PS(E) (the slotted MILP) is feasible.

``E*`` is the smallest feasible ``E``; :func:`min_slowdown` finds it by bisection.
:func:`mps` is our closed form [C] of the paper's MPS (``E_MPS <= E*``, batch with ``r = 0`` only;
an estimate, equal to ``E*`` on most instances but not all: see its docstring).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

from .backends import solve
from .model import LinearProgram, ModelBuilder, SolveParams, SolveResult, Status
from .slowdown_cg import ColGenFeasibility, ColGenParams, SlowdownColGen, interval_windows
from .timeindexed import coflow_preferences

__all__ = [
    "FeasibilityResult",
    "MPSResult",
    "SlowdownResult",
    "min_slowdown",
    "mps",
    "slowdown_feasibility",
    "slowdown_lp",
]

_EPS = 1e-9
#: default for the feasibility LPs on HiGHS: interior point.  They are degenerate near ``E*``
#: and badly scaled on trace-like data (isolation times from 1 to 1e5); there the simplex
#: took 20-120 s per LP where the interior point method took about 1 s.
IPM = SolveParams(options={"solver": "ipm"})


def _single_stage(inst: Instance, what: str) -> None:
    if inst.starts_after.size:
        raise ValueError(f"{what}: single-stage model; the instance has Starts-After edges "
                         "(the CoFair paper defines slowdown for single-stage coflows only)")


@dataclass(frozen=True, eq=False)
class SlowdownLP:
    """A built feasibility LP and what decodes its solution."""

    lp: LinearProgram
    form: str
    E: float
    breakpoints: np.ndarray
    var_flow: np.ndarray
    var_interval: np.ndarray
    rate_scale: np.ndarray  # per variable: volume / interval length per unit of the variable

    def schedule(self, x: np.ndarray, instance: Instance) -> Schedule:
        y = np.asarray(x, dtype=np.float64).copy()
        y[y < 1e-12] = 0.0
        amount = y * self.rate_scale[1]
        served = np.bincount(self.var_flow, weights=amount, minlength=instance.n_flows)
        scale = np.divide(instance.flow_volume, served, out=np.ones(instance.n_flows),
                          where=served > 0)
        keep = amount > 0
        k = self.var_interval[keep]
        rate = amount[keep] * scale[self.var_flow[keep]] / self.rate_scale[0][keep]
        return Schedule.from_segments(self.breakpoints, self.var_flow[keep], rate, k, k + 1,
                                      meta={"scheduler": f"slowdown_{self.form}", "E": self.E})


def slowdown_lp(instance: Instance, E: float, phi: Any = None, *, form: str = "interval",
                slot: float = 1.0) -> SlowdownLP:
    """The feasibility LP for slowdown bound ``E`` (module docstring); objective 0."""
    _single_stage(instance, "slowdown_lp")
    if form not in ("interval", "slot"):
        raise ValueError(f"form: expected 'interval' or 'slot', got {form!r}")
    if math.isnan(E) or E <= 0:
        raise ValueError(f"E: must be > 0, got {E}")
    inst = instance
    ph = coflow_preferences(inst, phi)
    wf = np.flatnonzero(inst.flow_volume > 0)
    fc = inst.flow_coflow[wf].astype(np.int64)
    v = inst.flow_volume[wf]
    rel = inst.release
    D = rel + E * inst.isolation_time / ph if math.isfinite(E) else \
        np.full(inst.n_coflows, rel.max(initial=0.0) + inst.isolation_time.sum())
    if form == "interval":
        _, pts, first0, last0 = interval_windows(inst, E, ph)
        # variable (flow, k) for intervals k = first .. last  (interval k = (pts[k-1], pts[k]])
        first, last = first0 + 1, last0 + 1
        length = np.diff(pts)
        bp = pts
    else:
        first = (np.ceil(rel[fc] / slot - _EPS) + 1).astype(np.int64)
        last = np.floor(D[fc] / slot + _EPS).astype(np.int64)
        K = int(max(last.max(initial=0), 1))
        bp = np.arange(K + 1, dtype=np.float64) * slot
        length = np.full(K, slot)
    cnt = np.maximum(last - first + 1, 0)
    var_f = np.repeat(np.arange(wf.size), cnt)
    var_k = np.repeat(first, cnt) + (np.arange(var_f.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    var_k0 = var_k - 1  # 0-based interval index
    nK = length.size
    # variables are fractions of each flow; capacity rows are divided by the time span, so
    # every coefficient and bound is O(1) and the solver's tolerance is relative to the span
    span = float(bp[-1] - bp[0]) if bp.size > 1 and bp[-1] > bp[0] else 1.0
    b = ModelBuilder(f"slowdown_{form}")
    y = b.add_columns("y", var_f.size, lb=0.0, ub=1.0)
    b.add_rows("volume", wf.size, var_f, y, 1.0, lower=1.0, upper=1.0)
    amount_per_var = v[var_f]
    m = inst.ports
    for side, port, cap in (("capacity_in", inst.flow_src[wf], inst.fabric.capacity_in),
                            ("capacity_out", inst.flow_dst[wf], inst.fabric.capacity_out)):
        port = port.astype(np.int64)
        b.add_rows(side, m * nK, port[var_f] * nK + var_k0, y, amount_per_var / span,
                   upper=(cap[:, None] * length[None, :]).ravel() / span)
    lp = b.build(meta={"E": E, "form": form})
    return SlowdownLP(lp, form, E, bp, wf[var_f], var_k0,
                      np.vstack([length[var_k0], amount_per_var]))


@dataclass(frozen=True, eq=False)
class FeasibilityResult:
    """Outcome of one slowdown feasibility LP: ``feasible`` is ``None`` when the solver could
    not decide (time limit, error); ``schedule`` meets every deadline when feasible."""

    E: float
    feasible: bool | None
    result: SolveResult
    schedule: Schedule | None = None


def slowdown_feasibility(instance: Instance, E: float, phi: Any = None, *,
                         form: str = "interval", slot: float = 1.0,
                         params: SolveParams | None = None,
                         backend: str = "highs") -> FeasibilityResult:
    """Decide whether every coflow can meet ``phi_j (C_j - r_j) <= E C_j^0`` (Theorem 2 of
    the CoFair paper, as LP-interval or LP-slot).  On HiGHS the default is its interior point solver
    (:data:`IPM`)."""
    model = slowdown_lp(instance, E, phi, form=form, slot=slot)
    if params is None and backend == "highs":
        params = IPM
    res = solve(model.lp, params, backend=backend)
    if res.status is Status.OPTIMAL and res.x is not None:
        return FeasibilityResult(E, True, res, model.schedule(res.x, instance))
    if res.status is Status.INFEASIBLE:
        return FeasibilityResult(E, False, res)
    return FeasibilityResult(E, None, res)


@dataclass(frozen=True)
class MPSResult:
    """``E_MPS`` and the MPS order ``sigma`` (coflow positions, first served first)."""

    E: float
    order: np.ndarray


def mps(instance: Instance, phi: Any = None) -> MPSResult:
    """Minimum Primal Slowdown (CoFair paper, Alg. 1; listing not recovered, reconstruction [C]).

    Sort coflows by ``C_j^0 / phi_j`` ascending (ties: position); with ``T(A_k)`` the port
    makespan of the first ``k`` coflows, ``E_MPS = max_k phi_{sigma(k)} T(A_k) /
    C^0_{sigma(k)}``.  O(N log N + flows) with running port loads.  Coflows with
    ``C_j^0 = 0`` are ignored.

    An estimate of ``E*``, not ``E*``: it is exact for the relaxation CoFair works in (the
    least ``E`` for which a sigma-order meets ``T(A_k) <= D_sigma(k)``), and a lower
    bound on ``E*`` for a batch (all ``r_j`` equal), but per-port prefix loads that fit do not
    mean the flows fit jointly (``tests/mps_gap.py``: ``E_MPS = 21/19``, ``E* = 5/4``).  On
    1,000 small random batches ``E* = E_MPS`` on 992, at most 1.131 x larger on the others
    (BENCHMARKS.md).  Exact when every flow crosses one port that is every coflow's
    bottleneck (e.g. one sender, equal capacities: then the MPS order served one coflow at a
    time finishes the ``k``-th at ``T(A_k)``); in general ``E* = E_MPS`` iff
    :func:`slowdown_feasibility` is feasible at ``E_MPS`` (the first LP of
    :func:`min_slowdown`).
    """
    _single_stage(instance, "mps")
    inst = instance
    ph = coflow_preferences(inst, phi)
    c0 = inst.isolation_time
    order = np.lexsort((np.arange(inst.n_coflows), c0 / ph))
    li, lo = inst.port_loads
    li = (li.multiply(1.0 / inst.fabric.capacity_in[None, :])).tocsr()
    lo = (lo.multiply(1.0 / inst.fabric.capacity_out[None, :])).tocsr()
    load_in = np.zeros(inst.ports)
    load_out = np.zeros(inst.ports)
    T = 0.0
    E = 0.0
    for j in order:
        for mat, load in ((li, load_in), (lo, load_out)):
            a, b = mat.indptr[j], mat.indptr[j + 1]
            idx = mat.indices[a:b]
            load[idx] += mat.data[a:b]
            if b > a:
                T = max(T, float(load[idx].max()))
        if c0[j] > 0:
            E = max(E, float(ph[j]) * T / float(c0[j]))
    return MPSResult(E, order)


@dataclass(frozen=True, eq=False)
class SlowdownResult:
    """Result of the bisection for ``E*``.

    ``E_star``: the smallest feasible ``E`` found (``E_hi`` at the end; within ``tol`` of the
    true minimum); ``E_lo``: the largest ``E`` shown infeasible (or the starting lower bound);
    ``lp_solves``: number of feasibility LPs; ``E_mps``: the MPS bound (NaN with releases);
    ``schedule``: a schedule meeting ``E_star`` (validate it); ``history``: ``(E, feasible)``.

    With ``method="colgen"`` also: ``E_lo_certified``, a proven lower bound on ``E*`` (the
    start ``max phi_j`` or, for a batch, ``E_MPS``; raised by every test with an infeasibility
    certificate); ``E_hi_realised``, the validated schedule's ``max phi_j (C_j - r_j) / C_j^0``
    (a proven upper bound, at most the solver's tolerance above ``E_star``); ``tests``: per
    feasibility test, the figures of
    :meth:`coflowopt.lp.slowdown_cg.ColGenFeasibility.summary`.
    """

    E_star: float
    E_lo: float
    E_hi: float
    lp_solves: int
    runtime: float
    E_mps: float
    schedule: Schedule | None
    history: list[tuple[float, bool | None]] = field(default_factory=list)
    E_lo_certified: float = math.nan
    E_hi_realised: float = math.nan
    tests: list[dict[str, Any]] = field(default_factory=list)


def min_slowdown(instance: Instance, phi: Any = None, *, rtol: float = 1e-3,
                 form: str = "interval", slot: float = 1.0, E_hi: float | None = None,
                 params: SolveParams | None = None, backend: str = "highs",
                 max_solves: int = 200, use_mps: bool = True, method: str = "lp",
                 colgen: ColGenParams | None = None) -> SlowdownResult:
    """The minimum feasible slowdown ``E*`` by bisection on the feasibility LP (bounds and stopping
    rule [C]).

    1. ``E_lo = max(max_j phi_j, E_MPS)`` for a batch (``E_MPS`` from :func:`mps`), else
       ``max_j phi_j``;
    2. ``E_hi``: the largest ``phi_j (C_j - r_j) / C_j^0`` of a feasible schedule, unless given:
       the better of the sequential schedule in MPS order and in release order;
    3. if ``E_lo`` is feasible return it; else bisect until ``E_hi - E_lo <= rtol * E_lo`` and
       return ``E_hi``: geometric midpoints ``sqrt(E_lo E_hi)`` while ``E_hi > 2 E_lo`` ([C];
       about ``log2 log2(E_hi / E_lo)`` LPs), then arithmetic ones
       (``ceil(log2((E_hi - E_lo) / (rtol E_lo)))`` LPs).

    ``use_mps=False`` starts from ``max_j phi_j`` even for a batch (to time the bisection
    itself: ``E_MPS`` is usually feasible at once).  Feasibility is decided to the LP solver's
    absolute tolerance (1e-7 in HiGHS), so ``E*`` is exact up to about ``rtol``.

    ``method="colgen"`` decides each ``E`` by column generation
    (:class:`~coflowopt.lp.slowdown_cg.SlowdownColGen`, settings ``colgen``; ``form``,
    ``slot``, ``params`` and ``backend`` do not apply): the same LP without building it whole,
    one master kept across the bisection for a batch, a certificate for every infeasible ``E``
    and a validated schedule for every feasible one (``E_lo_certified``, ``E_hi_realised``).
    Both lower starts are proven bounds: ``C_j - r_j >= C_j^0`` gives ``max phi_j``, and for a
    batch the coflows with ``D_j <= D_sigma(k)`` are the MPS prefix ``A_k``, whose busiest port
    needs ``T(A_k)`` before ``D_sigma(k)``.
    """
    _single_stage(instance, "min_slowdown")
    if method not in ("lp", "colgen"):
        raise ValueError(f"method: expected 'lp' or 'colgen', got {method!r}")
    inst = instance
    t0 = time.perf_counter()
    ph = coflow_preferences(inst, phi)
    work = inst.isolation_time > 0
    if not work.any():
        return SlowdownResult(1.0, 1.0, 1.0, 0, 0.0, math.nan, Schedule.empty(), [])
    batch = bool(np.allclose(inst.release, inst.release[0]))
    E_mps = mps(inst, ph).E if batch else math.nan
    lo = float(ph[work].max())
    if batch and use_mps:
        lo = max(lo, E_mps)
    if E_hi is None:
        from coflowopt.sequential import sequential_schedule
        from coflowopt.validate import validate

        hi = math.inf
        for order in (mps(inst, ph).order, None):  # MPS order; release order
            vs = validate(inst, sequential_schedule(inst, order))
            cct = vs.coflow_completion - inst.release
            hi = min(hi, float(np.max(ph[work] * cct[work] / inst.isolation_time[work])))
        hi = max(hi, lo)
    else:
        hi = float(E_hi)
    if method == "colgen":
        return _min_slowdown_colgen(inst, ph, lo, hi, E_hi is None, E_mps, rtol, max_solves,
                                    colgen or ColGenParams(), t0)
    history: list[tuple[float, bool | None]] = []

    def feasible(E: float) -> FeasibilityResult:
        r = slowdown_feasibility(inst, E, ph, form=form, slot=slot, params=params,
                                 backend=backend)
        history.append((E, r.feasible))
        return r

    first = feasible(lo)
    if first.feasible:
        return SlowdownResult(lo, lo, lo, 1, time.perf_counter() - t0, E_mps, first.schedule,
                              history)
    best = None
    top = feasible(hi)
    grow = 0
    while not top.feasible and grow < 20:  # safety: widen the bracket if needed
        lo, hi = hi, hi * 2.0
        top = feasible(hi)
        grow += 1
    best = top
    while hi - lo > rtol * lo and len(history) < max_solves:
        mid = _midpoint(lo, hi)
        r = feasible(mid)
        if r.feasible:
            hi, best = mid, r
        else:
            lo = mid
    return SlowdownResult(hi, lo, hi, len(history), time.perf_counter() - t0, E_mps,
                          best.schedule if best is not None else None, history)


def _midpoint(lo: float, hi: float) -> float:
    """Geometric steps while the bracket spans more than a factor 2 (a bracket from a
    sequential schedule can reach 1e5 on trace data), then arithmetic ones."""
    return math.sqrt(lo * hi) if hi > 2 * lo else 0.5 * (lo + hi)


def _min_slowdown_colgen(inst: Instance, ph: np.ndarray, lo: float, hi: float,
                         hi_validated: bool, E_mps: float, rtol: float, max_solves: int,
                         params: ColGenParams, t0: float) -> SlowdownResult:
    """:func:`min_slowdown` with ``method="colgen"``: the same bisection with every test by
    :class:`~coflowopt.lp.slowdown_cg.SlowdownColGen` (one oracle, so a batch keeps its master).

    A validated start ``hi`` is not tested again; the greedy EDF schedule (MPS order, the
    shared greedy allocator) is one more candidate for it.  An undecided test (time or round
    limit) counts as "not shown feasible": the search goes on above it, but only certified
    tests raise ``E_lo_certified``.  ``params.budget`` bounds the whole search."""
    from coflowopt.validate import validate

    work = inst.isolation_time > 0
    best_sched: Schedule | None = None
    hi_realised = math.inf
    if hi_validated:
        from coflowopt.sim.drive import order_schedule

        vs = validate(inst, order_schedule(inst, priority=inst.isolation_time / ph))
        cct = vs.coflow_completion - inst.release
        e = float(np.max(ph[work] * cct[work] / inst.isolation_time[work]))
        if e < hi:
            hi, best_sched = e, vs.schedule
        hi_realised = hi
    oracle = SlowdownColGen(inst, ph, params)
    tests: list[ColGenFeasibility] = []
    proven_lo = lo

    def test(E: float) -> ColGenFeasibility | None:
        left = params.budget - (time.perf_counter() - t0)
        if left <= 0 or len(tests) >= max_solves:
            return None
        r = oracle.test(E, time_limit=min(params.time_limit, left))
        tests.append(r)
        return r

    best = None
    r = test(lo) if hi - lo > rtol * lo else None  # a validated start may close the bracket
    if r is not None and r.feasible:
        hi, best = lo, r
    elif not hi_validated:
        r = test(hi)
        while r is not None and r.feasible is not True and len(tests) < 20:
            lo, hi = hi, 2 * hi  # widen the bracket (a given E_hi may be infeasible)
            r = test(hi)
        best = r if r is not None and r.feasible else None
    while hi - lo > rtol * lo:
        mid = _midpoint(lo, hi)
        r = test(mid)
        if r is None:
            break
        if r.feasible:
            hi, best = mid, r
        else:
            lo = mid
    if best is not None:
        best_sched = best.schedule
        hi_realised = min(hi_realised, best.realised_E)
    cert_lo = max([proven_lo] + [t.E for t in tests if t.feasible is False and t.certified])
    return SlowdownResult(hi, lo, hi, len(tests), time.perf_counter() - t0, E_mps, best_sched,
                          [(t.E, t.feasible) for t in tests], cert_lo, hi_realised,
                          [t.summary() for t in tests])

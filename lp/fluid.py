"""The exact fluid (preemptive) optimum of a tiny instance, by enumerating completion orders.

For a fixed order ``sigma`` in which the coflows complete, the best fluid schedule is an LP
(:func:`order_lp`): cut time at the completions, ``0 <= C_{sigma(1)} <= ... <= C_{sigma(N)}``,
into intervals of length ``tau_k >= 0``, and let ``y_i(k) >= 0`` be the volume of flow ``i``
served in interval ``k``::

    min   sum_k tau_k * (weight of everything not complete before interval k)
    sum_k y_i(k) = v_i                          only k <= pos(j(i)), and k > pos(u) for every
                                                Starts-After predecessor u of j(i)
    sum_{i through l} y_i(k) <= B_l tau_k       every port l, interval k

Serving ``y_i(k) / tau_k`` at constant rate over interval ``k`` is feasible (port rates sum to at
most ``B_l``), so every LP point is a schedule; conversely any fluid schedule completing in
order ``sigma`` is an LP point with the same completion times.  Hence
``min_sigma LP(sigma) = OPT_fluid`` exactly.  All coflows must share one release time (the
interval grid would otherwise need the releases too).  ``N!`` LPs: meant for ``N <= 6``.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

from .backends import solve
from .model import INF, LinearProgram, ModelBuilder, SolveParams, SolveResult, Status
from .timeindexed import OBJECTIVES, ExactSolution

__all__ = ["fluid_optimum", "order_lp"]


def _common_release(inst: Instance) -> float:
    rel = inst.release
    if rel.size and not np.allclose(rel, rel[0], rtol=0, atol=1e-12):
        raise ValueError("fluid_optimum: needs one common release time for all coflows "
                         f"(got {sorted(set(rel.tolist()))[:5]}...)")
    return float(rel[0]) if rel.size else 0.0


def order_lp(instance: Instance, order: Any, objective: str = "weighted_completion"
             ) -> LinearProgram:
    """The LP of the best fluid schedule whose coflows complete in ``order`` (module
    docstring).  Columns: ``tau`` (N), ``y`` (one per allowed (flow, interval) pair, with
    ``meta["y_flow"]``, ``meta["y_interval"]``)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: expected one of {OBJECTIVES}, got {objective!r}")
    inst = instance
    n = inst.n_coflows
    order = np.asarray(order, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    e = inst.starts_after.astype(np.int64)
    if e.size and np.any(pos[e[:, 0]] >= pos[e[:, 1]]):
        raise ValueError("order_lp: order puts a coflow before a Starts-After predecessor")
    first = np.zeros(n, dtype=np.int64)  # first interval (0-based) a coflow may use
    if e.size:
        np.maximum.at(first, e[:, 1], pos[e[:, 0]] + 1)
    wf = np.flatnonzero(inst.flow_volume > 0)
    fc = inst.flow_coflow[wf].astype(np.int64)
    lo, hi = first[fc], pos[fc]
    cnt = hi - lo + 1
    yf = np.repeat(np.arange(wf.size), cnt)
    yk = np.repeat(lo, cnt) + (np.arange(yf.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    # weight still "open" during interval k
    if objective == "weighted_completion":
        w_at = np.zeros(n)
        np.add.at(w_at, pos, inst.coflow_weight)
    elif objective == "weighted_jct":
        last = np.full(inst.n_jobs, -1, dtype=np.int64)
        np.maximum.at(last, inst.coflow_job, pos)
        w_at = np.zeros(n)
        has = last >= 0
        np.add.at(w_at, last[has], inst.job_weight[has])
    else:
        w_at = np.zeros(n)
        w_at[n - 1] = 1.0
    open_w = np.cumsum(w_at[::-1])[::-1]
    b = ModelBuilder("order_lp")
    tau = b.add_columns("tau", n, lb=0.0, ub=INF, cost=open_w)
    y = b.add_columns("y", yf.size, lb=0.0, ub=INF)
    b.add_rows("volume", wf.size, yf, y, 1.0, lower=inst.flow_volume[wf],
               upper=inst.flow_volume[wf])
    m = inst.ports
    for side, port, cap in (("capacity_in", inst.flow_src[wf], inst.fabric.capacity_in),
                            ("capacity_out", inst.flow_dst[wf], inst.fabric.capacity_out)):
        port = port.astype(np.int64)
        rows = np.r_[port[yf] * n + yk, np.arange(m * n)]
        cols = np.r_[y, np.tile(tau, m)]
        vals = np.r_[np.ones(yf.size), -np.repeat(cap, n)]
        b.add_rows(side, m * n, rows, cols, vals, upper=0.0)
    return b.build(meta={"y_flow": wf[yf], "y_interval": yk, "order": order})


def fluid_optimum(instance: Instance, objective: str = "weighted_completion", *,
                  max_coflows: int = 6, params: SolveParams | None = None,
                  backend: str = "highs") -> ExactSolution:
    """The exact fluid optimum by enumerating completion orders (``N!`` small LPs).

    Returns an :class:`ExactSolution` whose schedule attains the optimum (validate it); its
    ``meta`` holds the best ``order`` and the number of LPs solved.  Raises ``ValueError`` for
    more than ``max_coflows`` coflows or unequal release times.
    """
    inst = instance
    n = inst.n_coflows
    if n > max_coflows:
        raise ValueError(f"fluid_optimum: {n} coflows > max_coflows={max_coflows} "
                         f"({math.factorial(n)} orders)")
    r0 = _common_release(inst)
    if objective == "weighted_completion":
        const = r0 * float(inst.coflow_weight.sum())
    elif objective == "weighted_jct":
        const = r0 * float(inst.job_weight[np.unique(inst.coflow_job)].sum())
    else:
        const = r0
    t0 = time.perf_counter()
    e = inst.starts_after.astype(np.int64)
    best: tuple[float, Any, SolveResult, LinearProgram] | None = None
    n_lp = 0
    for perm in itertools.permutations(range(n)):
        order = np.asarray(perm, dtype=np.int64)
        if e.size:
            pos = np.empty(n, dtype=np.int64)
            pos[order] = np.arange(n)
            if np.any(pos[e[:, 0]] >= pos[e[:, 1]]):
                continue
        lp = order_lp(inst, order, objective)
        res = solve(lp, params, backend=backend)
        n_lp += 1
        if res.status is not Status.OPTIMAL:
            continue
        if best is None or res.objective < best[0] - 1e-12:
            best = (res.objective, order, res, lp)
    elapsed = time.perf_counter() - t0
    if best is None:
        res = SolveResult(Status.ERROR, math.nan, math.nan, math.nan, elapsed, None, backend,
                          "no order LP solved", None, False)
        return ExactSolution(res, None, "fluid optimum (order enumeration)")
    val, order, res, lp = best
    assert res.x is not None
    sched, comp = _decode(inst, lp, res.x, r0)
    out = SolveResult(Status.OPTIMAL, val + const, val + const, 0.0, elapsed, res.x, backend,
                      f"best of {n_lp} order LPs", None, False)
    return ExactSolution(out, sched, "fluid optimum (order enumeration)", comp,
                         {"order": order, "n_lp": n_lp})


def _decode(inst: Instance, lp: LinearProgram, x: np.ndarray, r0: float
            ) -> tuple[Schedule, np.ndarray]:
    n = inst.n_coflows
    order = lp.meta["order"]
    tau = np.maximum(lp.values(x, "tau"), 0.0)
    tau[tau < 1e-12] = 0.0
    bp = r0 + np.r_[0.0, np.cumsum(tau)]
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    comp = bp[pos + 1]
    yv = lp.values(x, "y").copy()
    yf, yk = lp.meta["y_flow"], lp.meta["y_interval"]
    yv[yv < 1e-12] = 0.0
    ok = (yv > 0) & (tau[yk] > 0)
    # rescale each flow to its exact volume (round-off of the solver)
    served = np.bincount(yf[ok], weights=yv[ok], minlength=inst.n_flows)
    scale = np.divide(inst.flow_volume, served, out=np.ones(inst.n_flows), where=served > 0)
    rate = yv[ok] * scale[yf[ok]] / tau[yk[ok]]
    sched = Schedule.from_segments(bp, yf[ok], rate, yk[ok], yk[ok] + 1,
                                   meta={"scheduler": "fluid_optimum", "order": order.tolist()})
    return sched, comp

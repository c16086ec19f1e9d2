"""Lower bounds computed from the instance alone (no schedule).

All bounds are in the instance's time unit and hold for every feasible schedule, including
preemptive fluid ones:

- isolation: coflow ``j`` cannot complete before ``ECT_j``, its release plus isolation time
  ``C_j^0`` propagated along Starts-After edges (:attr:`Instance.earliest_completion`);
- per-port single machine: on port ``l`` the coflows using it are jobs of processing time
  ``p_lj / B_l`` on one machine; Smith's rule (order by ``p / w``) minimizes their weighted
  completion sum with releases relaxed, so it bounds that part of the objective;
- jobs: ``C_j >= rho_j + max(T_j, Delta_j)`` (critical path and aggregate size, Definitions 2-3 of
  Shafiee and Ghaderi, IEEE/ACM ToN 2021), strengthened by coflow releases through ``ECT``;
- with ``lp=True``: the interval-indexed LP (geometric intervals, after Qiu, Stein and Zhong,
  SPAA 2015; :mod:`coflowopt.lp.interval`) on weighted completion and weighted JCT, solved by
  PDLP and reported by its *certified* value (a Lagrangian bound from the dual vector,
  :mod:`coflowopt.lp.certify`), valid however inexact or time-limited the solve.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from coflowopt.model import Instance

__all__ = [
    "BoundValue",
    "all_bounds",
    "coflow_completion_bound",
    "isolation_bound",
    "job_completion_bound",
    "lower_bounds",
    "makespan_bound",
    "smith_port_bound",
    "weighted_jct_bound",
]


def coflow_completion_bound(instance: Instance) -> np.ndarray:
    """Per coflow: ``C_j >= ECT_j`` (release + isolation time along Starts-After paths)."""
    return np.asarray(instance.earliest_completion)


def isolation_bound(instance: Instance, weights: np.ndarray | None = None) -> float:
    """``sum_j w_j C_j >= sum_j w_j ECT_j`` (absolute completion times; coflow weights by
    default)."""
    w = instance.coflow_weight if weights is None else np.asarray(weights, dtype=np.float64)
    return float(np.dot(w, instance.earliest_completion))


def smith_port_bound(instance: Instance, weights: np.ndarray | None = None) -> float:
    """Best per-port single-machine bound on ``sum_j w_j C_j`` (absolute completions).

    For port ``l``: ``sum_{j on l} w_j C_j >= Smith_l`` (WSPT on processing times
    ``p_lj / B_l``, releases relaxed) and ``C_j >= ECT_j`` for the others; the bound is the
    largest such sum over the ``2m`` ports.
    """
    inst = instance
    w = inst.coflow_weight if weights is None else np.asarray(weights, dtype=np.float64)
    ect = inst.earliest_completion
    base = float(np.dot(w, ect))
    best = base
    for loads, cap in ((inst.port_loads[0], inst.fabric.capacity_in),
                       (inst.port_loads[1], inst.fabric.capacity_out)):
        coo = loads.tocoo()
        pos = coo.data > 0
        c, port = coo.row[pos], coo.col[pos]
        if c.size == 0:
            continue
        p = coo.data[pos] / cap[port]
        wc = w[c]
        # WSPT per port: ascending p / w; zero-weight jobs go last, they cost nothing
        ratio = np.where(wc > 0, p / np.where(wc > 0, wc, 1.0), np.inf)
        order = np.lexsort((ratio, port))
        c, port, p, wc = c[order], port[order], p[order], wc[order]
        cum = np.cumsum(p)
        head = np.r_[True, port[1:] != port[:-1]]
        start = np.maximum.accumulate(np.where(head, np.arange(c.size), 0))
        completion = cum - (cum[start] - p[start])
        smith = np.bincount(port, weights=wc * completion, minlength=inst.ports)
        on_port_ect = np.bincount(port, weights=wc * ect[c], minlength=inst.ports)
        best = max(best, float((base - on_port_ect + smith).max()))
    return best


def job_completion_bound(instance: Instance) -> np.ndarray:
    """Per job: ``C_j >= max(max_{c in j} ECT_c, rho_j + Delta_j)``; with coflow releases equal
    to the job's this is ``rho_j + max(T_j, Delta_j)``."""
    inst = instance
    out = inst.job_release + inst.aggregate_size
    np.maximum.at(out, inst.coflow_job, inst.earliest_completion)
    return out


def weighted_jct_bound(instance: Instance) -> float:
    """``sum_j w_j C_j >= sum_j w_j (rho_j + max(T_j, Delta_j))`` over jobs."""
    return float(np.dot(instance.job_weight, job_completion_bound(instance)))


def makespan_bound(instance: Instance) -> float:
    """``max(min release + Delta, max_j job bound)``; ``Delta`` is the all-jobs aggregate size
    (busiest port's total load over its capacity)."""
    inst = instance
    if inst.n_coflows == 0:
        return 0.0
    li = np.bincount(inst.flow_src, weights=inst.flow_volume, minlength=inst.ports)
    lo = np.bincount(inst.flow_dst, weights=inst.flow_volume, minlength=inst.ports)
    delta = max(float((li / inst.fabric.capacity_in).max()),
                float((lo / inst.fabric.capacity_out).max()))
    return max(float(inst.release.min()) + delta, float(job_completion_bound(inst).max()))


@dataclass(frozen=True)
class BoundValue:
    """One lower bound: ``objective`` it bounds (a key of :func:`lower_bounds`), ``name``,
    ``value``, ``seconds`` to compute it, ``certified`` (closed forms: exact sums in float64;
    LPs: the certified Lagrangian value of :mod:`coflowopt.lp.certify`) and ``detail`` (the
    LP's primal value, gap, solver and status)."""

    objective: str
    name: str
    value: float
    seconds: float
    certified: bool
    detail: str = ""


def _combinatorial(inst: Instance) -> list[BoundValue]:
    out = []
    ones = np.ones(inst.n_coflows)
    for obj, name, fn in (
        ("weighted_completion", "isolation", lambda: isolation_bound(inst)),
        ("weighted_completion", "per-port Smith", lambda: smith_port_bound(inst)),
        ("sum_completion", "isolation", lambda: isolation_bound(inst, ones)),
        ("sum_completion", "per-port Smith", lambda: smith_port_bound(inst, ones)),
        ("weighted_jct", "critical path / aggregate size", lambda: weighted_jct_bound(inst)),
        ("makespan", "aggregate size", lambda: makespan_bound(inst)),
    ):
        t0 = time.perf_counter()
        v = float(fn())
        out.append(BoundValue(obj, name, v, time.perf_counter() - t0, True))
    return out


def _lp_bounds(inst: Instance, eps: float, solve_params: object) -> list[BoundValue]:
    from coflowopt.lp.interval import IntervalParams, interval_lower_bound

    out = []
    objectives = ["weighted_completion"]
    single = inst.n_jobs == inst.n_coflows and not inst.starts_after.size
    if not single:
        objectives.append("weighted_jct")
    w = np.asarray(inst.coflow_weight)
    for obj in objectives:
        b = interval_lower_bound(inst, IntervalParams(eps=eps, objective=obj),
                                 solve_params)  # type: ignore[arg-type]
        cb = b.bound
        detail = (f"L={b.intervals} intervals, {b.columns} columns, {b.nonzeros} nonzeros; "
                  f"primal {cb.primal_value:.6g}, gap {cb.gap:.2e}, {cb.solver} "
                  f"'{cb.message or cb.status.value}', {cb.iterations} iterations")
        keys = [obj]
        if obj == "weighted_completion" and np.all(w == 1.0):
            keys.append("sum_completion")  # unit weights: the same LP
        if obj == "weighted_completion" and single and np.array_equal(
                np.asarray(inst.job_weight)[np.asarray(inst.coflow_job)], w) and \
                np.array_equal(inst.job_release[inst.coflow_job], inst.release):
            keys.append("weighted_jct")  # one coflow per job, same weights and releases
        for k in keys:
            out.append(BoundValue(k, "interval LP", b.value, b.seconds, b.certified, detail))
    return out


def all_bounds(instance: Instance, *, lp: bool = False, eps: float = 0.1,
               solve_params: object = None) -> list[BoundValue]:
    """Every bound this module computes, one :class:`BoundValue` each (absolute completion
    times; ``sum_completion`` is ``sum_j C_j``).  ``lp=True`` adds the interval-indexed LP
    (grid ratio ``1 + eps``; ``solve_params``: a :class:`coflowopt.lp.SolveParams`, default
    PDLP at tolerance 1e-4)."""
    out = _combinatorial(instance)
    if lp and instance.n_coflows:
        out += _lp_bounds(instance, eps, solve_params)
    return out


def lower_bounds(instance: Instance, lp: bool = False, *, eps: float = 0.1,
                 solve_params: object = None) -> dict[str, float]:
    """All bounds on the usual objectives, by name: the best of :func:`all_bounds`.

    ``sum_cct``: unweighted sum of CCTs (``C_j - r_j``); ``weighted_completion``: coflow
    ``sum w_j C_j``; ``weighted_jct``: job ``sum w_j C_j``; ``makespan``.  ``lp=True`` adds the
    certified interval-LP bound (seconds to a few minutes at trace scale; ``lp=False`` takes
    microseconds to milliseconds).
    """
    inst = instance
    best: dict[str, float] = {}
    for b in all_bounds(inst, lp=lp, eps=eps, solve_params=solve_params):
        if b.certified and math.isfinite(b.value):
            best[b.objective] = max(best.get(b.objective, -math.inf), b.value)
    sum_c = best["sum_completion"]
    return {
        "sum_cct": sum_c - float(inst.release.sum()),
        "avg_cct": (sum_c - float(inst.release.sum())) / max(inst.n_coflows, 1),
        "weighted_completion": best["weighted_completion"],
        "weighted_jct": best["weighted_jct"],
        "makespan": best["makespan"],
    }

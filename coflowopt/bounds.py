"""Lower bounds computed from the instance alone (no schedule).

All bounds are in the instance's time unit and hold for every feasible schedule, including
preemptive fluid ones:

- isolation: coflow ``j`` cannot complete before ``ECT_j``, its release plus isolation time
  ``C_j^0`` propagated along Starts-After edges (:attr:`Instance.earliest_completion`);
- per-port single machine: on port ``l`` the coflows using it are jobs of processing time
  ``p_lj / B_l`` on one machine; Smith's rule (order by ``p / w``) minimizes their weighted
  completion sum with releases relaxed, so it bounds that part of the objective;
- jobs: ``C_j >= rho_j + max(T_j, Delta_j)`` (critical path and aggregate size, Definitions 2-3 of
  Shafiee and Ghaderi, IEEE/ACM ToN 2021), strengthened by coflow releases through ``ECT``.
"""

from __future__ import annotations

import numpy as np

from coflowopt.model import Instance

__all__ = [
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


def lower_bounds(instance: Instance) -> dict[str, float]:
    """All bounds on the usual objectives, by name.

    ``sum_cct``: unweighted sum of CCTs (``C_j - r_j``); ``weighted_completion``: coflow
    ``sum w_j C_j``; ``weighted_jct``: job ``sum w_j C_j``; ``makespan``.
    """
    inst = instance
    ones = np.ones(inst.n_coflows)
    sum_c = max(isolation_bound(inst, ones), smith_port_bound(inst, ones))
    return {
        "sum_cct": sum_c - float(inst.release.sum()),
        "avg_cct": (sum_c - float(inst.release.sum())) / max(inst.n_coflows, 1),
        "weighted_completion": max(isolation_bound(inst), smith_port_bound(inst)),
        "weighted_jct": weighted_jct_bound(inst),
        "makespan": makespan_bound(inst),
    }

"""Metrics of a validated schedule.

Every function takes a :class:`~coflowopt.validate.ValidSchedule`, the object :func:`validate`
returns, so no number is computed from a schedule that did not pass the validator.  Times are in
the instance's time unit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coflowopt.validate import ValidSchedule

__all__ = [
    "cct",
    "deadline_misses",
    "fct",
    "jains_index",
    "jct",
    "percentiles",
    "slowdown",
    "summary",
    "weighted_completion",
    "weighted_jct",
]


def fct(v: ValidSchedule) -> np.ndarray:
    """Flow completion time of each flow, measured from its coflow's release."""
    inst = v.instance
    return v.flow_completion - inst.release[inst.flow_coflow]


def cct(v: ValidSchedule) -> np.ndarray:
    """Coflow completion time ``CCT_j = C_j - r_j`` (``r_j`` the effective release)."""
    return v.coflow_completion - v.instance.release


def jct(v: ValidSchedule) -> np.ndarray:
    """Job completion time ``C_j - rho_j`` of each job."""
    return v.job_completion - v.instance.job_release


def weighted_completion(v: ValidSchedule, *, relative: bool = False) -> float:
    """``sum_j w_j C_j`` over coflows (absolute completions, the theory papers' objective), or
    ``sum_j w_j CCT_j`` with ``relative=True``."""
    c = cct(v) if relative else v.coflow_completion
    return float(np.dot(v.instance.coflow_weight, c))


def weighted_jct(v: ValidSchedule, *, relative: bool = False) -> float:
    """``sum_j w_j C_j`` over jobs (absolute), or of ``C_j - rho_j`` with ``relative=True``."""
    c = jct(v) if relative else v.job_completion
    return float(np.dot(v.instance.job_weight, c))


def slowdown(v: ValidSchedule) -> np.ndarray:
    """Slowdown against isolation ``S_j = CCT_j / C_j^0`` (>= 1); 1 for a coflow with
    ``C_j^0 = 0``."""
    iso = v.instance.isolation_time
    out = np.ones(v.instance.n_coflows)
    pos = iso > 0
    out[pos] = cct(v)[pos] / iso[pos]
    return out


def deadline_misses(v: ValidSchedule) -> np.ndarray:
    """Boolean per job: it has a deadline (absolute time) and completes after it, beyond the
    validator's time tolerance."""
    dl = v.instance.job_deadline
    has = ~np.isnan(dl)
    scale = max(1.0, abs(v.start), abs(v.end))  # breakpoints are non-decreasing
    slack = v.tolerance.time_rtol * scale + v.tolerance.atol
    miss = np.zeros(v.instance.n_jobs, dtype=bool)
    miss[has] = v.job_completion[has] > dl[has] + slack
    return miss


def percentiles(x: np.ndarray, qs: Sequence[float] = (50, 90, 95, 99)) -> dict[str, float]:
    """``{"p50": ..., ...}`` by linear interpolation (numpy's default)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return {f"p{q:g}": float("nan") for q in qs}
    vals = np.percentile(x, qs)
    return {f"p{q:g}": float(val) for q, val in zip(qs, vals, strict=True)}


def jains_index(x: np.ndarray) -> float:
    """Jain's fairness index ``(sum x)^2 / (n sum x^2)``, in ``[1/n, 1]``."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return float("nan")
    sq = float(np.dot(x, x))
    return 1.0 if sq == 0 else float(x.sum() ** 2 / (x.size * sq))


def summary(v: ValidSchedule) -> dict[str, float]:
    """The standard metric set of a validated schedule, as one flat dict."""
    c = cct(v)
    s = slowdown(v)
    out: dict[str, float] = {
        "coflows": float(v.instance.n_coflows),
        "avg_cct": float(c.mean()) if c.size else float("nan"),
        "sum_cct": float(c.sum()),
        "weighted_completion": weighted_completion(v),
        "weighted_cct": weighted_completion(v, relative=True),
        "makespan": float(v.coflow_completion.max(initial=v.start)),
        "avg_slowdown": float(s.mean()) if s.size else float("nan"),
        "max_slowdown": float(s.max(initial=1.0)),
        "jain_progress": jains_index(1.0 / s) if s.size else float("nan"),
    }
    out.update({f"cct_{k}": val for k, val in percentiles(c).items()})
    out.update({f"slowdown_{k}": val for k, val in percentiles(s).items()})
    if v.instance.n_jobs != v.instance.n_coflows or v.instance.starts_after.size:
        j = jct(v)
        out["avg_jct"] = float(j.mean()) if j.size else float("nan")
        out["weighted_jct"] = weighted_jct(v)
    if not np.isnan(v.instance.job_deadline).all():
        miss = deadline_misses(v)
        out["deadline_miss_rate"] = float(miss.sum() / (~np.isnan(v.instance.job_deadline)).sum())
    return out

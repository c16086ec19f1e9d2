"""The best lower bound this package can prove for an instance, by objective.

Every candidate is a relaxation of the fluid (preemptive) problem, so every one is a lower bound
on every feasible schedule's objective (absolute completion times); the best is their maximum:

- ``weighted_completion`` (coflows): the combinatorial bounds of :mod:`coflowopt.bounds`, the
  ordering LP, the time-indexed LP lower bound, the certified interval-indexed LP bound
  (:mod:`coflowopt.lp.interval`, after Qiu, Stein and Zhong, SPAA 2015) and, for single-stage
  instances, the concurrent-open-shop LP (the job-ordering LP (3) with one coflow per job);
- ``weighted_jct`` (jobs): :mod:`coflowopt.bounds`, the job-ordering LP (3), Tian et al.'s LP,
  the certified interval-indexed LP bound and the time-indexed LP lower bound;
- ``makespan``: :mod:`coflowopt.bounds` and the time-indexed LP lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from coflowopt import bounds as _bounds
from coflowopt.model import Instance

from .interval import IntervalParams, interval_lower_bound
from .model import SolveParams
from .ordering import job_ordering_lp, ordering_lp, tian_lp
from .timeindexed import OBJECTIVES, ModelTooLarge, TimeIndexedParams, time_indexed_lower_bound

__all__ = ["LowerBound", "best_lower_bound"]


@dataclass(frozen=True)
class LowerBound:
    """``value`` = the largest of ``candidates`` (name -> value; NaN when a solve failed or
    the model was too large to build), ``source`` its name, and ``skipped`` (name -> the
    one-line reason) for the LPs refused by their size."""

    value: float
    source: str
    candidates: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def best_lower_bound(instance: Instance, objective: str = "weighted_completion", *,
                     params: SolveParams | None = None, lps: bool = True) -> LowerBound:
    """The largest lower bound on ``objective`` (see the module docstring); ``lps=False``
    keeps only the combinatorial bounds (no solver)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: expected one of {OBJECTIVES}, got {objective!r}")
    inst = instance
    combinatorial = _bounds.lower_bounds(inst)
    cand: dict[str, float] = {"combinatorial": combinatorial[objective]}
    skipped: dict[str, str] = {}
    if lps:
        # the time-indexed LP grows with the horizon: past its size cap it is refused, and
        # the other bounds still stand (a refusal must not lose them)
        try:
            ti = time_indexed_lower_bound(inst, TimeIndexedParams(objective=objective),
                                          solve_params=params)
            cand["time-indexed LP"] = ti.value if ti.result.optimal else math.nan
        except ModelTooLarge as exc:
            cand["time-indexed LP"] = math.nan
            skipped["time-indexed LP"] = str(exc)
        if objective != "makespan" and inst.n_coflows:
            ib = interval_lower_bound(inst, IntervalParams(eps=0.1, objective=objective),
                                      params)
            cand["interval LP"] = ib.value if ib.certified else math.nan
        if objective == "weighted_completion":
            cand["ordering LP"] = ordering_lp(inst, params).value
            # LP (3) weighs jobs by job_weight: a bound on weighted CCT only where every
            # coflow is its own job and carries its job's weight
            if (inst.n_jobs == inst.n_coflows and not inst.starts_after.size
                    and np.array_equal(inst.job_weight[inst.coflow_job], inst.coflow_weight)):
                cand["concurrent-open-shop LP"] = job_ordering_lp(inst, params).value
        elif objective == "weighted_jct":
            cand["job-ordering LP (3)"] = job_ordering_lp(inst, params).value
            cand["Tian et al. LP"] = tian_lp(inst, params).value
    finite = {k: v for k, v in cand.items() if not math.isnan(v)}
    source = max(finite, key=lambda k: finite[k])
    return LowerBound(finite[source], source, cand, skipped)

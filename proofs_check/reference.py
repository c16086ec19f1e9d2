"""Reference values for ratios, and the one rule every factor check follows.

Names of the references (they appear in the ratio table):

- ``OPT (fluid, exact)``: the true (preemptive) optimum, by completion-order enumeration
  (:func:`coflowopt.lp.fluid_optimum`; equal releases, few coflows);
- ``LP lower bound``: the best LP/combinatorial lower bound (:func:`coflowopt.lp.best_lower_bound`);
  a ratio against it is *at least* the true ratio;
- ``OPT_slot (slotted MILP, >= OPT)``: the slotted MILP optimum, an *upper* bound on the true
  optimum, so a ratio against it is *at most* the true ratio.

Rule (:func:`factor_trial`): a ratio ``ALG / LB <= factor`` proves the guarantee on the instance;
otherwise the exact optimum decides; where only ``OPT_slot`` is available, ``ALG / OPT_slot >
factor`` proves a violation and anything in between is inconclusive (reported, not failed).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from coflowopt import metrics
from coflowopt.lp import SolveParams, Status, best_lower_bound, fluid_optimum
from coflowopt.lp.timeindexed import TimeIndexedParams, time_indexed_model
from coflowopt.model import Instance
from coflowopt.validate import InfeasibleSchedule, ValidSchedule, validate

from .registry import Trial

__all__ = [
    "EXACT",
    "LB",
    "RTOL",
    "SLOT",
    "exact_optimum",
    "factor_trial",
    "fluid_eligible",
    "g_of",
    "h_of",
    "objective_of",
    "run_or_stop",
    "run_validated",
]

RTOL = 1e-6
EXACT = "OPT (fluid, exact)"
LB = "LP lower bound"
SLOT = "OPT_slot (slotted MILP, >= OPT)"
MILP_PARAMS = SolveParams(time_limit=30.0)


def _log_over_loglog(x: float) -> float:
    # clamped to 1 where log log x <= 0 (x <= e), our choice [C]: the paper's bounds are O(.)
    if x <= math.e:
        return 1.0
    return math.log(x) / math.log(math.log(x))


def g_of(m: int) -> float:
    """``g(m) = log m / log log m`` of the DAG bounds (Shafiee and Ghaderi, ToN 2021), 1 for
    ``m <= e``."""
    return _log_over_loglog(float(m))


def h_of(m: int, mu: int) -> float:
    """``h(m, mu) = log(m mu) / log log(m mu)`` (ToN 2021, Theorem 3), 1 for ``m mu <= e``."""
    return _log_over_loglog(float(m) * float(mu))


def objective_of(v: ValidSchedule, objective: str) -> float:
    """The objective of a validated schedule (absolute completion times)."""
    if objective == "weighted_completion":
        return metrics.weighted_completion(v)
    if objective == "weighted_jct":
        return metrics.weighted_jct(v)
    if objective == "makespan":
        return float(v.coflow_completion.max(initial=v.schedule.start))
    raise ValueError(f"objective: unknown {objective!r}")


def run_validated(alg: Callable[..., Any], instance: Instance, objective: str, *,
                  seed: int = 0, **params: Any) -> tuple[float | None, ValidSchedule | None, str]:
    """Run ``alg`` and validate its schedule: ``(objective, valid schedule, "")``, or
    ``(None, None, reason)`` when the schedule is infeasible (the reason names the
    violation).  A registry entry runs through the run service (:func:`coflowopt.run`, which
    streams the validation); any other callable is called and its schedule validated."""
    from coflowopt.schedulers import SchedulerInfo
    from coflowopt.service import run

    try:
        if isinstance(alg, SchedulerInfo):
            v = run(instance, alg, params=params, seed=seed, keep_schedule=True).valid
        else:
            v = validate(instance, alg(instance, seed=seed, **params))
    except InfeasibleSchedule as exc:
        return None, None, f"infeasible schedule: {exc.violation}"
    return objective_of(v, objective), v, ""


def run_or_stop(algs: Any, name: str, instance: Instance, objective: str, **params: Any
                ) -> tuple[float | None, ValidSchedule | None, Trial | None]:
    """:func:`run_validated` for a check: ``(objective, valid schedule, None)``, or
    ``(None, None, trial)`` where the trial ends the check: skipped when ``algs[name]`` refuses
    the instance, failed when its schedule is infeasible."""
    from coflowopt.schedulers import UnsupportedInstance

    try:
        val, v, why = run_validated(algs[name], instance, objective, **params)
    except UnsupportedInstance as exc:
        return None, None, Trial(None, skipped=f"{name}: {exc}")
    if val is None:
        return None, None, Trial(False, message=why)
    return val, v, None


def fluid_eligible(instance: Instance, max_coflows: int = 5) -> bool:
    rel = instance.release
    return instance.n_coflows <= max_coflows and bool(np.allclose(rel, rel[0] if rel.size
                                                                  else 0.0))


def exact_optimum(instance: Instance, objective: str, *, max_fluid: int = 5,
                  horizon: int | None = None) -> tuple[float, str, bool]:
    """``(value, reference name, exact)``: the fluid optimum when eligible, else the slotted
    MILP optimum (``exact=False``: an upper bound on the optimum)."""
    if fluid_eligible(instance, max_fluid):
        sol = fluid_optimum(instance, objective)
        if sol.status is Status.OPTIMAL and sol.schedule is not None:
            v = validate(instance, sol.schedule)
            return objective_of(v, objective), EXACT, True
    model = time_indexed_model(instance, TimeIndexedParams(objective=objective, horizon=horizon))
    sol = model.solve(MILP_PARAMS)
    if sol.schedule is None:
        return math.nan, SLOT, False
    v = validate(instance, sol.schedule)
    return objective_of(v, objective), SLOT, False


def factor_trial(instance: Instance, alg_value: float, factor: float, objective: str, *,
                 max_fluid: int = 5, lb: float | None = None) -> Trial:
    """Judge ``alg_value <= factor * OPT`` by the rule of the module docstring.  The reported
    ratio uses the exact optimum when it is cheap (``fluid_eligible``), else the LP lower
    bound."""
    if lb is None:
        lb = best_lower_bound(instance, objective).value
    values = {"alg": alg_value, "lower_bound": lb}
    tol = RTOL * max(1.0, abs(alg_value))
    if alg_value < lb - tol:
        return Trial(False, alg_value / lb if lb > 0 else math.nan, LB, factor,
                     f"objective {alg_value:.6g} below the lower bound {lb:.6g}", values)
    if fluid_eligible(instance, max_fluid):
        opt, ref, _ = exact_optimum(instance, objective, max_fluid=max_fluid)
        values["opt"] = opt
        ratio = alg_value / opt if opt > 0 else 1.0
        ok = alg_value <= factor * opt + tol
        if alg_value < opt - tol:
            return Trial(False, ratio, ref, factor,
                         f"objective {alg_value:.6g} below the exact optimum {opt:.6g}", values)
        return Trial(ok, ratio, ref, factor,
                     "" if ok else f"ratio {ratio:.6g} > factor {factor:g} (vs {ref})", values)
    ratio_lb = alg_value / lb if lb > 0 else 1.0
    if alg_value <= factor * lb + tol:
        return Trial(True, ratio_lb, LB, factor, "", values)
    ub, ref, _ = exact_optimum(instance, objective, max_fluid=max_fluid)
    values["opt_slot"] = ub
    ratio_ub = alg_value / ub if ub > 0 else 1.0
    if ratio_ub > factor * (1 + RTOL):
        return Trial(False, ratio_ub, ref, factor,
                     f"ratio {ratio_ub:.6g} > factor {factor:g} even against {ref}", values)
    return Trial(None, ratio_lb, LB, factor,
                 f"ratio vs LP lower bound {ratio_lb:.6g} > {factor:g} but vs {ref} "
                 f"{ratio_ub:.6g}: inconclusive", values)

"""Checks of registered algorithms against their proven factors.

Each check names the schedulers it needs; it is skipped until they are registered in
:mod:`coflowopt.schedulers` (the lead's ``coflowopt.sim`` and DAG modules register themselves).
Every schedule is validated before its objective is used; the factor rule is
:func:`~coflowopt.proofs_check.reference.factor_trial`.

- ``sincronia``: 4 x OPT (single-stage 5.2); weighted completion, ``r = 0``;
- ``cofair``: 4 x OPT at ``E = inf`` (it is BSSI there, 4.1/4.3), and realised slowdown
  ``<= 2E / phi_j`` at ``E = 1.25 E_MPS`` ([INF], 4.3);
- ``approximate``: weighted completion ``<= 4 x`` the ordering LP's value with every release 0,
  ``<= 5 x`` with releases (Shafiee-Ghaderi, single-stage 8.2); the LP value is a lower bound
  on OPT, so this is stronger than ``<= factor x OPT``;
- ``bna``: exact, one coflow in ``eff(D)`` slots (dag-coflows 2.4); makespan;
- ``om-lp``: ``<= (2m + 1)`` x Tian et al.'s LP (dag-coflows 7.3); weighted JCT;
- ``dma``, ``gdm``: ``O(mu g(m))`` with no constant in the spec: validated, at least the lower
  bounds, ratio reported;
- ``lower-bound:<name>``: every registered algorithm's objective is at least the best lower
  bound (and the exact optimum where it is computed).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from coflowopt.lp import best_lower_bound, mps, ordering_lp, tian_lp
from coflowopt.model import Instance
from coflowopt.schedulers.registry import UnsupportedInstance

from . import instances as gen
from .reference import EXACT, LB, exact_optimum, factor_trial, fluid_eligible, run_validated
from .registry import Check, Trial, register_check, register_family

# a refusal (the instance is outside what the algorithm supports) is a skip, not a failure
_SOFT_ERRORS = (NotImplementedError, ImportError, UnsupportedInstance)


def _call(algs: Mapping[str, Any], name: str, inst: Instance, objective: str,
          **params: Any) -> tuple[float | None, Any, str, str | None]:
    """Run a scheduler; ``(value, valid, problem, skip reason)``."""
    try:
        val, v, why = run_validated(algs[name], inst, objective, **params)
    except _SOFT_ERRORS as exc:
        return None, None, "", f"{name}: {type(exc).__name__}: {exc}"
    return val, v, why, None


def _accepts(func: Any, param: str) -> bool:
    from coflowopt.schedulers import SchedulerInfo

    if isinstance(func, SchedulerInfo):
        return param in func.params_class.field_names()
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return False
    return param in sig.parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                          for p in sig.parameters.values())


def _single_r0(rng: Any, i: int) -> Instance:
    return gen.e2_instance() if i == 0 else gen.random_single_stage(rng, coflows=(2, 5))


@register_check("sincronia", instances=_single_r0, quick=25, full=200, factor="4",
                objective="weighted_completion", requires=("sincronia",),
                theorem="Sincronia (single-stage 5.2): order-preserving work-conserving "
                        "allocation of the BSSI order is within 4 x OPT (r = 0)")
def check_sincronia(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Sincronia's weighted completion time against the exact optimum / LP bound (factor 4)."""
    val, _, why, skip = _call(algs, "sincronia", inst, "weighted_completion")
    if skip:
        return Trial(None, skipped=skip)
    if val is None:
        return Trial(False, message=why)
    return factor_trial(inst, val, 4.0, "weighted_completion")


@register_check("cofair", instances=_single_r0, quick=20, full=150, factor="4",
                objective="weighted_completion", requires=("cofair",),
                theorem="CoFair (single-stage 4.1): 4 x OPT; with E = inf it is BSSI; "
                        "realised slowdown <= 2E/phi_j (4.3, [INF])")
def check_cofair(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """CoFair at ``E = inf`` against factor 4; at ``E = 1.25 E_MPS`` the slowdown bound."""
    alg = algs["cofair"]
    has_E = _accepts(alg, "E")
    params = {"E": math.inf} if has_E else {}
    val, _, why, skip = _call(algs, "cofair", inst, "weighted_completion", **params)
    if skip:
        return Trial(None, skipped=skip)
    if val is None:
        return Trial(False, message=why)
    trial = factor_trial(inst, val, 4.0, "weighted_completion")
    if not has_E:
        trial.message = (trial.message + "; " if trial.message else "") + \
            "cofair takes no E: checked at its default"
        return trial
    E = 1.25 * mps(inst).E
    val2, v2, why2, skip2 = _call(algs, "cofair", inst, "weighted_completion", E=E)
    if skip2 or val2 is None:
        if val2 is None and not skip2:
            trial.ok, trial.message = False, f"at E = {E:.4g}: {why2}"
        return trial
    from coflowopt.metrics import slowdown

    worst = float(slowdown(v2).max(initial=1.0))
    trial.values["max_slowdown_at_1.25_Emps"] = worst
    if worst > 2 * E * (1 + 1e-6):
        trial.ok = False
        trial.message = f"at E = {E:.4g} realised slowdown {worst:.4g} > 2E"
    return trial


def _single_mixed(rng: Any, i: int) -> Instance:
    """Even index: all releases 0 (factor 4); odd: releases in {0, 1, 2} (factor 5)."""
    if i == 0:
        return gen.e2_instance()
    return gen.random_single_stage(rng, coflows=(2, 5), releases=bool(i % 2))


@register_check("approximate", instances=_single_mixed, quick=20, full=150, factor="4 / 5",
                objective="weighted_completion", requires=("approximate",),
                theorem="Approximate (Shafiee-Ghaderi, single-stage 8.2): weighted CCT <= 4 x "
                        "the ordering LP with all releases 0, <= 5 x with releases")
def check_approximate(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Approximate's weighted completion against its own ordering LP (4 at r = 0, else 5)."""
    val, _, why, skip = _call(algs, "approximate", inst, "weighted_completion")
    if skip:
        return Trial(None, skipped=skip)
    if val is None:
        return Trial(False, message=why)
    lp = ordering_lp(inst)
    if not lp.optimal:
        return Trial(None, skipped=f"ordering LP not solved: {lp.result.status.value}")
    limit = 4.0 if not np.any(inst.release > 0) else 5.0
    ref = "ordering LP (Shafiee-Ghaderi)"
    values = {"alg": val, "ordering_lp": float(lp.value)}
    tol = 1e-6 * max(1.0, abs(val))
    if val < lp.value - tol:
        return Trial(False, val / lp.value, ref, limit,
                     f"objective {val:.6g} below the ordering LP {lp.value:.6g}", values)
    ratio = val / lp.value if lp.value > 0 else 1.0
    ok = val <= limit * lp.value + tol
    return Trial(ok, ratio, ref, limit,
                 "" if ok else f"ratio {ratio:.6g} > {limit:g} x the ordering LP", values)


@register_check("bna", instances=lambda rng, i: gen.random_coflow(rng), quick=20, full=200,
                factor="1 (exact)", objective="makespan", requires=("bna",),
                theorem="BNA (dag-coflows 2.4): one coflow is served in exactly eff(D)")
def check_bna(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """BNA's makespan on one coflow equals its effective size."""
    val, _, why, skip = _call(algs, "bna", inst, "makespan")
    if skip:
        return Trial(None, skipped=skip)
    if val is None:
        return Trial(False, message=why)
    eff = float(inst.isolation_time[0])
    ok = abs(val - eff) <= 1e-6 * max(1.0, eff)
    return Trial(ok, val / eff, "eff(D) (exact optimum)", 1.0,
                 "" if ok else f"makespan {val:.6g} != eff(D) {eff:.6g}", {"alg": val, "eff": eff})


@register_check("om-lp", instances=lambda rng, i: gen.random_dag_jobs(
                    rng, jobs=(1, 4), max_coflows=7, releases=bool(i % 2)),
                quick=15, full=100, factor="2m+1", objective="weighted_jct",
                requires=("om-lp",),
                theorem="Tian et al. (dag-coflows 7.1-7.3): (2M + 1)-approximation, "
                        "against their LP")
def check_om_lp(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """The registered O(m) baseline's weighted JCT / Tian LP <= 2m + 1."""
    val, _, why, skip = _call(algs, "om-lp", inst, "weighted_jct")
    if skip:
        return Trial(None, skipped=skip)
    if val is None:
        return Trial(False, message=why)
    lp = tian_lp(inst)
    limit = 2 * inst.ports + 1
    ratio = val / lp.value
    ok = ratio <= limit * (1 + 1e-6) and val >= lp.value * (1 - 1e-6)
    return Trial(ok, ratio, "Tian et al. LP", float(limit),
                 "" if ok else f"ratio {ratio:.6g} vs limit {limit}", {"alg": val, "lp": lp.value})


def _report_trial(inst: Instance, val: float, objective: str) -> Trial:
    """No proven constant: sanity ``val >= lower bound`` (and ``>= OPT`` when exact), ratio
    against the exact optimum when cheap, else against the LP lower bound."""
    lb = best_lower_bound(inst, objective).value
    tol = 1e-6 * max(1.0, abs(val))
    values = {"alg": val, "lower_bound": lb}
    if val < lb - tol:
        return Trial(False, val / lb, LB, None,
                     f"objective {val:.6g} below the lower bound {lb:.6g}", values)
    if fluid_eligible(inst):
        opt, ref, _ = exact_optimum(inst, objective)
        values["opt"] = opt
        ok = val >= opt - tol
        return Trial(ok, val / opt if opt > 0 else 1.0, ref, None,
                     "" if ok else f"objective {val:.6g} below OPT {opt:.6g}", values)
    return Trial(True, val / lb if lb > 0 else 1.0, LB, None, "", values)


@register_check("dma", instances=lambda rng, i: gen.sqrt_mu_fixture(2) if i == 0 else
                gen.random_dag_jobs(rng, releases=False), quick=15, full=100,
                factor="O(mu g(m))", objective="makespan", requires=("dma",),
                theorem="DMA (dag-coflows 4.3): O(mu g(m)) x OPT makespan; no constant given")
def check_dma(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """DMA's makespan: validated, >= the lower bounds; ratio reported (no constant to check)."""
    val, _, why, skip = _call(algs, "dma", inst, "makespan")
    if skip:
        return Trial(None, skipped=skip)
    if val is None:
        return Trial(False, message=why)
    return _report_trial(inst, val, "makespan")


@register_check("gdm", instances=lambda rng, i: gen.random_dag_jobs(
                    rng, releases=bool(i % 2)), quick=15, full=100, factor="O(mu g(m))",
                objective="weighted_jct", requires=("gdm",),
                theorem="G-DM (dag-coflows 6.3): O(mu g(m)) x OPT weighted JCT; no constant "
                        "given (its ordering step: see job-ordering-lp)")
def check_gdm(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """G-DM's weighted JCT: validated, >= the lower bounds; ratio reported."""
    val, _, why, skip = _call(algs, "gdm", inst, "weighted_jct")
    if skip:
        return Trial(None, skipped=skip)
    if val is None:
        return Trial(False, message=why)
    return _report_trial(inst, val, "weighted_jct")


def _sanity_pair(name: str, multi: bool) -> tuple[Any, Any]:
    objective = "weighted_jct" if multi else "weighted_completion"

    def instances(rng: Any, i: int) -> Instance:
        if multi:
            return gen.random_dag_jobs(rng, releases=bool(i % 2))
        return gen.random_single_stage(rng, releases=bool(i % 2))

    def evaluate(inst: Instance, algs: Mapping[str, Any]) -> Trial:
        val, _, why, skip = _call(algs, name, inst, objective)
        if skip:
            return Trial(None, skipped=skip)
        if val is None:
            return Trial(False, message=why)
        return _report_trial(inst, val, objective)

    return instances, evaluate


@register_family
def lower_bound_family(reg: Mapping[str, Any]) -> list[Check]:
    """``lower-bound:<name>``: every registered algorithm, on small instances (DAG jobs and
    weighted JCT if it handles multi-stage jobs, else single-stage coflows with releases and
    weighted completion): its validated objective is at least the best lower bound (and the
    exact optimum when cheap).  The ratio is reported, no factor is asserted."""
    out = []
    for name, info in reg.items():
        multi = bool(getattr(info, "job_objective", False))
        instances, evaluate = _sanity_pair(name, multi)
        out.append(Check(f"lower-bound:{name}", evaluate, instances, quick=10, full=60,
                         factor="-", objective="weighted_jct" if multi else
                         "weighted_completion", requires=(name,),
                         theorem="objective >= best lower bound (sanity of algorithm, "
                                 "validator and bounds)",
                         description=f"{name}: validated objective >= lower bound"))
    return out


__all__ = ["EXACT", "LB", "check_approximate", "check_bna", "check_cofair", "check_dma",
           "check_gdm", "check_om_lp", "check_sincronia", "lower_bound_family"]

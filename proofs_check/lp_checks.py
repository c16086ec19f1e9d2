"""Checks of the formulations themselves (they run with nothing but ``sequential`` registered).

- ``lp-sandwich``: ``LP lower bound <= OPT (fluid) <= OPT_slot <= any slotted schedule`` and
  ``LP relaxation <= OPT_slot``, single-stage, weighted completion time;
- ``dag-lp-sandwich``: the same for multi-stage jobs and weighted JCT, with the job-ordering LP
  (3) and Tian et al.'s LP among the lower bounds;
- ``job-ordering-lp-examples``: LP (3) of Shafiee and Ghaderi (IEEE/ACM ToN 2021) = 15 and 19 on
  our worked examples 2 and 4 [C], with the primal-dual orders and duals computed by us;
- ``job-ordering-lp``: separation = full enumeration of (3b); the primal-dual job order's
  ``sum w (R + D) <= 3 dual <= 3 LP*`` (kappa = 1/2);
- ``bssi-order-2-approx``: Sincronia's BSSI order costs at most twice the best order (brute
  force) and at most twice its dual (<= the concurrent-open-shop LP);
- ``sqrt-mu-gap``: the Omega(sqrt(mu)) fixture has slotted ``OPT = k^2`` by exact ILP while
  ``Delta = T = k``;
- ``slowdown-bisection``: ``E_MPS <= E*`` and the schedule at ``E*`` meets every slowdown bound;
- ``om-lp-rounding``: Tian et al.'s one-at-a-time rounding of their LP is within ``2m + 1`` of
  the LP;
- ``interval-lp-certified``: the interval-indexed LP (after Qiu, Stein and Zhong, SPAA 2015) is
  at most the exact fluid optimum (weighted CCT, and weighted JCT on DAG jobs); its certified
  PDLP value is at most the LP optimum (simplex), and so is the certified value of a PDLP solve
  stopped after 5 iterations.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from coflowopt.lp import (
    PDLP,
    IntervalParams,
    SolveParams,
    Status,
    best_lower_bound,
    bssi_order,
    fluid_optimum,
    interval_lower_bound,
    job_ordering_lp,
    min_slowdown,
    order_cost,
    primal_dual_job_order,
    slot_horizon,
    tian_lp,
    time_indexed_model,
)
from coflowopt.lp.ordering import coflow_port_loads
from coflowopt.lp.timeindexed import TimeIndexedParams
from coflowopt.model import Instance
from coflowopt.validate import InfeasibleSchedule, validate

from . import instances as gen
from .reference import (
    EXACT,
    LB,
    MILP_PARAMS,
    RTOL,
    SLOT,
    fluid_eligible,
    objective_of,
    run_validated,
)
from .registry import Trial, register_check

_SANDWICH = "LP relaxation <= OPT_slot; LP lower bound <= OPT <= OPT_slot <= slotted schedule"


def _tol(x: float) -> float:
    return 1e-6 * max(1.0, abs(x))


def _sandwich(inst: Instance, algs: Mapping[str, Any], objective: str) -> Trial:
    seq_val, v_seq, why = run_validated(algs["sequential"], inst, objective)
    if seq_val is None or v_seq is None:
        return Trial(False, message=f"sequential: {why}")
    # a horizon that holds the sequential schedule, so OPT_slot <= its rounded objective
    makespan = float(v_seq.coflow_completion.max(initial=0.0))
    T = max(slot_horizon(inst), math.ceil(makespan - 1e-9), 1)
    model = time_indexed_model(inst, TimeIndexedParams(objective=objective, horizon=T))
    milp = model.solve(MILP_PARAMS)
    relax = model.solve(relax=True)
    if milp.schedule is None:
        return Trial(False, message=f"slotted MILP: {milp.status} ({milp.result.message})")
    try:
        v_milp = validate(inst, milp.schedule)
    except InfeasibleSchedule as exc:
        return Trial(False, message=f"MILP schedule infeasible: {exc.violation}")
    opt_slot = objective_of(v_milp, objective)
    lb = best_lower_bound(inst, objective)
    # the sequential schedule counted per slot (its service in slot t ends by t)
    rounded_c = np.ceil(v_seq.coflow_completion - 1e-9)
    if objective == "weighted_completion":
        seq_round = float(np.dot(inst.coflow_weight, rounded_c))
    elif objective == "weighted_jct":
        jc = np.zeros(inst.n_jobs)
        np.maximum.at(jc, inst.coflow_job, rounded_c)
        seq_round = float(np.dot(inst.job_weight, jc))
    else:
        seq_round = float(rounded_c.max(initial=0.0))
    values = {"lower_bound": lb.value, "relaxation": relax.value, "opt_slot": opt_slot,
              "milp_objective": milp.value, "sequential": seq_val, "sequential_slotted": seq_round}
    problems = []
    if relax.result.status is not Status.OPTIMAL:
        problems.append(f"LP relaxation {relax.status}")
    elif relax.value > milp.value + _tol(milp.value):
        problems.append(f"LP relaxation {relax.value:.6g} > MILP {milp.value:.6g}")
    if lb.value > opt_slot + _tol(opt_slot):
        problems.append(f"lower bound {lb.value:.6g} ({lb.source}) > OPT_slot {opt_slot:.6g}")
    if lb.value > seq_val + _tol(seq_val):
        problems.append(f"lower bound {lb.value:.6g} ({lb.source}) > sequential {seq_val:.6g}")
    if opt_slot > milp.value + _tol(milp.value):
        problems.append(f"validated MILP schedule {opt_slot:.6g} > its model value "
                        f"{milp.value:.6g}")
    if milp.result.optimal:
        if abs(opt_slot - milp.value) > _tol(milp.value):
            problems.append(f"validated MILP schedule {opt_slot:.6g} != optimum {milp.value:.6g}")
        if opt_slot > seq_round + _tol(seq_round):
            problems.append(f"OPT_slot {opt_slot:.6g} > sequential per slot {seq_round:.6g}")
    if fluid_eligible(inst):
        fo = fluid_optimum(inst, objective)
        if fo.schedule is None:
            problems.append("fluid optimum: no solution")
        else:
            opt = objective_of(validate(inst, fo.schedule), objective)
            values["opt_fluid"] = opt
            if lb.value > opt + _tol(opt):
                problems.append(f"lower bound {lb.value:.6g} ({lb.source}) > OPT {opt:.6g}")
            if opt > opt_slot + _tol(opt_slot):
                problems.append(f"OPT {opt:.6g} > OPT_slot {opt_slot:.6g}")
    ratio = opt_slot / lb.value if lb.value > 0 else 1.0
    return Trial(not problems, ratio, LB, None, "; ".join(problems), values)


@register_check("lp-sandwich", instances=lambda rng, i: gen.random_single_stage(
                    rng, releases=bool(i % 2)),
                quick=30, full=150, objective="weighted_completion", requires=("sequential",),
                theorem=_SANDWICH)
def lp_sandwich(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Single-stage sandwich; ratio = OPT_slot / best LP lower bound."""
    return _sandwich(inst, algs, "weighted_completion")


@register_check("dag-lp-sandwich", instances=lambda rng, i: gen.random_dag_jobs(
                    rng, releases=bool(i % 2)),
                quick=20, full=100, objective="weighted_jct", requires=("sequential",),
                theorem=_SANDWICH + " (jobs; LP (3), Tian LP)")
def dag_lp_sandwich(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Multi-stage sandwich on weighted JCT; ratio = OPT_slot / best LP lower bound."""
    return _sandwich(inst, algs, "weighted_jct")


_EXAMPLES = {
    ("J1", "J2"): (15.0, [1, 0]),
    ("job0", "job1", "job2"): (19.0, [1, 2, 0]),
}


@register_check("job-ordering-lp-examples",
                instances=lambda rng, i: (gen.example2, gen.example4)[i % 2](),
                quick=2, full=2, objective="weighted_jct",
                theorem="worked examples [C]: LP (3) = 15 and 19 (ours, via (3c))")
def job_ordering_examples(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """LP (3) by separation and by enumeration, and the primal-dual order, on the examples."""
    expected, sigma = _EXAMPLES[tuple(str(x) for x in inst.job_id)]
    sep = job_ordering_lp(inst)
    enum = job_ordering_lp(inst, method="enumerate")
    pd = primal_dual_job_order(inst)
    problems = []
    for name, val in (("separation", sep.value), ("enumeration", enum.value),
                      ("primal-dual dual", pd.dual)):
        if not abs(val - expected) <= 1e-6 * expected:
            problems.append(f"{name} {val:.9g} != {expected:g}")
    if pd.order.tolist() != sigma:
        problems.append(f"primal-dual order {pd.order.tolist()} != {sigma}")
    return Trial(not problems, sep.value / expected, "hand-worked value", 1.0, "; ".join(problems),
                 {"lp": sep.value, "expected": expected, "dual": pd.dual})


@register_check("job-ordering-lp", instances=lambda rng, i: gen.random_dag_jobs(
                    rng, jobs=(2, 6), per_job=(1, 2), max_coflows=8, releases=bool(i % 2)),
                quick=30, full=200, factor="3", objective="weighted_jct",
                factor_source="C",  # the charging argument (after Ahmadi et al.) is ours
                theorem="separation = enumeration; dual <= LP*; sum w (R + D) <= 3 dual "
                        "(Shafiee-Ghaderi ToN 2021, Appendix; kappa = 1/2)")
def job_ordering_random(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Ratio = sum_k w (R_k + D_k) of the primal-dual order / LP (3) optimum (factor 3)."""
    sep = job_ordering_lp(inst)
    enum = job_ordering_lp(inst, method="enumerate")
    pd = primal_dual_job_order(inst, kappa=0.5)
    problems = []
    if not (sep.optimal and enum.optimal):
        return Trial(False, message=f"LP not solved: {sep.result.status}, {enum.result.status}")
    if abs(sep.value - enum.value) > _tol(enum.value):
        problems.append(f"separation {sep.value:.9g} != enumeration {enum.value:.9g}")
    if pd.dual > enum.value + _tol(enum.value):
        problems.append(f"dual {pd.dual:.9g} > LP* {enum.value:.9g} (weak duality)")
    if pd.bound_sum > pd.factor * pd.dual + _tol(pd.bound_sum):
        problems.append(f"sum w (R + D) = {pd.bound_sum:.6g} > {pd.factor:g} x dual "
                        f"{pd.dual:.6g}")
    ratio = pd.bound_sum / enum.value if enum.value > 0 else 1.0
    return Trial(not problems, ratio, "LP (3) optimum", pd.factor, "; ".join(problems),
                 {"lp": enum.value, "dual": pd.dual, "bound_sum": pd.bound_sum,
                  "rounds": float(sep.rounds), "cuts": float(sep.cuts)})


def best_order_cost(inst: Instance) -> tuple[float, np.ndarray]:
    """``min_sigma sum_k w_{sigma(k)} T(A_k)`` by brute force over all orders (numpy)."""
    n = inst.n_coflows
    p = coflow_port_loads(inst)
    w = inst.coflow_weight
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    pref = np.cumsum(p[perms], axis=1)  # (n!, n, 2m)
    cost = (w[perms] * pref.max(axis=2)).sum(axis=1)
    k = int(np.argmin(cost))
    return float(cost[k]), perms[k]


@register_check("bssi-order-2-approx",
                instances=lambda rng, i: gen.e2_instance() if i == 0 else
                gen.random_single_stage(rng, coflows=(2, 6), ports=(2, 4)),
                quick=50, full=300, factor="2", objective="sum_k w T(A_k) (relaxed order cost)",
                theorem="Sincronia (SIGCOMM 2018): the BSSI order is a 2-approximation of the "
                        "best order "
                        "(cost <= 2 dual <= 2 LP*)")
def bssi_two_approx(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Ratio = relaxed cost of the BSSI order / best order's (brute force)."""
    res = bssi_order(inst)
    cost = order_cost(inst, res.order)
    best, _ = best_order_cost(inst)
    same_weights = np.array_equal(inst.job_weight[inst.coflow_job], inst.coflow_weight)
    cos = job_ordering_lp(inst) if inst.n_jobs == inst.n_coflows and same_weights else None
    problems = []
    if cost > 2 * res.dual + _tol(cost):
        problems.append(f"cost {cost:.6g} > 2 x dual {res.dual:.6g}")
    if cos is not None and res.dual > cos.value + _tol(cos.value):
        problems.append(f"dual {res.dual:.6g} > concurrent-open-shop LP {cos.value:.6g}")
    if cos is not None and cos.value > best + _tol(best):
        problems.append(f"LP {cos.value:.6g} > best order cost {best:.6g}")
    if cost > 2 * best + _tol(cost):
        problems.append(f"cost {cost:.6g} > 2 x best order {best:.6g}")
    if [str(x) for x in inst.coflow_id] == ["C1", "C2", "C3", "C4"]:  # worked example E2
        if res.order.tolist() != [1, 3, 0, 2] or abs(cost - 28.0) > 1e-9:
            problems.append(f"E2: order {res.order.tolist()} cost {cost} != [1, 3, 0, 2], 28")
    ratio = cost / best if best > 0 else 1.0
    return Trial(not problems, ratio, "best order (brute force)", 2.0, "; ".join(problems),
                 {"cost": cost, "best": best, "dual": res.dual})


@register_check("sqrt-mu-gap", instances=lambda rng, i: gen.sqrt_mu_fixture(2 + i % 3),
                quick=2, full=3, factor="sqrt(mu)", objective="makespan",
                factor_source="C",  # our fixture; the paper's own was not recovered
                theorem="Shafiee-Ghaderi ToN 2021, the Omega(sqrt(mu)) gap example: OPT = k^2 = "
                        "sqrt(mu) max(Delta, T)")
def sqrt_mu_gap(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Exact slotted ILP on the fixture; ratio = OPT / max(Delta, T) (must equal k)."""
    k = inst.ports
    model = time_indexed_model(inst, TimeIndexedParams(objective="makespan"))
    sol = model.solve(MILP_PARAMS)
    if sol.schedule is None or not sol.result.optimal:
        return Trial(False, message=f"ILP not solved: {sol.status}")
    v = validate(inst, sol.schedule)
    opt = objective_of(v, "makespan")
    delta = float(inst.aggregate_size[0])
    T = float(inst.critical_path[0])
    problems = []
    if abs(delta - k) > 1e-9 or abs(T - k) > 1e-9:
        problems.append(f"Delta = {delta}, T = {T}, expected {k}")
    if abs(opt - k * k) > 1e-6:
        problems.append(f"OPT_slot = {opt} != k^2 = {k * k}")
    lb = best_lower_bound(inst, "makespan").value
    if lb > opt + 1e-6:
        problems.append(f"lower bound {lb} > OPT {opt}")
    ratio = opt / max(delta, T)
    return Trial(not problems, ratio, "max(Delta, T)", math.sqrt(inst.n_coflows),
                 "; ".join(problems), {"opt_slot": opt, "k": float(k), "lower_bound": lb})


@register_check("slowdown-bisection",
                instances=lambda rng, i: gen.e2_instance() if i == 0 else
                gen.random_single_stage(rng, coflows=(2, 6), ports=(2, 4), weights=False),
                quick=30, full=200, objective="max slowdown",
                theorem="CoFair MPS bound [C]: E_MPS <= E*; schedule at E* meets every bound")
def slowdown_bisection(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Ratio = E* / E_MPS (>= 1; not a proven factor: our random checks saw <= 1.0078)."""
    res = min_slowdown(inst)
    problems = []
    if res.schedule is None:
        return Trial(False, message="no schedule at E*")
    try:
        v = validate(inst, res.schedule)
    except InfeasibleSchedule as exc:
        return Trial(False, message=f"schedule at E* infeasible: {exc.violation}")
    from coflowopt.metrics import slowdown

    worst = float(slowdown(v).max(initial=1.0))
    if worst > res.E_star * (1 + 1e-6):
        problems.append(f"realised slowdown {worst:.6g} > E* {res.E_star:.6g}")
    if res.E_mps > res.E_star * (1 + 1e-6):
        problems.append(f"E_MPS {res.E_mps:.6g} > E* {res.E_star:.6g}")
    if [str(x) for x in inst.coflow_id] == ["C1", "C2", "C3", "C4"]:  # worked example E3
        if abs(res.E_mps - 1.6) > 1e-9 or abs(res.E_star - 1.6) > 1e-3 * 1.6:
            problems.append(f"E3: E_MPS {res.E_mps}, E* {res.E_star}, expected 1.6")
    ratio = res.E_star / res.E_mps if res.E_mps > 0 else 1.0
    return Trial(not problems, ratio, "E_MPS", None, "; ".join(problems),
                 {"E_star": res.E_star, "E_mps": res.E_mps, "lp_solves": float(res.lp_solves)})


@register_check("om-lp-rounding", instances=lambda rng, i: gen.random_dag_jobs(
                    rng, jobs=(1, 4), max_coflows=7, releases=bool(i % 2)),
                quick=20, full=150, factor="2m+1", objective="weighted_jct",
                requires=("sequential",),
                factor_source="C",  # our argument, on our reconstructed LP
                theorem="Tian et al. rounding [C]: one coflow at a time in LP order is within "
                        "(2m + 1) "
                        "of the Tian LP")
def om_lp_rounding(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Ratio = weighted JCT of the rounding / Tian LP; limit 2m + 1 (m source ports)."""
    lp = tian_lp(inst)
    if not lp.optimal or lp.order is None:
        return Trial(False, message=f"Tian LP: {lp.result.status}")
    val, _, why = run_validated(algs["sequential"], inst, "weighted_jct", order=lp.order)
    if val is None:
        return Trial(False, message=f"sequential in LP order: {why}")
    limit = 2 * inst.ports + 1
    ratio = val / lp.value
    ok = val <= limit * lp.value + _tol(val) and lp.value <= val + _tol(val)
    return Trial(ok, ratio, "Tian et al. LP", float(limit),
                 "" if ok else f"ratio {ratio:.6g} vs limit {limit}", {"alg": val, "lp": lp.value})


def _interval_instance(rng: np.random.Generator, i: int) -> Instance:
    if i % 2:
        return gen.random_dag_jobs(rng, releases=False)
    return gen.random_single_stage(rng, coflows=(2, 5))


@register_check("interval-lp-certified", instances=_interval_instance, quick=8, full=60,
                objective="weighted_completion",
                theorem="interval LP <= OPT (fluid, exact); certified PDLP value (full or "
                        "stopped after 5 iterations) <= LP optimum")
def interval_lp_certified(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Ratio = OPT / certified interval-LP bound (PDLP, tolerance 1e-4)."""
    objective = "weighted_completion" if inst.n_jobs == inst.n_coflows and \
        not inst.starts_after.size else "weighted_jct"
    ip = IntervalParams(eps=0.1, objective=objective)
    exact = interval_lower_bound(inst, ip, SolveParams(method="simplex"))
    pdlp = interval_lower_bound(inst, ip, PDLP)
    stopped = interval_lower_bound(inst, ip, SolveParams(method="pdlp", iteration_limit=5,
                                                         presolve=False))
    fo = fluid_optimum(inst, objective)
    if fo.schedule is None:
        return Trial(False, message="fluid optimum: no solution")
    opt = objective_of(validate(inst, fo.schedule), objective)
    lp_opt = exact.bound.primal_value
    problems = []
    if exact.bound.status is not Status.OPTIMAL:
        problems.append(f"interval LP (simplex): {exact.bound.status}")
    if lp_opt > opt + _tol(opt):
        problems.append(f"interval LP {lp_opt:.9g} > OPT {opt:.9g}")
    for name, b in (("PDLP", pdlp), ("PDLP stopped after 5 iterations", stopped)):
        if not b.certified:
            problems.append(f"{name}: not certified")
        elif b.value > lp_opt + _tol(lp_opt) * 1e-3:
            problems.append(f"{name}: certified {b.value:.9g} > LP optimum {lp_opt:.9g}")
    ratio = opt / pdlp.value if pdlp.value > 0 else 1.0
    return Trial(not problems, ratio, "certified interval-LP bound", None, "; ".join(problems),
                 {"opt": opt, "lp": lp_opt, "pdlp_certified": pdlp.value,
                  "stopped_certified": stopped.value})


__all__ = ["EXACT", "LB", "RTOL", "SLOT", "best_order_cost"]

"""Checks of Yosemite's offline order and of IAOA (Zhang, Shi, Yin, Wang, Guo, "Yosemite:
Efficient Scheduling of Weighted Coflows in Data Centers", draft 2017, Sec. 4.1 Alg. 1 and
Sec. 4.2 Alg. 2; the factor 2 from Mastrolilli, Queyranne, Schulz, Svensson, Uhan, Oper. Res.
Lett. 38, 2010).  Tags: [R] recovered, [C] reconstructed (docs/families/index.md).

- ``yosemite``: Alg. 1's order ``gamma`` has ``COS(gamma) <= 2 LB`` and ``LB <= OPT_COS``
  (``COS``: the relaxed concurrent-open-shop cost, ``LB``: its primal-dual lower bound,
  ``OPT_COS``: the best order, by brute force here), all releases 0 [R]; and its realised
  schedule (priority water-filling) completes each ``gamma(k)`` by ``2 L(prefix_k)`` and is at
  least ``OPT_COS`` [C];
- ``yosemite-realised``: the realised weighted CCT ``<= 4 x OPT`` [C] (``2 COS <= 4 OPT_COS``);
- ``iaoa``: no constant exists (one port pair, ``k`` unit coflows and one of volume ``M``:
  ratio ``-> k + 1`` [C]; instance 0 is ``k = 3``, ``M = 100``, ratio ``406 / 109``), so the
  ratio against the optimum is reported; sanity can fail: a valid schedule, at least
  ``sum_k w_k (r_k + max_p P_{p,k})`` and the LP lower bound, and at least ``OPT_COS`` where
  every release is 0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from coflowopt import CoflowSpec, build_instance
from coflowopt.lp import best_lower_bound
from coflowopt.model import Instance
from coflowopt.orders import coflow_port_loads

from . import instances as gen
from .reference import LB, exact_optimum, factor_trial, fluid_eligible, run_or_stop
from .registry import SCALED, SIZE_M, SIZE_MU, Trial, register_check

__all__ = ["check_iaoa", "check_yosemite", "check_yosemite_realised", "cos_optimum",
           "no_factor_instance", "worked_instance"]

RTOL = 1e-9
OPT_COS = "OPT_COS (all orders)"


def cos_optimum(instance: Instance) -> float:
    """``OPT_COS``: the least relaxed cost ``sum_k w_{gamma(k)} max_p sum_{l <= k}
    P_{p, gamma(l)}`` over all orders (``n!`` of them: small instances only)."""
    p = coflow_port_loads(instance)
    w = np.asarray(instance.coflow_weight, dtype=np.float64)
    best = math.inf
    for perm in itertools.permutations(range(instance.n_coflows)):
        load = np.zeros(p.shape[1])
        cost = 0.0
        for c in perm:
            load += p[c]
            cost += w[c] * float(load.max(initial=0.0))
        best = min(best, cost)
    return best if instance.n_coflows else 0.0


def no_factor_instance(k: int = 3, M: float = 100.0) -> Instance:
    """One port pair; coflow 0 of volume ``M`` and ``k`` unit coflows, weight 1, released at
    0: a size-blind order that puts coflow 0 first pays ``(k + 1) M + k (k + 1) / 2`` against
    ``OPT = M + k + k (k + 1) / 2`` [C]."""
    return build_instance(1, coflows=[CoflowSpec([(0, 0, float(M))], id="big")]
                          + [CoflowSpec([(0, 0, 1.0)], id=f"u{i}") for i in range(k)])


def worked_instance() -> Instance:
    """Three coflows at 0 on two unit port pairs [C]: A (weight 1) = in0->out1 volume 2 and
    in1->out1 volume 3; B (weight 2) = in0->out0 volume 4; C (weight 2) = in1->out0 volume 3.
    Alg. 1 gives ``gamma = [A, C, B]``, ``COS = 31``, ``LB = 25.5``; ``OPT_COS = OPT = 26``."""
    return build_instance(2, coflows=[
        CoflowSpec([(0, 1, 2.0), (1, 1, 3.0)], id="A", weight=1.0),
        CoflowSpec([(0, 0, 4.0)], id="B", weight=2.0),
        CoflowSpec([(1, 0, 3.0)], id="C", weight=2.0)])


def _single_r0(rng: Any, i: int) -> Instance:
    return worked_instance() if i == 0 else gen.random_single_stage(rng, coflows=(2, 6))


@register_check("yosemite", instances=_single_r0, quick=20, full=150, factor="2",
                objective="relaxed order cost COS", requires=("yosemite",),
                theorem="Yosemite Alg. 1 (Zhang et al. draft 2017, Sec. 4.1; the primal-dual "
                        "of Mastrolilli et al., ORL 2010): COS(gamma) <= 2 LB_dual <= 2 OPT_COS "
                        "(r = 0); [C]: realised C_gamma(k) <= 2 L(prefix_k), WCCT >= OPT_COS")
def check_yosemite(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Alg. 1's relaxed cost against ``2 LB`` and the brute-force ``OPT_COS``; the realised
    schedule against ``2 L(prefix_k)`` per coflow."""
    val, v, stop = run_or_stop(algs, "yosemite", inst, "weighted_completion")
    if stop is not None:
        return stop
    meta = v.meta
    lb, cos = float(meta["lb_dual"]), float(meta["cos"])
    order = np.asarray(meta["order"], dtype=np.int64)
    opt_cos = cos_optimum(inst)
    tol = 1e-6 * max(1.0, cos)
    problems = []
    if lb > opt_cos + tol:
        problems.append(f"LB_dual {lb:.6g} above OPT_COS {opt_cos:.6g}")
    if cos > 2 * lb + tol:
        problems.append(f"COS {cos:.6g} > 2 LB_dual {2 * lb:.6g}")
    if cos < opt_cos - tol:
        problems.append(f"COS {cos:.6g} below OPT_COS {opt_cos:.6g}")
    if val < opt_cos - tol:
        problems.append(f"realised {val:.6g} below OPT_COS {opt_cos:.6g}")
    # the realised completions against 2 L(prefix_k), recomputed from the loads here
    p = coflow_port_loads(inst)
    prefix = np.cumsum(p[order], axis=0).max(axis=1)
    done = v.coflow_completion[order]
    bad = np.flatnonzero(done > 2 * prefix * (1 + RTOL) + 1e-9)
    if bad.size:
        k = int(bad[0])
        problems.append(f"coflow at position {k} completes at {done[k]:.6g} > 2 L(prefix) "
                        f"{2 * prefix[k]:.6g}")
    ratio = cos / opt_cos if opt_cos > 0 else 1.0
    values = {"cos": cos, "lb_dual": lb, "opt_cos": opt_cos, "alg": val,
              "cos_over_lb": cos / lb if lb > 0 else 1.0}
    return Trial(not problems, ratio, OPT_COS, 2.0, "; ".join(problems), values)


@register_check("yosemite-realised", instances=_single_r0, quick=15, full=100, factor="4",
                objective="weighted_completion", requires=("yosemite",), factor_source="C",
                theorem="Yosemite Alg. 1 + priority water-filling (reconstructed [C]): weighted "
                        "CCT <= 2 COS(gamma) <= 4 OPT (r = 0)")
def check_yosemite_realised(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """Yosemite's realised weighted CCT against ``4 x OPT`` [C]."""
    val, _, stop = run_or_stop(algs, "yosemite", inst, "weighted_completion")
    if stop is not None:
        return stop
    return factor_trial(inst, val, 4.0, "weighted_completion")


def _iaoa_instances(rng: Any, i: int) -> Instance:
    if i == 0:
        return no_factor_instance()
    return gen.random_single_stage(rng, coflows=(2, 5), releases=bool(i % 2))


@register_check("iaoa", instances=_iaoa_instances, quick=20, full=150, factor="-",
                objective="weighted_completion", requires=("iaoa",), kind="report",
                factor_source="C", function="1",
                theorem="IAOA (Yosemite Alg. 2, Zhang et al. draft 2017, Sec. 4.2): no factor "
                        "exists ([C]: k unit coflows and one of volume M on one port pair, "
                        "ratio -> k + 1); sanity [C]: WCCT >= sum_k w_k (r_k + max_p P_pk), "
                        ">= LP lower bound, >= OPT_COS when r = 0")
def check_iaoa(inst: Instance, algs: Mapping[str, Any]) -> Trial:
    """IAOA's weighted completion / OPT, reported; sanity can fail."""
    val, _, stop = run_or_stop(algs, "iaoa", inst, "weighted_completion")
    if stop is not None:
        return stop
    tol = 1e-6 * max(1.0, val)
    p = coflow_port_loads(inst)
    w = np.asarray(inst.coflow_weight, dtype=np.float64)
    alone = float(np.dot(w, inst.release + p.max(axis=1, initial=0.0)))
    lb = best_lower_bound(inst, "weighted_completion").value
    problems = []
    if val < alone - tol:
        problems.append(f"objective {val:.6g} below sum_k w_k (r_k + max_p P) {alone:.6g}")
    if val < lb - tol:
        problems.append(f"objective {val:.6g} below the {LB} {lb:.6g}")
    values = {"alg": val, "lower_bound": lb, "isolation_bound": alone}
    if not np.any(inst.release != 0) and inst.n_coflows <= 6:
        opt_cos = cos_optimum(inst)
        values["opt_cos"] = opt_cos
        if val < opt_cos - tol:
            problems.append(f"objective {val:.6g} below OPT_COS {opt_cos:.6g}")
    ref, ratio = LB, val / lb if lb > 0 else 1.0
    if fluid_eligible(inst):
        opt, ref, _ = exact_optimum(inst, "weighted_completion")
        values["opt"] = opt
        ratio = val / opt if opt > 0 else 1.0
        if val < opt - tol:
            problems.append(f"objective {val:.6g} below OPT {opt:.6g}")
    values.update({SCALED: ratio, SIZE_M: float(inst.ports), SIZE_MU: 1.0})
    return Trial(not problems, ratio, ref, None, "; ".join(problems), values)

"""The LP-based ``O(m)``-approximation of Tian, Tian, Dai and Wang for the total weighted job
completion time of multi-stage jobs (INFOCOM 2018; Computer Networks 2019), the baseline of the
simulations of Shafiee and Ghaderi (*Scheduling Coflows with Dependency Graph*, IEEE/ACM ToN
2021; their refs. [11, 5]).  Tags: [R] recovered from the paper, [C] reconstructed by us
(docs/families/index.md).

[R] (Shafiee and Ghaderi's description and the INFOCOM 2018 abstract) LP on ordering variables,
coflows scheduled one at a time, ratio ``2M + 1`` (``M`` servers).  The LP and the rounding are
our reconstruction [C] (neither paper's LP could be read; modelled on the LP-OV-LS ordering LP of
Shafiee and Ghaderi, IEEE/ACM ToN 2018, plus the DAG):

1. Solve the LP (:func:`coflowopt.lp.tian_lp`): ``min sum_j w_j C_j`` subject to (T1)
   ``C_c >= rho_{j(c)} + eff_c``, (T2) ``C_c >= C_u + eff_c`` per Starts-After edge ``u -> c``,
   (T3) ``C_c >= L_ic + sum_{c' != c} L_ic' delta_{c'c}`` per port ``i``, (T4) ``delta_{cc'} +
   delta_{c'c} = 1``, (T5) ``C_j >= C_c``; ``fix_precedence`` fixes ``delta_{uc} = 1`` for every
   ancestor ``u`` of ``c`` [C: optional strengthening].
2. Sort the coflows by their LP value ``C_c`` (ties: topological order, then position).  Every
   predecessor comes first (``C_c >= C_u + eff_c > C_u`` by (T2); asserted).
3. One coflow at a time in that order, each by BNA
   (:func:`~coflowopt.schedulers.dag.bna.bna_plan`) in ``eff_c`` slots, starting at
   ``max(end of the previous coflow, the coflow's release slot)``.

Why ``2M + 1`` [C]: by (T3) the load of the coflows sorted up to ``c`` on any port is at most
``2 C_c``, and ``eff`` of a coflow is at most the sum of its ``M`` source loads, so coflow ``c``
ends by ``(2M + 1) C_c``.  Units: unit slots (:mod:`~coflowopt.schedulers.dag.slots`); with
integer volumes and ``quantum = 1`` on capacity-1 ports the slotted schedule is the one the
bound speaks of.

``backfill=True`` adds the backfilling rule [C] of :mod:`~coflowopt.schedulers.dag.backfill` (coflow
priority = LP order), a variant reported separately.  An LP that is not solved (time limit, solver
error) ends the run with one line (:class:`OMLPError`, a
:class:`~coflowopt.schedulers.SolverStopped`), never a traceback from the solver.  The run says its
phases and the LP's size (:mod:`~coflowopt.schedulers.lp_phases`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.lp import LPBound, tian_lp
from coflowopt.lp.model import SolveParams
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedulers.dag.slots import (
    SlotPlan,
    run_plan,
    slot_demand,
    uniform_fabric_refusal,
)
from coflowopt.schedulers.lp_phases import Phases, value_above
from coflowopt.schedulers.registry import SolverStopped
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["OMLPError", "OMLPParams", "om_lp_plan", "om_lp_supports", "run_om_lp"]

_I64 = np.int64


class OMLPError(SolverStopped):
    """The Tian et al. LP was not solved (time limit, infeasible, solver error): one line."""


@dataclass(frozen=True)
class OMLPParams(Params):
    """``fix_precedence``: fix ``delta_{uc} = 1`` for every ancestor ``u`` of ``c`` [C];
    ``backfill``: apply the backfilling rule [C] to the sequential plan; ``quantum``:
    volume per slot; ``time_limit``: seconds for the LP solve (``inf``: none);
    ``max_nonzeros``: refuse (one line) an LP with more constraint nonzeros than this, before
    building it (about ``ports with load x C^2`` for ``C`` coflows; ~50 bytes each in the
    solver, so the default 5e7 is about 2.5 GB); ``lp_solver``: HiGHS's method, ``choose``
    (HiGHS decides: simplex here) or ``ipm`` (interior point with crossover: the Tian et al.
    LP of the default ``coflowopt gen ggen`` instance, 397 coflows, in 51 s on one core, where
    the default method had not solved it after 10 minutes, issue 26)."""

    fix_precedence: bool = False
    backfill: bool = False
    quantum: float = 1.0
    time_limit: float = 600.0
    max_nonzeros: float = 5e7
    lp_solver: Literal["choose", "ipm", "simplex"] = "choose"

    def check(self) -> None:
        if not (self.quantum > 0 and math.isfinite(self.quantum)):
            raise ValueError(f"quantum: must be finite and > 0, got {self.quantum}")
        if not self.time_limit > 0:
            raise ValueError(f"time_limit: must be > 0 seconds, got {self.time_limit}")
        if not self.max_nonzeros > 0:
            raise ValueError(f"max_nonzeros: must be > 0, got {self.max_nonzeros}")


def om_lp_supports(instance: Instance) -> str | None:
    """Why the ``O(m)`` baseline cannot run ``instance`` (unequal port capacities), else
    ``None``."""
    return uniform_fabric_refusal(instance)


def lp_nonzeros(instance: Instance) -> tuple[float, int]:
    """The Tian et al. LP's constraint nonzeros, estimated before it is built (about ``ports
    with load x C^2``), and that number of loaded ports."""
    inst = instance
    busy = np.union1d(inst.flow_src[inst.flow_volume > 0],
                      inst.flow_dst[inst.flow_volume > 0] + inst.ports).size
    return float(busy) * inst.n_coflows ** 2, int(busy)


def solve_lp(instance: Instance, params: OMLPParams, phases: Phases | None = None) -> LPBound:
    """The Tian et al. LP of ``instance``; :class:`OMLPError` when it is too large to build
    (``max_nonzeros``) or not solved (``time_limit``, solver error).  ``phases`` hears the
    model's size and the solve."""
    C = instance.n_coflows
    nnz, busy = lp_nonzeros(instance)
    if nnz > params.max_nonzeros:
        raise OMLPError(f"om-lp: the Tian et al. LP on {C} coflows would have about {nnz:.2g} "
                        f"constraint nonzeros ({busy} loaded ports x {C}^2), over max_nonzeros "
                        f"= {params.max_nonzeros:.2g}; it is not built (raise max_nonzeros, "
                        f"about 50 bytes each, to build it: -p max_nonzeros={value_above(nnz)})")
    say = phases or Phases("om-lp", None, 0.0)
    say(f"building the Tian et al. LP on {C} coflows (about {nnz:.2g} nonzeros)")
    opts = None if params.lp_solver == "choose" else {"solver": params.lp_solver}
    lp = tian_lp(instance, SolveParams(time_limit=params.time_limit, options=opts),
                 fix_precedence=params.fix_precedence,
                 on_model=lambda m: say.model("Tian et al. LP", m, params.time_limit,
                                              f"HiGHS {params.lp_solver}"))
    res = lp.result
    if not lp.optimal or lp.order is None:
        why = f": {res.message}" if res.message else ""
        hint = ("; raise time_limit to solve it" + (" (or try lp_solver=ipm)" if
                params.lp_solver != "ipm" else "")
                if res.status.value in ("time_limit", "feasible") else "")
        raise OMLPError(f"om-lp: the Tian et al. LP on {C} coflows was not solved "
                        f"({res.status.value} after {res.runtime:.1f} s, time_limit = "
                        f"{params.time_limit:g} s){why}{hint}".replace("\n", " "))
    say(f"LP solved in {res.runtime:.1f} s ({res.status.value}, value {lp.value:.6g})")
    return lp


def om_lp_plan(instance: Instance, order: np.ndarray, demand: np.ndarray,
               release_slot: np.ndarray) -> tuple[SlotPlan, np.ndarray]:
    """The sequential plan ([C], module docstring step 3): coflows in ``order``, each by BNA from
    ``max(previous end, its release slot)``.  Returns the plan and each coflow's start slot."""
    from coflowopt.schedulers.dag.bna import bna_plan

    inst = instance
    order = np.asarray(order, dtype=_I64)
    C = inst.n_coflows
    if order.size != C or not np.array_equal(np.sort(order), np.arange(C)):
        raise ValueError(f"om_lp_plan: order must be a permutation of the {C} coflows")
    pos = np.empty(C, dtype=_I64)
    pos[order] = np.arange(C)
    e = inst.starts_after
    if e.size:
        bad = np.flatnonzero(pos[e[:, 0]] >= pos[e[:, 1]])
        assert not bad.size, (f"om-lp: coflow {inst.coflow_id[e[bad[0], 1]]!s} comes before its "
                              f"predecessor {inst.coflow_id[e[bad[0], 0]]!s} in the LP order")
    plans = []
    starts = np.zeros(C, dtype=_I64)
    end = 0
    for c in order.tolist():
        p = bna_plan(inst, np.array([c], dtype=_I64), demand)
        s = max(end, int(release_slot[c]))
        starts[c] = s
        plans.append(p.shifted(s))
        end = s + p.makespan
    return SlotPlan.concat(plans), starts


def run_om_lp(instance: Instance, params: OMLPParams, sink: RateSink, *, seed: Any = None,
              progress: Any = None) -> Outcome:
    """Tian et al.'s ``O(m)`` baseline: their LP, coflows one at a time in LP order by BNA
    (with ``backfill``: then the backfilling rule [C]).  Deterministic (``seed`` unused)."""
    from coflowopt.schedulers.dag.gdm import release_slots

    why = om_lp_supports(instance)
    if why is not None:
        raise ValueError(f"om-lp cannot run this instance: {why}")
    phases = Phases("om-lp", progress, lp_nonzeros(instance)[0])
    lp = solve_lp(instance, params, phases)
    phases("rounding: coflows one at a time in LP order, each by BNA"
           + (", then backfilling" if params.backfill else ""))
    demand = slot_demand(instance, params.quantum)
    rel = release_slots(instance, params.quantum)
    plan, _ = om_lp_plan(instance, lp.order, demand, rel)
    meta: dict[str, Any] = {"scheduler": "om-lp", "params": params.to_dict(),
                            "lp_value": float(lp.value), "lp_seconds": lp.result.runtime,
                            "base_makespan_slots": plan.makespan}
    if params.backfill:
        from coflowopt.schedulers.dag.backfill import backfill

        rank = np.empty(instance.n_coflows, dtype=_I64)
        rank[np.asarray(lp.order, dtype=_I64)] = np.arange(instance.n_coflows)
        plan = backfill(instance, plan, rank, demand, rel)
    meta["makespan_slots"] = plan.makespan
    return run_plan(instance, plan, quantum=params.quantum, sink=sink, meta=meta)

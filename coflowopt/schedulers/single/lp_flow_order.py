"""LP flow order: flows ordered by their LP completion times and served greedily, after Chi-Yeh
Chen, *Improved Approximation Algorithms for Minimizing the Total Weighted Completion Time of
Coflows*, arXiv 2311.11296 (v3, 2023).

Tags: [R] recovered from the paper, [C] reconstructed by us (legend: docs/families/index.md).
Recovered [R Abs]: an LP gives a *flow* scheduling order (earlier work orders coflows); claimed
ratios 3 (arbitrary releases) and 2 + 1/LB (zero releases) with a time-indexed LP, 3 + eps and
2 + eps with an interval-indexed one.  The model, the LP and the schedule are ours [C]:

1. **Unit edges** (:func:`coflowopt.lp.edge.unit_edges`): flows of a coflow on one ``(src,
   dst)`` merged, ``d_f = ceil(v_f / q)`` slots of ``q / c`` (``quantum``; automatic by
   default: 1 on integer volumes, exact), slot releases.  The guarantees below are on the
   slotted instance; with a quantum that rounds volumes up, the greedy still serves the real
   volumes, and the bounds are proved for integer data only.
2. **LP-T** (:mod:`coflowopt.lp.flow_order`): one completion profile per flow, port rows
   ``sum d_f X_{f,t} <= t``, coflow links ``C_k >= C_f`` and, with ``lb_cut``, the cut ``C_k >=
   r_k + L_k`` (whether Chen's LP has it is unknown; it decides the
   counterexample below).
3. **Order**: flows by ``(C_f, C_k, k, f)`` ascending, LP values rounded to 1e-9 relative.
4. **Greedy (G1)**: at every instant the flows, highest priority first, each take the port
   rate its two ports have left (all or nothing on unit ports), once their coflow is released:
   the shared order-to-schedule function (:func:`coflowopt.sim.order_schedule`, order-preserving
   greedy allocation) run on the instance with each flow as its own coflow, so the flow order
   is the coflow order there.  With integer volumes and releases every event falls on an
   integer time, so this is the slot-by-slot priority greedy exactly.

**Proven for this reconstruction** [C]: Lemma P (every port's load of the flows with
``C_g^LP <= C_f^LP`` is ``<= 2 C_f^LP - 1``) and Lemma G (``C_f <= r_f + d_f + load_u(B_f) +
load_v(B_f)``, ``B_f`` the flows ahead of ``f``) give ``C_k <= 4 C_k^LP - 3`` without releases
and ``<= 5 C_k^LP - 4`` with them, hence ``ALG <= 4 LP`` / ``5 LP`` (Shafiee-Ghaderi's factors).
On LP-I (``lp="interval-indexed"``, :mod:`coflowopt.lp.edge_interval`, grid ratio ``1 + eps``)
the same route gives ``C_k <= 4 (1+eps) C_k^LP - 1 - 4 eps`` / ``(5 + 4 eps) C_k^LP - 2 - 4 eps``
(Theorem 3 there), with ``LP-I <= LP-T <= OPT`` (Theorem 1).
Chen's 3 and 2 + 1/LB are **contested** reference lines: on our Ex 4 (zero releases)
this reconstruction reaches ``ALG / OPT = 19W + 27 / (8W + 31)``, 2.369 at ``W = 1000`` > 2.2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.lp.edge import (
    UnitEdges,
    capacity_refusal,
    edges_for,
    quantum_delta,
    run_refusal,
)
from coflowopt.lp.edge_interval import (
    flow_order_interval_size,
    flow_order_offset,
    interval_size_refusal,
    proven_factor,
    solve_flow_order_interval_lp,
)
from coflowopt.lp.flow_order import FlowOrderLP, flow_order_lp_size, solve_flow_order_lp
from coflowopt.lp.model import SolveParams
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedule import Schedule
from coflowopt.schedulers.registry import SolverStopped
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["LPFlowOrderParams", "flow_priority", "run_lp_flow_order", "supports_lp_flow_order"]


class FlowOrderLPRefused(SolverStopped, RuntimeError):
    """LP-T too large (``max_nonzeros``), not available (``lp``) or not solved
    (``time_limit``); one line says which."""


@dataclass(frozen=True)
class LPFlowOrderParams(Params):
    """``lp``: ``"time-indexed"`` (LP-T) or ``"interval-indexed"`` (LP-I of
    :mod:`coflowopt.lp.edge_interval`); ``lp_eps``: LP-I's grid ratio ``1 + eps`` (0.5, the
    specification's default); ``lb_cut``: add ``C_k >= r_k + L_k`` (the LB cut); ``quantum``: volume
    per slot (LP only; the greedy serves the real volumes; ``None``: automatic, as for
    ``iterated-rounding``: 1 on integer volumes, else ``v_min / 4`` raised until the units
    fit ``max_units``); ``time_limit``: seconds for the LP;
    ``lp_solver``: HiGHS's method (``simplex`` by default: dual simplex, the vertex the
    specification's examples were computed with; ``ipm`` was 2x faster on 3e5 nonzeros but
    returned another optimal vertex, hence another order); ``max_nonzeros``: refuse a larger
    LP before building it."""

    lp: Literal["time-indexed", "interval-indexed"] = "time-indexed"
    lp_eps: float = 0.5
    lb_cut: bool = True
    quantum: float | None = None
    max_units: int = 200_000
    time_limit: float = 600.0
    lp_solver: Literal["simplex", "ipm", "choose"] = "simplex"
    max_nonzeros: float = 2e6

    def check(self) -> None:
        if self.quantum is not None and not (0 < self.quantum < math.inf):
            raise ValueError(f"lp-flow-order: quantum must be finite and > 0, got "
                             f"{self.quantum}")
        if not (self.time_limit > 0 and self.max_nonzeros > 0):
            raise ValueError("lp-flow-order: time_limit and max_nonzeros must be > 0")
        if not (0 < self.lp_eps < math.inf):
            raise ValueError(f"lp-flow-order: lp_eps must be finite and > 0, got {self.lp_eps}")


def supports_lp_flow_order(instance: Instance) -> str | None:
    """Why LP-T's unit slots cannot model ``instance`` (ports of different capacities)."""
    return capacity_refusal(instance)


def flow_priority(edges: UnitEdges, lp: FlowOrderLP) -> np.ndarray:
    """The merged flows in LP order (step 3): by ``(C_f, C_k, k, f)``, LP values rounded to
    1e-9 relative so that solver noise does not decide ties."""
    scale = max(1.0, float(np.abs(lp.C_flow).max(initial=1.0)))
    cf = np.round(lp.C_flow / scale, 9)
    ck = np.round(lp.C_coflow[edges.coflow] / scale, 9)
    return np.lexsort((np.arange(edges.n_flows), edges.coflow, ck, cf))


def _per_flow_instance(instance: Instance) -> Instance:
    """The instance with every flow its own coflow (same flow positions and releases), so a
    flow order runs through the coflow-order engine."""
    F = instance.n_flows
    return Instance.from_arrays(instance.fabric, instance.flow_src, instance.flow_dst,
                                instance.flow_volume, np.arange(F),
                                coflow_release=instance.release[instance.flow_coflow],
                                time_unit=instance.time_unit)


def instance_flow_order(instance: Instance, edges: UnitEdges, merged_order: np.ndarray
                        ) -> np.ndarray:
    """Instance flows in the order of their merged flows (members by position; zero-volume
    flows last)."""
    rank = np.full(instance.n_flows, edges.n_flows, dtype=np.int64)
    mrank = np.empty(edges.n_flows, dtype=np.int64)
    mrank[merged_order] = np.arange(edges.n_flows)
    owner = np.repeat(np.arange(edges.n_flows), np.diff(edges.member_ptr))
    rank[edges.members] = mrank[owner]
    return np.lexsort((np.arange(instance.n_flows), rank))


def run_lp_flow_order(instance: Instance, params: LPFlowOrderParams, sink: RateSink, *,
                      seed: Any = None, progress: Any = None) -> Outcome:
    """LP flow order + greedy (module docstring).  Deterministic given the LP solution
    (``seed`` unused).  ``meta``: ``lp_value`` (time units), ``lp_value_slots``, ``quantum``,
    ``lb`` (``min_k (r_k + L_k)``, slots), ``lp_form``, ``lp_eps`` (``None`` on LP-T),
    ``lp_intervals``, ``proven_factor`` ``a`` and ``proven_offset`` ``b`` (``ALG <= a LP - b
    sum w``: 4, 3 / 5, 4 on LP-T; Theorem 3 of :mod:`coflowopt.lp.edge_interval` on LP-I),
    ``proven_bound`` (that bound, time units) and ``flow_order`` (instance flow positions)."""
    from coflowopt.sim import order_schedule

    p = params
    name = "lp-flow-order"
    why = run_refusal(instance, name, p.lp)
    if why is not None:
        raise FlowOrderLPRefused(why)
    edges = edges_for(instance, p.quantum, p.max_units)
    if edges is None:
        return sink.outcome(Schedule.empty())
    q = edges.quantum
    sp = SolveParams(time_limit=p.time_limit, options={"solver": p.lp_solver})
    if p.lp == "interval-indexed":
        why = interval_size_refusal(name, "flow LP", flow_order_interval_size(edges, p.lp_eps),
                                    edges, p.lp_eps, p.max_nonzeros)
        if why is not None:
            raise FlowOrderLPRefused(why)
    cols, nnz = flow_order_lp_size(edges)
    if p.lp == "time-indexed" and nnz > p.max_nonzeros:
        # every merged flow keeps at least one slot, so T >= F whatever the quantum
        hint = ("raise quantum or max_nonzeros to try" if 5 * edges.n_flows ** 2 <= p.max_nonzeros
                else "no quantum makes it fit, since T >= F")
        raise FlowOrderLPRefused(
            f"{name}: the time-indexed flow LP would have {cols:,} variables and {nnz:,} "
            f"nonzeros ({edges.n_flows:,} merged flows, quantum {q:g}), over "
            f"max_nonzeros = {p.max_nonzeros:.3g}; it is not built ({hint})")
    try:
        lp = solve_flow_order_interval_lp(edges, p.lp_eps, sp, lb_cut=p.lb_cut) \
            if p.lp == "interval-indexed" else solve_flow_order_lp(edges, sp, lb_cut=p.lb_cut)
    except RuntimeError as exc:
        raise FlowOrderLPRefused(f"{name}: {exc} (time_limit = {p.time_limit:g} s)") from None
    order = instance_flow_order(instance, edges, flow_priority(edges, lp))
    out = order_schedule(_per_flow_instance(instance), order=order)
    live = np.unique(edges.coflow)
    lbk = edges.release[live] + edges.delta()[live]
    releases = bool(edges.release.any())
    meta = {"scheduler": name, "lp_value": lp.value * edges.slot, "lp_value_slots": lp.value,
            "quantum": q, "quantum_delta": quantum_delta(instance, q),
            "slot_length": edges.slot, "lb_cut": p.lb_cut,
            "lb": int(lbk.min()) if lbk.size else 0,
            "lp_form": lp.form, "lp_eps": lp.eps,
            "lp_intervals": lp.horizon if lp.grid is None else lp.grid.size - 1,
            "proven_factor": proven_factor(lp.eps, releases),
            "proven_offset": flow_order_offset(lp.eps, releases),
            "proven_bound": (proven_factor(lp.eps, releases) * lp.value
                             - flow_order_offset(lp.eps, releases) * float(edges.weight.sum()))
            * edges.slot,
            "flow_order": order}
    out.meta.update(meta)
    return sink.outcome(out)

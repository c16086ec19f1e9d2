"""Yosemite's offline ordering: Alg. 1, "2-approximate Non-preemptive Scheduling Algorithm for
IWCCTM", of Zhang, Shi, Yin, Wang, Guo, "Yosemite: Efficient Scheduling of Weighted Coflows in
Data Centers" (conference draft, Aug 2017, Sec. 4.1; journal version most likely Wang et al.,
IEEE TPDS 2019, not read), with the order turned into rates by priority water-filling.  Its
online, information-agnostic Alg. 2 is :mod:`coflowopt.schedulers.fair.iaoa`.  Tags: [R]
recovered from the paper, [C] reconstructed by us (docs/families/index.md).

**The relaxed problem** [R Sec. 3.2].  IWCCTM keeps only the port-load constraints: for an
order ``gamma``, coflow ``gamma(k)`` completes at ``L(prefix_k) = max_p sum_{l <= k}
P_{p, gamma(l)}``, ``P_{p,k}`` coflow ``k``'s load on port ``p`` in time units (volume over
the port's capacity; the paper has unit ports).  That is concurrent open shop on the ``2m``
ports, and ``COS(gamma) = sum_k w_{gamma(k)} L(prefix_k)`` its objective.  Any real schedule
ordered by completion has ``C_k >= L(prefix_k)``, so ``OPT_COS <= OPT``.

**Alg. 1** [R Sec. 4.1]: from the last position down, take the most loaded port ``p*`` of the
coflows left, put last the coflow minimising ``w~_k / P_{p*,k}`` among those with load on
``p*`` (the draft omits that condition; a coflow without load there has ratio ``+inf`` [C]),
subtract ``theta P_{p*,k}`` from the others' residual weights.  This is the primal-dual
algorithm for concurrent open shop of Mastrolilli, Queyranne, Schulz, Svensson, Uhan (Oper.
Res. Lett. 38, 2010), which the draft cites for its factor 2, and the same step as Sincronia's
BSSI (Agarwal et al., SIGCOMM 2018), so the toolkit's one implementation of it,
:func:`coflowopt.lp.bssi_order`, computes it (ties: lowest port index, ingress before egress,
then lowest position [C]; the draft is silent).  Its dual value ``LB = sum theta ((sum
P)^2 + sum P^2) / 2`` over the steps lower-bounds ``OPT_COS``, and ``COS(gamma) <= 2 LB``.

**What the factor 2 covers**: ``COS(gamma)``, offline, clairvoyant, every release 0.  It
does not bound the realised weighted CCT: a real schedule can need more than ``L(prefix_k)``
because a flow holds an ingress and an egress port at once [C].

**Rates** [C]: the draft calls the schedule "non-preemptive" and leaves the allocation open.
``allocator="waterfill"`` (default): at every event, the coflows in ``gamma`` order each run a
per-flow progressive filling (:func:`coflowopt.sim.allocate.max_min_fair`) on the capacity
earlier coflows left.  Every unfinished flow then has a port saturated by its own or earlier
coflows, so a flow ``i -> j`` of ``gamma(k)`` ends by ``load_i(prefix_k) + load_j(prefix_k)
<= 2 L(prefix_k)``: realised weighted CCT ``<= 2 COS(gamma) <= 4 OPT`` [C].  The same
argument holds for ``allocator="greedy"`` (Sincronia's order-preserving allocation, on the
compiled engine).  ``allocator="madd_backfill"`` (Varys's MADD plus backfill, what the
authors' simulator ran for ordering-based schedulers [R]) carries no such bound.

Refused before any work: a coflow released after 0 (the algorithm and its factor need one
common release [C]) and precedence edges (single-stage only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.lp import bssi_order, order_cost
from coflowopt.model import Instance
from coflowopt.orders import coflow_port_loads
from coflowopt.params import Params
from coflowopt.sim import allocate
from coflowopt.sim.drive import StaticOrderPolicy, run_policy
from coflowopt.sim.engine import SimView
from coflowopt.sim.policy import EnginePolicy
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["ALLOCATORS", "YosemiteOrder", "YosemiteParams", "YosemitePolicy", "run_yosemite",
           "yosemite_order", "yosemite_supports"]

ALLOCATORS = ("waterfill", "greedy", "madd_backfill")


@dataclass(frozen=True)
class YosemiteParams(Params):
    """``allocator``: how the order becomes rates: ``waterfill`` (priority water-filling,
    default [C]), ``greedy`` (Sincronia's order-preserving allocation, compiled engine) or
    ``madd_backfill`` (Varys's MADD plus backfill, as the authors' simulator [R])."""

    allocator: Literal["waterfill", "greedy", "madd_backfill"] = "waterfill"


@dataclass(frozen=True)
class YosemiteOrder:
    """Alg. 1's result: ``order`` (coflow positions, ``gamma[0]`` served first), ``lb_dual``
    (the primal-dual lower bound ``LB <= OPT_COS``), ``cos`` (``COS(gamma)``, at most
    ``2 LB``), and ``prefix_load[k] = L(prefix_k)`` (the relaxed completion of ``order[k]``)."""

    order: np.ndarray
    lb_dual: float
    cos: float
    prefix_load: np.ndarray


def yosemite_supports(instance: Instance) -> str | None:
    """Why Alg. 1 cannot run ``instance`` (a coflow released after 0), else ``None``."""
    rel = instance.release
    late = np.flatnonzero(rel != 0)
    if late.size == 0:
        return None
    c = int(late[0])
    cid = instance.coflow_id[c]
    cid = cid.item() if hasattr(cid, "item") else cid
    return (f"Alg. 1 orders coflows all released at 0 (offline); coflow {cid!r} is released "
            f"at {float(rel[c]):g}")


def yosemite_order(instance: Instance) -> YosemiteOrder:
    """Alg. 1 of the Yosemite draft (module docstring) on ``instance``'s full loads in time
    units.  Raises :class:`ValueError` when a coflow is released after 0."""
    why = yosemite_supports(instance)
    if why is not None:
        raise ValueError(f"yosemite: {why}")
    res = bssi_order(instance)
    gamma = np.asarray(res.order, dtype=np.int64)
    p = coflow_port_loads(instance)
    prefix = np.cumsum(p[gamma], axis=0)
    load = prefix.max(axis=1) if prefix.size else np.zeros(gamma.size)
    return YosemiteOrder(gamma, float(res.dual), order_cost(instance, gamma), load)


class YosemitePolicy(StaticOrderPolicy):
    """A fixed coflow order (``rank[c]``: position of ``c``, smaller first) turned into rates
    by ``allocator`` (module docstring)."""

    def __init__(self, rank: np.ndarray, allocator: str = "waterfill"):
        if allocator not in ALLOCATORS:
            raise ValueError(f"yosemite: allocator must be one of {ALLOCATORS}, got "
                             f"{allocator!r}")
        super().__init__(np.asarray(rank, dtype=np.float64),
                         "madd" if allocator == "madd_backfill" else "greedy", "ordered")
        self.allocator = allocator
        self._ones = np.ones(0)

    def start(self, view: SimView) -> None:
        super().start(view)
        self._ones = np.ones(view.flow_src.shape[0])

    def fast(self, inst: Instance) -> EnginePolicy | None:
        return super().fast(inst) if self.allocator == "greedy" else None

    def rates(self, view: SimView) -> float:
        if self.allocator != "waterfill":
            return super().rates(view)
        order = self.order(view)
        st = view.alloc
        st.reset(order)
        floor_in = allocate.SATURATED * st.cap_in.max(initial=0.0)
        floor_out = allocate.SATURATED * st.cap_out.max(initial=0.0)
        for c in order.tolist():
            # each coflow fills what the earlier ones left, flows of it max-min among themselves
            allocate.max_min_fair(st, np.asarray([c], dtype=np.int64), weight=self._ones,
                                  fresh=False)
            if st.rem_in.max(initial=0.0) <= floor_in or st.rem_out.max(initial=0.0) <= floor_out:
                break  # every ingress or every egress port is full: nobody later gets rate
        return math.inf


def run_yosemite(instance: Instance, params: YosemiteParams, sink: RateSink, *,
                 seed: Any = None, progress: Any = None) -> Outcome:
    """Yosemite: Alg. 1's order served by ``params.allocator`` (module docstring).
    Deterministic (``seed`` unused).  ``meta`` carries ``lb_dual``, ``cos`` and ``order``
    (coflow positions, first served first)."""
    res = yosemite_order(instance)
    rank = np.empty(res.order.size, dtype=np.int64)
    rank[res.order] = np.arange(res.order.size)
    meta = {"scheduler": "yosemite", "params": {"allocator": params.allocator},
            "lb_dual": res.lb_dual, "cos": res.cos, "order": res.order.tolist()}
    engine = "fast" if params.allocator == "greedy" else "reference"
    return run_policy(instance, YosemitePolicy(rank, params.allocator), sink, engine=engine,
                      meta=meta, progress=progress)

"""IAOA, the Information-Agnostic Online Algorithm for weighted coflows: Alg. 2 of Zhang, Shi,
Yin, Wang, Guo, "Yosemite: Efficient Scheduling of Weighted Coflows in Data Centers"
(conference draft, Aug 2017, Sec. 4.2), the line of work DeepWeave (Sun et al., IJCAI 2020,
Sec. 4.1) cites as [Wang et al., 2019] (most likely its TPDS 2019 journal version, not read).
The offline ordering of the same paper (Alg. 1) is :mod:`coflowopt.schedulers.fair.yosemite`.
Tags: [R] recovered from the paper, [C] reconstructed by us (docs/families/index.md).

IAOA is weighted coflow-level least-attained-service, re-sorted only at arrivals.  It never
reads a volume: it sees the flows' ports, the bytes each flow has sent and which flows have
finished (``clairvoyant = False``), as the draft says ("can be measured cumulatively in
realtime" [R]).

**Decision epochs** [R Sec. 4.2]: every coflow arrival and every flow completion; rates are
constant between them (the reference engine's events; an arrival is a coflow's release, or in
a job DAG the completion of its last Starts-After predecessor [C]).

**Step 1, re-prioritise, only at an epoch where a coflow arrived** [R Sec. 4.2, footnote: "the
schedule order remains unchanged if no new coflow arrives"; ``reorder_on="every_epoch"``
re-sorts at every epoch, a variant [C]].  For each active coflow ``k``:

- ``S^k_p``: the bytes its flows (finished ones included) have sent through port ``p``;
- ``l_k`` aggregates them (``agg``): ``max`` over ports (default [C]: the draft's box says the
  minimum over all ``2m`` ports, which is 0 for any coflow not touching every port; the prose
  derives the rule from the maximum of the total loads, so ``min`` is read as a typo),
  ``min_used`` (over the ports the coflow uses), ``sum``, or ``min_all`` (the literal text,
  for fidelity experiments);
- ``alpha_k = l_k / w_k`` (``+inf`` for ``w_k = 0`` [C]).

The order ``pi`` is ascending ``alpha`` [R], ties by ``(-w_k, r_k, k)`` [C]: every new coflow
has ``alpha = 0``, so ties are systematic; higher weight first follows the stated intent
("prioritize coflows with large weight but small load" [R]), then arrival, then position.
Completed coflows leave ``pi``; between re-sorts the order is kept.

**Step 2, rates, at every epoch** [R Sec. 4.2, Alg. 2 lines 14-23]: residual ``R_p`` starts at
each port's capacity; each coflow of ``pi`` in turn gives every unfinished flow one common rate
``r_k = max(0, min_{p: n_p > 0} R_p / n_p)``, ``n_p`` its unfinished flows on port ``p`` [C]:
the draft gives ``min R_p`` to each flow, which overloads a port carrying two flows of the
coflow; dividing by ``n_p`` is the least change that keeps "one rate for every flow of the
coflow".  Then, with ``work_conserving`` [R line 23: "allocate remaining bandwidth equally to
all flows"], a per-flow progressive filling over every unfinished flow hands out what is left
(:func:`coflowopt.sim.allocate.max_min_fair` on the residual [C]: "equally" read as max-min),
after which every unfinished flow has a saturated port.

There is no proven factor, and none exists: on one port pair, ``k`` unit coflows and one of
volume ``M``, all weight 1 and released at 0, the size-blind tie-break may put the large one
first, giving ``(k + 1) M + k (k + 1) / 2`` against ``M + k + k (k + 1) / 2`` (ratio ``-> k + 1``,
[C]).  Ports of any capacities: ``R_p`` starts at the port's capacity [C] (the paper has unit
ports).  Weights (``weight``): the coflow's own ``w_k``; in job DAGs the draft is silent and
``auto`` takes the job's weight there [C].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.sim import allocate
from coflowopt.sim.drive import run_policy
from coflowopt.sim.engine import SimView
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["AGGREGATES", "IAOAParams", "IAOAPolicy", "iaoa_weights", "run_iaoa"]

#: How ``l_k`` aggregates a coflow's per-port attained service (module docstring).
AGGREGATES = ("max", "min_used", "sum", "min_all")


@dataclass(frozen=True)
class IAOAParams(Params):
    """``agg``: the aggregate ``l_k`` of the per-port bytes sent (``max``, default [C];
    ``min_all`` is the draft's literal text [R]); ``work_conserving``: hand out the residual
    by max-min filling [R]; ``reorder_on``: ``arrival`` (the draft [R]) or ``every_epoch``
    ([C]); ``weight``: ``coflow`` (``w_k``), ``job`` (the job's weight) or ``auto`` (the job's
    on instances with Starts-After edges, else the coflow's [C])."""

    agg: Literal["max", "min_used", "sum", "min_all"] = "max"
    work_conserving: bool = True
    reorder_on: Literal["arrival", "every_epoch"] = "arrival"
    weight: Literal["auto", "coflow", "job"] = "auto"


def iaoa_weights(instance: Instance, weight: str = "auto") -> np.ndarray:
    """The weight IAOA gives each coflow: ``w_k`` (``coflow``), its job's weight (``job``), or
    ``auto``: the job's where the instance has Starts-After edges, else ``w_k`` [C]."""
    if weight not in ("auto", "coflow", "job"):
        raise ValueError(f"iaoa: weight must be 'auto', 'coflow' or 'job', got {weight!r}")
    if weight == "auto":
        weight = "job" if instance.starts_after.shape[0] else "coflow"
    if weight == "job":
        return np.asarray(instance.job_weight, dtype=np.float64)[instance.coflow_job]
    return np.asarray(instance.coflow_weight, dtype=np.float64)


class IAOAPolicy:
    """Alg. 2 of the Yosemite draft (module docstring) as a reference-engine policy.

    Reads the flows' ports, bytes sent and finished flags only.  ``order_log`` records
    ``(t, pi, alpha)`` at every re-sort (``alpha`` of the coflows of ``pi``, in that order), so
    a test can see when and how the order changed."""

    clairvoyant = False

    def __init__(self, weight: np.ndarray, agg: str = "max", work_conserving: bool = True,
                 reorder_on: str = "arrival"):
        if agg not in AGGREGATES:
            raise ValueError(f"iaoa: agg must be one of {AGGREGATES}, got {agg!r}")
        if reorder_on not in ("arrival", "every_epoch"):
            raise ValueError(f"iaoa: reorder_on must be 'arrival' or 'every_epoch', got "
                             f"{reorder_on!r}")
        self.weight = np.asarray(weight, dtype=np.float64)
        self.agg = agg
        self.work_conserving = bool(work_conserving)
        self.reorder_on = reorder_on
        self.order_log: list[tuple[float, list[int], list[float]]] = []
        self._pi = np.zeros(0, dtype=np.int64)
        self._seen = np.zeros(0, dtype=np.bool_)

    def start(self, view: SimView) -> None:
        if self.weight.shape != (view.coflow_id.shape[0],):
            raise ValueError(f"iaoa: weight needs one value per coflow "
                             f"({view.coflow_id.shape[0]}), got shape {self.weight.shape}")
        self._pi = np.zeros(0, dtype=np.int64)
        self._seen = np.zeros(view.coflow_id.shape[0], dtype=np.bool_)
        self._live = np.zeros(view.coflow_id.shape[0], dtype=np.bool_)
        self._ones = np.ones(view.flow_src.shape[0])
        st = view.alloc
        # the coflow of each of the engine's (coflow, port) slots, per side
        C = view.coflow_id.shape[0]
        self._own_in = np.repeat(np.arange(C), np.diff(st.cin_ptr))
        self._own_out = np.repeat(np.arange(C), np.diff(st.cout_ptr))
        self.order_log = []

    def alpha(self, view: SimView, coflows: np.ndarray) -> np.ndarray:
        """``alpha_k = l_k / w_k`` of ``coflows`` from the bytes sent so far (never volumes)."""
        m = view.ports
        st = view.alloc
        sent = view.sent
        out = np.empty(coflows.shape[0])
        for j, c in enumerate(coflows.tolist()):
            f = st.order[st.ptr[c]:st.ptr[c + 1]]
            s_in = np.bincount(view.flow_src[f], weights=sent[f], minlength=m)
            s_out = np.bincount(view.flow_dst[f], weights=sent[f], minlength=m)
            if self.agg == "max":
                lk = max(s_in.max(initial=0.0), s_out.max(initial=0.0))
            elif self.agg == "sum":
                lk = float(s_in.sum() + s_out.sum())
            elif self.agg == "min_all":
                lk = min(float(s_in.min()), float(s_out.min())) if m else 0.0
            else:  # min_used: the ports its flows use
                used = np.concatenate([s_in[np.unique(view.flow_src[f])],
                                       s_out[np.unique(view.flow_dst[f])]])
                lk = float(used.min()) if used.size else 0.0
            w = self.weight[c]
            out[j] = lk / w if w > 0 else math.inf
        return out

    def _resort(self, view: SimView, act: np.ndarray) -> None:
        a = self.alpha(view, act)
        # ties (every new coflow has alpha 0): higher weight, earlier arrival, position [C]
        perm = np.lexsort((act, view.admitted[act], -self.weight[act], a))
        self._pi = act[perm]
        self.order_log.append((float(view.t), self._pi.tolist(), a[perm].tolist()))

    def rates(self, view: SimView) -> float:
        act = view.coflows
        arrived = bool((~self._seen[act]).any())
        self._seen[act] = True
        if arrived or self.reorder_on == "every_epoch":
            self._resort(view, act)
        else:  # completed coflows leave pi, the rest keep their places
            live = self._live
            live[act] = True
            self._pi = self._pi[live[self._pi]]
            live[act] = False
        self._allocate(view)
        return math.inf

    def _allocate(self, view: SimView) -> None:
        st = view.alloc
        st.reset(self._pi)
        for c in self._pi.tolist():
            # n_p: the coflow's unfinished flows per port, kept by the engine in its port slots
            ai, bi, ao, bo = st.cin_ptr[c], st.cin_ptr[c + 1], st.cout_ptr[c], st.cout_ptr[c + 1]
            n_in, n_out = st.slot_in[ai:bi], st.slot_out[ao:bo]
            p_in, p_out = st.cin[ai:bi], st.cout[ao:bo]
            on_in, on_out = n_in > 0, n_out > 0
            if not on_in.any():
                continue
            r = min(float((st.rem_in[p_in[on_in]] / n_in[on_in]).min()),
                    float((st.rem_out[p_out[on_out]] / n_out[on_out]).min()))
            if r <= 0.0:
                continue
            st.rate[view.unfinished_flows(c)] = r
            # a coflow's slots name distinct ports: plain fancy-index updates are exact
            st.rem_in[p_in] = np.maximum(st.rem_in[p_in] - r * n_in, 0.0)
            st.rem_out[p_out] = np.maximum(st.rem_out[p_out] - r * n_out, 0.0)
            st.has_rate[c] = True
        if self.work_conserving:
            # only a coflow with room on one of its ingress and one of its egress ports can
            # gain; the filling costs a pass over the flows it is given per round, so it gets
            # those coflows only (the others' flows would be frozen at once, adding nothing)
            cs = self._pi[self._room(st.rem_in, st.cap_in, st.cin, st.slot_in, self._own_in)
                          [self._pi]
                          & self._room(st.rem_out, st.cap_out, st.cout, st.slot_out,
                                       self._own_out)[self._pi]]
            if cs.size:
                allocate.max_min_fair(st, cs, weight=self._ones, fresh=False)

    def _room(self, rem: np.ndarray, cap: np.ndarray, port: np.ndarray, count: np.ndarray,
              owner: np.ndarray) -> np.ndarray:
        """Per coflow: has it an unfinished flow on a port (of one side) with room left."""
        free = (rem > allocate.SATURATED * cap)[port] & (count > 0)
        return np.bincount(owner[free], minlength=self._seen.shape[0]) > 0


def run_iaoa(instance: Instance, params: IAOAParams, sink: RateSink, *, seed: Any = None,
             progress: Any = None) -> Outcome:
    """IAOA (the Yosemite draft's Alg. 2, module docstring) on the reference engine.
    Deterministic (``seed`` unused); no approximation factor."""
    p = params
    pol = IAOAPolicy(iaoa_weights(instance, p.weight), p.agg, p.work_conserving, p.reorder_on)
    meta = {"scheduler": "iaoa",
            "params": {"agg": p.agg, "work_conserving": p.work_conserving,
                       "reorder_on": p.reorder_on, "weight": p.weight}}
    return run_policy(instance, pol, sink, engine="reference", meta=meta, progress=progress)

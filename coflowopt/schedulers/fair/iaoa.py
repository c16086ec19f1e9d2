"""IAOA (placeholder): a stand-in for the Information-Agnostic Online Algorithm of [Wang et
al., 2019] that DeepWeave (Sun et al., IJCAI 2020, Sec. 4.1) compares against.  Tags: [R] recovered
from the paper, [C] reconstructed by us (docs/families/index.md).

**This is not IAOA.**  When this module was written the paper had not been found; all that was
known is DeepWeave's one-line description [R] (weighted CCT, non-preemptive, a heuristic with
factor 2, blind to coflow correlations in job DAGs).  The authors' conference draft (Zhang,
Shi, Yin, Wang, Guo, "Yosemite: Efficient Scheduling of Weighted Coflows in Data Centers",
2017; probably an early version of the TPDS 2019 paper of Wang et al.) has since been
identified, and IAOA is its Alg. 2; this module still implements our stand-in, and its numbers
must never be reported as IAOA's (``meta["placeholder"]``).

The placeholder ([C]: ours, from DeepWeave's description): a non-clairvoyant, weight-aware,
non-preemptive coflow-level list scheduler.

- **Priority** of a waiting coflow: attained service divided by weight, smallest first.
  ``level="coflow"``: ``S_c / w_c`` exactly as the placeholder rule reads; since a coflow that has
  started is never preempted, every *waiting* coflow has ``S_c = 0`` and the rule reduces to
  its ties: larger ``w_c`` first, then admission time, then position ([C]).
  ``level="job"`` (default, [C]): ``S_J / w_J`` of the coflow's job (bytes its coflows
  sent so far over the job weight), the least-attained-service reading that gives the
  attained service a role in job DAGs; on single-stage instances (one coflow per job) it is
  the coflow rule with the job weight.
- **Non-preemptive, coflow level**: at every event (arrival, flow or coflow completion) the
  waiting coflows are scanned in priority order and a coflow starts when *every* port its
  unfinished flows use is free; it then holds all those ports until it completes
  ([C]: a coflow that does not fit is skipped, later ones may start: backfill at coflow
  level).  A running coflow sends on its held ports only, its flows shared by the
  order-preserving allocator with the equal split inside the coflow (no volumes needed).

It sees the flows' ports and bytes sent, never volumes (``clairvoyant = False``).  Reference
engine; releases and Starts-After edges are honoured by the engine (a coflow waits until
released and every predecessor is complete).
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

__all__ = ["IAOAParams", "IAOAPolicy", "run_iaoa"]


@dataclass(frozen=True)
class IAOAParams(Params):
    """``level``: whose attained service over weight orders the waiting coflows: the
    coflow's own (``coflow``) or its job's (``job``, default); see the module docstring."""

    level: Literal["coflow", "job"] = "job"


class IAOAPolicy:
    """The IAOA placeholder (module docstring): non-preemptive coflow-level list scheduling by
    attained service over weight."""

    clairvoyant = False

    def __init__(self, level: str = "job", job_weight: np.ndarray | None = None):
        if level not in ("coflow", "job"):
            raise ValueError(f"iaoa: level must be 'coflow' or 'job', got {level!r}")
        if level == "job" and job_weight is None:
            raise ValueError("iaoa: level='job' needs the job weights (job_weight=)")
        self.level = level
        # job weights are not volumes: a non-clairvoyant policy may know them
        self._job_weight = (np.zeros(0) if job_weight is None
                            else np.asarray(job_weight, dtype=np.float64))
        self._running: list[int] = []
        self._held_in = np.zeros(0, dtype=np.int64)
        self._held_out = np.zeros(0, dtype=np.int64)

    def start(self, view: SimView) -> None:
        m = view.ports
        self._running = []
        self._held_in = np.full(m, -1, dtype=np.int64)   # coflow holding each ingress port
        self._held_out = np.full(m, -1, dtype=np.int64)
        self._started_at = np.full(view.coflow_id.shape[0], np.nan)

    def _ports(self, view: SimView, c: int) -> tuple[np.ndarray, np.ndarray]:
        f = view.unfinished_flows(c)
        return np.unique(view.flow_src[f]), np.unique(view.flow_dst[f])

    def _key(self, view: SimView, waiting: np.ndarray) -> np.ndarray:
        if self.level == "coflow":
            return view.coflow_sent(waiting) / view.coflow_weight[waiting]
        job = view.coflow_job
        active_jobs = np.unique(job[waiting])
        # attained service of each job: bytes sent by all its coflows so far
        members = np.flatnonzero(np.isin(job, active_jobs))
        sent = np.bincount(job[members], weights=view.coflow_sent(members),
                           minlength=int(job.max()) + 1)
        jw = self._job_weight[job[waiting]]
        return sent[job[waiting]] / jw

    def rates(self, view: SimView) -> float:
        act = view.coflows
        live = set(act.tolist())
        # release the ports of coflows that completed
        for c in [c for c in self._running if c not in live]:
            self._held_in[self._held_in == c] = -1
            self._held_out[self._held_out == c] = -1
        self._running = [c for c in self._running if c in live]
        run = set(self._running)
        waiting = np.asarray([c for c in act.tolist() if c not in run], dtype=np.int64)
        if waiting.size:
            key = self._key(view, waiting)
            w = self._weight_for(view, waiting)
            adm = view.admitted[waiting]
            for c in waiting[np.lexsort((waiting, adm, -w, key))].tolist():
                pin, pout = self._ports(view, c)
                if (self._held_in[pin] < 0).all() and (self._held_out[pout] < 0).all():
                    self._held_in[pin] = c
                    self._held_out[pout] = c
                    self._running.append(c)
                    self._started_at[c] = view.t
        # running coflows hold disjoint ports: the greedy allocator serves each on its own
        allocate.greedy(view.alloc, np.asarray(self._running, dtype=np.int64), split="equal")
        return math.inf

    def _weight_for(self, view: SimView, waiting: np.ndarray) -> np.ndarray:
        if self.level == "coflow":
            return view.coflow_weight[waiting]
        return self._job_weight[view.coflow_job[waiting]]


def run_iaoa(instance: Instance, params: IAOAParams, sink: RateSink, *, seed: Any = None,
             progress: Any = None) -> Outcome:
    """The IAOA *placeholder* (module docstring; not the paper's algorithm) on the reference
    engine.  Deterministic (``seed`` unused)."""
    pol = IAOAPolicy(params.level, instance.job_weight)
    meta = {"scheduler": "iaoa", "placeholder": True,
            "note": "IAOA (placeholder [C]): not the paper's algorithm; never "
                    "report these numbers as IAOA's",
            "params": {"level": params.level}}
    return run_policy(instance, pol, sink, engine="reference", meta=meta, progress=progress)

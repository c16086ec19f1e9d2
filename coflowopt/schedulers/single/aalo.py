"""Aalo (Chowdhury and Stoica, SIGCOMM 2015): Discretized Coflow-Aware Least-Attained Service
(D-CLAS), non-clairvoyant: priority queues on bytes sent, FIFO inside a queue, strict priority
across queues [R] (the paper's abstract, the A-SEBF paper's Sec. 1-2.3 and the public
simulators coflow/coflowsim and sunnyxhuang/sunflow; the paper's weighted sharing between queues
was not recovered, so strict priority [C] as in both simulators).  :class:`DCLASPolicy` also
serves A-SEBF (:mod:`coflowopt.schedulers.single.a_sebf`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.sim import allocate
from coflowopt.sim.drive import run_policy
from coflowopt.sim.engine import SimView
from coflowopt.sim.policy import EnginePolicy, builtin_key
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["AaloParams", "DCLASPolicy", "dclas_key", "run_aalo"]


@dataclass(frozen=True)
class AaloParams(Params):
    """D-CLAS with the paper's defaults: ``queues`` = 10, ``first`` threshold 10 (MB on traces),
    ``growth`` 10 (or explicit ``thresholds``); ``interval``: the coordination interval
    ``delta`` (0: exact crossings); ``queue_weights``: weighted sharing across queues instead
    of strict priority; ``split``: the intra-coflow rule; ``engine``."""

    queues: int = 10
    first: float = 10.0
    growth: float = 10.0
    thresholds: tuple[float, ...] | None = None
    interval: float = 0.0
    queue_weights: tuple[float, ...] | None = None
    split: Literal["ordered", "equal"] = "ordered"
    engine: Literal["fast", "reference"] = "fast"

    def check(self) -> None:
        if self.thresholds is None:  # the first field out of range, by name
            for name, ok, rule in (("queues", self.queues >= 1, ">= 1"),
                                   ("first", self.first > 0, "> 0"),
                                   ("growth", self.growth > 1, "> 1")):
                if not ok:
                    raise ValueError(f"{type(self).__name__}.{name}: must be {rule}, got "
                                     f"{getattr(self, name)!r}")
        if self.interval < 0:
            raise ValueError(f"{type(self).__name__}.interval: must be >= 0")

    def policy_args(self) -> dict[str, Any]:
        """The keyword arguments of :class:`DCLASPolicy`."""
        out = self.to_dict()
        out.pop("engine")
        return out


@njit(cache=True)
def dclas_key(s, c):
    """D-CLAS on the compiled engine (a :data:`~coflowopt.sim.policy.KEY_SIGNATURE` function):
    strict priority across queues, FIFO by queue entry inside one; ``queue`` and ``entry`` are
    the engine's (its demotion hook moves a coflow down at each threshold).  Entries are
    unique and far below 2**40, so one float orders by queue, then entry."""
    return s.queue[c] * 1099511627776.0 + s.entry[c]


class DCLASPolicy:
    """Discretized Coflow-Aware Least-Attained Service (Aalo, SIGCOMM 2015), and A-SEBF (its
    journal paper, Sec. 3.2).

    A coflow's priority value is its attained service ``S_c`` (bytes sent), divided by its
    number of receiver ports (``per="receiver"``, A-SEBF) or flows (``per="flow"``).  Queue
    ``k`` holds values in ``[thresholds[k-1], thresholds[k])``; by default thresholds are
    ``first, first*growth, ...`` (``queues`` of them, the last unbounded).  New coflows enter
    the first queue; a coflow that crosses a threshold moves to the tail of the queue it
    reaches (FIFO by queue entry).  Across queues: strict priority, or weighted sharing with
    ``queue_weights``.  Inside: order-preserving greedy allocation.

    ``interval``: the coordination interval ``delta``.  ``0`` (default) updates queues exactly
    when a value crosses a threshold (the limit of a continuous coordinator); ``delta > 0``
    updates them only at multiples of ``delta``.
    """

    clairvoyant = False

    def __init__(self, *, queues: int = 10, first: float = 10.0, growth: float = 10.0,
                 thresholds: Any = None, interval: float = 0.0, per: str = "coflow",
                 queue_weights: Any = None, split: str = "ordered"):
        if thresholds is None:
            if queues < 1 or first <= 0 or growth <= 1:
                raise ValueError("D-CLAS: need queues >= 1, first > 0, growth > 1")
            thresholds = [first * growth**k for k in range(queues - 1)]
        self.thresholds = np.asarray(thresholds, dtype=np.float64)
        if np.any(np.diff(self.thresholds) <= 0):
            raise ValueError("D-CLAS: thresholds must increase")
        if per not in ("coflow", "receiver", "flow"):
            raise ValueError(f"D-CLAS: per must be coflow, receiver or flow, got {per!r}")
        self.per = per
        self.interval = float(interval)
        self.queue_weights = None if queue_weights is None else np.asarray(queue_weights, float)
        self.split = split

    def normalizer(self, flow_coflow: np.ndarray, flow_dst: np.ndarray, ports: int,
                   width: np.ndarray) -> np.ndarray:
        """Per coflow: 1, its number of receiver ports, or its number of flows."""
        C = width.size
        if self.per == "receiver":
            key = flow_coflow.astype(np.int64) * ports + flow_dst
            return np.bincount(np.unique(key) // ports, minlength=C).astype(float)
        if self.per == "flow":
            return width.astype(float)
        return np.ones(C)

    def fast(self, inst: Instance) -> EnginePolicy | None:
        if self.interval > 0 or self.queue_weights is not None or self.split != "ordered":
            return None
        norm = self.normalizer(inst.flow_coflow, inst.flow_dst, inst.ports, inst.coflow_width)
        return EnginePolicy(key=builtin_key("dclas", dclas_key), departures=False,
                            demotion=True, thresholds=self.thresholds,
                            norm=np.maximum(norm, 1.0))

    def start(self, view: SimView) -> None:
        C = view.coflow_width.size
        self.queue = np.full(C, -1, dtype=np.int64)
        self.entry = np.zeros(C, dtype=np.int64)
        self.counter = 0
        self.norm = np.maximum(self.normalizer(view.flow_coflow, view.flow_dst, view.ports,
                                               view.coflow_width), 1.0)
        self.next_sync = view.t

    def _update(self, view: SimView) -> None:
        c = view.coflows
        new = c[self.queue[c] < 0]
        for x in new[np.lexsort((new, view.admitted[new]))]:
            self.queue[x] = 0
            self.entry[x] = self.counter
            self.counter += 1
        value = view.coflow_sent(c) / self.norm[c]
        # reaching a threshold (to rounding), or reaching it within the event tolerance at the
        # current rate (late in a long trace the bytes sent carry more rounding than 1e-9 of
        # the threshold), counts as crossing it, as in the fast engine
        value = value + view.coflow_rate(c) / self.norm[c] * (1e-14 * max(1.0, abs(view.t)))
        target = np.searchsorted(self.thresholds * (1 - 1e-9), value, side="right")
        moved = c[target > self.queue[c]]
        if moved.size:
            tq = target[target > self.queue[c]]
            # demoted together: keep their previous FIFO order
            for x, q in sorted(zip(moved.tolist(), tq.tolist(), strict=True),
                               key=lambda z: (self.queue[z[0]], self.entry[z[0]])):
                self.queue[x] = q
                self.entry[x] = self.counter
                self.counter += 1

    def rates(self, view: SimView) -> float:
        if self.interval <= 0 or view.t >= self.next_sync - 1e-12:
            self._update(view)
            if self.interval > 0:
                self.next_sync = (math.floor(view.t / self.interval + 1e-9) + 1) * self.interval
        else:
            # newcomers enter the first queue at once
            c = view.coflows
            for x in c[self.queue[c] < 0]:
                self.queue[x] = 0
                self.entry[x] = self.counter
                self.counter += 1
        c = view.coflows
        order = c[np.lexsort((self.entry[c], self.queue[c]))]
        if self.queue_weights is None:
            allocate.greedy(view.alloc, order, split=self.split)
        else:
            q = self.queue[order]
            queues = [order[q == k] for k in range(self.thresholds.size + 1)]
            w = np.resize(self.queue_weights, len(queues))
            allocate.priority_queues(view.alloc, queues, weights=w, split=self.split)
        if self.interval > 0:
            return self.next_sync
        # next threshold crossing at the current rates
        qc = self.queue[c]
        has_next = qc < self.thresholds.size
        if not has_next.any():
            return math.inf
        cc = c[has_next]
        rate = view.coflow_rate(cc) / self.norm[cc]
        gap = self.thresholds[qc[has_next]] - view.coflow_sent(cc) / self.norm[cc]
        pos = rate > 0
        if not pos.any():
            return math.inf
        return view.t + float(np.min(np.maximum(gap[pos], 0.0) / rate[pos]))


def run_aalo(instance: Instance, params: AaloParams, sink: RateSink, *, seed: Any = None,
             progress: Any = None) -> Outcome:
    """Aalo's D-CLAS (``per="coflow"``: bytes sent by the whole coflow).  Deterministic."""
    kw = params.policy_args()
    meta = {"scheduler": "aalo", "params": kw}
    return run_policy(instance, DCLASPolicy(per="coflow", **kw), sink, engine=params.engine,
                      meta=meta, progress=progress)

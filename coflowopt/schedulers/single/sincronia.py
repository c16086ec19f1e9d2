"""Sincronia (Agarwal, Rajakrishnan, Narayan, Agarwal, Shmoys, Vahdat, SIGCOMM 2018): the BSSI
order (Bottleneck, Select, Scale, Iterate) with order-preserving greedy allocation [R] (BSSI as the
paper's abstract describes it and its authors' public simulator, sincronia-coflow/simulator,
computes it); within 4 x OPT for weighted CCT offline with all
releases 0."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.orders import bssi, bssi_sparse_order, port_loads
from coflowopt.params import Params
from coflowopt.sim.drive import OrderPolicy, run_policy
from coflowopt.sim.engine import SimView
from coflowopt.sim.policy import EnginePolicy, builtin_rank
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["SincroniaParams", "SincroniaPolicy", "bssi_rank", "run_sincronia"]


@dataclass(frozen=True)
class SincroniaParams(Params):
    """``mode``: ``online`` (BSSI on the remaining volumes at every arrival and departure) or
    ``offline`` (one BSSI order over all coflows on their full volumes); ``split``: the
    intra-coflow rule (``ordered`` or ``equal``, reference engine); ``engine``."""

    mode: Literal["online", "offline"] = "online"
    split: Literal["ordered", "equal"] = "ordered"
    engine: Literal["fast", "reference"] = "fast"


@njit(cache=True)
def bssi_rank(s, act, out):
    """Sincronia online on the compiled engine (a :data:`~coflowopt.sim.policy.RANK_SIGNATURE`
    function): BSSI (Sincronia, SIGCOMM 2018) on the remaining volumes of the active coflows ``act``
    (in admission order), over the ports their unfinished flows use only (an idle port is never the
    bottleneck, and keeping port order keeps BSSI's ties), so a large fabric with few busy
    ports costs no more than a small one."""
    nc = act.size
    m = s.cap_in.size
    # a port's time per unit volume: times its exact reciprocal where the capacity is a power
    # of two (the same float as the division: both round the same exact quotient), else divided
    inv = np.zeros(2 * m)
    for q in range(2 * m):
        cq = s.cap_in[q] if q < m else s.cap_out[q - m]
        if math.frexp(cq)[0] == 0.5 and 1.0 / cq < np.inf:
            inv[q] = 1.0 / cq
    # each coflow's port loads as a sparse row (the dense nc x ncol matrix, allocated and
    # scanned at every re-ranking, grew as coflows times ports: issue 28), summed per port in
    # the order of its flows, as the dense form did
    rptr = np.zeros(nc + 1, dtype=np.int64)
    for j in range(nc):
        c = act[j]
        rptr[j + 1] = rptr[j] + 2 * (s.live_end[c] - s.ptr[c])
    rcol = np.empty(rptr[nc], dtype=np.int64)
    rval = np.empty(rptr[nc])
    acc = np.zeros(2 * m)
    seen = np.full(2 * m, -1, dtype=np.int64)
    ne = 0
    for j in range(nc):
        c = act[j]
        start = ne
        for i in range(s.ptr[c], s.live_end[c]):
            f = s.live[i]
            for side in range(2):
                if side == 0:
                    q = np.int64(s.src[f])
                    cq = s.cap_in[q]
                else:
                    q = m + np.int64(s.dst[f])
                    cq = s.cap_out[q - m]
                v = s.remaining[f] * inv[q] if inv[q] != 0.0 else s.remaining[f] / cq
                if seen[q] != j:
                    seen[q] = j
                    acc[q] = 0.0
                    rcol[ne] = q
                    ne += 1
                acc[q] += v
        for e in range(start, ne):
            rval[e] = acc[rcol[e]]
        rptr[j + 1] = ne
    # the busy ports, numbered in port order (an idle port is never the bottleneck), read off
    # the entries rather than the flows
    col = np.zeros(2 * m, dtype=np.int64)
    for e in range(ne):
        col[rcol[e]] = 1
    ncol = 0
    for q in range(2 * m):
        if col[q] != 0:
            col[q] = ncol
            ncol += 1
    for e in range(ne):
        rcol[e] = col[rcol[e]]
    perm = bssi_sparse_order(rptr, rcol[:ne], rval[:ne], ncol, s.weight[act])
    for j in range(nc):
        out[j] = act[perm[j]]
    return nc


class SincroniaPolicy(OrderPolicy):
    """BSSI order + order-preserving greedy allocation (Sincronia, SIGCOMM 2018).

    ``mode="online"``: BSSI on remaining volumes of the active coflows at every arrival and
    departure.  ``mode="offline"``: one BSSI order over all coflows of the instance (known from
    the start) on their full volumes, used for the whole run.
    """

    def __init__(self, mode: str = "online", split: str = "ordered"):
        if mode not in ("online", "offline"):
            raise ValueError(f"sincronia: mode must be 'online' or 'offline', got {mode!r}")
        super().__init__("greedy", split)
        self.mode = mode
        self._rank: np.ndarray | None = None

    @staticmethod
    def offline_rank(inst: Instance) -> np.ndarray:
        """Rank of each coflow in the BSSI order of the whole instance on full volumes."""
        allc = np.arange(inst.n_coflows, dtype=np.int64)
        cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
        sigma = bssi(port_loads(inst, allc, inst.flow_volume), inst.coflow_weight, cap)
        rank = np.empty(inst.n_coflows, dtype=np.int64)
        rank[sigma] = np.arange(inst.n_coflows)
        return rank

    def start(self, view: SimView) -> None:
        super().start(view)
        if self.mode == "offline":
            self._rank = self.offline_rank(view.instance)

    def fast(self, inst: Instance) -> EnginePolicy | None:
        if self.split != "ordered":
            return None
        if self.mode == "offline":  # one fixed order
            return EnginePolicy(priority=self.offline_rank(inst).astype(np.float64),
                                departures=False)
        return EnginePolicy(rank=builtin_rank("bssi", bssi_rank))

    def order(self, view: SimView) -> np.ndarray:
        c = view.coflows
        if self._rank is not None:
            return c[np.argsort(self._rank[c], kind="stable")]
        cap = np.concatenate([view.capacity_in, view.capacity_out])
        loads = port_loads(view.instance, c, view.remaining)
        return c[bssi(loads, view.coflow_weight[c], cap)]


def run_sincronia(instance: Instance, params: SincroniaParams, sink: RateSink, *,
                  seed: Any = None, progress: Any = None) -> Outcome:
    """Sincronia: BSSI ordering with greedy order-preserving allocation.  Deterministic
    (``seed`` unused).  The factor 4 holds offline with all releases 0."""
    p = params
    meta = {"scheduler": "sincronia", "params": {"mode": p.mode, "split": p.split}}
    return run_policy(instance, SincroniaPolicy(p.mode, p.split), sink, engine=p.engine,
                      meta=meta, progress=progress)

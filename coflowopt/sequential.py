"""The sequential schedule: coflows one at a time, each alone on the fabric at its isolation
(MADD) rates.  A building block, not an algorithm of a paper: the ``sequential`` baseline
(:mod:`coflowopt.schedulers.baselines`) and the LP layer's upper brackets
(:func:`coflowopt.lp.min_slowdown`) both use it."""

from __future__ import annotations

from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

__all__ = ["sequential_schedule"]


def sequential_schedule(instance: Instance, order: Any = None) -> Schedule:
    """Serve coflows one at a time, each alone on the fabric at MADD rates.

    Each flow of coflow ``j`` runs at ``v / C_j^0`` for ``C_j^0`` time units, so all of its
    flows finish together after its isolation time.  Coflows go in ``order`` (coflow
    positions; default: by earliest possible start, which respects Starts-After edges), each
    starting when the previous one ends, it is released, and its predecessors are done.
    """
    inst = instance
    iso = inst.isolation_time
    if order is None:
        est = inst.earliest_completion - iso
        rank = np.empty(inst.n_coflows, dtype=np.int64)
        rank[inst.topological_order] = np.arange(inst.n_coflows)
        order = np.lexsort((rank, est))
    order = np.asarray(order, dtype=np.int64)
    if sorted(order.tolist()) != list(range(inst.n_coflows)):
        raise ValueError("sequential: order must be a permutation of the coflow positions")
    ptr, pred = inst.predecessors_ptr
    done = np.full(inst.n_coflows, np.nan)
    t = [0.0 if not inst.n_coflows else min(0.0, float(inst.release.min()))]
    seg_interval = np.zeros(inst.n_coflows, dtype=np.int64)
    active = np.zeros(inst.n_coflows, dtype=bool)
    for c in order:
        ready = max(t[-1], float(inst.release[c]))
        preds = pred[ptr[c]:ptr[c + 1]]
        if preds.size:
            if np.isnan(done[preds]).any():
                raise ValueError(f"sequential: order puts coflow {c} before a predecessor")
            ready = max(ready, float(done[preds].max()))
        if iso[c] > 0:
            if ready > t[-1]:
                t.append(ready)  # idle interval
            seg_interval[c] = len(t) - 1
            active[c] = True
            t.append(ready + float(iso[c]))
        done[c] = ready + float(iso[c])
    fl = np.flatnonzero(active[inst.flow_coflow] & (inst.flow_volume > 0))
    c_of = inst.flow_coflow[fl]
    rate = inst.flow_volume[fl] / iso[c_of]
    k = seg_interval[c_of]
    return Schedule.from_segments(t, fl, rate, k, k + 1, meta={"scheduler": "sequential"})

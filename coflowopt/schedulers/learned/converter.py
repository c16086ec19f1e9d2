"""DeepWeave's Policy Converter, Algorithm 2 (spec single-stage-and-learning.md section 9.5):
a coflow priority list turned into per-port timelines of non-preemptive transmissions.

Algorithm 2 [DW] (ingress side; the egress side "is similar")::

    while P != {}:
        e_i <- coflow with the largest p_i in P
        f* = f_i^{m*,n*} <- largest flow of e_i
        give f* the highest priority in what remains of ingress port m*; End* <- End(f*)
        for every ingress port m:
            if f_i^{m,n*} exists:
                place f_i^{m,n*} on ingress m where |End(f_i^{m,n*}) - End*| is smallest
        remove p_i from P

Concrete semantics [PROP] (the paper gives only the listing):

* every port (ingress and egress, both sides at once) has a timeline of non-preemptive
  transmissions; a flow runs alone on its two ports at the full rate ``min(B_in(s),
  B_out(d))``, for ``duration = volume / rate`` (DeepWeave normalises sizes so that size =
  transmission time);
* the coflows are taken in priority order, the next being the highest-priority coflow whose
  Starts-After predecessors are all placed (a priority list that puts a successor first cannot
  start it earlier); ``t0`` = its release, or the last completion among its predecessors if
  later;
* its largest flow ``f*`` (longest duration, ties: lower flow position) starts at the earliest
  ``t >= t0`` at which both its ports are free for the whole duration; ``End* = End(f*)``;
* each other flow of the coflow (the listing names only the flows to egress ``n*``; we apply it
  to all of them), longest first, starts at the feasible ``t >= t0`` (both ports free for its
  duration) minimising ``|t + duration - End*|``, ties to the earlier start;
* later coflows may fill earlier gaps (the timelines are searched from ``t0``, not from their
  ends).

``align=False`` places every flow at its earliest feasible start instead (plain ASAP list
scheduling, the comparison of example E4).  The output is a :class:`~coflowopt.Schedule`
with one segment per flow of positive volume.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

__all__ = ["policy_converter"]


class _Timelines:
    """Busy intervals ``[start, end)`` of every port (ingress ``0..m-1``, egress ``m..2m-1``)."""

    def __init__(self, n_ports: int):
        self.start: list[list[float]] = [[] for _ in range(n_ports)]
        self.end: list[list[float]] = [[] for _ in range(n_ports)]

    def feasible(self, a: int, b: int, t0: float, dur: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The start times ``t >= t0`` at which ports ``a`` and ``b`` are both free on
        ``[t, t + dur)``, as intervals ``[lo_k, hi_k]`` (ascending; the last is unbounded),
        with ``gap_end_k``, the end of the free gap each lies in.  Exact comparisons: a gap
        that rounding makes a hair too short is skipped, never overfilled."""
        s = np.array(self.start[a] + self.start[b], dtype=np.float64)
        e = np.array(self.end[a] + self.end[b], dtype=np.float64)
        o = np.argsort(s, kind="stable")
        s = s[o]
        e = np.maximum.accumulate(e[o]) if e.size else e
        gap_lo = np.maximum(np.concatenate([[-np.inf], e]), t0)
        gap_end = np.concatenate([s, [np.inf]])
        gap_hi = gap_end - dur
        ok = gap_hi >= gap_lo
        return gap_lo[ok], gap_hi[ok], gap_end[ok]

    def occupy(self, a: int, b: int, start: float, end: float) -> None:
        for p in (a, b):
            self.start[p].append(start)
            self.end[p].append(end)


def policy_converter(instance: Instance, priority: Sequence[float] | np.ndarray | None = None,
                     *, order: Sequence[int] | np.ndarray | None = None, align: bool = True,
                     meta: dict[str, Any] | None = None,
                     progress: Callable[[float, float], Any] | None = None) -> Schedule:
    """Algorithm 2: place every flow of ``instance`` on its ports' timelines.

    Give either ``priority`` (one number per coflow, *higher* placed first; ties: lower
    position) or ``order`` (coflow positions, first placed first).  ``align``: the aligned
    placement of Algorithm 2 (default) or plain ASAP.  Honours releases (coflow and job) and
    Starts-After edges; Finishes-Before edges are not supported (:class:`ValueError`).
    ``progress(done, total)`` hears the number of coflows placed.
    """
    inst = instance
    n = inst.n_coflows
    if (priority is None) == (order is None):
        raise ValueError("policy_converter: give exactly one of priority or order")
    if inst.finishes_before.shape[0]:
        c = int(inst.finishes_before[0, 1])
        raise ValueError(f"policy_converter: Finishes-Before edges are not supported (coflow "
                         f"{inst.coflow_id[c]!r})")
    if order is not None:
        o = np.asarray(order, dtype=np.int64).ravel()
        if o.size != n or not np.array_equal(np.sort(o), np.arange(n)):
            raise ValueError(f"policy_converter: order must be a permutation of the {n} coflow "
                             f"positions, got {o.size} entries")
    else:
        pr = np.asarray(priority, dtype=np.float64).ravel()
        if pr.size != n or not np.all(np.isfinite(pr)):
            raise ValueError(f"policy_converter: priority needs {n} finite numbers, one per "
                             f"coflow, got {pr.size}")
        o = np.lexsort((np.arange(n), -pr))
    rank = np.empty(n, dtype=np.int64)
    rank[o] = np.arange(n)

    m = inst.ports
    cap_in, cap_out = inst.fabric.capacity_in, inst.fabric.capacity_out
    rate = np.minimum(cap_in[inst.flow_src], cap_out[inst.flow_dst]).astype(np.float64)
    dur = inst.flow_volume / rate
    fstart = np.full(inst.n_flows, np.nan)
    fend = np.full(inst.n_flows, np.nan)
    completion = np.zeros(n)
    release = inst.release.astype(np.float64)

    succ_ptr, succ = inst.successors_ptr
    pending = np.bincount(inst.starts_after[:, 1], minlength=n).astype(np.int64)
    ready_at = release.copy()
    heap = [(int(rank[c]), int(c)) for c in np.flatnonzero(pending == 0)]
    heapq.heapify(heap)
    tl = _Timelines(2 * m)
    placed = 0
    while heap:
        _, c = heapq.heappop(heap)
        t0 = float(ready_at[c])
        f = inst.flows_of(c)
        f = f[inst.flow_volume[f] > 0]
        end_c = t0
        if f.size:
            # longest first, ties by position: f[0] is f*
            f = f[np.lexsort((f, -dur[f]))]
            end_star = None
            for fl in f.tolist():
                a, b, d = int(inst.flow_src[fl]), m + int(inst.flow_dst[fl]), float(dur[fl])
                lo, hi, gap_end = tl.feasible(a, b, t0, d)
                if end_star is None or not align:
                    k = 0
                    start = float(lo[0])
                    end = start + d
                else:
                    want = end_star - d
                    cand = np.clip(want, lo, hi)
                    k = int(np.argmin(np.abs(cand + d - end_star)))  # first min: earlier start
                    start = float(cand[k])
                    # a flow aligned exactly keeps End* as its end (no rounding sliver)
                    end = end_star if start == want else start + d
                end = min(end, float(gap_end[k]))  # never past the next busy interval
                if end_star is None:
                    end_star = end
                fstart[fl], fend[fl] = start, end
                tl.occupy(a, b, start, end)
                end_c = max(end_c, end)
        completion[c] = end_c
        placed += 1
        if progress is not None:
            progress(float(placed), float(n))
        for s in succ[succ_ptr[c]:succ_ptr[c + 1]].tolist():
            ready_at[s] = max(ready_at[s], end_c)
            pending[s] -= 1
            if pending[s] == 0:
                heapq.heappush(heap, (int(rank[s]), s))
    if placed != n:  # cannot happen on a checked (acyclic) instance
        raise ValueError("policy_converter: the Starts-After edges have a cycle")

    live = np.flatnonzero(~np.isnan(fstart))
    md = {"scheduler": "policy_converter", "align": bool(align)}
    md.update(meta or {})
    if not live.size:
        return Schedule.from_segments([float(release.min()) if n else 0.0], [], [], [], [],
                                      meta=md)
    t = np.unique(np.concatenate([fstart[live], fend[live]]))
    first = np.searchsorted(t, fstart[live])
    last = np.searchsorted(t, fend[live])
    seg_rate = inst.flow_volume[live] / (fend[live] - fstart[live])
    return Schedule.from_segments(t, live, seg_rate, first, last, meta=md)

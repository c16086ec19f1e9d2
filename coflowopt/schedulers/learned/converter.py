"""DeepWeave's Policy Converter (Sun et al., IJCAI 2020, Sec. 3.4, Algorithm 2):
a coflow priority list turned into per-port timelines of non-preemptive transmissions.

Algorithm 2 [R] (ingress side; the egress side "is similar")::

    while P != {}:
        e_i <- coflow with the largest p_i in P
        f* = f_i^{m*,n*} <- largest flow of e_i
        give f* the highest priority in what remains of ingress port m*; End* <- End(f*)
        for every ingress port m:
            if f_i^{m,n*} exists:
                place f_i^{m,n*} on ingress m where |End(f_i^{m,n*}) - End*| is smallest
        remove p_i from P

Concrete semantics [C] (the paper gives only the listing):

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

The placement loop is compiled (numba, self-contained: it calls no compiled function of
another module).  ``align=False`` places every flow at its earliest feasible start instead
(plain ASAP list scheduling, the comparison of our worked example [C]).  The output is a
:class:`~coflowopt.Schedule` with one segment per flow of positive volume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule

__all__ = ["policy_converter"]


@njit(cache=True)
def _place(rank, ready_at, succ_ptr, succ, pending, fptr, flows, fsrc, fdst, dur, port_ptr,
           align):  # pragma: no cover - compiled
    """The placement loop (compiled).  Per port ``p`` the busy intervals are
    ``bs[port_ptr[p]:port_ptr[p] + cnt[p]]`` / ``be[...]``, sorted (a port's intervals are
    disjoint).  Returns per flow its start and end (NaN for flows not placed) and the number
    of coflows placed."""
    n = rank.shape[0]
    nf = fsrc.shape[0]
    fstart = np.full(nf, np.nan)
    fend = np.full(nf, np.nan)
    bs = np.empty(port_ptr[-1])
    be = np.empty(port_ptr[-1])
    cnt = np.zeros(port_ptr.shape[0] - 1, dtype=np.int64)
    eligible = pending == 0
    placed = 0
    for _ in range(n):
        c = -1
        for x in range(n):  # the eligible coflow of best rank
            if eligible[x] and (c < 0 or rank[x] < rank[c]):
                c = x
        if c < 0:
            break
        eligible[c] = False
        t0 = ready_at[c]
        end_c = t0
        end_star = np.nan
        for q in range(fptr[c], fptr[c + 1]):  # longest first: the first is f*
            fl = flows[q]
            d = dur[fl]
            pa, pb = fsrc[fl], fdst[fl]
            oa, ob = port_ptr[pa], port_ptr[pb]
            na, nb = cnt[pa], cnt[pb]
            # the first interval ending after t0 on each port
            ia = np.searchsorted(be[oa:oa + na], t0, side="right")
            ib = np.searchsorted(be[ob:ob + nb], t0, side="right")
            aligned = align and not np.isnan(end_star)
            want = end_star - d if aligned else t0
            best_start = np.nan
            best_end = np.inf
            best_dist = np.inf
            cur = t0
            while True:  # walk the common free gaps [cur, nxt) in time order
                if ia < na and (ib >= nb or bs[oa + ia] <= bs[ob + ib]):
                    nxt, nend = bs[oa + ia], be[oa + ia]
                    ia += 1
                elif ib < nb:
                    nxt, nend = bs[ob + ib], be[ob + ib]
                    ib += 1
                else:
                    nxt, nend = np.inf, np.inf
                hi = nxt - d
                if hi >= cur:  # exact: a gap rounding makes too short is skipped
                    if not aligned:
                        best_start, best_end = cur, nxt
                        break
                    cand = min(max(want, cur), hi)
                    dist = abs(cand - want)
                    if dist < best_dist:  # strict: ties keep the earlier start
                        best_dist, best_start, best_end = dist, cand, nxt
                    if cur >= want or dist == 0.0:
                        break  # later gaps only start further from want
                elif aligned and cur - want >= best_dist:
                    break
                if nxt == np.inf:
                    break
                if nend > cur:
                    cur = nend
            start = best_start
            end = end_star if aligned and start == want else start + d
            end = min(end, best_end)  # never past the next busy interval
            if np.isnan(end_star):
                end_star = end
            fstart[fl] = start
            fend[fl] = end
            for p in (pa, pb):  # sorted insert
                o = port_ptr[p]
                k = cnt[p]
                while k > 0 and bs[o + k - 1] > start:
                    bs[o + k] = bs[o + k - 1]
                    be[o + k] = be[o + k - 1]
                    k -= 1
                bs[o + k] = start
                be[o + k] = end
                cnt[p] += 1
            if end > end_c:
                end_c = end
        placed += 1
        for q in range(succ_ptr[c], succ_ptr[c + 1]):
            x = succ[q]
            if end_c > ready_at[x]:
                ready_at[x] = end_c
            pending[x] -= 1
            if pending[x] == 0:
                eligible[x] = True
    return fstart, fend, placed


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
    release = inst.release.astype(np.float64)

    succ_ptr, succ = inst.successors_ptr
    pending = np.bincount(inst.starts_after[:, 1], minlength=n).astype(np.int64)
    # per coflow its flows of positive volume, longest first (ties: position)
    pos = np.flatnonzero(inst.flow_volume > 0)
    pos = pos[np.lexsort((pos, -dur[pos], inst.flow_coflow[pos]))]
    fptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(inst.flow_coflow[pos], minlength=n), out=fptr[1:])
    fsrc = inst.flow_src.astype(np.int64)
    fdst = m + inst.flow_dst.astype(np.int64)
    port_ptr = np.zeros(2 * m + 1, dtype=np.int64)
    np.cumsum(np.bincount(fsrc[pos], minlength=2 * m) + np.bincount(fdst[pos], minlength=2 * m),
              out=port_ptr[1:])
    fstart, fend, placed = _place(rank, release.copy(), succ_ptr.astype(np.int64),
                                  succ.astype(np.int64), pending, fptr, pos.astype(np.int64),
                                  fsrc, fdst, dur.astype(np.float64), port_ptr, bool(align))
    if placed != n:  # cannot happen on a checked (acyclic) instance
        raise ValueError("policy_converter: the Starts-After edges have a cycle")
    if progress is not None:
        progress(float(n), float(n))

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

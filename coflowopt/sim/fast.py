"""The incremental engine for order-based policies (compiled; the fast path of the simulator).

Same model as :mod:`coflowopt.sim.engine`, but the whole event loop runs in numba and a flow
completion costs time proportional to what it changes, not to the number of active flows.

The engine is open: a policy hands it an :class:`~coflowopt.sim.policy.EnginePolicy`, its order
as compiled code (a ``key(state, c)`` or a whole-order ``rank(state, act, out)``, called through
its address, so this kernel compiles once for every policy) or as a Python callback, and the
allocation hooks it needs (MADD reservations, D-CLAS demotion).  No policy lives here: Varys's
SEBF key is in :mod:`coflowopt.schedulers.single.varys`, Sincronia's BSSI rank in
:mod:`~coflowopt.schedulers.single.sincronia`, D-CLAS's key in
:mod:`~coflowopt.schedulers.single.aalo`, CoFair's rank in
:mod:`~coflowopt.schedulers.fair.cofair`, the fixed orders' key in :mod:`coflowopt.sim.policy`.
The papers: Varys, Chowdhury, Zhong and Stoica, "Efficient Coflow Scheduling with Varys",
SIGCOMM 2014 (SEBF, MADD, backfilling; Pseudocode 1); Sincronia, Agarwal et al.,
"Sincronia: Near-Optimal Network Design for Coflows", SIGCOMM 2018 (BSSI, Algorithm 1, and its
order-preserving greedy rate allocation); Aalo, Chowdhury and Stoica, "Efficient Coflow
Scheduling Without Prior Knowledge", SIGCOMM 2015 (D-CLAS).

The loop is the event skeleton of :mod:`coflowopt.sim.events` (stop and progress, admissions,
rates, next event, completions), with this engine's steps (full recomputation, cascade, D-CLAS
crossings) as inlined helpers.

Allocation: the active coflows are put in the policy's order; their unfinished flows, in that
order (coflow by coflow, flows in instance order inside a coflow), form one priority list.
A policy with ``madd`` (Varys) first reserves MADD rates (``remaining / Gamma_j(Rem)``) coflow
by coflow.  Then every flow, in list order, takes ``min(free ingress, free egress)`` of what is
left: the order-preserving, work-conserving greedy allocation (``split="ordered"`` of
:func:`coflowopt.sim.allocate.greedy`).  Without MADD the capacities are the ports', so the
list build runs the greedy step and the rate pass's test as it lists each flow
(:func:`_fused_share`): one pass over the list where there were three (the list, the greedy
over the pair heads, the rates of the heads and of the flows still served).

Events:

- a coflow arrival (and, for a policy that re-orders at departures, a departure, or a D-CLAS
  queue change) recomputes the order, the MADD reservations and the greedy allocation from
  scratch;
- a flow completion frees its rate; the greedy allocation is then repaired by a *cascade*: the
  flows after it on its two ports are revisited in priority order, and a port is followed only
  while the capacity seen by the next flow on it differs from before.  The result equals a
  full greedy recomputation (the tests check this against the reference engine).

Pair heads: the first flow of an (ingress, egress) pair in the list takes
``min(free ingress, free egress)``, which leaves one of the two ports full, so every later flow
of the same pair gets nothing from the greedy pass.  The port lists therefore hold only each
pair's first unfinished flow (at most ``m`` per port); when it finishes, the pair's next flow
enters the lists at its place with the residuals the old allocation left before it, and the
cascade gives it its share.  On FB2010 this cut the cascade visits from 53 to 24 million
(Sincronia).  A finished head leaves its port lists in ``O(1)``: its slot is buried
(:func:`_bury`), the walks step over it, and a port is compacted once half its slots are
buried or it holds more than ``m``.  The pairs' chains (their listed flows in list order)
outlive a full recomputation: the coflows listed before that keep their order in the new one
(a longest such run; every one at an arrival under a fixed order) keep their flows' links, and
only the others' and the new coflows' flows are linked in (:func:`_relist`: no random read of
the pair table per listed flow; the same lists, so the same schedules).  The heaps have fixed sizes
(completions and D-CLAS crossings are indexed heaps) and segments go to the chunked store of
:mod:`coflowopt.sim.segstore`, so no array is reallocated inside the event loop.

Kept re-rankings: on a fabric whose ports all have one capacity ``B`` (FB2010 and the
synthetic traces), without MADD, every greedy share and every residual is ``0`` or ``B``: a head
takes ``min(free ingress, free egress)``, and each port is either untouched (``B`` free) or
full.  So the sums and differences of the greedy and of the cascade are exact, and the rates
the cascades leave are, bit for bit, those a recomputation from scratch gives for the same
list.  A re-ranking whose order keeps the listed coflows in their order, with only new coflows
after them (every arrival under FIFO; a departure or a D-CLAS crossing that moves no one), is
then repaired instead of recomputed (:func:`_append_list`): the cascade for the flows finished
at this event, then the new coflows' flows appended to the list, a new pair head taking what
the heads before it left.  The remaining volumes are still brought up to ``t`` and the rate
changes made in list order, as a recomputation makes them, so the schedule is the same
(``fast_simulate(keep=False)`` recomputes every time; the tests compare the two).  Cost: the
flows that changed, not the active ones (FIFO lists each flow once instead of at every arrival:
0.8 M against 43.4 M flows listed on the 1x synthetic trace).

Varys reschedules (SEBF order and MADD reservations) at coflow arrivals and departures, as the
Varys system does; at a flow completion its reservation is released and the freed bandwidth
goes to the work-conserving backfill.
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np
from numba import objmode

from coflowopt._jit import njit
from coflowopt._prefetch import prefetch_row
from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.sim.events import (
    DONE,
    STALLED,
    STOPPED,
    admission_heap,
    admission_inputs,
    admit_next,
    buffer_full,
    grow,
    heap_top,
    iheap_pop,
    iheap_push,
    indexed_delete,
    indexed_set,
    mark_once,
    next_breakpoint,
    progress_or_stop,
    record_rate,
    release_successors,
)
from coflowopt.sim.kernel import (
    Notify,
    Progress,
    fluid_horizon,
    memory_limits,
    new_control,
    prepare,
    progress_target,
    run_kernel,
)
from coflowopt.sim.policy import EnginePolicy, PolicyState, rerank_call
from coflowopt.sim.ready import by_admission, by_key
from coflowopt.sim.segstore import (
    SegmentStore,
    gather_segments,
    new_store,
    release_free_memory,
)
from coflowopt.validate import (
    StreamValidator,
    Tolerance,
    ValidSchedule,
    readonly,
    stream_consume,
)

__all__ = ["fast_simulate"]

TINY = 1e-12
# port lists of 2 m + 2 slots per port, indexed by int32 slots (the cascade's position rows):
# the most ports with m (2 m + 2) < 2**31
MAX_PORTS = 32_767
# a list position's row, one 64-byte cache line (``qp``: int32; ``qx``: the same row as
# float64): int32 columns 0-3 its ingress and egress slots and ports, _STAMP the cascade's
# visit stamp, _DONE the finished flag; float columns _EG its greedy share and _RES, _RES + 1
# the residuals of its ingress and egress port left by the heads before it.  Everything a
# cascade visit reads of a position is in its row (before: the position's two rows, the
# residuals by port-list slot and a stamp by ingress slot, four lines at random places)
_STAMP, _DONE = 4, 5
_EG, _RES = 4, 5
_STAMP_WRAP = 2**31 - 1  # int32 stamps


@njit(cache=True, inline="always")
def _insert(plist, cnt, qp, col, p, cap, q):
    """Put list position ``q`` into port ``p``'s list (slots ``p * cap ...``), keeping
    priority order (a buried slot, :func:`_bury`, holds ``~position``); ``qp[., col]``
    follows each live position's slot."""
    base = p * cap
    k = base + cnt[p]
    while k > base:
        g = plist[k - 1]
        if (g if g >= 0 else ~g) < q:
            break
        plist[k] = g
        if g >= 0:
            qp[g, col] = k
        k -= 1
    plist[k] = q
    qp[q, col] = k
    cnt[p] += 1
    return k


@njit(cache=True, inline="always")
def _bury(plist, qp, col, q):
    """Take list position ``q`` (a finished head) out of its port's list in ``O(1)``: its slot
    keeps ``~q``, which the walks step over and :func:`_compact_port` drops.  Shifting the
    later slots down instead cost a port's length per finished head: 141 M slot moves for
    0.8 M finished flows at 1x, 583 M for 2.5 M at 4x (scf), growing with the ports."""
    a = qp[q, col]
    plist[a] = ~q


@njit(cache=True, inline="always")
def _compact_port(plist, cnt, qp, col, p, cap):
    """Drop port ``p``'s buried slots (the others keep their order)."""
    base = p * cap
    w = base
    for j in range(base, base + cnt[p]):
        g = plist[j]
        if g >= 0:
            if w != j:
                plist[w] = g
                qp[g, col] = w
            w += 1
    cnt[p] = w - base


@njit(cache=True, inline="always")
def _compact_due(plist, cnt, nb, qp, col, p, cap, m):
    """Compact port ``p``'s list (:func:`_compact_port`) once half its slots are buried
    (``nb[p]``, counted since its last compaction: a walk from its start then passes at most
    as many buried slots as flows) or it holds more than ``m`` slots (the next cascade's new
    heads, at most one per pair, then fit in its ``2 m + 2``)."""
    if cnt[p] > m or 2 * nb[p] > cnt[p]:
        _compact_port(plist, cnt, qp, col, p, cap)
        nb[p] = 0


@njit(cache=True, inline="always")
def _live_before(plist, a, base):
    """The last slot before ``a`` on its port that is not buried, or ``base - 1``."""
    j = a - 1
    while j >= base and plist[j] < 0:
        j -= 1
    return j


@njit(cache=True, inline="always")
def _enter_head(plist, cnt, qp, qx, col, p, cap, q, capg):
    """List position ``q`` (a new pair head) enters port ``p``'s list with the residual the
    flows before it left: the last one not buried, its residual less its share, else the
    port's capacity ``capg``."""
    a = _insert(plist, cnt, qp, col, p, cap, q)
    j = _live_before(plist, a, p * cap)
    if j < p * cap:
        qx[q, _RES + col] = capg
    else:
        g = plist[j]
        qx[q, _RES + col] = qx[g, _RES + col] - qx[g, _EG]


# -- the engine's steps (each inlined into _run: coflowopt._jit makes that free) --------------

# A call of an inlined helper takes at most 30 arguments (CPython passes more as one *args
# tuple, which numba's inliner refuses).  The steps on the hot path (a rate change, the cascade
# walk, the completions) take plain arrays: with the arrays in named tuples (read by attribute
# or unpacked at a step's top) the kernel ran 2.5x slower (FB2010: varys 10 s against 4.0 s,
# fair 31 s against 4.3 s; reference counting per access), so the cascade walk and the
# completions, which need more than 30, stay written out in _run.  Cold steps may take tuples.


class Crossings(NamedTuple):
    """D-CLAS: the indexed heap of the active coflows' next threshold crossings."""

    tkey: np.ndarray
    theap: np.ndarray
    twhere: np.ndarray


class Ports(NamedTuple):
    """The cascade's port lists (ingress and egress): slots per port, counts, walkers, the
    list positions, capacity changes, the ports touched by this cascade and the
    heads buried per port since its last compaction."""

    lcap: int
    cnt_in: np.ndarray
    cnt_out: np.ndarray
    cur_in: np.ndarray
    cur_out: np.ndarray
    plist_in: np.ndarray
    plist_out: np.ndarray
    dcap_in: np.ndarray
    dcap_out: np.ndarray
    pm_in: np.ndarray
    pm_out: np.ndarray
    tp_in: np.ndarray
    tp_out: np.ndarray
    nb_in: np.ndarray
    nb_out: np.ndarray


@njit(cache=True, inline="always")
def _set_rate(f, nx, t, kk, fc, x, rem, tl, opened, qkey, qheap, qwhere, nq, csent, ctl, crate,
              retime, n_re, flagged):
    """Change flow ``f``'s rate to ``nx`` at time ``t`` (breakpoint ``kk``): bring its
    remaining volume and its coflow's attained service up to ``t``, and schedule its
    completion; returns ``(nq, n_re)``.  The caller records the change first
    (:func:`coflowopt.sim.events.record_rate`, called in :func:`_run` itself: inlined one level
    down, inside this step, its arguments' copies are not forwarded and cost reference counts
    at each change)."""
    old = x[f]
    v = rem[f] - old * (t - tl[f])
    rem[f] = v if v > 0.0 else 0.0
    tl[f] = t
    c = fc[f]
    csent[c] += crate[c] * (t - ctl[c])
    ctl[c] = t
    crate[c] += nx - old
    if not flagged[c]:
        flagged[c] = True
        retime[n_re] = c
        n_re += 1
    opened[f] = kk
    x[f] = nx
    if nx > 0.0:
        nq = indexed_set(qkey, qheap, qwhere, nq, f, t + rem[f] / nx)
    else:
        nq = indexed_delete(qkey, qheap, qwhere, nq, f)
    return nq, n_re


@njit(cache=True, inline="always")
def _walk(p, idx, pend, live, cur, plist, qp):
    """Move port ``p``'s walker past list index ``idx`` (a flow just processed); returns the
    list position to visit next on this port, or -1.  Its row and the next one's on the port
    are prefetched (:func:`coflowopt._prefetch.prefetch_row`): a walk along one port then
    loads the next row while it visits this one."""
    if cur[p] == idx or cur[p] == -1:
        if live:
            j = idx + 1
            while j < pend and plist[j] < 0:  # buried (_bury)
                j += 1
            if j < pend:
                cur[p] = j
                prefetch_row(qp, plist[j])
                if j + 1 < pend and plist[j + 1] >= 0:
                    prefetch_row(qp, plist[j + 1])
                return plist[j]
        cur[p] = -1
    return -1


@njit(cache=True, inline="always")
def _offer(top, q, wh, nw):
    """Queue list position ``q`` for the cascade: the smallest pending position waits in
    ``top``, outside the heap, so a walk along one port (the usual case) moves from flow to
    flow without a heap operation; returns ``(top, nw)``."""
    if q < 0:
        return top, nw
    if top < 0:
        return q, nw
    if q < top:
        return q, iheap_push(wh, nw, top)
    return top, iheap_push(wh, nw, q)


@njit(cache=True, inline="always")
def _start_walk(p, cap, cnt, cur, plist, wh, nw):
    """Revisit port ``p``'s list from its first flow (its capacity changed)."""
    a = p * cap
    end = a + cnt[p]
    while a < end and plist[a] < 0:  # buried (_bury)
        a += 1
    if a < end and cur[p] != a:
        cur[p] = a
        nw = iheap_push(wh, nw, plist[a])
    return nw


@njit(cache=True, inline="always")
def _cascade_stamp(n_events, qp, pm_in, pm_out):
    """The stamp of the cascade at event ``n_events``: ``n_events + 1`` modulo the int32
    range, the stamps of the rows and ports cleared when it wraps (so no stale stamp
    matches)."""
    k = n_events % _STAMP_WRAP + 1
    if k == 1 and n_events > 0:
        qp[:, _STAMP] = 0
        pm_in[:] = 0
        pm_out[:] = 0
    return k


@njit(cache=True)
def _rerank(handle, t, act, rem, admitted):
    """The order of ``act`` from the Python callback registered under ``handle``
    (:class:`coflowopt.sim.policy.Reranking`); its own function, so that the engine's loop
    holds no object-mode block (lowered inside it, LLVM rejected the function)."""
    with objmode(ranked="int64[::1]"):
        ranked = rerank_call(handle, t, act, rem, admitted)
    return ranked


@njit(cache=True, inline="always")
def _refresh(t, nq, qheap, rem, x, tl):
    """Full recomputation, first: bring the remaining volumes up to ``t`` (the orders read
    them).  Only the flows served at a positive rate (those in the completion heap
    ``qheap[:nq]``) need it: for ``x == 0``, ``rem - 0 * (t - tl) == rem`` exactly, and ``tl``
    is only ever read multiplied by ``x`` (:func:`_set_rate`), so the others' floats would not
    change (before: every active flow at every recomputation, the engine's ``n^2`` term)."""
    for i in range(nq):
        f = qheap[i]
        v = rem[f] - x[f] * (t - tl[f])
        rem[f] = v if v > 0.0 else 0.0
        tl[f] = t


@njit(cache=True, inline="always")
def _compact(n_dirty, dirty, is_dirty, active, ptr, live, live_end, finished):
    """Full recomputation, second: drop finished flows from the live range (in order) of each
    active coflow that had a flow finish since the last one, so the passes below and the
    policies touch unfinished flows only (Varys on FB2010: 51 M flows a pass before, 21 M
    unfinished); the other coflows' ranges hold no finished flow already.  Returns 0 (the
    list's new length)."""
    for j in range(n_dirty):
        c = dirty[j]
        is_dirty[c] = False
        if active[c]:
            w = ptr[c]
            for i in range(ptr[c], live_end[c]):
                f = live[i]
                if not finished[f]:
                    live[w] = f
                    w += 1
            live_end[c] = w
    return 0


@njit(cache=True)
def _initial_live(ptr, order, volume, finished, rem):
    """Per coflow its flows left to finish ``left`` and its live range
    ``live[ptr[c]:live_end[c]]`` (its unfinished flows, in order): an empty flow is finished
    from the start and never listed."""
    C = ptr.size - 1
    left = np.zeros(C, dtype=np.int64)
    live = order.copy()
    live_end = ptr[1:].copy()
    for c in range(C):
        w = ptr[c]
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if volume[f] > 0.0:
                left[c] += 1
                live[w] = f
                w += 1
            else:
                finished[f] = True
                rem[f] = 0.0
        live_end[c] = w
    return left, live, live_end


@njit(cache=True, inline="always")
def _policy_order(t, active, admitted, track_sent, sent, src, dst, volume, rem, ptr, order,
                  weight, release, width, cap_in, cap_out, live, live_end, queue, entry,
                  priority, table, scalars, scratch, iscratch, stats, use_rank, rankfn, cbh,
                  keyfn):
    """The policy's order of the active coflows, from admission order (ties: position): a
    whole-order rank, a Python callback, or a key (a stable sort: ties keep admission order)."""
    act = by_admission(active, admitted)
    nc = act.size
    if track_sent:
        # a finished flow's rem is 0, so this covers every flow of the coflow
        for j in range(nc):
            c = act[j]
            for i in range(ptr[c], ptr[c + 1]):
                f = order[i]
                sent[f] = volume[f] - rem[f]
    st = PolicyState(t, src, dst, volume, rem, sent, ptr, order, weight, release, admitted,
                     width, cap_in, cap_out, live, live_end, queue, entry, priority, table,
                     scalars, scratch, iscratch, stats)
    if use_rank:
        ranked = np.empty(nc, dtype=np.int64)
        rankfn(st, act, ranked)
        return ranked
    if cbh > 0:
        return _rerank(cbh, t, act, rem, admitted)
    kv = np.empty(nc)
    for j in range(nc):
        kv[j] = keyfn(st, act[j])
    return by_key(act, kv)


@njit(cache=True, inline="always")
def _positions(act, ptr, live, live_end, glist, pos):
    """The priority list ``glist`` (the active coflows' unfinished flows in the order
    ``act``), each flow's position ``pos``, and each coflow's range ``cl``: ``(cl, n_list)``."""
    nc = act.size
    cl = np.zeros(nc + 1, dtype=np.int64)
    n_list = 0
    for j in range(nc):
        c = act[j]
        for i in range(ptr[c], live_end[c]):
            f = live[i]
            glist[n_list] = f
            pos[f] = n_list
            n_list += 1
        cl[j + 1] = n_list
    return cl, n_list


@njit(cache=True, inline="always")
def _new_row(q, f, src, dst, qp, qx):
    """List position ``q`` now holds flow ``f``: its ports, no greedy share yet (a head's is
    set by :func:`_greedy`), not finished.  Returns the ports."""
    s_, d_ = src[f], dst[f]
    qp[q, 2] = s_
    qp[q, 3] = d_
    qp[q, _DONE] = 0
    qx[q, _EG] = 0.0
    return s_, d_


@njit(cache=True, inline="always")
def _enlist_head(q, s_, d_, lcap, plist_in, plist_out, cnt_in, cnt_out, qp, hq, n_heads):
    """List position ``q`` is a pair head: it goes last on its ports' lists (the list is
    read in order) and on ``hq``; returns the heads' count."""
    hq[n_heads] = q
    a = s_ * lcap + cnt_in[s_]
    plist_in[a] = q
    qp[q, 0] = a
    cnt_in[s_] += 1
    b = d_ * lcap + cnt_out[d_]
    plist_out[b] = q
    qp[q, 1] = b
    cnt_out[d_] += 1
    return n_heads + 1


@njit(cache=True)
def _build_lists(act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair,
                 stamp_id, lcap, plist_in, plist_out, cnt_in, cnt_out, hq, capg_in, capg_out,
                 x, vis, fuse):
    """The priority list ``glist`` (the active coflows' unfinished flows in order), with each
    coflow's range ``cl``; the pair chains, whose first flow (the pair's head) goes to the port
    lists, and the heads' list positions ``hq`` in order (every other flow's greedy share is 0).
    With ``fuse`` (no MADD) the greedy step and the rate test as it goes
    (:func:`_fused_share`).  Returns ``(cl, n_list, n_heads, n_vis)``."""
    m = cnt_in.size
    use_in = np.zeros(m)
    use_out = np.zeros(m)
    cl, n_list = _positions(act, ptr, live, live_end, glist, pos)
    cnt_in[:] = 0
    cnt_out[:] = 0
    n_heads = n_vis = 0
    for q in range(n_list):
        f = glist[q]
        s_, d_ = _new_row(q, f, src, dst, qp, qx)
        pr = s_ * m + d_
        nxt[f] = -1
        if pair[pr, 0] != stamp_id:
            pair[pr, 0] = stamp_id
            pair[pr, 2] = f
            prv[f] = -1
            head[f] = True
            n_heads = _enlist_head(q, s_, d_, lcap, plist_in, plist_out, cnt_in, cnt_out, qp,
                                   hq, n_heads)
        else:
            head[f] = False
            prv[f] = pair[pr, 1]
            nxt[pair[pr, 1]] = f
        pair[pr, 1] = f
        if fuse:
            n_vis = _fused_share(q, f, head[f], s_, d_, qx, capg_in, capg_out, use_in, use_out,
                                 x, vis, n_vis)
    return cl, n_list, n_heads, n_vis


@njit(cache=True, inline="always")
def _kept_order(act, rank, moved):
    """The coflows of the last list (``rank >= 0``: their places there) that must move for the
    new order ``act``: the ones off a longest run of them whose ranks increase along ``act``
    (patience sorting, ``O(k log k)``), flagged in ``moved``.  The others keep their order,
    and with it every pair chain among their flows, so :func:`_relist` links only the moved
    and the new coflows' flows into the chains.  Returns the number moved, or -1 (nothing
    flagged) when more than half of them move: then the list is rebuilt."""
    seq = np.empty(act.size, dtype=np.int64)  # the listed coflows' places in act
    k = 0
    for i in range(act.size):
        if rank[act[i]] >= 0:
            seq[k] = i
            k += 1
    if k == 0:
        return 0
    tail = np.empty(k, dtype=np.int64)  # tail[l]: the run of length l + 1 ending lowest
    pred = np.empty(k, dtype=np.int64)
    n = 0
    for i in range(k):
        x = rank[act[seq[i]]]
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) // 2
            if rank[act[seq[tail[mid]]]] < x:
                lo = mid + 1
            else:
                hi = mid
        pred[i] = tail[lo - 1] if lo > 0 else -1
        tail[lo] = i
        if lo == n:
            n += 1
    if 2 * (k - n) > k:
        return -1
    for i in range(k):
        moved[act[seq[i]]] = True
    i = tail[n - 1]
    while i >= 0:
        moved[act[seq[i]]] = False
        i = pred[i]
    return k - n


@njit(cache=True, inline="always")
def _chain_out(f, pr, prv, nxt, pair):
    """Take flow ``f`` out of its pair ``pr``'s chain (a chain's first flow is the pair's
    ``pair[pr, 2]``); returns ``(prv[f], nxt[f])``."""
    a = prv[f]
    b = nxt[f]
    if a != -1:
        nxt[a] = b
    else:
        pair[pr, 2] = b
    if b != -1:
        prv[b] = a
    return a, b


@njit(cache=True, inline="always")
def _unlink(f, pr, prv, nxt, head, pair):
    """:func:`_chain_out`, and the next flow becomes the head when ``f`` was it."""
    a, b = _chain_out(f, pr, prv, nxt, pair)
    if b != -1 and a == -1:
        head[b] = True
    head[f] = False


@njit(cache=True, inline="always")
def _link(g, src, dst, m, pos, pair, finished, nxt, prv, head):
    """Link listed flow ``g`` into its pair's chain at its list position ``pos[g]``: ahead of
    the pair's first flow it becomes the pair's head, else it goes after the last flow listed
    before it.  Returns whether ``g`` is now the head."""
    pr = src[g] * m + dst[g]
    h = pair[pr, 2]
    if h != -1 and finished[h]:
        h = -1  # left by a list rebuilt after h finished: the pair has no listed flow
    if h == -1 or pos[h] > pos[g]:
        nxt[g] = h
        prv[g] = -1
        head[g] = True
        pair[pr, 2] = g
        if h != -1:
            prv[h] = g
            head[h] = False
        return True
    a = h
    while nxt[a] != -1 and pos[nxt[a]] < pos[g]:
        a = nxt[a]
    b = nxt[a]
    nxt[g] = b
    prv[g] = a
    nxt[a] = g
    if b != -1:
        prv[b] = g
    head[g] = False
    return False


@njit(cache=True)
def _relist(act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair,
            finished, fin, n_fin, rank, moved, lcap, plist_in, plist_out, cnt_in, cnt_out, hq,
            capg_in, capg_out, x, vis, fuse):
    """:func:`_build_lists` when most of the last list's coflows keep their order
    (:func:`_kept_order`): the same list, chains, heads and port lists, but the pair chains are
    kept; the flows finished at this event and the moved coflows' flows leave them (the
    cascade took out the flows finished earlier), and only the moved and the new coflows'
    flows are linked in, by list position; with ``fuse``, as :func:`_build_lists`.  Returns
    ``(cl, n_list, n_heads, n_linked, n_vis)``."""
    m = cnt_in.size
    nc = act.size
    for j in range(n_fin):
        f = fin[j]
        _unlink(f, src[f] * m + dst[f], prv, nxt, head, pair)
    for j in range(nc):
        c = act[j]
        if moved[c]:
            for i in range(ptr[c], live_end[c]):
                f = live[i]
                _unlink(f, src[f] * m + dst[f], prv, nxt, head, pair)
    cl, n_list = _positions(act, ptr, live, live_end, glist, pos)
    n_linked = 0
    for j in range(nc):
        c = act[j]
        if rank[c] >= 0 and not moved[c]:
            continue
        moved[c] = False
        for i in range(ptr[c], live_end[c]):
            n_linked += 1
            _link(live[i], src, dst, m, pos, pair, finished, nxt, prv, head)
    cnt_in[:] = 0
    cnt_out[:] = 0
    use_in = np.zeros(m)
    use_out = np.zeros(m)
    n_heads = n_vis = 0
    for q in range(n_list):
        f = glist[q]
        s_, d_ = _new_row(q, f, src, dst, qp, qx)
        h = head[f]
        if h:
            n_heads = _enlist_head(q, s_, d_, lcap, plist_in, plist_out, cnt_in, cnt_out, qp,
                                   hq, n_heads)
        if fuse:
            n_vis = _fused_share(q, f, h, s_, d_, qx, capg_in, capg_out, use_in, use_out, x,
                                 vis, n_vis)
    return cl, n_list, n_heads, n_linked, n_vis


@njit(cache=True)
def _list_step(act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair,
               finished, fin, n_fin, rank, moved, refill, n_full, lcap, plist_in, plist_out,
               cnt_in, cnt_out, hq, capg_in, capg_out, x, vis, fuse):
    """The full recomputation's list for the order ``act``: relisted with the pair chains kept
    (:func:`_relist`) when most of the last list's coflows keep their order, else rebuilt
    (:func:`_build_lists`; the first list, or without the cascade that keeps the chains up to
    date between recomputations); the list's coflows' ranks are remembered for the next.
    With ``fuse`` (no MADD) the greedy allocation and the rate pass's choice of positions are
    made as the list is built (:func:`_fused_share`).  Returns
    ``(cl, n_list, n_heads, n_linked, n_vis)``.

    A compiled call, not inlined (it and the two list builds take more than the inliner's 30
    arguments; one call per recomputation costs nothing measurable), with the port arrays as
    separate arguments: a first version, inlined and passed the :class:`Ports` tuple, ran the
    whole kernel 2-3x slower (4x trace: scf 24.3 against 11.6 s, fifo 70 against 24 s)."""
    if refill and n_full > 1 and _kept_order(act, rank, moved) >= 0:
        cl, n_list, n_heads, n_link, n_vis = _relist(
            act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair,
            finished, fin, n_fin, rank, moved, lcap, plist_in, plist_out, cnt_in, cnt_out, hq,
            capg_in, capg_out, x, vis, fuse)
    else:
        cl, n_list, n_heads, n_vis = _build_lists(
            act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair, n_full,
            lcap, plist_in, plist_out, cnt_in, cnt_out, hq, capg_in, capg_out, x, vis, fuse)
        n_link = n_list
    for j in range(act.size):
        rank[act[j]] = j
    return cl, n_list, n_heads, n_link, n_vis


@njit(cache=True)
def _recompute(act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair,
               finished, fin, n_fin, rank, moved, refill, n_full, lcap, plist_in, plist_out,
               cnt_in, cnt_out, hq, capg_in, capg_out, x, vis, madd, rem, r, load_in, load_out,
               cap_in, cap_out):
    """A full recomputation for the order ``act``, after the order: the list
    (:func:`_list_step`), the MADD reservations and the greedy allocation.  Returns
    ``(n_list, n_list, n_heads, n_linked, n_vis)`` (the list's length, the flows listed, the
    pair heads, the flows linked into the chains; ``vis``: the positions the rate pass
    visits).  A compiled call, not inlined (one per recomputation): it keeps :func:`_run`
    short."""
    cl, n_list, n_heads, n_link, n_vis = _list_step(
        act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair, finished,
        fin, n_fin, rank, moved, refill, n_full, lcap, plist_in, plist_out, cnt_in, cnt_out, hq,
        capg_in, capg_out, x, vis, not madd)
    _madd(madd, cl, n_list, glist, src, dst, rem, r, load_in, load_out, capg_in, capg_out,
          cap_in, cap_out)
    if madd:  # else the list build ran the greedy and chose the positions (vis)
        _greedy(n_heads, hq, qp, qx, capg_in, capg_out, cap_in, cap_out)
        n_vis = _all_positions(n_list, vis)
    return n_list, n_list, n_heads, n_link, n_vis


@njit(cache=True, inline="always")
def _order_kept(act, rank):
    """Whether the order ``act`` keeps the last list's coflows (``rank >= 0``) in their order,
    first, with only new coflows after them: the case a kept re-ranking repairs
    (:func:`_append_list`) instead of recomputing."""
    last = -1
    new = False
    for j in range(act.size):
        k = rank[act[j]]
        if k < 0:
            new = True
        elif new or k <= last:
            return False
        else:
            last = k
    return True


@njit(cache=True)
def _append_list(act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair,
                 finished, rank, n_list, lcap, plist_in, plist_out, cnt_in, cnt_out, nb_in,
                 nb_out, capg_in, capg_out, cap_in, cap_out, x, vis):
    """A kept re-ranking (:func:`_order_kept`) on a fabric whose ports all have one capacity
    ``B``, without MADD: the new coflows' flows go after the list, each linked last into its
    pair's chain, and a new pair head takes ``min(free ingress, free egress)`` of what the
    heads before it left (:func:`_enter_head`).  The list's own flows keep their rates: on
    such a fabric every greedy share and residual is ``0`` or ``B``, so the rates the cascades
    left are the floats a recomputation from scratch gives (module docstring, "Kept
    re-rankings").  The ranks become the places in ``act``.  Returns ``(n_list, n_added,
    n_heads, n_added, n_vis)`` (as :func:`_recompute`: every flow added is listed and
    linked); ``vis``: the positions whose rate changes, in list order."""
    m = cnt_in.size
    n_added = n_heads = n_vis = 0
    for j in range(act.size):
        c = act[j]
        if rank[c] < 0:
            for i in range(ptr[c], live_end[c]):
                g = live[i]
                q = n_list
                n_list += 1
                n_added += 1
                glist[q] = g
                pos[g] = q
                s_, d_ = _new_row(q, g, src, dst, qp, qx)
                # last on the list, so last in its pair's chain, or the pair's new head
                if _link(g, src, dst, m, pos, pair, finished, nxt, prv, head):
                    n_heads += 1
                    _enter_head(plist_in, cnt_in, qp, qx, 0, s_, lcap, q, capg_in[s_])
                    _enter_head(plist_out, cnt_out, qp, qx, 1, d_, lcap, q, capg_out[d_])
                    v = min(qx[q, _RES], qx[q, _RES + 1])
                    if v <= TINY * min(cap_in[s_], cap_out[d_]):
                        v = 0.0
                    qx[q, _EG] = v
                    if v != x[g]:
                        vis[n_vis] = q
                        n_vis += 1
                    _compact_due(plist_in, cnt_in, nb_in, qp, 0, s_, lcap, m)
                    _compact_due(plist_out, cnt_out, nb_out, qp, 1, d_, lcap, m)
                # a flow behind its pair's head gets 0, the rate it has (it was never listed)
    for j in range(act.size):
        rank[act[j]] = j
    return n_list, n_added, n_heads, n_added, n_vis


@njit(cache=True, inline="always")
def _madd(madd, cl, n_list, glist, src, dst, rem, r, load_in, load_out, capg_in, capg_out,
          cap_in, cap_out):
    """Varys's MADD reservations ``r`` (Chowdhury, Zhong and Stoica, SIGCOMM 2014:
    each flow of coflow ``j`` gets ``remaining / Gamma_j(Rem)``), coflow by coflow on the
    residual capacities ``capg``; without ``madd`` none, and ``capg`` is the capacity."""
    capg_in[:] = cap_in
    capg_out[:] = cap_out
    if not madd:
        return  # r stays 0: only this step (with madd) sets a reservation
    for q in range(n_list):
        r[glist[q]] = 0.0
    for j in range(cl.size - 1):
        for q in range(cl[j], cl[j + 1]):
            f = glist[q]
            load_in[src[f]] += rem[f]
            load_out[dst[f]] += rem[f]
        gm = 0.0
        blocked = False
        for q in range(cl[j], cl[j + 1]):
            f = glist[q]
            s_, d_ = src[f], dst[f]
            if load_in[s_] > 0.0:
                if capg_in[s_] <= TINY * cap_in[s_]:
                    blocked = True
                else:
                    gm = max(gm, load_in[s_] / capg_in[s_])
            if load_out[d_] > 0.0:
                if capg_out[d_] <= TINY * cap_out[d_]:
                    blocked = True
                else:
                    gm = max(gm, load_out[d_] / capg_out[d_])
        for q in range(cl[j], cl[j + 1]):
            f = glist[q]
            load_in[src[f]] = 0.0
            load_out[dst[f]] = 0.0
        if not blocked and gm > 0.0:
            for q in range(cl[j], cl[j + 1]):
                f = glist[q]
                v = rem[f] / gm
                r[f] = v
                capg_in[src[f]] = max(capg_in[src[f]] - v, 0.0)
                capg_out[dst[f]] = max(capg_out[dst[f]] - v, 0.0)


@njit(cache=True, inline="always")
def _share(q, s_, d_, qx, capg_in, capg_out, use_in, use_out, cap_in, cap_out):
    """The greedy step of the pair head at list position ``q`` on ports ``(s_, d_)``: it takes
    ``min(free ingress, free egress)`` of what MADD left (``capg - use``; nothing under the
    threshold), its share in ``qx[q, _EG]``; the residuals it saw go to its row (``qx[q,
    _RES]``, ``qx[q, _RES + 1]``, which the cascade repairs from).  Returns the share."""
    r_in = capg_in[s_] - use_in[s_]
    r_out = capg_out[d_] - use_out[d_]
    qx[q, _RES] = r_in
    qx[q, _RES + 1] = r_out
    v = min(r_in, r_out)
    if v <= TINY * min(cap_in[s_], cap_out[d_]):
        v = 0.0
    qx[q, _EG] = v
    use_in[s_] += v
    use_out[d_] += v
    return v


@njit(cache=True, inline="always")
def _greedy(n_heads, hq, qp, qx, capg_in, capg_out, cap_in, cap_out):
    """The greedy pass over the pair heads ``hq`` after MADD (:func:`_share` each, in list
    order; a flow behind its pair's head gets nothing: one of its ports is full).  Without
    MADD the list build runs it as it lists the heads (:func:`_fused_share`)."""
    use_in = np.zeros(capg_in.size)
    use_out = np.zeros(capg_out.size)
    for k in range(n_heads):
        q = hq[k]
        _share(q, qp[q, 2], qp[q, 3], qx, capg_in, capg_out, use_in, use_out, cap_in,
               cap_out)


@njit(cache=True, inline="always")
def _fused_share(q, f, head, s_, d_, qx, capg_in, capg_out, use_in, use_out, x, vis, n_vis):
    """Without MADD, the greedy step and the rate pass's test at list position ``q`` (flow
    ``f``), as the list is built: a pair head takes its share (:func:`_share`; the capacities
    are the ports', so ``capg`` is both), every other flow gets 0; ``q`` goes on ``vis`` when
    the new rate (``0 + share``, the share itself: it is 0.0 or above the threshold) differs
    from ``x[f]``.  The same floats in the same order as a greedy pass over the heads followed
    by a rate pass over the heads and the flows still served, one pass over the list instead
    of three.  Returns the count on ``vis``."""
    nx = 0.0
    if head:
        nx = _share(q, s_, d_, qx, capg_in, capg_out, use_in, use_out, capg_in, capg_out)
    if nx != x[f]:
        vis[n_vis] = q
        n_vis += 1
    return n_vis


@njit(cache=True, inline="always")
def _all_positions(n_list, vis):
    """With MADD the rate pass visits every list position (a reservation goes to every flow);
    returns their count.  (Without MADD the list build chose them: :func:`_fused_share`.)"""
    for q in range(n_list):
        vis[q] = q
    return n_list


@njit(cache=True, inline="always")
def _cascade_seed(fin, n_fin, stamp_id, src, dst, r, capg_in, capg_out, ports, qp, qx, pos, head,
                  prv, nxt, pair, newh, wh):
    """Cascade, first: the finished flows free their MADD reservations (their ports are walked
    from the start) and leave their pairs' chains; a finished head is queued, and its pair's
    next flow enters the port lists as the new head.  Returns ``(nw, n_tin, n_tout)``: the
    walk heap's size and the ports touched so far (``tp_in``, ``tp_out``)."""
    m = ports.cnt_in.size
    nw = 0
    n_new = 0
    n_tin = 0
    n_tout = 0
    for j in range(n_fin):
        f = fin[j]
        s_, d_ = src[f], dst[f]
        if ports.pm_in[s_] != stamp_id:
            ports.pm_in[s_] = stamp_id
            ports.tp_in[n_tin] = s_
            n_tin += 1
        if ports.pm_out[d_] != stamp_id:
            ports.pm_out[d_] = stamp_id
            ports.tp_out[n_tout] = d_
            n_tout += 1
        if r[f] > 0.0:
            capg_in[s_] += r[f]
            ports.dcap_in[s_] += r[f]
            capg_out[d_] += r[f]
            ports.dcap_out[d_] += r[f]
            r[f] = 0.0
            nw = _start_walk(s_, ports.lcap, ports.cnt_in, ports.cur_in, ports.plist_in, wh, nw)
            nw = _start_walk(d_, ports.lcap, ports.cnt_out, ports.cur_out, ports.plist_out, wh, nw)
        # unlink from the pair's chain; a finished head passes the pair to the next
        pr = s_ * m + d_
        _chain_out(f, pr, prv, nxt, pair)
        if head[f]:
            nw = iheap_push(wh, nw, pos[f])
            newh[n_new] = pr  # one head per pair: m * m slots suffice
            n_new += 1
    for j in range(n_new):
        g = pair[newh[j], 2]
        if g == -1 or head[g]:
            continue
        # the new head enters with no rate and the residuals the old allocation left before
        # it (the last flow before it not buried); the cascade then gives it its share.  It
        # follows its pair's finished head, still listed, on both ports, so a walk started
        # above at a port's first flow stays there
        head[g] = True
        q = pos[g]
        qx[q, _EG] = 0.0
        s_, d_ = src[g], dst[g]
        _enter_head(ports.plist_in, ports.cnt_in, qp, qx, 0, s_, ports.lcap, q, capg_in[s_])
        _enter_head(ports.plist_out, ports.cnt_out, qp, qx, 1, d_, ports.lcap, q, capg_out[d_])
        nw = iheap_push(wh, nw, q)
    return nw, n_tin, n_tout


@njit(cache=True, inline="always")
def _cascade_reset(n_tin, n_tout, ports, fin, n_fin, head, src, dst, pos, qp):
    """Cascade, last: reset the touched ports (so an event costs nothing per idle port), and
    the finished heads leave the port lists (buried; their ports compacted when due,
    :func:`_compact_due`)."""
    for j in range(n_tin):
        ports.dcap_in[ports.tp_in[j]] = 0.0
        ports.cur_in[ports.tp_in[j]] = -1
    for j in range(n_tout):
        ports.dcap_out[ports.tp_out[j]] = 0.0
        ports.cur_out[ports.tp_out[j]] = -1
    m = ports.cnt_in.size
    for j in range(n_fin):
        f = fin[j]
        if head[f]:
            head[f] = False
            _bury(ports.plist_in, qp, 0, pos[f])
            _bury(ports.plist_out, qp, 1, pos[f])
            ports.nb_in[src[f]] += 1
            ports.nb_out[dst[f]] += 1
    for j in range(n_fin):
        f = fin[j]
        _compact_due(ports.plist_in, ports.cnt_in, ports.nb_in, qp, 0, src[f], ports.lcap, m)
        _compact_due(ports.plist_out, ports.cnt_out, ports.nb_out, qp, 1, dst[f], ports.lcap, m)


@njit(cache=True, inline="always")
def _retime(n_re, retime, flagged, demotion, active, queue, crate, csent, ctl, t, thresholds,
            norm, tkey, theap, twhere, nt):
    """D-CLAS: the coflows whose rate changed get a new threshold-crossing time (Chowdhury and
    Stoica, "Efficient Coflow Scheduling Without Prior Knowledge", SIGCOMM 2015:
    a coflow moves to the next queue when its attained service crosses the queue's threshold);
    returns ``nt``."""
    n_thr = thresholds.size
    for j in range(n_re):
        c = retime[j]
        flagged[c] = False
        if demotion and active[c] and queue[c] < n_thr:
            if crate[c] > 0.0:
                csent[c] += crate[c] * (t - ctl[c])
                ctl[c] = t
                gap = thresholds[queue[c]] * norm[c] - csent[c]
                tc = t + max(gap, 0.0) / crate[c]
                nt = indexed_set(tkey, theap, twhere, nt, c, tc)
            else:
                nt = indexed_delete(tkey, theap, twhere, nt, c)
    return nt


@njit(cache=True, inline="always")
def _demote(t, tol, crossings, nt, entry, queue, counter, csent, crate, ctl, norm, thresholds,
            full):
    """D-CLAS threshold crossings due by ``t``: demote, keeping the FIFO order of simultaneous
    ones (Chowdhury and Stoica, SIGCOMM 2015: FIFO inside a queue); a demotion asks
    for a full recomputation.  Returns ``(nt, counter, full)``."""
    n_thr = thresholds.size
    nmov = 0
    mv = np.empty(0, dtype=np.int64)
    while nt > 0 and crossings.tkey[0] <= t + tol:
        c = crossings.theap[0]
        nt = indexed_delete(crossings.tkey, crossings.theap, crossings.twhere, nt, c)
        mv = grow(mv, nmov)
        mv[nmov] = c
        nmov += 1
    if nmov > 0:
        mv = mv[:nmov]
        mv = mv[np.argsort(entry[mv], kind="mergesort")]
        mv = mv[np.argsort(queue[mv], kind="mergesort")]
        for j in range(nmov):
            c = mv[j]
            csent[c] += crate[c] * (t - ctl[c])
            ctl[c] = t
            val = csent[c] / norm[c]
            q = queue[c]
            # a threshold is crossed when reached, or when the time left to reach it is within
            # the event tolerance (else late in a long trace the crossing would fire at the
            # same t forever, or a hair later than a crossing it ties with, which changes the
            # FIFO order in the queue)
            while q < n_thr and (
                    val >= thresholds[q] * (1 - 1e-9)
                    or (crate[c] > 0.0 and t + (thresholds[q] * norm[c] - csent[c])
                        / crate[c] <= t + tol)):
                q += 1
            if q != queue[c]:
                queue[c] = q
                entry[c] = counter
                counter += 1
                full = True
            if not full and q < n_thr and crate[c] > 0.0:
                tc = t + max(thresholds[q] * norm[c] - csent[c], 0.0) / crate[c]
                nt = indexed_set(crossings.tkey, crossings.theap, crossings.twhere, nt, c, tc)
    return nt, counter, full


@njit(cache=True, inline="always")
def _retime_all(t, active, csent, crate, ctl, flagged, retime, n_re):
    """Before a full recomputation after demotions: every active coflow is brought up to ``t``
    and re-timed (its crossing time is set again after the new rates); returns ``n_re``."""
    for c in range(active.size):
        if active[c]:
            csent[c] += crate[c] * (t - ctl[c])
            ctl[c] = t
            if not flagged[c]:
                flagged[c] = True
                retime[n_re] = c
                n_re += 1
    return n_re


@njit(cache=True, inline="always")
def _close_open(kk, x, opened, lean, vs, buf_i, buf_d, chunks_i, chunks_d, ns, bps):
    """After the loop: close the segments still open (rate 0 from the last breakpoint)."""
    for f in range(x.size):
        if x[f] > 0.0:
            ns = record_rate(lean, buf_i, buf_d, chunks_i, chunks_d, ns, f, opened[f], kk, x[f],
                             0.0)
            if buffer_full(lean, ns):
                ns = stream_consume(vs, buf_i, buf_d, ns, bps)
    return ns


@njit(cache=True)
def _new_lists(F, m, C):
    """The priority list's and the cascade's arrays, allocated once for :func:`_run` (see its
    unpacking there for the order)."""
    # port lists hold only pair heads (see the module docstring): at most one live and one
    # just-finished head per (ingress, egress) pair, so 2 m + 2 slots per port
    lcap = 2 * m + 2
    plist_in = np.empty(m * lcap, dtype=np.int32)  # list positions
    cnt_in = np.zeros(m, dtype=np.int64)
    plist_out = np.empty(m * lcap, dtype=np.int32)
    cnt_out = np.zeros(m, dtype=np.int64)
    head = np.zeros(F, dtype=np.bool_)
    nxt = np.full(F, -1, dtype=np.int32)  # the pair's chain, in priority order
    prv = np.full(F, -1, dtype=np.int32)
    # per (ingress, egress) pair: the recomputation that last listed it, its last listed flow
    # and its chain's head, in one row (the list build reads a random pair per flow: one cache
    # line, not three; int32: flow ids and recomputation counts stay below 2**31)
    pair = np.zeros((m * m, 3), dtype=np.int32)
    pair[:, 2] = -1
    newh = np.empty(m * m, dtype=np.int64)
    glist = np.empty(F, dtype=np.int32)
    dcap_in = np.zeros(m)  # cascade: capacity change minus usage change, per port
    dcap_out = np.zeros(m)
    cur_in = np.full(m, -1, dtype=np.int64)
    cur_out = np.full(m, -1, dtype=np.int64)
    # ports a cascade touched (reset after it, so an event costs nothing per idle port)
    pm_in = np.zeros(m, dtype=np.int64)
    pm_out = np.zeros(m, dtype=np.int64)
    tp_in = np.empty(m, dtype=np.int64)
    tp_out = np.empty(m, dtype=np.int64)
    # the cascade's heap of list positions: per port one cursor and one restart, and the
    # finished and new heads (at most one each per pair)
    wh = np.empty(4 * m + 2 * m * m + 16, dtype=np.int64)
    hq = np.empty(max(min(F, m * m), 1), dtype=np.int32)  # the heads' list positions, in order
    # per coflow: its rank in the last list (-1: never listed), and whether it moves in the
    # next (what keeps its order keeps its pair chains: _kept_order)
    rank = np.full(C, -1, dtype=np.int64)
    moved = np.zeros(C, dtype=np.bool_)
    # per port: finished heads buried in its list since it was last compacted (a count left
    # over from before a rebuilt list only makes the next compaction come early)
    nb_in = np.zeros(m, dtype=np.int64)
    nb_out = np.zeros(m, dtype=np.int64)
    return (lcap, plist_in, cnt_in, plist_out, cnt_out, head, nxt, prv,
            pair, newh, glist, dcap_in, dcap_out, cur_in, cur_out, pm_in, pm_out,
            tp_in, tp_out, wh, hq, rank, moved, nb_in, nb_out)


class FastRun(NamedTuple):
    """What :func:`_run` returns (the segments are joined by the caller, once the kernel's
    working arrays are gone)."""

    breakpoints: np.ndarray  #: float64: the event times
    store: SegmentStore      #: the recorded segments (streamed: the validator's last buffer)
    status: int              #: :data:`~coflowopt.sim.events.DONE`, ``STALLED`` or ``STOPPED``
    events: int              #: events processed
    recomputations: int      #: full recomputations (order, MADD, greedy)
    visits: int              #: cascade visits
    listed: int              #: flows listed by the full recomputations (their passes' work)
    heads: int               #: pair heads of those lists (the greedy and rate passes' work)
    linked: int              #: flows linked into the pair chains (all listed when rebuilt)


@njit(cache=True, nogil=True)
def _run(ptr, order, fc, src, dst, volume, release, weight, n_pred, succ_ptr, succ, cap_in,
         cap_out, width, t0, refill, kept, lean, vs, kctl, keyfn, rankfn, use_rank, cbh,
         departures, madd, demotion, thresholds, norm, track_sent, priority, table, scalars,
         scratch, iscratch, stats):
    """The event loop (:mod:`coflowopt.sim.events`'s skeleton, steps below): a FastRun."""
    C = ptr.size - 1
    F = src.size
    m = cap_in.size
    # flow state; remaining is lazy: rem at time tl, served at rate x since
    rem = volume.copy()
    tl = np.full(F, t0)
    x = np.zeros(F)
    r = np.zeros(F)  # Varys: MADD reservation
    finished = np.zeros(F, dtype=np.bool_)
    # what a policy reads as sent (sim.policy.PolicyState), kept when it asks for it
    sent = np.zeros(F if track_sent else 0)
    opened = np.zeros(F, dtype=np.int32)
    pos = np.zeros(F, dtype=np.int32)  # the flow's position in the priority list glist
    # one 64-byte row per list position, ``qx`` the same rows as float64 (layout: _STAMP above)
    qp = np.zeros((F, 16), dtype=np.int32)
    qx = qp.view(np.float64)
    # coflow state
    left, live, live_end = _initial_live(ptr, order, volume, finished, rem)
    # the coflows whose live range may hold finished flows (compacted at the next recomputation)
    is_dirty = np.zeros(C, dtype=np.bool_)
    dirty = np.empty(max(C, 1), dtype=np.int64)
    admitted = np.full(C, np.inf)
    active = np.zeros(C, dtype=np.bool_)
    csent = np.zeros(C)
    ctl = np.full(C, t0)
    crate = np.zeros(C)
    flagged = np.zeros(C, dtype=np.bool_)
    retime = np.empty(max(C, 1), dtype=np.int64)
    queue = np.zeros(C, dtype=np.int64)
    entry = np.zeros(C, dtype=np.int64)
    capg_in = cap_in.copy()
    capg_out = cap_out.copy()
    (lcap, plist_in, cnt_in, plist_out, cnt_out, head, nxt, prv, pair,
     newh, glist, dcap_in, dcap_out, cur_in, cur_out, pm_in, pm_out, tp_in, tp_out,
     wh, hq, rank, moved, nb_in, nb_out) = _new_lists(F, m, C)
    n_list = 0
    act = np.empty(0, dtype=np.int64)  # the last order (a kept re-ranking appends to it)
    # admissions (each coflow once); flow completions and D-CLAS crossings (indexed)
    ak, av, na = admission_heap(n_pred, release)
    qkey = np.empty(F)
    qheap = np.empty(F, dtype=np.int32)
    qwhere = np.full(F, -1, dtype=np.int32)
    tkey = np.empty(C)
    theap = np.empty(C, dtype=np.int64)
    twhere = np.full(C, -1, dtype=np.int64)
    # output
    bps = np.empty(1024)
    bps[0] = t0
    buf_i, buf_d, chunks_i, chunks_d = new_store()  # (flow, first bp, last bp; rate)
    load_in, load_out = np.zeros(m), np.zeros(m)  # MADD's port loads
    vis = np.empty(F, dtype=np.int32)  # the list positions a recomputation's rate loop visits
    fin = np.empty(16, dtype=np.int64)
    t = t0
    # the heaps' and lists' sizes, the breakpoint and segment counts, the event counts
    n_dirty = n_re = counter = nq = nt = kk = ns = n_fin = n_done = n_events = 0
    n_full = n_visits = n_listed = 0  # counters: recomputations, cascade visits, flows listed
    n_headed = n_linked = 0  # counters: pair heads the greedy passes visited, flows linked
    full = False
    ports = Ports(lcap, cnt_in, cnt_out, cur_in, cur_out, plist_in, plist_out, dcap_in, dcap_out,
                  pm_in, pm_out, tp_in, tp_out, nb_in, nb_out)
    crossings = Crossings(tkey, theap, twhere)
    while n_done < C:
        # 1. progress, and the waiting thread's stop flag, once an event
        if progress_or_stop(kctl, t, t0, n_done, n_events):
            return FastRun(bps[: kk + 1], SegmentStore(buf_i, buf_d, chunks_i, chunks_d, ns),
                           STOPPED, n_events, n_full, n_visits, n_listed, n_headed, n_linked)
        # 2. admissions at t
        while True:
            c, na = admit_next(ak, av, na, t)
            if c < 0:
                break
            admitted[c] = t
            ctl[c] = t
            if left[c] == 0:
                n_done += 1
                na = release_successors(c, t, succ_ptr, succ, n_pred, release, ak, av, na)
            else:
                active[c] = True
                queue[c] = 0
                entry[c] = counter
                counter += 1
                full = True
        if n_done == C:
            break
        # 3. rates: a full recomputation (order, MADD, greedy), or a kept re-ranking's
        # repair (the cascade, then the new coflows appended) ...
        cascade = n_fin > 0 and refill
        append = False
        n_lst = n_heads = n_link = n_vis = 0
        if full:
            n_full += 1
            _refresh(t, nq, qheap, rem, x, tl)
            n_dirty = _compact(n_dirty, dirty, is_dirty, active, ptr, live, live_end, finished)
            act = _policy_order(t, active, admitted, track_sent, sent, src, dst, volume, rem,
                                ptr, order, weight, release, width, cap_in, cap_out, live,
                                live_end, queue, entry, priority, table, scalars, scratch,
                                iscratch, stats, use_rank, rankfn, cbh, keyfn)
            append = kept and n_full > 1 and _order_kept(act, rank)
            if not append:
                cascade = False
                n_list, n_lst, n_heads, n_link, n_vis = _recompute(
                    act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head,
                    pair, finished, fin, n_fin, rank, moved, refill, n_full, lcap, plist_in,
                    plist_out, cnt_in, cnt_out, hq, capg_in, capg_out, x, vis, madd, rem, r,
                    load_in, load_out, cap_in, cap_out)
            full = False
        if cascade:
            # ... the cascade: repair the greedy allocation after flow completions
            stamp_id = _cascade_stamp(n_events, qp, pm_in, pm_out)
            nw, n_tin, n_tout = _cascade_seed(fin, n_fin, stamp_id, src, dst, r, capg_in,
                                              capg_out, ports, qp, qx, pos, head, prv, nxt, pair,
                                              newh, wh)
            # the walk stays written out: it needs some 50 arguments (see above _set_rate)
            top = -1
            while nw > 0 or top >= 0:
                if top >= 0 and (nw == 0 or top <= wh[0]):
                    q = top
                    top = -1
                else:
                    q = wh[0]
                    nw = iheap_pop(wh, nw)
                if qp[q, _STAMP] == stamp_id:
                    continue
                qp[q, _STAMP] = stamp_id
                a = qp[q, 0]
                n_visits += 1
                b = qp[q, 1]
                s_, d_ = qp[q, 2], qp[q, 3]
                # written out, as in _cascade_seed: an inlined helper taking the four arrays
                # cost varys 2 s over the 59 M visits (reference counting per call); with
                # coflowopt._jit's copy forwarding a helper (_touch at the four sites) still
                # measured 0.65 s slower (6 interleaved runs, 10.1 against 9.4 s), so it stays
                if pm_in[s_] != stamp_id:
                    pm_in[s_] = stamp_id
                    tp_in[n_tin] = s_
                    n_tin += 1
                if pm_out[d_] != stamp_id:
                    pm_out[d_] = stamp_id
                    tp_out[n_tout] = d_
                    n_tout += 1
                r_in = qx[q, _RES] + dcap_in[s_]
                r_out = qx[q, _RES + 1] + dcap_out[d_]
                qx[q, _RES], qx[q, _RES + 1] = r_in, r_out
                done = qp[q, _DONE] != 0
                if done:
                    ne = 0.0
                else:
                    ne = min(r_in, r_out)
                    if ne <= TINY * min(cap_in[s_], cap_out[d_]):
                        ne = 0.0
                eg = qx[q, _EG]
                dx = ne - eg
                if abs(dx) > TINY * min(cap_in[s_], cap_out[d_]) or (ne == 0.0 and eg != 0.0):
                    qx[q, _EG] = ne
                    dcap_in[s_] -= dx
                    dcap_out[d_] -= dx
                    if not done:
                        g = glist[q]
                        ns = record_rate(lean, buf_i, buf_d, chunks_i, chunks_d, ns, g, opened[g],
                                         kk, x[g], r[g] + ne)
                        if buffer_full(lean, ns):
                            ns = stream_consume(vs, buf_i, buf_d, ns, bps)
                        nq, n_re = _set_rate(g, r[g] + ne, t, kk, fc, x, rem, tl, opened, qkey,
                                             qheap, qwhere, nq, csent, ctl, crate, retime, n_re,
                                             flagged)
                live_in = abs(dcap_in[s_]) > TINY * cap_in[s_]
                live_out = abs(dcap_out[d_]) > TINY * cap_out[d_]
                top, nw = _offer(top, _walk(s_, a, s_ * lcap + cnt_in[s_], live_in, cur_in,
                                            plist_in, qp), wh, nw)
                top, nw = _offer(top, _walk(d_, b, d_ * lcap + cnt_out[d_], live_out, cur_out,
                                            plist_out, qp), wh, nw)
                if not live_in:
                    dcap_in[s_] = 0.0
                if not live_out:
                    dcap_out[d_] = 0.0
            _cascade_reset(n_tin, n_tout, ports, fin, n_fin, head, src, dst, pos, qp)
        if append:
            n_list, n_lst, n_heads, n_link, n_vis = _append_list(
                act, ptr, live, live_end, src, dst, glist, pos, qp, qx, nxt, prv, head, pair,
                finished, rank, n_list, lcap, plist_in, plist_out, cnt_in, cnt_out, nb_in,
                nb_out, capg_in, capg_out, cap_in, cap_out, x, vis)
        n_listed += n_lst
        n_headed += n_heads
        n_linked += n_link
        # ... and the rate changes they chose, in list order
        for q in vis[:n_vis]:
            f = glist[q]
            nx = r[f] + qx[q, _EG]
            if nx != x[f]:
                ns = record_rate(lean, buf_i, buf_d, chunks_i, chunks_d, ns, f, opened[f], kk,
                                 x[f], nx)
                if buffer_full(lean, ns):
                    ns = stream_consume(vs, buf_i, buf_d, ns, bps)
                nq, n_re = _set_rate(f, nx, t, kk, fc, x, rem, tl, opened, qkey, qheap,
                                     qwhere, nq, csent, ctl, crate, retime, n_re, flagged)
        n_fin = 0
        nt = _retime(n_re, retime, flagged, demotion, active, queue, crate, csent, ctl, t,
                     thresholds, norm, tkey, theap, twhere, nt)
        n_re = 0
        n_events += 1
        # 4. the next event
        tn = min(heap_top(qkey, nq), heap_top(ak, na), heap_top(tkey, nt))
        if tn == np.inf:
            return FastRun(bps[: kk + 1], SegmentStore(buf_i, buf_d, chunks_i, chunks_d, ns),
                           STALLED, n_events, n_full, n_visits, n_listed, n_headed, n_linked)
        bps, kk, t, tol = next_breakpoint(bps, kk, t, tn)
        # 5. flow and coflow completions (written out, as the cascade walk)
        while nq > 0 and qkey[0] <= t + tol:
            f = qheap[0]
            finished[f] = True
            qp[pos[f], _DONE] = 1
            ns = record_rate(lean, buf_i, buf_d, chunks_i, chunks_d, ns, f, opened[f], kk, x[f],
                             0.0)
            if buffer_full(lean, ns):
                ns = stream_consume(vs, buf_i, buf_d, ns, bps)
            nq, n_re = _set_rate(f, 0.0, t, kk, fc, x, rem, tl, opened, qkey, qheap, qwhere, nq,
                                 csent, ctl, crate, retime, n_re, flagged)
            rem[f] = 0.0
            fin = grow(fin, n_fin)
            fin[n_fin] = f
            n_fin += 1
            full = full or departures == 2  # a policy re-ordered at every event
            c = fc[f]
            n_dirty = mark_once(c, is_dirty, dirty, n_dirty)  # compacted at the next recomputation
            left[c] -= 1
            if left[c] == 0:
                active[c] = False
                n_done += 1
                nt = indexed_delete(tkey, theap, twhere, nt, c)
                if track_sent:
                    for i in range(ptr[c], ptr[c + 1]):
                        sent[order[i]] = volume[order[i]]
                if departures > 0 or not refill:
                    full = True  # a departure asks for a full recomputation
                na = release_successors(c, t, succ_ptr, succ, n_pred, release, ak, av, na)
        # 6. D-CLAS threshold crossings (a demotion re-times every active coflow)
        if demotion:
            nt, counter, full = _demote(t, tol, crossings, nt, entry, queue, counter, csent,
                                        crate, ctl, norm, thresholds, full)
            if full:
                n_re = _retime_all(t, active, csent, crate, ctl, flagged, retime, n_re)
    ns = _close_open(kk, x, opened, lean, vs, buf_i, buf_d, chunks_i, chunks_d, ns, bps)
    return FastRun(bps[: kk + 1], SegmentStore(buf_i, buf_d, chunks_i, chunks_d, ns), DONE,
                   n_events, n_full, n_visits, n_listed, n_headed, n_linked)


def fast_simulate(instance: Instance, policy: EnginePolicy, *, refill: bool = True,
                  check: Tolerance | None = None, progress: Progress | None = None,
                  notify: Notify | None = None, control: np.ndarray | None = None,
                  keep: bool = True) -> Schedule | ValidSchedule:
    """Run ``policy`` (an :class:`~coflowopt.sim.policy.EnginePolicy`: its order and its
    allocation hooks) on the compiled engine (see the module docstring) and return the
    schedule.  What the policy reports lands in its ``stats`` array.

    ``refill=False``: rates are recomputed only when a coflow arrives or departs (and, for
    D-CLAS, at threshold crossings); bandwidth freed by a finished flow idles until then, as in
    CoflowSim.  The allocation is then not work conserving between those events.

    ``check``: the rate changes go to the streaming validator (:func:`coflowopt.validate.
    validate_changes`) with these tolerances as they are made, nothing is stored, and the
    result is the :class:`~coflowopt.ValidSchedule` (``InfeasibleSchedule`` if it fails).

    The kernel runs in a worker thread (:func:`coflowopt.sim.kernel.run_kernel`): Ctrl-C
    stops it within a fraction of a second and raises ``KeyboardInterrupt``.  ``progress(t,
    horizon)``: called a few times a second with the simulated time reached since the start
    and an estimate of the run's length (:func:`~coflowopt.sim.kernel.fluid_horizon`, raised
    to ``t`` when passed), in the instance's time unit.  ``notify``: hears
    ``"compiling kernels (first run only) ..."`` and ``"compiled in N s"`` when the kernel
    compiles (default: stderr).  ``control``: a caller's control array
    (:func:`coflowopt.sim.kernel.new_control`) to read progress from or set the stop flag in
    from another thread.

    ``keep=False``: every re-ranking recomputes from scratch, also where the order keeps the
    listed coflows' places and the fabric's ports share one capacity (there the default
    repairs instead: the same schedule, at a cost of what changed; module docstring, "Kept
    re-rankings").  The tests compare the two.
    """
    inst = instance
    C = inst.n_coflows
    m = inst.fabric.ports
    if m > MAX_PORTS:
        raise ValueError(f"the fast engine takes at most {MAX_PORTS:,} ports; this fabric has {m}")
    n_pred, succ_ptr, succ, rel, t0 = admission_inputs(inst)
    def arr(a: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        # writable, contiguous copies of the small arrays (numba compiles per writability)
        return np.array(a, dtype=dtype, order="C", copy=True)

    # the per-flow arrays go as read-only views in their own dtype (int32 ports and coflows),
    # not converted copies: they are the big ones
    stream = StreamValidator(inst, check or Tolerance(), empty=check is None)
    # kept re-rankings are repaired, not recomputed, only where that gives the same floats:
    # every port of one capacity, no MADD (module docstring, "Kept re-rankings")
    kept = bool(refill and keep and not policy.madd and inst.fabric.is_uniform)
    i64 = np.int64
    ctl = new_control(fluid_horizon(inst, t0), C, control)
    args = (arr(inst.coflow_flows_ptr, i64), readonly(inst.coflow_flow_order),
            readonly(inst.flow_coflow), readonly(inst.flow_src), readonly(inst.flow_dst),
            readonly(inst.flow_volume), arr(rel), arr(inst.coflow_weight), n_pred, succ_ptr,
            succ, arr(inst.fabric.capacity_in), arr(inst.fabric.capacity_out),
            arr(inst.coflow_width, i64), float(t0), bool(refill), kept, check is not None,
            stream.state, ctl, *policy.kernel_args(C))
    prepare(_run, *args, notify=notify)
    cb, units = progress_target(progress)
    with policy.rerank or contextlib.nullcontext():
        run = run_kernel(_run, *args, control=ctl, progress=cb, units=units,
                         **memory_limits(check is None))
    if run.status != DONE:
        from coflowopt.sim.engine import SimulationError

        raise SimulationError("the fast engine stalled: active coflows but no pending event")
    meta = {"events": int(run.events), "recomputations": int(run.recomputations),
            "refill": bool(refill), "cascade_visits": int(run.visits), "engine": "fast",
            "recompute_flows": int(run.listed), "recompute_heads": int(run.heads),
            "recompute_linked": int(run.linked)}
    store = run.store
    if check is not None:
        stream.finish(run.breakpoints, store.n, buffer=(store.buf_i, store.buf_d))
        return stream.result(meta)
    bps = run.breakpoints
    del run
    release_free_memory()
    seg_i, seg_d = gather_segments(*store)
    del store
    return Schedule.from_segments(bps, seg_i[0], seg_d, seg_i[1], seg_i[2], meta=meta)

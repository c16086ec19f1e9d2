"""The compiled engine for per-flow max-min fair sharing (the ``fair`` baseline).

Same model and events as :mod:`coflowopt.sim.engine` with
:func:`coflowopt.sim.allocate.max_min_fair` at every event (per-flow max-min fairness by water
filling: Bertsekas and Gallager, "Data Networks", 2nd ed., 1992; the ``fair``
baseline of Chowdhury, Zhong and Stoica, SIGCOMM 2014), but computed on *port pairs*:
flows with the same ingress and egress port get the same max-min fair rate, so the state is
the number of active flows ``n_pq`` of each pair.  At each event the rates are found by water
filling over the ``2 m`` ports: the port with the smallest fair share ``R_p / k_p``
(residual capacity over unfrozen flows) freezes its pairs at that level, which lowers the
residual and the count of their other ports; a pair's level is that of the first of its
two ports to freeze, so the filling writes nothing per pair (538 million writes on FB2010
before).  Shares only rise, so the heap of ports keeps
stale keys as lower bounds and re-keys only the port at its top (on FB2010, 14,700 active
pairs an event: one heap move per freeze made the kernel about 2x slower).

Every flow of a pair is served at the pair's rate from its admission, so a flow finishes when
the pair's cumulative service ``S_pq`` reaches its admission-time service plus its volume.
Each pair keeps a min-heap of those targets (in a block of one shared array sized by the
pair's flows in the instance).  After a filling only some pairs are looked at: a pair's rate
is the lower of its ports' levels when the filling froze ports at nondecreasing levels (as it
does in exact arithmetic), so when this filling and the last did, only the pairs of ports
whose level changed and the pairs whose flows changed can have a new rate (FB2010: 32 of 257
busy ports an event, 4,400 pair visits in place of 21,608); after a filling that rounding
made decrease, every active pair is.  They are visited in pair order (marked in a byte map
and a list, sorted when few, read off the map when many), which keeps the pairs' rows and the
validator's groups read in memory order; no step reads every pair at every event (the pairs
are about m^2: 2.25 M at ten times FB2010).  The next completion is the smallest due time,
from the smallest of each block of 64 pairs (renewed only in the blocks where a due time
changed, and the smallest of each 64 blocks likewise), then the pairs due within rounding of
it.
Rate changes are recorded once per pair and the per-flow segments cut from them at the end (a
flow's segments are its pair's, clipped to its admission and completion); or, with ``check``,
they go to the streaming validator as *rate groups* (one group per pair: a flow joins its
pair's group at admission and leaves it at completion, the group's rate changes once for all
its flows; :meth:`coflowopt.validate.StreamValidator.grouped`) and nothing is stored (FB2010:
111 million group and membership changes in place of 187 million per-flow ones).

The loop is the event skeleton of :mod:`coflowopt.sim.events` (stop and progress, admissions,
rates, next event, completions), with this engine's steps (water filling, pair rates, the due
scan, pair completions) as inlined helpers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.sim.allocate import water_fill
from coflowopt.sim.events import (
    DONE,
    STALLED,
    STOPPED,
    admission_heap,
    admission_inputs,
    admit_next,
    buffer_full,
    heap_pop,
    heap_push,
    heap_top,
    next_breakpoint,
    progress_or_stop,
    record_group_rate,
    record_member,
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
from coflowopt.sim.segstore import CHUNK, SegmentStore, gather_segments, new_store, put_segment
from coflowopt.validate import (
    StreamValidator,
    Tolerance,
    ValidSchedule,
    group_consume,
    group_push,
    readonly,
)

__all__ = ["fast_fair"]


_RATE, _S, _TS, _TMIN = 0, 1, 2, 3  # the columns of a pair's row


@njit(cache=True, inline="always")
def _smallest(x, lo, hi):
    """``min(x[lo:hi])`` (no NaN), in four independent chains: one chain of ``min`` waits on
    each comparison in turn."""
    a = b = c = d = np.inf
    i = lo
    while i + 4 <= hi:
        a = min(a, x[i])
        b = min(b, x[i + 1])
        c = min(c, x[i + 2])
        d = min(d, x[i + 3])
        i += 4
    while i < hi:
        a = min(a, x[i])
        i += 1
    return min(min(a, b), min(c, d))


@njit(cache=True, inline="always")
def _drop(items, where, n, x):
    """Remove ``x`` from the unordered list ``items[:n]`` (``where``: positions, -1 when
    absent), moving the last item into its place; returns the new length."""
    v = items[n - 1]
    items[where[x]] = v
    where[v] = where[x]
    where[x] = -1
    return n - 1


# -- the loop's steps (each inlined into _run_fair: coflowopt._jit makes that free) -----------

# The steps take plain arrays (in named tuples the kernel took 31 s against 4.3 s on FB2010:
# an array argument inlined two levels down inside the loop is copied at every call, reference
# counts on each array).  water_fill (coflowopt.sim.allocate, shared with the static-progress
# kernel) and _next_due are called, not inlined: inlined, the heap and
# _smallest helpers inside them were such second-level copies (4.9 s against 4.3 s).  The
# admissions, pair rates and completions need more than the 30 arguments an inlined call
# takes (CPython passes more as one *args tuple, which numba's inliner refuses) and stay
# written out in _run_fair.


@njit(cache=True)
def _next_due(n_act, due, bmin, bdirty, blist, n_bl, smin, sdirty, slist, dues, apos):
    """The next completion: the smallest due time (each block of 64 pairs keeps its smallest,
    renewed when one of its due times changed, listed in ``blist[:n_bl]``; each superblock of
    64 blocks keeps the smallest of theirs, renewed when one of its blocks was), then the pairs
    within 1e-12 relative of it (kept in ``dues`` so that step 6 need not scan again), in pair
    order when most pairs are active and in active-list order else, as a scan in that order
    finds them (one pass over all pairs keeping candidates as they came took 2.0 s of an 11 s
    run on FB2010; two passes over all pairs 0.9-1.3 s).  The work is the changed blocks and
    superblocks, and one pass over the superblocks (P / 4096): a pass over every block (P / 64)
    and every pair's mark byte at each event grew as the square of the ports, the pairs being
    about m^2 (issue 28: 2.25 M pairs at ten times FB2010).  Returns ``(tq, n_due)``."""
    P = due.size
    nb = bmin.size
    nsb = smin.size
    n_sl = 0
    for j in range(n_bl):
        bk = blist[j]
        bdirty[bk] = 0
        bmin[bk] = _smallest(due, bk << 6, min((bk + 1) << 6, P))
        sb = bk >> 6
        if sdirty[sb] == 0:
            sdirty[sb] = 1
            slist[n_sl] = sb
            n_sl += 1
    for j in range(n_sl):
        sb = slist[j]
        sdirty[sb] = 0
        smin[sb] = _smallest(bmin, sb << 6, min((sb + 1) << 6, nb))
    tq = _smallest(smin, 0, nsb)
    n_due = 0
    if tq < np.inf:
        lim = tq + 1e-12 * max(1.0, abs(tq))
        for sb in range(nsb):
            if smin[sb] > lim:
                continue
            for bk in range(sb << 6, min((sb + 1) << 6, nb)):
                if bmin[bk] <= lim:
                    for p in range(bk << 6, min((bk + 1) << 6, P)):
                        if due[p] <= lim:
                            dues[n_due] = p
                            n_due += 1
        if 3 * n_act < P:  # active-list order (few: insertion sort)
            for j in range(1, n_due):
                p = dues[j]
                i = j
                while i > 0 and apos[dues[i - 1]] > apos[p]:
                    dues[i] = dues[i - 1]
                    i -= 1
                dues[i] = p
    return tq, n_due


@njit(cache=True, inline="always")
def _blocks(n):
    """A level of ``n`` blocks: their smallest due times, dirty flags and dirty list."""
    return np.full(n, np.inf), np.zeros(n, dtype=np.uint8), np.empty(n, dtype=np.int64)


@njit(cache=True, inline="always")
def _mark(mark, mlist, n, p):
    """Mark ``p`` (a pair for step 4, a block of due times) once, listing it; returns the
    count."""
    if mark[p] == 0:
        mark[p] = 1
        mlist[n] = p
        n += 1
    return n


@njit(cache=True)
def _changed_pairs(both, n_busy, busy, plev, oldlev, deg, adj, n_act, act, mark, mark8, mlist,
                   n):
    """Step 4's pairs, added to the ``n`` marked, in pair order in ``mlist``; returns their
    number.  ``both``: this filling and the last froze at nondecreasing levels, so the pairs
    of ports whose level changed; else every active pair (an idle one has rate 0 and due time
    inf already, so visiting it changes nothing; one that went idle at this event is marked).
    Sorted when they are few, else read off the byte map eight at a time (a sort of many
    costs more than the scan)."""
    for j in range(n_busy):
        u = busy[j]
        if both and plev[u] != oldlev[u]:
            for i in range(deg[u]):
                n = _mark(mark, mlist, n, adj[u, i])
        oldlev[u] = plev[u]
    if not both:
        for j in range(n_act):
            n = _mark(mark, mlist, n, act[j])
    if 32 * n < mark.size:
        mlist[:n].sort()
        return n
    k = 0
    for b in range(mark8.size):
        if mark8[b] == 0:
            continue
        for p in range(8 * b, 8 * b + 8):
            if mark[p]:
                mlist[k] = p
                k += 1
    return k


class FairRun(NamedTuple):
    """What :func:`_run_fair` returns."""

    breakpoints: np.ndarray  #: float64: the event times
    store: SegmentStore      #: the pairs' segments (streamed: the validator's last buffer)
    join: np.ndarray         #: per flow: the breakpoint of its admission
    done_at: np.ndarray      #: per flow: the breakpoint of its completion (-1: none)
    status: int              #: :data:`~coflowopt.sim.events.DONE`, ``STALLED`` or ``STOPPED``
    events: int              #: events processed
    pair_visits: int         #: pairs looked at in step 4 (the work besides the filling)
    fill_visits: int         #: pair slots read by the water fillings


@njit(cache=True, inline="always")
def _due_by(dues, n_due, due, lim):
    """Keep the pairs of ``dues[:n_due]`` due by ``lim`` (in order); returns their number."""
    n_keep = 0
    for j in range(n_due):
        p = dues[j]
        if due[p] <= lim:
            dues[n_keep] = p
            n_keep += 1
    return n_keep


@njit(cache=True, inline="always")
def _close_pairs(kk, cnt, pr, pstart, hsize, hflow, opened, lean, vs, vg, buf_i, buf_d, chunks_i,
                 chunks_d, ns, bps):
    """After the loop: the pairs still serving flows close at breakpoint ``kk`` (stored: the
    pair's segment; streamed: its flows leave the group, as the grouped stream closes
    membership, not the group's rate).  Returns ``ns``."""
    for p in range(cnt.size):
        if cnt[p] > 0 and pr[p, _RATE] > 0.0:
            if lean:
                for i in range(pstart[p], pstart[p] + hsize[p]):
                    ns = record_member(lean, buf_i, buf_d, ns, hflow[i], kk, -1)
                    if buffer_full(lean, ns):
                        ns = group_consume(vs, vg, buf_i, buf_d, ns, bps)
            else:
                ns = put_segment(buf_i, buf_d, chunks_i, chunks_d, ns, p, opened[p], kk,
                                 pr[p, _RATE])
    return ns


@njit(cache=True, nogil=True)
def _run_fair(ptr, order, fc, src, dst, volume, release, n_pred, succ_ptr, succ, cap_in, cap_out,
              fpair, pstart, t0, lean, vs, vg, kctl, every):
    """The event loop (the event skeleton of :mod:`coflowopt.sim.events`, its steps above);
    returns a :class:`FairRun`."""
    C = ptr.size - 1
    F = src.size
    m = cap_in.size
    P = pstart.size - 1  # the pairs that occur, numbered densely (fpair: flow -> pair)
    # pairs: active flow count, the breakpoint its rate has held since
    cnt = np.zeros(P, dtype=np.int64)
    opened = np.zeros(P, dtype=np.int64)
    # and one 32-byte row of what a rate change reads and writes: rate, service S at time
    # ts, the first target tmin (its heap's top, kept in cache); a change per pair touches
    # one line, not four (FB2010: 3,000 pairs an event, 1 in 7, so each was a line apart)
    pr = np.zeros((P, 4))
    pr[:, _TS] = t0
    pr[:, _TMIN] = np.inf
    # due time of its next completion (NaN: to recompute, the pair is then marked; it
    # depends on the row), dense for the scan; its ports packed in one int32
    # (ingress | egress << 16, egress d as m + d), or twice the idle port 2 m, whose level is
    # 0.0, so that an idle pair's rate stays 0 without an activity test
    due = np.full(P, np.inf)
    # blocks of 64 pairs: smallest due time, whether it changed, the list of those that did;
    # superblocks of 64 blocks, the same way
    nb = (P + 63) >> 6
    bmin, bdirty, blist = _blocks(nb)
    smin, sdirty, slist = _blocks((nb + 63) >> 6)
    idle = np.int32(2 * m | (2 * m) << 16)
    pport = np.full(P, idle, dtype=np.int32)
    # the pairs step 4 looks at, one byte each, read eight at a time: marked in any order,
    # visited in pair order (visited in the order marked, the pairs' state and the validator's
    # groups were read out of order: 1.8 s slower on FB2010)
    mark = np.zeros(-(-P // 8) * 8, dtype=np.uint8)
    mark8 = mark.view(np.uint64)
    # and listed as marked, so that a few marked pairs among many are sorted, not scanned for
    # (the byte map is read only when they are many: at ten times FB2010, 2.25 M pairs)
    mlist = np.empty(P, dtype=np.int64)
    hsize = np.zeros(P, dtype=np.int64)  # the pair's heap of targets: pstart[p] .. + hsize
    htarget = np.empty(F)
    hflow = np.empty(F, dtype=np.int64)
    # active pairs, and per port its active pairs (slot lists with positions)
    act = np.empty(P, dtype=np.int64)
    apos = np.full(P, -1, dtype=np.int64)
    n_act = 0
    # port u's active pairs (egress d as u = m + d): pair, its other port and its flow count
    # side by side, so a port's water-filling pass reads them in order
    adj = np.empty((2 * m, m), dtype=np.int64)
    adjw = np.empty((2 * m, m), dtype=np.int32)
    adjc = np.empty((2 * m, m), dtype=np.float32)  # exact: counts below 2**24
    deg = np.zeros(2 * m, dtype=np.int64)
    kport = np.zeros(2 * m, dtype=np.int64)  # active flows per port
    busy = np.empty(2 * m, dtype=np.int64)  # ports with active flows (egress d as m + d)
    bpos = np.full(2 * m, -1, dtype=np.int64)
    # water filling
    R = np.empty(2 * m)
    K = np.zeros(2 * m)
    plev = np.full(2 * m + 1, np.inf)  # the level each port froze at in this filling
    pord = np.zeros(2 * m + 1, dtype=np.int64)  # and its place in the freezing order
    plev[2 * m] = 0.0  # the idle port of the pairs with no active flow
    oldlev = np.full(2 * m, np.nan)  # the level at the last filling (NaN: was idle)
    pkey = np.empty(2 * m)
    pheap = np.empty(2 * m, dtype=np.int64)
    pwhere = np.full(2 * m, -1, dtype=np.int64)
    live = np.zeros(2 * m)  # 1.0 while the port is in the heap (pwhere >= 0), else 0.0
    slot = np.zeros((P, 2), dtype=np.int64)  # the pair's slot in its ingress and egress rows
    cap = np.concatenate((cap_in, cap_out))
    n_busy = 0
    mono_before = False  # whether the last filling froze its ports at nondecreasing levels
    # events: admissions (each coflow once), next completion per pair
    ak, av, na = admission_heap(n_pred, release)
    dues = np.empty(P, dtype=np.int64)
    left = np.zeros(C, dtype=np.int64)
    join = np.zeros(F, dtype=np.int64)  # breakpoint of the flow's admission
    done_at = np.full(F, -1, dtype=np.int64)  # breakpoint of its completion
    bps = np.empty(1024)
    bps[0] = t0
    kk = 0
    buf_i, buf_d, chunks_i, chunks_d = new_store()  # (pair, first bp, last bp; rate)
    ns = 0
    t = t0
    n_done = 0
    n_events = 0
    # counters (run meta): pairs visited in step 4, pair slots in the fillings; lists' lengths
    n_visits = n_fillv = n_mark = n_bl = 0
    while n_done < C:
        # 1. progress, and the waiting thread's stop flag, once an event
        if progress_or_stop(kctl, t, t0, n_done, n_events):
            return FairRun(bps[: kk + 1], SegmentStore(buf_i, buf_d, chunks_i, chunks_d, ns), join,
                           done_at, STOPPED, n_events, n_visits, n_fillv)
        n_events += 1
        # 2. admissions at t (written out, as the completions below: see the note above)
        while True:
            c, na = admit_next(ak, av, na, t)
            if c < 0:
                break
            for i in range(ptr[c], ptr[c + 1]):
                f = order[i]
                if volume[f] <= 0.0:
                    continue
                left[c] += 1
                p = fpair[f]
                pr[p, _S] += pr[p, _RATE] * (t - pr[p, _TS])
                pr[p, _TS] = t
                u, w = np.int64(src[f]), m + np.int64(dst[f])
                if cnt[p] == 0:
                    pport[p] = np.int32(u | w << 16)
                    apos[p] = n_act
                    act[n_act] = p
                    n_act += 1
                    for side in range(2):
                        x, y = (u, w) if side == 0 else (w, u)
                        slot[p, side] = deg[x]
                        adj[x, deg[x]] = p
                        adjw[x, deg[x]] = y
                        deg[x] += 1
                cnt[p] += 1
                adjc[u, slot[p, 0]] = cnt[p]
                adjc[w, slot[p, 1]] = cnt[p]
                for x in (u, w):
                    kport[x] += 1
                    if bpos[x] < 0:
                        bpos[x] = n_busy
                        busy[n_busy] = x
                        n_busy += 1
                        oldlev[x] = np.nan
                join[f] = kk
                ns = record_member(lean, buf_i, buf_d, ns, f, kk, p)
                if buffer_full(lean, ns):
                    ns = group_consume(vs, vg, buf_i, buf_d, ns, bps)
                hsize[p] = heap_push(htarget[pstart[p]:pstart[p + 1]],
                                     hflow[pstart[p]:pstart[p + 1]], hsize[p],
                                     pr[p, _S] + volume[f], f)
                pr[p, _TMIN] = htarget[pstart[p]]
                due[p] = np.nan
                n_mark = _mark(mark, mlist, n_mark, p)
            if left[c] == 0:
                n_done += 1
                na = release_successors(c, t, succ_ptr, succ, n_pred, release, ak, av, na)
        if n_done == C:
            break
        # 3. max-min fair rates by water filling over the ports (each port's plev and pord)
        mono, nv = water_fill(n_busy, busy, cap, kport, R, K, plev, pord, live, deg, adjw,
                              adjc, pkey, pheap, pwhere)
        n_fillv += nv
        # 4. the pairs whose rate changed record it (written out: as a step, 31 s against 4.3).
        # When this filling and the last froze at nondecreasing levels, only pairs whose ports'
        # levels or flows changed can have a new rate (FB2010: 4,400 pairs against 21,608)
        n_mark = _changed_pairs(mono and mono_before and not every, n_busy, busy, plev, oldlev,
                                deg, adj, n_act, act, mark, mark8, mlist, n_mark)
        for j in range(n_mark):
            p = mlist[j]
            mark[p] = 0
            u, w = pport[p] & 0xFFFF, pport[p] >> 16
            nr = plev[u] if pord[u] < pord[w] else plev[w]
            if nr != pr[p, _RATE]:
                pr[p, _S] += pr[p, _RATE] * (t - pr[p, _TS])
                pr[p, _TS] = t
                # written out, not events.record_group_rate: two inlined levels down, the
                # buffers are copied at each of 111 M changes (FB2010: 6.2 s against 4.5 s)
                if lean:  # one change for the pair's flows (a rate group of the validator)
                    ns = group_push(buf_i, buf_d, ns, p, kk, nr)
                    if ns == CHUNK:
                        ns = group_consume(vs, vg, buf_i, buf_d, ns, bps)
                else:  # (opened is the stored form's alone: one line less per change)
                    ns = put_segment(buf_i, buf_d, chunks_i, chunks_d, ns, p, opened[p], kk,
                                     pr[p, _RATE])
                    opened[p] = kk
                pr[p, _RATE] = nr
                due[p] = np.nan
            if due[p] != due[p]:
                d = np.inf
                if pr[p, _RATE] > 0.0:
                    d = pr[p, _TS] + (max(pr[p, _TMIN] - pr[p, _S], 0.0) / pr[p, _RATE])
                due[p] = d
                n_bl = _mark(bdirty, blist, n_bl, p >> 6)
        n_visits += n_mark
        n_mark = 0
        mono_before = mono
        # 5. the next event: the next completion or admission
        tq, n_due = _next_due(n_act, due, bmin, bdirty, blist, n_bl, smin, sdirty, slist, dues,
                              apos)
        n_bl = 0
        tn = min(tq, heap_top(ak, na))
        if tn == np.inf:
            return FairRun(bps[: kk + 1], SegmentStore(buf_i, buf_d, chunks_i, chunks_d, ns), join,
                           done_at, STALLED, n_events, n_visits, n_fillv)
        bps, kk, t, tol = next_breakpoint(bps, kk, t, tn)
        # 6. flow completions: pairs whose first target is reached (a superset of them was
        # kept in step 5: every due time within tol of t is within slack of the smallest)
        n_due = _due_by(dues, n_due, due, t + tol)
        for j in range(n_due):
            p = dues[j]
            pr[p, _S] += pr[p, _RATE] * (t - pr[p, _TS])
            pr[p, _TS] = t
            a = pstart[p]
            # the pair's first target is due by the event rule (its time is within tol of
            # t) even when the rounding of S leaves it a hair short; others go with it when
            # their targets are equal to rounding
            vt = pr[p, _S] + 1e-14 * max(1.0, abs(pr[p, _S]))
            first = True
            while hsize[p] > 0 and (first or htarget[a] <= vt):
                first = False
                f = hflow[a]
                hsize[p] = heap_pop(htarget[a:pstart[p + 1]], hflow[a:pstart[p + 1]], hsize[p])
                done_at[f] = kk
                ns = record_member(lean, buf_i, buf_d, ns, f, kk, -1)
                if buffer_full(lean, ns):
                    ns = group_consume(vs, vg, buf_i, buf_d, ns, bps)
                cnt[p] -= 1
                u, w = np.int64(src[f]), m + np.int64(dst[f])
                adjc[u, slot[p, 0]] = cnt[p]
                adjc[w, slot[p, 1]] = cnt[p]
                for x in (u, w):
                    kport[x] -= 1
                    if kport[x] == 0:
                        n_busy = _drop(busy, bpos, n_busy, x)
                if cnt[p] == 0:
                    # drop the pair from the active list and its ports' rows (swap with last)
                    n_act = _drop(act, apos, n_act, p)
                    pport[p] = idle
                    for side in range(2):
                        x = u if side == 0 else w
                        i = slot[p, side]
                        last = deg[x] - 1
                        q = adj[x, last]
                        adj[x, i] = q
                        adjw[x, i] = adjw[x, last]
                        adjc[x, i] = adjc[x, last]
                        slot[q, side] = i
                        deg[x] = last
                    # its last segment closes now; it restarts at rate 0 if flows come back
                    ns = record_group_rate(lean, buf_i, buf_d, chunks_i, chunks_d, ns, p, opened[p],
                                           kk, pr[p, _RATE], 0.0)
                    if buffer_full(lean, ns):
                        ns = group_consume(vs, vg, buf_i, buf_d, ns, bps)
                    if not lean:
                        opened[p] = kk
                    pr[p, _RATE] = 0.0
                c = fc[f]
                left[c] -= 1
                if left[c] == 0:
                    n_done += 1
                    na = release_successors(c, t, succ_ptr, succ, n_pred, release, ak, av, na)
            pr[p, _TMIN] = htarget[a] if hsize[p] > 0 else np.inf
            due[p] = np.nan
            n_mark = _mark(mark, mlist, n_mark, p)
    ns = _close_pairs(kk, cnt, pr, pstart, hsize, hflow, opened, lean, vs, vg, buf_i, buf_d,
                      chunks_i, chunks_d, ns, bps)
    return FairRun(bps[: kk + 1], SegmentStore(buf_i, buf_d, chunks_i, chunks_d, ns), join,
                   done_at, DONE, n_events, n_visits, n_fillv)


@njit(cache=True, inline="always")
def _first_after(last, lo, hi, k):
    """The first index in ``lo..hi`` whose ``last`` exceeds ``k`` (``last`` is increasing)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if last[mid] <= k:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _span(flow_pair, join, done_at, pseg_ptr, pfirst, plast, f):
    """The pair segments that overlap flow ``f``'s life ``[join, done_at)``: ``lo..hi``."""
    p = flow_pair[f]
    lo = _first_after(plast, pseg_ptr[p], pseg_ptr[p + 1], join[f])
    hi = lo
    while hi < pseg_ptr[p + 1] and pfirst[hi] < done_at[f]:
        hi += 1
    return lo, hi


@njit(cache=True)
def _cut(flow_pair, join, done_at, pseg_ptr, pfirst, plast, prate):
    """Per-flow segments: each flow's pair segments clipped to ``[join, done_at)``."""
    F = flow_pair.size
    n = 0
    for f in range(F):
        if done_at[f] >= 0:
            lo, hi = _span(flow_pair, join, done_at, pseg_ptr, pfirst, plast, f)
            n += hi - lo
    out_f = np.empty(n, dtype=np.int64)
    out_r = np.empty(n)
    out_a = np.empty(n, dtype=np.int64)
    out_b = np.empty(n, dtype=np.int64)
    n = 0
    for f in range(F):
        if done_at[f] < 0:
            continue
        lo, hi = _span(flow_pair, join, done_at, pseg_ptr, pfirst, plast, f)
        for i in range(lo, hi):
            out_f[n] = f
            out_r[n] = prate[i]
            out_a[n] = max(pfirst[i], join[f])
            out_b[n] = min(plast[i], done_at[f])
            n += 1
    return out_f, out_r, out_a, out_b


def fast_fair(instance: Instance, *, check: Tolerance | None = None,
              progress: Progress | None = None, notify: Notify | None = None,
              control: np.ndarray | None = None, every_pair: bool = False
              ) -> Schedule | ValidSchedule:
    """Per-flow max-min fair sharing of every port, recomputed at every arrival and flow
    completion (see the module docstring); the schedule equals the reference engine's with
    per-flow max-min fair sharing.  ``check``: stream the rate changes to the validator
    instead of storing them; ``progress``, ``notify``, ``control`` and Ctrl-C as for
    :func:`coflowopt.sim.fast.fast_simulate` (progress in simulated time).  ``every_pair``:
    recompute every active pair's rate at every event instead of those whose ports' levels or
    flows changed (the same schedule, bit for bit; for tests).  Meta counters: ``events``,
    ``pair_visits`` (pairs looked at after the fillings), ``fill_visits`` (pair slots the
    fillings read)."""
    inst = instance
    C, m = inst.n_coflows, inst.ports
    if 2 * m >= 1 << 15:  # a pair's two ports share one int32 (16 bits each, idle port 2 m)
        raise ValueError(f"fast_fair: at most {(1 << 14) - 1} ports, got {m}")
    n_pred, succ_ptr, succ, rel, t0 = admission_inputs(inst)
    # the (ingress, egress) pairs that occur, numbered densely: per-pair state scales with
    # them, not with m^2 (a 4x replicated trace has 4x the pairs of one copy, not 16x)
    keys, pair = np.unique(inst.flow_src.astype(np.int64) * m + inst.flow_dst,
                           return_inverse=True)
    pair = pair.astype(np.int32)
    pstart = np.zeros(int(pair.max(initial=-1)) + 2, dtype=np.int64)
    np.cumsum(np.bincount(pair, minlength=pstart.size - 1), out=pstart[1:])
    # per-flow validator state in flow order: the flows active at an event belong to a few
    # recently arrived coflows, numbered by arrival with their flows contiguous, so their rows
    # are close (by pair, the default, they spread over the whole array: FB2010's 188 M
    # changes missed the cache, 13 s of a 23 s run on a 32 MiB-L3 EPYC)
    stream = StreamValidator(inst, check or Tolerance(), empty=check is None,
                             flow_of_row=np.arange(inst.n_flows))
    # the flows of a pair share one rate: one validator change per pair, not per flow
    # (FB2010: 109 M instead of 187 M, on state that fits the cache)
    keys = keys if check is not None else keys[:0]
    groups = stream.grouped(keys // m, keys % m)
    ctl = new_control(fluid_horizon(inst, t0), C, control)
    args = (np.array(inst.coflow_flows_ptr, dtype=np.int64), readonly(inst.coflow_flow_order),
            readonly(inst.flow_coflow), readonly(inst.flow_src), readonly(inst.flow_dst),
            readonly(inst.flow_volume),
            rel, n_pred, succ_ptr, succ, np.array(inst.fabric.capacity_in, dtype=np.float64),
            np.array(inst.fabric.capacity_out, dtype=np.float64), pair, pstart, float(t0),
            check is not None, stream.state, groups, ctl, bool(every_pair))
    prepare(_run_fair, *args, notify=notify)
    cb, units = progress_target(progress)
    run = run_kernel(_run_fair, *args, control=ctl, progress=cb, units=units,
                     **memory_limits(check is None))
    if run.status != DONE:
        from coflowopt.sim.engine import SimulationError

        raise SimulationError("the fair engine stalled: active coflows but no pending event")
    meta = {"events": int(run.events), "engine": "fast", "pair_visits": int(run.pair_visits),
            "fill_visits": int(run.fill_visits)}
    bps, store, join, done_at = run.breakpoints, run.store, run.join, run.done_at
    del run
    if check is not None:
        stream.finish(bps, store.n, buffer=(store.buf_i, store.buf_d))
        return stream.result(meta)
    seg_i, seg_d = gather_segments(*store)
    del store
    # pair segments in time order per pair (they were recorded in time order overall)
    by = np.argsort(seg_i[0], kind="stable")
    pseg_ptr = np.zeros(pstart.size, dtype=np.int64)
    np.cumsum(np.bincount(seg_i[0], minlength=pstart.size - 1), out=pseg_ptr[1:])
    f, r, a, b = _cut(pair, join, done_at, pseg_ptr, seg_i[1][by], seg_i[2][by], seg_d[by])
    del seg_i, seg_d, by
    return Schedule.from_segments(bps, f, r, a, b, meta=meta)

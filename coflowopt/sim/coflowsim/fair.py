"""The kernel of CoflowSim's FAIR (``FlowSimulator.java``, per-flow fair sharing, one of the
flow-level baselines of Varys' evaluation: Chowdhury, Zhong, Stoica, SIGCOMM 2014):
each flow runs at ``min(C / flows at its reducer port, C / flows at its mapper port)``,
recomputed when a flow finishes or coflows are admitted, so the loop jumps between those
quanta.

All flows of one (mapper port, reducer port) pair share that rate, so the kernel keeps state
per *pair* (``pair_of``: each flow's pair): a finished flow re-times the pairs on its two ports,
and only those whose rate changed touch their members (each member's bytes left replayed
exactly by :func:`~coflowopt.sim.coflowsim.javafloat.advance`).  Within a pair, bytes left keep
their order (a rounded subtraction is monotone), so the bucket queue holds pairs, keyed by
their members' least finishing bound.

``lean``: the validator gets the grouped protocol, one rate group per pair
(:meth:`~coflowopt.StreamValidator.grouped`): a member joins at admission, a pair's rate change
is one group change, and a finishing flow leaves at its last quantum and runs that quantum at a
rate of its own (:func:`~coflowopt.validate.own_push`) that delivers exactly what the group left
it (the kernel mirrors the group's cumulative service, in the validator's floating point).
FB2010: 24 million pair changes instead of 61 million per-flow changes.  Not ``lean``: every
member's segments are stored.
"""

from __future__ import annotations

import math

import numpy as np

from coflowopt._jit import njit
from coflowopt.sim.coflowsim import loop
from coflowopt.sim.coflowsim.javafloat import advance
from coflowopt.sim.coflowsim.stream import (
    flush_grouped,
    new_times,
)
from coflowopt.sim.segstore import new_store, put_segment
from coflowopt.validate import member_push, own_push

__all__ = ["FAIR_STEPS", "csr_ptr", "fair_close", "fair_join", "fair_retime", "fair_settle",
           "finish_bucket", "join_job", "retime_pairs", "run_fair", "walk_ports"]


@njit(cache=True, inline="always")
def csr_ptr(keys, n):
    """Where each key's block starts when ``keys`` are grouped by key (``n`` keys; ``n + 1``
    entries, the last the total)."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(keys.size):
        ptr[keys[i] + 1] += 1
    for k in range(n):
        ptr[k + 1] += ptr[k]
    return ptr


@njit(cache=True, inline="always")
def join_job(j, qa, jobs, pair_of, ports, on_port, lean, mem, pairs, store, nseg, stream, nsc,
             quantum_ms, zero):
    """Job ``j``'s flows, admitted at quantum ``qa``: each counts at its two ports and joins
    its pair, which enters the ports' lists.  Both ports gain a flow, so the pair's rate
    changes at ``qa``: its members come to ``qa`` at the old rate first.  Returns ``(nseg,
    nsc)``."""
    red_ptr, red_rack, flow_ptr, flow_src = jobs
    n_dst, n_src, mark_d, mark_s = ports
    hi_d, hi_s, arr_d, arr_s, in_d, in_s = on_port
    mrow, mg, mlo, mhi = mem
    pd, ptq, pr, psn, pA = pairs
    buf_i, buf_d, chunks_i, chunks_d = store
    vs, vg, sbuf_i, sbuf_d, tbp, tinfo, where, flow_size = stream
    for r in range(red_ptr[j], red_ptr[j + 1]):
        p = red_rack[r]
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            s_ = flow_src[f]
            n_dst[p] += 1
            n_src[s_] += 1
            mark_d[p] = True
            mark_s[s_] = True
            pp = pair_of[f]
            a = ptq[pp]
            if a != qa:
                d = pd[pp]
                for sl in range(mlo[pp], mhi[pp]):
                    if not lean:
                        nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, mg[sl], a, qa,
                                           d)
                    x, _, _, _ = advance(mrow[sl, 0], d, qa - a, zero)
                    mrow[sl, 0] = x
                ptq[pp] = qa
            pd[pp] = 0.0  # re-timed at qa whatever its old rate
            sl = mhi[pp]
            mhi[pp] += 1
            mrow[sl, 0] = flow_size[f]
            mrow[sl, 1] = np.inf
            mg[sl] = f
            if not in_d[pp]:
                in_d[pp] = True
                arr_d[hi_d[p]] = pp
                hi_d[p] += 1
            if not in_s[pp]:
                in_s[pp] = True
                arr_s[hi_s[s_]] = pp
                hi_s[s_] += 1
            if lean:
                t = np.float64(qa) * quantum_ms
                mrow[sl, 2] = pA[pp] + pr[pp] * (t - psn[pp])
                nsc = member_push(sbuf_i, sbuf_d, nsc, where[f], qa, pp)
                if nsc == sbuf_d.size:
                    nsc = flush_grouped(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms)
    return nseg, nsc


@njit(cache=True, inline="always")
def walk_ports(nports, mark, lo, hi, lst, on_list, mlo, mhi, sh_d, sh_s, pdst, psrc, pd, chg,
               chg_d, nchg):
    """The marked ports of one side: their pairs without members leave the port's list, the
    others get ``min`` of their two ports' fair shares; a changed rate queues the pair in
    ``chg`` with its old rate.  Returns ``nchg``."""
    for p in range(nports):
        if not mark[p]:
            continue
        mark[p] = False
        w = lo[p]
        for i in range(lo[p], hi[p]):
            pp = lst[i]
            if mhi[pp] == mlo[pp]:  # no members: off the port's list
                on_list[pp] = False
                continue
            lst[w] = pp
            w += 1
            nd = min(sh_d[pdst[pp]], sh_s[psrc[pp]])
            if nd != pd[pp]:
                chg[nchg] = pp
                chg_d[nchg] = pd[pp]
                nchg += 1
                pd[pp] = nd
        hi[p] = w
    return nchg


@njit(cache=True, inline="always")
def retime_pairs(qn, chg, chg_d, nchg, mem, pairs, pkey, buckets, lean, store, nseg, stream,
                 nsc, stats, quantum_ms, zero):
    """The changed pairs' rates change at ``qn``: each member to ``qn`` at the old rate, new
    finishing bounds, the pair into the bucket of its least bound.  Returns ``(nseg, nsc)``."""
    mrow, mg, mlo, mhi = mem
    pd, ptq, pr, psn, pA = pairs
    head, hm, bq, nb = buckets
    buf_i, buf_d, chunks_i, chunks_d = store
    vs, vg, sbuf_i, sbuf_d, tbp, tinfo, _, _ = stream
    # the changed pairs' first members, in one pass of independent loads that the processor
    # overlaps (a dependent cache miss per pair otherwise)
    touch = 0.0
    for c in range(nchg):
        touch += mrow[mlo[chg[c]], 0]
    if touch < 0.0:  # never (bytes left and bounds are >= 0): keeps the loads
        stats[3] -= 1
    for c in range(nchg):
        pp = chg[c]
        d = chg_d[c]
        nd = pd[pp]
        a = ptq[pp]
        km = np.inf
        for sl in range(mlo[pp], mhi[pp]):
            x = mrow[sl, 0]
            if qn > a:
                if not lean:
                    nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, mg[sl], a, qn, d)
                x, _, _, _ = advance(x, d, qn - a, zero)
                mrow[sl, 0] = x
            kf = (x - zero) / nd
            lb = qn + max(0.0, math.floor(kf - 2.0 - kf * kf * 4e-16))
            mrow[sl, 1] = lb
            if lb < km:
                km = lb
        stats[1] += mhi[pp] - mlo[pp]
        stats[3] += 1
        if lean:
            t = np.float64(qn) * quantum_ms
            pA[pp] += pr[pp] * (t - psn[pp])
            psn[pp] = t
            pr[pp] = nd / 1048576.0 / quantum_ms
            sbuf_i[0, nsc] = -1 - pp  # group_push, written out
            sbuf_i[1, nsc] = qn
            sbuf_d[nsc] = pr[pp]
            nsc += 1
            if nsc == sbuf_d.size:
                nsc = flush_grouped(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms)
        ptq[pp] = qn
        if km != pkey[pp]:
            pkey[pp] = km
            # out of its bucket and into the new one (loop.bq_remove and loop.bq_insert written
            # out: inlined a second level deep, their copies of the arrays cost reference
            # counts per pair; FB2010 FAIR streamed, warm, process time, medians of 6: 3.62 s
            # with the helpers against 3.39 s before, 3.42 s written out against 3.50 s)
            k0 = bq[pp, 2]
            if k0 >= 0:
                nx, pv = bq[pp, 0], bq[pp, 1]
                if pv >= 0:
                    bq[pv, 0] = nx
                else:
                    head[k0] = nx
                if nx >= 0:
                    bq[nx, 1] = pv
            k1 = np.int64(min(km, nb - 1.0))
            if k1 > hm[0]:
                head[hm[0] + 1: k1 + 1] = -1
                hm[0] = k1
            bq[pp, 2] = k1
            bq[pp, 1] = -1
            h = head[k1]
            bq[pp, 0] = h
            if h >= 0:
                bq[h, 1] = pp
            head[k1] = pp
    return nseg, nsc


@njit(cache=True, inline="always")
def finish_bucket(at, mem, pairs, pkey, ports, jobs, head, hm, bq, buf_i, buf_d, chunks_i,
                  chunks_d, vs, vg, sbuf_i, sbuf_d, tbp, tinfo, red_open, red_job, job_open,
                  finish, stats, fvol, fin_list, where, counters):
    """The pairs of bucket ``q``: their members whose bound is ``q`` and that finish then
    leave (their ports lose a flow; stored, their run and last quantum; streamed, they leave
    the group and run the last quantum at a rate of their own that carries what is left); the
    others get exact bounds, and each pair goes back to the bucket of its least bound.
    ``at``: ``q``, buckets, ``quantum_ms``, ``lean``, ZERO; ``counters``: ``nseg``, ``nsc``,
    active reducers and jobs.  Returns ``(n_fin, active_tasks, active_jobs, nseg, nsc)``.

    Inlined into :func:`fair_settle`, with the arrays that inlined helpers take one by one:
    they reach those by plain copies that :mod:`coflowopt._jit` forwards."""
    q, nb, quantum_ms, lean, zero = at
    nseg, nsc, active_tasks, active_jobs = counters
    mrow, mg, mlo, mhi = mem
    pd, ptq, pr, psn, pA = pairs
    red_rack, flow_src, f_red = jobs
    n_dst, n_src, mark_d, mark_s = ports
    cap = sbuf_d.size
    n_fin = 0
    while head[q] >= 0:
        pp = head[q]
        loop.bq_remove(head, bq, pp)
        a = ptq[pp]
        d = pd[pp]
        w = mlo[pp]
        km = np.inf
        for sl in range(mlo[pp], mhi[pp]):
            lb = mrow[sl, 1]
            if lb <= q:
                x0 = mrow[sl, 0]
                _, st, fin, bl = advance(x0, d, q - a + 1, zero)
                if fin:
                    g = mg[sl]
                    if not lean:
                        nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, a, q, d)
                        nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, q, q + 1,
                                           bl)
                    else:
                        t = np.float64(q) * quantum_ms
                        nsc = member_push(sbuf_i, sbuf_d, nsc, where[g], q, -1)
                        if nsc == cap:
                            nsc = flush_grouped(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo,
                                                quantum_ms)
                        fin_list[n_fin] = -1
                        if bl != 0.0:  # the last quantum carries what is left
                            before = (pA[pp] + pr[pp] * (t - psn[pp])) - mrow[sl, 2]
                            rl = max((fvol[g] - before) / quantum_ms, 0.0)
                            nsc = own_push(sbuf_i, sbuf_d, nsc, where[g], q, rl)
                            if nsc == cap:
                                nsc = flush_grouped(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo,
                                                    quantum_ms)
                            fin_list[n_fin] = g
                    n_fin += 1
                    stats[2] += 1
                    r = f_red[g]
                    n_dst[red_rack[r]] -= 1
                    n_src[flow_src[g]] -= 1
                    mark_d[red_rack[r]] = True
                    mark_s[flow_src[g]] = True
                    active_tasks, active_jobs = loop.flow_finished(
                        r, q, red_open, red_job, job_open, finish, quantum_ms, active_tasks,
                        active_jobs)
                    continue
                # the bound was low: the exact finishing quantum
                _, st, fin, _ = advance(x0, d, 1 << 40, zero)
                lb = float(a + st - 1) if fin else np.inf
            mrow[w, 0] = mrow[sl, 0]
            mrow[w, 1] = lb
            mg[w] = mg[sl]
            if lean:
                mrow[w, 2] = mrow[sl, 2]
            w += 1
            if lb < km:
                km = lb
        mhi[pp] = w
        pkey[pp] = km
        if km < np.inf:
            loop.bq_insert(head, hm, bq, pp, np.int64(min(km, nb - 1.0)))
    return n_fin, active_tasks, active_jobs, nseg, nsc


# -- the steps of loop.run_epochs (FAIR's state ``st``: see run_fair) -------------------------


@njit(cache=True, error_model="numpy")
def fair_join(st, j, qa, nseg, nsc):
    """Job ``j`` admitted at quantum ``qa`` (:func:`join_job`)."""
    jobs, pair_of, ports, on_port, lean, mem, pairs, store, stream, qz, _, _, _, _, _ = st
    quantum_ms, zero = qz
    return join_job(j, qa, jobs, pair_of, ports, on_port, lean, mem, pairs, store, nseg, stream,
                    nsc, quantum_ms, zero)


@njit(cache=True, error_model="numpy")
def fair_retime(st, qn, nseg, nsc):
    """The rates from quantum ``qn``: each port's fair share, the pairs of the marked ports
    re-rated (:func:`walk_ports`), the changed ones re-timed (:func:`retime_pairs`)."""
    _, _, ports, on_port, lean, mem, pairs, store, stream, qz, walk, pkey, buckets, stats, _ = st
    quantum_ms, zero = qz
    n_dst, n_src, mark_d, mark_s = ports
    hi_d, hi_s, arr_d, arr_s, in_d, in_s = on_port
    n_out, n_in, cfull, sh_d, sh_s, lo_d, lo_s, pdst, psrc, chg, chg_d = walk
    _, _, mlo, mhi = mem
    pd = pairs[0]
    for p in range(n_out):
        if n_dst[p] > 0:
            sh_d[p] = cfull / n_dst[p]
    for p in range(n_in):
        if n_src[p] > 0:
            sh_s[p] = cfull / n_src[p]
    nchg = walk_ports(n_out, mark_d, lo_d, hi_d, arr_d, in_d, mlo, mhi, sh_d, sh_s, pdst, psrc,
                      pd, chg, chg_d, 0)
    nchg = walk_ports(n_in, mark_s, lo_s, hi_s, arr_s, in_s, mlo, mhi, sh_d, sh_s, pdst, psrc,
                      pd, chg, chg_d, nchg)
    return retime_pairs(qn, chg, chg_d, nchg, mem, pairs, pkey, buckets, lean, store, nseg,
                        stream, nsc, stats, quantum_ms, zero)


@njit(cache=True, error_model="numpy")
def fair_settle(st, q, active_tasks, active_jobs, nseg, nsc):
    """The pairs of bucket ``q`` (:func:`finish_bucket`); streamed, the flows that ran their
    last quantum at a rate of their own stop at ``q + 1``.  Returns ``(n_fin, active_tasks,
    active_jobs, nseg, nsc)``."""
    jobs, _, ports, _, lean, mem, pairs, store, stream, qz, _, pkey, buckets, stats, fin = st
    quantum_ms, zero = qz
    red_rack, flow_src = jobs[1], jobs[3]
    head, hm, bq, nb = buckets
    buf_i, buf_d, chunks_i, chunks_d = store
    vs, vg, sbuf_i, sbuf_d, tbp, tinfo, where, _ = stream
    f_red, red_open, red_job, job_open, finish, fvol, fin_list = fin
    n_fin, active_tasks, active_jobs, nseg, nsc = finish_bucket(
        (q, nb, quantum_ms, lean, zero), mem, pairs, pkey, ports, (red_rack, flow_src, f_red),
        head, hm, bq, buf_i, buf_d, chunks_i, chunks_d, vs, vg, sbuf_i, sbuf_d, tbp, tinfo,
        red_open, red_job, job_open, finish, stats, fvol, fin_list, where,
        (nseg, nsc, active_tasks, active_jobs))
    if lean:
        for j in range(n_fin):
            if fin_list[j] >= 0:
                nsc = own_push(sbuf_i, sbuf_d, nsc, where[fin_list[j]], q + 1, 0.0)
                if nsc == sbuf_d.size:
                    nsc = flush_grouped(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms)
    return n_fin, active_tasks, active_jobs, nseg, nsc


@njit(cache=True, error_model="numpy")
def fair_close(st, qz, nsc):
    """Streamed, the members still served (a run cut at its time limit) leave at quantum
    ``qz``.  Returns ``nsc``."""
    _, _, _, _, lean, mem, _, _, stream, qzm, _, _, _, _, _ = st
    if not lean:
        return nsc
    vs, vg, sbuf_i, sbuf_d, tbp, tinfo, where, _ = stream
    _, mg, mlo, mhi = mem
    for pp in range(mhi.size):
        for sl in range(mlo[pp], mhi[pp]):
            nsc = member_push(sbuf_i, sbuf_d, nsc, where[mg[sl]], qz, -1)
            if nsc == sbuf_d.size:
                nsc = flush_grouped(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, qzm[0])
    return nsc


@njit(cache=True, error_model="numpy", nogil=True)
def run_fair(begin, join, retime, settle, close, arrival, red_ptr, red_rack, flow_ptr, flow_src,
             flow_size, pair_of, n_pairs, n_in, n_out, epoch_ms, quantum_ms, zero, lean, where,
             fvol, vs, vg, sbuf_i, sbuf_d, kctl):
    """Run FAIR (module docstring) on :func:`~coflowopt.sim.coflowsim.loop.run_epochs` with
    the steps :data:`FAIR_STEPS` (passed in: a compiled function referenced inside a kernel
    is a dynamic global, which numba does not cache).  Returns per job ``start``, ``finish``
    (ms), the stored segments, counters (events, rate changes, flow completions, pair
    changes), and the streamed run's breakpoint times, buffered count and first quantum."""
    n = arrival.size
    nf = flow_size.size
    P = n_pairs
    cfull = 1.0 * 1024 * 1048576 / 8.0 * (1.0 * quantum_ms / 1024)  # bytes per quantum
    f_red = loop.owners(flow_ptr, nf)
    red_job = loop.owners(red_ptr, red_rack.size)
    red_open = np.diff(flow_ptr)  # open flows per reducer
    job_open = np.diff(red_ptr)  # open reducers per job
    start = np.full(n, -1.0)
    finish = np.full(n, -1.0)
    # pairs: ports, and a block of member slots sized by the flows that ever use the pair
    psrc = np.zeros(P, dtype=np.int64)
    pdst = np.zeros(P, dtype=np.int64)
    for f in range(nf):
        psrc[pair_of[f]] = flow_src[f]
        pdst[pair_of[f]] = red_rack[f_red[f]]
    mlo = csr_ptr(pair_of, P)
    mhi = mlo[:P].copy()
    # per member slot, side by side (one cache line brings them): bytes left at the pair's
    # quantum ptq, a lower bound on the finishing quantum (exact once checked), the group's
    # service per member when it joined (lean); and the flow
    mem = (np.empty((nf, 3)), np.empty(nf, dtype=np.int64), mlo, mhi)
    # per pair: bytes per quantum of every member, since quantum; lean: the rate the
    # validator holds (MB/ms), since (ms), service
    pairs = (np.zeros(P), np.zeros(P, dtype=np.int64), np.zeros(P), np.zeros(P), np.zeros(P))
    # each port's pairs with members (dropped at the port's next walk once empty)
    lo_d = csr_ptr(pdst, n_out)
    lo_s = csr_ptr(psrc, n_in)
    on_port = (lo_d[:n_out].copy(), lo_s[:n_in].copy(), np.empty(P, dtype=np.int64),
               np.empty(P, dtype=np.int64), np.zeros(P, dtype=np.bool_),
               np.zeros(P, dtype=np.bool_))
    # flows per port, and the ports whose pairs are to be re-rated
    ports = (np.zeros(n_out, dtype=np.int64), np.zeros(n_in, dtype=np.int64),
             np.zeros(n_out, dtype=np.bool_), np.zeros(n_in, dtype=np.bool_))
    # the fair share C / flows of each port, as the min() reads it; the pairs whose rate
    # changes at an event, with their old rate
    walk = (n_out, n_in, cfull, np.zeros(n_out), np.zeros(n_in), lo_d, lo_s, pdst, psrc,
            np.empty(P, dtype=np.int64), np.empty(P))
    stats = np.zeros(4, dtype=np.int64)  # events, rate changes, flow completions, pair changes
    # the pairs with members, in buckets of whole quanta by their key (loop.bq_insert)
    buckets = loop.new_buckets(P, quantum_ms)
    store = new_store()
    fin_list = np.empty(nf if lean else 0, dtype=np.int64)
    tbp, tinfo = new_times(lean, buckets[3])
    stream = (vs, vg, sbuf_i, sbuf_d, tbp, tinfo, where, flow_size)
    st = ((red_ptr, red_rack, flow_ptr, flow_src), pair_of, ports, on_port, lean, mem, pairs,
          store, stream, (quantum_ms, zero), walk, np.full(P, np.inf), buckets, stats,
          (f_red, red_open, red_job, job_open, finish, fvol, fin_list))
    return loop.run_epochs(begin, join, retime, settle, close, st, arrival, red_ptr, flow_ptr,
                           epoch_ms, quantum_ms, buckets, store, (sbuf_i, tbp, tinfo), start,
                           finish, stats, kctl)


#: FAIR's steps of :func:`~coflowopt.sim.coflowsim.loop.run_epochs`, for :func:`run_fair`
FAIR_STEPS = (loop.no_step, *loop.steps(fair_join, fair_retime, fair_settle, fair_close))

"""The kernel of CoflowSim's PFP (``FlowSimulator.java``, per-flow prioritization, one of the
flow-level baselines of Varys' evaluation: Chowdhury, Zhong, Stoica, SIGCOMM 2014):
each reducer port, in port order, serves at full rate the first flow of its list (kept sorted by
size at insertion) whose mapper is still idle.

Rates change only when a flow finishes or coflows are admitted, so the loop jumps between those
quanta (a bucket queue of finishing quanta); a rate change re-times the flows of the new
matching.  ``lean``: each change goes to the validator when the rate is set (time only moves
forward here); a segment the stored schedule would not hold (empty) then shows as two changes
at one breakpoint, which the validator takes as one.
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit
from coflowopt.sim.coflowsim import loop
from coflowopt.sim.coflowsim.javafloat import advance
from coflowopt.sim.coflowsim.stream import (
    last_rate,
    new_times,
    push_change,
)
from coflowopt.sim.segstore import new_store, put_segment

__all__ = ["PFP_STEPS", "finish_quantum", "insert_ascending", "match_ports", "pfp_begin",
           "pfp_close", "pfp_join", "pfp_retime", "pfp_settle", "run_pfp"]


@njit(cache=True, inline="always")
def sent_until(g, q, d, tq, sent, quantum_ms):
    """Streaming: flow ``g``'s MB sent at its rate from ``tq[g]`` to quantum ``q`` (the drift
    of its last segment is taken against them)."""
    if q > tq[g] and d[g] != 0.0:
        sent[g] += d[g] / 1048576.0 / quantum_ms * ((q - tq[g]) * quantum_ms)


@njit(cache=True, inline="always")
def catch_up(qa, n_out, served, x, d, tq, lean, store, nseg, sent, where, lpos, vs, sbuf_i,
             sbuf_d, nsc, tbp, tinfo, quantum_ms, zero):
    """Bring the served flows to quantum ``qa`` (before new flows compare with their bytes
    left); their runs go on at the same rate in a new segment.  Returns ``(nseg, nsc)``."""
    buf_i, buf_d, chunks_i, chunks_d = store
    for p in range(n_out):
        g = served[p]
        if g >= 0:
            x[g], _, _, _ = advance(x[g], d[g], qa - tq[g], zero)
            if not lean:
                nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, tq[g], qa, d[g])
            elif qa > tq[g] and d[g] != 0.0:
                sent_until(g, qa, d, tq, sent, quantum_ms)
                nsc = push_change(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], qa,
                                  d[g] / 1048576.0 / quantum_ms, quantum_ms, lpos)
            tq[g] = qa
    return nseg, nsc


@njit(cache=True, inline="always")
def insert_ascending(j, qa, jobs, x, tq, lists):
    """Job ``j``'s flows, admitted at quantum ``qa``, each into its reducer port's list before
    the first flow with more bytes left than its size (``FlowSimulator.addAscending``)."""
    red_ptr, red_rack, flow_ptr, flow_size = jobs
    hd_d, nx_d, pv_d = lists
    for r in range(red_ptr[j], red_ptr[j + 1]):
        p = red_rack[r]
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            tq[f] = qa
            prev = -1
            g = hd_d[p]
            while g >= 0 and not (x[g] > flow_size[f]):
                prev = g
                g = nx_d[g]
            nx_d[f] = g
            pv_d[f] = prev
            if g >= 0:
                pv_d[g] = f
            if prev >= 0:
                nx_d[prev] = f
            else:
                hd_d[p] = f


@njit(cache=True, error_model="numpy", inline="always")
def match_ports(at, flow_src, hd_d, nx_d, served, busy, x, d, tq, done, key, head, hm, bq,
                buf_i, buf_d, chunks_i, chunks_d, nseg, sent, where, lpos, vs, sbuf_i, sbuf_d,
                nsc, tbp, tinfo):
    """PFP at quantum ``qn``: reducer ports in order each serve their first flow whose mapper
    is idle; a flow that stops runs to ``qn`` at its old rate, a flow that starts runs at full
    rate and is queued at its finishing quantum.  ``at``: ``qn``, ports, buckets, full bytes
    per quantum, ``quantum_ms``, ``lean``, ZERO.  Returns ``(nseg, nsc)``.

    Inlined into :func:`pfp_retime`, which binds its arrays outside any loop, so they reach
    the helpers inlined in its loop by plain copies that :mod:`coflowopt._jit` forwards
    (inlined into the event loop itself, each of those calls cost two reference counts per
    array)."""
    qn, n_out, nb, cfull, quantum_ms, lean, zero = at
    busy[:] = False
    for p in range(n_out):
        g = hd_d[p]
        while g >= 0 and busy[flow_src[g]]:
            g = nx_d[g]
        old = served[p]
        if g >= 0:
            busy[flow_src[g]] = True
        if old == g:
            continue
        if old >= 0 and not done[old]:
            x[old], _, _, _ = advance(x[old], d[old], qn - tq[old], zero)
            if not lean:
                nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, old, tq[old], qn,
                                   d[old])
            else:
                sent_until(old, qn, d, tq, sent, quantum_ms)
                nsc = push_change(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[old], qn, 0.0,
                                  quantum_ms, lpos)
            d[old] = 0.0
            tq[old] = qn
            loop.bq_remove(head, bq, old)
            key[old] = np.inf
        served[p] = g
        if g >= 0:
            x[g], _, _, _ = advance(x[g], d[g], qn - tq[g], zero)
            d[g] = cfull
            tq[g] = qn
            if lean:
                nsc = push_change(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], qn,
                                  cfull / 1048576.0 / quantum_ms, quantum_ms, lpos)
            _, st, _, _ = advance(x[g], cfull, 1 << 40, zero)
            key[g] = float(qn + st - 1)
            loop.bq_remove(head, bq, g)
            loop.bq_insert(head, hm, bq, g, min(qn + st - 1, nb - 1))
    return nseg, nsc


@njit(cache=True, error_model="numpy", inline="always")
def finish_quantum(at, lists, flows, d, tq, sent, head, hm, bq, buf_i, buf_d, chunks_i,
                   chunks_d, vs, sbuf_i, sbuf_d, tbp, tinfo, lpos, red_open, red_job, job_open,
                   finish, counters):
    """The flows of bucket ``q``: those that finish in quantum ``q`` leave their port's list
    (and their reducer, job); a flow whose key was a lower bound is queued at its exact
    quantum.  ``at``: ``q``, buckets, ``quantum_ms``, ``lean``, ZERO; ``counters``: ``nseg``,
    ``nsc``, active reducers and jobs.  Inlined into :func:`pfp_settle`, as :func:`match_ports`
    into its step.  Returns ``(n_fin, active_tasks, active_jobs, nseg, nsc)``."""
    q, nb, quantum_ms, lean, zero = at
    nseg, nsc, active_tasks, active_jobs = counters
    hd_d, nx_d, pv_d = lists
    served, x, done, key, f_red, red_rack, stats, fvol, fin_list, where = flows
    n_fin = 0
    while head[q] >= 0:
        g = head[q]
        loop.bq_remove(head, bq, g)
        key[g] = np.inf
        x0 = x[g]
        xg, st, fin, bl = advance(x0, d[g], q - tq[g] + 1, zero)
        if not fin:  # the key was a lower bound: queue the exact quantum
            _, st, fin, _ = advance(x0, d[g], 1 << 40, zero)
            if fin:
                key[g] = float(tq[g] + st - 1)
                loop.bq_insert(head, hm, bq, g, min(tq[g] + st - 1, nb - 1))
            continue
        if not lean:
            nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, tq[g], q, d[g])
            nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, q, q + 1, bl)
        else:
            sent_until(g, q, d, tq, sent, quantum_ms)
            if bl != 0.0:  # the last quantum, with the drift; rate 0 after the loop
                nsc = push_change(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], q,
                                  last_rate(bl, q, q + 1, sent[g], fvol[g], quantum_ms),
                                  quantum_ms, lpos)
                fin_list[n_fin] = g
            else:
                nsc = push_change(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], q, 0.0,
                                  quantum_ms, lpos)
                fin_list[n_fin] = -1
        n_fin += 1
        x[g] = xg
        tq[g] = q + 1
        done[g] = True
        stats[2] += 1
        r = f_red[g]
        p = red_rack[r]
        served[p] = -1
        if pv_d[g] >= 0:
            nx_d[pv_d[g]] = nx_d[g]
        else:
            hd_d[p] = nx_d[g]
        if nx_d[g] >= 0:
            pv_d[nx_d[g]] = pv_d[g]
        active_tasks, active_jobs = loop.flow_finished(r, q, red_open, red_job, job_open, finish,
                                                  quantum_ms, active_tasks, active_jobs)
    return n_fin, active_tasks, active_jobs, nseg, nsc


# -- the steps of loop.run_epochs (PFP's state ``st``: see run_pfp) ---------------------------


@njit(cache=True, error_model="numpy")
def pfp_begin(st, qa, nseg, nsc):
    """At an epoch's start: the served flows brought to quantum ``qa`` (:func:`catch_up`)."""
    at, _, _, served, _, x, d, tq, _, _, _, store, sent, where, lpos, strm, _, _ = st
    n_out, _, _, quantum_ms, lean, zero = at
    vs, sbuf_i, sbuf_d, tbp, tinfo = strm
    return catch_up(qa, n_out, served, x, d, tq, lean, store, nseg, sent, where, lpos, vs,
                    sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms, zero)


@njit(cache=True, error_model="numpy")
def pfp_join(st, j, qa, nseg, nsc):
    """Job ``j`` admitted at quantum ``qa``: its flows into the ports' lists
    (:func:`insert_ascending`)."""
    _, _, lists, _, _, x, _, tq, _, _, _, _, _, _, _, _, jobs, _ = st
    insert_ascending(j, qa, jobs, x, tq, lists)
    return nseg, nsc


@njit(cache=True, error_model="numpy")
def pfp_retime(st, qn, nseg, nsc):
    """The matching from quantum ``qn`` (:func:`match_ports`)."""
    (at, flow_src, lists, served, busy, x, d, tq, done, key, buckets, store, sent, where, lpos,
     strm, _, _) = st
    n_out, nb, cfull, quantum_ms, lean, zero = at
    head, hm, bq, _ = buckets
    buf_i, buf_d, chunks_i, chunks_d = store
    vs, sbuf_i, sbuf_d, tbp, tinfo = strm
    return match_ports((qn, n_out, nb, cfull, quantum_ms, lean, zero), flow_src, lists[0],
                       lists[1], served, busy, x, d, tq, done, key, head, hm, bq, buf_i, buf_d,
                       chunks_i, chunks_d, nseg, sent, where, lpos, vs, sbuf_i, sbuf_d, nsc, tbp,
                       tinfo)


@njit(cache=True, error_model="numpy")
def pfp_settle(st, q, active_tasks, active_jobs, nseg, nsc):
    """The flows of bucket ``q`` (:func:`finish_quantum`); streamed, the flows that ran their
    last quantum at a rate of their own stop at ``q + 1``.  Returns ``(n_fin, active_tasks,
    active_jobs, nseg, nsc)``."""
    (at, _, lists, served, _, x, d, tq, done, key, buckets, store, sent, where, lpos, strm,
     jobs, fin) = st
    _, nb, _, quantum_ms, lean, zero = at
    head, hm, bq, _ = buckets
    buf_i, buf_d, chunks_i, chunks_d = store
    vs, sbuf_i, sbuf_d, tbp, tinfo = strm
    f_red, stats, fvol, fin_list, red_open, red_job, job_open, finish = fin
    n_fin, active_tasks, active_jobs, nseg, nsc = finish_quantum(
        (q, nb, quantum_ms, lean, zero), lists,
        (served, x, done, key, f_red, jobs[1], stats, fvol, fin_list, where), d, tq, sent, head,
        hm, bq, buf_i, buf_d, chunks_i, chunks_d, vs, sbuf_i, sbuf_d, tbp, tinfo, lpos,
        red_open, red_job, job_open, finish, (nseg, nsc, active_tasks, active_jobs))
    if lean:
        for j in range(n_fin):
            if fin_list[j] >= 0:
                nsc = push_change(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[fin_list[j]],
                                  q + 1, 0.0, quantum_ms, lpos)
    return n_fin, active_tasks, active_jobs, nseg, nsc


@njit(cache=True, error_model="numpy")
def pfp_close(st, qz, nsc):
    """Streamed, the flows still served (a run cut at its time limit) stop at quantum ``qz``.
    Returns ``nsc``."""
    at, _, _, _, _, _, d, _, done, _, _, _, _, where, lpos, strm, _, _ = st
    _, _, _, quantum_ms, lean, _ = at
    if not lean:
        return nsc
    vs, sbuf_i, sbuf_d, tbp, tinfo = strm
    for g in range(done.size):
        if not done[g] and d[g] != 0.0:
            nsc = push_change(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], qz, 0.0, quantum_ms,
                              lpos)
    return nsc


@njit(cache=True, error_model="numpy", nogil=True)
def run_pfp(begin, join, retime, settle, close, arrival, red_ptr, red_rack, flow_ptr, flow_src,
            flow_size, n_in, n_out, epoch_ms, quantum_ms, zero, lean, where, fvol, vs, sbuf_i,
            sbuf_d, kctl):
    """Run PFP (module docstring) on :func:`~coflowopt.sim.coflowsim.loop.run_epochs` with
    the steps :data:`PFP_STEPS` (passed in, as for FAIR's).  Returns per job ``start``,
    ``finish`` (ms), the stored segments, counters (events, rate changes, flow completions),
    and the streamed run's breakpoint times, buffered count and first quantum."""
    n = arrival.size
    nf = flow_size.size
    cfull = 1.0 * 1024 * 1048576 / 8.0 * (1.0 * quantum_ms / 1024)  # bytes per quantum
    f_red = loop.owners(flow_ptr, nf)
    red_job = loop.owners(red_ptr, red_rack.size)
    x = flow_size.copy()
    d = np.zeros(nf)
    tq = np.zeros(nf, dtype=np.int64)  # x is the bytes left at the start of quantum tq
    key = np.full(nf, np.inf)  # each queued flow's key
    done = np.zeros(nf, dtype=np.bool_)
    start = np.full(n, -1.0)
    finish = np.full(n, -1.0)
    red_open = np.diff(flow_ptr)  # open flows per reducer
    job_open = np.diff(red_ptr)  # open reducers per job
    # each reducer port's flows as a linked list sorted by bytes left at insertion
    lists = (np.full(n_out, -1, dtype=np.int64), np.full(nf, -1, dtype=np.int64),
             np.full(nf, -1, dtype=np.int64))
    # the served flow of each reducer port
    served = np.full(n_out, -1, dtype=np.int64)
    busy = np.zeros(n_in, dtype=np.bool_)
    stats = np.zeros(3, dtype=np.int64)  # events, rate changes, flow completions
    # the finishing quantum of each queued flow, in buckets
    buckets = loop.new_buckets(nf, quantum_ms)
    # segments go to fixed buffers flushed into chunk lists: no array is reallocated inside
    # the event loop (a loop-carried, reallocatable array made the re-time loop 3x slower)
    # (flow, first quantum, last quantum exclusive; bytes per quantum)
    store = new_store()
    # streaming (lean): MB each flow was sent before its open segment (for the drift), the
    # flows that finished in a quantum (rate 0 from the next), the breakpoint times
    sent = np.zeros(nf if lean else 0)
    fin_list = np.empty(nf if lean else 0, dtype=np.int64)
    lpos = np.full(nf if lean else 0, -1, dtype=np.int64)  # by transformed flow
    tbp, tinfo = new_times(lean, buckets[3])
    # the state of PFP's steps: constants, then arrays in the order the steps unpack them
    st = ((n_out, buckets[3], cfull, quantum_ms, lean, zero), flow_src, lists, served, busy,
          x, d, tq, done, key, buckets, store, sent, where, lpos,
          (vs, sbuf_i, sbuf_d, tbp, tinfo), (red_ptr, red_rack, flow_ptr, flow_size),
          (f_red, stats, fvol, fin_list, red_open, red_job, job_open, finish))
    return loop.run_epochs(begin, join, retime, settle, close, st, arrival, red_ptr, flow_ptr,
                           epoch_ms, quantum_ms, buckets, store, (sbuf_i, tbp, tinfo), start,
                           finish, stats, kctl)


#: PFP's steps of :func:`~coflowopt.sim.coflowsim.loop.run_epochs`, for :func:`run_pfp`
PFP_STEPS = loop.steps(pfp_begin, pfp_join, pfp_retime, pfp_settle, pfp_close)

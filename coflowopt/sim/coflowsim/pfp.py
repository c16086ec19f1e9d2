"""The kernel of CoflowSim's PFP (``FlowSimulator.java``, per-flow prioritization, one of the
flow-level baselines of Varys' evaluation: Chowdhury, Zhong, Stoica, SIGCOMM 2014):
each reducer port, in port order, serves at full rate the first flow of its list (kept sorted by
size at insertion) whose mapper is still idle.

Rates change only when a flow finishes or coflows are admitted, so the loop jumps between those
quanta (a bucket queue of finishing quanta); a rate change re-times the flows of the new
matching.

The matching is kept between events and repaired in port order (:func:`rematch`): a port's
choice is the first flow of its list whose mapper no earlier port serves, so it can change only
when its list gains a flow before its choice, its served flow finishes, an earlier port takes
its mapper, or an earlier port frees a mapper with a flow before its choice.  Only those ports
are revisited; list positions compare in O(1) by order labels (:func:`label_between`), and each
(mapper, reducer port) pair keeps its flows in list order, so a freed mapper's first flow at a
port is at hand.  Walking every list from its head at every event, past the busy mappers, took
2.7 G steps on a 1x FB-like trace and 4.2 G at 2x.

A freed mapper is offered to the first later port that may take it (one whose choice comes
after the mapper's first flow there, :func:`next_waiting`), and passed on by each port that
does not take it (:func:`hand`): only the first such port in port order can take it, and every
port before it that may has passed.  Marking every port that may take it (as before) marked
1.04 G ports for 14 M freed mappers on a 10x trace, and revisited most for nothing.

``lean``: each change goes to the validator when the rate is set (time only moves forward
here); a segment the stored schedule would not hold (empty) then shows as two changes
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
from coflowopt.sim.events import iheap_pop, iheap_push
from coflowopt.sim.segstore import new_store, put_segment

__all__ = ["PFP_STEPS", "finish_quantum", "hand", "insert_ascending", "label_between", "link",
           "next_waiting", "pfp_begin", "pfp_close", "pfp_join", "pfp_retime", "pfp_settle",
           "relabelled", "rematch", "run_pfp", "unlink"]

# order labels of a port's list: strictly increasing along it, inside (LO, HI)
LO = -(1 << 61)
HI = 1 << 61
#: freed mappers kept per marked port; past this many the port reads the repair's whole list
#: (read when a run starts: the kernel takes it as an argument, so a test can make it 1)
FREED_PER_PORT = 8


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
def label_between(f, prev, nxt, p, hd_d, nx_d, label):
    """Give flow ``f``, just linked between ``prev`` and ``nxt`` in port ``p``'s list, a label
    between theirs; when there is no room, relabel the whole list evenly (its order kept) and
    return True."""
    lo = label[prev] if prev >= 0 else LO
    hi = label[nxt] if nxt >= 0 else HI
    if hi - lo >= 2:
        label[f] = lo + (hi - lo) // 2
        return False
    n = 0
    g = hd_d[p]
    while g >= 0:
        n += 1
        g = nx_d[g]
    step = (HI - LO) // (n + 1)
    v = LO
    g = hd_d[p]
    while g >= 0:
        v += step
        label[g] = v
        g = nx_d[g]
    return True


@njit(cache=True, inline="always")
def relabelled(p, f, hd_d, nx_d, label, flow_src, n_out, front, flab, pairs):
    """After port ``p``'s list was relabelled: the labels kept beside its pairs' first flows
    and its front follow (``f``, just linked, joins its pair after this)."""
    pair_head, pair_lab = pairs[0], pairs[3]
    g = hd_d[p]
    while g >= 0:
        if g != f:
            k = flow_src[g] * n_out + p
            if pair_head[k] == g:
                pair_lab[k] = label[g]
        g = nx_d[g]
    flab[p] = label[front[p]] if front[p] >= 0 else HI


@njit(cache=True, inline="always")
def mark(p, heap, nh, inheap):
    """Port ``p`` is to be revisited at the next repair (once)."""
    if not inheap[p]:
        inheap[p] = True
        nh = iheap_push(heap, nh, p)
    return nh


@njit(cache=True, inline="always")
def link(f, prev, g, k, head, nx, pv):
    """Link ``f`` between ``prev`` and ``g`` (-1: none) in list ``k`` of a doubly-linked
    family (``head`` per list, ``nx``/``pv`` per item)."""
    nx[f] = g
    pv[f] = prev
    if g >= 0:
        pv[g] = f
    if prev >= 0:
        nx[prev] = f
    else:
        head[k] = f


@njit(cache=True, inline="always")
def unlink(f, k, head, nx, pv):
    """Take ``f`` out of list ``k`` of a doubly-linked family (as :func:`link`)."""
    if pv[f] >= 0:
        nx[pv[f]] = nx[f]
    else:
        head[k] = nx[f]
    if nx[f] >= 0:
        pv[nx[f]] = pv[f]


@njit(cache=True, inline="always")
def pair_add(f, k, label, pairs):
    """Flow ``f`` into pair ``k`` = (mapper, port)'s list, in label order; the pair's first
    label follows."""
    pair_head, pnx, ppv, pair_lab = pairs
    prev = -1
    g = pair_head[k]
    while g >= 0 and label[g] < label[f]:
        prev = g
        g = pnx[g]
    link(f, prev, g, k, pair_head, pnx, ppv)
    if prev < 0:
        pair_lab[k] = label[f]


@njit(cache=True, inline="always")
def pair_remove(f, k, label, pairs):
    """Flow ``f`` out of pair ``k``'s list; the pair's first label follows (``HI``: empty)."""
    pair_head, pnx, ppv, pair_lab = pairs
    unlink(f, k, pair_head, pnx, ppv)
    h = pair_head[k]
    pair_lab[k] = label[h] if h >= 0 else HI


@njit(cache=True, inline="always")
def next_waiting(a, after, n_out, flab, pair_lab):
    """The first port after ``after`` whose choice comes after mapper ``a``'s first flow
    there (-1: none): the next port that may take ``a``.  Reads the pair row of ``a`` and the
    fronts' labels in port order (an empty pair's label is ``HI``)."""
    base = a * n_out
    for p in range(after + 1, n_out):
        if pair_lab[base + p] < flab[p]:
            return p
    return -1


@njit(cache=True, inline="always")
def hand(a, after, n_out, flab, pairs, marks, nh):
    """Offer the free mapper ``a`` to the first port after ``after`` that may take it: that
    port is revisited with ``a`` among its freed mappers.  Returns ``nh``."""
    heap, inheap, _, _, _, _, freed, n_freed = marks
    p = next_waiting(a, after, n_out, flab, pairs[3])
    if p >= 0:
        nh = mark(p, heap, nh, inheap)
        if n_freed[p] < freed.shape[1]:
            freed[p, n_freed[p]] = a
        n_freed[p] += 1
    return nh


@njit(cache=True, inline="always")
def release(a, q, n_out, flab, owner, pairs, marks, nrel, nh):
    """Port ``q`` no longer serves mapper ``a``: unless an earlier port took ``a`` from it in
    this repair, ``a`` is listed as freed by ``q`` and offered to the first later port that
    may take it (:func:`hand`; that port passes it on if it does not).  Returns
    ``(nrel, nh)``."""
    _, _, rel_m, rel_q, _, _, _, _ = marks
    if owner[a] != q:  # taken by an earlier port: still served before every later one
        return nrel, nh
    owner[a] = -1
    rel_m[nrel] = a
    rel_q[nrel] = q
    nrel += 1
    return nrel, hand(a, q, n_out, flab, pairs, marks, nh)


@njit(cache=True, inline="always")
def insert_ascending(j, qa, jobs, x, tq, lists, inc):
    """Job ``j``'s flows, admitted at quantum ``qa``, each into its reducer port's list before
    the first flow with more bytes left than its size (``FlowSimulator.addAscending``); a flow
    placed before its port's choice marks the port for the repair."""
    red_ptr, red_rack, flow_ptr, flow_size, flow_src, n_out = jobs
    hd_d, nx_d, pv_d = lists
    label, _, front, pairs, marks, cnt, flab = inc
    heap, inheap, _, _, ins_head, ins_next, _, _ = marks
    for r in range(red_ptr[j], red_ptr[j + 1]):
        p = red_rack[r]
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            tq[f] = qa
            prev = -1
            g = hd_d[p]
            while g >= 0 and not (x[g] > flow_size[f]):
                prev = g
                g = nx_d[g]
            link(f, prev, g, p, hd_d, nx_d, pv_d)
            if label_between(f, prev, g, p, hd_d, nx_d, label):
                relabelled(p, f, hd_d, nx_d, label, flow_src, n_out, front, flab, pairs)
            a = flow_src[f]
            pair_add(f, a * n_out + p, label, pairs)
            if label[f] < flab[p]:
                ins_next[f] = ins_head[p]
                ins_head[p] = f
                cnt[1] = mark(p, heap, cnt[1], inheap)


@njit(cache=True, error_model="numpy", inline="always")
def rematch(at, flow_src, nx_d, served, x, d, tq, done, key, head, hm, bq, buf_i, buf_d,
            chunks_i, chunks_d, nseg, sent, where, lpos, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo,
            inc):
    """PFP at quantum ``qn``: reducer ports in order each serve their first flow whose mapper
    no earlier port serves; only the marked ports are revisited (module docstring), in port
    order, and a revisited port may mark later ones.  A flow that stops runs to ``qn`` at its
    old rate, a flow that starts runs at full rate and is queued at its finishing quantum.
    ``at``: ``qn``, ports, buckets, full bytes per quantum, ``quantum_ms``, ``lean``, ZERO;
    ``inc``: labels, mapper owners, each port's front (its choice, or where the walk resumes;
    -1: the end), the pair lists (with each pair's first label), the marks and their counters,
    each front's label (``HI``: none).  Returns ``(nseg, nsc)``.

    Inlined into :func:`pfp_retime`, which binds its arrays outside any loop, so they reach
    the helpers inlined in its loop by plain copies that :mod:`coflowopt._jit` forwards
    (inlined into the event loop itself, each of those calls cost two reference counts per
    array)."""
    qn, n_out, nb, cfull, quantum_ms, lean, zero = at
    label, owner, front, pairs, marks, cnt, flab = inc
    pair_head = pairs[0]
    pair_lab = pairs[3]
    heap, inheap, rel_m, rel_q, ins_head, ins_next, freed, n_freed = marks
    nrel = cnt[0]
    nh = cnt[1]
    while nh > 0:
        p = heap[0]
        nh = iheap_pop(heap, nh)
        inheap[p] = False
        # the first flow from the front whose mapper no earlier port serves ...
        g = front[p]
        while g >= 0 and 0 <= owner[flow_src[g]] < p:
            g = nx_d[g]
        best = g
        bl = label[g] if g >= 0 else HI
        # ... or before it: the first flow of a mapper an earlier port freed (those offered
        # to this port, or every freed one when they were too many to keep)
        nf_p = n_freed[p]
        kept = nf_p <= freed.shape[1]
        n_scan = nf_p if kept else nrel
        for i in range(n_scan):
            if kept:
                a = freed[p, i]
            elif rel_q[i] < p:
                a = rel_m[i]
            else:
                continue
            if not (0 <= owner[a] < p):
                k = a * n_out + p
                if pair_lab[k] < bl:  # HI: the pair is empty
                    best = pair_head[k]
                    bl = pair_lab[k]
        n_freed[p] = 0
        # ... or a flow placed there since
        f = ins_head[p]
        while f >= 0:
            if label[f] < bl and not (0 <= owner[flow_src[f]] < p):
                best = f
                bl = label[f]
            f = ins_next[f]
        ins_head[p] = -1
        front[p] = best
        flab[p] = bl
        old = served[p]
        if old != best:
            if old >= 0 and (best < 0 or flow_src[best] != flow_src[old]):
                nrel, nh = release(flow_src[old], p, n_out, flab, owner, pairs, marks, nrel, nh)
            if best >= 0 and (old < 0 or flow_src[best] != flow_src[old]):
                r = owner[flow_src[best]]
                if r >= 0 and r != p:  # a later port served it: it chooses again
                    nh = mark(r, heap, nh, inheap)
                owner[flow_src[best]] = p
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
            served[p] = best
            if best >= 0:
                g = best
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
        # the freed mappers offered here and not taken go on to the next port that may
        # take them
        if kept:
            for i in range(nf_p):
                a = freed[p, i]
                if owner[a] < 0:
                    nh = hand(a, p, n_out, flab, pairs, marks, nh)
        else:
            for i in range(nrel):
                if rel_q[i] < p and owner[rel_m[i]] < 0:
                    nh = hand(rel_m[i], p, n_out, flab, pairs, marks, nh)
    cnt[0] = 0  # the freed mappers have been offered to every later port
    cnt[1] = 0
    return nseg, nsc


@njit(cache=True, error_model="numpy", inline="always")
def finish_quantum(at, lists, flows, d, tq, sent, head, hm, bq, buf_i, buf_d, chunks_i,
                   chunks_d, vs, sbuf_i, sbuf_d, tbp, tinfo, lpos, red_open, red_job, job_open,
                   finish, counters, inc, flow_src, n_out):
    """The flows of bucket ``q``: those that finish in quantum ``q`` leave their port's list
    (and their reducer, job), free their mapper and mark their port for the repair
    (:func:`rematch`: it resumes after them); a flow whose key was a lower bound is queued at
    its exact quantum.  ``at``: ``q``, buckets, ``quantum_ms``, ``lean``, ZERO;
    ``counters``: ``nseg``, ``nsc``, active reducers and jobs.  Inlined into
    :func:`pfp_settle`, as :func:`rematch` into its step.  Returns ``(n_fin, active_tasks,
    active_jobs, nseg, nsc)``."""
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
        label, owner, front, pairs, marks, cnt, flab = inc
        front[p] = nx_d[g]
        flab[p] = label[front[p]] if front[p] >= 0 else HI
        a = flow_src[g]
        cnt[0], cnt[1] = release(a, p, n_out, flab, owner, pairs, marks, cnt[0], cnt[1])
        cnt[1] = mark(p, marks[0], cnt[1], marks[1])
        pair_remove(g, a * n_out + p, label, pairs)
        unlink(g, p, hd_d, nx_d, pv_d)
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
    at, flow_src, lists, _, inc, x, _, tq, _, _, _, _, _, _, _, _, jobs, _ = st
    red_ptr, red_rack, flow_ptr, flow_size = jobs
    insert_ascending(j, qa, (red_ptr, red_rack, flow_ptr, flow_size, flow_src, at[0]), x, tq,
                     lists, inc)
    return nseg, nsc


@njit(cache=True, error_model="numpy")
def pfp_retime(st, qn, nseg, nsc):
    """The matching from quantum ``qn`` (:func:`rematch`)."""
    (at, flow_src, lists, served, inc, x, d, tq, done, key, buckets, store, sent, where, lpos,
     strm, _, _) = st
    n_out, nb, cfull, quantum_ms, lean, zero = at
    head, hm, bq, _ = buckets
    buf_i, buf_d, chunks_i, chunks_d = store
    vs, sbuf_i, sbuf_d, tbp, tinfo = strm
    return rematch((qn, n_out, nb, cfull, quantum_ms, lean, zero), flow_src, lists[1], served,
                   x, d, tq, done, key, head, hm, bq, buf_i, buf_d, chunks_i, chunks_d, nseg,
                   sent, where, lpos, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, inc)


@njit(cache=True, error_model="numpy")
def pfp_settle(st, q, active_tasks, active_jobs, nseg, nsc):
    """The flows of bucket ``q`` (:func:`finish_quantum`); streamed, the flows that ran their
    last quantum at a rate of their own stop at ``q + 1``.  Returns ``(n_fin, active_tasks,
    active_jobs, nseg, nsc)``."""
    (at, flow_src, lists, served, inc, x, d, tq, done, key, buckets, store, sent, where, lpos,
     strm, jobs, fin) = st
    n_out, nb, _, quantum_ms, lean, zero = at
    head, hm, bq, _ = buckets
    buf_i, buf_d, chunks_i, chunks_d = store
    vs, sbuf_i, sbuf_d, tbp, tinfo = strm
    f_red, stats, fvol, fin_list, red_open, red_job, job_open, finish = fin
    n_fin, active_tasks, active_jobs, nseg, nsc = finish_quantum(
        (q, nb, quantum_ms, lean, zero), lists,
        (served, x, done, key, f_red, jobs[1], stats, fvol, fin_list, where), d, tq, sent, head,
        hm, bq, buf_i, buf_d, chunks_i, chunks_d, vs, sbuf_i, sbuf_d, tbp, tinfo, lpos,
        red_open, red_job, job_open, finish, (nseg, nsc, active_tasks, active_jobs), inc,
        flow_src, n_out)
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
            flow_size, n_in, n_out, epoch_ms, quantum_ms, zero, room, lean, where, fvol, vs,
            sbuf_i, sbuf_d, kctl):
    """Run PFP (module docstring) on :func:`~coflowopt.sim.coflowsim.loop.run_epochs` with
    the steps :data:`PFP_STEPS` (passed in, as for FAIR's).  Returns per job ``start``,
    ``finish`` (ms), the stored segments, counters (events, rate changes, flow completions),
    and the streamed run's breakpoint times, buffered count and first quantum.  ``room``: the
    freed mappers kept per marked port (:data:`FREED_PER_PORT`)."""
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
    # the served flow of each reducer port, and the repair's state (rematch): order labels,
    # the port serving each mapper, each port's front, the (mapper, port) pairs' flows in list
    # order with the label of each pair's first flow (HI: none), the marked ports, the mappers
    # freed (all, and those offered to each marked port) and the flows placed before a front
    # since the last repair, two counts, and each front's label (HI: none)
    served = np.full(n_out, -1, dtype=np.int64)
    n_pairs = n_in * n_out
    pairs = (np.full(n_pairs, -1, dtype=np.int64), np.full(nf, -1, dtype=np.int64),
             np.full(nf, -1, dtype=np.int64), np.full(n_pairs, HI, dtype=np.int64))
    marks = (np.empty(max(n_out, 1), dtype=np.int64), np.zeros(n_out, dtype=np.bool_),
             np.empty(2 * n_out + 1, dtype=np.int64), np.empty(2 * n_out + 1, dtype=np.int64),
             np.full(n_out, -1, dtype=np.int64), np.full(nf, -1, dtype=np.int64),
             np.empty((n_out, max(room, 1)), dtype=np.int64), np.zeros(n_out, dtype=np.int64))
    inc = (np.zeros(nf, dtype=np.int64), np.full(n_in, -1, dtype=np.int64),
           np.full(n_out, -1, dtype=np.int64), pairs, marks, np.zeros(2, dtype=np.int64),
           np.full(n_out, HI, dtype=np.int64))
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
    st = ((n_out, buckets[3], cfull, quantum_ms, lean, zero), flow_src, lists, served, inc,
          x, d, tq, done, key, buckets, store, sent, where, lpos,
          (vs, sbuf_i, sbuf_d, tbp, tinfo), (red_ptr, red_rack, flow_ptr, flow_size),
          (f_red, stats, fvol, fin_list, red_open, red_job, job_open, finish))
    return loop.run_epochs(begin, join, retime, settle, close, st, arrival, red_ptr, flow_ptr,
                           epoch_ms, quantum_ms, buckets, store, (sbuf_i, tbp, tinfo), start,
                           finish, stats, kctl)


#: PFP's steps of :func:`~coflowopt.sim.coflowsim.loop.run_epochs`, for :func:`run_pfp`
PFP_STEPS = loop.steps(pfp_begin, pfp_join, pfp_retime, pfp_settle, pfp_close)

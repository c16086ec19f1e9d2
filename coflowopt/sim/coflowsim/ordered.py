"""The kernel of CoflowSim's coflow-level schedulers: FIFO, SCF, NCF, LCF, SEBF (Varys), DARK
(Aalo) and A-SEBF (``CoflowSimulator.java``, ``CoflowSimulatorDark.java``).

Varys: Chowdhury, Zhong, Stoica, "Efficient Coflow Scheduling with Varys", SIGCOMM 2014
(SEBF order, MADD, backfill); Aalo: Chowdhury, Stoica, "Efficient Coflow Scheduling Without
Prior Knowledge", SIGCOMM 2015 (D-CLAS).  Rates are recomputed only at
events (an epoch with admissions, or a whole coflow departing) and are constant in between,
so the kernel advances a *window* of quanta at once: the window ends at the first quantum in
which a whole coflow departs (:func:`departure_quantum`), every flow and counter is replayed
over it exactly (:func:`advance_window`), then departures are settled and rates recomputed.

A reducer completes when its own bytes-left counter reaches ``Constants.ZERO`` even if a flow
still holds a residue; such "zombie" flows keep their rates (and capacity) while their coflow
lives, move until the next layout of the port lists, and keep decrementing the counter, whose
negative value can then dominate a coflow's MADD bottleneck (:func:`left_after`).

No integer scheduler kind: the scheduler is a few choices made in Python (``dark``: D-CLAS
queues and per-coflow equal split, else a sorted list and MADD; ``lcf``: the key is the bytes
left now; ``key``: the static key of the sorted list; ``width``: D-CLAS' divisor of bytes
sent, 1 for DARK, the receiver ports for A-SEBF).
"""

from __future__ import annotations

import math

import numpy as np

from coflowopt._jit import njit
from coflowopt.sim.coflowsim.javafloat import advance, replay
from coflowopt.sim.coflowsim.loop import END_MS, gathered, next_admitted
from coflowopt.sim.coflowsim.model import VOLUME_RTOL
from coflowopt.sim.coflowsim.orders import insert_sorted, layout, queue_order, resort_remaining
from coflowopt.sim.coflowsim.rates import rates_dark, rates_madd
from coflowopt.sim.coflowsim.stream import (
    breakpoint_times,
    flush_window,
    new_times,
    window_close,
    window_segment,
)
from coflowopt.sim.events import progress_or_stop
from coflowopt.sim.segstore import new_store, put_segment, set_segment_end

__all__ = ["advance_window", "departure_quantum", "left_after", "note_excess", "run_ordered",
           "run_rate"]


@njit(cache=True, error_model="numpy")
def left_after(s, td, tst, tfin, tbl, a, b, c, w, buf, zero, z_td, z_tst, z_tfin, z_tbl):
    """A reducer's bytes-left counter after it completes in quantum ``c`` of the window.

    CoflowSim zeroes the counter when the reducer completes, at the flow after which the
    counter is <= ZERO or no flow is left, and the flows after it in the same quantum still
    subtract their bytes: the counter ends slightly negative, and a negative count over a
    port whose free capacity is negative gives that coflow a huge bottleneck in MADD."""
    if c > 1:
        s, _ = replay(s, -1.0, td, tst, tfin, tbl, a, b, c - 1, False, buf, zero)
    completed = False
    for t in range(a, b):
        if tfin[t] and tst[t] < c:
            continue  # finished before this quantum
        bb = tbl[t] if (tfin[t] and tst[t] == c) else td[t]
        s = s - bb
        if not completed:
            empty = True
            for t2 in range(a, b):
                if t2 <= t:
                    if not (tfin[t2] and tst[t2] <= c):
                        empty = False
                        break
                elif not (tfin[t2] and tst[t2] < c):
                    empty = False
                    break
            if s <= zero or empty:
                completed = True
                s = 0.0
    # flows left after quantum c (zombies) keep moving, and counting, to the window's end
    nz = 0
    for t in range(a, b):
        if (not tfin[t]) or tst[t] > c:
            z_td[nz] = td[t]
            z_tst[nz] = tst[t] - c
            z_tfin[nz] = tfin[t]
            z_tbl[nz] = tbl[t]
            nz += 1
    if nz > 0 and w > c:
        s, _ = replay(s, -1.0, z_td, z_tst, z_tfin, z_tbl, 0, nz, w - c, False, buf, zero)
    return s


# -- the steps of one window ---------------------------------------------------------------


@njit(cache=True, inline="always")
def reschedule(dark, relayout, static_keys, now_ms, lst, ns, counter, jobs, st, ports, scratch,
               dl, cap, zero, dclas, excess):
    """Recompute the rates at an event: the D-CLAS queues and per-coflow equal split
    (``dark``), else the order (re-sorted by bytes left when not ``static_keys``) and MADD,
    whose oversubscription is noted (``excess``: ``over``, ``lean`` and the validator's
    tolerances, for :func:`note_excess`); ``relayout``: the flows are laid out in the port
    lists again first.  Returns the D-CLAS queue-entry counter."""
    red_ptr, red_rack, flow_ptr, flow_src = jobs
    rem, done, bps, laid, red_left, red_done, start, sent = st
    s_free, r_free, su, ru, sb, rb, nmc, nrc = ports
    edf, edf_key, dyn_key = scratch
    queue, cq, stamp, width, first, factor, nq = dclas
    if relayout:
        layout(lst, ns, red_ptr, flow_ptr, red_done, done, laid)
    if dark:
        counter = queue_order(lst, ns, queue, cq, stamp, counter, sent, width, first, factor,
                              nq)
        rates_dark(lst, ns, red_ptr, red_rack, flow_ptr, flow_src, done, bps, cap, zero, s_free,
                   r_free, su, ru, nmc, nrc)
        return counter
    if not static_keys:
        resort_remaining(lst, ns, red_ptr, flow_ptr, flow_src, rem, done, sb, dyn_key)
    ex, side, port = rates_madd(lst, ns, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem,
                                done, bps, start, dl, now_ms, cap, zero, s_free, r_free, su, ru,
                                sb, rb, edf, edf_key, nmc, nrc)
    over, lean, tolv = excess
    note_excess(over, 0, ex, side, port, now_ms, lean, tolv)
    return counter


@njit(cache=True, inline="always")
def note_excess(over, at, excess, side, port, now_ms, lean, tolv):
    """Keep the largest excess over capacity (relative) that CoflowSim's own accounting puts
    on a port, with its side, port and ms, in ``over[at:at + 4]``: MADD's oversubscription
    (``at`` 0) or a departure's residues (``at`` 5).  When streaming, the validator's
    capacity tolerance is widened by both from now on: every schedule that reproduces
    CoflowSim carries them (``over[4]``: the tolerance given)."""
    if excess > over[at]:
        over[at] = excess
        over[at + 1] = side
        over[at + 2] = port
        over[at + 3] = now_ms
        if lean:
            tolv[0] = over[4] + over[0] + over[5]


@njit(cache=True, inline="always")
def admit(t_ms, epoch_ms, cur, ns, active_tasks, counter, dark, lcf, key, lst, jobs, perrack,
          start, finish, red_open, dclas):
    """Admit the jobs of epoch ``t_ms``: into the D-CLAS top queue at its tail (``dark``), or
    the sorted list.  Returns ``(cur, ns, active_tasks, counter, added)``."""
    arrival, red_ptr, flow_ptr = jobs
    queue, cq, stamp = dclas
    added = 0
    while True:
        j, cur, _, active_tasks = next_admitted(cur, arrival, t_ms, epoch_ms, flow_ptr, red_ptr,
                                                start, finish, 0, active_tasks)
        if j < 0:
            break
        red_open[j] = red_ptr[j + 1] - red_ptr[j]
        if dark:
            queue[j] = 0
            cq[j] = 0
            stamp[j] = counter
            counter += 1
            lst[ns] = j
            ns += 1
        else:
            ns = insert_sorted(lst, ns, j, key, lcf, perrack, red_ptr)
        added += 1
    return cur, ns, active_tasks, counter, added


@njit(cache=True, inline="always")
def next_epoch(t_ms, epoch_ms, cur, arrival):
    """The next epoch that admits a job (epochs without admissions change nothing), or the
    time limit when none is left."""
    t_next = t_ms + epoch_ms
    if cur < arrival.size:
        t_adm = epoch_ms * math.ceil((arrival[cur] - epoch_ms) / epoch_ms)
        if t_adm > t_next:
            t_next = np.int64(t_adm)
    else:
        t_next = max(t_next, END_MS)
    return t_next


@njit(cache=True, inline="always")
def departure_quantum(lst, ns, big, qf, jobs, rem, done, bps, red_done, red_left, tmp, zero):
    """The first quantum (1-based, at most ``big + 1``: none within ``big``) in which a whole
    coflow finishes: every reducer done, by its last flow or by its bytes-left counter reaching
    ZERO first (``ReduceTask`` checks both)."""
    red_ptr, flow_ptr = jobs
    td, tst, tfin, tbl, buf, t_ptr = tmp
    dep = big + 1
    for k in range(ns):
        j = lst[k]
        kj = 0
        nt = 0
        for r in range(red_ptr[j], red_ptr[j + 1]):
            t_ptr[r - red_ptr[j]] = nt
            if red_done[r]:
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                d = (bps[f] / 8) * qf
                _, st, fin, bl = advance(rem[f], d, big, zero)
                if not fin:
                    kj = big + 1
                    break
                td[nt] = d
                tst[nt] = st
                tfin[nt] = fin
                tbl[nt] = bl
                nt += 1
            if kj > big:
                break
            t_ptr[r - red_ptr[j] + 1] = nt
            a = t_ptr[r - red_ptr[j]]
            last = 0
            for t in range(a, nt):
                if tst[t] > last:
                    last = tst[t]
            if last > 1:
                _, c = replay(red_left[r], -1.0, td, tst, tfin, tbl, a, nt, last - 1, False, buf,
                              zero)
                if c > 0:
                    last = c
            if last > kj:
                kj = last
        if kj < dep:
            dep = kj
    return dep


@njit(cache=True, inline="always")
def run_rate(f, x0, x, d, full, fin, flow_size, drift, zero):
    """The bytes per quantum to record for flow ``f``'s ``full`` quanta at ``d`` (``x0`` to
    ``x`` bytes left; ``fin``: a last quantum follows), and its drift (bytes the schedule sent
    minus bytes Java's counter removed) updated: ``d``, or the run's exact mean when the drift
    would pass ``ZERO / 4`` or leave the last quantum no more than the validator's slack."""
    xf = x
    if fin:  # the counter before the last quantum
        xf, _, _, _ = advance(x0, d, full, zero)
    dq = d
    dr = drift[f] + (full * d - (x0 - xf))
    # the last quantum must also carry more than the validator's slack, or the flow would
    # count as done a quantum early
    r_min = 2.0 * (flow_size[f] * VOLUME_RTOL + zero)
    if abs(dr) > zero / 4 or (fin and xf - dr < r_min):
        left = max(xf, r_min) if fin else xf
        dn = (x0 - drift[f] - left) / full
        if dn > 0.0:
            dq = dn
            dr = drift[f] + (full * dq - (x0 - xf))
    drift[f] = dr
    return dq


@njit(cache=True, inline="always")
def reducer_counters(j, steps, q0, quantum_ms, lcf, jobs, red, tmp, zmp, zero):
    """Replay job ``j``'s reducer counters over the window (the flows' runs in ``tmp``, per
    reducer from ``t_ptr``) and complete the reducers whose last flow finished or whose
    bytes-left counter reached ZERO first.  Returns how many reducers completed."""
    red_ptr, red_open = jobs
    red_left, perrack, red_done, red_fin = red
    td, tst, tfin, tbl, buf, t_ptr = tmp
    z_td, z_tst, z_tfin, z_tbl = zmp
    completed = 0
    for r in range(red_ptr[j], red_ptr[j + 1]):
        a = t_ptr[r - red_ptr[j]]
        b = t_ptr[r - red_ptr[j] + 1]
        if lcf:
            perrack[r], _ = replay(perrack[r], -1.0, td, tst, tfin, tbl, a, b, steps, True, buf,
                                   zero)
        if red_done[r]:
            if b > a:
                red_left[r], _ = replay(red_left[r], -1.0, td, tst, tfin, tbl, a, b, steps,
                                        False, buf, zero)
            continue
        s_before = red_left[r]
        red_left[r], c = replay(s_before, -1.0, td, tst, tfin, tbl, a, b, steps, False, buf,
                                zero)
        last = -1
        open_flows = False
        for t in range(a, b):
            if tfin[t]:
                if tst[t] > last:
                    last = tst[t]
            else:
                open_flows = True
        if c > 0 and (open_flows or c < last):
            open_flows = False  # the counter reached ZERO first
            last = c
        if not open_flows:
            red_done[r] = True
            red_left[r] = left_after(s_before, td, tst, tfin, tbl, a, b, last, steps, buf, zero,
                                     z_td, z_tst, z_tfin, z_tbl)
            red_fin[r] = (q0 + last) * quantum_ms
            red_open[j] -= 1
            completed += 1
    return completed


@njit(cache=True, error_model="numpy")
def advance_window(lst, ns, at, jobs, flows, segs, store, win, counts, red, tmp, zmp):
    """Advance every flow of the listed jobs over the window (``at``: quanta, first quantum,
    bytes per quantum per bit/s, ``quantum_ms``, ``lean``, ZERO, ``dark``, ``lcf``): laid-out
    flows at their rates, the others stay; record their runs, stored or streamed, and replay
    the counters: bytes sent (D-CLAS), ``shuffleBytesPerRack`` (LCF), reducers' bytes left.
    ``counts``: ``nseg``, ``nw``, ``nl``.  Returns ``(departed, completed, nseg, nw, nl)``:
    jobs whose last reducer completed, reducers.

    The counter removes ``d`` rounded to its grid each quantum, so at ``d`` a long run drifts
    by up to half an ulp a quantum; a run whose drift would pass ``ZERO / 4`` is recorded at
    its exact mean instead, so that the flow's last quantum (over ZERO bytes) can always take
    up what is left.

    Compiled on its own (called once a window): its arrays, unpacked here outside any loop,
    reach the recording helpers inlined in the flow loop by plain copies that
    :mod:`coflowopt._jit` forwards; unpacked inside the kernel's window loop (or passed
    through a second inlined helper) each inlined call cost two reference counts per array,
    and the sorted list's run took 7.0 s instead of 2.7 s on FB2010."""
    steps, q0, qf, quantum_ms, lean, zero, dark, lcf = at
    red_ptr, flow_ptr, flow_size, red_open = jobs
    rem, done, bps, laid, drift = flows
    last_seg, last_end, last_d, last_start = segs
    buf_i, buf_d, chunks_i, chunks_d = store
    pend, fvol, wf, wk, wr, nlist = win
    nseg, nw, nl = counts
    red_left, perrack, red_done, red_fin, sent = red
    td, tst, tfin, tbl, buf, t_ptr = tmp
    departed = 0
    completed = 0
    for k in range(ns):
        j = lst[k]
        nt = 0
        for r in range(red_ptr[j], red_ptr[j + 1]):
            t_ptr[r - red_ptr[j]] = nt
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                d = (bps[f] / 8) * qf if laid[f] else 0.0
                x0 = rem[f]
                x, st, fin, bl = advance(x0, d, steps, zero)
                td[nt] = d
                tst[nt] = st
                tfin[nt] = fin
                tbl[nt] = bl
                nt += 1
                rem[f] = x
                if fin:
                    done[f] = True
                if not (d > 0.0 and st > 0):
                    continue
                full = st - 1 if fin else st
                if full > 0 and x0 != x:
                    dq = run_rate(f, x0, x, d, full, fin, flow_size, drift, zero)
                    if last_seg[f] >= 0 and last_end[f] == q0 and last_d[f] == dq:
                        if lean:  # the open segment runs on
                            pend[f, 1] = q0 + full
                            nlist[nl] = f
                            nl += 1
                        else:
                            set_segment_end(buf_i, chunks_i, nseg, last_seg[f], q0 + full)
                    else:  # a new rate: a new segment
                        last_seg[f] = nseg
                        last_d[f] = dq
                        last_start[f] = q0
                        if lean:
                            nw, nl = window_segment(f, q0, q0 + full, dq, False, quantum_ms,
                                                    pend, fvol, wf, wk, wr, nw, nlist, nl)
                        else:
                            nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, f, q0,
                                               q0 + full, dq)
                    last_end[f] = q0 + full
                if fin and lean:
                    nw, nl = window_segment(f, q0 + st - 1, q0 + st, bl, True, quantum_ms, pend,
                                            fvol, wf, wk, wr, nw, nlist, nl)
                elif fin:
                    nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, f, q0 + st - 1,
                                       q0 + st, bl)
        t_ptr[red_ptr[j + 1] - red_ptr[j]] = nt
        if dark:  # D-CLAS' bytes sent
            sent[j], _ = replay(sent[j], 1.0, td, tst, tfin, tbl, 0, nt, steps, False, buf, zero)
        c = reducer_counters(j, steps, q0, quantum_ms, lcf, (red_ptr, red_open),
                             (red_left, perrack, red_done, red_fin), tmp, zmp, zero)
        completed += c
        if c > 0 and red_open[j] == 0:
            departed += 1
    return departed, completed, nseg, nw, nl


@njit(cache=True, inline="always")
def settle_residue(f, ql, lean, rem, done, segs, store, nseg, win, nw, nl, quantum_ms):
    """A reducer that ended on its bytes-left counter may leave a flow with a residue of a few
    thousandths of a byte: account it to the coflow's last quantum ``ql`` (CoflowSim sends it
    just after).  Returns ``(nseg, nw, nl)``."""
    last_seg, last_end, last_d, last_start = segs
    buf_i, buf_d, chunks_i, chunks_d = store
    pend, fvol, wf, wk, wr, nlist = win
    bl = rem[f]
    if last_seg[f] >= 0 and last_end[f] == ql + 1:
        # it moved in that quantum too: the quantum leaves its segment and carries both
        bl += last_d[f]
        if lean:
            pend[f, 1] = max(ql, np.int64(pend[f, 0]))
        elif ql > last_start[f]:
            set_segment_end(buf_i, chunks_i, nseg, last_seg[f], ql)
        else:  # a segment of that quantum alone: it is the last
            bl = 0.0
        if lean and ql == np.int64(pend[f, 0]):
            bl = last_d[f]  # the same sums as the stored drift
    if lean:
        nw, nl = window_segment(f, ql, ql + 1, bl, True, quantum_ms, pend, fvol, wf, wk, wr, nw,
                                nlist, nl)
    else:
        nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, f, ql, ql + 1, bl)
    rem[f] = 0.0
    done[f] = True
    return nseg, nw, nl


@njit(cache=True, inline="always")
def depart(lst, ns, ql, lean, jobs, red_open, red_fin, finish, rem, done, segs, store, nseg,
           win, nw, nl, quantum_ms, resid):
    """The jobs whose reducers all completed leave the list, finished at their last reducer's
    completion, their residues settled in quantum ``ql``.  Returns ``(ns, nseg, nw, nl)`` and
    the most residue bytes one port takes in ``ql`` (bytes, side, port): bytes Java never
    sent, which the schedule adds to a quantum the port may already fill (``resid``: bytes per
    ingress and egress port, zero between calls, and room for the departed jobs)."""
    red_ptr, red_rack, flow_ptr, flow_src = jobs
    res_in, res_out, gone = resid
    k2 = 0
    ng = 0
    for k in range(ns):
        j = lst[k]
        if red_open[j] != 0:
            lst[k2] = j
            k2 += 1
            continue
        gone[ng] = j
        ng += 1
        fj = -1.0
        for r in range(red_ptr[j], red_ptr[j + 1]):
            if red_fin[r] > fj:
                fj = red_fin[r]
        finish[j] = fj
        for r in range(red_ptr[j], red_ptr[j + 1]):
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if not done[f]:
                    res_in[flow_src[f]] += rem[f]
                    res_out[red_rack[r]] += rem[f]
                    nseg, nw, nl = settle_residue(f, ql, lean, rem, done, segs, store, nseg,
                                                  win, nw, nl, quantum_ms)
    worst, side, port = 0.0, 0, 0
    for g in range(ng):
        j = gone[g]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            p = red_rack[r]
            if res_out[p] > worst:
                worst, side, port = res_out[p], 1, p
            res_out[p] = 0.0
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                u = flow_src[f]
                if res_in[u] > worst:
                    worst, side, port = res_in[u], 0, u
                res_in[u] = 0.0
    return k2, nseg, nw, nl, worst, side, port


@njit(cache=True, inline="always")
def close_window_stream(pend, plist, npl, quantum_ms, wf, wk, wr, nw, nlist, worder, cnt,
                        where, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo):
    """Segments still open (a run cut at its time limit) end here; returns ``nsc``."""
    for j in range(npl):
        f = plist[j]
        if pend[f, 1] >= 0:
            nw = window_close(f, pend, quantum_ms, wf, wk, wr, nw)
    q1 = 0
    for j in range(nw):
        q1 = max(q1, np.int64(wk[j]))
    q0 = q1
    for j in range(nw):
        q0 = min(q0, np.int64(wk[j]))
    _, nsc = flush_window(q0, q1, pend, plist, 0, nlist, 0, quantum_ms, wf, wk, wr, nw, worder,
                          cnt, where, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo)
    return nsc


# -- state ---------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def window_buffers(lean, nf, quantum_ms):
    """The streamed window's buffers: open segments (first, last, MB/ms, MB sent before), the
    window's changes (at most 4 per flow: an open segment's end, a full-rate start, the last
    quantum and its end) with their sort order and counts, the open segments' flows (last
    window, this one)."""
    nfl = nf if lean else 0
    pend = np.full((nfl, 4), -1.0)
    pend[:, 3] = 0.0
    wf = np.empty(4 * nfl + 4, dtype=np.int32)
    wk = np.empty(4 * nfl + 4, dtype=np.int32)
    wr = np.empty(4 * nfl + 4)
    worder = np.empty(4 * nfl + 4, dtype=np.int64)
    plist = np.empty(nfl + 1, dtype=np.int64)
    nlist = np.empty(nfl + 1, dtype=np.int64)
    nbq = END_MS // quantum_ms + 2 if lean else 1
    cnt = np.empty(nbq + 2, dtype=np.int64)  # zeroed per window: np.zeros touches 88 MB
    return pend, wf, wk, wr, worder, plist, nlist, cnt


@njit(cache=True, inline="always")
def job_temporaries(red_ptr, flow_ptr):
    """Per-job temporaries of one window, sized by the largest job: each flow's bytes per
    quantum, quanta, finished, last bytes, a replay buffer, per reducer its first flow; and
    the same for the zombie flows of :func:`left_after`."""
    wmax = 1
    rmax = 1
    for j in range(red_ptr.size - 1):
        wmax = max(wmax, flow_ptr[red_ptr[j + 1]] - flow_ptr[red_ptr[j]])
        rmax = max(rmax, red_ptr[j + 1] - red_ptr[j])
    tmp = (np.empty(wmax), np.empty(wmax, dtype=np.int64), np.empty(wmax, dtype=np.bool_),
           np.empty(wmax), np.empty(wmax), np.empty(rmax + 1, dtype=np.int64))
    zmp = (np.empty(wmax), np.empty(wmax, dtype=np.int64), np.empty(wmax, dtype=np.bool_),
           np.empty(wmax))
    return tmp, zmp


@njit(cache=True, inline="always")
def port_scratch(n_in, n_out):
    """Free capacity, use, bytes and flow counts per ingress and egress port (MADD)."""
    return (np.empty(n_in), np.empty(n_out), np.zeros(n_in), np.zeros(n_out), np.zeros(n_in),
            np.zeros(n_out), np.zeros(n_in, dtype=np.int64), np.zeros(n_out, dtype=np.int64))


# -- the kernel ----------------------------------------------------------------------------


@njit(cache=True, error_model="numpy", nogil=True)
def run_ordered(dark, lcf, key, width, arrival, red_ptr, red_rack, red_bytes, red_perrack,
                flow_ptr, flow_src, flow_size, dl, n_in, n_out, epoch_ms, quantum_ms, zero, nq,
                first, factor, static_keys, lean, where, fvol, vs, sbuf_i, sbuf_d, kctl):
    """Run a coflow-level scheduler (module docstring); ``dl``: the backfill's deadlines
    (pseudo-deadlines, or zeros for admission order).  Returns per job ``start``,
    ``finish`` (ms), the stored segments, CoflowSim's largest excesses over capacity
    (:func:`note_excess`), and the streamed run's breakpoint times,
    buffered count and first quantum."""
    n = arrival.size
    nf = flow_size.size
    cap = 1.0 * 1024 * 1048576  # bits per second
    qf = 1.0 * quantum_ms / 1024  # a simulated second is 1024 ms
    rem = flow_size.copy()
    done = np.zeros(nf, dtype=np.bool_)
    bps = np.zeros(nf)
    red_left = red_bytes.copy()
    perrack = red_perrack.copy()
    red_done = np.zeros(red_rack.size, dtype=np.bool_)
    red_fin = np.full(red_rack.size, -1.0)
    start = np.full(n, -1.0)
    finish = np.full(n, -1.0)
    red_open = np.zeros(n, dtype=np.int64)
    sent = np.zeros(n)
    queue = np.zeros(n, dtype=np.int64)
    cq = np.zeros(n, dtype=np.int64)
    stamp = np.zeros(n, dtype=np.int64)
    counter = 0
    lst = np.empty(n + 1, dtype=np.int64)
    ns = 0
    scratch = (np.empty(n + 1, dtype=np.int64), np.empty(n + 1, dtype=np.int64), np.zeros(n))
    # a flow is "laid" while it is in its reducer port's list (layoutFlowsInJobOrder): flows of
    # a reducer that completed on its counter stay in the reducer (they still get rates) but
    # stop moving at the next layout
    laid = np.zeros(nf, dtype=np.bool_)
    ports = port_scratch(n_in, n_out)
    # segments (flow, first quantum, last quantum exclusive, bytes per quantum), and each
    # flow's latest full-rate segment, where it ends, its bytes per quantum, where it starts
    store = new_store()
    nseg = 0
    segs = (np.full(nf, -1, dtype=np.int64), np.zeros(nf, dtype=np.int64), np.zeros(nf),
            np.zeros(nf, dtype=np.int64))
    # bytes the schedule sent minus bytes Java's counter removed, per flow (run_rate)
    drift = np.zeros(nf)
    pend, wf, wk, wr, worder, plist, nlist, cnt = window_buffers(lean, nf, quantum_ms)
    nw = 0
    npl = 0
    nl = 0
    tbp, tinfo = new_times(lean, END_MS // quantum_ms + 2)
    nsc = 0
    tmp, zmp = job_temporaries(red_ptr, flow_ptr)
    # what the steps read, grouped
    jobs = (red_ptr, red_rack, flow_ptr, flow_src)
    st = (rem, done, bps, laid, red_left, red_done, start, sent)
    dclas = (queue, cq, stamp, width, first, factor, nq)
    win = (pend, fvol, wf, wk, wr, nlist)
    # CoflowSim's largest excesses over capacity (note_excess), the capacity tolerance given
    over = np.zeros(9)
    per_q = cap / 8 * qf  # a port's bytes per quantum
    resid = (np.zeros(n_in), np.zeros(n_out), np.empty(n + 1, dtype=np.int64))
    if lean:
        over[4] = vs.tolerance[0]
    excess = (over, lean, vs.tolerance)
    cur, active_tasks, t_ms, n_windows, stopped = 0, 0, 0, 0, False
    while t_ms < END_MS and (cur < n or active_tasks > 0) and not stopped:
        cur, ns, active_tasks, counter, added = admit(
            t_ms, epoch_ms, cur, ns, active_tasks, counter, dark, lcf, key, lst,
            (arrival, red_ptr, flow_ptr), perrack, start, finish, red_open, (queue, cq, stamp))
        if added > 0:
            counter = reschedule(dark, True, static_keys, float(t_ms), lst, ns, counter, jobs, st,
                                 ports, scratch, dl, cap, zero, dclas, excess)
        t_next = next_epoch(t_ms, epoch_ms, cur, arrival)
        span_q = (t_next - t_ms) // quantum_ms
        i = 0
        while i < span_q and ns > 0:
            if progress_or_stop(kctl, (t_ms // quantum_ms + i) * quantum_ms, 0.0, cur - ns,
                                n_windows):
                stopped = True
                break
            n_windows += 1
            big = span_q - i
            dep = departure_quantum(lst, ns, big, qf, (red_ptr, flow_ptr), rem, done, bps,
                                    red_done, red_left, tmp, zero)
            steps = dep if dep <= big else big
            q0 = t_ms // quantum_ms + i
            departed, completed, nseg, nw, nl = advance_window(
                lst, ns, (steps, q0, qf, quantum_ms, lean, zero, dark, lcf),
                (red_ptr, flow_ptr, flow_size, red_open), (rem, done, bps, laid, drift), segs,
                store, win, (nseg, nw, nl), (red_left, perrack, red_done, red_fin, sent), tmp,
                zmp)
            active_tasks -= completed
            if departed > 0:
                ql = q0 + steps - 1
                ns, nseg, nw, nl, res, side, port = depart(
                    lst, ns, ql, lean, jobs, red_open, red_fin, finish, rem, done, segs, store,
                    nseg, win, nw, nl, quantum_ms, resid)
                note_excess(over, 5, res / per_q, side, port, float(ql * quantum_ms), lean,
                            vs.tolerance)
                # D-CLAS lays the flows out again at a departure, the sorted list does not
                counter = reschedule(dark, dark, static_keys, float(ql * quantum_ms), lst, ns,
                                     counter, jobs, st, ports, scratch, dl, cap, zero, dclas,
                                     excess)
            if lean:
                npl, nsc = flush_window(q0, q0 + steps, pend, plist, npl, nlist, nl, quantum_ms,
                                        wf, wk, wr, nw, worder, cnt, where, vs, sbuf_i, sbuf_d,
                                        nsc, tbp, tinfo)
                nw = 0
                nl = 0
            i += steps
        t_ms = t_next
    if lean and not stopped:
        nsc = close_window_stream(pend, plist, npl, quantum_ms, wf, wk, wr, nw, nlist, worder,
                                  cnt, where, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo)
    sf, sa, sb, sd = gathered(store, nseg)
    return start, finish, sf, sa, sb, sd, over, breakpoint_times(sbuf_i, nsc, tbp, tinfo,
                                                                     quantum_ms), nsc, tinfo[0]

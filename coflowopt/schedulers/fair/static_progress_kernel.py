"""The compiled engine of the static-progress baseline
(:mod:`coflowopt.schedulers.fair.static_progress`): the static-progress (SPS) policy of De
Pellegrini, Gupta, El Azouzi, Gueye, Richier, Leguay, "Fair Coflow Scheduling via Controlled
Slowdown", IEEE TPDS 2022 (its constant per-flow floors, constraints (1)-(2), reconstructed
[C]) with HUG's equal progress (Chowdhury, Liu, Ghodsi, Stoica, NSDI 2016); leftover [C]).

Same model and events as the reference engine (:func:`coflowopt.sim.engine.simulate`): a
coflow is admitted at its release once every Starts-After predecessor has completed; every
arrival and every flow completion is an event; rates are constant between events.  At each
event, on the remaining volumes ``v_i`` of the active coflows:

1. ``Gamma_j = max_l L_lj / B_l`` (``L_lj``: ``j``'s remaining volume on port ``l``),
   ``S_l = sum_j (L_lj / B_l) / Gamma_j`` and ``P = 1 / max_l S_l``; flow ``i`` of ``j`` is
   guaranteed ``g_i = P v_i / Gamma_j``.  The guarantee loads port ``l`` with
   ``sum_j P L_lj / Gamma_j = P B_l S_l``, so the residual ``B_l (1 - P S_l)`` needs no
   pass over the flows.
2. (``work_conserving``) the residuals are shared by per-flow max-min progressive filling.
   The flows of one (ingress, egress) pair are alike in it and get the same increment
   ``x_pq``, so the filling runs over the active pairs with their flow counts (water
   filling: the port with the smallest share ``R_l / K_l`` freezes its unfrozen pairs at
   that level; :func:`coflowopt.sim.allocate.water_fill`, the filling of
   :mod:`coflowopt.sim.fastfair`).  Rate ``g_i + x_pq``.

The next event is the first completion at these rates or the next admission.  Completion and
rate-recording rules are the reference engine's: a flow is done when its remaining volume is
at most ``1e-10`` of its volume (``engine._advance``), and a new rate within ``1e-12`` of the
old one keeps the old (``engine._record``), so the two engines give the same schedule up to
rounding.  Cost per event: three passes over the active flows plus the filling over the
active pairs.

Every rate change goes either to the streaming validator (``lean``; nothing is stored) or to
the segment store of :mod:`coflowopt.sim.segstore`.  ``(t, P)`` of every event is returned.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from coflowopt._jit import njit
from coflowopt.sim.allocate import water_fill
from coflowopt.sim.events import (
    admission_heap,
    grow,
    heap_pop,
    next_breakpoint,
    progress_or_stop,
    release_successors,
)
from coflowopt.sim.segstore import CHUNK, new_store, put_segment
from coflowopt.validate import stream_consume, stream_push

__all__ = ["DONE_FRACTION", "SAME_RATE", "StaticProgressResult", "run_static_progress_kernel"]

#: a flow is done when its remaining volume is at most this fraction of its volume
DONE_FRACTION = 1e-10
#: a new rate within this fraction of the old one keeps the old (rounding only)
SAME_RATE = 1e-12


@njit(cache=True, inline="always")
def _change(f, new, kk, cur, opened, lean, buf_i, buf_d, chunks_i, chunks_d, ns, vs, bps):
    """Flow ``f`` runs at ``new`` from breakpoint ``kk``: to the validator or the store."""
    if lean:
        ns = stream_push(buf_i, buf_d, ns, f, kk, new)
        if ns == CHUNK:
            ns = stream_consume(vs, buf_i, buf_d, ns, bps)
    else:
        ns = put_segment(buf_i, buf_d, chunks_i, chunks_d, ns, f, opened[f], kk, cur[f])
    opened[f] = kk
    cur[f] = new
    return ns


#: what :func:`run_static_progress_kernel` returns (in this order): the breakpoints; the
#: segment store ``(buf_i, buf_d, chunks_i, chunks_d, n)`` (or the stream buffer and its count
#: in ``store[4]``); the number of events; ``(t, P)`` of every event; ``status`` 0 done,
#: 1 stopped, -1 stalled
StaticProgressResult = namedtuple("StaticProgressResult", [
    "breakpoints", "store", "events", "progress_t", "progress_p", "status"])


@njit(cache=True, inline="always")
def _result(bps, kk, buf_i, buf_d, chunks_i, chunks_d, ns, n_events, prog_t, prog_p, n_prog,
            status):
    return StaticProgressResult(bps[: kk + 1], (buf_i, buf_d, chunks_i, chunks_d, ns),
                                n_events, prog_t[:n_prog], prog_p[:n_prog], status)


@njit(cache=True, inline="always")
def _settle(c, t, nlive, active, n_keep, n_done, succ_ptr, succ, n_pred, release, ak, av, na):
    """Coflow ``c`` with ``nlive[c]`` unfinished flows either completes at ``t`` (its
    successors become admissible) or stays active at ``active[n_keep]``.  Returns
    ``(n_keep, n_done, na)``."""
    if nlive[c] == 0:
        n_done += 1
        na = release_successors(c, t, succ_ptr, succ, n_pred, release, ak, av, na)
    else:
        active[n_keep] = c
        n_keep += 1
    return n_keep, n_done, na


# the per-event steps below are plain compiled functions (one call per event): inlined, the
# helpers they inline (_change, _settle, the heaps) kept their array copies and the kernel
# spent its time in NRT_incref, over 440 s of CPU on FB2010 and unfinished against 167 s for
# the whole run with plain steps (single runs, shared 2-core machine)


@njit(cache=True)
def _admit(t, ptr, order, volume, fpair, rem, live, nlive, cnt, pact, ppos, n_pact, active,
           n_act, n_done, succ_ptr, succ, n_pred, release, ak, av, na):
    """Admissions at ``t``: each coflow's flows with data become live (their pairs active); a
    coflow with nothing to send completes on admission.  Returns
    ``(n_pact, n_act, n_done, na)``."""
    while na > 0 and ak[0] <= t:
        c = av[0]
        na = heap_pop(ak, av, na)
        k = ptr[c]
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if volume[f] > 0.0:
                live[k] = f
                k += 1
                rem[f] = volume[f]
                p = fpair[f]
                if cnt[p] == 0:
                    ppos[p] = n_pact
                    pact[n_pact] = p
                    n_pact += 1
                cnt[p] += 1
        nlive[c] = k - ptr[c]
        n_act, n_done, na = _settle(c, t, nlive, active, n_act, n_done, succ_ptr, succ, n_pred,
                                    release, ak, av, na)
    return n_pact, n_act, n_done, na


@njit(cache=True)
def _progress(m, ptr, src, dst, cap, rem, live, nlive, gam, active, n_act, L, touched, S,
              sused):
    """Step 1: ``Gamma_j`` of every active coflow and ``S_l = sum_j d_lj`` on the remaining
    volumes (ports touched listed in ``sused``).  Returns ``(P, n_s)``."""
    n_s = 0
    for a in range(n_act):
        c = active[a]
        nt = 0
        for i in range(ptr[c], ptr[c] + nlive[c]):
            f = live[i]
            u = src[f]
            w = m + dst[f]
            if L[u] == 0.0:
                touched[nt] = u
                nt += 1
            L[u] += rem[f]
            if L[w] == 0.0:
                touched[nt] = w
                nt += 1
            L[w] += rem[f]
        gmax = 0.0
        for j in range(nt):
            u = touched[j]
            gmax = max(gmax, L[u] / cap[u])
        gam[c] = gmax
        for j in range(nt):
            u = touched[j]
            if S[u] == 0.0:
                sused[n_s] = u
                n_s += 1
            S[u] += (L[u] / cap[u]) / gmax
            L[u] = 0.0
    top = 0.0
    for j in range(n_s):
        top = max(top, S[sused[j]])
    return 1.0 / top, n_s


@njit(cache=True)
def _leftover(P, cap, S, sused, n_s, pact, n_pact, cnt, pair_u, pair_w, filling, x):
    """Step 2: per-flow max-min filling of the residuals over the active pairs by
    :func:`~coflowopt.sim.allocate.water_fill` (``filling``: its arrays, and the residual and
    count of each port); the pair's increment in ``x``."""
    res, kcnt, R, K, plev, pord, live, deg, adjw, adjc, pkey, pheap, pwhere = filling
    for j in range(n_s):
        u = sused[j]
        res[u] = max(cap[u] - P * cap[u] * S[u], 0.0)
        kcnt[u] = 0.0
        deg[u] = 0
    # the active pairs on each port's row (their ports are all in sused: a pair with a count
    # has unfinished flows, which load both its ports)
    for j in range(n_pact):
        p = pact[j]
        u, w = pair_u[p], pair_w[p]
        adjw[u, deg[u]] = w
        adjc[u, deg[u]] = cnt[p]
        deg[u] += 1
        adjw[w, deg[w]] = u
        adjc[w, deg[w]] = cnt[p]
        deg[w] += 1
        kcnt[u] += cnt[p]
        kcnt[w] += cnt[p]
    water_fill(n_s, sused, res, kcnt, R, K, plev, pord, live, deg, adjw, adjc, pkey, pheap,
               pwhere)
    for j in range(n_pact):
        p = pact[j]
        u, w = pair_u[p], pair_w[p]
        x[p] = plev[u] if pord[u] < pord[w] else plev[w]


@njit(cache=True)
def _rates(P, work_conserving, ptr, fpair, rem, live, nlive, gam, active, n_act, x, kk, cur,
           opened, lean, buf_i, buf_d, chunks_i, chunks_d, ns, vs, bps):
    """Step 3: the rates ``g_i (+ x_pq)``, their changes (to the validator or the store), and
    the time to the first completion at them.  Returns ``(ns, dt)``."""
    dt = np.inf
    for a in range(n_act):
        c = active[a]
        gc = gam[c]
        for i in range(ptr[c], ptr[c] + nlive[c]):
            f = live[i]
            nr = P * rem[f] / gc
            if work_conserving:
                nr += x[fpair[f]]
            old = cur[f]
            if nr != old and not (old > 0.0 and abs(nr - old) <= SAME_RATE * old):
                ns = _change(f, nr, kk, cur, opened, lean, buf_i, buf_d, chunks_i, chunks_d, ns,
                             vs, bps)
            r = cur[f]
            if r > 0.0:
                dt = min(dt, rem[f] / r)
    return ns, dt


@njit(cache=True)
def _serve(t, dt, ptr, volume, fpair, rem, live, nlive, cnt, pact, ppos, n_pact, active, n_act,
           n_done, kk, cur, opened, lean, store, vs, bps, succ_ptr, succ, n_pred, release, ak,
           av, na):
    """Step 4: serve ``dt``; finished flows stop at breakpoint ``kk``; finished coflows
    release their successors (in admission order, as the reference engine).  ``store`` is
    ``(buf_i, buf_d, chunks_i, chunks_d, ns)``.  Returns ``(ns, n_pact, n_act, n_done, na)``."""
    buf_i, buf_d, chunks_i, chunks_d, ns = store
    keep = 0
    for a in range(n_act):
        c = active[a]
        k = ptr[c]
        for i in range(ptr[c], ptr[c] + nlive[c]):
            f = live[i]
            r = rem[f] - cur[f] * dt
            if r <= DONE_FRACTION * volume[f]:
                rem[f] = 0.0
                ns = _change(f, 0.0, kk, cur, opened, lean, buf_i, buf_d, chunks_i, chunks_d,
                             ns, vs, bps)
                p = fpair[f]
                cnt[p] -= 1
                if cnt[p] == 0:
                    q = pact[n_pact - 1]
                    pact[ppos[p]] = q
                    ppos[q] = ppos[p]
                    ppos[p] = -1
                    n_pact -= 1
            else:
                rem[f] = r
                live[k] = f
                k += 1
        nlive[c] = k - ptr[c]
        keep, n_done, na = _settle(c, t, nlive, active, keep, n_done, succ_ptr, succ, n_pred,
                                   release, ak, av, na)
    return ns, n_pact, keep, n_done, na


@njit(cache=True, nogil=True)
def run_static_progress_kernel(ptr, order, src, dst, volume, release, n_pred, succ_ptr, succ,
                               cap_in, cap_out, fpair, pair_u, pair_w, work_conserving, t0,
                               lean, vs, kctl):
    """The event loop (module docstring).  ``fpair``: flow -> dense pair id; ``pair_u``,
    ``pair_w``: the pair's ingress port and ``m`` + egress port.  Returns a
    :class:`StaticProgressResult`."""
    C = ptr.size - 1
    F = src.size
    m = cap_in.size
    M2 = 2 * m
    NP = pair_u.size
    cap = np.concatenate((cap_in, cap_out))
    rem = np.zeros(F)
    cur = np.zeros(F)
    opened = np.zeros(F, dtype=np.int64)
    # a coflow's unfinished flows: live[ptr[c] : ptr[c] + nlive[c]], in instance order
    live = np.empty(max(F, 1), dtype=np.int64)
    nlive = np.zeros(C, dtype=np.int64)
    gam = np.zeros(C)
    active = np.empty(max(C, 1), dtype=np.int64)  # in admission order
    n_act = 0
    # ports: a coflow's loads (touched list), and the sum S_l of normalised demands
    L = np.zeros(M2)
    touched = np.empty(M2, dtype=np.int64)
    S = np.zeros(M2)
    sused = np.empty(M2, dtype=np.int64)
    # pairs: unfinished flows of active coflows, the active list, the leftover increment
    cnt = np.zeros(NP, dtype=np.int64)
    pact = np.empty(max(NP, 1), dtype=np.int64)
    ppos = np.full(NP, -1, dtype=np.int64)
    n_pact = 0
    x = np.zeros(NP)
    # water filling: each port's residual and flow count, scratch, its level and freeze
    # number, the rows of active pairs (other port, flow count: float32 is exact below 2**24
    # flows), rebuilt at each event, and the heap of ports
    filling = (np.zeros(M2), np.zeros(M2), np.zeros(M2), np.zeros(M2), np.zeros(M2),
               np.zeros(M2, dtype=np.int64), np.zeros(M2), np.zeros(M2, dtype=np.int64),
               np.empty((M2, m), dtype=np.int32), np.empty((M2, m), dtype=np.float32),
               np.empty(M2), np.empty(M2, dtype=np.int64), np.full(M2, -1, dtype=np.int64))
    ak, av, na = admission_heap(n_pred, release)
    bps = np.empty(1024)
    bps[0] = t0
    kk = 0
    prog_t = np.empty(1024)
    prog_p = np.empty(1024)
    n_prog = 0
    buf_i, buf_d, chunks_i, chunks_d = new_store()
    ns = 0
    t = t0
    n_done = 0
    n_events = 0
    while n_done < C:
        if progress_or_stop(kctl, t, t0, n_done, n_events):
            return _result(bps, kk, buf_i, buf_d, chunks_i, chunks_d, ns, n_events, prog_t,
                           prog_p, n_prog, 1)
        n_pact, n_act, n_done, na = _admit(t, ptr, order, volume, fpair, rem, live, nlive, cnt,
                                           pact, ppos, n_pact, active, n_act, n_done, succ_ptr,
                                           succ, n_pred, release, ak, av, na)
        if n_done == C:
            break
        if n_act == 0:
            if na == 0:
                return _result(bps, kk, buf_i, buf_d, chunks_i, chunks_d, ns, n_events, prog_t,
                               prog_p, n_prog, -1)
            bps, kk, t, _ = next_breakpoint(bps, kk, t, ak[0])
            continue
        n_events += 1
        P, n_s = _progress(m, ptr, src, dst, cap, rem, live, nlive, gam, active, n_act, L,
                           touched, S, sused)
        prog_t = grow(prog_t, n_prog)
        prog_p = grow(prog_p, n_prog)
        prog_t[n_prog] = t
        prog_p[n_prog] = P
        n_prog += 1
        if work_conserving:
            _leftover(P, cap, S, sused, n_s, pact, n_pact, cnt, pair_u, pair_w, filling, x)
        for j in range(n_s):
            S[sused[j]] = 0.0
        ns, dt = _rates(P, work_conserving, ptr, fpair, rem, live, nlive, gam, active, n_act, x,
                        kk, cur, opened, lean, buf_i, buf_d, chunks_i, chunks_d, ns, vs, bps)
        if na > 0:
            dt = min(dt, ak[0] - t)
        if not dt < np.inf:
            return _result(bps, kk, buf_i, buf_d, chunks_i, chunks_d, ns, n_events, prog_t,
                           prog_p, n_prog, -1)
        tn = t + dt
        if tn > t:
            bps, kk, t, _ = next_breakpoint(bps, kk, t, tn)
        elif not dt > 0.0:
            return _result(bps, kk, buf_i, buf_d, chunks_i, chunks_d, ns, n_events, prog_t,
                           prog_p, n_prog, -1)
        # (a completion closer than one ulp of t is served at t: below the volume atol)
        ns, n_pact, n_act, n_done, na = _serve(
            t, dt, ptr, volume, fpair, rem, live, nlive, cnt, pact, ppos, n_pact, active, n_act,
            n_done, kk, cur, opened, lean, (buf_i, buf_d, chunks_i, chunks_d, ns), vs, bps,
            succ_ptr, succ, n_pred, release, ak, av, na)
    return _result(bps, kk, buf_i, buf_d, chunks_i, chunks_d, ns, n_events, prog_t, prog_p,
                   n_prog, 0)

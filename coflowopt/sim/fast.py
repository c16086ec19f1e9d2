"""The incremental engine for order-based policies (compiled; the fast path of the simulator).

Same model as :mod:`coflowopt.sim.engine`, but the whole event loop runs in numba and a flow
completion costs time proportional to what it changes, not to the number of active flows.

Allocation: the active coflows are put in the policy's order; their unfinished flows, in that
order (coflow by coflow, flows in instance order inside a coflow), form one priority list.
Varys first reserves MADD rates (``remaining / Gamma_j(Rem)``) coflow by coflow.  Then every
flow, in list order, takes ``min(free ingress, free egress)`` of what is left: the
order-preserving, work-conserving greedy allocation (``split="ordered"`` of
:func:`coflowopt.sim.allocate.greedy`).

Events:

- a coflow arrival (and, for the re-ordering policies, a departure or a D-CLAS queue change)
  recomputes the order, the MADD reservations and the greedy allocation from scratch;
- a flow completion frees its rate; the greedy allocation is then repaired by a *cascade*: the
  flows after it on its two ports are revisited in priority order, and a port is followed only
  while the capacity seen by the next flow on it differs from before.  The result equals a
  full greedy recomputation (the tests check this against the reference engine).

Varys reschedules (SEBF order and MADD reservations) at coflow arrivals and departures, as the
Varys system does; at a flow completion its reservation is released and the freed bandwidth
goes to the work-conserving backfill.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.sim.orders import _bssi

__all__ = ["KIND_DCLAS", "KIND_SINCRONIA", "KIND_STATIC", "KIND_VARYS", "fast_simulate"]

KIND_STATIC = 0  # fixed key per coflow (FIFO = admission time, SCF, NCF, LCF, offline BSSI)
KIND_SINCRONIA = 1  # BSSI on remaining volumes at arrivals and departures
KIND_VARYS = 2  # SEBF on remaining volumes + MADD reservations + backfill
KIND_DCLAS = 3  # D-CLAS queues on attained service (Aalo, A-SEBF)

TINY = 1e-12


# -- small array heaps (min-heaps on a float key, with an int payload and a version) ----------


@njit(cache=True, inline="always")
def _hpush(hk, hv, hw, n, key, val, ver):
    if n == hk.size:
        hk2 = np.empty(2 * n)
        hv2 = np.empty(2 * n, dtype=np.int64)
        hw2 = np.empty(2 * n, dtype=np.int64)
        hk2[:n] = hk
        hv2[:n] = hv
        hw2[:n] = hw
        hk, hv, hw = hk2, hv2, hw2
    i = n
    hk[i], hv[i], hw[i] = key, val, ver
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] > hk[i] or (hk[p] == hk[i] and hv[p] > hv[i]):
            hk[p], hk[i] = hk[i], hk[p]
            hv[p], hv[i] = hv[i], hv[p]
            hw[p], hw[i] = hw[i], hw[p]
            i = p
        else:
            break
    return hk, hv, hw, n + 1


@njit(cache=True, inline="always")
def _hpop(hk, hv, hw, n):
    n -= 1
    hk[0], hv[0], hw[0] = hk[n], hv[n], hw[n]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        b = a + 1
        c = a
        if b < n and (hk[b] < hk[a] or (hk[b] == hk[a] and hv[b] < hv[a])):
            c = b
        if hk[c] < hk[i] or (hk[c] == hk[i] and hv[c] < hv[i]):
            hk[c], hk[i] = hk[i], hk[c]
            hv[c], hv[i] = hv[i], hv[c]
            hw[c], hw[i] = hw[i], hw[c]
            i = c
        else:
            break
    return n


@njit(cache=True, inline="always")
def _grow(a, n):
    """``a``, or a copy of twice its size when index ``n`` does not fit (any dtype)."""
    if n < a.size:
        return a
    b = np.empty(max(2 * a.size, 16), dtype=a.dtype)
    b[: a.size] = a
    return b


@njit(cache=True)
def _compact(plist, pstart, idx, finished, m):
    """Drop finished flows from the port lists, keeping the order."""
    w = 0
    a = pstart[0]
    for p in range(m):
        b = pstart[p + 1]
        pstart[p] = w
        for i in range(a, b):
            f = plist[i]
            if not finished[f]:
                plist[w] = f
                idx[f] = w
                w += 1
        a = b
    pstart[m] = w


# -- the engine --------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _set_rate(f, nx, t, kk, fc, x, rem, tl, ver, opened, sf, sr, sa, sb, ns, qk, qv, qw, nq,
              csent, ctl, crate, retime, n_re, flagged):
    """Change flow ``f``'s rate to ``nx`` at time ``t`` (breakpoint ``kk``): close its segment,
    bring its remaining volume and its coflow's attained service up to ``t``, and schedule its
    completion."""
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
        retime = _grow(retime, n_re)
        retime[n_re] = c
        n_re += 1
    if old > 0.0 and opened[f] < kk:
        sf = _grow(sf, ns)
        sr = _grow(sr, ns)
        sa = _grow(sa, ns)
        sb = _grow(sb, ns)
        sf[ns] = f
        sr[ns] = old
        sa[ns] = opened[f]
        sb[ns] = kk
        ns += 1
    opened[f] = kk
    x[f] = nx
    ver[f] += 1
    if nx > 0.0:
        qk, qv, qw, nq = _hpush(qk, qv, qw, nq, t + rem[f] / nx, f, ver[f])
    return sf, sr, sa, sb, ns, qk, qv, qw, nq, retime, n_re


@njit(cache=True, inline="always")
def _walk(p, idx, pend, live, cur, plist, pos, hk, hv, hw, nh):
    """Move port ``p``'s walker past list index ``idx`` (a flow just processed)."""
    if cur[p] == idx or cur[p] == -1:
        if live and idx + 1 < pend:
            cur[p] = idx + 1
            g = plist[idx + 1]
            hk, hv, hw, nh = _hpush(hk, hv, hw, nh, float(pos[g]), g, 0)
        else:
            cur[p] = -1
    return hk, hv, hw, nh


@njit(cache=True, inline="always")
def _start_walk(p, pstart, cur, plist, pos, hk, hv, hw, nh):
    """Revisit port ``p``'s list from its first flow (its capacity changed)."""
    a = pstart[p]
    if a < pstart[p + 1] and cur[p] != a:
        cur[p] = a
        g = plist[a]
        hk, hv, hw, nh = _hpush(hk, hv, hw, nh, float(pos[g]), g, 0)
    return hk, hv, hw, nh


@njit(cache=True)
def _run(ptr, order, fc, src, dst, volume, release, weight, n_pred, succ_ptr, succ, cap_in,
         cap_out, kind, key, thresholds, norm, t0, refill):
    C = ptr.size - 1
    F = src.size
    m = cap_in.size
    n_thr = thresholds.size
    # flow state; remaining is lazy: rem at time tl, served at rate x since
    rem = volume.copy()
    tl = np.full(F, t0)
    x = np.zeros(F)
    r = np.zeros(F)  # Varys: MADD reservation
    e = np.zeros(F)  # greedy share
    ver = np.zeros(F, dtype=np.int64)
    finished = np.zeros(F, dtype=np.bool_)
    opened = np.zeros(F, dtype=np.int64)
    resb_in = np.zeros(F)  # residual of the flow's ingress port left by the flows before it
    resb_out = np.zeros(F)
    idx_in = np.zeros(F, dtype=np.int64)
    idx_out = np.zeros(F, dtype=np.int64)
    pos = np.zeros(F, dtype=np.int64)
    stamp = np.zeros(F, dtype=np.int64)
    # coflow state
    left = np.zeros(C, dtype=np.int64)
    for c in range(C):
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if volume[f] > 0.0:
                left[c] += 1
            else:
                finished[f] = True
                rem[f] = 0.0
    admitted = np.full(C, np.inf)
    active = np.zeros(C, dtype=np.bool_)
    csent = np.zeros(C)
    ctl = np.full(C, t0)
    crate = np.zeros(C)
    cver = np.zeros(C, dtype=np.int64)
    flagged = np.zeros(C, dtype=np.bool_)
    retime = np.empty(16, dtype=np.int64)
    n_re = 0
    queue = np.zeros(C, dtype=np.int64)
    entry = np.zeros(C, dtype=np.int64)
    counter = 0
    capg_in = cap_in.copy()
    capg_out = cap_out.copy()
    plist_in = np.empty(F, dtype=np.int64)
    pstart_in = np.zeros(m + 1, dtype=np.int64)
    plist_out = np.empty(F, dtype=np.int64)
    pstart_out = np.zeros(m + 1, dtype=np.int64)
    glist = np.empty(F, dtype=np.int64)
    n_list = 0
    dcap_in = np.zeros(m)  # cascade: capacity change minus usage change, per port
    dcap_out = np.zeros(m)
    cur_in = np.full(m, -1, dtype=np.int64)
    cur_out = np.full(m, -1, dtype=np.int64)
    hk = np.empty(1024)
    hv = np.empty(1024, dtype=np.int64)
    hw = np.empty(1024, dtype=np.int64)
    # heaps: admissions, flow completions, D-CLAS crossings
    ak = np.empty(max(C, 1))
    av = np.empty(max(C, 1), dtype=np.int64)
    aw = np.empty(max(C, 1), dtype=np.int64)
    na = 0
    for c in range(C):
        if n_pred[c] == 0:
            ak, av, aw, na = _hpush(ak, av, aw, na, release[c], c, 0)
    qk = np.empty(1024)
    qv = np.empty(1024, dtype=np.int64)
    qw = np.empty(1024, dtype=np.int64)
    nq = 0
    tk = np.empty(64)
    tv = np.empty(64, dtype=np.int64)
    tw = np.empty(64, dtype=np.int64)
    nt = 0
    # output
    bps = np.empty(1024)
    bps[0] = t0
    kk = 0
    sf = np.empty(1024, dtype=np.int64)
    sr = np.empty(1024)
    sa = np.empty(1024, dtype=np.int64)
    sb = np.empty(1024, dtype=np.int64)
    ns = 0
    load_in = np.zeros(m)
    load_out = np.zeros(m)
    use_in = np.zeros(m)
    use_out = np.zeros(m)
    fin = np.empty(16, dtype=np.int64)
    n_fin = 0
    t = t0
    n_done = 0
    n_events = 0
    n_full = 0
    n_visits = 0
    n_dead = 0
    full = False
    while n_done < C:
        # 1. admissions at t
        while na > 0 and ak[0] <= t:
            c = av[0]
            na = _hpop(ak, av, aw, na)
            admitted[c] = t
            ctl[c] = t
            if left[c] == 0:
                n_done += 1
                for j in range(succ_ptr[c], succ_ptr[c + 1]):
                    s_ = succ[j]
                    n_pred[s_] -= 1
                    if n_pred[s_] == 0:
                        ak, av, aw, na = _hpush(ak, av, aw, na, max(release[s_], t), s_, 0)
            else:
                active[c] = True
                queue[c] = 0
                entry[c] = counter
                counter += 1
                full = True
        if n_done == C:
            break
        # 2. rates
        if full:
            n_full += 1
            # bring every active flow up to t (the orders read remaining volumes)
            for c in range(C):
                if active[c]:
                    for i in range(ptr[c], ptr[c + 1]):
                        f = order[i]
                        if not finished[f]:
                            v = rem[f] - x[f] * (t - tl[f])
                            rem[f] = v if v > 0.0 else 0.0
                            tl[f] = t
            nc = 0
            for c in range(C):
                if active[c]:
                    nc += 1
            act = np.empty(nc, dtype=np.int64)
            j = 0
            for c in range(C):
                if active[c]:
                    act[j] = c
                    j += 1
            if kind == KIND_STATIC or kind == KIND_VARYS:
                kv = np.empty(nc)
                if kind == KIND_STATIC:
                    for j in range(nc):
                        kv[j] = key[act[j]]
                else:  # SEBF: Gamma of the remaining volumes with all capacity free
                    for j in range(nc):
                        c = act[j]
                        for i in range(ptr[c], ptr[c + 1]):
                            f = order[i]
                            if not finished[f]:
                                load_in[src[f]] += rem[f]
                                load_out[dst[f]] += rem[f]
                        gm = 0.0
                        for i in range(ptr[c], ptr[c + 1]):
                            f = order[i]
                            if load_in[src[f]] > 0.0:
                                gm = max(gm, load_in[src[f]] / cap_in[src[f]])
                                load_in[src[f]] = 0.0
                            if load_out[dst[f]] > 0.0:
                                gm = max(gm, load_out[dst[f]] / cap_out[dst[f]])
                                load_out[dst[f]] = 0.0
                        kv[j] = gm
                o1 = np.argsort(admitted[act], kind="mergesort")
                act = act[o1]
                kv = kv[o1]
                act = act[np.argsort(kv, kind="mergesort")]
            elif kind == KIND_DCLAS:
                act = act[np.argsort(entry[act], kind="mergesort")]
                act = act[np.argsort(queue[act], kind="mergesort")]
            else:  # KIND_SINCRONIA: BSSI on the remaining volumes, coflows in admission order
                act = act[np.argsort(admitted[act], kind="mergesort")]
                pl = np.zeros((nc, 2 * m))
                for j in range(nc):
                    c = act[j]
                    for i in range(ptr[c], ptr[c + 1]):
                        f = order[i]
                        if not finished[f]:
                            pl[j, src[f]] += rem[f] / cap_in[src[f]]
                            pl[j, m + dst[f]] += rem[f] / cap_out[dst[f]]
                act = act[_bssi(pl, weight[act])]
            # the priority list, with each coflow's range, and the port lists
            cl = np.zeros(nc + 1, dtype=np.int64)
            n_list = 0
            for j in range(nc):
                c = act[j]
                for i in range(ptr[c], ptr[c + 1]):
                    f = order[i]
                    if not finished[f]:
                        glist[n_list] = f
                        pos[f] = n_list
                        n_list += 1
                cl[j + 1] = n_list
            pstart_in[:] = 0
            pstart_out[:] = 0
            for q in range(n_list):
                f = glist[q]
                pstart_in[src[f] + 1] += 1
                pstart_out[dst[f] + 1] += 1
            for p_ in range(m):
                pstart_in[p_ + 1] += pstart_in[p_]
                pstart_out[p_ + 1] += pstart_out[p_]
            for p_ in range(m):
                cur_in[p_] = pstart_in[p_]  # fill cursors, reset below
                cur_out[p_] = pstart_out[p_]
            for q in range(n_list):
                f = glist[q]
                a = cur_in[src[f]]
                plist_in[a] = f
                idx_in[f] = a
                cur_in[src[f]] = a + 1
                b = cur_out[dst[f]]
                plist_out[b] = f
                idx_out[f] = b
                cur_out[dst[f]] = b + 1
            cur_in[:] = -1
            cur_out[:] = -1
            n_dead = 0
            # Varys: MADD reservations, coflow by coflow on the residual capacity
            capg_in[:] = cap_in
            capg_out[:] = cap_out
            for q in range(n_list):
                r[glist[q]] = 0.0
            if kind == KIND_VARYS:
                for j in range(nc):
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
            # the greedy pass over the list
            use_in[:] = 0.0
            use_out[:] = 0.0
            for q in range(n_list):
                f = glist[q]
                s_, d_ = src[f], dst[f]
                resb_in[f] = capg_in[s_] - use_in[s_]
                resb_out[f] = capg_out[d_] - use_out[d_]
                v = min(resb_in[f], resb_out[f])
                if v <= TINY * min(cap_in[s_], cap_out[d_]):
                    v = 0.0
                e[f] = v
                use_in[s_] += v
                use_out[d_] += v
            for q in range(n_list):
                f = glist[q]
                nx = r[f] + e[f]
                if nx != x[f]:
                    sf, sr, sa, sb, ns, qk, qv, qw, nq, retime, n_re = _set_rate(
                        f, nx, t, kk, fc, x, rem, tl, ver, opened, sf, sr, sa, sb, ns, qk, qv,
                        qw, nq, csent, ctl, crate, retime, n_re, flagged)
            full = False
        elif n_fin > 0 and refill:
            # 3. cascade: repair the greedy allocation after flow completions
            stamp_id = n_events + 1
            nh = 0
            for j in range(n_fin):
                f = fin[j]
                if r[f] > 0.0:
                    s_, d_ = src[f], dst[f]
                    capg_in[s_] += r[f]
                    dcap_in[s_] += r[f]
                    capg_out[d_] += r[f]
                    dcap_out[d_] += r[f]
                    r[f] = 0.0
                    hk, hv, hw, nh = _start_walk(s_, pstart_in, cur_in, plist_in, pos, hk, hv,
                                                 hw, nh)
                    hk, hv, hw, nh = _start_walk(d_, pstart_out, cur_out, plist_out, pos, hk,
                                                 hv, hw, nh)
                hk, hv, hw, nh = _hpush(hk, hv, hw, nh, float(pos[f]), f, 0)
            while nh > 0:
                g = hv[0]
                nh = _hpop(hk, hv, hw, nh)
                if stamp[g] == stamp_id:
                    continue
                stamp[g] = stamp_id
                n_visits += 1

                s_, d_ = src[g], dst[g]
                resb_in[g] += dcap_in[s_]
                resb_out[g] += dcap_out[d_]
                if finished[g]:
                    ne = 0.0
                else:
                    ne = min(resb_in[g], resb_out[g])
                    if ne <= TINY * min(cap_in[s_], cap_out[d_]):
                        ne = 0.0
                dx = ne - e[g]
                if abs(dx) > TINY * min(cap_in[s_], cap_out[d_]) or (ne == 0.0 and e[g] != 0.0):
                    e[g] = ne
                    dcap_in[s_] -= dx
                    dcap_out[d_] -= dx
                    if not finished[g]:
                        sf, sr, sa, sb, ns, qk, qv, qw, nq, retime, n_re = _set_rate(
                            g, r[g] + ne, t, kk, fc, x, rem, tl, ver, opened, sf, sr, sa, sb,
                            ns, qk, qv, qw, nq, csent, ctl, crate, retime, n_re, flagged)
                live_in = abs(dcap_in[s_]) > TINY * cap_in[s_]
                live_out = abs(dcap_out[d_]) > TINY * cap_out[d_]
                hk, hv, hw, nh = _walk(s_, idx_in[g], pstart_in[s_ + 1], live_in, cur_in,
                                       plist_in, pos, hk, hv, hw, nh)
                hk, hv, hw, nh = _walk(d_, idx_out[g], pstart_out[d_ + 1], live_out, cur_out,
                                       plist_out, pos, hk, hv, hw, nh)
                if not live_in:
                    dcap_in[s_] = 0.0
                if not live_out:
                    dcap_out[d_] = 0.0
            dcap_in[:] = 0.0
            dcap_out[:] = 0.0
            cur_in[:] = -1
            cur_out[:] = -1
            # finished flows stay in the port lists (with no rate) until they are half of
            # them; then the lists are compacted (the others' residuals stay valid)
            n_dead += n_fin
            if 2 * n_dead > n_list:
                _compact(plist_in, pstart_in, idx_in, finished, m)
                _compact(plist_out, pstart_out, idx_out, finished, m)
                n_dead = 0
        n_fin = 0
        # D-CLAS: coflows whose rate changed get a new threshold-crossing time
        for j in range(n_re):
            c = retime[j]
            flagged[c] = False
            if kind == KIND_DCLAS and active[c] and queue[c] < n_thr:
                cver[c] += 1
                if crate[c] > 0.0:
                    csent[c] += crate[c] * (t - ctl[c])
                    ctl[c] = t
                    gap = thresholds[queue[c]] * norm[c] - csent[c]
                    tc = t + max(gap, 0.0) / crate[c]
                    tk, tv, tw, nt = _hpush(tk, tv, tw, nt, tc, c, cver[c])
        n_re = 0
        n_events += 1
        # 4. the next event
        while nq > 0 and qw[0] != ver[qv[0]]:
            nq = _hpop(qk, qv, qw, nq)
        while nt > 0 and tw[0] != cver[tv[0]]:
            nt = _hpop(tk, tv, tw, nt)
        tn = np.inf
        if nq > 0:
            tn = qk[0]
        if na > 0 and ak[0] < tn:
            tn = ak[0]
        if nt > 0 and tk[0] < tn:
            tn = tk[0]
        if tn == np.inf:
            return (bps[: kk + 1], sf[:ns], sr[:ns], sa[:ns], sb[:ns], -1, n_events, n_full,
                    n_visits)
        if tn > t:
            kk += 1
            bps = _grow(bps, kk)
            bps[kk] = tn
            t = tn
        tol = 1e-12 * max(1.0, abs(t))
        # 5. flow completions
        while nq > 0 and qk[0] <= t + tol:
            f = qv[0]
            valid = qw[0] == ver[f]
            nq = _hpop(qk, qv, qw, nq)
            if not valid or finished[f]:
                continue
            finished[f] = True
            sf, sr, sa, sb, ns, qk, qv, qw, nq, retime, n_re = _set_rate(
                f, 0.0, t, kk, fc, x, rem, tl, ver, opened, sf, sr, sa, sb, ns, qk, qv, qw, nq,
                csent, ctl, crate, retime, n_re, flagged)
            rem[f] = 0.0
            fin = _grow(fin, n_fin)
            fin[n_fin] = f
            n_fin += 1
            c = fc[f]
            left[c] -= 1
            if left[c] == 0:
                active[c] = False
                n_done += 1
                cver[c] += 1
                if kind == KIND_SINCRONIA or kind == KIND_VARYS or not refill:
                    full = True
                for j in range(succ_ptr[c], succ_ptr[c + 1]):
                    s_ = succ[j]
                    n_pred[s_] -= 1
                    if n_pred[s_] == 0:
                        ak, av, aw, na = _hpush(ak, av, aw, na, max(release[s_], t), s_, 0)
        # 6. D-CLAS threshold crossings: demote, keeping the FIFO order of simultaneous ones
        if kind == KIND_DCLAS:
            nmov = 0
            mv = np.empty(0, dtype=np.int64)
            while nt > 0 and tk[0] <= t + tol:
                c = tv[0]
                valid = tw[0] == cver[c]
                nt = _hpop(tk, tv, tw, nt)
                if not valid or not active[c]:
                    continue
                mv = _grow(mv, nmov)
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
                    while q < n_thr and val >= thresholds[q] * (1 - 1e-9):
                        q += 1
                    if q != queue[c]:
                        queue[c] = q
                        entry[c] = counter
                        counter += 1
                        full = True
                    cver[c] += 1
                    if not full and q < n_thr and crate[c] > 0.0:
                        tc = t + max(thresholds[q] * norm[c] - csent[c], 0.0) / crate[c]
                        tk, tv, tw, nt = _hpush(tk, tv, tw, nt, tc, c, cver[c])
            if full:
                # the full recomputation re-times every active coflow
                for c in range(C):
                    if active[c]:
                        csent[c] += crate[c] * (t - ctl[c])
                        ctl[c] = t
                        if not flagged[c]:
                            flagged[c] = True
                            retime = _grow(retime, n_re)
                            retime[n_re] = c
                            n_re += 1
    # close the segments still open
    for f in range(F):
        if x[f] > 0.0 and opened[f] < kk:
            sf = _grow(sf, ns)
            sr = _grow(sr, ns)
            sa = _grow(sa, ns)
            sb = _grow(sb, ns)
            sf[ns] = f
            sr[ns] = x[f]
            sa[ns] = opened[f]
            sb[ns] = kk
            ns += 1
    return bps[: kk + 1], sf[:ns], sr[:ns], sa[:ns], sb[:ns], 0, n_events, n_full, n_visits


def fast_simulate(instance: Instance, kind: int, *, key: np.ndarray | None = None,
                  thresholds: np.ndarray | None = None, norm: np.ndarray | None = None,
                  refill: bool = True) -> Schedule:
    """Run the compiled engine (see the module docstring) and return the schedule.

    ``refill=False``: rates are recomputed only when a coflow arrives or departs (and, for
    D-CLAS, at threshold crossings); bandwidth freed by a finished flow idles until then, as in
    CoflowSim.  The allocation is then not work conserving between those events.
    """
    inst = instance
    C = inst.n_coflows
    ptr_p, _ = inst.predecessors_ptr
    n_pred = np.diff(ptr_p).astype(np.int64)
    succ_ptr, succ = (np.array(a, dtype=np.int64) for a in inst.successors_ptr)
    rel = np.asarray(inst.release, dtype=np.float64)
    t0 = min(0.0, float(rel.min())) if C else 0.0
    def arr(a: np.ndarray | None, default: np.ndarray | None,
            dtype: type = np.float64) -> np.ndarray:
        # writable, contiguous copies: numba compiles read-only arrays separately
        return np.array(default if a is None else a, dtype=dtype, order="C", copy=True)

    i64 = np.int64
    bps, f, r, a, b, status, events, n_full, n_visits = _run(
        arr(inst.coflow_flows_ptr, None, i64), arr(inst.coflow_flow_order, None, i64),
        arr(inst.flow_coflow, None, i64), arr(inst.flow_src, None, i64),
        arr(inst.flow_dst, None, i64), arr(inst.flow_volume, None), arr(rel, None),
        arr(inst.coflow_weight, None), n_pred, succ_ptr, succ,
        arr(inst.fabric.capacity_in, None), arr(inst.fabric.capacity_out, None), int(kind),
        arr(key, np.zeros(C)), arr(thresholds, np.zeros(0)), arr(norm, np.ones(C)),
        float(t0), bool(refill))
    if status != 0:
        from coflowopt.sim.engine import SimulationError

        raise SimulationError("the fast engine stalled: active coflows but no pending event")
    return Schedule.from_segments(bps.copy(), f.copy(), r.copy(), a.copy(), b.copy(),
                                  meta={"events": int(events), "recomputations": int(n_full),
                                        "refill": bool(refill),
                                        "cascade_visits": int(n_visits),
                                        "engine": "fast"})

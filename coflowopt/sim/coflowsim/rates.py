"""The coflow-level rate allocations of CoflowSim's ordered schedulers.

MADD (Varys' Minimum Allocation for Desired Duration: Chowdhury, Zhong, Stoica, "Efficient
Coflow Scheduling with Varys", SIGCOMM 2014, Pseudocode 1): walking the order,
each coflow's flows get ``remaining / Γ`` on the free capacity (Γ its effective bottleneck),
coflows that need a saturated port split what is left equally per flow, and backfill walks
the coflows in (pseudo-)deadline order (``CoflowSimulator.updateRatesDynamicAlpha``).  DARK
(Aalo's D-CLAS: Chowdhury, Stoica, "Efficient Coflow Scheduling Without Prior Knowledge",
SIGCOMM 2015): strict priority over the queue order, each coflow splitting each
port equally among its flows there (``CoflowSimulatorDark.updateRates``).
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit

__all__ = ["alpha_online", "charge", "rates_dark", "rates_madd", "split_equally"]


@njit(cache=True, error_model="numpy")
def alpha_online(j, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem, done, s_free,
                  r_free, sb, rb, zero):
    """``calcAlphaOnline``: the coflow's bottleneck time (s) on the free capacity, or -1."""
    for r in range(red_ptr[j], red_ptr[j + 1]):
        rb[red_rack[r]] = red_left[r]
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            if not done[f]:
                sb[flow_src[f]] += rem[f]
    out = 4.9e-324  # Double.MIN_VALUE, the start of Utils.max
    bad = False
    for r in range(red_ptr[j], red_ptr[j + 1]):
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            s = flow_src[f]
            if sb[s] > 0 and s_free[s] <= zero:
                bad = True
        p = red_rack[r]
        if rb[p] > 0 and r_free[p] <= zero:
            bad = True
    if not bad:
        for r in range(red_ptr[j], red_ptr[j + 1]):
            p = red_rack[r]
            v = rb[p] * 8 / r_free[p]
            if v > out:
                out = v
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                s = flow_src[f]
                v = sb[s] * 8 / s_free[s]
                if v > out:
                    out = v
    for r in range(red_ptr[j], red_ptr[j + 1]):
        rb[red_rack[r]] = 0.0
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            sb[flow_src[f]] = 0.0
    return -1.0 if bad else out


@njit(cache=True, error_model="numpy")
def split_equally(group, ng, red_ptr, red_rack, flow_ptr, flow_src, done, bps, zero, s_free,
                   r_free, su, ru, nm, nr):
    """The coflows of ``group`` as one: each of their flows on free ports gets
    ``min(free ingress / its flows there, free egress / its flows there)``, flows on saturated
    ports get nothing; then the free capacity is charged (``updateRatesFairShare``, and DARK's
    per-coflow split)."""
    for k in range(ng):
        j = group[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero:
                for f in range(flow_ptr[r], flow_ptr[r + 1]):
                    bps[f] = 0.0
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                src = flow_src[f]
                if s_free[src] <= zero:
                    bps[f] = 0.0
                    continue
                nm[src] += 1
                nr[dst] += 1
    for k in range(ng):
        j = group[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero or nr[dst] == 0:
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                src = flow_src[f]
                if done[f] or s_free[src] <= zero or nm[src] == 0:
                    continue
                m = min(s_free[src] / nm[src], r_free[dst] / nr[dst])
                if m <= zero:
                    m = 0.0
                bps[f] = m
                su[src] += m
                ru[dst] += m
    for k in range(ng):
        charge(group[k], red_ptr, red_rack, flow_ptr, flow_src, s_free, r_free, su, ru, nm, nr)


@njit(cache=True, error_model="numpy")
def charge(j, red_ptr, red_rack, flow_ptr, flow_src, s_free, r_free, su, ru, nm, nr):
    """Subtract what coflow ``j``'s ports were given (``su``/``ru``) from the free capacity and
    clear the scratch counters on those ports."""
    for r in range(red_ptr[j], red_ptr[j + 1]):
        dst = red_rack[r]
        r_free[dst] -= ru[dst]
        ru[dst] = 0.0
        nr[dst] = 0
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            src = flow_src[f]
            s_free[src] -= su[src]
            su[src] = 0.0
            nm[src] = 0


@njit(cache=True, error_model="numpy")
def rates_madd(lst, ns, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem, done, bps,
                start, deadline, cur_ms, cap, zero, s_free, r_free, su, ru, sb, rb, edf,
                edf_key, nm, nr):
    """``updateRatesDynamicAlpha``: MADD in the order, equal split for the coflows that need a
    saturated port, then backfill in (pseudo-)deadline order.

    Returns ``(excess, side, port)``: the largest oversubscription of a port, relative to its
    capacity (0: none), its side (0 ingress, 1 egress) and index.  CoflowSim caps each flow's
    ``remaining / Γ`` at the free capacity but not a coflow's sum, and reads a reducer's
    bytes left from its own counter (``shuffleBytesLeft``), which floating-point rounding
    leaves a few bytes below its flows' bytes left: MADD then gives the port slightly more than
    it has (2.0e-6 of it on a 10x FB-like trace)."""
    s_free[:] = cap
    r_free[:] = cap
    skipped = np.empty(ns, dtype=np.int64)
    nsk = 0
    for k in range(ns):
        j = lst[k]
        for f in range(flow_ptr[red_ptr[j]], flow_ptr[red_ptr[j + 1]]):
            bps[f] = 0.0
        a = alpha_online(j, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem, done,
                          s_free, r_free, sb, rb, zero)
        if a == -1.0:
            skipped[nsk] = j
            nsk += 1
            continue
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero:
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                src = flow_src[f]
                b = rem[f] * 8 / a
                if b > s_free[src] or b > r_free[dst]:
                    b = min(s_free[src], r_free[dst])
                su[src] += b
                ru[dst] += b
                bps[f] = b
        charge(j, red_ptr, red_rack, flow_ptr, flow_src, s_free, r_free, su, ru, nm, nr)
    # updateRatesFairShare over the skipped coflows, as one coflow
    split_equally(skipped, nsk, red_ptr, red_rack, flow_ptr, flow_src, done, bps, zero, s_free,
                   r_free, su, ru, nm, nr)
    # backfill: a stable sort on (int)(start + deadline - now), as Collections.sort does
    for k in range(ns):
        j = lst[k]
        edf_key[k] = np.int64(start[j] + deadline[j] - cur_ms)
    perm = np.argsort(edf_key[:ns], kind="mergesort")
    for k in range(ns):
        edf[k] = lst[perm[k]]
    for k in range(ns):
        j = edf[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero:
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                src = flow_src[f]
                m = min(s_free[src], r_free[dst])
                if m <= zero:
                    m = 0.0
                bps[f] += m
                s_free[src] -= m
                r_free[dst] -= m
    # the backfill only takes positive free capacity: the deficits are MADD's
    ks = np.argmin(s_free)
    kr = np.argmin(r_free)
    if r_free[kr] <= s_free[ks]:
        return max(-r_free[kr] / cap, 0.0), 1, kr
    return max(-s_free[ks] / cap, 0.0), 0, ks


@njit(cache=True, error_model="numpy")
def rates_dark(lst, ns, red_ptr, red_rack, flow_ptr, flow_src, done, bps, cap, zero, s_free,
                r_free, su, ru, nm, nr):
    """``CoflowSimulatorDark.updateRates``: strict priority over the queue order, each coflow
    splitting each port equally among its flows there."""
    s_free[:] = cap
    r_free[:] = cap
    for k in range(ns):
        split_equally(lst[k:k + 1], 1, red_ptr, red_rack, flow_ptr, flow_src, done, bps, zero,
                       s_free, r_free, su, ru, nm, nr)


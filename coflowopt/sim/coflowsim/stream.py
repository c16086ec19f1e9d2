"""Streaming: a CoflowSim kernel's rate changes go to the validator as the kernel makes them.

With ``lean`` the kernels store nothing: each segment the stored schedule would hold becomes
rate changes (in MB/ms, on the transformed instance's flows ``where[f]``, at breakpoint =
quantum index), in time order, with the drift of each flow's last segment applied as the
stored schedule's drift closing applies it (same sums, same order, so the same floats).  The
PFP kernel makes its changes in time order already; the ordered kernel advances a whole window
of quanta at once, so its changes are collected per window (:func:`window_segment`) and sorted
by quantum (:func:`flush_window`).  The FAIR kernel streams the grouped protocol instead (one
rate group per port pair, :func:`flush_grouped`).
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit
from coflowopt.validate import group_consume, stream_consume, stream_push

__all__ = ["breakpoint_times", "fill_times", "flush_changes", "flush_grouped", "flush_window",
           "last_change", "last_rate", "new_times", "push_change", "window_close",
           "window_segment"]


@njit(cache=True, inline="always")
def new_times(lean, nb):
    """The breakpoint times of a streamed run (``nb`` quanta at most; filled as far as changes
    go, pages untouched beyond) and ``tinfo`` (first quantum with a change, how many times are
    filled, last quantum handed over)."""
    tbp = np.empty((nb if lean else 0) + 1)
    tinfo = np.array([-1, 0, 0], dtype=np.int64)
    return tbp, tinfo


@njit(cache=True, inline="always")
def last_change(tinfo, sbuf_i, nsc):
    """The latest quantum with a change so far (handed over or buffered)."""
    return max(tinfo[2], np.int64(sbuf_i[1, nsc - 1]) if nsc > 0 else 0)


@njit(cache=True, inline="always")
def fill_times(tbp, tinfo, k, quantum_ms):
    """Breakpoint times up to quantum ``k`` (``tinfo[1]``: how many are filled)."""
    while tinfo[1] <= k:
        tbp[tinfo[1]] = np.float64(tinfo[1]) * quantum_ms
        tinfo[1] += 1


@njit(cache=True)
def flush_changes(vs, sbuf_i, sbuf_d, n, tbp, tinfo, quantum_ms, lpos):
    """Hand the ``n`` buffered changes to the validator; returns how many stay buffered.
    ``tinfo[0]``: the first quantum with a change (the stored schedule's first breakpoint),
    ``tinfo[2]``: the last one handed over.  With ``lpos`` (see :func:`push_change`) the changes
    at the last buffered quantum stay (moved to the front), so a later change of the same
    flow at that quantum can still replace its change."""
    if n == 0:
        return 0
    if tinfo[0] < 0:
        tinfo[0] = sbuf_i[1, 0]
    m = n
    if lpos.size > 0:
        while m > 0 and sbuf_i[1, m - 1] == sbuf_i[1, n - 1]:
            m -= 1
        if m == 0:  # all at one quantum: they go
            m = n
    tinfo[2] = sbuf_i[1, m - 1]
    fill_times(tbp, tinfo, tinfo[2], quantum_ms)
    stream_consume(vs, sbuf_i, sbuf_d, m, tbp)
    for j in range(m, n):
        sbuf_i[0, j - m] = sbuf_i[0, j]
        sbuf_i[1, j - m] = sbuf_i[1, j]
        sbuf_d[j - m] = sbuf_d[j]
        lpos[sbuf_i[0, j]] = j - m
    return n - m


@njit(cache=True)
def breakpoint_times(sbuf_i, n, tbp, tinfo, quantum_ms):
    """The breakpoint times of a streamed run: quanta ``0 ..`` its last change (the first
    change's quantum goes to ``tinfo[0]`` if no buffer was consumed yet)."""
    if n > 0:
        if tinfo[0] < 0:
            tinfo[0] = sbuf_i[1, 0]
        tinfo[2] = sbuf_i[1, n - 1]
    fill_times(tbp, tinfo, tinfo[2], quantum_ms)
    return tbp[: tinfo[2] + 1]


@njit(cache=True, inline="always")
def push_change(vs, sbuf_i, sbuf_d, n, tbp, tinfo, f, k, rate, quantum_ms, lpos):
    """Buffer one change of flow ``f`` (time order is the caller's); a second change of ``f``
    at the same quantum replaces the first (``lpos[f]``: the buffer slot of its last change),
    as the stored schedule holds no empty segment; a full buffer goes to the validator."""
    j = lpos[f]
    if 0 <= j < n and sbuf_i[0, j] == f and sbuf_i[1, j] == k:
        sbuf_d[j] = rate
        return n
    lpos[f] = n
    n = stream_push(sbuf_i, sbuf_d, n, f, k, rate)
    if n == sbuf_d.size:
        n = flush_changes(vs, sbuf_i, sbuf_d, n, tbp, tinfo, quantum_ms, lpos)
    return n


@njit(cache=True, inline="always")
def last_rate(d, a, b, sent, volume, quantum_ms):
    """A flow's last segment (``d`` bytes per quantum over quanta ``a..b``) in MB/ms with the
    flow's drift (``sent``: MB of its earlier segments), exactly as the stored schedule closes
    it (:func:`~coflowopt.sim.coflowsim.run.close_drift`)."""
    r = d / 1048576.0 / quantum_ms
    dur = (b - a) * quantum_ms
    return max(r + (volume - (sent + r * dur)) / dur, 0.0)


@njit(cache=True, inline="always")
def window_segment(f, a, b, d, last, quantum_ms, pend, fvol, wf, wk, wr, nw, nlist, nl):
    """The streaming twin of put_segment in the ordered kernel: segment ``a..b`` of flow ``f`` at
    ``d`` bytes per quantum, as window changes.  ``pend[f]`` = (first, last, MB/ms, MB sent
    before it) of the flow's open segment, whose end may still move (``last`` = -1: none);
    ``last``: the flow is done and this is its last segment.  Returns ``(nw, nl)``."""
    if not (b > a and d != 0.0):  # put_segment records nothing
        return nw, nl
    pb = np.int64(pend[f, 1])
    if pb >= 0:  # the open segment closes (at a, or earlier with a gap)
        pend[f, 3] += pend[f, 2] * ((pb - np.int64(pend[f, 0])) * quantum_ms)
        pend[f, 1] = -1.0
        if pb < a:
            wf[nw] = f
            wk[nw] = pb
            wr[nw] = 0.0
            nw += 1
    wf[nw] = f
    wk[nw] = a
    nw += 1
    if last:
        wr[nw - 1] = last_rate(d, a, b, pend[f, 3], fvol[f], quantum_ms)
        wf[nw] = f
        wk[nw] = b
        wr[nw] = 0.0
        nw += 1
    else:
        r = d / 1048576.0 / quantum_ms
        wr[nw - 1] = r
        pend[f, 0] = a
        pend[f, 1] = b
        pend[f, 2] = r
        nlist[nl] = f
        nl += 1
    return nw, nl


@njit(cache=True, inline="always")
def window_close(f, pend, quantum_ms, wf, wk, wr, nw):
    """Close flow ``f``'s open segment: rate 0 from its end."""
    pb = np.int64(pend[f, 1])
    pend[f, 3] += pend[f, 2] * ((pb - np.int64(pend[f, 0])) * quantum_ms)
    pend[f, 1] = -1.0
    wf[nw] = f
    wk[nw] = pb
    wr[nw] = 0.0
    return nw + 1


@njit(cache=True)
def flush_window(q0, q1, pend, plist, npl, nlist, nl, quantum_ms, wf, wk, wr, nw, worder, cnt,
            where, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo):
    """The window of quanta ``q0..q1`` is done: open segments of the last window that this one
    did not continue end at ``q0``; this window's end before ``q1`` (or, ending at ``q1``,
    stay open for the next window to extend); then the window's changes go to the validator
    sorted by quantum (a counting sort: they all lie in ``q0..q1``).  Returns
    ``(npl, nsc)``; ``plist`` then holds the segments left open."""
    for j in range(npl):
        f = plist[j]
        if np.int64(pend[f, 1]) == q0:
            nw = window_close(f, pend, quantum_ms, wf, wk, wr, nw)
    npl = 0
    for j in range(nl):
        f = nlist[j]
        pb = np.int64(pend[f, 1])
        if pb < 0:
            continue
        if pb < q1:
            nw = window_close(f, pend, quantum_ms, wf, wk, wr, nw)
        else:
            plist[npl] = f
            npl += 1
    span = q1 - q0 + 2
    cnt[:span] = 0
    for j in range(nw):
        cnt[wk[j] - q0 + 1] += 1
    for j in range(1, span):
        cnt[j] += cnt[j - 1]
    for j in range(nw):
        o = wk[j] - q0
        worder[cnt[o]] = j
        cnt[o] += 1
    cap = sbuf_d.size
    for i in range(nw):
        j = worder[i]
        nsc = stream_push(sbuf_i, sbuf_d, nsc, where[wf[j]], wk[j], wr[j])
        if nsc == cap:
            nsc = flush_changes(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms, where[:0])
    return npl, nsc


@njit(cache=True)
def flush_grouped(vs, vg, sbuf_i, sbuf_d, n, tbp, tinfo, quantum_ms):
    """Hand the ``n`` buffered grouped changes to the validator (breakpoint times filled up
    to the last of them, ``tinfo`` as for :func:`flush_changes`); returns 0."""
    if n == 0:
        return 0
    if tinfo[0] < 0:
        tinfo[0] = sbuf_i[1, 0]
    tinfo[2] = sbuf_i[1, n - 1]
    fill_times(tbp, tinfo, tinfo[2], quantum_ms)
    return group_consume(vs, vg, sbuf_i, sbuf_d, n, tbp)

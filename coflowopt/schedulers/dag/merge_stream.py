"""DMA's merge executed as it is resolved: run by run, straight into the streaming validator.

:func:`~coflowopt.schedulers.dag.dma.delay_and_merge` builds the merged plan whole (every
piece of every flow, int64 columns ordered by flow) and
:func:`~coflowopt.schedulers.dag.slots.run_plan` then executes it real-first; at ten times
FB2010 that plan holds 227 M pieces, 5.4 GB before its segments are keyed.  The runs of
constant membership (:class:`RunCut`, made by :func:`~coflowopt.schedulers.dag.dma.cut_runs`)
follow each other in time, so the same execution can follow them in order and keep only what
is open:

- a sweep over the runs keeps the pieces covering the current run in priority order (each
  piece enters at its first run and leaves after its last); a run without collision gives
  each member one piece of the whole run, a colliding run of ``len`` slots with matrix ``M``
  is resolved by ``BNA(len * M)`` (:func:`~coflowopt.schedulers.dag.bna.items_hk`, the
  ``"hk"`` rule of :func:`~coflowopt.schedulers.dag.bna.resolve_runs_hk`), as in the merge;
- each piece is taken real-first as :func:`~coflowopt.schedulers.dag.slots.run_plan` takes
  it (the flow's volume left before it, consecutive pieces of one flow joined, the last one
  needed cut short at the volume left, later ones dropped), with the same floats: segment
  ``[s, e)`` starts at ``origin + s dt`` and ends at ``origin + e dt``, a cut one at
  ``(origin + s dt) + need / c``;
- a segment still open at the end of its run ends there unless the next run extends it; the
  rate changes of a batch of runs are ordered by time, then ends before starts, then flow
  (the order of ``run_plan``'s breakpoints), and those before the batch's end go to the
  validator.

The validator therefore sees the same changes at the same breakpoints as from ``run_plan``
on the assembled plan (``tests/schedulers/dag/test_merge_stream.py``), and the memory is the
pieces of the isolated plans, the flows' state and the breakpoints, not the merged plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import objmode

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedulers.dag.bna import items_hk
from coflowopt.schedulers.dag.slots import counting_sort, uniform_fabric_refusal
from coflowopt.sim.events import grow
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.validate.streamed import StreamValidator, stream_consume, stream_push

__all__ = ["RunCut", "join_runs", "run_merged"]

_BUF = 1 << 18     # rate changes per validator call
_BATCH = 1 << 20   # changes at slot times sorted together
_SPAN = 1 << 31    # slots one batch may span (the keys' slot field)


class RunCut(NamedTuple):
    """DMA's delayed pieces cut into runs of constant membership ([C], the module docstring of
    :mod:`coflowopt.schedulers.dag.dma`; made by :func:`~coflowopt.schedulers.dag.dma.cut_runs`).

    Piece ``i`` (of flow ``flow[i]``, on ports ``src[i]``, ``dst[i]``) covers runs
    ``ra[i]..rb[i]-1``; run ``r`` lasts ``rlen[r]`` slots of the merged plan, has
    ``eff[r] = eff(M)`` (0: no member, 1: no collision) and starts at slot ``begin[r]`` of the
    compressed plan, which ends at slot ``total``; ``prio`` lists the pieces by priority (the
    plan's rank, then flow): a run's members keep this order."""

    flow: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    ra: np.ndarray
    rb: np.ndarray
    rlen: np.ndarray
    eff: np.ndarray
    begin: np.ndarray
    prio: np.ndarray
    total: int


def join_runs(parts: Sequence[tuple[RunCut, int]]) -> RunCut | None:
    """The runs of several cuts one after another (G-DM's groups): cut ``k`` shifted by
    ``parts[k][1]`` slots, which must not make it overlap the one before; its pieces keep
    their priority among themselves (no run holds pieces of two cuts).  ``None``: no part."""
    if not parts:
        return None
    if len(parts) == 1 and parts[0][1] == 0:
        return parts[0][0]
    ends = [shift + cut.total for cut, shift in parts]
    for k in range(1, len(parts)):
        if parts[k][1] < ends[k - 1]:
            raise ValueError(f"join_runs: part {k} starts at slot {parts[k][1]}, before part "
                             f"{k - 1} ends ({ends[k - 1]})")
    n_runs = np.cumsum([0] + [int(cut.rlen.size) for cut, _ in parts])
    n_pieces = np.cumsum([0] + [int(cut.flow.size) for cut, _ in parts])
    it = np.int32 if max(int(n_runs[-1]) + 1, int(n_pieces[-1])) < 2 ** 31 else np.int64

    def col(name: str, add: Any = None, dtype: Any = None) -> np.ndarray:
        cols = []
        for k, (cut, shift) in enumerate(parts):
            x = getattr(cut, name)
            off = {None: 0, "runs": n_runs[k], "pieces": n_pieces[k], "shift": shift}[add]
            cols.append((x + off if off else x).astype(dtype or x.dtype, copy=False))
        return np.concatenate(cols)

    return RunCut(col("flow"), col("src"), col("dst"), col("ra", "runs", it),
                  col("rb", "runs", it), col("rlen"), col("eff"), col("begin", "shift"),
                  col("prio", "pieces", it), max(ends))


def run_merged(instance: Instance, cut: RunCut, *, quantum: float = 1.0, origin: float = 0.0,
               sink: RateSink, meta: dict | None = None) -> Outcome:
    """Resolve the runs of ``cut`` (DMA step 4, rule ``"hk"``) and execute the pieces
    real-first into ``sink``'s :class:`~coflowopt.validate.StreamValidator`, run by run (module
    docstring): the outcome of ``run_plan(instance, delay_and_merge(..., rule="hk"), ...)``
    without the merged plan.  ``sink`` must stream; slot ``s`` is
    ``[origin + s dt, origin + (s+1) dt)``, ``dt = quantum / c``."""
    if not sink.stream:
        raise ValueError("run_merged: the sink must stream (store the plan with "
                         "delay_and_merge and run_plan instead)")
    why = uniform_fabric_refusal(instance)
    if why is not None:
        raise ValueError(f"run_merged: {why}")
    c = float(instance.fabric.capacity_in[0])
    q = float(quantum)
    flow, src, dst, ra, rb, rlen, eff, begin, prio, _ = cut
    del cut     # the caller's only reference when handed over: ra and prio go below
    # the pieces grouped by their first run, in priority order within a group
    optr, idx = counting_sort(ra[prio], int(rlen.size))
    order = prio[idx]
    del idx, ra
    pos = np.empty(prio.size, prio.dtype)
    pos[prio] = np.arange(prio.size, dtype=prio.dtype)
    del prio
    vol = np.ascontiguousarray(instance.flow_volume, dtype=np.float64)
    sv = StreamValidator(instance, sink.check)
    buf_i, buf_d = np.empty((3, _BUF), np.int32), np.empty(_BUF)
    bps, n = _sweep(order, optr, pos, rb, src, dst, flow, rlen, eff, begin, vol, q, 1e-9 * q,
                    q / c, c, float(origin), sv.state, buf_i, buf_d, _BATCH, _SPAN)
    if bps.size == 0:
        bps = np.array([float(origin)])
    sv.finish(bps, n, buffer=(buf_i, buf_d))
    return sink.outcome(sv.result(meta))


@njit(cache=True)
def _sweep(order, optr, pos, rb, src, dst, flow, rlen, eff, begin, vol, q, tiny, dt, c,
           origin, vs, buf_i, buf_d, batch, span):
    """The runs in time order (module docstring); returns the breakpoints and the number of
    changes left in the buffer.  The changes at slot times are kept as one int64 key each,
    ``(slot - base) << 32 | kind << 31 | flow`` (an end is kind 0, a start 1), and sorted a
    batch of runs at a time (at least ``batch`` keys, or a span of ``span`` slots from the
    batch's first slot ``base``; at most 2^31); the cut ends, at most one per flow, wait in a
    short list of (time, flow) merged in by time."""
    F = vol.size
    # per flow, one row (a piece reads and writes one cache line): slots of its pieces taken
    # so far, its open segment's first and end slot, and whether that segment is open (bit
    # 0) and full, not cut (bit 1); the volume left at the segment's start beside it
    fs = np.zeros((F, 4), np.int64)
    cur_need = np.zeros(F)
    live = np.empty(64, np.int64)         # the flows with an open segment
    n_live = 0
    act = np.empty(64, np.int64)          # the pieces covering the run, by priority
    nxt = np.empty(64, np.int64)
    n_act = 0
    key = np.empty(64, np.int64)          # the batch's changes at slot times
    n_key = 0
    base = 0                              # the batch's first slot
    cut_t = np.empty(64)                  # cut ends not yet passed on: time, flow
    cut_f = np.empty(64, np.int64)
    n_cut = 0
    bps = np.empty(1024)
    kk = -1
    ns = 0
    item = pst = plen = np.zeros(0, np.int64)
    for r in range(rlen.size):
        a = optr[r]
        b = optr[r + 1]
        if nxt.size < n_act + b - a:
            nxt = np.empty(2 * (n_act + b - a), np.int64)
            act2 = np.empty(nxt.size, np.int64)
            act2[:n_act] = act[:n_act]
            act = act2
        # the pieces still covering run r, merged with those starting there, by priority
        x = 0
        y = a
        n2 = 0
        while x < n_act or y < b:
            if x < n_act and rb[act[x]] <= r:
                x += 1
                continue
            if y >= b or (x < n_act and pos[act[x]] < pos[order[y]]):
                nxt[n2] = act[x]
                x += 1
            else:
                nxt[n2] = order[y]
                y += 1
            n2 += 1
        act[:n2] = nxt[:n2]    # a copy, not a swap: rebinding costs atomic reference counts
        n_act = n2
        e = eff[r]
        if e == 0 or n_act == 0:
            continue
        b0 = begin[r]
        ln = rlen[r]
        end_slot = b0 + ln * e
        if n_key == 0:
            base = b0
        elif end_slot - base >= span:      # past the keys' slot field
            bps, kk, ns, n_cut = _flush(key, n_key, base, cut_t, cut_f, n_cut,
                                        origin + b0 * dt, origin, dt, c, bps, kk, vs, buf_i,
                                        buf_d, ns)
            n_key = 0
            base = b0
        if end_slot - base >= 1 << 31:
            raise ValueError("run_merged: a run longer than 2^31 slots")
        if e == 1:
            n_pc = n_act
        else:
            sub_s = np.empty(n_act, np.int64)
            sub_d = np.empty(n_act, np.int64)
            for x in range(n_act):
                sub_s[x] = src[act[x]]
                sub_d[x] = dst[act[x]]
            item, pst, plen, _ = items_hk(sub_s, sub_d, np.full(n_act, ln, np.int64))
            n_pc = item.size
        # room for every change this run can make: a start and an end per piece, an end per
        # segment open before it
        room = 2 * n_pc + n_live + 1
        if key.size < n_key + room:
            k2 = np.empty(2 * (n_key + room), np.int64)
            k2[:n_key] = key[:n_key]
            key = k2
        if cut_t.size < n_cut + room:
            t2 = np.empty(2 * (n_cut + room))
            f2 = np.empty(t2.size, np.int64)
            t2[:n_cut] = cut_t[:n_cut]
            f2[:n_cut] = cut_f[:n_cut]
            cut_t = t2
            cut_f = f2
        if live.size < n_live + n_pc:
            l2 = np.empty(2 * (n_live + n_pc), np.int64)
            l2[:n_live] = live[:n_live]
            live = l2
        for x in range(n_pc):
            if e == 1:
                f = flow[act[x]]
                s = b0
                n = ln
            else:
                f = flow[act[item[x]]]
                s = b0 + pst[x]
                n = plen[x]
            # real-first, as slots._seg_marks takes the pieces of one flow in start order
            need = vol[f] - fs[f, 0] * q
            fs[f, 0] += n
            if not need > tiny:
                continue
            full = 2 if need >= n * q - tiny else 0
            if fs[f, 3] & 1:
                if s == fs[f, 2]:
                    fs[f, 2] += n
                    fs[f, 3] = 1 | full
                    continue
                n_key, n_cut = _close(f, fs, cur_need, base, origin, dt, c, key, n_key, cut_t,
                                      cut_f, n_cut)
            else:
                live[n_live] = f
                n_live += 1
            fs[f, 1] = s
            fs[f, 2] = s + n
            fs[f, 3] = 1 | full
            cur_need[f] = need
            key[n_key] = ((s - base) << 32) | (1 << 31) | f
            n_key += 1
        # segments that do not reach the run's end (or are cut) end now
        k = 0
        for x in range(n_live):
            f = live[x]
            if fs[f, 3] & 2 and fs[f, 2] == end_slot:
                live[k] = f
                k += 1
                continue
            n_key, n_cut = _close(f, fs, cur_need, base, origin, dt, c, key, n_key, cut_t, cut_f,
                                  n_cut)
            fs[f, 3] = 0
        n_live = k
        if n_key >= batch:
            bps, kk, ns, n_cut = _flush(key, n_key, base, cut_t, cut_f, n_cut,
                                        origin + end_slot * dt, origin, dt, c, bps, kk, vs,
                                        buf_i, buf_d, ns)
            n_key = 0
    bps, kk, ns, n_cut = _flush(key, n_key, base, cut_t, cut_f, n_cut, np.inf, origin, dt, c,
                                bps, kk, vs, buf_i, buf_d, ns)
    for x in range(n_live):      # every open segment ends with the last run
        f = live[x]
        if cut_t.size <= n_cut:
            cut_t = grow(cut_t, n_cut)
            cut_f = grow(cut_f, n_cut)
        cut_t[n_cut] = origin + fs[f, 2] * dt
        cut_f[n_cut] = f
        n_cut += 1
    bps, kk, ns, n_cut = _flush(key, 0, 0, cut_t, cut_f, n_cut, np.inf, origin, dt, c, bps,
                                kk, vs, buf_i, buf_d, ns)
    return bps[: kk + 1], ns


@njit(cache=True, inline="always")
def _close(f, fs, cur_need, base, origin, dt, c, key, n_key, cut_t, cut_f, n_cut):
    """Flow ``f``'s open segment ends: a full one at its end slot (a key), a cut one where
    its volume runs out (a waiting end).  Returns ``(n_key, n_cut)``."""
    if fs[f, 3] & 2:
        key[n_key] = ((fs[f, 2] - base) << 32) | f
        return n_key + 1, n_cut
    cut_t[n_cut] = (origin + fs[f, 1] * dt) + cur_need[f] / c
    cut_f[n_cut] = f
    return n_key, n_cut + 1


def _sort_batch(keys: np.ndarray, n_keys: int, cut_t: np.ndarray, cut_f: np.ndarray,
                n_cut: int) -> None:
    """In place: the keys, and the waiting ends by (time, flow), by numpy's sorts (vectorised,
    several times numba's)."""
    keys[:n_keys].sort()
    o = np.lexsort((cut_f[:n_cut], cut_t[:n_cut]))
    cut_t[:n_cut] = cut_t[:n_cut][o]
    cut_f[:n_cut] = cut_f[:n_cut][o]


@njit(cache=True)
def _flush(keys, n_keys, b0, cut_t, cut_f, n_cut, horizon, origin, dt, c, bps, kk, vs, buf_i,
           buf_d, ns):
    """The batch's changes and the waiting ends sorted (by numpy, in object mode: one call per
    batch) and passed on (:func:`_emit`)."""
    if n_keys > 1 or n_cut > 1:
        with objmode():
            _sort_batch(keys, n_keys, cut_t, cut_f, n_cut)
    return _emit(keys, n_keys, b0, cut_t, cut_f, n_cut, horizon, origin, dt, c, bps, kk, vs,
                 buf_i, buf_d, ns)


@njit(cache=True)
def _emit(keys, n_keys, b0, cut_t, cut_f, n_cut, horizon, origin, dt, c, bps, kk, vs, buf_i,
          buf_d, ns):
    """The sorted slot-time changes (``keys[:n_keys]``, slots from ``b0``) and the sorted
    waiting ends before ``horizon`` (``cut_t``, ``cut_f``) to the validator, by time, then ends
    before starts, then flow; the later ends keep waiting.  Returns ``(bps, kk, ns, n_cut)``."""
    mask = (1 << 31) - 1
    # room for a breakpoint per change, made once: growing the array per change would
    # rebind it per change (two atomic reference counts each)
    if bps.size < kk + n_keys + n_cut + 2:
        b2 = np.empty(2 * (kk + n_keys + n_cut + 2))
        b2[: kk + 1] = bps[: kk + 1]
        bps = b2
    j = 0
    for i in range(n_keys + 1):
        if i < n_keys:
            kv = keys[i]
            t = origin + (b0 + (kv >> 32)) * dt
            start = (kv >> 31) & 1
            f = kv & mask
        else:
            t = horizon
            start = 0
            f = -1
        # the waiting ends before this change: earlier, or at its time with a lower flow if
        # it is an end (ends come before starts)
        while j < n_cut and cut_t[j] < horizon and (
                cut_t[j] < t or (cut_t[j] == t and (start == 1 or cut_f[j] < f))):
            if kk < 0 or cut_t[j] > bps[kk]:
                kk += 1
                bps[kk] = cut_t[j]
            ns = stream_push(buf_i, buf_d, ns, cut_f[j], kk, 0.0)
            if ns == buf_d.size:
                ns = stream_consume(vs, buf_i, buf_d, ns, bps)
            j += 1
        if i == n_keys:
            break
        if kk < 0 or t > bps[kk]:
            kk += 1
            bps[kk] = t
        ns = stream_push(buf_i, buf_d, ns, f, kk, c if start == 1 else 0.0)
        if ns == buf_d.size:
            ns = stream_consume(vs, buf_i, buf_d, ns, bps)
    for x in range(j, n_cut):
        cut_t[x - j] = cut_t[x]
        cut_f[x - j] = cut_f[x]
    return bps, kk, ns, n_cut - j

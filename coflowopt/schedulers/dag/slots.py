"""Slotted schedules of the DAG family: the slot plan (run-length form) and its executor.

Units [C] (Shafiee and Ghaderi, ToN 2021, model [R]: unit slots, unit port capacity, integer
data; the conversion from real volumes is ours).  The algorithms of this family work in unit slots
on capacity-1 ports with integer demands.  An :class:`~coflowopt.Instance` has ports of one
capacity ``c`` (a non-uniform fabric is refused: :func:`uniform_fabric_refusal`) and real
volumes.  With ``quantum`` (volume per slot, default 1.0) a flow's integer demand is
``ceil(volume / quantum - 1e-9)`` (at least 1 for a positive volume, 0 for a zero volume),
one slot lasts ``quantum / c`` time units, and slot ``s`` is
``[origin + s quantum / c, origin + (s + 1) quantum / c)``.  Theory instances (capacity 1,
integer volumes, quantum 1) are then exact.

Execution is real-first [C: our choice]: a flow's pieces run at the port rate ``c`` in time order
and its last piece is cut short so that it serves exactly its real volume (its ports idle for the
rest of that slot); dummy traffic of BNA's augmentation (its Step A) is never sent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.validate import StreamValidator, stream_consume

__all__ = [
    "SlotPlan",
    "emit_segments",
    "finishes_before_refusal",
    "label",
    "plan_to_schedule",
    "run_plan",
    "slot_demand",
    "slot_length",
    "timed_segments",
    "uniform_fabric_refusal",
]

_I64 = np.int64


def _col(a: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=_I64).reshape(-1))


@dataclass(frozen=True, eq=False)
class SlotPlan:
    """A slotted schedule in run-length form: flow ``flow[i]`` is sent at full port rate during
    slots ``[start[i], start[i] + length[i])`` (integers, slot units).  Pieces on one port never
    overlap (each slot is a partial matching).  ``makespan``: the end of the last piece (0 if
    none).  ``counters``: what the algorithm that made the plan counted, if it says (the
    backfill: events, port repairs, pair scans)."""

    flow: np.ndarray    # int64 (P,)
    start: np.ndarray   # int64 (P,)
    length: np.ndarray  # int64 (P,)
    counters: dict[str, int] | None = None

    def __post_init__(self) -> None:
        f, s, n = _col(self.flow), _col(self.start), _col(self.length)
        if not (f.shape == s.shape == n.shape):
            raise ValueError(f"SlotPlan: flow/start/length lengths differ: {f.size}, {s.size}, "
                             f"{n.size}")
        object.__setattr__(self, "flow", f)
        object.__setattr__(self, "start", s)
        object.__setattr__(self, "length", n)

    @classmethod
    def empty(cls) -> SlotPlan:
        """No piece."""
        z = np.zeros(0, dtype=_I64)
        return cls(z, z, z)

    @property
    def n_pieces(self) -> int:
        return int(self.flow.size)

    @property
    def end(self) -> np.ndarray:
        """End slot of each piece (``start + length``)."""
        return self.start + self.length

    @property
    def makespan(self) -> int:
        """The end of the last piece, in slots (0 for an empty plan)."""
        return int(self.end.max()) if self.flow.size else 0

    def shifted(self, offset: int) -> SlotPlan:
        """The same pieces ``offset`` slots later."""
        return SlotPlan(self.flow, self.start + int(offset), self.length)

    @staticmethod
    def concat(plans: Sequence[SlotPlan]) -> SlotPlan:
        """All pieces of ``plans`` together (no shift: place each plan first)."""
        plans = list(plans)
        if not plans:
            return SlotPlan.empty()
        return SlotPlan(np.concatenate([p.flow for p in plans]),
                        np.concatenate([p.start for p in plans]),
                        np.concatenate([p.length for p in plans]))

    def flow_completion(self, n_flows: int) -> np.ndarray:
        """End slot of each flow's last piece (``-1`` for a flow without pieces)."""
        out = np.full(int(n_flows), -1, dtype=_I64)
        if self.flow.size:
            np.maximum.at(out, self.flow, self.end)
        return out

    def sorted(self) -> SlotPlan:
        """The pieces ordered by (start, flow)."""
        o = np.lexsort((self.flow, self.start))
        return SlotPlan(self.flow[o], self.start[o], self.length[o])


def slot_demand(instance: Instance, quantum: float = 1.0) -> np.ndarray:
    """Integer demand of every flow in slots [C]: ``ceil(volume / quantum - 1e-9)``, at least 1
    for a positive volume (0 for a zero volume)."""
    q = float(quantum)
    if not (math.isfinite(q) and q > 0):
        raise ValueError(f"quantum: must be finite and > 0, got {quantum!r}")
    v = instance.flow_volume
    d = np.ceil(v / q - 1e-9).astype(_I64)
    d[v > 0] = np.maximum(d[v > 0], 1)
    d[v <= 0] = 0
    return d


def slot_length(instance: Instance, quantum: float = 1.0) -> float:
    """Length of one slot in the instance's time unit: ``quantum / c`` (``c`` the port
    capacity of the uniform fabric)."""
    return float(quantum) / float(instance.fabric.capacity_in[0])


def uniform_fabric_refusal(instance: Instance) -> str | None:
    """One-line reason why the slotted algorithms cannot run ``instance`` (a fabric whose
    ports do not all have one capacity), else ``None``."""
    fab = instance.fabric
    if fab.is_uniform:
        return None
    c0 = float(fab.capacity_in[0])
    cap = np.concatenate([fab.capacity_in, fab.capacity_out])
    u = int(np.flatnonzero(cap != c0)[0])
    side, p = ("in", u) if u < fab.ports else ("out", u - fab.ports)
    return (f"the slotted algorithms need ports of one capacity (unit slots); port {side} {p} "
            f"has capacity {cap[u]:g}, port in 0 has {c0:g}")


def label(value: Any) -> Any:
    """A user label (job or coflow id) as a plain Python value, for messages."""
    return value.item() if isinstance(value, np.generic) else value


def finishes_before_refusal(instance: Instance) -> str | None:
    """One line naming the first job with Finishes-Before edges (the slotted algorithms honour
    Starts-After edges only), else ``None``."""
    if instance.finishes_before.shape[0]:
        c = int(instance.finishes_before[0, 1])
        job = label(instance.job_id[instance.coflow_job[c]])
        return (f"job {job!r} has Finishes-Before edges, which the slotted algorithms do not "
                "handle")
    return None


def _piece_order(plan: SlotPlan) -> np.ndarray | None:
    """Positions of the pieces by (flow, start); ``None`` when the plan is so ordered already
    (DMA's plans are), else one argsort of a combined int64 key (a lexsort of two keys is
    several times slower on tens of millions of pieces)."""
    f, s = plan.flow, plan.start
    if _is_sorted(f, s):
        return None
    smax = int(s.max()) + 1
    if (int(f.max()) + 1) * smax < 2 ** 62:
        return np.argsort(f * smax + s, kind="stable")
    return np.lexsort((s, f))


def _check_plan(instance: Instance, plan: SlotPlan) -> None:
    bad = np.flatnonzero((plan.flow < 0) | (plan.flow >= instance.n_flows)
                         | (plan.length <= 0) | (plan.start < 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"slot plan piece {i}: flow {plan.flow[i]}, start {plan.start[i]}, "
                         f"length {plan.length[i]} (flow out of range or empty piece)")


def _segments(instance: Instance, plan: SlotPlan, quantum: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Real-first segments of ``plan`` in slot form, ordered by (flow, start): flow (int32),
    first slot, end slot, full (else cut at the volume left), volume left at the start."""
    q = float(quantum)
    tiny = 1e-9 * q
    vol = np.ascontiguousarray(instance.flow_volume, dtype=np.float64)
    order = _piece_order(plan)
    ident = order is None
    order = np.zeros(0, _I64) if order is None else order
    m = _segment_count(order, ident, plan.flow, plan.start, plan.length, vol, q, tiny)
    return _real_first(order, ident, plan.flow, plan.start, plan.length, vol, q, tiny, m)


def timed_segments(instance: Instance, plan: SlotPlan, quantum: float = 1.0,
                   origin: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Real-first execution of ``plan`` as timed segments ``(flow, t0, t1)``: flow ``flow[i]``
    runs at the port rate ``c`` during ``[t0[i], t1[i])``.  Pieces of one flow are taken in
    time order, the last one needed is cut short at the flow's real volume, later ones are
    dropped; consecutive pieces of one flow form one segment."""
    c = float(instance.fabric.capacity_in[0])
    dt = float(quantum) / c
    if not plan.flow.size:
        z = np.zeros(0)
        return np.zeros(0, _I64), z, z
    _check_plan(instance, plan)
    f, s, e, full, need = _segments(instance, plan, quantum)
    t0 = origin + s * dt
    t1 = np.where(full, origin + e * dt, t0 + need / c)
    return f.astype(_I64), t0, t1


def _stream(instance: Instance, bps: np.ndarray, flow: np.ndarray,
            ends: tuple[np.ndarray, np.ndarray], starts: tuple[np.ndarray, np.ndarray],
            sink: RateSink, meta: dict | None) -> Outcome:
    """Segments ``flow[i]`` at the port rate, bucketed by their end and start breakpoint
    (:func:`counting_sort`), into a :class:`~coflowopt.validate.StreamValidator` in time order (at
    one breakpoint the ends before the starts, each in segment order), a buffer at a time:
    no array of all the changes is built."""
    c = float(instance.fabric.capacity_in[0])
    K = int(bps.size)
    sv = StreamValidator(instance, sink.check)
    buf_i, buf_d = np.empty((3, _BUF), np.int32), np.empty(_BUF)
    k, j = 0, 0
    while True:
        k, j, n = _fill(k, j, K, ends[0], ends[1], starts[0], starts[1], flow, c, buf_i,
                        buf_d)
        if k >= K:
            sv.finish(bps, n, buffer=(buf_i, buf_d))
            break
        stream_consume(sv.state, buf_i, buf_d, n, bps)
    return sink.outcome(sv.result(meta))


def emit_segments(instance: Instance, flow: np.ndarray, t0: np.ndarray, t1: np.ndarray, *,
                  origin: float = 0.0, sink: RateSink | None = None,
                  meta: dict | None = None) -> Outcome:
    """Timed segments at the port rate (no two of one flow overlapping) into ``sink``: stored
    as a :class:`~coflowopt.Schedule`, or streamed into a
    :class:`coflowopt.validate.StreamValidator` when the sink streams."""
    sink = sink or RateSink.store()
    c = float(instance.fabric.capacity_in[0])
    flow = np.asarray(flow, dtype=_I64)
    n = flow.size
    t0, t1 = np.asarray(t0, dtype=np.float64), np.asarray(t1, dtype=np.float64)
    if n:
        bps = np.unique(np.concatenate([t0, t1]))
        first, last = np.searchsorted(bps, t0), np.searchsorted(bps, t1)
    else:
        bps, first, last = np.array([float(origin)]), np.zeros(0, _I64), np.zeros(0, _I64)
    if not sink.stream:
        return sink.outcome(Schedule.from_segments(bps, flow, np.full(n, c), first, last,
                                                   meta=meta))
    return _stream(instance, bps, flow, counting_sort(last, bps.size),
                   counting_sort(first, bps.size), sink, meta)


def plan_to_schedule(instance: Instance, plan: SlotPlan, *, quantum: float = 1.0,
                     origin: float = 0.0, meta: dict | None = None) -> Schedule:
    """The real-first execution of ``plan`` as a :class:`~coflowopt.Schedule` (slot ``s`` at
    ``[origin + s dt, origin + (s+1) dt)``, ``dt = quantum / c``): every piece at the port
    rate ``c``, each flow's last piece cut short at its real volume; consecutive pieces of one
    flow form one segment, so breakpoints lie only where some rate changes."""
    f, t0, t1 = timed_segments(instance, plan, quantum, origin)
    return emit_segments(instance, f, t0, t1, origin=origin, meta=meta).schedule


def run_plan(instance: Instance, plan: SlotPlan, *, quantum: float = 1.0, origin: float = 0.0,
             sink: RateSink | None = None, meta: dict | None = None) -> Outcome:
    """Execute ``plan`` real-first (:func:`plan_to_schedule`) into ``sink``: when it streams,
    the rate changes go into a :class:`coflowopt.validate.StreamValidator` without the
    schedule being stored; else the :class:`~coflowopt.Schedule` is stored.

    The streamed form keeps memory to a few words per segment: the breakpoints come from the
    slots used (a mask over the slots) and the cut ends, breakpoint indices are looked up a
    chunk at a time, and the changes are ordered by counting sort, never as one array."""
    sink = sink or RateSink.store()
    if not sink.stream or not plan.flow.size:
        f, t0, t1 = timed_segments(instance, plan, quantum, origin)
        return emit_segments(instance, f, t0, t1, origin=origin, sink=sink, meta=meta)
    _check_plan(instance, plan)
    c = float(instance.fabric.capacity_in[0])
    dt = float(quantum) / c
    top = int(plan.start.max()) + int(plan.length.max()) + 1     # a bound: no temporary
    if top <= 4 * plan.flow.size + 1024 and instance.n_flows < 2 ** 31 and top < 2 ** 31:
        # two compiled passes, 12 bytes per segment: the marks give the breakpoints, then
        # each segment's flow and breakpoint indices are written directly
        q = float(quantum)
        tiny = 1e-9 * q
        vol = np.ascontiguousarray(instance.flow_volume, dtype=np.float64)
        order = _piece_order(plan)
        ident = order is None
        order = np.zeros(0, _I64) if order is None else order
        args = (order, ident, plan.flow, plan.start, plan.length, vol, q, tiny)
        m, used, cut_s, cut_need = _seg_marks(*args, top)
        slots_used = np.flatnonzero(used)
        del used
        t_cut = (origin + cut_s * dt) + cut_need / c        # t1 of a cut segment, as above
        bps = np.unique(np.concatenate([origin + slots_used * dt, t_cut]))
        slot_k = np.full(top, -1, np.int32)
        slot_k[slots_used] = np.searchsorted(bps, origin + slots_used * dt)
        cut_k = np.searchsorted(bps, t_cut).astype(np.int32)
        del slots_used, t_cut, cut_s, cut_need
        f, k_s, k_e = _seg_keys(*args, m, slot_k, cut_k)
        del args, order, plan, slot_k, cut_k
        starts = counting_sort(k_s, bps.size)
        del k_s
        ends = counting_sort(k_e, bps.size)
        del k_e
        return _stream(instance, bps, f, ends, starts, sink, meta)
    f, s, e, full, need = _segments(instance, plan, quantum)
    del plan  # freed here when the caller handed over its only reference
    cut = np.flatnonzero(~full)
    t_cut = (origin + s[cut] * dt) + need[cut] / c          # t1 of a cut segment, as above
    del need
    top = int(e.max()) + 1
    if top <= 4 * s.size + 1024:
        used = np.zeros(top, dtype=bool)
        used[s] = True
        for a in range(0, e.size, _CHUNK):      # a chunk at a time: no full-length copy
            b = min(a + _CHUNK, e.size)
            used[e[a:b][full[a:b]]] = True
        slots_used = np.flatnonzero(used)
        del used
    else:
        slots_used = np.unique(np.concatenate([s, e[full]]))
    bps = np.unique(np.concatenate([origin + slots_used * dt, t_cut]))
    del slots_used, full
    kt = np.int32 if bps.size < 2 ** 31 else _I64
    k_s, k_e = np.empty(s.size, kt), np.empty(s.size, kt)
    for a in range(0, s.size, _CHUNK):
        b = min(a + _CHUNK, s.size)
        k_s[a:b] = np.searchsorted(bps, origin + s[a:b] * dt)
        k_e[a:b] = np.searchsorted(bps, origin + e[a:b] * dt)
    k_e[cut] = np.searchsorted(bps, t_cut)
    del s, e, cut, t_cut
    starts = counting_sort(k_s, bps.size)
    del k_s
    ends = counting_sort(k_e, bps.size)
    del k_e
    return _stream(instance, bps, f, ends, starts, sink, meta)


# -- compiled helpers ---------------------------------------------------------------------------

_BUF = 1 << 18     # rate changes per validator call
_CHUNK = 1 << 20   # segments per breakpoint lookup


@njit(cache=True)
def _is_sorted(f, s):
    """Whether the pieces are in strictly increasing (flow, start) order."""
    for i in range(1, f.size):
        if f[i] < f[i - 1] or (f[i] == f[i - 1] and s[i] <= s[i - 1]):
            return False
    return True


@njit(cache=True)
def _segment_count(order, ident, flow, start, length, vol, q, tiny):
    """Pass 1 of :func:`_real_first`: the number of segments."""
    m = 0
    prev_f = -1
    before = 0
    end = -1
    open_ = False
    for i in range(flow.size):
        p = i if ident else order[i]
        fl = flow[p]
        if fl != prev_f:
            prev_f, before, open_ = fl, 0, False
        need = vol[fl] - before * q
        before += length[p]
        if not need > tiny:
            continue
        if open_ and start[p] == end:
            end = start[p] + length[p]
            continue
        m += 1
        open_ = True
        end = start[p] + length[p]
    return m


@njit(cache=True)
def _real_first(order, ident, flow, start, length, vol, q, tiny, m):
    """Real-first segments of the pieces taken in ``order`` (by flow, then start; the
    identity if ``ident``): per segment its flow, first slot, end slot, whether it is full,
    and the volume left at its start (one pass; the arithmetic of the array form it
    replaced)."""
    o_f = np.empty(m, np.int32)
    o_s = np.empty(m, np.int64)
    o_e = np.empty(m, np.int64)
    o_full = np.empty(m, np.bool_)
    o_need = np.empty(m)
    j = -1
    prev_f = -1
    before = 0
    open_ = False
    for i in range(flow.size):
        p = i if ident else order[i]
        fl = flow[p]
        if fl != prev_f:
            prev_f, before, open_ = fl, 0, False
        n = length[p]
        need = vol[fl] - before * q
        before += n
        if not need > tiny:
            continue
        full = need >= n * q - tiny
        if open_ and start[p] == o_e[j]:
            o_e[j] += n
            o_full[j] = full
            continue
        j += 1
        o_f[j], o_s[j], o_e[j], o_full[j], o_need[j] = fl, start[p], start[p] + n, full, need
        open_ = True
    return o_f, o_s, o_e, o_full, o_need


@njit(cache=True)
def counting_sort(key, K):
    """Stable counting sort of ``key`` (values in ``0..K-1``): ``ptr`` (K+1) and the
    positions grouped by key, each group in increasing position."""
    ptr = np.zeros(K + 1, np.int64)
    for i in range(key.size):
        ptr[key[i] + 1] += 1
    for k in range(K):
        ptr[k + 1] += ptr[k]
    fill = ptr[:-1].copy()
    idx = np.empty(key.size, np.int32)
    for i in range(key.size):
        k = key[i]
        idx[fill[k]] = i
        fill[k] += 1
    return ptr, idx


@njit(cache=True)
def _fill(k, j, K, eptr, eidx, sptr, sidx, flow, c, buf_i, buf_d):
    """Write the rate changes from cursor ``(k, j)`` into the buffer (at each breakpoint the
    ends, then the starts, each in segment order) until it is full or all are written;
    returns the new cursor and the count."""
    n = 0
    size = buf_d.size
    while k < K:
        ne = eptr[k + 1] - eptr[k]
        tot = ne + sptr[k + 1] - sptr[k]
        while j < tot:
            if n == size:
                return k, j, n
            if j < ne:
                seg = eidx[eptr[k] + j]
                r = 0.0
            else:
                seg = sidx[sptr[k] + j - ne]
                r = c
            buf_i[0, n] = flow[seg]
            buf_i[1, n] = k
            buf_d[n] = r
            n += 1
            j += 1
        k += 1
        j = 0
    return k, j, n


@njit(cache=True)
def _seg_marks(order, ident, flow, start, length, vol, q, tiny, top):
    """Pass 1 of the streamed execution: the number of segments, the slots where one starts
    or ends full (a mask of ``top`` slots), and each cut segment's start slot and volume
    left, in segment order (at most one per flow)."""
    used = np.zeros(top, np.bool_)
    cut_s = np.empty(vol.size, np.int64)
    cut_need = np.empty(vol.size)
    n_cut = 0
    m = 0
    prev_f = -1
    before = 0
    open_ = False
    cur_s = 0
    cur_e = 0
    cur_need = 0.0
    cur_full = True
    for i in range(flow.size):
        p = i if ident else order[i]
        fl = flow[p]
        if fl != prev_f:
            prev_f, before, open_ = fl, 0, False
        n = length[p]
        need = vol[fl] - before * q
        before += n
        if not need > tiny:
            continue
        full = need >= n * q - tiny
        if open_ and start[p] == cur_e:
            cur_e += n
            cur_full = full
            continue
        if m > 0:
            if cur_full:
                used[cur_e] = True
            else:
                cut_s[n_cut] = cur_s
                cut_need[n_cut] = cur_need
                n_cut += 1
        m += 1
        cur_s, cur_e, cur_need, cur_full = start[p], start[p] + n, need, full
        used[cur_s] = True
        open_ = True
    if m > 0:
        if cur_full:
            used[cur_e] = True
        else:
            cut_s[n_cut] = cur_s
            cut_need[n_cut] = cur_need
            n_cut += 1
    return m, used, cut_s[:n_cut], cut_need[:n_cut]


@njit(cache=True)
def _seg_keys(order, ident, flow, start, length, vol, q, tiny, m, slot_k, cut_k):
    """Pass 2: per segment its flow (int32) and the breakpoint indices of its start and end
    (``slot_k`` of a slot, ``cut_k`` of the cut ends in segment order)."""
    o_f = np.empty(m, np.int32)
    o_ks = np.empty(m, np.int32)
    o_ke = np.empty(m, np.int32)
    j = -1
    n_cut = 0
    prev_f = -1
    before = 0
    open_ = False
    cur_e = 0
    cur_full = True
    for i in range(flow.size):
        p = i if ident else order[i]
        fl = flow[p]
        if fl != prev_f:
            prev_f, before, open_ = fl, 0, False
        n = length[p]
        need = vol[fl] - before * q
        before += n
        if not need > tiny:
            continue
        full = need >= n * q - tiny
        if open_ and start[p] == cur_e:
            cur_e += n
            cur_full = full
            continue
        if j >= 0:
            if cur_full:
                o_ke[j] = slot_k[cur_e]
            else:
                o_ke[j] = cut_k[n_cut]
                n_cut += 1
        j += 1
        o_f[j] = fl
        o_ks[j] = slot_k[start[p]]
        cur_e, cur_full = start[p] + n, full
        open_ = True
    if j >= 0:
        o_ke[j] = slot_k[cur_e] if cur_full else cut_k[n_cut]
    return o_f, o_ks, o_ke

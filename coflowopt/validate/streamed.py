"""The validator's streamed part: a schedule checked as the rate changes a simulator makes.

A simulator that would store hundreds of millions of segments (per-flow fair sharing on a
trace) hands its rate changes, in time order, to a :class:`StreamValidator` instead.  The
compiled kernels (:func:`stream_push`, :func:`stream_consume`; :func:`group_push`,
:func:`member_push`, :func:`own_push`, :func:`group_consume` for rate groups) keep in
:class:`StreamState` only O(flows + ports) numbers, whatever the number of changes, and check
on the fly:

- malformed changes (flow or group out of range, rate not finite, out of time order, a
  membership change the grouped protocol forbids), recorded with their reason;
- negative rates;
- port capacity: when an interval closes, the ports whose load changed in it are checked
  against ``B_l`` (the fluid fabric of De Pellegrini et al., "Fair Coflow Scheduling via
  Controlled Slowdown", IEEE TPDS 2022, Sec. III, capacity constraint (8));
- each flow's served volume, first service and completion.

A violation found in a kernel is recorded as a *hit* (kind, breakpoint, flow or port, value)
in fixed-size arrays; :meth:`StreamValidator.report` turns the hits into
:class:`~coflowopt.validate.report.Violation` s of the same kinds and messages as a stored
schedule's, through the public methods of :class:`~coflowopt.validate.report.Report`, which
then runs checks 4-7 (release, volume, Starts-After, Finishes-Before) on the flow times exactly
as for a stored schedule.  Where many flows always share one rate (per-flow fair sharing: the
flows of a port pair), a simulator may send one change per *rate group* instead of one per
flow (:meth:`StreamValidator.grouped`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.validate.report import Report, Tolerance, ValidSchedule

__all__ = [
    "StreamGroups",
    "StreamState",
    "StreamValidator",
    "group_consume",
    "group_push",
    "member_push",
    "own_push",
    "readonly",
    "stream_consume",
    "stream_push",
]

_HIT_CAP, _HIT_NEG, _HIT_BAD = 0, 1, 2
# a malformed membership change of the grouped protocol, by the code its hit records
_MEMBER_BAD = {1: "joins a rate group on other ports than its own",
               2: "joins a rate group while in one", 3: "leaves without being in a rate group",
               4: "flow or rate group out of range", 5: "out of time order",
               6: "sets its own rate while in a rate group", 7: "own rate not finite",
               8: "joins a rate group at a nonzero own rate"}
_OWN = -2  # the membership slot of own_push: a flow outside every group sets its own rate
# counters: current breakpoint, dirty ports, the three hit counts, changes consumed
_CTR_K, _CTR_DIRTY, _CTR_HITS, _CTR_CHANGES = 0, 1, 2, 5


class StreamState(NamedTuple):
    """The streaming validator's arrays, as compiled kernels receive them.

    Per-flow state is kept in *rows* ordered by (ingress, egress) pair: a simulator changes the
    flows of a pair together, so the rows it touches are adjacent (fair sharing: 187 million
    changes on FB2010).  ``m`` is the number of ports; egress port ``p`` is ``m + p``.
    """

    row: np.ndarray         #: int32 ``[F]``: flow -> its row
    flow: np.ndarray        #: float64 ``[F, 4]`` per row: rate, since (time), served, volume
    start: np.ndarray       #: float64 ``[F]`` per row: first service (``inf`` before)
    completion: np.ndarray  #: float64 ``[F]`` per row: completion (``inf`` before)
    ports: np.ndarray       #: int32 ``[F, 2]`` per row: ingress, ``m`` + egress
    load: np.ndarray        #: float64 ``[2m]``: current load per port
    capacity: np.ndarray    #: float64 ``[2m]``
    dirty: np.ndarray       #: int64 ``[2m]``: ports whose load changed in the open interval
    dirty_mark: np.ndarray  #: bool ``[2m]``
    counters: np.ndarray    #: int64 ``[6]``: breakpoint, dirty ports, 3 hit counts, changes
    hit_index: np.ndarray   #: int64 ``[3, H, 2]``: (breakpoint, port or flow) per hit and kind
    hit_value: np.ndarray   #: float64 ``[3, H]``: load, rate, ...
    tolerance: np.ndarray   #: float64 ``[3]``: capacity_rtol, volume_rtol, atol


@njit(cache=True)
def _stream_close(load, cap, dirty, dmark, ctr, hit_i, hit_f, tolv):
    """Interval ``ctr[0]`` is over: check the ports whose load changed since the last check."""
    for j in range(ctr[_CTR_DIRTY]):
        u = dirty[j]
        dmark[u] = False
        if load[u] > cap[u] * (1.0 + tolv[0]) + tolv[2]:
            _stream_hit(ctr, hit_i, hit_f, _HIT_CAP, ctr[_CTR_K], u, load[u])
    ctr[_CTR_DIRTY] = 0


@njit(cache=True, inline="always")
def _stream_hit(ctr, hit_i, hit_f, kind, k, idx, val):
    n = ctr[_CTR_HITS + kind]
    if n < hit_f.shape[1]:
        hit_i[kind, n, 0] = k
        hit_i[kind, n, 1] = idx
        hit_f[kind, n] = val
        ctr[_CTR_HITS + kind] = n + 1


@njit(cache=True, inline="always")
def stream_push(buf_i, buf_d, n, flow, k, rate):
    """Buffer one rate change: ``flow`` runs at ``rate`` from breakpoint ``k`` on.  Returns
    the new count; when it reaches ``buf_d.size`` the caller hands the buffer to
    :func:`stream_consume`.  The state stays out of this hot path: passing a tuple of arrays
    costs reference counting on each of them."""
    buf_i[0, n] = flow
    buf_i[1, n] = k
    buf_d[n] = rate
    return n + 1


@njit(cache=True)
def stream_consume(state, buf_i, buf_d, n, breakpoints):
    """Apply the ``n`` buffered changes to ``state`` (a :class:`StreamState`); returns 0 (the
    new buffer count).  Flow ``buf_i[0, j]`` runs at rate ``buf_d[j]`` from breakpoint
    ``buf_i[1, j]``; ``buf_i[2]`` is scratch.  ``breakpoints`` must cover every buffered
    breakpoint index.  The state is unpacked once here: unpacking it per change cost
    reference counting that was 15x the work."""
    row, fl, start, comp, ports, load, cap, dirty, dmark, ctr, hit_i, hit_f, tolv = state
    F = row.size
    ctr[_CTR_CHANGES] += n
    # the rows first, in a pass of independent loads the processor overlaps (one dependent
    # cache miss per change otherwise: 19 -> 12 ns a change for fair sharing's 188 M)
    for j in range(n):
        f = buf_i[0, j]
        buf_i[2, j] = row[f] if 0 <= f < F else -1
    for j in range(n):
        f = buf_i[0, j]
        k = buf_i[1, j]
        new = buf_d[j]
        if k != ctr[_CTR_K]:
            if k < ctr[_CTR_K]:
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, f, new)  # out of time order
                continue
            _stream_close(load, cap, dirty, dmark, ctr, hit_i, hit_f, tolv)
            ctr[_CTR_K] = k
        i = buf_i[2, j]
        if i < 0 or not np.isfinite(new):
            _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, f, new)
            continue
        if new < -tolv[2]:
            _stream_hit(ctr, hit_i, hit_f, _HIT_NEG, k, f, new)
        _own_rate(fl, start, comp, ports, load, dirty, dmark, ctr, tolv, i, breakpoints[k],
                  new)
    return 0


@njit(cache=True, inline="always")
def _own_rate(fl, start, comp, ports, load, dirty, dmark, ctr, tolv, i, t, new):
    """Row ``i`` runs at ``new`` from time ``t``: its service so far, completion, first
    service and its ports' loads."""
    old = fl[i, 0]
    if old > 0.0:
        since = fl[i, 1]
        before = fl[i, 2]
        vol = fl[i, 3]
        amount = old * (t - since)
        if comp[i] == np.inf and _volume_reached(before + amount, vol, tolv):
            comp[i] = min(since + max(vol - before, 0.0) / old, t)
        fl[i, 2] = before + amount
    if new > 0.0 and start[i] == np.inf:
        start[i] = t
    fl[i, 0] = new
    fl[i, 1] = t
    for side in range(2):
        _mark(load, dirty, dmark, ctr, ports[i, side], new - old)


@njit(cache=True, inline="always")
def _volume_reached(served, vol, tolv):
    """A flow of volume ``vol`` served ``served`` is complete (the volume rule of
    :meth:`~coflowopt.validate.report.Tolerance.volume_slack`, on the kernels' ``tolv``)."""
    return served >= vol - (vol * tolv[1] + tolv[2])


@njit(cache=True, inline="always")
def _mark(load, dirty, dmark, ctr, u, delta):
    """Port ``u``'s load changes by ``delta``; it is checked when the interval closes."""
    load[u] += delta
    if not dmark[u]:
        dmark[u] = True
        dirty[ctr[_CTR_DIRTY]] = u
        ctr[_CTR_DIRTY] += 1


@njit(cache=True)
def _stream_finish(state, buf_i, buf_d, n, breakpoints):
    """The last buffered changes, then the check of the interval they leave open."""
    stream_consume(state, buf_i, buf_d, n, breakpoints)
    if state.counters[_CTR_K] < breakpoints.size - 1:
        _stream_close(state.load, state.capacity, state.dirty, state.dirty_mark,
                      state.counters, state.hit_index, state.hit_value, state.tolerance)


# -- rate groups: one change for every flow of a group ---------------------------------------
#
# A group has two ports and one rate; a flow that is a member runs at its group's rate.  The
# group keeps its cumulative service per member ``A(t)`` (the integral of its rate), so a
# member's served volume is ``A(leave) - A(join)``: the validator's work per rate change is per
# group, not per member, while capacity (load = members x rate per port), volumes, first
# service and completion are checked per flow as in the per-flow protocol.


class StreamGroups(NamedTuple):
    """The rate groups of a :class:`StreamValidator` (:meth:`StreamValidator.grouped`).

    Per flow, state is indexed by the validator's rows (:attr:`StreamState.row`).
    """

    ports: np.ndarray    #: int32 ``[G, 2]``: ingress, ``m`` + egress of each group
    state: np.ndarray    #: float64 ``[G, 4]``: rate, since (time), service per member ``A``
    #: at since, members
    pending: np.ndarray  #: int64 ``[G]``: first member row not yet served (-1: none)
    member: np.ndarray   #: int64 ``[F, 2]`` per row: group (-1: none), next pending row
    joined: np.ndarray   #: float64 ``[F]`` per row: the group's ``A`` when the flow joined


@njit(cache=True, inline="always")
def group_push(buf_i, buf_d, n, group, k, rate):
    """Buffer a group's rate change: every member of ``group`` runs at ``rate`` from
    breakpoint ``k`` on (grouped protocol; returns the new count, as :func:`stream_push`)."""
    buf_i[0, n] = -1 - group
    buf_i[1, n] = k
    buf_d[n] = rate
    return n + 1


@njit(cache=True, inline="always")
def member_push(buf_i, buf_d, n, flow, k, group):
    """Buffer a membership change: ``flow`` joins ``group`` at breakpoint ``k`` (runs at the
    group's rate from then on), or leaves its group when ``group`` is -1 (rate 0 from then on)."""
    buf_i[0, n] = flow
    buf_i[1, n] = k
    buf_i[2, n] = group
    buf_d[n] = 0.0
    return n + 1


@njit(cache=True, inline="always")
def own_push(buf_i, buf_d, n, flow, k, rate):
    """Buffer a flow's own rate change in the grouped protocol: ``flow``, in no group, runs
    at ``rate`` from breakpoint ``k`` (as :func:`stream_push` in the per-flow protocol)."""
    buf_i[0, n] = flow
    buf_i[1, n] = k
    buf_i[2, n] = _OWN
    buf_d[n] = rate
    return n + 1


@njit(cache=True)
def group_consume(state, groups, buf_i, buf_d, n, breakpoints):
    """Apply ``n`` buffered group and membership changes (:func:`group_push`,
    :func:`member_push`) to ``state`` and ``groups``; returns 0.  The grouped form of
    :func:`stream_consume` (same breakpoint rule; the two protocols are not mixed)."""
    row, fl, start, comp, ports, load, cap, dirty, dmark, ctr, hit_i, hit_f, tolv = state
    gp = groups.ports
    gs = groups.state
    pend = groups.pending
    mem = groups.member
    joined = groups.joined
    F = row.size
    G = gp.shape[0]
    ctr[_CTR_CHANGES] += n
    for j in range(n):
        x = buf_i[0, j]
        k = buf_i[1, j]
        if k != ctr[_CTR_K]:
            if k < ctr[_CTR_K]:  # out of time order
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, buf_d[j] if x < 0 else 5.0)
                continue
            _stream_close(load, cap, dirty, dmark, ctr, hit_i, hit_f, tolv)
            ctr[_CTR_K] = k
        t = breakpoints[k]
        if x < 0:  # a group's rate change
            g = -1 - x
            new = buf_d[j]
            if g >= G or not np.isfinite(new):
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, new)
                continue
            if new < -tolv[2]:
                _stream_hit(ctr, hit_i, hit_f, _HIT_NEG, k, x, new)
            old = gs[g, 0]
            gs[g, 2] += old * (t - gs[g, 1])
            gs[g, 1] = t
            gs[g, 0] = new
            if gs[g, 3] > 0.0:
                delta = gs[g, 3] * (new - old)
                _mark(load, dirty, dmark, ctr, gp[g, 0], delta)
                _mark(load, dirty, dmark, ctr, gp[g, 1], delta)
                if new > 0.0:
                    i = pend[g]
                    while i >= 0:
                        start[i] = t
                        nxt = mem[i, 1]
                        mem[i, 1] = -1
                        i = nxt
                    pend[g] = -1
            continue
        # membership; a malformed one is recorded with its reason (_MEMBER_BAD)
        g = buf_i[2, j]
        if x >= F or g >= G:
            _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, 4.0)
            continue
        i = row[x]
        if g == _OWN:  # a flow outside every group sets its own rate
            new = buf_d[j]
            if mem[i, 0] >= 0:
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, 6.0)
                continue
            if not np.isfinite(new):
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, 7.0)
                continue
            if new < -tolv[2]:
                _stream_hit(ctr, hit_i, hit_f, _HIT_NEG, k, x, new)
            _own_rate(fl, start, comp, ports, load, dirty, dmark, ctr, tolv, i, t, new)
            continue
        if g >= 0:  # joins g
            if ports[i, 0] != gp[g, 0] or ports[i, 1] != gp[g, 1]:
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, 1.0)
                continue
            if mem[i, 0] >= 0:
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, 2.0)
                continue
            if fl[i, 0] != 0.0:
                _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, 8.0)
                continue
            r = gs[g, 0]
            mem[i, 0] = g
            joined[i] = gs[g, 2] + r * (t - gs[g, 1])
            gs[g, 3] += 1.0
            _mark(load, dirty, dmark, ctr, gp[g, 0], r)
            _mark(load, dirty, dmark, ctr, gp[g, 1], r)
            if start[i] == np.inf:
                if r > 0.0:
                    start[i] = t
                else:
                    mem[i, 1] = pend[g]
                    pend[g] = i
            continue
        g = mem[i, 0]  # leaves its group
        if g < 0:
            _stream_hit(ctr, hit_i, hit_f, _HIT_BAD, k, x, 3.0)
            continue
        r = gs[g, 0]
        a_now = gs[g, 2] + r * (t - gs[g, 1])
        before = fl[i, 2]
        vol = fl[i, 3]
        amount = a_now - joined[i]
        if comp[i] == np.inf and _volume_reached(before + amount, vol, tolv):
            # reached in the group's open segment (from gs[g, 1]; seg, the member's service
            # from its join to then, is negative when it joined later) or, served beyond it
            # (the volume check reports that unless within tolerance), at the segment's start
            seg = gs[g, 2] - joined[i]
            need = max(vol - before - seg, 0.0)
            comp[i] = min(gs[g, 1] + need / r, t) if r > 0.0 else min(gs[g, 1], t)
        fl[i, 2] = before + amount
        mem[i, 0] = -1
        gs[g, 3] -= 1.0
        _mark(load, dirty, dmark, ctr, gp[g, 0], -r)
        _mark(load, dirty, dmark, ctr, gp[g, 1], -r)
        if start[i] == np.inf:  # never served: out of the pending list
            prev = -1
            q = pend[g]
            while q >= 0 and q != i:
                prev = q
                q = mem[q, 1]
            if q == i:
                if prev < 0:
                    pend[g] = mem[i, 1]
                else:
                    mem[prev, 1] = mem[i, 1]
                mem[i, 1] = -1
    return 0


@njit(cache=True)
def _group_finish(state, groups, buf_i, buf_d, n, breakpoints):
    group_consume(state, groups, buf_i, buf_d, n, breakpoints)
    if state.counters[_CTR_K] < breakpoints.size - 1:
        _stream_close(state.load, state.capacity, state.dirty, state.dirty_mark,
                      state.counters, state.hit_index, state.hit_value, state.tolerance)


class StreamValidator:
    """The validator fed with a schedule's rate changes as a simulator makes them.

    It makes the checks and gives the times of :func:`~coflowopt.validate.stored.validate`
    (same tolerances and messages) in memory proportional to the flows and ports, whatever the
    number of changes.
    The protocol, for a compiled kernel or plain Python:

    1. ``sv = StreamValidator(instance, tol)``; pass ``sv.state`` (a :class:`StreamState`)
       and the buffer ``buf_i, buf_d = sv.buffer`` (int32 ``[3, size]``, float64 ``[size]``,
       any pair of that shape may be used instead) to the kernel;
    2. for every rate change, in time order (non-decreasing breakpoint index ``k``; the
       changes at one breakpoint in any order, at most one per flow is cleanest):
       ``n = stream_push(buf_i, buf_d, n, flow, k, rate)`` (``flow`` runs at ``rate`` from
       breakpoint ``k`` until its next change; every flow starts at rate 0);
    3. when ``n == buf_d.size``: ``n = stream_consume(sv.state, buf_i, buf_d, n, bps)``, with
       ``bps`` breakpoint times covering every buffered ``k`` (a kernel may grow its array
       between calls: only ``bps[k]`` of buffered changes is read);
    4. at the end (every flow back at rate 0): ``sv.finish(bps, n)`` with the final
       breakpoints (and ``buffer=`` the pair used, if not ``sv.buffer``);
    5. ``sv.result(meta)``: the :class:`~coflowopt.validate.report.ValidSchedule`
       (``schedule`` is ``None``), or :class:`~coflowopt.validate.report.InfeasibleSchedule`
       naming the first violation (:meth:`report`: the whole
       :class:`~coflowopt.validate.report.Report`).

    ``empty=True`` gives a placeholder of the same types (no flows, no ports) for a kernel
    compiled once for both its storing and its streaming mode.  ``limit``: violations kept
    per kind; ``size``: buffer length.  ``flow_of_row``: the order of the per-flow state (see
    :meth:`from_flows`; default by (ingress, egress) pair).
    """

    def __init__(self, instance: Instance, tol: Tolerance | None = None, *, limit: int = 20,
                 size: int = 1 << 16, empty: bool = False,
                 flow_of_row: np.ndarray | None = None):
        inst = instance
        F, m = (0, 0) if empty else (inst.n_flows, inst.ports)
        self._setup(inst.flow_src[:F], inst.flow_dst[:F], inst.flow_volume[:F],
                    inst.fabric.capacity_in[:m], inst.fabric.capacity_out[:m], tol, limit, size,
                    None if empty else flow_of_row)
        self.instance: Instance | None = inst

    @classmethod
    def from_flows(cls, src: np.ndarray, dst: np.ndarray, volume: np.ndarray,
                   capacity_in: np.ndarray, capacity_out: np.ndarray,
                   tol: Tolerance | None = None, *, limit: int = 20, size: int = 1 << 16,
                   flow_of_row: np.ndarray | None = None) -> StreamValidator:
        """A validator for flows given as columns (``m = capacity_in.size`` ports), when the
        instance is built only after the run; :meth:`result` then needs ``instance=``.
        ``flow_of_row``: the flows in the order their state is laid out (a permutation;
        default by (ingress, egress) pair): the order in which a kernel changes them, so that
        consecutive changes touch adjacent rows."""
        sv = cls.__new__(cls)
        sv._setup(np.asarray(src), np.asarray(dst), np.asarray(volume, dtype=np.float64),
                  np.asarray(capacity_in, dtype=np.float64),
                  np.asarray(capacity_out, dtype=np.float64), tol, limit, size, flow_of_row)
        sv.instance = None
        return sv

    def _setup(self, src: np.ndarray, dst: np.ndarray, volume: np.ndarray, cap_in: np.ndarray,
               cap_out: np.ndarray, tol: Tolerance | None, limit: int, size: int,
               by_pair: np.ndarray | None = None) -> None:
        tol = tol or Tolerance()
        F, m = src.size, cap_in.size
        H = limit + 2 * m + 1  # an interval's overloads are all kept once the first is
        cap = np.concatenate([cap_in, cap_out]).astype(np.float64)
        if by_pair is None:
            by_pair = np.argsort(src.astype(np.int64) * max(m, 1) + dst, kind="stable")
        row = np.empty(F, np.int32)
        row[by_pair] = np.arange(F, dtype=np.int32)
        fl = np.zeros((F, 4))
        fl[:, 3] = volume[by_pair]
        ports = np.empty((F, 2), np.int32)
        ports[:, 0] = src[by_pair]
        ports[:, 1] = dst[by_pair]
        ports[:, 1] += m
        self.state = StreamState(
            row=row, flow=fl, start=np.full(F, np.inf), completion=np.full(F, np.inf),
            ports=ports, load=np.zeros(2 * m), capacity=cap,
            dirty=np.zeros(2 * m, np.int64), dirty_mark=np.zeros(2 * m, np.bool_),
            counters=np.zeros(6, np.int64), hit_index=np.zeros((3, H, 2), np.int64),
            hit_value=np.zeros((3, H)),
            tolerance=tol.as_array())
        self.buffer = (np.empty((3, size), np.int32), np.empty(size))
        self.tol, self.limit = tol, limit
        self.breakpoints = np.zeros(1)
        self.groups: StreamGroups | None = None

    def grouped(self, src: np.ndarray, dst: np.ndarray) -> StreamGroups:
        """Switch to the grouped protocol with groups ``0 .. G-1`` on ports ``(src[g],
        dst[g])``: the kernel then sends :func:`member_push` (a flow joins or leaves a group)
        and :func:`group_push` (a group's rate changes) and hands full buffers to
        :func:`group_consume` with the returned :class:`StreamGroups`; every flow must have left
        its group by the end.  A flow may join only a group on its own two ports.  A flow in
        no group may also run at a rate of its own (:func:`own_push`, e.g. a last partial
        quantum), which it must have set back to 0 before it joins a group.  Completion times
        are found from the group's cumulative service, so they may differ from the per-flow
        protocol's in the last bits."""
        F, m = self.state.row.size, self.state.capacity.size // 2
        G = np.asarray(src).size
        gp = np.empty((G, 2), np.int32)
        gp[:, 0] = src
        gp[:, 1] = np.asarray(dst) + m
        member = np.full((F, 2), -1, np.int64)
        self.groups = StreamGroups(ports=gp, state=np.zeros((G, 4)),
                                   pending=np.full(G, -1, np.int64), member=member,
                                   joined=np.zeros(F))
        return self.groups

    @property
    def changes(self) -> int:
        """Rate changes consumed so far."""
        return int(self.state.counters[_CTR_CHANGES])

    def consume(self, n: int, breakpoints: np.ndarray) -> int:
        """Apply the first ``n`` changes of :attr:`buffer` (from Python); returns 0."""
        return stream_consume(self.state, *self.buffer, n, breakpoints)

    def finish(self, breakpoints: np.ndarray, n: int,
               buffer: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """The simulator is done: apply the last ``n`` buffered changes (of ``buffer``, by
        default :attr:`buffer`); ``breakpoints`` are the schedule's final breakpoints."""
        self.breakpoints = np.asarray(breakpoints, dtype=np.float64)
        if self.groups is not None:
            _group_finish(self.state, self.groups, *(buffer or self.buffer), n,
                          self.breakpoints)
        else:
            _stream_finish(self.state, *(buffer or self.buffer), n, self.breakpoints)

    def result(self, meta: dict | None = None, *, instance: Instance | None = None
               ) -> ValidSchedule:
        """The checked schedule's times (``meta`` gains ``rate_changes``), or
        :class:`~coflowopt.validate.report.InfeasibleSchedule`.  ``instance``: check the
        releases, precedence and metrics against this instance instead (same flows, e.g.
        releases known only after the run)."""
        bps = self.breakpoints
        meta = {**(meta or {}), "rate_changes": self.changes}
        return self.report(instance=instance).result(None, start=float(bps[0]),
                                                     end=float(bps[-1]), meta=meta)

    def report(self, *, instance: Instance | None = None) -> Report:
        """After :meth:`finish`: the :class:`~coflowopt.validate.report.Report` of the
        streamed schedule (violations in check order, times), as :func:`~coflowopt.validate.
        stored.analyse` gives it for a stored one.  ``instance``: as in :meth:`result`."""
        inst = self.instance if instance is None else instance
        if inst is None:
            raise ValueError("StreamValidator.result: built from flows, it needs instance=")
        report = Report(inst, self.tol, self.limit, self.breakpoints)
        if self._malformed(report):
            return report
        self._negative(report)
        m = inst.ports
        st = self.state
        hit_i, hit_f = st.hit_index, st.hit_value
        hits = []
        for j in range(int(st.counters[_CTR_HITS + _HIT_CAP])):
            k, u = (int(x) for x in hit_i[_HIT_CAP, j])
            hits.append((k, int(u >= m), u % m, float(hit_f[_HIT_CAP, j])))
        report.capacity(hits)
        row = st.row
        report.outcome(st.flow[row, 2], st.start[row], st.completion[row])
        return report

    def _malformed(self, report: Report) -> bool:
        """Report what makes the stream malformed (the first such); ``True`` if anything."""
        st = self.state
        row = st.row
        rate = st.flow[row, 0]
        hit_i, hit_f = st.hit_index, st.hit_value
        bad = st.counters[_CTR_HITS + _HIT_BAD]
        gr = self.groups
        if bad:
            k, f = (int(x) for x in hit_i[_HIT_BAD, 0])
            val = float(hit_f[_HIT_BAD, 0])
            if gr is None:
                report.malformed(f"rate change {hit_f[_HIT_BAD, 0]} of flow position {f} at "
                                 f"breakpoint {k} (flow out of range, rate not finite, or out "
                                 "of time order)", interval=k, flow=f)
            elif f < 0:
                report.malformed(f"rate change {val} of rate group {-1 - f} at breakpoint {k} "
                                 "(group out of range, rate not finite, or out of time order)",
                                 interval=k)
            else:
                report.malformed(f"flow position {f} at breakpoint {k}: "
                                 f"{_MEMBER_BAD.get(int(val), 'malformed membership')}",
                                 interval=k, flow=f)
            return True
        if np.any(np.diff(self.breakpoints) < 0):
            k = int(np.flatnonzero(np.diff(self.breakpoints) < 0)[0])
            report.malformed(f"breakpoints decrease at interval {k}", interval=k)
            return True
        if np.any(rate != 0):
            f = int(np.flatnonzero(rate != 0)[0])
            report.malformed(f"flow position {f} still has rate {rate[f]} at the last "
                             "breakpoint", flow=f)
            return True
        if gr is not None and np.any(gr.member[row, 0] >= 0):
            f = int(np.flatnonzero(gr.member[row, 0] >= 0)[0])
            report.malformed(f"flow position {f} is still in rate group "
                             f"{int(gr.member[row[f], 0])} at the last breakpoint", flow=f)
            return True
        return False

    def _negative(self, report: Report) -> None:
        """Report the negative rates the kernels recorded (a flow's, or a rate group's)."""
        st = self.state
        hit_i, hit_f = st.hit_index, st.hit_value
        m = report.instance.ports
        for j in range(int(st.counters[_CTR_HITS + _HIT_NEG])):
            k, f = (int(x) for x in hit_i[_HIT_NEG, j])
            rate = float(hit_f[_HIT_NEG, j])
            if f < 0:  # a rate group's change (grouped protocol)
                assert self.groups is not None
                u, w = (int(x) for x in self.groups.ports[-1 - f])
                full = report.negative_group_rate(k, -1 - f, u, w - m, rate)
            else:
                full = report.negative_rate(k, f, rate)
            if full:
                return


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only, contiguous view of ``a`` (a copy only when it is not contiguous): the big
    per-flow arrays go to a kernel without a copy, and numba compiles one specialization for
    them whatever the caller's writability."""
    v = np.ascontiguousarray(a).view()
    v.flags.writeable = False
    return v

"""The feasibility validator every schedule passes through before a metric is reported.

:func:`validate` checks a :class:`~coflowopt.Schedule` against an :class:`~coflowopt.Instance`:

1. well-formed: flow positions in range, no flow in two segments over one interval, finite
   rates, non-decreasing breakpoints;
2. rates are non-negative;
3. port capacity: in every interval, the rates through each ingress and egress port sum to at
   most its capacity ``B_l``;
4. nothing is sent before its coflow's release (``max(r_c, rho_job)``);
5. every flow receives its volume, neither less nor more;
6. Starts-After: no flow of a coflow is sent before every flow of each predecessor finished;
7. Finishes-Before: a coflow does not finish before its Finishes-Before predecessor.

It returns a :class:`ValidSchedule` with the completion times that the metrics use, or raises
:class:`InfeasibleSchedule` naming the first violation in the order above (within a kind: the
earliest interval, then the lowest port or flow).  Tolerances are explicit and relative
(:class:`Tolerance`).

A schedule too large to store is checked as a stream of rate changes, with the same checks and
messages: :class:`StreamValidator` (fed by the compiled simulators through :func:`stream_push`
and :func:`stream_consume`) and :func:`validate_changes` (the same from arrays).  Where many
flows always share one rate (per-flow fair sharing: the flows of a port pair), a simulator may
send one change per *rate group* instead of one per flow (:meth:`StreamValidator.grouped`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule

__all__ = [
    "InfeasibleSchedule",
    "StreamGroups",
    "StreamState",
    "StreamValidator",
    "Tolerance",
    "ValidSchedule",
    "Violation",
    "check",
    "check_all",
    "group_consume",
    "group_push",
    "member_push",
    "own_push",
    "readonly",
    "schedule_changes",
    "stream_consume",
    "stream_push",
    "validate",
    "validate_changes",
]


@dataclass(frozen=True)
class Tolerance:
    """Relative tolerances of the validator.

    - capacity: a port load ``L`` is accepted when ``L <= B (1 + capacity_rtol) + atol``;
    - volume: served ``S`` of volume ``v`` when ``|S - v| <= v volume_rtol + atol``;
    - time: ``t`` is "not before" ``r`` when ``t >= r - (time_rtol H + atol)`` with ``H`` the
      largest absolute time in the schedule or instance (at least 1).
    """

    capacity_rtol: float = 1e-6
    volume_rtol: float = 1e-6
    time_rtol: float = 1e-9
    atol: float = 1e-9


@dataclass(frozen=True)
class Violation:
    """One broken constraint, located exactly.

    ``kind`` is one of ``malformed``, ``negative_rate``, ``capacity``, ``release``, ``volume``,
    ``overserved``, ``precedence``, ``finishes_before``.  ``port`` is ``"in 3"`` or ``"out 7"``;
    ``amount`` is by how much the constraint is broken (load over capacity, volume missing,
    time too early).
    """

    kind: str
    message: str
    interval: int | None = None
    time: float | None = None
    port: str | None = None
    flow: int | None = None
    coflow: int | None = None
    amount: float | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class InfeasibleSchedule(ValueError):
    """Raised by :func:`validate`; carries the first :class:`Violation`."""

    def __init__(self, violation: Violation, all_violations: list[Violation] | None = None):
        self.violation = violation
        self.violations = all_violations or [violation]
        super().__init__(str(violation))


@dataclass(frozen=True, eq=False)
class ValidSchedule:
    """A schedule that passed :func:`validate`, with the times the metrics need.

    ``flow_start``/``flow_completion``: first time a flow is served / the instant its last unit
    arrives (a zero-volume flow starts and completes when its coflow may start).
    ``coflow_completion`` (``C_j``), ``coflow_start``, ``job_completion`` (``C_j`` of jobs), all
    absolute times in the instance's time unit.  ``start``/``end``: the schedule's first and
    last breakpoints.  ``schedule`` is ``None`` when the validator consumed the rates as a
    simulator produced them (:func:`validate_changes`) and nothing stored them.
    """

    instance: Instance
    schedule: Schedule | None
    tolerance: Tolerance
    flow_start: np.ndarray
    flow_completion: np.ndarray
    coflow_start: np.ndarray
    coflow_completion: np.ndarray
    job_completion: np.ndarray = field(repr=False)
    start: float = 0.0
    end: float = 0.0
    meta: dict = field(default_factory=dict, repr=False)


@njit(cache=True)
def _prefix_within(group: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums of ``x`` restarting where ``group`` changes."""
    out = np.empty(x.size)
    acc = 0.0
    for i in range(x.size):
        if i == 0 or group[i] != group[i - 1]:
            acc = 0.0
        out[i] = acc
        acc += x[i]
    return out


def _port_name(side: int, p: int) -> str:
    return f"{'in' if side == 0 else 'out'} {p}"


def _coflow_label(inst: Instance, c: int) -> str:
    """A coflow named by its id, with its position (messages say which number is which)."""
    cid = inst.coflow_id[c]
    return f"id {cid.item() if isinstance(cid, np.generic) else cid!r} (position {c})"


class _Analysis:
    """Computes every check once; violations are collected per kind in check order."""

    def __init__(self, inst: Instance, sched: Schedule | None, tol: Tolerance, limit: int,
                 stream: StreamValidator | None = None):
        self.inst, self.s, self.tol, self.limit = inst, sched, tol, limit
        self.found: list[Violation] = []
        self.times: dict[str, np.ndarray] = {}
        if stream is None:
            assert sched is not None
            self.bps = sched.breakpoints
            if self._structure():
                return
            self._negative()
            self._capacity()
            self._flow_times()
        elif stream._report(self):
            return
        self._coflow_times()
        self._release()
        self._volume()
        self._precedence()
        self._finishes_before()

    def _add(self, v: Violation) -> bool:
        self.found.append(v)
        return len(self.found) >= self.limit

    # 1 -- structure
    def _structure(self) -> bool:
        s, inst = self.s, self.inst
        stop = False
        dt = np.diff(s.breakpoints)
        bad = np.flatnonzero(dt < 0)
        if bad.size:
            k = int(bad[0])
            stop |= self._add(Violation(
                "malformed", f"breakpoints decrease at interval {k}: "
                f"{s.breakpoints[k]} -> {s.breakpoints[k + 1]}", interval=k))
        bad = np.flatnonzero((s.flow < 0) | (s.flow >= inst.n_flows))
        if bad.size:
            i = int(bad[0])
            stop |= self._add(Violation(
                "malformed", f"segment {i} names flow position {s.flow[i]}, instance has "
                f"{inst.n_flows} flows", interval=int(s.first[i]), flow=int(s.flow[i])))
        bad = np.flatnonzero(~np.isfinite(s.rate))
        if bad.size:
            i = int(bad[0])
            stop |= self._add(Violation(
                "malformed", f"flow position {s.flow[i]} has rate {s.rate[i]} in interval "
                f"{s.first[i]}",
                interval=int(s.first[i]), flow=int(s.flow[i])))
        if self.found:
            return True
        # overlapping segments of one flow
        order = np.lexsort((s.first, s.flow))
        f, a, b = s.flow[order], s.first[order], s.last[order]
        clash = np.flatnonzero((f[1:] == f[:-1]) & (a[1:] < b[:-1]))
        if clash.size:
            i = int(clash[0])
            stop |= self._add(Violation(
                "malformed", f"flow position {f[i]} has two rates in interval {a[i + 1]}",
                interval=int(a[i + 1]), flow=int(f[i])))
            return True
        del stop
        self.order = order  # segments by (flow, first), reused below
        return False

    # 2 -- non-negative rates
    def _negative(self) -> None:
        s = self.s
        bad = np.flatnonzero(s.rate < -self.tol.atol)
        for i in bad[np.argsort(s.first[bad], kind="stable")][: self.limit]:
            if self._negative_at(int(s.first[i]), int(s.flow[i]), float(s.rate[i])):
                return

    def _negative_at(self, k: int, f: int, rate: float) -> bool:
        return self._add(Violation(
            "negative_rate", f"flow position {f} has rate {rate:.6g} < 0 in interval {k} "
            f"(t={self.bps[k]:.6g})", interval=k, time=float(self.bps[k]), flow=f,
            amount=-rate))

    # 3 -- port capacity, by a sweep over segment starts and ends per port
    def _capacity(self) -> None:
        s, inst, tol = self.s, self.inst, self.tol
        K, n = s.n_intervals, s.n_segments
        if n == 0:
            return
        K1 = K + 1
        hits = []
        for side, (ports, cap) in enumerate(((inst.flow_src, inst.fabric.capacity_in),
                                             (inst.flow_dst, inst.fabric.capacity_out))):
            # +rate where a segment starts, -rate where it ends, keyed by (port, interval)
            keys = np.empty(2 * n, dtype=np.int64)
            keys[:n] = ports[s.flow]
            keys[:n] *= K1
            keys[n:] = keys[:n]
            keys[:n] += s.first
            keys[n:] += s.last
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
            ends = order >= n
            order[ends] -= n
            load = s.rate[order]
            del order
            load[ends] *= -1.0
            del ends
            np.cumsum(load, out=load)
            last = np.flatnonzero(np.r_[keys[1:] != keys[:-1], True])  # one per (port, k)
            gkey = keys[last]
            del keys
            gload = load[last]
            del load, last
            port_of = gkey // K1
            k_of = gkey - port_of * K1
            # the running sum restarts at each port (its deltas sum to zero up to rounding)
            first = np.r_[True, port_of[1:] != port_of[:-1]]
            carry = np.r_[0.0, gload[:-1]]
            at = np.maximum.accumulate(np.where(first, np.arange(gload.size), 0))
            gload -= carry[at]
            limit = cap[port_of] * (1 + tol.capacity_rtol) + tol.atol
            over = np.flatnonzero((gload > limit) & (k_of < K))
            over = over[np.lexsort((port_of[over], k_of[over]))][: self.limit]
            hits += [(int(k_of[j]), side, int(port_of[j]), float(gload[j])) for j in over]
        self._capacity_hits(hits)

    def _capacity_hits(self, hits: list[tuple[int, int, int, float]]) -> None:
        """Report ``(interval, side, port, load)`` overloads, earliest first."""
        hits.sort()
        bps, inst = self.bps, self.inst
        for k, side, port, load_v in hits[: self.limit]:
            cap = (inst.fabric.capacity_in if side == 0 else inst.fabric.capacity_out)[port]
            if self._add(Violation(
                    "capacity", f"port {_port_name(side, port)} carries {load_v:.9g} > capacity "
                    f"{cap:.9g} (by {load_v - cap:.6g}) in interval {k} "
                    f"[{bps[k]:.9g}, {bps[k + 1]:.9g})",
                    interval=k, time=float(bps[k]), port=_port_name(side, port),
                    amount=load_v - cap)):
                return

    # completion times (not a check by itself)
    def _flow_times(self) -> None:
        """Per flow: served volume, first service, completion (the instant the served volume
        reaches the volume, within the tolerance)."""
        s, inst, tol = self.s, self.inst, self.tol
        assert s is not None
        n = inst.n_flows
        order = self.order
        pos = order[s.rate[order] > 0]  # segments that serve, by (flow, first)
        f = s.flow[pos]
        rate = s.rate[pos]
        t0 = s.breakpoints[s.first[pos]]
        amount = rate * (s.breakpoints[s.last[pos]] - t0)
        vol = inst.flow_volume
        served = np.bincount(f, weights=amount, minlength=n)
        start = np.full(n, np.inf)
        completion = np.full(n, np.inf)
        if f.size:
            head = np.flatnonzero(np.r_[True, f[1:] != f[:-1]])
            start[f[head]] = t0[head]  # a flow's segments are sorted by time
            # volume served before each segment, within its flow (summed per flow: a global
            # cumsum minus offsets loses ~1e-8 on large traces)
            before = _prefix_within(f, amount)
            done = np.flatnonzero(before + amount >= vol[f] - (vol[f] * tol.volume_rtol
                                                                 + tol.atol))
            if done.size:
                done = done[np.r_[True, f[done][1:] != f[done][:-1]]]  # first per flow
                need = np.maximum(vol[f[done]] - before[done], 0.0)
                end = s.breakpoints[s.last[pos[done]]]
                completion[f[done]] = np.minimum(t0[done] + need / rate[done], end)
        self.served, self.flow_start, self.flow_completion = served, start, completion

    def _coflow_times(self) -> None:
        """Coflow and job times from the flow times; zero-volume flows and empty coflows
        complete when their coflow may start."""
        inst, tol = self.inst, self.tol
        start, completion = self.flow_start, self.flow_completion
        zero = inst.flow_volume == 0
        C = inst.n_coflows
        release = inst.release
        fc = inst.flow_coflow
        cstart = np.full(C, np.inf)
        np.minimum.at(cstart, fc[~zero], start[~zero])
        ccomp = np.full(C, -np.inf)
        np.maximum.at(ccomp, fc[~zero], completion[~zero])
        has_work = np.bincount(fc[~zero], minlength=C) > 0
        if not has_work.all():
            ptr, pred = inst.predecessors_ptr
            for c in inst.topological_order:
                if has_work[c]:
                    continue
                ready = release[c]
                pa, pb = ptr[c], ptr[c + 1]
                if pb > pa:
                    ready = max(ready, ccomp[pred[pa:pb]].max())
                cstart[c] = ccomp[c] = ready
        start[zero] = cstart[fc[zero]]
        completion[zero] = ccomp[fc[zero]]
        jcomp = np.full(inst.n_jobs, -np.inf)
        np.maximum.at(jcomp, inst.coflow_job, ccomp)
        empty = np.bincount(inst.coflow_job, minlength=inst.n_jobs) == 0
        jcomp[empty] = inst.job_release[empty]
        self.times = {"flow_start": start, "flow_completion": completion, "coflow_start": cstart,
                      "coflow_completion": ccomp, "job_completion": jcomp}
        finite = [np.abs(self.bps).max(initial=0.0), np.abs(release).max(initial=0.0)]
        self.time_tol = tol.time_rtol * max(1.0, *finite) + tol.atol

    # 4 -- releases
    def _release(self) -> None:
        if len(self.found) >= self.limit:
            return
        inst = self.inst
        start = self.times["flow_start"]
        rel = inst.release[inst.flow_coflow]
        early = np.flatnonzero(np.isfinite(start) & (start < rel - self.time_tol))
        for i in early[np.lexsort((early, start[early]))][: self.limit]:
            c = int(inst.flow_coflow[i])
            k = int(np.searchsorted(self.bps, start[i], side="right") - 1)
            if self._add(Violation(
                    "release", f"flow position {i} of coflow {_coflow_label(inst, c)} is sent "
                    f"from t={start[i]:.9g}, before its release {rel[i]:.9g} (by "
                    f"{rel[i] - start[i]:.6g})", interval=k, time=float(start[i]), flow=int(i),
                    coflow=c, amount=float(rel[i] - start[i]))):
                return

    # 5 -- volumes
    def _volume(self) -> None:
        if len(self.found) >= self.limit:
            return
        inst, tol = self.inst, self.tol
        vol, served = inst.flow_volume, self.served
        slack = vol * tol.volume_rtol + tol.atol
        for kind, bad in (("volume", np.flatnonzero(served < vol - slack)),
                          ("overserved", np.flatnonzero(served > vol + slack))):
            for i in bad[: self.limit]:
                c = int(inst.flow_coflow[i])
                word = "short by" if kind == "volume" else "over by"
                if self._add(Violation(
                        kind, f"flow position {i} of coflow {_coflow_label(inst, c)} is served "
                        f"{served[i]:.9g} of its volume {vol[i]:.9g} ({word} "
                        f"{abs(vol[i] - served[i]):.6g})", flow=int(i), coflow=c,
                        amount=float(abs(vol[i] - served[i])))):
                    return

    # 6 -- Starts-After
    def _precedence(self) -> None:
        if len(self.found) >= self.limit or not self.inst.starts_after.size:
            return
        inst = self.inst
        cstart, ccomp = self.times["coflow_start"], self.times["coflow_completion"]
        a, b = inst.starts_after[:, 0], inst.starts_after[:, 1]
        early = np.flatnonzero(np.isfinite(cstart[b]) & (cstart[b] < ccomp[a] - self.time_tol))
        for e in early[np.argsort(cstart[b][early], kind="stable")][: self.limit]:
            pa, sb = int(a[e]), int(b[e])
            fl = inst.flows_of(sb)
            f0 = int(fl[np.argmin(self.times["flow_start"][fl])])
            if self._add(Violation(
                    "precedence", f"coflow {_coflow_label(inst, sb)} starts at "
                    f"t={cstart[sb]:.9g} (flow position {f0}) before its Starts-After "
                    f"predecessor {_coflow_label(inst, pa)} completes at t={ccomp[pa]:.9g} (by "
                    f"{ccomp[pa] - cstart[sb]:.6g})", time=float(cstart[sb]), flow=f0,
                    coflow=sb, amount=float(ccomp[pa] - cstart[sb]))):
                return

    # 7 -- Finishes-Before
    def _finishes_before(self) -> None:
        if len(self.found) >= self.limit or not self.inst.finishes_before.size:
            return
        inst = self.inst
        ccomp = self.times["coflow_completion"]
        a, b = inst.finishes_before[:, 0], inst.finishes_before[:, 1]
        bad = np.flatnonzero(ccomp[b] < ccomp[a] - self.time_tol)
        for e in bad[: self.limit]:
            pa, sb = int(a[e]), int(b[e])
            if self._add(Violation(
                    "finishes_before", f"coflow {_coflow_label(inst, sb)} completes at "
                    f"t={ccomp[sb]:.9g}, before its Finishes-Before predecessor "
                    f"{_coflow_label(inst, pa)} at t={ccomp[pa]:.9g}", time=float(ccomp[sb]),
                    coflow=sb, amount=float(ccomp[pa] - ccomp[sb]))):
                return


# -- the streaming form: the validator consumes rate changes as a simulator makes them ----------
#
# A simulator that would store hundreds of millions of segments (per-flow fair sharing on a
# trace) hands its rate changes, in time order, to a StreamValidator instead.  Checks 2
# (negative rates) and 3 (port capacity) and the flow times are computed on the fly in
# O(flows + ports) memory; checks 4-7 then run on those times exactly as for a stored schedule.

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
        if comp[i] == np.inf and before + amount >= vol - (vol * tolv[1] + tolv[2]):
            comp[i] = min(since + max(vol - before, 0.0) / old, t)
        fl[i, 2] = before + amount
    if new > 0.0 and start[i] == np.inf:
        start[i] = t
    fl[i, 0] = new
    fl[i, 1] = t
    for side in range(2):
        u = ports[i, side]
        load[u] += new - old
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


@njit(cache=True, inline="always")
def _mark(load, dirty, dmark, ctr, u, delta):
    load[u] += delta
    if not dmark[u]:
        dmark[u] = True
        dirty[ctr[_CTR_DIRTY]] = u
        ctr[_CTR_DIRTY] += 1


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
        if comp[i] == np.inf and before + amount >= vol - (vol * tolv[1] + tolv[2]):
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

    It makes the checks and gives the times of :func:`validate` (same tolerances and
    messages) in memory proportional to the flows and ports, whatever the number of changes.
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
    5. ``sv.result(meta)``: the :class:`ValidSchedule` (``schedule`` is ``None``), or
       :class:`InfeasibleSchedule` naming the first violation.

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
            tolerance=np.array([tol.capacity_rtol, tol.volume_rtol, tol.atol]))
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
        :class:`InfeasibleSchedule`.  ``instance``: check the releases, precedence and
        metrics against this instance instead (same flows, e.g. releases known only after
        the run)."""
        inst = self.instance if instance is None else instance
        if inst is None:
            raise ValueError("StreamValidator.result: built from flows, it needs instance=")
        an = _Analysis(inst, None, self.tol, self.limit, stream=self)
        if an.found:
            raise InfeasibleSchedule(an.found[0], an.found)
        bps = self.breakpoints
        meta = {**(meta or {}), "rate_changes": self.changes}
        return ValidSchedule(inst, None, self.tol, **an.times, start=float(bps[0]),
                             end=float(bps[-1]), meta=meta)

    def _report(self, an: _Analysis) -> bool:
        """Add the streamed violations and flow times to ``an``; ``True`` when malformed."""
        st = self.state
        row, fl = st.row, st.flow
        rate = fl[row, 0]
        ctr, hit_i, hit_f = st.counters, st.hit_index, st.hit_value
        an.bps = self.breakpoints
        bad = ctr[_CTR_HITS + _HIT_BAD]
        if bad or np.any(np.diff(an.bps) < 0):
            if bad and self.groups is not None:
                k, f = (int(x) for x in hit_i[_HIT_BAD, 0])
                val = float(hit_f[_HIT_BAD, 0])
                if f < 0:
                    msg = (f"rate change {val} of rate group {-1 - f} at breakpoint {k} (group "
                           "out of range, rate not finite, or out of time order)")
                else:
                    msg = (f"flow position {f} at breakpoint {k}: "
                           f"{_MEMBER_BAD.get(int(val), 'malformed membership')}")
                an._add(Violation("malformed", msg, interval=k, flow=f if f >= 0 else None))
            elif bad:
                k, f = (int(x) for x in hit_i[_HIT_BAD, 0])
                an._add(Violation("malformed", f"rate change {hit_f[_HIT_BAD, 0]} of flow "
                                  f"position {f} at breakpoint {k} (flow out of range, rate "
                                  "not finite, or out of time order)", interval=k, flow=f))
            else:
                k = int(np.flatnonzero(np.diff(an.bps) < 0)[0])
                an._add(Violation("malformed", f"breakpoints decrease at interval {k}",
                                  interval=k))
            return True
        if np.any(rate != 0):
            f = int(np.flatnonzero(rate != 0)[0])
            an._add(Violation("malformed", f"flow position {f} still has rate {rate[f]} at "
                              "the last breakpoint", flow=f))
            return True
        gr = self.groups
        if gr is not None and np.any(gr.member[row, 0] >= 0):
            f = int(np.flatnonzero(gr.member[row, 0] >= 0)[0])
            an._add(Violation("malformed", f"flow position {f} is still in rate group "
                              f"{int(gr.member[row[f], 0])} at the last breakpoint", flow=f))
            return True
        for j in range(int(ctr[_CTR_HITS + _HIT_NEG])):
            k, f = (int(x) for x in hit_i[_HIT_NEG, j])
            if f < 0:  # a rate group's change (grouped protocol)
                assert gr is not None
                g = -1 - f
                m = an.inst.ports
                u, w = (int(x) for x in gr.ports[g])
                if an._add(Violation(
                        "negative_rate", f"rate group {g} (ports in {u}, out {w - m}) has "
                        f"rate {hit_f[_HIT_NEG, j]:.6g} < 0 in interval {k} "
                        f"(t={an.bps[k]:.6g})", interval=k, time=float(an.bps[k]),
                        port=_port_name(0, u), amount=-float(hit_f[_HIT_NEG, j]))):
                    return False
                continue
            if an._negative_at(k, f, float(hit_f[_HIT_NEG, j])):
                return False
        m = an.inst.ports
        hits = []
        for j in range(int(ctr[_CTR_HITS + _HIT_CAP])):
            k, u = (int(x) for x in hit_i[_HIT_CAP, j])
            hits.append((k, int(u >= m), u % m, float(hit_f[_HIT_CAP, j])))
        an._capacity_hits(hits)
        an.served, an.flow_start, an.flow_completion = fl[row, 2], st.start[row], \
            st.completion[row]
        return False


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only, contiguous view of ``a`` (a copy only when it is not contiguous): the big
    per-flow arrays go to a kernel without a copy, and numba compiles one specialization for
    them whatever the caller's writability."""
    v = np.ascontiguousarray(a).view()
    v.flags.writeable = False
    return v


def validate_changes(instance: Instance, breakpoints: np.ndarray, flow: np.ndarray,
                     k: np.ndarray, rate: np.ndarray, tol: Tolerance | None = None
                     ) -> ValidSchedule:
    """Validate a schedule given as its rate changes in time order: flow ``flow[i]`` runs at
    ``rate[i]`` from breakpoint ``k[i]`` until its next change (every flow must end at rate 0).
    Same checks, tolerances and messages as :func:`validate`, in memory proportional to the
    flows and ports, not to the changes; ``schedule`` of the result is ``None``.  This is the
    :class:`StreamValidator` protocol driven from arrays."""
    bps = np.asarray(breakpoints, dtype=np.float64)
    sv = StreamValidator(instance, tol)
    buf_i, buf_d = sv.buffer
    n = len(flow)
    size = buf_d.size
    rest = 0
    for a in range(0, n, size):
        b = min(a + size, n)
        buf_i[0, : b - a] = flow[a:b]
        buf_i[1, : b - a] = k[a:b]
        buf_d[: b - a] = rate[a:b]
        if b - a == size:
            sv.consume(size, bps)
        else:
            rest = b - a
    sv.finish(bps, rest)
    return sv.result()


def schedule_changes(schedule: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A stored schedule as rate changes in time order ``(flow, k, rate)`` (ends before starts
    at one breakpoint), the input of :func:`validate_changes`."""
    s = schedule
    n = s.n_segments
    flow = np.concatenate([s.flow, s.flow])
    k = np.concatenate([s.last, s.first])
    rate = np.concatenate([np.zeros(n), s.rate])
    order = np.lexsort((np.r_[np.zeros(n), np.ones(n)], k))
    return flow[order], k[order], rate[order]


def check_all(instance: Instance, schedule: Schedule, tol: Tolerance | None = None,
              limit: int = 20) -> list[Violation]:
    """Up to ``limit`` violations, in check order (empty when feasible)."""
    return _Analysis(instance, schedule, tol or Tolerance(), limit).found


def check(instance: Instance, schedule: Schedule, tol: Tolerance | None = None
          ) -> Violation | None:
    """The first violation, or ``None`` when the schedule is feasible."""
    found = check_all(instance, schedule, tol, limit=1)
    return found[0] if found else None


def validate(instance: Instance, schedule: Schedule, tol: Tolerance | None = None
             ) -> ValidSchedule:
    """Check ``schedule`` against ``instance``; return its completion times or raise
    :class:`InfeasibleSchedule` with the first violation."""
    if not isinstance(schedule, Schedule):
        raise TypeError(
            f"validate: expected a Schedule, got {type(schedule).__name__}"
            + (": the algorithm or solve returned no schedule (an LP/MILP solve that ended "
               "infeasible, or at its time limit without a solution, has none: see its "
               "status)" if schedule is None else ""))
    tol = tol or Tolerance()
    an = _Analysis(instance, schedule, tol, limit=20)
    if an.found:
        raise InfeasibleSchedule(an.found[0], an.found)
    return ValidSchedule(instance, schedule, tol, **an.times, start=schedule.start,
                         end=schedule.end, meta=dict(schedule.meta))

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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

__all__ = [
    "InfeasibleSchedule",
    "Tolerance",
    "ValidSchedule",
    "Violation",
    "check",
    "check_all",
    "validate",
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
    absolute times in the instance's time unit.
    """

    instance: Instance
    schedule: Schedule
    tolerance: Tolerance
    flow_start: np.ndarray
    flow_completion: np.ndarray
    coflow_start: np.ndarray
    coflow_completion: np.ndarray
    job_completion: np.ndarray = field(repr=False)


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
    cid = inst.coflow_id[c]
    return repr(cid.item() if isinstance(cid, np.generic) else cid)


class _Analysis:
    """Computes every check once; violations are collected per kind in check order."""

    def __init__(self, inst: Instance, sched: Schedule, tol: Tolerance, limit: int):
        self.inst, self.s, self.tol, self.limit = inst, sched, tol, limit
        self.found: list[Violation] = []
        self.times: dict[str, np.ndarray] = {}
        if self._structure():
            return
        self._negative()
        self._capacity()
        self._completion()
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
                "malformed", f"segment {i} names flow {s.flow[i]}, instance has "
                f"{inst.n_flows} flows", interval=int(s.first[i]), flow=int(s.flow[i])))
        bad = np.flatnonzero(~np.isfinite(s.rate))
        if bad.size:
            i = int(bad[0])
            stop |= self._add(Violation(
                "malformed", f"flow {s.flow[i]} has rate {s.rate[i]} in interval {s.first[i]}",
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
                "malformed", f"flow {f[i]} has two rates in interval {a[i + 1]}",
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
            if self._add(Violation(
                    "negative_rate", f"flow {s.flow[i]} has rate {s.rate[i]:.6g} < 0 in "
                    f"interval {s.first[i]} (t={s.breakpoints[s.first[i]]:.6g})",
                    interval=int(s.first[i]), time=float(s.breakpoints[s.first[i]]),
                    flow=int(s.flow[i]), amount=float(-s.rate[i]))):
                return

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
        hits.sort()
        for k, side, port, load_v in hits[: self.limit]:
            cap = (inst.fabric.capacity_in if side == 0 else inst.fabric.capacity_out)[port]
            if self._add(Violation(
                    "capacity", f"port {_port_name(side, port)} carries {load_v:.9g} > capacity "
                    f"{cap:.9g} (by {load_v - cap:.6g}) in interval {k} "
                    f"[{s.breakpoints[k]:.9g}, {s.breakpoints[k + 1]:.9g})",
                    interval=k, time=float(s.breakpoints[k]), port=_port_name(side, port),
                    amount=load_v - cap)):
                return

    # completion times (not a check by itself)
    def _completion(self) -> None:
        s, inst, tol = self.s, self.inst, self.tol
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
        zero = vol == 0
        self.served = served
        # coflow times; zero-volume flows and empty coflows complete when their coflow may start
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
        finite = [np.abs(s.breakpoints).max(initial=0.0), np.abs(release).max(initial=0.0)]
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
            k = int(np.searchsorted(self.s.breakpoints, start[i], side="right") - 1)
            if self._add(Violation(
                    "release", f"flow {i} of coflow {_coflow_label(inst, c)} is sent from "
                    f"t={start[i]:.9g}, before its release {rel[i]:.9g} (by "
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
                        kind, f"flow {i} of coflow {_coflow_label(inst, c)} is served "
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
                    f"t={cstart[sb]:.9g} (flow {f0}) before its Starts-After predecessor "
                    f"{_coflow_label(inst, pa)} completes at t={ccomp[pa]:.9g} (by "
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
    tol = tol or Tolerance()
    an = _Analysis(instance, schedule, tol, limit=20)
    if an.found:
        raise InfeasibleSchedule(an.found[0], an.found)
    return ValidSchedule(instance, schedule, tol, **an.times)

"""The validator's stored part: a whole :class:`~coflowopt.Schedule` checked against an
:class:`~coflowopt.Instance`.

:func:`validate` (and :func:`check`, :func:`check_all`) checks, in this order:

1. well-formed: flow positions in range, no flow in two segments over one interval, finite
   rates, non-decreasing breakpoints;
2. rates are non-negative;
3. port capacity: in every interval, the rates through each ingress and egress port sum to at
   most its capacity ``B_l`` (the fluid fabric of De Pellegrini et al., "Fair Coflow Scheduling
   via Controlled Slowdown", IEEE TPDS 2022, Sec. III, capacity constraint (8));
4. nothing is sent before its coflow's release (``max(r_c, rho_job)``);
5. every flow receives its volume, neither less nor more;
6. Starts-After: no flow of a coflow is sent before every flow of each predecessor finished
   (Shafiee & Ghaderi, "Scheduling Coflows with Dependency Graph", IEEE/ACM ToN 2021, Sec. III);
7. Finishes-Before: a coflow does not finish before its Finishes-Before predecessor (Sun et al.,
   "DeepWeave", IJCAI 2020, its job-DAG problem statement).

Checks 1-3 and the per-flow times (served volume, first service, completion) are computed here
from the segments, vectorized; checks 4-7 are the :class:`~coflowopt.validate.report.Report`'s,
run on those times exactly as for a streamed schedule.  Each violation is reported to the
:class:`~coflowopt.validate.report.Report` as it is located: :func:`validate` returns a
:class:`~coflowopt.validate.report.ValidSchedule` with the completion times that the metrics
use, or raises :class:`~coflowopt.validate.report.InfeasibleSchedule` naming the first
violation in the order above (within a kind: the earliest interval, then the lowest port or
flow).  Tolerances are explicit and relative (:class:`~coflowopt.validate.report.Tolerance`).

:func:`schedule_changes` turns a stored schedule into its rate changes and
:func:`validate_changes` checks rate changes given as arrays with the streamed part
(:class:`~coflowopt.validate.streamed.StreamValidator`): same checks, same messages.
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.validate.report import Report, Tolerance, ValidSchedule, Violation
from coflowopt.validate.streamed import StreamValidator

__all__ = ["analyse", "check", "check_all", "schedule_changes", "validate", "validate_changes"]


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


def analyse(instance: Instance, schedule: Schedule, tol: Tolerance | None = None,
            limit: int = 20) -> Report:
    """Every check of ``schedule`` once: the :class:`~coflowopt.validate.report.Report` with
    up to ``limit`` violations per kind, in check order, and (when well-formed) the times."""
    report = Report(instance, tol or Tolerance(), limit, schedule.breakpoints)
    order = _structure(report, schedule)
    if order is None:
        return report
    _negative(report, schedule)
    report.capacity(_capacity_hits(instance, schedule, report.tol, limit))
    report.outcome(*_flow_times(instance, schedule, report.tol, order))
    return report


# 1 -- structure
def _structure(report: Report, s: Schedule) -> np.ndarray | None:
    """Report malformed segments; ``None`` when there are any, else the segments ordered by
    (flow, first), which the flow times reuse."""
    n_flows = report.instance.n_flows
    bad = np.flatnonzero(np.diff(s.breakpoints) < 0)
    if bad.size:
        k = int(bad[0])
        report.malformed(f"breakpoints decrease at interval {k}: {s.breakpoints[k]} -> "
                         f"{s.breakpoints[k + 1]}", interval=k)
    bad = np.flatnonzero((s.flow < 0) | (s.flow >= n_flows))
    if bad.size:
        i = int(bad[0])
        report.malformed(f"segment {i} names flow position {s.flow[i]}, instance has "
                         f"{n_flows} flows", interval=int(s.first[i]), flow=int(s.flow[i]))
    bad = np.flatnonzero(~np.isfinite(s.rate))
    if bad.size:
        i = int(bad[0])
        report.malformed(f"flow position {s.flow[i]} has rate {s.rate[i]} in interval "
                         f"{s.first[i]}", interval=int(s.first[i]), flow=int(s.flow[i]))
    if report.found:
        return None
    order = np.lexsort((s.first, s.flow))
    f, a, b = s.flow[order], s.first[order], s.last[order]
    clash = np.flatnonzero((f[1:] == f[:-1]) & (a[1:] < b[:-1]))
    if clash.size:
        i = int(clash[0])
        report.malformed(f"flow position {f[i]} has two rates in interval {a[i + 1]}",
                         interval=int(a[i + 1]), flow=int(f[i]))
        return None
    return order


# 2 -- non-negative rates
def _negative(report: Report, s: Schedule) -> None:
    bad = np.flatnonzero(s.rate < -report.tol.atol)
    for i in bad[np.argsort(s.first[bad], kind="stable")][: report.limit]:
        if report.negative_rate(int(s.first[i]), int(s.flow[i]), float(s.rate[i])):
            return


# 3 -- port capacity, by a sweep over segment starts and ends per port
def _capacity_hits(inst: Instance, s: Schedule, tol: Tolerance, limit: int
                   ) -> list[tuple[int, int, int, float]]:
    """Up to ``limit`` overloads ``(interval, side, port, load)`` per side."""
    K, n = s.n_intervals, s.n_segments
    hits: list[tuple[int, int, int, float]] = []
    if n == 0:
        return hits
    K1 = K + 1
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
        over = np.flatnonzero((gload > tol.capacity_limit(cap[port_of])) & (k_of < K))
        over = over[np.lexsort((port_of[over], k_of[over]))][:limit]
        hits += [(int(k_of[j]), side, int(port_of[j]), float(gload[j])) for j in over]
    return hits


# the flow times (not a check by themselves: the report's checks 4-7 read them)
def _flow_times(inst: Instance, s: Schedule, tol: Tolerance, order: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per flow: served volume, first service, completion (the instant the served volume
    reaches the volume, within the tolerance); ``order``: segments by (flow, first)."""
    n = inst.n_flows
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
        done = np.flatnonzero(before + amount >= vol[f] - tol.volume_slack(vol[f]))
        if done.size:
            done = done[np.r_[True, f[done][1:] != f[done][:-1]]]  # first per flow
            need = np.maximum(vol[f[done]] - before[done], 0.0)
            end = s.breakpoints[s.last[pos[done]]]
            completion[f[done]] = np.minimum(t0[done] + need / rate[done], end)
    return served, start, completion


def check_all(instance: Instance, schedule: Schedule, tol: Tolerance | None = None,
              limit: int = 20) -> list[Violation]:
    """Up to ``limit`` violations, in check order (empty when feasible)."""
    return analyse(instance, schedule, tol, limit).found


def check(instance: Instance, schedule: Schedule, tol: Tolerance | None = None
          ) -> Violation | None:
    """The first violation, or ``None`` when the schedule is feasible."""
    found = check_all(instance, schedule, tol, limit=1)
    return found[0] if found else None


def validate(instance: Instance, schedule: Schedule, tol: Tolerance | None = None
             ) -> ValidSchedule:
    """Check ``schedule`` against ``instance``; return its completion times or raise
    :class:`~coflowopt.validate.report.InfeasibleSchedule` with the first violation."""
    if not isinstance(schedule, Schedule):
        raise TypeError(
            f"validate: expected a Schedule, got {type(schedule).__name__}"
            + (": the algorithm or solve returned no schedule (an LP/MILP solve that ended "
               "infeasible, or at its time limit without a solution, has none: see its "
               "status)" if schedule is None else ""))
    return analyse(instance, schedule, tol).result(
        schedule, start=schedule.start, end=schedule.end, meta=dict(schedule.meta))


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


def validate_changes(instance: Instance, breakpoints: np.ndarray, flow: np.ndarray,
                     k: np.ndarray, rate: np.ndarray, tol: Tolerance | None = None
                     ) -> ValidSchedule:
    """Validate a schedule given as its rate changes in time order: flow ``flow[i]`` runs at
    ``rate[i]`` from breakpoint ``k[i]`` until its next change (every flow must end at rate 0).
    Same checks, tolerances and messages as :func:`validate`, in memory proportional to the
    flows and ports, not to the changes; ``schedule`` of the result is ``None``.  This is the
    :class:`~coflowopt.validate.streamed.StreamValidator` protocol driven from arrays."""
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

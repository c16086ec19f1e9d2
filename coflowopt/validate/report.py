"""The validator's reporting part: tolerances, violations, and a run's outcome checked.

Both checkers (:mod:`coflowopt.validate.stored` for a stored :class:`~coflowopt.Schedule`,
:mod:`coflowopt.validate.streamed` for rate changes consumed as a simulator makes them) hand
what they found to one :class:`Report`:

- the violations they located themselves (malformed input, negative rates, port capacity
  ``Σ_i χ^i(ℓ) ρ^i ≤ B_ℓ`` of the fluid fabric model, De Pellegrini et al., "Fair Coflow
  Scheduling via Controlled Slowdown", IEEE TPDS 2022, Sec. III, its capacity constraint (8))
  through :meth:`Report.malformed`, :meth:`Report.negative_rate` and :meth:`Report.capacity`;
- then the per-flow served volume, first service and completion, from which
  :meth:`Report.outcome` derives coflow and job completion times (``C_j`` = the latest of
  its flows, Shafiee & Ghaderi, "Scheduling Coflows with Dependency Graph", IEEE/ACM ToN 2021,
  Sec. III) and runs the checks on them: release (``max(r_c, rho_j)``), volume, Starts-After
  (Shafiee & Ghaderi, Sec. III: no unit of a coflow before each predecessor completed) and
  Finishes-Before (Sun et al., "DeepWeave", IJCAI 2020, its job-DAG problem statement: a coflow
  does not complete before its predecessor).

Every violation is a :class:`Violation` (kind, message, where, by how much), collected per kind
in check order up to a limit; :meth:`Report.result` raises :class:`InfeasibleSchedule` carrying
the first one (and the rest), or returns the :class:`ValidSchedule` with the times the metrics
use.  Tolerances are explicit and relative (:class:`Tolerance`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

__all__ = ["InfeasibleSchedule", "Report", "Tolerance", "ValidSchedule", "Violation"]


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

    def capacity_limit(self, capacity: np.ndarray) -> np.ndarray:
        """The largest accepted load of ports of capacity ``B_l``."""
        return capacity * (1 + self.capacity_rtol) + self.atol

    def volume_slack(self, volume: np.ndarray) -> np.ndarray:
        """How far the served volume may be from ``volume`` (a flow is complete once it is
        served ``volume - slack``)."""
        return volume * self.volume_rtol + self.atol

    def as_array(self) -> np.ndarray:
        """``[capacity_rtol, volume_rtol, atol]``: the form the compiled checks read (the
        same rules as :meth:`capacity_limit` and :meth:`volume_slack`)."""
        return np.array([self.capacity_rtol, self.volume_rtol, self.atol])


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
    """Raised by :func:`~coflowopt.validate.validate`; carries the first :class:`Violation`."""

    def __init__(self, violation: Violation, all_violations: list[Violation] | None = None):
        self.violation = violation
        self.violations = all_violations or [violation]
        super().__init__(str(violation))


@dataclass(frozen=True, eq=False)
class ValidSchedule:
    """A schedule that passed :func:`~coflowopt.validate.validate`, with the times the
    metrics need.

    ``flow_start``/``flow_completion``: first time a flow is served / the instant its last unit
    arrives (a zero-volume flow starts and completes when its coflow may start).
    ``coflow_completion`` (``C_j``), ``coflow_start``, ``job_completion`` (``C_j`` of jobs), all
    absolute times in the instance's time unit.  ``start``/``end``: the schedule's first and
    last breakpoints.  ``schedule`` is ``None`` when the validator consumed the rates as a
    simulator produced them (:func:`~coflowopt.validate.validate_changes`) and nothing stored
    them.
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


def _port_name(side: int, p: int) -> str:
    return f"{'in' if side == 0 else 'out'} {p}"


def _coflow_label(inst: Instance, c: int) -> str:
    """A coflow named by its id, with its position (messages say which number is which)."""
    cid = inst.coflow_id[c]
    return f"id {cid.item() if isinstance(cid, np.generic) else cid!r} (position {c})"


class Report:
    """The violations of one schedule, in check order, and its times once they are known.

    A checker makes one per schedule (``breakpoints``: the schedule's breakpoint times, which
    locate intervals in messages and scale the time tolerance) and reports in check order:
    malformed input (after which it stops), negative rates, capacity, then
    :meth:`outcome` with the flow times.  Each report method returns ``True`` once ``limit``
    violations are kept (the caller may stop looking).
    """

    def __init__(self, instance: Instance, tol: Tolerance, limit: int,
                 breakpoints: np.ndarray):
        self.instance, self.tol, self.limit = instance, tol, limit
        self.breakpoints = breakpoints
        self.found: list[Violation] = []
        self.times: dict[str, np.ndarray] = {}
        self.time_tol = 0.0

    @property
    def full(self) -> bool:
        """``limit`` violations are kept."""
        return len(self.found) >= self.limit

    def add(self, v: Violation) -> bool:
        """Keep ``v``; ``True`` when the report is now :attr:`full`."""
        self.found.append(v)
        return self.full

    # 1 -- structure: the checker words the message (it knows its input's form)
    def malformed(self, message: str, *, interval: int | None = None,
                  flow: int | None = None) -> bool:
        """Malformed input (flow out of range, rate not finite, breakpoints decreasing, ...)."""
        return self.add(Violation("malformed", message, interval=interval, flow=flow))

    # 2 -- non-negative rates
    def negative_rate(self, k: int, flow: int, rate: float) -> bool:
        """Flow position ``flow`` runs at ``rate < 0`` in interval ``k``."""
        t = float(self.breakpoints[k])
        return self.add(Violation(
            "negative_rate", f"flow position {flow} has rate {rate:.6g} < 0 in interval {k} "
            f"(t={t:.6g})", interval=k, time=t, flow=flow, amount=-rate))

    def negative_group_rate(self, k: int, group: int, ingress: int, egress: int,
                            rate: float) -> bool:
        """Rate group ``group`` (ports ``ingress``, ``egress``) runs at ``rate < 0`` in
        interval ``k`` (the streamed check's grouped protocol)."""
        t = float(self.breakpoints[k])
        return self.add(Violation(
            "negative_rate", f"rate group {group} (ports in {ingress}, out {egress}) has "
            f"rate {rate:.6g} < 0 in interval {k} (t={t:.6g})", interval=k, time=t,
            port=_port_name(0, ingress), amount=-rate))

    # 3 -- port capacity
    def capacity(self, hits: list[tuple[int, int, int, float]]) -> bool:
        """Overloads ``(interval, side, port, load)`` (side 0: ingress, 1: egress), reported
        earliest first, then by side and port."""
        hits = sorted(hits)
        bps, fabric = self.breakpoints, self.instance.fabric
        for k, side, port, load in hits[: self.limit]:
            cap = (fabric.capacity_in if side == 0 else fabric.capacity_out)[port]
            name = _port_name(side, port)
            if self.add(Violation(
                    "capacity", f"port {name} carries {load:.9g} > capacity {cap:.9g} (by "
                    f"{load - cap:.6g}) in interval {k} [{bps[k]:.9g}, {bps[k + 1]:.9g})",
                    interval=k, time=float(bps[k]), port=name, amount=load - cap)):
                return True
        return self.full

    # 4-7 -- what follows from the flow times
    def outcome(self, served: np.ndarray, flow_start: np.ndarray,
                flow_completion: np.ndarray) -> None:
        """The run's outcome per flow (volume served, first service, completion: ``inf`` when
        never served / never complete): derive the coflow and job times (:attr:`times`) and
        check releases, volumes, Starts-After and Finishes-Before.  ``flow_start`` and
        ``flow_completion`` gain the times of zero-volume flows (in place)."""
        self._times(flow_start, flow_completion)
        self._release()
        self._volume(served)
        self._precedence()
        self._finishes_before()

    def result(self, schedule: Schedule | None, *, start: float, end: float,
               meta: dict) -> ValidSchedule:
        """The :class:`ValidSchedule` (after :meth:`outcome`), or :class:`InfeasibleSchedule`
        with the first violation."""
        if self.found:
            raise InfeasibleSchedule(self.found[0], self.found)
        return ValidSchedule(self.instance, schedule, self.tol, **self.times, start=start,
                             end=end, meta=meta)

    def _times(self, start: np.ndarray, completion: np.ndarray) -> None:
        """Coflow and job times from the flow times; zero-volume flows and empty coflows
        complete when their coflow may start."""
        inst, tol = self.instance, self.tol
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
        finite = [np.abs(self.breakpoints).max(initial=0.0), np.abs(release).max(initial=0.0)]
        self.time_tol = tol.time_rtol * max(1.0, *finite) + tol.atol

    # 4 -- releases
    def _release(self) -> None:
        if self.full:
            return
        inst = self.instance
        start = self.times["flow_start"]
        rel = inst.release[inst.flow_coflow]
        early = np.flatnonzero(np.isfinite(start) & (start < rel - self.time_tol))
        for i in early[np.lexsort((early, start[early]))][: self.limit]:
            c = int(inst.flow_coflow[i])
            k = int(np.searchsorted(self.breakpoints, start[i], side="right") - 1)
            if self.add(Violation(
                    "release", f"flow position {i} of coflow {_coflow_label(inst, c)} is sent "
                    f"from t={start[i]:.9g}, before its release {rel[i]:.9g} (by "
                    f"{rel[i] - start[i]:.6g})", interval=k, time=float(start[i]), flow=int(i),
                    coflow=c, amount=float(rel[i] - start[i]))):
                return

    # 5 -- volumes
    def _volume(self, served: np.ndarray) -> None:
        if self.full:
            return
        inst = self.instance
        vol = inst.flow_volume
        slack = self.tol.volume_slack(vol)
        for kind, bad in (("volume", np.flatnonzero(served < vol - slack)),
                          ("overserved", np.flatnonzero(served > vol + slack))):
            for i in bad[: self.limit]:
                c = int(inst.flow_coflow[i])
                word = "short by" if kind == "volume" else "over by"
                if self.add(Violation(
                        kind, f"flow position {i} of coflow {_coflow_label(inst, c)} is served "
                        f"{served[i]:.9g} of its volume {vol[i]:.9g} ({word} "
                        f"{abs(vol[i] - served[i]):.6g})", flow=int(i), coflow=c,
                        amount=float(abs(vol[i] - served[i])))):
                    return

    # 6 -- Starts-After
    def _precedence(self) -> None:
        if self.full or not self.instance.starts_after.size:
            return
        inst = self.instance
        cstart, ccomp = self.times["coflow_start"], self.times["coflow_completion"]
        a, b = inst.starts_after[:, 0], inst.starts_after[:, 1]
        early = np.flatnonzero(np.isfinite(cstart[b]) & (cstart[b] < ccomp[a] - self.time_tol))
        for e in early[np.argsort(cstart[b][early], kind="stable")][: self.limit]:
            pa, sb = int(a[e]), int(b[e])
            fl = inst.flows_of(sb)
            f0 = int(fl[np.argmin(self.times["flow_start"][fl])])
            if self.add(Violation(
                    "precedence", f"coflow {_coflow_label(inst, sb)} starts at "
                    f"t={cstart[sb]:.9g} (flow position {f0}) before its Starts-After "
                    f"predecessor {_coflow_label(inst, pa)} completes at t={ccomp[pa]:.9g} (by "
                    f"{ccomp[pa] - cstart[sb]:.6g})", time=float(cstart[sb]), flow=f0,
                    coflow=sb, amount=float(ccomp[pa] - cstart[sb]))):
                return

    # 7 -- Finishes-Before
    def _finishes_before(self) -> None:
        if self.full or not self.instance.finishes_before.size:
            return
        inst = self.instance
        ccomp = self.times["coflow_completion"]
        a, b = inst.finishes_before[:, 0], inst.finishes_before[:, 1]
        bad = np.flatnonzero(ccomp[b] < ccomp[a] - self.time_tol)
        for e in bad[: self.limit]:
            pa, sb = int(a[e]), int(b[e])
            if self.add(Violation(
                    "finishes_before", f"coflow {_coflow_label(inst, sb)} completes at "
                    f"t={ccomp[sb]:.9g}, before its Finishes-Before predecessor "
                    f"{_coflow_label(inst, pa)} at t={ccomp[pa]:.9g}", time=float(ccomp[sb]),
                    coflow=sb, amount=float(ccomp[pa] - ccomp[sb]))):
                return

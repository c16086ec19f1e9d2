"""Slotted schedules of the DAG family: the slot plan (run-length form) and its executor.

Units [P] (spec dag-coflows 1.1, 2.5).  The algorithms of this family work in unit slots on
capacity-1 ports with integer demands.  An :class:`~coflowopt.Instance` has ports of one
capacity ``c`` (a non-uniform fabric is refused: :func:`uniform_fabric_refusal`) and real
volumes.  With ``quantum`` (volume per slot, default 1.0) a flow's integer demand is
``ceil(volume / quantum - 1e-9)`` (at least 1 for a positive volume, 0 for a zero volume),
one slot lasts ``quantum / c`` time units, and slot ``s`` is
``[origin + s quantum / c, origin + (s + 1) quantum / c)``.  Theory instances (capacity 1,
integer volumes, quantum 1) are then exact.

Execution is real-first [P]: a flow's pieces run at the port rate ``c`` in time order and its
last piece is cut short so that it serves exactly its real volume (its ports idle for the rest
of that slot); dummy traffic of the augmentation (spec 2.2) is never sent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.validate import Tolerance, ValidSchedule, validate_changes

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
    none)."""

    flow: np.ndarray    # int64 (P,)
    start: np.ndarray   # int64 (P,)
    length: np.ndarray  # int64 (P,)

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
    """Integer demand of every flow in slots [P]: ``ceil(volume / quantum - 1e-9)``, at least 1
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


def timed_segments(instance: Instance, plan: SlotPlan, quantum: float = 1.0,
                   origin: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Real-first execution of ``plan`` as timed segments ``(flow, t0, t1)``: flow ``flow[i]``
    runs at the port rate ``c`` during ``[t0[i], t1[i])``.  Pieces of one flow are taken in
    time order, the last one needed is cut short at the flow's real volume, later ones are
    dropped; consecutive pieces of one flow form one segment."""
    q = float(quantum)
    c = float(instance.fabric.capacity_in[0])
    dt = q / c
    vol = instance.flow_volume
    if plan.flow.size:
        bad = np.flatnonzero((plan.flow < 0) | (plan.flow >= instance.n_flows)
                             | (plan.length <= 0) | (plan.start < 0))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"slot plan piece {i}: flow {plan.flow[i]}, start {plan.start[i]}, "
                             f"length {plan.length[i]} (flow out of range or empty piece)")
    else:
        z = np.zeros(0)
        return np.zeros(0, _I64), z, z
    o = np.lexsort((plan.start, plan.flow))
    f, s, n = plan.flow[o], plan.start[o], plan.length[o]
    # slots of earlier pieces of the same flow
    cum = np.cumsum(n)
    head = np.r_[True, f[1:] != f[:-1]]
    base = np.maximum.accumulate(np.where(head, cum - n, 0))
    before = (cum - n) - base
    need = vol[f] - before * q                      # real volume left when the piece begins
    tiny = 1e-9 * q
    keep = need > tiny
    f, s, n, need = f[keep], s[keep], n[keep], need[keep]
    full = need >= n * q - tiny
    # merge a piece into the previous one of its flow when they touch (the previous is full)
    if f.size > 1:
        join = (f[1:] == f[:-1]) & (s[1:] == s[:-1] + n[:-1])
        if join.any():
            headm = np.r_[True, ~join]
            gid = np.cumsum(headm) - 1
            n_m = np.bincount(gid, weights=n).astype(_I64)
            # a merged run's volume left is its first piece's; it is full iff its last is
            last_idx = np.r_[np.flatnonzero(headm)[1:] - 1, f.size - 1]
            f, s, n, need, full = f[headm], s[headm], n_m, need[headm], full[last_idx]
    t0 = origin + s * dt
    t1 = np.where(full, origin + (s + n) * dt, t0 + need / c)
    return f, t0, t1


def emit_segments(instance: Instance, flow: np.ndarray, t0: np.ndarray, t1: np.ndarray, *,
                  origin: float = 0.0, check: Tolerance | None = None,
                  meta: dict | None = None) -> Schedule | ValidSchedule:
    """Timed segments at the port rate (no two of one flow overlapping) as a
    :class:`~coflowopt.Schedule`, or, with ``check``, streamed into
    :func:`coflowopt.validate.validate_changes` (the :class:`~coflowopt.ValidSchedule`)."""
    c = float(instance.fabric.capacity_in[0])
    flow = np.asarray(flow, dtype=_I64)
    n = flow.size
    if n:
        bps, inv = np.unique(np.concatenate([t0, t1]), return_inverse=True)
        first, last = inv[:n].astype(_I64), inv[n:].astype(_I64)
    else:
        bps, first, last = np.array([float(origin)]), np.zeros(0, _I64), np.zeros(0, _I64)
    if check is None:
        return Schedule.from_segments(bps, flow, np.full(n, c), first, last, meta=meta)
    ff = np.concatenate([flow, flow])
    k = np.concatenate([last, first])
    rate = np.concatenate([np.zeros(n), np.full(n, c)])
    # time order, ends before starts at one breakpoint
    order = np.lexsort((np.r_[np.zeros(n, _I64), np.ones(n, _I64)], k))
    out = validate_changes(instance, bps, ff[order], k[order], rate[order], check)
    out.meta.update(meta or {})
    return out


def plan_to_schedule(instance: Instance, plan: SlotPlan, *, quantum: float = 1.0,
                     origin: float = 0.0, meta: dict | None = None) -> Schedule:
    """The real-first execution of ``plan`` as a :class:`~coflowopt.Schedule` (slot ``s`` at
    ``[origin + s dt, origin + (s+1) dt)``, ``dt = quantum / c``): every piece at the port
    rate ``c``, each flow's last piece cut short at its real volume; consecutive pieces of one
    flow form one segment, so breakpoints lie only where some rate changes."""
    f, t0, t1 = timed_segments(instance, plan, quantum, origin)
    out = emit_segments(instance, f, t0, t1, origin=origin, meta=meta)
    assert isinstance(out, Schedule)
    return out


def run_plan(instance: Instance, plan: SlotPlan, *, quantum: float = 1.0, origin: float = 0.0,
             check: Tolerance | None = None, meta: dict | None = None
             ) -> Schedule | ValidSchedule:
    """Execute ``plan`` real-first (:func:`plan_to_schedule`).  With ``check``: stream its
    rate changes into :func:`coflowopt.validate.validate_changes` and return the
    :class:`~coflowopt.ValidSchedule` without storing the schedule; without: the
    :class:`~coflowopt.Schedule`."""
    f, t0, t1 = timed_segments(instance, plan, quantum, origin)
    return emit_segments(instance, f, t0, t1, origin=origin, check=check, meta=meta)

"""The event-driven fluid simulator.

Flows are served at piecewise-constant rates.  Events are coflow arrivals (release, once every
Starts-After predecessor has completed), flow and coflow completions, and a policy's own timers
(Aalo's coordination interval or queue-threshold crossings).  At each event the policy gives
rates for the active flows; between events everything is linear, so the next event time is
exact.  The result is a :class:`~coflowopt.Schedule`, which :func:`coflowopt.validate` checks.

A policy implements :class:`Policy`: ``rates(view)`` fills the shared rate buffer (usually by
calling an allocator of :mod:`coflowopt.sim.allocate` with a coflow order) and may return the
time of its next timer.  What a policy may see is in :class:`SimView`: everyone sees the flows'
ports, coflow membership, bytes sent and widths; only clairvoyant policies see remaining
volumes (:attr:`SimView.remaining` raises otherwise).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.sim.allocate import AllocState

__all__ = ["InstanceView", "Policy", "SimView", "SimulationError", "simulate"]

#: A flow whose remaining volume is at most this fraction of its volume is finished.
DONE_RTOL = 1e-10


class SimulationError(RuntimeError):
    """The simulation cannot continue (a policy starved every active flow forever)."""


class InstanceView:
    """The instance's columns a policy may read whatever it knows (ports, flows' ports and
    coflows, coflows' widths, weights, releases, ids and jobs, job deadlines, capacities), and
    the whole instance for a clairvoyant one; the base of both engines' views."""

    def __init__(self, inst: Instance, clairvoyant: bool):
        self._inst = inst
        self._clairvoyant = clairvoyant
        self.ports = inst.ports
        self.flow_src = inst.flow_src
        self.flow_dst = inst.flow_dst
        self.flow_coflow = inst.flow_coflow
        self.coflow_width = inst.coflow_width
        self.coflow_weight = inst.coflow_weight
        self.release = inst.release
        self.coflow_id = inst.coflow_id
        self.job_deadline = inst.job_deadline
        self.coflow_job = inst.coflow_job
        self.capacity_in = inst.fabric.capacity_in
        self.capacity_out = inst.fabric.capacity_out

    @property
    def instance(self) -> Instance:
        """The whole instance, volumes included: clairvoyant policies only."""
        if not self._clairvoyant:
            raise PermissionError("a non-clairvoyant policy may not read flow volumes")
        return self._inst


class SimView(InstanceView):
    """What a policy sees at an event.

    ``t``: current time; ``release``: effective release per coflow; ``coflows``: active coflow
    positions (released, predecessors done, unfinished), in admission order; ``admitted[c]``:
    admission time of coflow ``c`` (NaN before); ``sent``: bytes sent per flow;
    ``coflow_sent``: per coflow; ``alloc``: the shared allocator state to pass to
    :mod:`coflowopt.sim.allocate`.
    """

    def __init__(self, inst: Instance, st: AllocState, clairvoyant: bool):
        super().__init__(inst, clairvoyant)
        self.alloc = st
        self.t = 0.0
        self.coflows = np.zeros(0, dtype=np.int64)
        self.admitted = np.full(inst.n_coflows, np.nan)
        self.events = 0

    @property
    def remaining(self) -> np.ndarray:
        """Remaining volume per flow: clairvoyant policies only."""
        if not self._clairvoyant:
            raise PermissionError("a non-clairvoyant policy may not read remaining volumes")
        return self.alloc.remaining

    @property
    def sent(self) -> np.ndarray:
        st = self.alloc
        return st.volume - st.remaining

    def coflow_sent(self, coflows: np.ndarray) -> np.ndarray:
        """Bytes sent so far by each of ``coflows`` (attained service ``S_c``)."""
        return _coflow_sums(np.ascontiguousarray(coflows, dtype=np.int64), self.alloc.ptr,
                            self.alloc.order, self.alloc.volume, self.alloc.remaining, True)

    def coflow_rate(self, coflows: np.ndarray) -> np.ndarray:
        """Total current rate of each of ``coflows``."""
        st = self.alloc
        return _coflow_sums(np.ascontiguousarray(coflows, dtype=np.int64), st.ptr, st.order,
                            st.rate, st.rate, False)

    def unfinished_flows(self, c: int) -> np.ndarray:
        st = self.alloc
        f = st.order[st.ptr[c]:st.ptr[c + 1]]
        return f[st.remaining[f] > 0]


class Policy(Protocol):
    """A scheduling policy for :func:`simulate`."""

    clairvoyant: bool

    def start(self, view: SimView) -> None:
        """Called once before the first event."""

    def rates(self, view: SimView) -> float:
        """Fill ``view.alloc.rate`` for the flows of ``view.coflows``; return the absolute time
        of the policy's next timer (``inf`` for none)."""


@njit(cache=True)
def _coflow_sums(coflows, ptr, order, a, b, diff):
    out = np.zeros(coflows.shape[0])
    for k in range(coflows.shape[0]):
        c = coflows[k]
        s = 0.0
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            s += (a[f] - b[f]) if diff else a[f]
        out[k] = s
    return out


@njit(cache=True)
def next_completion(coflows, ptr, order, remaining, rate, has_rate):
    """Time until the first flow of ``coflows`` finishes at the current rates."""
    best = np.inf
    for c in coflows:
        if not has_rate[c]:
            continue
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if rate[f] > 0.0 and remaining[f] > 0.0:
                dt = remaining[f] / rate[f]
                if dt < best:
                    best = dt
    return best


@njit(cache=True)
def advance_rates(coflows, ptr, order, remaining, rate, volume, dt, left, has_rate, fslot_in,
             fslot_out, slot_in, slot_out):
    """Serve ``dt`` at the current rates; mark finished flows; count unfinished per coflow.
    Returns the number of coflows that finished."""
    finished = 0
    for c in coflows:
        if not has_rate[c]:
            continue
        n = 0
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if remaining[f] > 0.0:
                r = remaining[f] - rate[f] * dt
                if r <= 1e-10 * volume[f]:
                    r = 0.0
                    slot_in[fslot_in[f]] -= 1
                    slot_out[fslot_out[f]] -= 1
                remaining[f] = r
                if r > 0.0:
                    n += 1
        left[c] = n
        if n == 0:
            finished += 1
    return finished


@njit(cache=True, inline="always")
def rate_moved(rate, cur, f):
    """Whether flow ``f``'s new rate ``rate[f]`` differs from its recorded ``cur[f]``.  A rate
    that moved only by rounding (relative 1e-12) is set back to ``cur[f]`` and does not count:
    it keeps its segment and its recorded value, in every recorder that logs rate changes."""
    if rate[f] == cur[f]:
        return False
    if rate[f] > 0.0 and abs(rate[f] - cur[f]) <= 1e-12 * cur[f]:
        rate[f] = cur[f]
        return False
    return True


@njit(cache=True)
def _record(coflows, ptr, order, rate, cur, opened, k, out_f, out_r, out_a, out_b, n, now,
            before):
    """Close the segments of flows whose rate changes at interval ``k``; open new ones.
    Only coflows with a rate now or before are visited.  Returns the new segment count, or
    -1 when the buffers are full."""
    for c in coflows:
        if not (now[c] or before[c]):
            continue
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if rate_moved(rate, cur, f):
                if cur[f] > 0.0 and opened[f] < k:
                    if n >= out_f.shape[0]:
                        return -1
                    out_f[n] = f
                    out_r[n] = cur[f]
                    out_a[n] = opened[f]
                    out_b[n] = k
                    n += 1
                cur[f] = rate[f]
                opened[f] = k
    return n


class _Segments:
    """Growable segment buffers filled by the compiled recorder."""

    def __init__(self, capacity: int):
        self.f = np.empty(capacity, dtype=np.int64)
        self.r = np.empty(capacity)
        self.a = np.empty(capacity, dtype=np.int64)
        self.b = np.empty(capacity, dtype=np.int64)
        self.n = 0

    def grow(self) -> None:
        for name in ("f", "r", "a", "b"):
            old = getattr(self, name)
            new = np.empty(old.size * 2, dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def record(self, coflows: np.ndarray, st: AllocState, cur: np.ndarray, opened: np.ndarray,
               k: int, before: np.ndarray) -> None:
        # one call closes at most one segment per flow it visits
        need = int((st.ptr[coflows + 1] - st.ptr[coflows]).sum()) if coflows.size else 0
        while self.f.size - self.n < need:
            self.grow()
        n = _record(coflows, st.ptr, st.order, st.rate, cur, opened, k, self.f, self.r,
                    self.a, self.b, self.n, st.has_rate, before)
        assert n >= 0
        self.n = n


def simulate(
    instance: Instance,
    policy: Policy,
    *,
    progress: Callable[[int, int], Any] | None = None,
    max_events: int | None = None,
) -> Schedule:
    """Run ``policy`` on ``instance`` from time ``min(0, releases)`` until every flow finishes.

    ``progress(done, total)`` is called with the number of finished coflows after each coflow
    completion (for progress bars); it is the only channel: without it nothing is reported.
    Returns the schedule; it is not validated here.
    """
    inst = instance
    C = inst.n_coflows
    st = AllocState.for_instance(inst)
    view = SimView(inst, st, bool(getattr(policy, "clairvoyant", True)))
    rel = np.asarray(inst.release, dtype=np.float64)
    ptr_p, _ = inst.predecessors_ptr
    n_pred = np.diff(ptr_p).astype(np.int64)
    succ_ptr, succ = inst.successors_ptr
    # zero-volume flows are finished from the start
    st.remaining[st.volume <= 0] = 0.0
    left = np.bincount(inst.flow_coflow[st.volume > 0], minlength=C).astype(np.int64)

    t0 = min(0.0, float(rel.min())) if C else 0.0
    heap: list[tuple[float, int]] = [(float(rel[c]), int(c)) for c in range(C) if n_pred[c] == 0]
    heapq.heapify(heap)
    active: list[int] = []
    done = np.zeros(C, dtype=bool)
    n_done = 0
    cur = np.zeros(inst.n_flows)
    opened = np.zeros(inst.n_flows, dtype=np.int64)
    segs = _Segments(max(1024, 2 * inst.n_flows))
    bps = [t0]
    t = t0
    policy.start(view)
    before = np.zeros(C, dtype=np.bool_)
    events = 0
    stalls = 0
    act = np.zeros(0, dtype=np.int64)

    def complete(c: int) -> None:
        nonlocal n_done
        done[c] = True
        n_done += 1
        for s in succ[succ_ptr[c]:succ_ptr[c + 1]]:
            n_pred[s] -= 1
            if n_pred[s] == 0:
                heapq.heappush(heap, (max(float(rel[s]), t), int(s)))

    while n_done < C:
        changed = False
        # admissions at t (coflows with nothing to send complete on admission)
        while heap and heap[0][0] <= t:
            _, c = heapq.heappop(heap)
            view.admitted[c] = t
            if left[c] == 0:
                complete(c)
            else:
                active.append(c)
            changed = True
        if changed:
            act = np.asarray(active, dtype=np.int64)
        if n_done == C:
            break
        if not active:
            if not heap:
                raise SimulationError("no active coflow and nothing left to release")
            t = heap[0][0]
            if t > bps[-1]:
                bps.append(t)
            continue
        view.t = t
        view.coflows = act
        view.events = events
        before[:] = st.has_rate
        timer = policy.rates(view)
        k = len(bps) - 1
        segs.record(act, st, cur, opened, k, before)
        dt = next_completion(act, st.ptr, st.order, st.remaining, st.rate, st.has_rate)
        if heap:
            dt = min(dt, heap[0][0] - t)
        if timer is not None and timer < math.inf:
            dt = min(dt, max(timer - t, 0.0))
        if not math.isfinite(dt):
            raise SimulationError(
                f"t={t:g}: {len(active)} active coflows but no flow has a rate and no event "
                "is pending (the policy starves them)")
        t_next = t + dt
        if t_next <= t:
            stalls += 1
            if stalls > 10 * C + 100:
                raise SimulationError(f"t={t:g}: the policy's timer does not advance time")
        else:
            stalls = 0
        if t_next > t:
            n_fin = advance_rates(act, st.ptr, st.order, st.remaining, st.rate, st.volume, dt, left,
                             st.has_rate, st.fslot_in, st.fslot_out, st.slot_in, st.slot_out)
            bps.append(t_next)
        else:
            n_fin = 0
        t = t_next
        events += 1
        if max_events is not None and events > max_events:
            raise SimulationError(f"more than {max_events} events")
        if n_fin:
            keep = []
            for c in active:
                if left[c] == 0:
                    # close the segments of its flows at the interval that just ended
                    fl = st.order[st.ptr[c]:st.ptr[c + 1]]
                    st.rate[fl] = 0.0
                    complete(c)
                else:
                    keep.append(c)
            finished = np.asarray([c for c in active if left[c] == 0], dtype=np.int64)
            before[:] = True
            st.has_rate[finished] = False
            segs.record(finished, st, cur, opened, len(bps) - 1, before)
            active = keep
            act = np.asarray(active, dtype=np.int64)
            if progress is not None:
                progress(n_done, C)
    # close whatever is still open (rates of the last interval)
    st.rate[:] = 0.0
    before[:] = True
    segs.record(np.arange(C, dtype=np.int64), st, cur, opened, len(bps) - 1, before)
    n = segs.n
    sched = Schedule.from_segments(np.asarray(bps), segs.f[:n].copy(), segs.r[:n].copy(),
                                   segs.a[:n].copy(), segs.b[:n].copy(),
                                   meta={"events": events})
    return sched

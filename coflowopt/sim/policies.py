"""Single-stage scheduling policies for the fluid simulator, and their registry entries.

Each policy turns what it may know into a coflow order (or queues) and hands it to a shared
allocator of :mod:`coflowopt.sim.allocate`.  Orders are recomputed when the set of active
coflows changes (an arrival or a departure), as Varys and Sincronia reschedule; rates are
recomputed at every event.

Two engines run the same policies: ``engine="fast"`` (default where available: the compiled
incremental engine of :mod:`coflowopt.sim.fast`) and ``engine="reference"`` (the plain event
loop of :mod:`coflowopt.sim.engine`, which also runs the variants the fast engine has no kernel
for: equal intra-coflow split, per-flow fairness, weighted queues, a coordination interval).
The tests check that both give the same schedule.

Intra-coflow rule: flows of a coflow are served in instance order, each taking
``min(free ingress, free egress)`` (``split="ordered"``, as in Sincronia's public simulator);
``split="equal"`` first splits each port equally among the coflow's flows on it.

Registry names: ``varys``, ``aalo``, ``a-sebf``, ``sincronia``, ``fifo``, ``fair``, ``scf``
(smallest total size first), ``ncf`` (narrowest: fewest flows first), ``lcf`` (shortest
longest-flow first).
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.schedulers.registry import register
from coflowopt.sim import allocate
from coflowopt.sim.engine import SimView, simulate
from coflowopt.sim.fast import (
    KIND_DCLAS,
    KIND_SINCRONIA,
    KIND_STATIC,
    KIND_VARYS,
    fast_simulate,
)
from coflowopt.sim.fastfair import fast_fair
from coflowopt.sim.orders import bssi, port_loads, sebf_gamma, static_key
from coflowopt.validate import Tolerance, ValidSchedule, validate

__all__ = [
    "STREAMED",
    "DCLASPolicy",
    "FairPolicy",
    "OrderPolicy",
    "SincroniaPolicy",
    "StaticOrderPolicy",
    "VarysDeadlinePolicy",
    "VarysPolicy",
    "a_sebf",
    "aalo",
    "fair",
    "fifo",
    "lcf",
    "ncf",
    "scf",
    "simulate_validated",
    "sincronia",
    "varys",
]


class OrderPolicy:
    """Base: an order over the active coflows, refreshed when the active set changes, turned
    into rates by ``allocation`` (``greedy`` or ``madd``)."""

    clairvoyant = True

    def __init__(self, allocation: str = "greedy", split: str = "ordered"):
        if allocation not in ("greedy", "madd"):
            raise ValueError(f"allocation must be 'greedy' or 'madd', got {allocation!r}")
        self.allocation = allocation
        self.split = split
        self._active: np.ndarray | None = None
        self._order = np.zeros(0, dtype=np.int64)

    def start(self, view: SimView) -> None:
        self._active = None

    def order(self, view: SimView) -> np.ndarray:
        raise NotImplementedError

    def fast(self, inst: Instance) -> tuple[int, dict[str, Any]] | None:
        """``(kind, arguments)`` for :func:`~coflowopt.sim.fast.fast_simulate`, or ``None``
        when only the reference engine runs this configuration."""
        return None

    def rates(self, view: SimView) -> float:
        if self._active is None or not np.array_equal(self._active, view.coflows):
            self._active = view.coflows.copy()
            self._order = np.asarray(self.order(view), dtype=np.int64)
        if self.allocation == "madd":
            allocate.madd(view.alloc, self._order)
        else:
            allocate.greedy(view.alloc, self._order, split=self.split)
        return math.inf


class StaticOrderPolicy(OrderPolicy):
    """Order by a key fixed by the coflow's definition (ties: admission time, position)."""

    def __init__(self, key: str, allocation: str = "greedy", split: str = "ordered"):
        super().__init__(allocation, split)
        self.key = key
        self.clairvoyant = key in ("size", "length", "gamma")
        self._keys: np.ndarray | None = None

    def start(self, view: SimView) -> None:
        super().start(view)
        if self.clairvoyant:
            self._keys = static_key(view.instance, self.key)
        elif self.key == "width":
            self._keys = view.coflow_width.astype(np.float64)
        else:  # arrival: admission time
            self._keys = None

    def order(self, view: SimView) -> np.ndarray:
        c = view.coflows
        adm = view.admitted[c]
        key = adm if self._keys is None else self._keys[c]
        return c[np.lexsort((c, adm, key))]

    def fast(self, inst: Instance) -> tuple[int, dict[str, Any]] | None:
        if self.allocation != "greedy" or self.split != "ordered":
            return None
        if self.key == "arrival":
            return KIND_STATIC, {"key": np.zeros(inst.n_coflows)}  # admission order
        return KIND_STATIC, {"key": static_key(inst, self.key)}


class VarysPolicy(OrderPolicy):
    """SEBF: ascending effective bottleneck ``Gamma_j`` of the remaining volumes with all
    capacity free; MADD on the residual capacity; then a work-conserving backfill in the same
    order (spec section 6).

    ``reschedule="coflow"`` (default): the order and the MADD rates are recomputed at coflow
    arrivals and departures, as the Varys system reschedules; in between, a flow keeps its MADD
    rate until it finishes and the backfill is redone at every event.  ``"event"`` recomputes
    MADD at every event (reference engine only).
    """

    def __init__(self, allocation: str = "madd", reschedule: str = "coflow"):
        super().__init__(allocation)
        if reschedule not in ("coflow", "event"):
            raise ValueError(f"varys: reschedule must be 'coflow' or 'event', got {reschedule!r}")
        self.reschedule = reschedule
        self._held: np.ndarray | None = None

    def order(self, view: SimView) -> np.ndarray:
        c = view.coflows
        inst = view.instance
        loads = port_loads(inst, c, view.remaining)
        cap = np.concatenate([view.capacity_in, view.capacity_out])
        g = sebf_gamma(loads, cap)
        return c[np.lexsort((c, view.admitted[c], g))]

    def rates(self, view: SimView) -> float:
        if self.allocation != "madd" or self.reschedule == "event":
            return super().rates(view)
        st = view.alloc
        if self._active is None or not np.array_equal(self._active, view.coflows):
            self._active = view.coflows.copy()
            self._order = np.asarray(self.order(view), dtype=np.int64)
            allocate.madd(st, self._order, backfill=np.zeros(0, dtype=np.int64))
            self._held = st.rate.copy()
        else:
            allocate.hold(st, self._order, self._held)
        allocate.greedy(st, self._order, split="ordered", fresh=False)
        return math.inf

    def fast(self, inst: Instance) -> tuple[int, dict[str, Any]] | None:
        if self.allocation != "madd" or self.reschedule != "coflow":
            return None
        return KIND_VARYS, {}


class VarysDeadlinePolicy:
    """Varys's deadline mode (spec section 6), on the reference engine.

    A coflow whose job has a deadline ``D`` (absolute) is admitted at its arrival ``t`` iff its
    effective bottleneck on the capacity left by the already admitted coflows satisfies
    ``Gamma (1 + pad) <= D - t``; an admitted coflow then holds ``remaining / (D - t)`` on each
    flow until the flow finishes, which meets the deadline.  A rejected coflow is served best
    effort, after everything else.  Coflows without a deadline get SEBF + MADD on what the
    admitted ones leave.  Every event ends with the work-conserving backfill in the order
    admitted (by deadline), no deadline (SEBF), rejected.  ``meta`` lists the admitted and the
    rejected coflow positions.
    """

    clairvoyant = True

    def __init__(self, pad: float = 0.0):
        if pad < 0:
            raise ValueError(f"varys: pad must be >= 0, got {pad}")
        self.pad = float(pad)

    def start(self, view: SimView) -> None:
        inst = view.instance
        self.deadline = inst.job_deadline[inst.coflow_job]
        self.decided: dict[int, bool | None] = {}
        self.reserved = np.zeros(inst.n_flows)
        self._active: np.ndarray | None = None

    def _admit(self, view: SimView, new: np.ndarray) -> None:
        inst, st = view.instance, view.alloc
        for c in new[np.lexsort((new, view.admitted[new]))]:
            c = int(c)
            dl = float(self.deadline[c])
            if math.isnan(dl):
                self.decided[c] = None
                continue
            held = self.reserved * (st.remaining > 0)
            free_in = inst.fabric.capacity_in - np.bincount(inst.flow_src, weights=held,
                                                            minlength=inst.ports)
            free_out = inst.fabric.capacity_out - np.bincount(inst.flow_dst, weights=held,
                                                              minlength=inst.ports)
            f = view.unfinished_flows(c)
            li = np.bincount(inst.flow_src[f], weights=st.remaining[f], minlength=inst.ports)
            lo = np.bincount(inst.flow_dst[f], weights=st.remaining[f], minlength=inst.ports)
            with np.errstate(divide="ignore", invalid="ignore"):
                need = np.concatenate([np.where(li > 0, li / np.maximum(free_in, 0), 0),
                                       np.where(lo > 0, lo / np.maximum(free_out, 0), 0)])
            gamma = float(np.nan_to_num(need, nan=np.inf).max(initial=0.0))
            left = dl - view.t
            ok = left > 0 and gamma * (1 + self.pad) <= left * (1 + 1e-12)
            self.decided[c] = ok
            if ok:
                self.reserved[f] = st.remaining[f] / left

    def rates(self, view: SimView) -> float:
        st = view.alloc
        c = view.coflows
        if self._active is None or not np.array_equal(self._active, c):
            self._active = c.copy()
            new = np.asarray([x for x in c.tolist() if x not in self.decided], dtype=np.int64)
            if new.size:
                self._admit(view, new)
        adm = np.asarray([x for x in c.tolist() if self.decided.get(x) is True], dtype=np.int64)
        adm = adm[np.lexsort((adm, self.deadline[adm]))] if adm.size else adm
        free = np.asarray([x for x in c.tolist() if self.decided.get(x) is None],
                          dtype=np.int64)
        if free.size:
            loads = port_loads(view.instance, free, view.remaining)
            cap = np.concatenate([view.capacity_in, view.capacity_out])
            free = free[np.lexsort((free, view.admitted[free], sebf_gamma(loads, cap)))]
        rej = np.asarray([x for x in c.tolist() if self.decided.get(x) is False], dtype=np.int64)
        allocate.hold(st, c, self.reserved)
        allocate.madd(st, free, backfill=np.zeros(0, dtype=np.int64), fresh=False)
        allocate.greedy(st, np.concatenate([adm, free, rej]), split="ordered", fresh=False)
        return math.inf


class SincroniaPolicy(OrderPolicy):
    """BSSI order + order-preserving greedy allocation (spec section 5).

    ``mode="online"``: BSSI on the remaining volumes of the active coflows at every arrival and
    departure.  ``mode="offline"``: one BSSI order over all coflows of the instance (known from
    the start) on their full volumes, used for the whole run.
    """

    def __init__(self, mode: str = "online", split: str = "ordered"):
        if mode not in ("online", "offline"):
            raise ValueError(f"sincronia: mode must be 'online' or 'offline', got {mode!r}")
        super().__init__("greedy", split)
        self.mode = mode
        self._rank: np.ndarray | None = None

    @staticmethod
    def offline_rank(inst: Instance) -> np.ndarray:
        """Rank of each coflow in the BSSI order of the whole instance on full volumes."""
        allc = np.arange(inst.n_coflows, dtype=np.int64)
        cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
        sigma = bssi(port_loads(inst, allc, inst.flow_volume), inst.coflow_weight, cap)
        rank = np.empty(inst.n_coflows, dtype=np.int64)
        rank[sigma] = np.arange(inst.n_coflows)
        return rank

    def start(self, view: SimView) -> None:
        super().start(view)
        if self.mode == "offline":
            self._rank = self.offline_rank(view.instance)

    def fast(self, inst: Instance) -> tuple[int, dict[str, Any]] | None:
        if self.split != "ordered":
            return None
        if self.mode == "offline":
            return KIND_STATIC, {"key": self.offline_rank(inst).astype(np.float64)}
        return KIND_SINCRONIA, {}

    def order(self, view: SimView) -> np.ndarray:
        c = view.coflows
        if self._rank is not None:
            return c[np.argsort(self._rank[c], kind="stable")]
        cap = np.concatenate([view.capacity_in, view.capacity_out])
        loads = port_loads(view.instance, c, view.remaining)
        return c[bssi(loads, view.coflow_weight[c], cap)]


class FairPolicy:
    """Per-flow max-min fair sharing of every port (non-clairvoyant)."""

    clairvoyant = False

    def start(self, view: SimView) -> None:
        pass

    def rates(self, view: SimView) -> float:
        allocate.max_min_fair(view.alloc, view.coflows)
        return math.inf


class DCLASPolicy:
    """Discretized Coflow-Aware Least-Attained Service (Aalo; spec 7.1), and A-SEBF (7.3).

    A coflow's priority value is its attained service ``S_c`` (bytes sent), divided by its
    number of receiver ports (``per="receiver"``, A-SEBF) or flows (``per="flow"``).  Queue
    ``k`` holds values in ``[thresholds[k-1], thresholds[k])``; by default thresholds are
    ``first, first*growth, ...`` (``queues`` of them, the last unbounded).  New coflows enter
    the first queue; a coflow that crosses a threshold moves to the tail of the queue it
    reaches (FIFO by queue entry).  Across queues: strict priority, or weighted sharing with
    ``queue_weights``.  Inside: order-preserving greedy allocation.

    ``interval``: the coordination interval ``delta``.  ``0`` (default) updates queues exactly
    when a value crosses a threshold (the limit of a continuous coordinator); ``delta > 0``
    updates them only at multiples of ``delta``.
    """

    clairvoyant = False

    def __init__(self, *, queues: int = 10, first: float = 10.0, growth: float = 10.0,
                 thresholds: Any = None, interval: float = 0.0, per: str = "coflow",
                 queue_weights: Any = None, split: str = "ordered"):
        if thresholds is None:
            if queues < 1 or first <= 0 or growth <= 1:
                raise ValueError("D-CLAS: need queues >= 1, first > 0, growth > 1")
            thresholds = [first * growth**k for k in range(queues - 1)]
        self.thresholds = np.asarray(thresholds, dtype=np.float64)
        if np.any(np.diff(self.thresholds) <= 0):
            raise ValueError("D-CLAS: thresholds must increase")
        if per not in ("coflow", "receiver", "flow"):
            raise ValueError(f"D-CLAS: per must be coflow, receiver or flow, got {per!r}")
        self.per = per
        self.interval = float(interval)
        self.queue_weights = None if queue_weights is None else np.asarray(queue_weights, float)
        self.split = split

    def normalizer(self, flow_coflow: np.ndarray, flow_dst: np.ndarray, ports: int,
                   width: np.ndarray) -> np.ndarray:
        """Per coflow: 1, its number of receiver ports, or its number of flows."""
        C = width.size
        if self.per == "receiver":
            key = flow_coflow.astype(np.int64) * ports + flow_dst
            return np.bincount(np.unique(key) // ports, minlength=C).astype(float)
        if self.per == "flow":
            return width.astype(float)
        return np.ones(C)

    def fast(self, inst: Instance) -> tuple[int, dict[str, Any]] | None:
        if self.interval > 0 or self.queue_weights is not None or self.split != "ordered":
            return None
        norm = self.normalizer(inst.flow_coflow, inst.flow_dst, inst.ports, inst.coflow_width)
        return KIND_DCLAS, {"thresholds": self.thresholds, "norm": np.maximum(norm, 1.0)}

    def start(self, view: SimView) -> None:
        C = view.coflow_width.size
        self.queue = np.full(C, -1, dtype=np.int64)
        self.entry = np.zeros(C, dtype=np.int64)
        self.counter = 0
        self.norm = np.maximum(self.normalizer(view.flow_coflow, view.flow_dst, view.ports,
                                               view.coflow_width), 1.0)
        self.next_sync = view.t

    def _update(self, view: SimView) -> None:
        c = view.coflows
        new = c[self.queue[c] < 0]
        for x in new[np.lexsort((new, view.admitted[new]))]:
            self.queue[x] = 0
            self.entry[x] = self.counter
            self.counter += 1
        value = view.coflow_sent(c) / self.norm[c]
        # reaching a threshold (to rounding), or reaching it within the event tolerance at the
        # current rate (late in a long trace the bytes sent carry more rounding than 1e-9 of
        # the threshold), counts as crossing it, as in the fast engine
        value = value + view.coflow_rate(c) / self.norm[c] * (1e-14 * max(1.0, abs(view.t)))
        target = np.searchsorted(self.thresholds * (1 - 1e-9), value, side="right")
        moved = c[target > self.queue[c]]
        if moved.size:
            tq = target[target > self.queue[c]]
            # demoted together: keep their previous FIFO order
            for x, q in sorted(zip(moved.tolist(), tq.tolist(), strict=True),
                               key=lambda z: (self.queue[z[0]], self.entry[z[0]])):
                self.queue[x] = q
                self.entry[x] = self.counter
                self.counter += 1

    def rates(self, view: SimView) -> float:
        if self.interval <= 0 or view.t >= self.next_sync - 1e-12:
            self._update(view)
            if self.interval > 0:
                self.next_sync = (math.floor(view.t / self.interval + 1e-9) + 1) * self.interval
        else:
            # newcomers enter the first queue at once
            c = view.coflows
            for x in c[self.queue[c] < 0]:
                self.queue[x] = 0
                self.entry[x] = self.counter
                self.counter += 1
        c = view.coflows
        order = c[np.lexsort((self.entry[c], self.queue[c]))]
        if self.queue_weights is None:
            allocate.greedy(view.alloc, order, split=self.split)
        else:
            q = self.queue[order]
            queues = [order[q == k] for k in range(self.thresholds.size + 1)]
            w = np.resize(self.queue_weights, len(queues))
            allocate.priority_queues(view.alloc, queues, weights=w, split=self.split)
        if self.interval > 0:
            return self.next_sync
        # next threshold crossing at the current rates
        qc = self.queue[c]
        has_next = qc < self.thresholds.size
        if not has_next.any():
            return math.inf
        cc = c[has_next]
        rate = view.coflow_rate(cc) / self.norm[cc]
        gap = self.thresholds[qc[has_next]] - view.coflow_sent(cc) / self.norm[cc]
        pos = rate > 0
        if not pos.any():
            return math.inf
        return view.t + float(np.min(np.maximum(gap[pos], 0.0) / rate[pos]))


# -- registry entries ---------------------------------------------------------------------------


ENGINES = ("fast", "reference")

# Set by simulate_validated for the one scheduler call it makes: the fast kernels then feed
# the streaming validator and return the ValidSchedule instead of storing a Schedule.
_CHECK: ContextVar[list[Tolerance] | None] = ContextVar("coflowopt_stream_check", default=None)

STREAMED = ("varys", "sincronia", "aalo", "a-sebf", "fifo", "scf", "ncf", "lcf", "fair")


def _stream_check() -> Tolerance | None:
    """The tolerances of a pending :func:`simulate_validated` call (taken once), or None."""
    pending = _CHECK.get()
    return pending.pop() if pending else None


def simulate_validated(instance: Instance, scheduler: str, *, tol: Tolerance | None = None,
                       seed: Any = None, **params: Any) -> ValidSchedule:
    """Run the registered ``scheduler`` on ``instance`` and validate its schedule.

    The simulator's schedulers (:data:`STREAMED`) on the fast engine hand every rate change to
    the streaming validator (:func:`coflowopt.validate.validate_changes`: the same checks,
    tolerances and messages as :func:`coflowopt.validate`) as they make it, so the schedule is
    never stored: memory stays proportional to flows and ports, not to rate changes (per-flow
    fair sharing makes 187 million segments on the FB2010 trace).  ``result.schedule`` is then
    ``None``; every other scheduler or engine is run and validated as usual.  Raises
    :class:`~coflowopt.InfeasibleSchedule` like :func:`~coflowopt.validate`.
    """
    from coflowopt.schedulers import get

    tol = tol or Tolerance()
    token = _CHECK.set([tol] if scheduler in STREAMED else [])
    try:
        out = get(scheduler)(instance, seed=seed, **params)
    finally:
        _CHECK.reset(token)
    if isinstance(out, ValidSchedule):
        return out
    return validate(instance, out, tol)


def _run(instance: Instance, policy: Any, name: str, params: dict[str, Any],
         engine: str = "fast") -> Schedule:
    """Run ``policy`` on the fast engine when it has a kernel for it (else, or with
    ``engine="reference"``, on the reference engine)."""
    if engine not in ENGINES:
        raise ValueError(f"{name}: engine must be one of {ENGINES}, got {engine!r}")
    spec = policy.fast(instance) if engine == "fast" and hasattr(policy, "fast") else None
    if spec is not None:
        kind, kwargs = spec
        sched = fast_simulate(instance, kind, check=_stream_check(), **kwargs)
    else:
        sched = simulate(instance, policy)
        sched.meta["engine"] = "reference"
    sched.meta.update({"scheduler": name, "params": params})
    return sched


@register("varys", kind="online", clairvoyant=True, objective="average CCT (heuristic)",
          summary="SEBF order + MADD + work-conserving backfill (Varys)")
def varys(instance: Instance, *, seed: Any = None, allocation: str = "madd",
          reschedule: str = "coflow", deadlines: bool = False, pad: float = 0.0,
          refill: bool = True, engine: str = "fast") -> Schedule:
    """Varys: smallest effective bottleneck first, MADD rates, backfill. Deterministic.
    ``deadlines=True``: the deadline admission mode (:class:`VarysDeadlinePolicy`, job
    deadlines of the instance, admission pad ``pad``).  ``refill=False`` (fast engine):
    rates change only when a coflow arrives or departs, as in CoflowSim; bandwidth freed by a
    finished flow idles until then."""
    del seed
    if not refill:
        if deadlines or engine != "fast" or allocation != "madd" or reschedule != "coflow":
            raise ValueError("varys: refill=False runs only on the fast engine, without "
                             "deadlines, with allocation='madd' and reschedule='coflow'")
        sched = fast_simulate(instance, KIND_VARYS, refill=False, check=_stream_check())
        sched.meta.update({"scheduler": "varys", "params": {"refill": False}})
        return sched
    if deadlines:
        policy = VarysDeadlinePolicy(pad)
        sched = _run(instance, policy, "varys", {"deadlines": True, "pad": pad}, "reference")
        sched.meta["admitted"] = sorted(c for c, v in policy.decided.items() if v is True)
        sched.meta["rejected"] = sorted(c for c, v in policy.decided.items() if v is False)
        return sched
    params = {"allocation": allocation, "reschedule": reschedule}
    return _run(instance, VarysPolicy(allocation, reschedule), "varys", params, engine)


@register("sincronia", kind="offline", clairvoyant=True, factor="4",
          objective="sum of weighted CCT (release 0)",
          summary="BSSI order + order-preserving greedy allocation (Sincronia)")
def sincronia(instance: Instance, *, seed: Any = None, mode: str = "online",
              split: str = "ordered", engine: str = "fast") -> Schedule:
    """Sincronia: BSSI ordering with greedy order-preserving allocation; ``mode`` offline
    (one order over all coflows) or online (re-ordered at arrivals and departures).
    The factor 4 holds offline with all releases 0."""
    del seed
    return _run(instance, SincroniaPolicy(mode, split), "sincronia",
                {"mode": mode, "split": split}, engine)


def _static(instance: Instance, key: str, name: str, allocation: str, split: str,
            engine: str) -> Schedule:
    params = {"allocation": allocation, "split": split}
    return _run(instance, StaticOrderPolicy(key, allocation, split), name, params, engine)


@register("fifo", kind="online", clairvoyant=False, objective="average CCT (baseline)",
          summary="first in, first out by arrival, greedy allocation")
def fifo(instance: Instance, *, seed: Any = None, allocation: str = "greedy",
         split: str = "ordered", engine: str = "fast") -> Schedule:
    """FIFO by admission time (ties by position), order-preserving greedy allocation."""
    del seed
    return _static(instance, "arrival", "fifo", allocation, split, engine)


@register("scf", kind="online", clairvoyant=True, objective="average CCT (baseline)",
          summary="smallest total size first, greedy allocation")
def scf(instance: Instance, *, seed: Any = None, allocation: str = "greedy",
        split: str = "ordered", engine: str = "fast") -> Schedule:
    """Smallest-coflow-first by total volume ``V_j``."""
    del seed
    return _static(instance, "size", "scf", allocation, split, engine)


@register("ncf", kind="online", clairvoyant=False, objective="average CCT (baseline)",
          summary="narrowest (fewest flows) first, greedy allocation")
def ncf(instance: Instance, *, seed: Any = None, allocation: str = "greedy",
        split: str = "ordered", engine: str = "fast") -> Schedule:
    """Narrowest-coflow-first by number of flows."""
    del seed
    return _static(instance, "width", "ncf", allocation, split, engine)


@register("lcf", kind="online", clairvoyant=True, objective="average CCT (baseline)",
          summary="shortest longest-flow first, greedy allocation")
def lcf(instance: Instance, *, seed: Any = None, allocation: str = "greedy",
        split: str = "ordered", engine: str = "fast") -> Schedule:
    """Shortest-coflow-first by length (largest flow volume)."""
    del seed
    return _static(instance, "length", "lcf", allocation, split, engine)


@register("fair", kind="online", clairvoyant=False, objective="average CCT (baseline)",
          summary="per-flow max-min fair sharing")
def fair(instance: Instance, *, seed: Any = None, engine: str = "fast") -> Schedule:
    """Per-flow max-min fair sharing of every port, recomputed at every arrival and flow
    completion.  ``engine="fast"``: the pair-level kernel of :mod:`coflowopt.sim.fastfair`."""
    del seed
    if engine == "fast":
        sched = fast_fair(instance, check=_stream_check())
        sched.meta.update({"scheduler": "fair", "params": {}})
        return sched
    return _run(instance, FairPolicy(), "fair", {}, engine)


@register("aalo", kind="online", clairvoyant=False, objective="average CCT (heuristic)",
          summary="D-CLAS: priority queues on bytes sent, FIFO inside, strict priority")
def aalo(instance: Instance, *, seed: Any = None, queues: int = 10, first: float = 10.0,
         growth: float = 10.0, thresholds: Any = None, interval: float = 0.0,
         queue_weights: Any = None, split: str = "ordered", engine: str = "fast") -> Schedule:
    """Aalo's D-CLAS with the paper's defaults: 10 queues, first threshold 10 (MB on traces),
    growth 10, strict priority across queues (``queue_weights`` for weighted sharing)."""
    del seed
    params = dict(queues=queues, first=first, growth=growth, thresholds=thresholds,
                  interval=interval, queue_weights=queue_weights, split=split)
    return _run(instance, DCLASPolicy(per="coflow", **params), "aalo", params, engine)


@register("a-sebf", kind="online", clairvoyant=False, objective="average CCT (heuristic)",
          summary="D-CLAS on bytes sent per receiver port (A-SEBF)")
def a_sebf(instance: Instance, *, seed: Any = None, queues: int = 10, first: float = 10.0,
           growth: float = 10.0, thresholds: Any = None, interval: float = 0.0,
           per: str = "receiver", queue_weights: Any = None, split: str = "ordered",
           engine: str = "fast") -> Schedule:
    """A-SEBF: Aalo's queues on ``lambda = S / W`` (bytes sent over receiver ports), base-10
    thresholds; ``per="flow"`` divides by the number of flows instead."""
    del seed
    params = dict(queues=queues, first=first, growth=growth, thresholds=thresholds,
                  interval=interval, per=per, queue_weights=queue_weights, split=split)
    return _run(instance, DCLASPolicy(**params), "a-sebf", params, engine)

"""Orders to schedules: the one mechanism that turns a coflow order into rates, on either engine.

Every order-based scheduler (Sincronia, Varys, the static orders, and the multi-stage,
fairness and learned families) ends here.  :func:`order_schedule` is the public form: a fixed
order, a priority per coflow, or a callback that re-ranks the active coflows at events, turned
into a schedule by a shared allocator of :mod:`coflowopt.sim.allocate` (order-preserving greedy
or MADD), honouring releases and Starts-After edges.  :func:`run_policy` runs any policy object
on the compiled engine when it has a kernel for it (:meth:`OrderPolicy.fast`), else on the
reference engine.

Where the rates go: :func:`run_policy` writes to the :class:`~coflowopt.sim.sink.RateSink` it is
given (a compiled run streams into the validator when the sink asks; a reference run stores its
schedule) and returns the :class:`~coflowopt.sim.sink.Outcome`, as every scheduler does.
:func:`order_schedule`, the researcher's entry, returns the stored :class:`~coflowopt.Schedule`,
or with ``check`` (a :class:`~coflowopt.Tolerance`) the streamed
:class:`~coflowopt.ValidSchedule` where the compiled engine ran.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.orders import static_key
from coflowopt.schedule import Schedule
from coflowopt.sim import allocate
from coflowopt.sim.engine import SimView, simulate
from coflowopt.sim.fast import fast_simulate
from coflowopt.sim.policy import (
    BlindState,
    CompiledKey,
    EnginePolicy,
    PolicyState,
    Reranking,
    compiled_key,
)
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.validate import Tolerance, ValidSchedule

__all__ = [
    "ENGINES",
    "KeyPolicy",
    "OrderPolicy",
    "RerankPolicy",
    "StaticOrderPolicy",
    "order_schedule",
    "run_policy",
]

ENGINES = ("fast", "reference")
ALLOCATIONS = ("greedy", "madd")


class OrderPolicy:
    """Base: an order over the active coflows, refreshed when the active set changes (an arrival
    or a departure), turned into rates by ``allocation`` (``greedy`` or ``madd``)."""

    clairvoyant = True

    def __init__(self, allocation: str = "greedy", split: str = "ordered"):
        if allocation not in ALLOCATIONS:
            raise ValueError(f"allocation must be 'greedy' or 'madd', got {allocation!r}")
        self.allocation = allocation
        self.split = split
        self._active: np.ndarray | None = None
        self._order = np.zeros(0, dtype=np.int64)

    def start(self, view: SimView) -> None:
        self._active = None

    def order(self, view: SimView) -> np.ndarray:
        raise NotImplementedError

    def fast(self, inst: Instance) -> EnginePolicy | None:
        """What the compiled engine runs (:func:`~coflowopt.sim.fast.fast_simulate`), or
        ``None`` when only the reference engine runs this configuration."""
        return None

    every_event = False  # re-order at every event, not only when the active set changes

    def rates(self, view: SimView) -> float:
        if (self.every_event or self._active is None
                or not np.array_equal(self._active, view.coflows)):
            self._active = view.coflows.copy()
            self._order = np.asarray(self.order(view), dtype=np.int64)
        if self.allocation == "madd":
            allocate.madd(view.alloc, self._order)
        else:
            allocate.greedy(view.alloc, self._order, split=self.split)
        return math.inf


class StaticOrderPolicy(OrderPolicy):
    """Order by a key fixed per coflow (ties: admission time, then position).

    ``key``: a name of :func:`coflowopt.orders.static_key` (``size``, ``width``, ``length``,
    ``gamma``, ``arrival`` = admission time) or an array of one priority per coflow, smaller
    first.
    """

    def __init__(self, key: str | np.ndarray, allocation: str = "greedy",
                 split: str = "ordered"):
        super().__init__(allocation, split)
        self.key = key
        named = isinstance(key, str)
        self.clairvoyant = named and key in ("size", "length", "gamma")
        self._keys: np.ndarray | None = None

    def start(self, view: SimView) -> None:
        super().start(view)
        if not isinstance(self.key, str):
            self._keys = np.asarray(self.key, dtype=np.float64)
        elif self.clairvoyant:
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

    def fast(self, inst: Instance) -> EnginePolicy | None:
        if self.allocation != "greedy" or self.split != "ordered":
            return None
        if not isinstance(self.key, str):
            prio = np.asarray(self.key, dtype=np.float64)
        elif self.key == "arrival":
            prio = np.zeros(inst.n_coflows)  # admission order
        else:
            prio = static_key(inst, self.key)
        return EnginePolicy(priority=prio, departures=False)


class RerankPolicy(OrderPolicy):
    """An order chosen by a callback at each arrival and departure:
    ``rerank(view) -> coflow positions`` (a permutation of ``view.coflows``, first served
    first).  On the compiled engine (greedy allocation) the callback gets an
    :class:`~coflowopt.sim.policy.EngineView`, on the reference engine a
    :class:`~coflowopt.sim.engine.SimView`, with the same names."""

    def __init__(self, rerank: Callable[[SimView], Any], allocation: str = "greedy",
                 clairvoyant: bool = True, every_event: bool = False):
        super().__init__(allocation, "ordered")
        self.rerank = rerank
        self.clairvoyant = clairvoyant
        self.every_event = every_event

    def fast(self, inst: Instance) -> EnginePolicy | None:
        if self.allocation != "greedy":
            return None
        return EnginePolicy(rerank=Reranking(inst, self.rerank, self.clairvoyant),
                            every_event=self.every_event)

    def order(self, view: SimView) -> np.ndarray:
        out = np.asarray(self.rerank(view), dtype=np.int64)
        if out.shape != view.coflows.shape or not np.array_equal(np.sort(out),
                                                                 np.sort(view.coflows)):
            raise ValueError(f"rerank at t={view.t:g}: must return a permutation of the active "
                             f"coflows {view.coflows.tolist()}, got {out.tolist()}")
        return out


class KeyPolicy(OrderPolicy):
    """An order by a compiled ``key(state, c) -> float`` (smaller first; ties: admission time,
    then position), evaluated for the active coflows at every arrival and departure
    (:mod:`coflowopt.sim.policy`).  The reference engine evaluates the same function in Python
    on the same state (its executable specification)."""

    def __init__(self, key: Any, allocation: str = "greedy", clairvoyant: bool = True,
                 every_event: bool = False):
        super().__init__(allocation, "ordered")
        self.key = compiled_key(key, clairvoyant)
        self.clairvoyant = self.key.clairvoyant
        self.every_event = every_event

    def fast(self, inst: Instance) -> EnginePolicy | None:
        if self.allocation != "greedy":
            return None
        return EnginePolicy(key=self.key, sent=True, every_event=self.every_event)

    def order(self, view: SimView) -> np.ndarray:
        st = view.alloc
        adm = np.where(np.isnan(view.admitted), np.inf, view.admitted)
        cols = (view.flow_src, view.flow_dst)
        rest = (st.ptr, st.order, view.coflow_weight, view.release, adm, view.coflow_width,
                view.capacity_in, view.capacity_out)
        if self.clairvoyant:
            rem = view.remaining
            C = view.coflow_width.shape[0]
            # the engine's own fields, which a user's key does not read: unfinished flows are
            # all flows here (their remaining volume says which), no queues, no policy arrays
            own = (st.order, st.ptr[1:], np.zeros(C, dtype=np.int64),
                   np.zeros(C, dtype=np.int64), np.zeros(C), np.zeros((0, 0)), np.zeros(0),
                   np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0))
            state: Any = PolicyState(view.t, *cols, st.volume, rem, st.volume - rem, *rest,
                                     *own)
        else:
            state = BlindState(view.t, *cols, view.sent, *rest)
        fn = self.key.function.py_func
        c = view.coflows
        key = np.array([fn(state, int(j)) for j in c], dtype=np.float64)
        return c[np.lexsort((c, view.admitted[c], key))]


def run_policy(instance: Instance, policy: Any, sink: RateSink | None = None, *,
               engine: str = "fast", meta: dict[str, Any] | None = None,
               progress: Callable[[float, float], Any] | None = None) -> Outcome:
    """Run ``policy`` on the compiled engine when it has a kernel for it (``policy.fast``), else
    (or with ``engine="reference"``) on the reference engine.

    A compiled run streams its rate changes into the validator when ``sink`` streams; a
    reference run stores its schedule either way (the caller validates it).  ``meta`` is merged
    into the outcome's ``meta``.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    sink = sink or RateSink.store()
    spec = policy.fast(instance) if engine == "fast" and hasattr(policy, "fast") else None
    if spec is not None:
        out = fast_simulate(instance, spec, check=sink.check, progress=progress)
    else:
        out = simulate(instance, policy, progress=progress)
        out.meta["engine"] = "reference"
    return sink.outcome(out, meta=meta)


def order_schedule(instance: Instance, order: Sequence[int] | np.ndarray | None = None, *,
                   priority: Sequence[float] | np.ndarray | None = None,
                   rerank: Callable[[SimView], Any] | None = None,
                   key: Callable[..., float] | CompiledKey | None = None,
                   clairvoyant: bool = True, every_event: bool = False,
                   allocation: str = "greedy", engine: str = "fast",
                   check: Tolerance | None = None,
                   progress: Callable[[float, float], Any] | None = None
                   ) -> Schedule | ValidSchedule:
    """Turn a coflow order into a schedule through the shared allocators.

    Give exactly one of:

    - ``order``: coflow positions, first served first (a permutation of ``0..N-1``);
    - ``priority``: one number per coflow, smaller served first (ties: admission time, then
      position);
    - ``rerank``: ``rerank(view)`` returns the active coflows in the order to serve them; it is
      called at every arrival and departure (on the compiled engine, which returns to Python
      only then);
    - ``key``: a compiled ``key(state, c) -> float``, smaller served first, evaluated for the
      active coflows at every arrival and departure inside the compiled engine (see
      :mod:`coflowopt.sim.policy` for the state it reads).

    ``clairvoyant=False`` (``rerank``, ``key``): the policy may not read volumes (a key reads a
    :class:`~coflowopt.sim.policy.BlindState`).  ``every_event=True`` (``rerank``, ``key``):
    re-order at every event (each flow completion too), not only at arrivals and departures.

    At every instant the active coflows (released, every Starts-After predecessor complete) are
    served in that order by ``allocation``: ``"greedy"`` (order-preserving, work-conserving:
    each flow in turn takes ``min(free ingress, free egress)``; compiled engine) or ``"madd"``
    (each coflow at the MADD rates ``remaining / Gamma`` of what the ones before it left;
    reference engine).  ``check``: stream the rate changes into the validator with this
    tolerance and return the :class:`~coflowopt.ValidSchedule` (compiled engine; a reference run
    returns its stored :class:`~coflowopt.Schedule` to validate); ``progress(done, total)``
    hears how far the run is.
    """
    given = [x is not None for x in (order, priority, rerank, key)]
    if sum(given) != 1:
        raise ValueError("order_schedule: give exactly one of order, priority, rerank or key")
    if every_event and rerank is None and key is None:
        raise ValueError("order_schedule: every_event applies to a rerank or a key, not to a "
                         "fixed order or priority")
    n = instance.n_coflows
    meta: dict[str, Any] = {"scheduler": "order", "allocation": allocation}
    if rerank is not None or key is not None:
        policy: OrderPolicy = (RerankPolicy(rerank, allocation, clairvoyant, every_event)
                               if key is None
                               else KeyPolicy(key, allocation, clairvoyant, every_event))
        out = run_policy(instance, policy, _sink(check), engine=engine, meta=meta,
                         progress=progress)
        return out.valid if out.streamed else out.schedule
    if order is not None:
        o = np.asarray(order, dtype=np.int64).ravel()
        if o.size != n or not np.array_equal(np.sort(o), np.arange(n)):
            raise ValueError(f"order_schedule: order must be a permutation of the {n} coflow "
                             f"positions, got {o.size} entries")
        key = np.empty(n, dtype=np.float64)
        key[o] = np.arange(n, dtype=np.float64)
    else:
        key = np.asarray(priority, dtype=np.float64).ravel()
        if key.size != n or not np.all(np.isfinite(key)):
            raise ValueError(f"order_schedule: priority needs {n} finite numbers, one per "
                             f"coflow, got {key.size}")
    out = run_policy(instance, StaticOrderPolicy(key, allocation), _sink(check), engine=engine,
                     meta=meta, progress=progress)
    return out.valid if out.streamed else out.schedule


def _sink(check: Tolerance | None) -> RateSink:
    return RateSink.store() if check is None else RateSink.streaming(check)

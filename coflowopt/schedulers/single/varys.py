"""Varys (Chowdhury, Zhong, Stoica, SIGCOMM 2014): Smallest-Effective-Bottleneck-First (SEBF)
ordering, Minimum-Allocation-for-Desired-Duration (MADD) rates, work-conserving backfill, and
the deadline admission mode [R] (as the A-SEBF paper, Sec. 3.2, summarises SEBF and as the
authors' public simulators coflow/coflowsim and coflow/varys implement it; the Varys paper's own
text was not read)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.orders import port_loads, sebf_gamma
from coflowopt.params import Params
from coflowopt.sim import allocate
from coflowopt.sim.drive import OrderPolicy, run_policy
from coflowopt.sim.engine import SimView
from coflowopt.sim.fast import fast_simulate
from coflowopt.sim.policy import EnginePolicy, builtin_key
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["VarysDeadlinePolicy", "VarysParams", "VarysPolicy", "run_varys", "sebf_key",
           "varys_engine_policy"]


@dataclass(frozen=True)
class VarysParams(Params):
    """``allocation``: ``madd`` (Varys) or ``greedy``; ``reschedule``: ``coflow`` (order and
    MADD at arrivals and departures, as the Varys system) or ``event`` (MADD at every event,
    reference engine); ``deadlines``: the deadline admission mode with admission ``pad``;
    ``refill=False``: rates change only at coflow arrivals and departures (CoflowSim's rule,
    fast engine); ``engine``: ``fast`` or ``reference``."""

    allocation: Literal["madd", "greedy"] = "madd"
    reschedule: Literal["coflow", "event"] = "coflow"
    deadlines: bool = False
    pad: float = 0.0
    refill: bool = True
    engine: Literal["fast", "reference"] = "fast"

    def check(self) -> None:
        if self.pad < 0:
            raise ValueError(f"VarysParams.pad: must be >= 0, got {self.pad}")
        if not self.refill and (self.deadlines or self.engine != "fast"
                                or self.allocation != "madd" or self.reschedule != "coflow"):
            raise ValueError("VarysParams.refill: refill=False runs only on the fast engine, "
                             "without deadlines, with allocation='madd' and reschedule='coflow'")


@njit(cache=True)
def sebf_key(s, c):
    """SEBF on the compiled engine (a :data:`~coflowopt.sim.policy.KEY_SIGNATURE` function):
    the effective bottleneck ``Gamma_c`` of coflow ``c``'s remaining volumes with every port
    free, ``max`` over its ports of load / capacity (Varys's SEBF); ``s.scratch`` holds two zeroed
    rows of port loads and is left zeroed."""
    m = s.cap_in.size
    load_in = s.scratch[:m]
    load_out = s.scratch[m:]
    for i in range(s.ptr[c], s.live_end[c]):
        f = s.live[i]
        load_in[s.src[f]] += s.remaining[f]
        load_out[s.dst[f]] += s.remaining[f]
    gm = 0.0
    for i in range(s.ptr[c], s.live_end[c]):
        f = s.live[i]
        if load_in[s.src[f]] > 0.0:
            gm = max(gm, load_in[s.src[f]] / s.cap_in[s.src[f]])
            load_in[s.src[f]] = 0.0
        if load_out[s.dst[f]] > 0.0:
            gm = max(gm, load_out[s.dst[f]] / s.cap_out[s.dst[f]])
            load_out[s.dst[f]] = 0.0
    return gm


def varys_engine_policy(inst: Instance) -> EnginePolicy:
    """Varys on the compiled engine: SEBF re-ordered at arrivals and departures, MADD
    reservations in that order, then the work-conserving greedy backfill."""
    return EnginePolicy(key=builtin_key("sebf", sebf_key), madd=True,
                        scratch=np.zeros(2 * inst.ports))


class VarysPolicy(OrderPolicy):
    """SEBF: ascending effective bottleneck ``Gamma_j`` of the remaining volumes with all
    capacity free; MADD on the residual capacity; then a work-conserving backfill in the same
    order (Varys, SIGCOMM 2014).

    ``reschedule="coflow"`` (default): the order and the MADD rates are recomputed at coflow
    arrivals and departures, as the Varys system reschedules; in between, a flow keeps its MADD
    rate until it finishes and the backfill is redone at every event.  ``"event"`` recomputes
    MADD at every event (reference engine only).
    """

    def __init__(self, allocation: str = "madd", reschedule: str = "coflow"):
        super().__init__(allocation)
        self.reschedule = reschedule
        self._held: np.ndarray | None = None

    def order(self, view: SimView) -> np.ndarray:
        c = view.coflows
        loads = port_loads(view.instance, c, view.remaining)
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

    def fast(self, inst: Instance) -> EnginePolicy | None:
        if self.allocation != "madd" or self.reschedule != "coflow":
            return None
        return varys_engine_policy(inst)


class VarysDeadlinePolicy:
    """Varys's deadline mode (Varys, SIGCOMM 2014), on the reference engine.

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


def run_varys(instance: Instance, params: VarysParams, sink: RateSink, *, seed: Any = None,
              progress: Any = None) -> Outcome:
    """Varys: smallest effective bottleneck first, MADD rates, backfill.  Deterministic
    (``seed`` unused).  ``deadlines=True``: the deadline admission mode
    (:class:`VarysDeadlinePolicy`, job deadlines of the instance)."""
    p = params
    if not p.refill:
        out = fast_simulate(instance, varys_engine_policy(instance), refill=False,
                            check=sink.check, progress=progress)
        return sink.outcome(out, meta={"scheduler": "varys", "params": {"refill": False}})
    if p.deadlines:
        policy = VarysDeadlinePolicy(p.pad)
        out = run_policy(instance, policy, sink, engine="reference", progress=progress,
                         meta={"scheduler": "varys", "params": {"deadlines": True,
                                                                "pad": p.pad}})
        out.meta["admitted"] = sorted(c for c, v in policy.decided.items() if v is True)
        out.meta["rejected"] = sorted(c for c, v in policy.decided.items() if v is False)
        return out
    meta = {"scheduler": "varys", "params": {"allocation": p.allocation,
                                             "reschedule": p.reschedule}}
    return run_policy(instance, VarysPolicy(p.allocation, p.reschedule), sink, engine=p.engine,
                      meta=meta, progress=progress)

"""The static-progress baseline: HUG/DRF-style minimum progress guarantee ([C]: the
CoFair paper's SPS constraints (1)-(2) were not recovered; rebuilt after HUG/Coflex), the online
policy behind the SPS notion of CoFair (De Pellegrini et al., IEEE TPDS 2022).  Tags: [R]
recovered from the paper, [C] reconstructed by us (docs/families/index.md).

At every event (arrival, flow or coflow completion), on the *remaining* volumes of the active
coflows ``A``:

1. **Guarantee** ([C], the SPS constraints (1)-(2) as we rebuild them).  ``Gamma_j = max_l p_lj /
   B_l`` (remaining isolation time), normalised demands ``d_lj = (p_lj / B_l) / Gamma_j`` and the
   common progress ``P = 1 / max_l sum_{j in A} d_lj`` (HUG's optimal isolation guarantee, ``P*``
   of :func:`coflowopt.lp.static_progress` on the remaining volumes).  Flow ``i`` of ``j`` gets
   ``P v_i / Gamma_j``: all flows of ``j`` progress together at fraction ``P`` of its
   isolation (MADD) speed, so ``j`` would end ``Gamma_j / P`` later at this rate; port ``l``
   carries ``P B_l sum_j d_lj <= B_l``.
2. **Leftover** ([C], ``work_conserving=True``; HUG's second stage).  The capacity the
   guarantee leaves free is handed out by per-flow max-min fair sharing on top of the
   guaranteed rates (progressive filling, :func:`coflowopt.sim.allocate.max_min_fair`), so
   every unfinished flow ends with a saturated port.  ``work_conserving=False`` keeps only the
   guarantee: that is exactly the fair emulation Utopia ranks by
   (:func:`coflowopt.schedulers.fair.utopia.fair_emulation`), and the tests use it as an
   independent check of that emulation.

The guarantee is per event, on the remaining volumes.  Without the leftover stage the
remaining volumes stay proportional and ``P`` never falls while no coflow arrives, so with all
releases at 0 every coflow ends by ``C_j^0 / P*`` (the consequence of (1)-(2) as we rebuild them,
``S_j <= 1 / P*``). With it that static bound can fail: the leftover reshapes a coflow's remaining
demand toward
its bottleneck and lowers ``P`` at the next event (the tests give a two-coflow example:
``S = 11/6 > 1/P* = 5/3``).

Clairvoyant (it reads remaining volumes).  Two engines with the same model and events
(admissions at releases honouring Starts-After, every flow and coflow completion an event,
rates recomputed at each): ``engine="fast"`` (default) the compiled kernel of
:mod:`coflowopt.schedulers.fair.static_progress_kernel`, which streams its rate changes into
the validator when the run service hands it a streaming sink; ``engine="reference"`` the
Python policy :class:`StaticProgressPolicy` on :func:`coflowopt.sim.engine.simulate` (one seed
of the 100-coflow synthetic workload did not finish there in 4 minutes).  ``meta["progress"]``: the
``(t, P)`` of every event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedule import Schedule
from coflowopt.sim import allocate
from coflowopt.sim.drive import run_policy
from coflowopt.sim.engine import SimView
from coflowopt.sim.events import admission_inputs
from coflowopt.sim.kernel import (
    Progress,
    fluid_horizon,
    memory_limits,
    new_control,
    prepare,
    progress_target,
    run_kernel,
)
from coflowopt.sim.segstore import gather_segments
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.validate import StreamValidator, readonly

__all__ = ["StaticProgressParams", "StaticProgressPolicy", "fast_static_progress",
           "guarantee_rates", "run_static_progress"]


@dataclass(frozen=True)
class StaticProgressParams(Params):
    """``work_conserving``: hand the capacity the guarantee leaves free to the flows by
    per-flow max-min fair sharing ([C], HUG's second stage); ``False``: the guarantee
    only (the pure fair scheme).  ``engine``: ``fast`` (compiled, streams) or ``reference``
    (the Python policy on the reference engine); same schedule up to rounding."""

    work_conserving: bool = True
    engine: Literal["fast", "reference"] = "fast"


def guarantee_rates(inst: Instance, coflows: np.ndarray, remaining: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, float]:
    """The equal-progress guarantee of step 1 on ``remaining`` volumes: ``(flows, rates, P)``
    for the unfinished flows of ``coflows`` (volume per time unit).  ``P`` is ``inf`` when
    nothing is left."""
    ptr, order = inst.coflow_flows_ptr, inst.coflow_flow_order
    co = np.asarray(coflows, dtype=np.int64)
    if co.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0), math.inf
    lens = ptr[co + 1] - ptr[co]
    # the flows of the active coflows, gathered without a loop over flows
    starts = np.repeat(ptr[co] - np.cumsum(np.r_[0, lens[:-1]]), lens)
    flows = order[starts + np.arange(lens.sum())]
    local = np.repeat(np.arange(co.size), lens)
    rem = remaining[flows]
    keep = rem > 0
    flows, local, rem = flows[keep], local[keep], rem[keep]
    if flows.size == 0:
        return flows, rem, math.inf
    m = inst.ports
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    n = co.size
    key_in = local * (2 * m) + inst.flow_src[flows]
    key_out = local * (2 * m) + m + inst.flow_dst[flows]
    load = (np.bincount(key_in, weights=rem, minlength=n * 2 * m)
            + np.bincount(key_out, weights=rem, minlength=n * 2 * m)).reshape(n, 2 * m)
    t = load / cap[None, :]
    gamma = t.max(axis=1)
    d = np.divide(t, gamma[:, None], out=np.zeros_like(t), where=gamma[:, None] > 0)
    P = 1.0 / d.sum(axis=0).max()
    return flows, P * rem / gamma[local], float(P)


class StaticProgressPolicy:
    """Equal progress ``P`` for every active coflow, then (optionally) max-min fair sharing of
    the leftover (module docstring).  Records ``(t, P)`` per event in ``trace``."""

    clairvoyant = True

    def __init__(self, work_conserving: bool = True):
        self.work_conserving = bool(work_conserving)
        self.trace: list[tuple[float, float]] = []

    def start(self, view: SimView) -> None:
        self.trace = []

    def rates(self, view: SimView) -> float:
        st = view.alloc
        co = view.coflows
        st.reset(co)
        flows, r, P = guarantee_rates(view.instance, co, view.remaining)
        self.trace.append((view.t, P))
        if flows.size:
            st.rate[flows] = r
            st.has_rate[view.instance.flow_coflow[flows]] = True
            m = view.ports
            st.rem_in -= np.bincount(st.src[flows], weights=r, minlength=m)
            st.rem_out -= np.bincount(st.dst[flows], weights=r, minlength=m)
            np.maximum(st.rem_in, 0.0, out=st.rem_in)
            np.maximum(st.rem_out, 0.0, out=st.rem_out)
        if self.work_conserving:
            allocate.max_min_fair(st, co, fresh=False)
        return math.inf


def fast_static_progress(instance: Instance, work_conserving: bool = True,
                         sink: RateSink | None = None, *, progress: Progress | None = None
                         ) -> Outcome:
    """The static-progress baseline on its compiled engine (module docstring; the kernel is
    :func:`coflowopt.schedulers.fair.static_progress_kernel.run_static_progress_kernel`).
    A streaming ``sink`` gets the rate changes into the validator as they happen (nothing
    stored); otherwise the schedule is stored.  ``progress(done, total)`` in simulated time;
    Ctrl-C stops the kernel (:func:`coflowopt.sim.kernel.run_kernel`)."""
    from coflowopt.schedulers.fair.static_progress_kernel import run_static_progress_kernel
    from coflowopt.sim.engine import SimulationError

    inst = instance
    C, m = inst.n_coflows, inst.ports
    n_pred, succ_ptr, succ, rel, t0 = admission_inputs(inst)
    # the (ingress, egress) pairs that occur, numbered densely: the leftover's filling runs
    # on pairs (their flows get the same increment)
    key = inst.flow_src.astype(np.int64) * m + inst.flow_dst
    pairs, fpair = np.unique(key, return_inverse=True)
    sink = sink or RateSink.store()
    stream = StreamValidator(inst, sink.check, empty=not sink.stream,
                             flow_of_row=np.arange(inst.n_flows))
    ctl = new_control(fluid_horizon(inst, t0), C)
    args = (np.array(inst.coflow_flows_ptr, dtype=np.int64),
            np.array(inst.coflow_flow_order, dtype=np.int64),
            np.array(inst.flow_src, dtype=np.int64), np.array(inst.flow_dst, dtype=np.int64),
            readonly(np.asarray(inst.flow_volume, dtype=np.float64)), rel, n_pred, succ_ptr,
            succ, np.array(inst.fabric.capacity_in, dtype=np.float64),
            np.array(inst.fabric.capacity_out, dtype=np.float64),
            fpair.astype(np.int64).ravel(), (pairs // max(m, 1)).astype(np.int64),
            (m + pairs % max(m, 1)).astype(np.int64), bool(work_conserving), float(t0),
            sink.stream, stream.state, ctl)
    prepare(run_static_progress_kernel, *args)
    cb, units = progress_target(progress)
    run = run_kernel(run_static_progress_kernel, *args, control=ctl, progress=cb, units=units,
                     **memory_limits(not sink.stream))
    if run.status != 0:
        raise SimulationError("the static-progress engine stalled: active coflows but no "
                              "pending event")
    meta = {"events": int(run.events), "engine": "fast",
            "progress": np.column_stack([run.progress_t, run.progress_p]).reshape(-1, 2)}
    bps, store = run.breakpoints, run.store
    del run
    if sink.stream:
        stream.finish(bps, store[4], buffer=store[:2])
        return sink.outcome(stream.result(meta))
    seg_i, seg_d = gather_segments(*store)
    del store
    return sink.outcome(Schedule.from_segments(bps, seg_i[0], seg_d, seg_i[1], seg_i[2],
                                               meta=meta))


def run_static_progress(instance: Instance, params: StaticProgressParams, sink: RateSink, *,
                        seed: Any = None, progress: Any = None) -> Outcome:
    """The static-progress baseline (module docstring) on ``params.engine``.  Deterministic
    (``seed`` unused).  The compiled engine streams into a streaming ``sink``; the reference
    engine always stores its schedule."""
    p = params
    meta = {"scheduler": "static-progress",
            "params": {"work_conserving": p.work_conserving, "engine": p.engine}}
    if p.engine == "fast":
        return fast_static_progress(instance, p.work_conserving, sink,
                                    progress=progress).with_meta(meta)
    pol = StaticProgressPolicy(p.work_conserving)
    out = run_policy(instance, pol, sink, engine="reference", meta=meta, progress=progress)
    out.meta["progress"] = np.asarray(pol.trace, dtype=np.float64).reshape(-1, 2)
    return out

"""The public entry of CoflowSim semantics: :func:`coflowsim`, its parameters and result.

Builds CoflowSim's jobs (:mod:`~coflowopt.sim.coflowsim.model`), runs the scheduler's kernel
(:mod:`~coflowopt.sim.coflowsim.ordered` for the coflow-level orders of Varys, Aalo and
A-SEBF, :mod:`~coflowopt.sim.coflowsim.fair`, :mod:`~coflowopt.sim.coflowsim.pfp`) in a worker
thread, and returns the schedule on the transformed instance, stored or streamed into the
validator (:mod:`~coflowopt.sim.coflowsim.stream`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.sim.coflowsim import pfp
from coflowopt.sim.coflowsim.fair import FAIR_STEPS, run_fair
from coflowopt.sim.coflowsim.model import (
    MIB,
    VOLUME_RTOL,
    CoflowSimParams,
    JobModel,
    build_model,
    horizon,
    model_flows,
    transformed,
)
from coflowopt.sim.coflowsim.ordered import run_ordered
from coflowopt.sim.coflowsim.pfp import PFP_STEPS, run_pfp
from coflowopt.sim.kernel import (
    Notify,
    Progress,
    memory_limits,
    new_control,
    prepare,
    progress_target,
    run_kernel,
)
from coflowopt.validate import StreamValidator, Tolerance, ValidSchedule

__all__ = ["COFLOWSIM_CLAIRVOYANT", "COFLOWSIM_SCHEDULERS", "CoflowSimResult", "close_drift",
           "coflowsim", "mode_tolerance"]

#: CoflowSim's scheduler names (``SHARING_ALGO``) and the toolkit names accepted for them.
COFLOWSIM_SCHEDULERS: dict[str, str] = {
    "sebf": "sebf", "varys": "sebf",
    "dark": "dark", "aalo": "dark",
    "fifo": "fifo", "scf": "scf", "ncf": "ncf", "lcf": "lcf",
    "fair": "fair", "pfp": "pfp",
    "a-sebf": "a-sebf", "asebf": "a-sebf",
}
#: Whether the CoflowSim scheduler reads flow sizes (every coflow-level order runs MADD, which
#: needs the bytes left; only DARK and FAIR do without).
COFLOWSIM_CLAIRVOYANT: dict[str, bool] = {
    k: k not in ("dark", "fair", "a-sebf")
    for k in ("fifo", "scf", "ncf", "lcf", "sebf", "dark", "fair", "pfp", "a-sebf")}


@dataclass(frozen=True)
class CoflowSimResult:
    """One CoflowSim-semantics run.

    ``instance``: the transformed instance the schedule is for (CoflowSim's flows in MB,
    releases at the admission epochs; coflows in the original instance's order);
    ``schedule``: the stored schedule, ``None`` when the run was streamed into the validator
    (``check``); ``valid``: then the :class:`~coflowopt.ValidSchedule` (its breakpoint
    indices, in violation messages, are quanta); ``start``/``finish``/``cct``: per coflow, ms,
    as CoflowSim prints them; ``runtime``: CPU seconds of the simulation (model, kernel and
    schedule, or the streamed validation); ``madd_excess``: the largest oversubscription of a
    port MADD made, relative to its capacity; ``residue_excess``: the most residue bytes one
    port takes in a departure's quantum, relative to what it carries in a quantum (both 0:
    none; see :attr:`tolerance`); ``capacity_excess_at`` says where
    (``"MADD port out 658 at 1312616 ms; residues port out 3 at 7997512 ms"``).
    """

    scheduler: str
    instance: Instance
    schedule: Schedule | None
    start: np.ndarray
    finish: np.ndarray
    runtime: float
    params: CoflowSimParams = field(repr=False)
    valid: ValidSchedule | None = field(default=None, repr=False)
    madd_excess: float = 0.0
    residue_excess: float = 0.0
    capacity_excess_at: str = ""

    @property
    def cct(self) -> np.ndarray:
        return self.finish - self.start

    @property
    def capacity_excess(self) -> float:
        """How far CoflowSim's own accounting can take a port over its capacity, relative to
        it: ``madd_excess + residue_excess``."""
        return self.madd_excess + self.residue_excess

    @property
    def tolerance(self) -> Tolerance:
        """The validator tolerance of CoflowSim's finishing rule: a flow is done when at most
        ``Constants.ZERO`` bytes (1e-3 / 2^20 MB) are left; the relative slack of 1e-12 only
        covers the rounding of the validator's own sums over a flow's segments.  The capacity
        tolerance is the default plus :attr:`capacity_excess`.  CoflowSim keeps a reducer's
        bytes left in its own counter, which rounding leaves a few bytes off its flows' bytes
        left.  MADD reads that counter and caps each flow at the free capacity but not a
        coflow's sum, so it can give a port slightly more than it has; and a reducer whose
        counter reaches ``ZERO`` first completes with its flows still holding a residue,
        which the schedule delivers in the coflow's last quantum, on top of what the port
        carries then."""
        return widened(mode_tolerance(self.params), self.capacity_excess)

    @property
    def average_cct(self) -> float:
        return float(self.cct.mean()) if self.cct.size else 0.0


def mode_tolerance(params: CoflowSimParams) -> Tolerance:
    """The validator tolerance of CoflowSim's finishing rule (:attr:`CoflowSimResult.tolerance`)."""
    return Tolerance(volume_rtol=VOLUME_RTOL, atol=params.zero / MIB)


def widened(tol: Tolerance, excess: float) -> Tolerance:
    """``tol`` with its capacity tolerance raised by CoflowSim's own oversubscription
    ``excess`` (:attr:`CoflowSimResult.capacity_excess`)."""
    return replace(tol, capacity_rtol=tol.capacity_rtol + excess) if excess > 0 else tol


@njit(cache=True)
def close_drift(sf, sa, sb, sd, where, volume, q, index):
    """In place: segments become flows of the transformed instance (``sf``), rates in MB/ms
    (``sd``) and breakpoint indices (``sa``, ``sb``; ``index`` maps a quantum to its
    breakpoint), with each flow's last segment carrying its floating-point drift.  In place
    because on FAIR each fresh 61-million-entry array costs about a second of page faults.

    CoflowSim sends ``d`` bytes per quantum but its byte counter removes ``d`` rounded to the
    counter's grid, so a flow it calls finished has sent its volume give or take a few
    thousandths of a byte.  The schedule puts that difference into the flow's last quantum, so
    that it delivers exactly the volume and the validator can hold it to CoflowSim's own
    finishing rule (:attr:`CoflowSimResult.tolerance`)."""
    sent = np.zeros(volume.size)
    last = np.full(volume.size, -1, dtype=np.int64)
    last_first = np.zeros(volume.size, dtype=np.int64)
    last_dur = np.zeros(volume.size, dtype=np.int64)
    for i in range(sf.size):
        f = where[sf[i]]
        r = sd[i] / 1048576.0 / q
        dur = (sb[i] - sa[i]) * q
        sent[f] += r * dur
        a = index[sa[i]]  # index is increasing in the quantum: same order as sa
        if last[f] < 0 or a >= last_first[f]:
            last[f] = i
            last_first[f] = a
            last_dur[f] = dur
        sf[i] = f
        sd[i] = r
        sb[i] = index[sb[i]]
        sa[i] = a
    for f in range(volume.size):
        i = last[f]
        if i >= 0:
            sd[i] = max(sd[i] + (volume[f] - sent[f]) / last_dur[f], 0.0)
    return sf, sd, sa, sb


def _canonical(scheduler: str) -> str:
    key = scheduler.strip().lower()
    if key not in COFLOWSIM_SCHEDULERS:
        raise KeyError(f"coflowsim semantics: unknown scheduler {scheduler!r}; CoflowSim has "
                       f"{', '.join(sorted(set(COFLOWSIM_SCHEDULERS.values())))} "
                       "(varys = sebf, aalo = dark)")
    return COFLOWSIM_SCHEDULERS[key]


def _ordered_choices(name: str, model: JobModel) -> tuple[bool, bool, np.ndarray, np.ndarray]:
    """The ordered kernel's choices for scheduler ``name``: ``(dark, lcf, key, width)``
    (:mod:`~coflowopt.sim.coflowsim.ordered`).  FIFO's all-zero key appends each job; LCF's key
    is refreshed from the bytes left at each insertion."""
    n = model.arrival.size
    keys = {"scf": model.scf_key, "ncf": model.ncf_key.astype(np.float64),
            "sebf": model.alpha}
    key = keys[name].copy() if name in keys else np.zeros(n)
    width = np.ones(n)
    if name == "a-sebf":  # bytes sent per receiver port (numReducers after the merge by rack)
        width = np.maximum(np.diff(model.red_ptr), 1).astype(np.float64)
    return name in ("dark", "a-sebf"), name == "lcf", key, width


def coflowsim(instance: Instance, scheduler: str = "sebf", *,
              params: CoflowSimParams | None = None,
              check: Tolerance | bool | None = None, progress: Progress | None = None,
              notify: Notify | None = None, control: np.ndarray | None = None
              ) -> CoflowSimResult:
    """Run ``scheduler`` under CoflowSim's semantics (:mod:`coflowopt.sim.coflowsim`).

    ``scheduler``: CoflowSim's names ``sebf``, ``dark``, ``fifo``, ``scf`` (shortest: smallest
    largest-reducer / M first), ``ncf`` (narrowest: min(M, R)), ``lcf`` (lightest: total bytes
    left), ``fair``, ``pfp``; ``varys`` and ``aalo`` are accepted for ``sebf`` and ``dark``;
    and ``a-sebf`` (``asebf``): DARK with the queues on bytes sent per receiver port (the
    A-SEBF paper's bottleneck factor ``λ = S / W``).  The instance is read as CoflowSim reads a
    trace: one mapper per distinct source port, one reducer per distinct destination port
    receiving the sum of its flows, split evenly.

    ``check``: stream every rate change into the validator as the kernel makes it, with these
    tolerances (``True``: the mode's own, :attr:`CoflowSimResult.tolerance`); nothing is
    stored (``result.schedule`` is ``None``) and ``result.valid`` is the
    :class:`~coflowopt.ValidSchedule`, with the times validating the stored schedule gives
    (:class:`~coflowopt.InfeasibleSchedule` if it fails).  FB2010 with SEBF: 27 million
    segments stored, none streamed.

    The kernel runs in a worker thread (:func:`coflowopt.sim.kernel.run_kernel`): Ctrl-C
    stops it within a fraction of a second and raises ``KeyboardInterrupt``.
    ``progress(t, horizon)``: simulated ms reached and an estimate of the run's length
    (raised to ``t`` when passed).  ``notify``: hears when the kernel compiles (default:
    stderr).
    ``control``: a caller's control array, as for :func:`coflowopt.sim.fast.fast_simulate`.
    """
    params = params or CoflowSimParams()
    name = _canonical(scheduler)
    n_edges = len(instance.starts_after) + len(instance.finishes_before)
    if n_edges:
        raise ValueError(f"coflowsim semantics are single-stage: the instance has {n_edges} "
                         "precedence edges (Starts-After/Finishes-Before), CoflowSim has none")
    lean = check is not None and check is not False
    t0 = time.process_time()
    model = build_model(instance, params)
    q = params.quantum_ms
    # the flows the validator checks and the instance holds (built after the run, with its
    # releases at the admission epochs)
    flows = model_flows(model, instance.n_coflows)
    if lean:
        tol = mode_tolerance(params) if check is True else check
        assert isinstance(tol, Tolerance)
        src, dst, volume, _, where = flows
        cap = np.full(instance.fabric.ports, 0.125)
        # rows in the kernels' flow order: the flows a kernel changes together sit together
        stream = StreamValidator.from_flows(src, dst, volume, cap, cap, tol, flow_of_row=where)
        fvol = volume[where]
        del src, dst, volume
    else:
        stream = StreamValidator(instance, empty=True, size=1)
        where = np.zeros(0, dtype=np.int64)
        fvol = np.zeros(0)
    ctl = new_control(horizon(model, params), instance.n_coflows, control)
    lean_args = (lean, where, fvol, stream.state, *stream.buffer, ctl)
    m = model
    if name == "fair":  # one rate group per (mapper port, reducer port) pair
        fdst = m.red_rack[np.repeat(np.arange(m.red_rack.size), np.diff(m.flow_ptr))]
        pairs, pair_of = np.unique(m.flow_src * m.n_out + fdst, return_inverse=True)
        pair_of = pair_of.astype(np.int64).ravel()
        groups = stream.grouped(pairs // m.n_out if lean else pairs[:0],
                                pairs % m.n_out if lean else pairs[:0])
        fn = run_fair
        args = (*FAIR_STEPS, m.arrival, m.red_ptr, m.red_rack, m.flow_ptr, m.flow_src,
                m.flow_size, pair_of, pairs.size, m.n_in, m.n_out, params.epoch_ms, q,
                params.zero, lean, where, fvol,
                stream.state, groups, *stream.buffer, ctl)
    elif name == "pfp":
        fn = run_pfp
        args = (*PFP_STEPS, m.arrival, m.red_ptr, m.red_rack, m.flow_ptr, m.flow_src,
                m.flow_size, m.n_in, m.n_out, params.epoch_ms, q, params.zero,
                pfp.FREED_PER_PORT, *lean_args)
    else:
        fn = run_ordered
        # without pseudo-deadlines the backfill follows admission order (ties keep the list's)
        dl = m.deadline.copy() if params.pseudo_deadlines else np.zeros_like(m.deadline)
        args = (*_ordered_choices(name, m), m.arrival, m.red_ptr, m.red_rack, m.red_bytes,
                m.red_perrack, m.flow_ptr, m.flow_src, m.flow_size, dl, m.n_in, m.n_out,
                params.epoch_ms, q, params.zero, params.dark_queues,
                params.dark_first_mib * MIB, params.dark_factor, params.static_keys,
                *lean_args)
    prepare(fn, *args, notify=notify)
    cb, units = progress_target(progress)
    out = run_kernel(fn, *args, control=ctl, progress=cb, units=units, **memory_limits(not lean))
    start, finish, sf, sa, sb, sd = out[:6]
    tbp, n_buf, k_first = out[-3:]
    madd = resid = 0.0
    at = ""
    if fn is run_ordered:  # the coflow-level orders: CoflowSim's own excesses (note_excess)
        over = out[6]
        madd, resid = float(over[0]), float(over[5])
        at = "; ".join(f"{what} port {'out' if over[k + 1] else 'in'} {int(over[k + 2])} at "
                       f"{over[k + 3]:.0f} ms" for k, what in ((0, "MADD"), (5, "residues"))
                       if over[k] > 0)
    del out
    inst, where = transformed(instance, model, start, flows)
    del flows
    meta = {"scheduler": f"coflowsim:{name}", "semantics": "coflowsim"}
    excess = madd + resid
    if excess > 0:
        meta["capacity_excess"] = excess
        meta["capacity_excess_at"] = at
    sched = valid = None
    if lean:
        stream.finish(tbp, int(n_buf))
        valid = stream.result(meta, instance=inst)
        # the stored schedule's first breakpoint is the first quantum with a change; the
        # capacity was checked with the kernel's widened tolerance (note_excess)
        valid = replace(valid, start=float(max(int(k_first), 0)) * q,
                        tolerance=widened(valid.tolerance, excess))
    else:
        # breakpoints: the quanta where some segment starts or ends (a marker array, not a
        # sort)
        top = int(sb.max()) + 1 if sb.size else 1
        mark = np.zeros(top + 1, dtype=np.bool_)
        mark[sa] = True
        mark[sb] = True
        if not mark.any():
            mark[0] = True
        index = np.cumsum(mark) - 1
        flow, rate, first, last = close_drift(sf, sa, sb, sd, where,
                                               np.asarray(inst.flow_volume), q, index)
        sched = Schedule.from_segments(np.flatnonzero(mark).astype(np.float64) * q, flow, rate,
                                       first, last, meta=meta)
    runtime = time.process_time() - t0
    st = np.empty(instance.n_coflows)
    fi = np.empty(instance.n_coflows)
    st[model.order] = start
    fi[model.order] = finish
    return CoflowSimResult(name, inst, sched, st, fi, runtime, params, valid, madd, resid, at)

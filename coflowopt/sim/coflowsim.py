"""CoflowSim semantics: reproduce the Java simulator's per-coflow results, fast.

Most coflow papers of the last decade report numbers from CoflowSim (``coflow/coflowsim``).  Its
semantics differ from an exact fluid simulation (spec ``single-stage-and-learning.md`` §10.2):

- a port moves exactly 1 MiB (one trace "MB") per 8 ms quantum; time advances in quanta, so
  finish times are multiples of 8 ms and a flow that finishes inside a quantum wastes the rest;
- arrivals are admitted in 10,240 ms epochs: a coflow arriving in ``(T, T + 10240]`` is admitted
  at ``T`` (and at 0 for arrivals up to 10,240) and its CCT is measured from there;
- each reducer's MB is rounded up to whole MiB, then to a multiple of the mapper count, and
  split evenly over the mappers (every flow a whole number of MiB, at least 1);
- rates are recomputed only at events (an epoch with admissions, or a whole coflow departing):
  bandwidth freed by a finished flow stays idle until the next event;
- orders are fixed at insertion from static keys; the coflow-level schedulers run MADD over the
  order, split what is left equally per flow among coflows that need a saturated port, and
  backfill in pseudo-deadline order (start + isolated duration x U[1, 2) drawn from
  ``java.util.Random(17)``, one draw per coflow in arrival order);
- DARK (Aalo's D-CLAS): 10 queues on bytes sent, first limit 10 MiB, x10, strict priority,
  FIFO by queue entry, updated only at events, per-flow equal split inside a coflow;
- A-SEBF (not in CoflowSim; spec §7.3 and §10.4): DARK with the queue key ``λ = S / W``, the
  bytes sent over the coflow's receiver ports (``shuffleBytesCompleted / numReducers``);
- FAIR: per-flow sharing, each flow ``min(C / #flows at its reducer, C / #flows at its
  mapper)``; PFP: each reducer port, in port order, serves at full rate the first flow of its
  list (kept sorted by size at insertion) whose mapper is still idle.

Details read off CoflowSim's output where the spec is silent: a reducer completes when its own
bytes-left counter reaches ``Constants.ZERO`` even if a flow still holds a residue; such
"zombie" flows keep their rates (and capacity) while their coflow lives, move until the next
layout of the port lists, and keep decrementing the counter, whose negative value can then
dominate a coflow's MADD bottleneck.

The Java simulator advances every flow every quantum (CoflowSim needs 580 to 980 s of CPU on the
FB2010 trace).  Here rates are constant between events, so a compiled kernel jumps from event to
event.  To agree with Java to the millisecond the jump replays Java's floating point exactly: a
quantum subtracts the per-quantum byte count ``d`` from the bytes left ``x``; while ``x`` stays in
one binade ``[2^e, 2^(e+1))`` every rounded subtraction removes the same grid multiple of ``d``,
so a run of quanta collapses to integer arithmetic on the grid (:func:`_advance`).

The schedule records a flow's rate as the ``d`` Java computes, but Java's counter removes ``d``
rounded to its grid, so over a long run the two part by up to half an ulp a quantum.  The kernel
keeps that drift under ``ZERO / 4`` bytes (a run that would pass it is recorded at its exact mean
bytes per quantum) and, in the window where a flow finishes, leaves its last quantum more than
the validator's slack: the last quantum (more than ``ZERO`` bytes in Java) then takes up the
difference and the flow is done in the same quantum as in Java.

Units: the transformed instance is in MB (= MiB of the trace) and ms, capacity 1/8 MB per ms,
like :func:`coflowopt.workloads.read_trace`.  Every schedule is returned on that transformed
instance (rounded volumes, releases moved to the admission epoch), which the validator checks.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from coflowopt._jit import njit
from coflowopt.model import Fabric, Instance
from coflowopt.params import Params
from coflowopt.schedule import Schedule
from coflowopt.sim.kernel import (
    CTL_DONE,
    CTL_EVENTS,
    CTL_STATUS,
    CTL_TIME,
    Notify,
    Progress,
    new_control,
    prepare,
    progress_target,
    run_kernel,
    stop_requested,
)
from coflowopt.sim.segstore import gather_segments, new_store, put_segment, set_segment_end
from coflowopt.validate import (
    StreamValidator,
    Tolerance,
    ValidSchedule,
    group_consume,
    member_push,
    own_push,
    stream_consume,
    stream_push,
)

__all__ = [
    "COFLOWSIM_CLAIRVOYANT",
    "COFLOWSIM_SCHEDULERS",
    "CoflowSimParams",
    "CoflowSimResult",
    "JavaRandom",
    "coflowsim",
    "coflowsim_instance",
]

MIB = 1048576.0

#: CoflowSim's scheduler names (``SHARING_ALGO``) and the toolkit names accepted for them.
COFLOWSIM_SCHEDULERS: dict[str, str] = {
    "sebf": "sebf", "varys": "sebf",
    "dark": "dark", "aalo": "dark",
    "fifo": "fifo", "scf": "scf", "ncf": "ncf", "lcf": "lcf",
    "fair": "fair", "pfp": "pfp",
    "a-sebf": "a-sebf", "asebf": "a-sebf",
}
_KIND = {"fifo": 0, "scf": 1, "ncf": 2, "lcf": 3, "sebf": 4, "dark": 5, "fair": 6, "pfp": 7,
         "a-sebf": 8}
#: Whether the CoflowSim scheduler reads flow sizes (every coflow-level order runs MADD, which
#: needs the bytes left; only DARK and FAIR do without).
COFLOWSIM_CLAIRVOYANT: dict[str, bool] = {k: k not in ("dark", "fair", "a-sebf") for k in _KIND}


@dataclass(frozen=True)
class CoflowSimParams(Params):
    """CoflowSim's constants (``Constants.java``, ``CoflowSim.java``) and the rule switches used
    by the ablation.  Defaults reproduce CoflowSim.

    ``epoch_ms``: admission epoch (10 x 1024 ms).  ``quantum_ms``: time step (8 ms, the time a
    port needs for 1 MiB).  ``round_volumes``: round reducers up to whole MiB and to a multiple
    of the mapper count.  ``pseudo_deadlines``: backfill in pseudo-deadline order (else in
    admission order).  ``static_keys``: the order keeps the key fixed at insertion (else the
    coflow-level orders are re-sorted at every event by the bottleneck of the bytes left, as
    Varys does).  ``seed``: the ``java.util.Random`` seed of the pseudo-deadlines.
    ``dark_queues``, ``dark_first_mib``, ``dark_factor``: D-CLAS queues.
    """

    epoch_ms: int = 10 * 1024
    quantum_ms: int = 8
    round_volumes: bool = True
    pseudo_deadlines: bool = True
    static_keys: bool = True
    seed: int = 17
    dark_queues: int = 10
    dark_first_mib: float = 10.0
    dark_factor: float = 10.0
    zero: float = 1e-3  # Constants.ZERO, bytes (and bps)

    def check(self) -> None:
        if self.quantum_ms < 1 or self.epoch_ms < self.quantum_ms:
            raise ValueError(f"CoflowSimParams: need 1 <= quantum_ms <= epoch_ms, got "
                             f"quantum_ms={self.quantum_ms}, epoch_ms={self.epoch_ms}")
        if self.epoch_ms % self.quantum_ms:
            raise ValueError(f"CoflowSimParams: epoch_ms ({self.epoch_ms}) must be a multiple "
                             f"of quantum_ms ({self.quantum_ms})")
        if self.dark_queues < 1 or self.dark_factor <= 1 or self.dark_first_mib <= 0:
            raise ValueError("CoflowSimParams: need dark_queues >= 1, dark_factor > 1, "
                             "dark_first_mib > 0")


@dataclass(frozen=True)
class CoflowSimResult:
    """One CoflowSim-semantics run.

    ``instance``: the transformed instance the schedule is for (CoflowSim's flows in MB,
    releases at the admission epochs; coflows in the original instance's order);
    ``schedule``: the stored schedule, ``None`` when the run was streamed into the validator
    (``check``); ``valid``: then the :class:`~coflowopt.ValidSchedule` (its breakpoint
    indices, in violation messages, are quanta); ``start``/``finish``/``cct``: per coflow, ms,
    as CoflowSim prints them; ``runtime``: CPU seconds of the simulation (model, kernel and
    schedule, or the streamed validation).
    """

    scheduler: str
    instance: Instance
    schedule: Schedule | None
    start: np.ndarray
    finish: np.ndarray
    runtime: float
    params: CoflowSimParams = field(repr=False)
    valid: ValidSchedule | None = field(default=None, repr=False)

    @property
    def cct(self) -> np.ndarray:
        return self.finish - self.start

    @property
    def tolerance(self) -> Tolerance:
        """The validator tolerance of CoflowSim's finishing rule: a flow is done when at most
        ``Constants.ZERO`` bytes (1e-3 / 2^20 MB) are left; the relative slack of 1e-12 only
        covers the rounding of the validator's own sums over a flow's segments."""
        return _mode_tolerance(self.params)

    @property
    def average_cct(self) -> float:
        return float(self.cct.mean()) if self.cct.size else 0.0


_VOLUME_RTOL = 1e-12


def _mode_tolerance(params: CoflowSimParams) -> Tolerance:
    return Tolerance(volume_rtol=_VOLUME_RTOL, atol=params.zero / MIB)


class JavaRandom:
    """``java.util.Random``: the documented 48-bit linear congruential generator."""

    _MULT = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int):
        self._seed = (int(seed) ^ self._MULT) & self._MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self._MULT + 0xB) & self._MASK
        return self._seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * 2.0**-53


# -- the transformed instance -----------------------------------------------------------------


@dataclass(frozen=True)
class _Model:
    order: np.ndarray  # original coflow index per job, jobs in CoflowSim's (arrival) order
    arrival: np.ndarray
    red_ptr: np.ndarray  # job -> reducers
    red_rack: np.ndarray
    red_bytes: np.ndarray
    red_perrack: np.ndarray  # Job.shuffleBytesPerRack before the mapper rounding (LCF key)
    flow_ptr: np.ndarray  # reducer -> flows
    flow_src: np.ndarray
    flow_size: np.ndarray
    alpha: np.ndarray
    deadline: np.ndarray
    scf_key: np.ndarray
    ncf_key: np.ndarray
    n_in: int
    n_out: int


def _ceil_mib(b: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """``ReduceTask.roundToNearestNMB``: truncate to whole bytes, round up to ``mult`` MiB."""
    tmp = b.astype(np.int64)  # (long) cast truncates
    unit = mult.astype(np.int64) * 1048576
    n = tmp // unit + (tmp % unit > 0)
    return (unit * n).astype(np.float64)


def _reducer_mb(vol: np.ndarray, n_map: int) -> float:
    """A reducer's MB from its flows: the trace value when all flows carry ``MB / M``."""
    from coflowopt.workloads.trace import reducer_total

    if vol.size == n_map and np.all(vol == vol[0]):
        try:
            return reducer_total(float(vol[0]), n_map)
        except ValueError:
            pass
    return float(vol.sum())


def _cat(xs: list[np.ndarray], dt: Any) -> np.ndarray:
    return np.concatenate(xs).astype(dt) if xs else np.zeros(0, dtype=dt)


def _build_model(inst: Instance, params: CoflowSimParams) -> _Model:
    n = inst.n_coflows
    release = np.asarray(inst.release, dtype=np.float64)
    order = np.argsort(release, kind="stable")  # JobCollection.sortByStartTime is stable
    red_ptr = [0]
    red_rack: list[int] = []
    red_bytes: list[float] = []
    red_perrack: list[float] = []
    flow_ptr = [0]
    flow_src: list[np.ndarray] = []
    flow_size: list[np.ndarray] = []
    alpha = np.zeros(n)
    scf = np.zeros(n)
    ncf = np.zeros(n, dtype=np.int64)
    for j, c in enumerate(order):
        fl = inst.flows_of(int(c))
        src = inst.flow_src[fl]
        dst = inst.flow_dst[fl]
        vol = inst.flow_volume[fl].astype(np.float64)
        mappers = np.unique(src)
        reducers = np.unique(dst)
        m = int(mappers.size)
        mb = np.array([_reducer_mb(vol[dst == r], m) for r in reducers])
        raw = mb * MIB
        if params.round_volumes:
            per = _ceil_mib(raw, np.ones(reducers.size, dtype=np.int64))
            merged = _ceil_mib(per, np.full(reducers.size, max(m, 1), dtype=np.int64))
            fsize = np.maximum(merged / max(m, 1), MIB)
        else:
            per = raw
            merged = raw
            fsize = merged / max(m, 1)
        total = float(merged.sum()) if m else 0.0
        for r in range(reducers.size):
            red_rack.append(int(reducers[r]))
            red_bytes.append(float(merged[r]))
            red_perrack.append(float(per[r]))
            flow_src.append(mappers)
            flow_size.append(np.full(m, fsize[r]))
            flow_ptr.append(flow_ptr[-1] + m)
        red_ptr.append(len(red_rack))
        if m:
            # Job.calcAlphaDeadline: each mapper rack sends total / M, each reducer its bytes
            alpha[j] = max(total / m, float(merged.max()) if merged.size else 0.0)
            scf[j] = (float(merged.max()) if merged.size else 0.0) / m
            ncf[j] = min(m, int(reducers.size))
    rng = JavaRandom(params.seed)
    mult = np.ones(n)
    for j in range(n):  # Simulator.mergeTasksByRack: one draw per admitted coflow
        if red_ptr[j + 1] > red_ptr[j]:
            mult[j] = 1.0 + rng.next_double() * 1.0
    rack_bytes_per_s = 1024 * MIB / 8.0
    deadline = alpha / rack_bytes_per_s * mult * 1000
    return _Model(
        order=order.astype(np.int64), arrival=release[order],
        red_ptr=np.array(red_ptr, dtype=np.int64), red_rack=np.array(red_rack, dtype=np.int64),
        red_bytes=np.array(red_bytes), red_perrack=np.array(red_perrack),
        flow_ptr=np.array(flow_ptr, dtype=np.int64), flow_src=_cat(flow_src, np.int64),
        flow_size=_cat(flow_size, np.float64), alpha=alpha, deadline=deadline, scf_key=scf,
        ncf_key=ncf, n_in=inst.fabric.ports, n_out=inst.fabric.ports,
    )


# -- exact replay of Java's per-quantum floating point ---------------------------------------


@intrinsic
def _bits(typingctx, x):
    """The IEEE 754 bits of a float64, as an int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, b):
    """The float64 with these IEEE 754 bits."""
    if b != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@njit(cache=True, error_model="numpy", inline="always")
def _advance(x, d, m, zero):
    """Apply up to ``m`` quanta of ``b = min(d, x); x -= b`` (CoflowSim's flow update), stopping
    at the quantum after which ``x <= zero`` (the flow finishes).

    Returns ``(x, quanta, finished, b_last)``, ``b_last`` the bytes of the last quantum taken.
    Exact in IEEE double: inside one binade every rounded subtraction removes the grid multiple
    ``D`` nearest to ``d`` (no ties), so a run of quanta is integer arithmetic on the grid.
    The binade and its grid step come from the float's exponent bits (``math.frexp`` and
    ``ldexp`` went through libm, a third of FAIR's kernel time); inlined, because FAIR calls
    it 61 million times on FB2010."""
    steps = 0
    if d <= 0.0:
        return x, m, False, 0.0
    while steps < m:
        if x <= d:
            return 0.0, steps + 1, True, x
        x1 = x - d
        be = (_bits(x) >> 52) & 0x7FF  # x in [2^(be - 1023), 2^(be - 1022))
        if be >= 53:
            lo = _from_bits(be << 52)
            u = _from_bits((be - 52) << 52)
        else:  # the grid step would be subnormal
            _, e = math.frexp(x)
            lo = math.ldexp(0.5, e)
            u = math.ldexp(0.5, e - 52)
        big = x1 > lo + 2.0 * u and lo > zero
        if big:
            dd = x - x1  # exact: both on the grid of this binade
            if dd == 0.0:
                return x, m, False, d  # d below half a grid step: x never moves
            if 2.0 * abs(d - dd) != u:  # a tie would round to even: step one by one
                dk = np.int64(dd / u)
                xk = np.int64((x - lo) / u)
                n = (xk - 2) // dk  # results stay >= lo + 2u
                if d >= lo:  # pre-step values must stay > d
                    fl = np.int64(math.floor((d - lo) / u))
                    na = (xk - fl - 1) // dk + 1
                    if na < n:
                        n = na
                if n > m - steps:
                    n = m - steps
                if n >= 1:
                    x = lo + (xk - n * dk) * u
                    steps += n
                    continue
        x = x1
        steps += 1
        if x <= zero:
            return x, steps, True, d
    return x, steps, False, d


@njit(cache=True, error_model="numpy")
def _quanta(s, sign, buf, m, n_q, clamp, zero):
    """``n_q`` quanta of ``for b in buf: s += sign * b`` (``clamp``: ``s = max(s, 0)`` after each
    step, ``Job.decreaseShuffleBytesPerRack``), exactly: inside one binade each rounded step adds
    the grid multiple nearest to ``b``, so whole quanta collapse to integer grid arithmetic.
    Returns ``(s, c)``, ``c`` the first quantum (1-based) that ended with ``s <= zero``, or 0."""
    done_q = 0
    cross = 0
    while n_q > 0 and m > 0:
        if s > 1.0:
            _, e = math.frexp(s)
            lo = math.ldexp(0.5, e)
            u = math.ldexp(0.5, e - 52)
            p = s
            ok = True
            for k in range(m):
                b = buf[k]
                if b < 0.0:
                    ok = False
                p2 = p + sign * b
                if 2.0 * abs(abs(p2 - p) - b) == u:
                    ok = False  # a tie rounds to even: not the same step every quantum
                p = p2
            if ok and p >= lo + 2.0 * u and p <= 2.0 * lo - 2.0 * u:
                delta = abs(p - s)
                if delta == 0.0:
                    return s, cross
                dk = np.int64(delta / u)
                xk = np.int64((s - lo) / u)
                if sign < 0:
                    n = (xk - 2) // dk
                else:
                    n = (np.int64(4503599627370496) - 2 - xk) // dk
                if n > n_q:
                    n = n_q
                if n >= 1:
                    s = lo + (xk + sign * n * dk) * u
                    n_q -= n
                    done_q += n
                    continue
        for k in range(m):
            s = s + sign * buf[k]
            if clamp and s < 0.0:
                s = 0.0
        n_q -= 1
        done_q += 1
        if cross == 0 and s <= zero:
            cross = done_q
    return s, cross


@njit(cache=True, error_model="numpy")
def _replay(s, sign, td, tst, tfin, tbl, a, b, w, clamp, buf, zero):
    """An accumulator CoflowSim updates once per flow per quantum (a reducer's bytes left, a
    coflow's bytes sent), replayed over ``w`` quanta of the flows ``a..b`` of the temp arrays:
    ``td`` bytes per quantum, ``tst``/``tfin``/``tbl`` as returned by :func:`_advance`.
    Returns ``(s, c)``, ``c`` the first quantum (1-based) that ended with ``s <= zero``, or 0."""
    q = 0
    cross = 0
    while q < w:
        nxt = w + 1
        for k in range(a, b):
            if tfin[k] and tst[k] > q and tst[k] < nxt:
                nxt = tst[k]
        run = min(nxt - 1, w) - q
        if run > 0:
            m = 0
            for k in range(a, b):
                if (not tfin[k]) or tst[k] > q:
                    if td[k] != 0.0:
                        buf[m] = td[k]
                        m += 1
            s, c = _quanta(s, sign, buf, m, run, clamp, zero)
            if cross == 0 and c > 0:
                cross = q + c
            q += run
        if q < w and q + 1 == nxt:
            for k in range(a, b):
                if (not tfin[k]) or tst[k] >= q + 1:
                    bb = tbl[k] if (tfin[k] and tst[k] == q + 1) else td[k]
                    s = s + sign * bb
                    if clamp and s < 0.0:
                        s = 0.0
            q += 1
            if cross == 0 and s <= zero:
                cross = q
    return s, cross


@njit(cache=True, error_model="numpy")
def _insert_sorted(lst, ns, j, kind, scf, ncf, alpha, perrack, red_ptr):
    """``CoflowSimulator.addToSortedJobs``: insert before the first job that compares greater
    (FIFO appends); LCF compares the new job's size with the others' bytes left *now*."""
    idx = ns
    if kind != 0:
        idx = 0
        if kind == 3:
            kj = 0.0
            for r in range(red_ptr[j], red_ptr[j + 1]):
                kj += perrack[r]
        while idx < ns:
            o = lst[idx]
            if kind == 1:
                less = scf[j] < scf[o]
            elif kind == 2:
                less = ncf[j] < ncf[o]
            elif kind == 3:
                ko = 0.0
                for r in range(red_ptr[o], red_ptr[o + 1]):
                    ko += perrack[r]
                less = kj < ko
            else:
                less = alpha[j] < alpha[o]
            if less:
                break
            idx += 1
    for k in range(ns, idx, -1):
        lst[k] = lst[k - 1]
    lst[idx] = j
    return ns + 1


@njit(cache=True, error_model="numpy")
def _alpha_online(j, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem, done, s_free,
                  r_free, sb, rb, zero):
    """``calcAlphaOnline``: the coflow's bottleneck time (s) on the free capacity, or -1."""
    for r in range(red_ptr[j], red_ptr[j + 1]):
        rb[red_rack[r]] = red_left[r]
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            if not done[f]:
                sb[flow_src[f]] += rem[f]
    out = 4.9e-324  # Double.MIN_VALUE, the start of Utils.max
    bad = False
    for r in range(red_ptr[j], red_ptr[j + 1]):
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            s = flow_src[f]
            if sb[s] > 0 and s_free[s] <= zero:
                bad = True
        p = red_rack[r]
        if rb[p] > 0 and r_free[p] <= zero:
            bad = True
    if not bad:
        for r in range(red_ptr[j], red_ptr[j + 1]):
            p = red_rack[r]
            v = rb[p] * 8 / r_free[p]
            if v > out:
                out = v
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                s = flow_src[f]
                v = sb[s] * 8 / s_free[s]
                if v > out:
                    out = v
    for r in range(red_ptr[j], red_ptr[j + 1]):
        rb[red_rack[r]] = 0.0
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            sb[flow_src[f]] = 0.0
    return -1.0 if bad else out


@njit(cache=True, error_model="numpy")
def _split_equally(group, ng, red_ptr, red_rack, flow_ptr, flow_src, done, bps, zero, s_free,
                   r_free, su, ru, nm, nr):
    """The coflows of ``group`` as one: each of their flows on free ports gets
    ``min(free ingress / its flows there, free egress / its flows there)``, flows on saturated
    ports get nothing; then the free capacity is charged (``updateRatesFairShare``, and DARK's
    per-coflow split)."""
    for k in range(ng):
        j = group[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero:
                for f in range(flow_ptr[r], flow_ptr[r + 1]):
                    bps[f] = 0.0
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                src = flow_src[f]
                if s_free[src] <= zero:
                    bps[f] = 0.0
                    continue
                nm[src] += 1
                nr[dst] += 1
    for k in range(ng):
        j = group[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero or nr[dst] == 0:
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                src = flow_src[f]
                if done[f] or s_free[src] <= zero or nm[src] == 0:
                    continue
                m = min(s_free[src] / nm[src], r_free[dst] / nr[dst])
                if m <= zero:
                    m = 0.0
                bps[f] = m
                su[src] += m
                ru[dst] += m
    for k in range(ng):
        _charge(group[k], red_ptr, red_rack, flow_ptr, flow_src, s_free, r_free, su, ru, nm, nr)


@njit(cache=True, error_model="numpy")
def _charge(j, red_ptr, red_rack, flow_ptr, flow_src, s_free, r_free, su, ru, nm, nr):
    """Subtract what coflow ``j``'s ports were given (``su``/``ru``) from the free capacity and
    clear the scratch counters on those ports."""
    for r in range(red_ptr[j], red_ptr[j + 1]):
        dst = red_rack[r]
        r_free[dst] -= ru[dst]
        ru[dst] = 0.0
        nr[dst] = 0
        for f in range(flow_ptr[r], flow_ptr[r + 1]):
            src = flow_src[f]
            s_free[src] -= su[src]
            su[src] = 0.0
            nm[src] = 0


@njit(cache=True, error_model="numpy")
def _rates_madd(lst, ns, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem, done, bps,
                start, deadline, cur_ms, cap, zero, s_free, r_free, su, ru, sb, rb, edf,
                edf_key, nm, nr):
    """``updateRatesDynamicAlpha``: MADD in the order, equal split for the coflows that need a
    saturated port, then backfill in (pseudo-)deadline order."""
    s_free[:] = cap
    r_free[:] = cap
    skipped = np.empty(ns, dtype=np.int64)
    nsk = 0
    for k in range(ns):
        j = lst[k]
        for f in range(flow_ptr[red_ptr[j]], flow_ptr[red_ptr[j + 1]]):
            bps[f] = 0.0
        a = _alpha_online(j, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem, done,
                          s_free, r_free, sb, rb, zero)
        if a == -1.0:
            skipped[nsk] = j
            nsk += 1
            continue
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero:
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                src = flow_src[f]
                b = rem[f] * 8 / a
                if b > s_free[src] or b > r_free[dst]:
                    b = min(s_free[src], r_free[dst])
                su[src] += b
                ru[dst] += b
                bps[f] = b
        _charge(j, red_ptr, red_rack, flow_ptr, flow_src, s_free, r_free, su, ru, nm, nr)
    # updateRatesFairShare over the skipped coflows, as one coflow
    _split_equally(skipped, nsk, red_ptr, red_rack, flow_ptr, flow_src, done, bps, zero, s_free,
                   r_free, su, ru, nm, nr)
    # backfill: a stable sort on (int)(start + deadline - now), as Collections.sort does
    for k in range(ns):
        j = lst[k]
        edf_key[k] = np.int64(start[j] + deadline[j] - cur_ms)
    perm = np.argsort(edf_key[:ns], kind="mergesort")
    for k in range(ns):
        edf[k] = lst[perm[k]]
    for k in range(ns):
        j = edf[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            dst = red_rack[r]
            if r_free[dst] <= zero:
                continue
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if done[f]:
                    continue
                src = flow_src[f]
                m = min(s_free[src], r_free[dst])
                if m <= zero:
                    m = 0.0
                bps[f] += m
                s_free[src] -= m
                r_free[dst] -= m


@njit(cache=True, error_model="numpy")
def _rates_dark(lst, ns, red_ptr, red_rack, flow_ptr, flow_src, done, bps, cap, zero, s_free,
                r_free, su, ru, nm, nr):
    """``CoflowSimulatorDark.updateRates``: strict priority over the queue order, each coflow
    splitting each port equally among its flows there."""
    s_free[:] = cap
    r_free[:] = cap
    for k in range(ns):
        _split_equally(lst[k:k + 1], 1, red_ptr, red_rack, flow_ptr, flow_src, done, bps, zero,
                       s_free, r_free, su, ru, nm, nr)


@njit(cache=True, error_model="numpy")
def _dark_order(lst, ns, queue, cq, stamp, counter, sent, width, first, factor, nq):
    """``updateJobOrder``: walk the queues top-down; a coflow whose bytes sent over ``width``
    (1 for DARK; its receiver ports for A-SEBF, spec §7.3) passed its queue's limit moves one
    queue down (to the tail), and may move again in the same walk."""
    for i in range(nq):
        for k in range(ns):
            j = lst[k]
            if queue[j] != i:
                continue
            target = 0
            lim = first
            while lim < sent[j] / width[j]:
                target += 1
                lim *= factor
            if cq[j] < target:
                cq[j] += 1
                if i + 1 < nq:
                    queue[j] = i + 1
                    stamp[j] = counter
                    counter += 1
        # re-sort the list by (queue, stamp): insertion sort, the list is nearly sorted
        for a in range(1, ns):
            v = lst[a]
            b = a - 1
            while b >= 0 and (queue[lst[b]] > queue[v]
                              or (queue[lst[b]] == queue[v] and stamp[lst[b]] > stamp[v])):
                lst[b + 1] = lst[b]
                b -= 1
            lst[b + 1] = v
    return counter


@njit(cache=True, error_model="numpy")
def _left_after(s, td, tst, tfin, tbl, a, b, c, w, buf, zero, z_td, z_tst, z_tfin, z_tbl):
    """A reducer's bytes-left counter after it completes in quantum ``c`` of the window.

    CoflowSim zeroes the counter when the reducer completes, at the flow after which the
    counter is <= ZERO or no flow is left, and the flows after it in the same quantum still
    subtract their bytes: the counter ends slightly negative, and a negative count over a
    port whose free capacity is negative gives that coflow a huge bottleneck in MADD."""
    if c > 1:
        s, _ = _replay(s, -1.0, td, tst, tfin, tbl, a, b, c - 1, False, buf, zero)
    completed = False
    for t in range(a, b):
        if tfin[t] and tst[t] < c:
            continue  # finished before this quantum
        bb = tbl[t] if (tfin[t] and tst[t] == c) else td[t]
        s = s - bb
        if not completed:
            empty = True
            for t2 in range(a, b):
                if t2 <= t:
                    if not (tfin[t2] and tst[t2] <= c):
                        empty = False
                        break
                elif not (tfin[t2] and tst[t2] < c):
                    empty = False
                    break
            if s <= zero or empty:
                completed = True
                s = 0.0
    # flows left after quantum c (zombies) keep moving, and counting, to the window's end
    nz = 0
    for t in range(a, b):
        if (not tfin[t]) or tst[t] > c:
            z_td[nz] = td[t]
            z_tst[nz] = tst[t] - c
            z_tfin[nz] = tfin[t]
            z_tbl[nz] = tbl[t]
            nz += 1
    if nz > 0 and w > c:
        s, _ = _replay(s, -1.0, z_td, z_tst, z_tfin, z_tbl, 0, nz, w - c, False, buf, zero)
    return s


@njit(cache=True, error_model="numpy")
def _resort_remaining(lst, ns, red_ptr, flow_ptr, flow_src, rem, done, sb, key):
    """Ablation of the static keys: re-sort the order by the bottleneck of the bytes left
    (Varys' dynamic SEBF) instead of the key fixed at insertion."""
    for k in range(ns):
        j = lst[k]
        g = 0.0
        for r in range(red_ptr[j], red_ptr[j + 1]):
            t = 0.0
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if not done[f]:
                    t += rem[f]
                    sb[flow_src[f]] += rem[f]
            g = max(g, t)
        for r in range(red_ptr[j], red_ptr[j + 1]):
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                g = max(g, sb[flow_src[f]])
                sb[flow_src[f]] = 0.0
        key[j] = g
    for a in range(1, ns):
        v = lst[a]
        b = a - 1
        while b >= 0 and key[lst[b]] > key[v]:
            lst[b + 1] = lst[b]
            b -= 1
        lst[b + 1] = v


@njit(cache=True, error_model="numpy")
def _layout(lst, ns, red_ptr, flow_ptr, red_done, done, laid):
    """``layoutFlowsInJobOrder``: the unfinished flows of the reducers not yet completed move;
    the others stay where they are."""
    for k in range(ns):
        j = lst[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                laid[f] = (not red_done[r]) and (not done[f])


# -- streaming: the rate changes go to the validator as a kernel makes them -------------------
#
# With ``lean`` the kernels store nothing: each segment the stored schedule would hold becomes
# rate changes (in MB/ms, on the transformed instance's flows ``where[f]``, at breakpoint =
# quantum index), in time order, with the drift of each flow's last segment applied as
# _close_drift applies it (same sums, same order, so the same floats).  _run_pfp makes its
# changes in time order already; _run_coflow advances a whole window of quanta at once, so its
# changes are collected per window (_wseg) and sorted by quantum (_wflush) before they go.
# _run_fair streams the grouped protocol instead (one rate group per port pair, _gflush).


@njit(cache=True, inline="always")
def _sfill(tbp, tinfo, k, quantum_ms):
    """Breakpoint times up to quantum ``k`` (``tinfo[1]``: how many are filled)."""
    while tinfo[1] <= k:
        tbp[tinfo[1]] = np.float64(tinfo[1]) * quantum_ms
        tinfo[1] += 1


@njit(cache=True)
def _sflush(vs, sbuf_i, sbuf_d, n, tbp, tinfo, quantum_ms, lpos):
    """Hand the ``n`` buffered changes to the validator; returns how many stay buffered.
    ``tinfo[0]``: the first quantum with a change (the stored schedule's first breakpoint),
    ``tinfo[2]``: the last one handed over.  With ``lpos`` (see :func:`_spush`) the changes
    at the last buffered quantum stay (moved to the front), so a later change of the same
    flow at that quantum can still replace its change."""
    if n == 0:
        return 0
    if tinfo[0] < 0:
        tinfo[0] = sbuf_i[1, 0]
    m = n
    if lpos.size > 0:
        while m > 0 and sbuf_i[1, m - 1] == sbuf_i[1, n - 1]:
            m -= 1
        if m == 0:  # all at one quantum: they go
            m = n
    tinfo[2] = sbuf_i[1, m - 1]
    _sfill(tbp, tinfo, tinfo[2], quantum_ms)
    stream_consume(vs, sbuf_i, sbuf_d, m, tbp)
    for j in range(m, n):
        sbuf_i[0, j - m] = sbuf_i[0, j]
        sbuf_i[1, j - m] = sbuf_i[1, j]
        sbuf_d[j - m] = sbuf_d[j]
        lpos[sbuf_i[0, j]] = j - m
    return n - m


@njit(cache=True)
def _stream_end(sbuf_i, n, tbp, tinfo, quantum_ms):
    """The breakpoint times of a streamed run: quanta ``0 ..`` its last change (the first
    change's quantum goes to ``tinfo[0]`` if no buffer was consumed yet)."""
    if n > 0:
        if tinfo[0] < 0:
            tinfo[0] = sbuf_i[1, 0]
        tinfo[2] = sbuf_i[1, n - 1]
    _sfill(tbp, tinfo, tinfo[2], quantum_ms)
    return tbp[: tinfo[2] + 1]


@njit(cache=True, inline="always")
def _spush(vs, sbuf_i, sbuf_d, n, tbp, tinfo, f, k, rate, quantum_ms, lpos):
    """Buffer one change of flow ``f`` (time order is the caller's); a second change of ``f``
    at the same quantum replaces the first (``lpos[f]``: the buffer slot of its last change),
    as the stored schedule holds no empty segment; a full buffer goes to the validator."""
    j = lpos[f]
    if 0 <= j < n and sbuf_i[0, j] == f and sbuf_i[1, j] == k:
        sbuf_d[j] = rate
        return n
    lpos[f] = n
    n = stream_push(sbuf_i, sbuf_d, n, f, k, rate)
    if n == sbuf_d.size:
        n = _sflush(vs, sbuf_i, sbuf_d, n, tbp, tinfo, quantum_ms, lpos)
    return n


@njit(cache=True, inline="always")
def _last_rate(d, a, b, sent, volume, quantum_ms):
    """A flow's last segment (``d`` bytes per quantum over quanta ``a..b``) in MB/ms with the
    flow's drift (``sent``: MB of its earlier segments), exactly as _close_drift computes it."""
    r = d / 1048576.0 / quantum_ms
    dur = (b - a) * quantum_ms
    return max(r + (volume - (sent + r * dur)) / dur, 0.0)


@njit(cache=True, inline="always")
def _wseg(f, a, b, d, last, quantum_ms, pend, fvol, wf, wk, wr, nw, nlist, nl):
    """The streaming twin of put_segment in _run_coflow: segment ``a..b`` of flow ``f`` at
    ``d`` bytes per quantum, as window changes.  ``pend[f]`` = (first, last, MB/ms, MB sent
    before it) of the flow's open segment, whose end may still move (``last`` = -1: none);
    ``last``: the flow is done and this is its last segment.  Returns ``(nw, nl)``."""
    if not (b > a and d != 0.0):  # put_segment records nothing
        return nw, nl
    pb = np.int64(pend[f, 1])
    if pb >= 0:  # the open segment closes (at a, or earlier with a gap)
        pend[f, 3] += pend[f, 2] * ((pb - np.int64(pend[f, 0])) * quantum_ms)
        pend[f, 1] = -1.0
        if pb < a:
            wf[nw] = f
            wk[nw] = pb
            wr[nw] = 0.0
            nw += 1
    wf[nw] = f
    wk[nw] = a
    nw += 1
    if last:
        wr[nw - 1] = _last_rate(d, a, b, pend[f, 3], fvol[f], quantum_ms)
        wf[nw] = f
        wk[nw] = b
        wr[nw] = 0.0
        nw += 1
    else:
        r = d / 1048576.0 / quantum_ms
        wr[nw - 1] = r
        pend[f, 0] = a
        pend[f, 1] = b
        pend[f, 2] = r
        nlist[nl] = f
        nl += 1
    return nw, nl


@njit(cache=True, inline="always")
def _wclose(f, pend, quantum_ms, wf, wk, wr, nw):
    """Close flow ``f``'s open segment: rate 0 from its end."""
    pb = np.int64(pend[f, 1])
    pend[f, 3] += pend[f, 2] * ((pb - np.int64(pend[f, 0])) * quantum_ms)
    pend[f, 1] = -1.0
    wf[nw] = f
    wk[nw] = pb
    wr[nw] = 0.0
    return nw + 1


@njit(cache=True)
def _wflush(q0, q1, pend, plist, npl, nlist, nl, quantum_ms, wf, wk, wr, nw, worder, cnt,
            where, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo):
    """The window of quanta ``q0..q1`` is done: open segments of the last window that this one
    did not continue end at ``q0``; this window's end before ``q1`` (or, ending at ``q1``,
    stay open for the next window to extend); then the window's changes go to the validator
    sorted by quantum (a counting sort: they all lie in ``q0..q1``).  Returns
    ``(npl, nsc)``; ``plist`` then holds the segments left open."""
    for j in range(npl):
        f = plist[j]
        if np.int64(pend[f, 1]) == q0:
            nw = _wclose(f, pend, quantum_ms, wf, wk, wr, nw)
    npl = 0
    for j in range(nl):
        f = nlist[j]
        pb = np.int64(pend[f, 1])
        if pb < 0:
            continue
        if pb < q1:
            nw = _wclose(f, pend, quantum_ms, wf, wk, wr, nw)
        else:
            plist[npl] = f
            npl += 1
    span = q1 - q0 + 2
    cnt[:span] = 0
    for j in range(nw):
        cnt[wk[j] - q0 + 1] += 1
    for j in range(1, span):
        cnt[j] += cnt[j - 1]
    for j in range(nw):
        o = wk[j] - q0
        worder[cnt[o]] = j
        cnt[o] += 1
    cap = sbuf_d.size
    for i in range(nw):
        j = worder[i]
        nsc = stream_push(sbuf_i, sbuf_d, nsc, where[wf[j]], wk[j], wr[j])
        if nsc == cap:
            nsc = _sflush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms, where[:0])
    return npl, nsc


@njit(cache=True, error_model="numpy", nogil=True)
def _run_coflow(kind, arrival, red_ptr, red_rack, red_bytes, red_perrack, flow_ptr, flow_src,
                flow_size, alpha, deadline, scf, ncf, n_in, n_out, epoch_ms, quantum_ms,
                zero, pseudo_deadlines, nq, first, factor, static_keys, lean, where, fvol, vs,
                sbuf_i, sbuf_d, kctl):
    n = arrival.size
    nf = flow_size.size
    nr_ = red_rack.size
    cap = 1.0 * 1024 * 1048576  # bits per second
    qf = 1.0 * quantum_ms / 1024  # a simulated second is 1024 ms
    end_ms = 86400 * 1024
    rem = flow_size.copy()
    done = np.zeros(nf, dtype=np.bool_)
    bps = np.zeros(nf)
    red_left = red_bytes.copy()
    perrack = red_perrack.copy()
    red_done = np.zeros(nr_, dtype=np.bool_)
    red_fin = np.full(nr_, -1.0)
    start = np.full(n, -1.0)
    finish = np.full(n, -1.0)
    red_open = np.zeros(n, dtype=np.int64)
    sent = np.zeros(n)
    queue = np.zeros(n, dtype=np.int64)
    # A-SEBF's bottleneck factor: bytes sent per receiver port (numReducers after the merge
    # by rack); DARK divides by 1, which leaves its bytes sent exactly as they are
    width = np.ones(n)
    if kind == 8:
        for j in range(n):
            width[j] = max(red_ptr[j + 1] - red_ptr[j], 1)
    cq = np.zeros(n, dtype=np.int64)
    stamp = np.zeros(n, dtype=np.int64)
    counter = 0
    dl = deadline.copy()
    if not pseudo_deadlines:
        dl[:] = 0.0  # backfill then follows admission order (ties keep the list order)
    lst = np.empty(n + 1, dtype=np.int64)
    ns = 0
    edf = np.empty(n + 1, dtype=np.int64)
    edf_key = np.empty(n + 1, dtype=np.int64)
    dyn_key = np.zeros(n)
    # a flow is "laid" while it is in its reducer port's list (layoutFlowsInJobOrder): flows of
    # a reducer that completed on its counter stay in the reducer (they still get rates) but
    # stop moving at the next layout
    laid = np.zeros(nf, dtype=np.bool_)
    s_free = np.empty(n_in)
    r_free = np.empty(n_out)
    su = np.zeros(n_in)
    ru = np.zeros(n_out)
    sb = np.zeros(n_in)
    rb = np.zeros(n_out)
    nmc = np.zeros(n_in, dtype=np.int64)
    nrc = np.zeros(n_out, dtype=np.int64)
    # segments (flow, first quantum, last quantum exclusive, bytes per quantum)
    buf_i, buf_d, chunks_i, chunks_d = new_store()  # see _run_pfp
    nseg = 0
    last_seg = np.full(nf, -1, dtype=np.int64)  # a flow's latest full-rate segment,
    last_end = np.zeros(nf, dtype=np.int64)  # where it ends
    last_d = np.zeros(nf)  # and its bytes per quantum
    last_start = np.zeros(nf, dtype=np.int64)  # where it starts
    # bytes the schedule sent minus bytes Java's counter removed, per flow: the counter removes
    # d rounded to its grid each quantum, so at d a long run drifts by up to half an ulp a
    # quantum; a run whose drift would pass drift_cap is recorded at its exact mean instead,
    # so that the flow's last quantum (over ZERO bytes) can always take up what is left
    drift = np.zeros(nf)
    drift_cap = zero / 4
    # streaming (lean): open segments (first, last, MB/ms, MB sent before), the window's
    # changes (at most 4 per flow: an open segment's end, a full-rate start, the last quantum
    # and its end), the open segments' flows (last window, this one), the breakpoint times
    nfl = nf if lean else 0
    pend = np.full((nfl, 4), -1.0)
    pend[:, 3] = 0.0
    wf = np.empty(4 * nfl + 4, dtype=np.int32)
    wk = np.empty(4 * nfl + 4, dtype=np.int32)
    wr = np.empty(4 * nfl + 4)
    worder = np.empty(4 * nfl + 4, dtype=np.int64)
    nw = 0
    plist = np.empty(nfl + 1, dtype=np.int64)
    nlist = np.empty(nfl + 1, dtype=np.int64)
    npl = 0
    nl = 0
    nbq = 86400 * 1024 // quantum_ms + 2 if lean else 1
    cnt = np.empty(nbq + 2, dtype=np.int64)  # zeroed per window: np.zeros touches 88 MB
    tbp = np.empty(nbq + 1)  # filled as far as changes go (pages untouched beyond)
    tinfo = np.array([-1, 0, 0], dtype=np.int64)
    nsc = 0
    # per-job temporaries of one window: bytes per quantum, quanta, finished, last bytes
    wmax = 1
    rmax = 1
    for j in range(n):
        wmax = max(wmax, flow_ptr[red_ptr[j + 1]] - flow_ptr[red_ptr[j]])
        rmax = max(rmax, red_ptr[j + 1] - red_ptr[j])
    td = np.empty(wmax)
    tst = np.empty(wmax, dtype=np.int64)
    tfin = np.empty(wmax, dtype=np.bool_)
    tbl = np.empty(wmax)
    buf = np.empty(wmax)
    z_td = np.empty(wmax)
    z_tst = np.empty(wmax, dtype=np.int64)
    z_tfin = np.empty(wmax, dtype=np.bool_)
    z_tbl = np.empty(wmax)
    t_ptr = np.empty(rmax + 1, dtype=np.int64)
    cur = 0
    active_tasks = 0
    t_ms = 0
    n_windows = 0
    stopped = False
    while t_ms < end_ms and (cur < n or active_tasks > 0) and not stopped:
        added = 0
        while cur < n:
            j = cur
            if arrival[j] > t_ms + epoch_ms:
                break
            if flow_ptr[red_ptr[j + 1]] == flow_ptr[red_ptr[j]]:
                start[j] = t_ms  # no flows: CoflowSim ignores it; report CCT 0
                finish[j] = t_ms
                cur += 1
                continue
            start[j] = t_ms
            red_open[j] = red_ptr[j + 1] - red_ptr[j]
            active_tasks += red_open[j]
            if kind == 5 or kind == 8:
                queue[j] = 0
                cq[j] = 0
                stamp[j] = counter
                counter += 1
                lst[ns] = j
                ns += 1
            else:
                ns = _insert_sorted(lst, ns, j, kind, scf, ncf, alpha, perrack, red_ptr)
            added += 1
            cur += 1
        if added > 0:
            _layout(lst, ns, red_ptr, flow_ptr, red_done, done, laid)
            if kind == 5 or kind == 8:
                counter = _dark_order(lst, ns, queue, cq, stamp, counter, sent, width, first,
                                      factor, nq)
                _rates_dark(lst, ns, red_ptr, red_rack, flow_ptr, flow_src, done, bps, cap, zero,
                            s_free, r_free, su, ru, nmc, nrc)
            else:
                if not static_keys:
                    _resort_remaining(lst, ns, red_ptr, flow_ptr, flow_src, rem, done, sb,
                                      dyn_key)
                _rates_madd(lst, ns, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem, done,
                            bps, start, dl, float(t_ms), cap, zero, s_free, r_free, su, ru, sb,
                            rb, edf, edf_key, nmc, nrc)
        # epochs without admissions change nothing: run to the next epoch that admits
        t_next = t_ms + epoch_ms
        if cur < n:
            t_adm = epoch_ms * math.ceil((arrival[cur] - epoch_ms) / epoch_ms)
            if t_adm > t_next:
                t_next = np.int64(t_adm)
        else:
            t_next = max(t_next, end_ms)
        span_q = (t_next - t_ms) // quantum_ms
        i = 0
        while i < span_q and ns > 0:
            # progress, and the waiting thread's stop flag (kernel.py), once a window
            kctl[CTL_TIME] = (t_ms // quantum_ms + i) * quantum_ms
            kctl[CTL_DONE] = cur - ns
            kctl[CTL_EVENTS] = n_windows
            n_windows += 1
            if stop_requested(kctl):
                kctl[CTL_STATUS] = 1.0
                stopped = True
                break
            # the first quantum in which a whole coflow finishes: every reducer done, by its
            # last flow or by its bytes-left counter reaching ZERO first (ReduceTask checks both)
            big = span_q - i
            dep = big + 1
            for k in range(ns):
                j = lst[k]
                kj = 0
                nt = 0
                for r in range(red_ptr[j], red_ptr[j + 1]):
                    t_ptr[r - red_ptr[j]] = nt
                    if red_done[r]:
                        continue
                    for f in range(flow_ptr[r], flow_ptr[r + 1]):
                        if done[f]:
                            continue
                        d = (bps[f] / 8) * qf
                        _, st, fin, bl = _advance(rem[f], d, big, zero)
                        if not fin:
                            kj = big + 1
                            break
                        td[nt] = d
                        tst[nt] = st
                        tfin[nt] = fin
                        tbl[nt] = bl
                        nt += 1
                    if kj > big:
                        break
                    t_ptr[r - red_ptr[j] + 1] = nt
                    a = t_ptr[r - red_ptr[j]]
                    last = 0
                    for t in range(a, nt):
                        if tst[t] > last:
                            last = tst[t]
                    if last > 1:
                        _, c = _replay(red_left[r], -1.0, td, tst, tfin, tbl, a, nt, last - 1,
                                       False, buf, zero)
                        if c > 0:
                            last = c
                    if last > kj:
                        kj = last
                if kj < dep:
                    dep = kj
            steps = dep if dep <= big else big
            q0 = t_ms // quantum_ms + i
            departed = 0
            for k in range(ns):
                j = lst[k]
                nt = 0
                for r in range(red_ptr[j], red_ptr[j + 1]):
                    t_ptr[r - red_ptr[j]] = nt
                    for f in range(flow_ptr[r], flow_ptr[r + 1]):
                        if done[f]:
                            continue
                        d = (bps[f] / 8) * qf if laid[f] else 0.0
                        x0 = rem[f]
                        x, st, fin, bl = _advance(x0, d, steps, zero)
                        td[nt] = d
                        tst[nt] = st
                        tfin[nt] = fin
                        tbl[nt] = bl
                        nt += 1
                        if d > 0.0 and st > 0:
                            full = st - 1 if fin else st
                            if full > 0 and x0 != x:
                                xf = x
                                if fin:  # the counter before the last quantum
                                    xf, _, _, _ = _advance(x0, d, full, zero)
                                dq = d
                                dr = drift[f] + (full * d - (x0 - xf))
                                # the last quantum must also carry more than the validator's
                                # slack, or the flow would count as done a quantum early
                                r_min = 2.0 * (flow_size[f] * _VOLUME_RTOL + zero)
                                if abs(dr) > drift_cap or (fin and xf - dr < r_min):
                                    left = max(xf, r_min) if fin else xf
                                    dn = (x0 - drift[f] - left) / full
                                    if dn > 0.0:
                                        dq = dn
                                        dr = drift[f] + (full * dq - (x0 - xf))
                                drift[f] = dr
                                if last_seg[f] >= 0 and last_end[f] == q0 and last_d[f] == dq:
                                    if lean:  # the open segment runs on
                                        pend[f, 1] = q0 + full
                                        nlist[nl] = f
                                        nl += 1
                                    else:
                                        set_segment_end(buf_i, chunks_i, nseg, last_seg[f],
                                                        q0 + full)
                                else:  # a new rate: a new segment
                                    last_seg[f] = nseg
                                    last_d[f] = dq
                                    last_start[f] = q0
                                    if lean:
                                        nw, nl = _wseg(f, q0, q0 + full, dq, False, quantum_ms,
                                                       pend, fvol, wf, wk, wr, nw, nlist, nl)
                                    else:
                                        nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d,
                                                           nseg, f, q0, q0 + full, dq)
                                last_end[f] = q0 + full
                            if fin:
                                if lean:
                                    nw, nl = _wseg(f, q0 + st - 1, q0 + st, bl, True,
                                                   quantum_ms, pend, fvol, wf, wk, wr, nw,
                                                   nlist, nl)
                                else:
                                    nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg,
                                                       f, q0 + st - 1, q0 + st, bl)
                        rem[f] = x
                        if fin:
                            done[f] = True
                t_ptr[red_ptr[j + 1] - red_ptr[j]] = nt
                if kind == 5 or kind == 8:
                    sent[j], _ = _replay(sent[j], 1.0, td, tst, tfin, tbl, 0, nt, steps, False,
                                         buf, zero)
                for r in range(red_ptr[j], red_ptr[j + 1]):
                    a = t_ptr[r - red_ptr[j]]
                    b = t_ptr[r - red_ptr[j] + 1]
                    if kind == 3:
                        perrack[r], _ = _replay(perrack[r], -1.0, td, tst, tfin, tbl, a, b,
                                                steps, True, buf, zero)
                    if red_done[r]:
                        if b > a:
                            red_left[r], _ = _replay(red_left[r], -1.0, td, tst, tfin, tbl, a,
                                                     b, steps, False, buf, zero)
                        continue
                    s_before = red_left[r]
                    red_left[r], c = _replay(s_before, -1.0, td, tst, tfin, tbl, a, b,
                                             steps, False, buf, zero)
                    last = -1
                    open_flows = False
                    for t in range(a, b):
                        if tfin[t]:
                            if tst[t] > last:
                                last = tst[t]
                        else:
                            open_flows = True
                    if c > 0 and (open_flows or c < last):
                        open_flows = False  # the counter reached ZERO first
                        last = c
                    if not open_flows:
                        red_done[r] = True
                        red_left[r] = _left_after(s_before, td, tst, tfin, tbl, a, b, last,
                                                  steps, buf, zero, z_td, z_tst, z_tfin, z_tbl)
                        red_fin[r] = (q0 + last) * quantum_ms
                        red_open[j] -= 1
                        active_tasks -= 1
                        if red_open[j] == 0:
                            departed += 1
            if departed > 0:
                cur_ms = (q0 + steps - 1) * quantum_ms
                k2 = 0
                for k in range(ns):
                    j = lst[k]
                    if red_open[j] == 0:
                        fj = -1.0
                        for r in range(red_ptr[j], red_ptr[j + 1]):
                            if red_fin[r] > fj:
                                fj = red_fin[r]
                        finish[j] = fj
                        # a reducer that ended on its bytes-left counter may leave a flow
                        # with a residue of a few thousandths of a byte: account it to the
                        # coflow's last quantum (CoflowSim sends it just after)
                        for f in range(flow_ptr[red_ptr[j]], flow_ptr[red_ptr[j + 1]]):
                            if not done[f]:
                                ql = q0 + steps - 1
                                bl = rem[f]
                                if last_seg[f] >= 0 and last_end[f] == ql + 1:
                                    # it moved in that quantum too: the quantum leaves its
                                    # segment and carries both
                                    bl += last_d[f]
                                    if lean:
                                        pend[f, 1] = max(ql, np.int64(pend[f, 0]))
                                    elif ql > last_start[f]:
                                        set_segment_end(buf_i, chunks_i, nseg, last_seg[f],
                                                        ql)
                                    else:  # a segment of that quantum alone: it is the last
                                        bl = 0.0
                                    if lean and ql == np.int64(pend[f, 0]):
                                        bl = last_d[f]  # the same sums as the stored drift
                                if lean:
                                    nw, nl = _wseg(f, ql, ql + 1, bl, True, quantum_ms, pend,
                                                   fvol, wf, wk, wr, nw, nlist, nl)
                                else:
                                    nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg,
                                                       f, ql, ql + 1, bl)
                                rem[f] = 0.0
                                done[f] = True
                    else:
                        lst[k2] = j
                        k2 += 1
                ns = k2
                if kind == 5 or kind == 8:
                    counter = _dark_order(lst, ns, queue, cq, stamp, counter, sent, width,
                                          first, factor, nq)
                    _layout(lst, ns, red_ptr, flow_ptr, red_done, done, laid)
                    _rates_dark(lst, ns, red_ptr, red_rack, flow_ptr, flow_src, done, bps, cap,
                                zero, s_free, r_free, su, ru, nmc, nrc)
                else:
                    if not static_keys:
                        _resort_remaining(lst, ns, red_ptr, flow_ptr, flow_src, rem, done, sb,
                                          dyn_key)
                    _rates_madd(lst, ns, red_ptr, red_rack, red_left, flow_ptr, flow_src, rem,
                                done, bps, start, dl, float(cur_ms), cap, zero, s_free, r_free,
                                su, ru, sb, rb, edf, edf_key, nmc, nrc)
            if lean:
                npl, nsc = _wflush(q0, q0 + steps, pend, plist, npl, nlist, nl, quantum_ms, wf,
                                   wk, wr, nw, worder, cnt, where, vs, sbuf_i, sbuf_d, nsc, tbp,
                                   tinfo)
                nw = 0
                nl = 0
            i += steps
        t_ms = t_next
    if lean and not stopped:  # segments still open (a run cut at its time limit) end here
        for j in range(npl):
            f = plist[j]
            if pend[f, 1] >= 0:
                nw = _wclose(f, pend, quantum_ms, wf, wk, wr, nw)
        q1 = 0
        for j in range(nw):
            q1 = max(q1, np.int64(wk[j]))
        q0 = q1
        for j in range(nw):
            q0 = min(q0, np.int64(wk[j]))
        _, nsc = _wflush(q0, q1, pend, plist, 0, nlist, 0, quantum_ms, wf, wk, wr, nw, worder,
                         cnt, where, vs, sbuf_i, sbuf_d, nsc, tbp, tinfo)
    seg_i, seg_d = gather_segments(buf_i, buf_d, chunks_i, chunks_d, nseg)
    return start, finish, seg_i[0], seg_i[1], seg_i[2], seg_d, _stream_end(
        sbuf_i, nsc, tbp, tinfo, quantum_ms), nsc, tinfo[0]


# -- the per-flow schedulers (FlowSimulator.java) ---------------------------------------------


@njit(cache=True, inline="always")
def _bq_insert(head, hm, bq, g, k):
    """Bucket queue keyed on whole quanta: put flow ``g`` in bucket ``k`` (O(1)).  ``bq[g]`` =
    (next, previous, bucket) side by side: a move touches one line per flow.  Buckets are
    initialized up to ``hm[0]`` only, as keys reach them: the queue spans a simulated day
    (88 MB of buckets) while a trace ends within hours."""
    if k > hm[0]:
        head[hm[0] + 1: k + 1] = -1
        hm[0] = k
    bq[g, 2] = k
    bq[g, 1] = -1
    h = head[k]
    bq[g, 0] = h
    if h >= 0:
        bq[h, 1] = g
    head[k] = g


@njit(cache=True, inline="always")
def _bq_remove(head, bq, g):
    """Take flow ``g`` out of its bucket, if it is in one."""
    k = bq[g, 2]
    if k < 0:
        return
    nx, pv = bq[g, 0], bq[g, 1]
    if pv >= 0:
        bq[pv, 0] = nx
    else:
        head[k] = nx
    if nx >= 0:
        bq[nx, 1] = pv
    bq[g, 2] = -1


@njit(cache=True)
def _next_admitted(cur, arrival, t_ms, epoch_ms, flow_ptr, red_ptr, start, finish):
    """The next coflow (job) at or after ``cur`` admitted at epoch ``t_ms`` (CoflowSim: those
    arriving up to ``t_ms + epoch_ms``), started at ``t_ms``; one without flows is finished
    there and skipped.  Returns ``(j, cur)``: ``j = -1`` when none is left to admit."""
    n = arrival.size
    while cur < n:
        j = cur
        if arrival[j] > t_ms + epoch_ms:
            return -1, cur
        start[j] = t_ms
        cur += 1
        if flow_ptr[red_ptr[j + 1]] == flow_ptr[red_ptr[j]]:
            finish[j] = t_ms
            continue
        return j, cur
    return -1, cur


@njit(cache=True)
def _owners(ptr, size):
    """Per element of a CSR layout (``ptr``: each segment's first element), its segment."""
    out = np.empty(size, dtype=np.int64)
    for r in range(ptr.size - 1):
        for f in range(ptr[r], ptr[r + 1]):
            out[f] = r
    return out


@njit(cache=True, error_model="numpy", nogil=True)
def _run_pfp(arrival, red_ptr, red_rack, flow_ptr, flow_src, flow_size, n_in, n_out,
             epoch_ms, quantum_ms, zero, lean, where, fvol, vs, sbuf_i, sbuf_d, kctl):
    """PFP: rates change only when a flow finishes or coflows are admitted, so the loop jumps
    between those quanta; a rate change re-times the flows of the new matching.  ``lean``:
    each change goes to the validator when the rate is set (time only moves forward here); a
    segment the stored schedule would not hold (empty) then shows as two changes at one
    breakpoint, which the validator takes as one."""
    n = arrival.size
    nf = flow_size.size
    nr_ = red_rack.size
    cfull = 1.0 * 1024 * 1048576 / 8.0 * (1.0 * quantum_ms / 1024)  # bytes per quantum
    end_ms = 86400 * 1024
    f_red = _owners(flow_ptr, nf)
    red_job = _owners(red_ptr, nr_)
    x = flow_size.copy()
    d = np.zeros(nf)
    tq = np.zeros(nf, dtype=np.int64)  # x is the bytes left at the start of quantum tq
    key = np.full(nf, np.inf)  # each queued flow's key
    done = np.zeros(nf, dtype=np.bool_)
    red_open = np.diff(flow_ptr)
    job_open = np.diff(red_ptr)
    start = np.full(n, -1.0)
    finish = np.full(n, -1.0)
    # each reducer port's flows as a linked list sorted by bytes left at insertion
    hd_d = np.full(n_out, -1, dtype=np.int64)
    nx_d = np.full(nf, -1, dtype=np.int64)
    pv_d = np.full(nf, -1, dtype=np.int64)
    # the served flow of each reducer port
    served = np.full(n_out, -1, dtype=np.int64)
    busy = np.zeros(n_in, dtype=np.bool_)
    stats = np.zeros(3, dtype=np.int64)  # events, rate changes, flow completions
    # the finishing quantum of each queued flow, in buckets
    nb = end_ms // quantum_ms + 2
    head = np.empty(nb, dtype=np.int64)
    hm = np.array([-1], dtype=np.int64)  # buckets 0 .. hm[0] are initialized
    bq = np.full((nf, 3), -1, dtype=np.int64)
    cursor = 0
    # segments go to fixed buffers flushed into chunk lists: no array is reallocated inside
    # the event loop (a loop-carried, reallocatable array made the re-time loop 3x slower)
    # (flow, first quantum, last quantum exclusive; bytes per quantum)
    buf_i, buf_d, chunks_i, chunks_d = new_store()
    nseg = 0
    # streaming (lean): MB each flow was sent before its open segment (for the drift), the
    # flows that finished in a quantum (rate 0 from the next), the breakpoint times
    sent = np.zeros(nf if lean else 0)
    fin_list = np.empty(nf if lean else 0, dtype=np.int64)
    lpos = np.full(nf if lean else 0, -1, dtype=np.int64)  # by transformed flow
    nbq = nb if lean else 0
    tbp = np.empty(nbq + 1)
    tinfo = np.array([-1, 0, 0], dtype=np.int64)
    nsc = 0
    cur = 0
    active_jobs = 0
    active_tasks = 0
    t_ms = 0
    stopped = False
    while t_ms < end_ms and (cur < n or active_tasks > 0) and not stopped:
        qa = t_ms // quantum_ms
        added = 0
        # bring the served flows to now before new flows compare with their bytes left
        for p in range(n_out):
            g = served[p]
            if g >= 0:
                x0 = x[g]
                x[g], _, _, _ = _advance(x0, d[g], qa - tq[g], zero)
                if not lean:
                    nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, tq[g], qa,
                                       d[g])
                elif qa > tq[g] and d[g] != 0.0:  # the same rate, a new segment
                    r = d[g] / 1048576.0 / quantum_ms
                    sent[g] += r * ((qa - tq[g]) * quantum_ms)
                    nsc = _spush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], qa, r,
                                 quantum_ms, lpos)
                tq[g] = qa
        while True:
            j, cur = _next_admitted(cur, arrival, t_ms, epoch_ms, flow_ptr, red_ptr, start,
                                    finish)
            if j < 0:
                break
            active_jobs += 1
            active_tasks += red_ptr[j + 1] - red_ptr[j]
            for r in range(red_ptr[j], red_ptr[j + 1]):
                p = red_rack[r]
                for f in range(flow_ptr[r], flow_ptr[r + 1]):
                    tq[f] = qa
                    # FlowSimulator.addAscending: before the first flow with more bytes left
                    # than this flow's size
                    prev = -1
                    g = hd_d[p]
                    while g >= 0 and not (x[g] > flow_size[f]):
                        prev = g
                        g = nx_d[g]
                    nx_d[f] = g
                    pv_d[f] = prev
                    if g >= 0:
                        pv_d[g] = f
                    if prev >= 0:
                        nx_d[prev] = f
                    else:
                        hd_d[p] = f
            added += 1
        q_end = (t_ms + epoch_ms) // quantum_ms
        qn = qa
        first = True
        while active_jobs > 0:
            # progress, and the waiting thread's stop flag (kernel.py), once an event
            kctl[CTL_TIME] = qn * quantum_ms
            kctl[CTL_DONE] = cur - active_jobs
            kctl[CTL_EVENTS] = stats[0]
            if stop_requested(kctl):
                kctl[CTL_STATUS] = 1.0
                stopped = True
                break
            # re-time what changed at quantum qn
            if first and added == 0:
                pass
            else:
                # PFP: reducer ports in order each serve their first flow whose mapper is idle
                busy[:] = False
                for p in range(n_out):
                    g = hd_d[p]
                    while g >= 0 and busy[flow_src[g]]:
                        g = nx_d[g]
                    old = served[p]
                    if g >= 0:
                        busy[flow_src[g]] = True
                    if old == g:
                        continue
                    if old >= 0 and not done[old]:
                        x0 = x[old]
                        x[old], _, _, _ = _advance(x0, d[old], qn - tq[old], zero)
                        if not lean:
                            nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, old,
                                               tq[old], qn, d[old])
                        else:
                            if qn > tq[old] and d[old] != 0.0:
                                sent[old] += d[old] / 1048576.0 / quantum_ms * (
                                    (qn - tq[old]) * quantum_ms)
                            nsc = _spush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[old], qn,
                                         0.0, quantum_ms, lpos)
                        d[old] = 0.0
                        tq[old] = qn
                        _bq_remove(head, bq, old)
                        key[old] = np.inf
                    served[p] = g
                    if g >= 0:
                        x0 = x[g]
                        x[g], _, _, _ = _advance(x0, d[g], qn - tq[g], zero)
                        d[g] = cfull
                        tq[g] = qn
                        if lean:
                            nsc = _spush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], qn,
                                         cfull / 1048576.0 / quantum_ms, quantum_ms, lpos)
                        _, st, fin, _ = _advance(x[g], cfull, 1 << 40, zero)
                        key[g] = float(qn + st - 1)
                        _bq_remove(head, bq, g)
                        _bq_insert(head, hm, bq, g, min(qn + st - 1, nb - 1))
            first = False
            # the next quantum in which flows finish
            while cursor < q_end and (cursor > hm[0] or head[cursor] < 0):
                cursor += 1
            if cursor >= q_end:
                break
            q = cursor
            n_fin = 0
            while head[q] >= 0:
                g = head[q]
                _bq_remove(head, bq, g)
                key[g] = np.inf
                x0 = x[g]
                xg, st, fin, bl = _advance(x0, d[g], q - tq[g] + 1, zero)
                if not fin:  # the key was a lower bound: queue the exact quantum
                    _, st, fin, _ = _advance(x0, d[g], 1 << 40, zero)
                    if fin:
                        key[g] = float(tq[g] + st - 1)
                        _bq_insert(head, hm, bq, g, min(tq[g] + st - 1, nb - 1))
                    continue
                if not lean:
                    nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, tq[g], q,
                                       d[g])
                    nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g, q, q + 1, bl)
                else:
                    if q > tq[g] and d[g] != 0.0:
                        sent[g] += d[g] / 1048576.0 / quantum_ms * ((q - tq[g]) * quantum_ms)
                    if bl != 0.0:  # the last quantum, with the drift; rate 0 after the loop
                        nsc = _spush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], q,
                                     _last_rate(bl, q, q + 1, sent[g], fvol[g], quantum_ms),
                                     quantum_ms, lpos)
                        fin_list[n_fin] = g
                    else:
                        nsc = _spush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], q, 0.0,
                                     quantum_ms, lpos)
                        fin_list[n_fin] = -1
                n_fin += 1
                x[g] = xg
                tq[g] = q + 1
                done[g] = True
                stats[2] += 1
                r = f_red[g]
                p = red_rack[r]
                served[p] = -1
                if pv_d[g] >= 0:
                    nx_d[pv_d[g]] = nx_d[g]
                else:
                    hd_d[p] = nx_d[g]
                if nx_d[g] >= 0:
                    pv_d[nx_d[g]] = pv_d[g]
                red_open[r] -= 1
                if red_open[r] == 0:
                    active_tasks -= 1
                    j = red_job[r]
                    job_open[j] -= 1
                    if job_open[j] == 0:
                        finish[j] = (q + 1) * quantum_ms
                        active_jobs -= 1
            if n_fin == 0:
                first = True
                added = 0
                continue
            if lean:
                for j in range(n_fin):
                    if fin_list[j] >= 0:
                        nsc = _spush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[fin_list[j]],
                                     q + 1, 0.0, quantum_ms, lpos)
            stats[0] += 1
            qn = q + 1
        t_ms += epoch_ms
    if lean and not stopped:  # flows still served (a run cut at its time limit) stop here
        qz = max(tinfo[2], np.int64(sbuf_i[1, nsc - 1]) if nsc > 0 else 0)
        for g in range(nf):
            if not done[g] and d[g] != 0.0:
                nsc = _spush(vs, sbuf_i, sbuf_d, nsc, tbp, tinfo, where[g], qz, 0.0,
                             quantum_ms, lpos)
    seg_i, seg_d = gather_segments(buf_i, buf_d, chunks_i, chunks_d, nseg)
    return start, finish, seg_i[0], seg_i[1], seg_i[2], seg_d, stats, _stream_end(
        sbuf_i, nsc, tbp, tinfo, quantum_ms), nsc, tinfo[0]


@njit(cache=True)
def _gflush(vs, vg, sbuf_i, sbuf_d, n, tbp, tinfo, quantum_ms):
    """Hand the ``n`` buffered grouped changes to the validator (breakpoint times filled up
    to the last of them, ``tinfo`` as for :func:`_sflush`); returns 0."""
    if n == 0:
        return 0
    if tinfo[0] < 0:
        tinfo[0] = sbuf_i[1, 0]
    tinfo[2] = sbuf_i[1, n - 1]
    _sfill(tbp, tinfo, tinfo[2], quantum_ms)
    return group_consume(vs, vg, sbuf_i, sbuf_d, n, tbp)


@njit(cache=True, error_model="numpy", nogil=True)
def _run_fair(arrival, red_ptr, red_rack, flow_ptr, flow_src, flow_size, pair_of, n_pairs,
              n_in, n_out, epoch_ms, quantum_ms, zero, lean, where, fvol, vs, vg, sbuf_i,
              sbuf_d, kctl):
    """FAIR: each flow runs at ``min(C / flows at its reducer port, C / flows at its mapper
    port)``, recomputed when a flow finishes or coflows are admitted, so the loop jumps
    between those quanta.  All flows of one (mapper port, reducer port) pair share that rate,
    so the kernel keeps state per *pair* (``pair_of``: each flow's pair): a finished flow
    re-times the pairs on its two ports, and only those whose rate changed touch their members
    (each member's bytes left replayed exactly by :func:`_advance`).  Within a pair, bytes
    left keep their order (a rounded subtraction is monotone), so the bucket queue holds
    pairs, keyed by their members' least finishing bound.

    ``lean``: the validator gets the grouped protocol, one rate group per pair
    (:meth:`~coflowopt.StreamValidator.grouped`): a member joins at admission, a pair's rate
    change is one group change, and a finishing flow leaves at its last quantum and runs that
    quantum at a rate of its own (:func:`~coflowopt.validate.own_push`) that delivers exactly
    what the group left it (the kernel mirrors the group's cumulative service, in the
    validator's floating point).  FB2010: 24 million pair changes instead of 61 million
    per-flow changes.  Not ``lean``: every member's segments are stored, as before."""
    n = arrival.size
    nf = flow_size.size
    nr_ = red_rack.size
    P = n_pairs
    cfull = 1.0 * 1024 * 1048576 / 8.0 * (1.0 * quantum_ms / 1024)  # bytes per quantum
    end_ms = 86400 * 1024
    f_red = _owners(flow_ptr, nf)
    red_job = _owners(red_ptr, nr_)
    red_open = np.diff(flow_ptr)
    job_open = np.diff(red_ptr)
    start = np.full(n, -1.0)
    finish = np.full(n, -1.0)
    # pairs: ports, and a block of member slots sized by the flows that ever use the pair
    psrc = np.zeros(P, dtype=np.int64)
    pdst = np.zeros(P, dtype=np.int64)
    mlo = np.zeros(P + 1, dtype=np.int64)
    for f in range(nf):
        pp = pair_of[f]
        psrc[pp] = flow_src[f]
        pdst[pp] = red_rack[f_red[f]]
        mlo[pp + 1] += 1
    for pp in range(P):
        mlo[pp + 1] += mlo[pp]
    mhi = mlo[:P].copy()
    # per member slot, side by side (one cache line brings them): bytes left at the pair's
    # quantum ptq, a lower bound on the finishing quantum (exact once checked), the group's
    # service per member when it joined (lean)
    mrow = np.empty((nf, 3))
    mg = np.empty(nf, dtype=np.int64)  # the flow
    # the pairs whose rate changes at an event, with their old rate
    chg = np.empty(P, dtype=np.int64)
    chg_d = np.empty(P)
    pd = np.zeros(P)  # bytes per quantum of every member
    ptq = np.zeros(P, dtype=np.int64)
    pr = np.zeros(P)  # lean: the rate the validator holds (MB/ms), since (ms), service
    psn = np.zeros(P)
    pA = np.zeros(P)
    pkey = np.full(P, np.inf)
    # each port's pairs with members (dropped at the port's next walk once empty)
    lo_d = np.zeros(n_out + 1, dtype=np.int64)
    lo_s = np.zeros(n_in + 1, dtype=np.int64)
    for pp in range(P):
        lo_d[pdst[pp] + 1] += 1
        lo_s[psrc[pp] + 1] += 1
    for p in range(n_out):
        lo_d[p + 1] += lo_d[p]
    for p in range(n_in):
        lo_s[p + 1] += lo_s[p]
    hi_d = lo_d[:n_out].copy()
    hi_s = lo_s[:n_in].copy()
    arr_d = np.empty(P, dtype=np.int64)
    arr_s = np.empty(P, dtype=np.int64)
    in_d = np.zeros(P, dtype=np.bool_)
    in_s = np.zeros(P, dtype=np.bool_)
    n_dst = np.zeros(n_out, dtype=np.int64)
    n_src = np.zeros(n_in, dtype=np.int64)
    mark_d = np.zeros(n_out, dtype=np.bool_)
    mark_s = np.zeros(n_in, dtype=np.bool_)
    sh_d = np.zeros(n_out)  # the fair share C / flows of each port, as the min() reads it
    sh_s = np.zeros(n_in)
    stats = np.zeros(4, dtype=np.int64)  # events, rate changes, flow completions, pair changes
    # the pairs with members, in buckets of whole quanta by their key (_bq_insert)
    nb = end_ms // quantum_ms + 2
    head = np.empty(nb, dtype=np.int64)
    hm = np.array([-1], dtype=np.int64)
    bq = np.full((P, 3), -1, dtype=np.int64)
    cursor = 0
    buf_i, buf_d, chunks_i, chunks_d = new_store()
    nseg = 0
    fin_list = np.empty(nf if lean else 0, dtype=np.int64)
    nbq = nb if lean else 0
    tbp = np.empty(nbq + 1)
    tinfo = np.array([-1, 0, 0], dtype=np.int64)
    cap = sbuf_d.size
    nsc = 0
    cur = 0
    active_jobs = 0
    active_tasks = 0
    t_ms = 0
    stopped = False
    while t_ms < end_ms and (cur < n or active_tasks > 0) and not stopped:
        qa = t_ms // quantum_ms
        added = 0
        while True:
            j, cur = _next_admitted(cur, arrival, t_ms, epoch_ms, flow_ptr, red_ptr, start,
                                    finish)
            if j < 0:
                break
            active_jobs += 1
            active_tasks += red_ptr[j + 1] - red_ptr[j]
            for r in range(red_ptr[j], red_ptr[j + 1]):
                p = red_rack[r]
                for f in range(flow_ptr[r], flow_ptr[r + 1]):
                    s_ = flow_src[f]
                    n_dst[p] += 1
                    n_src[s_] += 1
                    mark_d[p] = True
                    mark_s[s_] = True
                    pp = pair_of[f]
                    # both ports gain a flow, so the pair's rate changes at qa: its members
                    # come to qa at the old rate first
                    a = ptq[pp]
                    if a != qa:
                        d = pd[pp]
                        for sl in range(mlo[pp], mhi[pp]):
                            if not lean:
                                nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg,
                                                   mg[sl], a, qa, d)
                            x, _, _, _ = _advance(mrow[sl, 0], d, qa - a, zero)
                            mrow[sl, 0] = x
                        ptq[pp] = qa
                    pd[pp] = 0.0  # re-timed at qa whatever its old rate
                    sl = mhi[pp]
                    mhi[pp] += 1
                    mrow[sl, 0] = flow_size[f]
                    mrow[sl, 1] = np.inf
                    mg[sl] = f
                    if not in_d[pp]:
                        in_d[pp] = True
                        arr_d[hi_d[p]] = pp
                        hi_d[p] += 1
                    if not in_s[pp]:
                        in_s[pp] = True
                        arr_s[hi_s[s_]] = pp
                        hi_s[s_] += 1
                    if lean:
                        t = np.float64(qa) * quantum_ms
                        mrow[sl, 2] = pA[pp] + pr[pp] * (t - psn[pp])
                        nsc = member_push(sbuf_i, sbuf_d, nsc, where[f], qa, pp)
                        if nsc == cap:
                            nsc = _gflush(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms)
            added += 1
        q_end = (t_ms + epoch_ms) // quantum_ms
        qn = qa
        first = True
        while active_jobs > 0:
            kctl[CTL_TIME] = qn * quantum_ms
            kctl[CTL_DONE] = cur - active_jobs
            kctl[CTL_EVENTS] = stats[0]
            if stop_requested(kctl):
                kctl[CTL_STATUS] = 1.0
                stopped = True
                break
            if not (first and added == 0):
                for p in range(n_out):
                    if n_dst[p] > 0:
                        sh_d[p] = cfull / n_dst[p]
                for p in range(n_in):
                    if n_src[p] > 0:
                        sh_s[p] = cfull / n_src[p]
                nchg = 0
                for side in range(2):
                    nports = n_out if side == 0 else n_in
                    lst = arr_d if side == 0 else arr_s
                    for p in range(nports):
                        if side == 0:
                            if not mark_d[p]:
                                continue
                            mark_d[p] = False
                            a_, b_ = lo_d[p], hi_d[p]
                        else:
                            if not mark_s[p]:
                                continue
                            mark_s[p] = False
                            a_, b_ = lo_s[p], hi_s[p]
                        w = a_
                        for i in range(a_, b_):
                            pp = lst[i]
                            if mhi[pp] == mlo[pp]:  # no members: off the port's list
                                if side == 0:
                                    in_d[pp] = False
                                else:
                                    in_s[pp] = False
                                continue
                            lst[w] = pp
                            w += 1
                            nd = min(sh_d[pdst[pp]], sh_s[psrc[pp]])
                            if nd != pd[pp]:
                                chg[nchg] = pp
                                chg_d[nchg] = pd[pp]
                                nchg += 1
                                pd[pp] = nd
                        if side == 0:
                            hi_d[p] = w
                        else:
                            hi_s[p] = w
                # the changed pairs' first members, in one pass of independent loads that
                # the processor overlaps (a dependent cache miss per pair otherwise)
                touch = 0.0
                for c in range(nchg):
                    touch += mrow[mlo[chg[c]], 0]
                if touch < 0.0:  # never (bytes left and bounds are >= 0): keeps the loads
                    stats[3] -= 1
                for c in range(nchg):
                    pp = chg[c]
                    d = chg_d[c]
                    nd = pd[pp]
                    # the pair's rate changes at qn: each member to qn, new bounds
                    a = ptq[pp]
                    km = np.inf
                    for sl in range(mlo[pp], mhi[pp]):
                        x = mrow[sl, 0]
                        if qn > a:
                            if not lean:
                                nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg,
                                                   mg[sl], a, qn, d)
                            x, _, _, _ = _advance(x, d, qn - a, zero)
                            mrow[sl, 0] = x
                        kf = (x - zero) / nd
                        lb = qn + max(0.0, math.floor(kf - 2.0 - kf * kf * 4e-16))
                        mrow[sl, 1] = lb
                        if lb < km:
                            km = lb
                    stats[1] += mhi[pp] - mlo[pp]
                    stats[3] += 1
                    if lean:
                        t = np.float64(qn) * quantum_ms
                        pA[pp] += pr[pp] * (t - psn[pp])
                        psn[pp] = t
                        pr[pp] = nd / 1048576.0 / quantum_ms
                        sbuf_i[0, nsc] = -1 - pp  # group_push, written out
                        sbuf_i[1, nsc] = qn
                        sbuf_d[nsc] = pr[pp]
                        nsc += 1
                        if nsc == cap:
                            nsc = _gflush(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms)
                    ptq[pp] = qn
                    if km != pkey[pp]:
                        pkey[pp] = km
                        # out of its bucket and into the new one (_bq_remove, _bq_insert
                        # written out: passing the arrays to them cost reference counting)
                        k0 = bq[pp, 2]
                        if k0 >= 0:
                            nx, pv = bq[pp, 0], bq[pp, 1]
                            if pv >= 0:
                                bq[pv, 0] = nx
                            else:
                                head[k0] = nx
                            if nx >= 0:
                                bq[nx, 1] = pv
                        k1 = np.int64(min(km, nb - 1.0))
                        if k1 > hm[0]:
                            head[hm[0] + 1: k1 + 1] = -1
                            hm[0] = k1
                        bq[pp, 2] = k1
                        bq[pp, 1] = -1
                        h = head[k1]
                        bq[pp, 0] = h
                        if h >= 0:
                            bq[h, 1] = pp
                        head[k1] = pp
            first = False
            while cursor < q_end and (cursor > hm[0] or head[cursor] < 0):
                cursor += 1
            if cursor >= q_end:
                break
            q = cursor
            n_fin = 0
            while head[q] >= 0:
                pp = head[q]
                _bq_remove(head, bq, pp)
                a = ptq[pp]
                d = pd[pp]
                w = mlo[pp]
                km = np.inf
                for sl in range(mlo[pp], mhi[pp]):
                    lb = mrow[sl, 1]
                    if lb <= q:
                        x0 = mrow[sl, 0]
                        _, st, fin, bl = _advance(x0, d, q - a + 1, zero)
                        if fin:
                            g = mg[sl]
                            if not lean:
                                nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g,
                                                   a, q, d)
                                nseg = put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, g,
                                                   q, q + 1, bl)
                            else:
                                t = np.float64(q) * quantum_ms
                                nsc = member_push(sbuf_i, sbuf_d, nsc, where[g], q, -1)
                                if nsc == cap:
                                    nsc = _gflush(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo,
                                                  quantum_ms)
                                if bl != 0.0:  # the last quantum carries what is left
                                    before = (pA[pp] + pr[pp] * (t - psn[pp])) - mrow[sl, 2]
                                    rl = max((fvol[g] - before) / quantum_ms, 0.0)
                                    nsc = own_push(sbuf_i, sbuf_d, nsc, where[g], q, rl)
                                    if nsc == cap:
                                        nsc = _gflush(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo,
                                                      quantum_ms)
                                    fin_list[n_fin] = g
                                else:
                                    fin_list[n_fin] = -1
                            n_fin += 1
                            stats[2] += 1
                            r = f_red[g]
                            p = red_rack[r]
                            s_ = flow_src[g]
                            n_dst[p] -= 1
                            n_src[s_] -= 1
                            mark_d[p] = True
                            mark_s[s_] = True
                            red_open[r] -= 1
                            if red_open[r] == 0:
                                active_tasks -= 1
                                j = red_job[r]
                                job_open[j] -= 1
                                if job_open[j] == 0:
                                    finish[j] = (q + 1) * quantum_ms
                                    active_jobs -= 1
                            continue
                        # the bound was low: the exact finishing quantum
                        _, st, fin, _ = _advance(x0, d, 1 << 40, zero)
                        lb = float(a + st - 1) if fin else np.inf
                    mrow[w, 0] = mrow[sl, 0]
                    mrow[w, 1] = lb
                    mg[w] = mg[sl]
                    if lean:
                        mrow[w, 2] = mrow[sl, 2]
                    w += 1
                    if lb < km:
                        km = lb
                mhi[pp] = w
                pkey[pp] = km
                if km < np.inf:
                    _bq_insert(head, hm, bq, pp, np.int64(min(km, nb - 1.0)))
            if n_fin == 0:
                first = True
                added = 0
                continue
            if lean:
                for j in range(n_fin):
                    if fin_list[j] >= 0:
                        nsc = own_push(sbuf_i, sbuf_d, nsc, where[fin_list[j]], q + 1, 0.0)
                        if nsc == cap:
                            nsc = _gflush(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms)
            stats[0] += 1
            qn = q + 1
        t_ms += epoch_ms
    if lean and not stopped:  # members still served (a run cut at its time limit) leave here
        qz = max(tinfo[2], np.int64(sbuf_i[1, nsc - 1]) if nsc > 0 else 0)
        for pp in range(P):
            for sl in range(mlo[pp], mhi[pp]):
                nsc = member_push(sbuf_i, sbuf_d, nsc, where[mg[sl]], qz, -1)
                if nsc == cap:
                    nsc = _gflush(vs, vg, sbuf_i, sbuf_d, nsc, tbp, tinfo, quantum_ms)
    seg_i, seg_d = gather_segments(buf_i, buf_d, chunks_i, chunks_d, nseg)
    return start, finish, seg_i[0], seg_i[1], seg_i[2], seg_d, stats, _stream_end(
        sbuf_i, nsc, tbp, tinfo, quantum_ms), nsc, tinfo[0]


# -- public entry points ----------------------------------------------------------------------


def _canonical(scheduler: str) -> str:
    key = scheduler.strip().lower()
    if key not in COFLOWSIM_SCHEDULERS:
        raise KeyError(f"coflowsim semantics: unknown scheduler {scheduler!r}; CoflowSim has "
                       f"{', '.join(sorted(set(COFLOWSIM_SCHEDULERS.values())))} "
                       "(varys = sebf, aalo = dark)")
    return COFLOWSIM_SCHEDULERS[key]


def _flows(model: _Model, n: int) -> tuple[np.ndarray, ...]:
    """CoflowSim's flows in the transformed instance's order (by original coflow): ``src``,
    ``dst``, ``volume`` (MB), ``coflow`` (int32, as the instance keeps them), and ``where``:
    per model flow, its index there."""
    nf_job = np.diff(model.flow_ptr[model.red_ptr])  # flows per job
    job_of_flow = np.repeat(np.arange(n, dtype=np.int32), nf_job)
    coflow = model.order.astype(np.int32)[job_of_flow]
    del job_of_flow
    perm = np.argsort(coflow, kind="stable")  # new flow k is model flow perm[k]
    where = np.empty_like(perm)
    where[perm] = np.arange(perm.size)
    red_of_flow = np.repeat(np.arange(model.red_rack.size, dtype=np.int32),
                            np.diff(model.flow_ptr))
    dst = model.red_rack.astype(np.int32)[red_of_flow[perm]]
    del red_of_flow
    return (model.flow_src.astype(np.int32)[perm], dst, model.flow_size[perm] / MIB,
            coflow[perm], where)


def _transformed(inst: Instance, model: _Model, start: np.ndarray,
                 flows: tuple[np.ndarray, ...] | None = None) -> tuple[Instance, np.ndarray]:
    """CoflowSim's flows as an instance in the original coflow order; returns it and, per
    model flow, its index there.  ``flows``: :func:`_flows`' result, if already made."""
    n = inst.n_coflows
    src, dst, volume, coflow, where = flows if flows is not None else _flows(model, n)
    release = np.empty(n)
    release[model.order] = start
    out = Instance.from_arrays(
        Fabric.uniform(inst.fabric.ports, 0.125), src, dst, volume, coflow,
        coflow_id=inst.coflow_id, coflow_release=release,
        coflow_weight=inst.coflow_weight, coflow_job=inst.coflow_job, n_coflows=n,
        job_id=inst.job_id, job_release=_job_release(inst, release),
        job_weight=inst.job_weight, n_jobs=inst.n_jobs, time_unit="ms",
    )
    return out, where


def _job_release(inst: Instance, release: np.ndarray) -> np.ndarray:
    out = np.full(inst.n_jobs, np.inf)
    np.minimum.at(out, np.asarray(inst.coflow_job), release)
    out[~np.isfinite(out)] = 0.0
    return out


@njit(cache=True)
def _close_drift(sf, sa, sb, sd, where, volume, q, index):
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


def coflowsim_instance(instance: Instance, params: CoflowSimParams | None = None) -> Instance:
    """The instance CoflowSim actually simulates (rounded flows, in MB), releases unchanged."""
    params = params or CoflowSimParams()
    model = _build_model(instance, params)
    inst, _ = _transformed(instance, model, model.arrival)
    return inst


def _horizon(model: _Model, params: CoflowSimParams) -> float:
    """An estimate of a CoflowSim run's length in ms (as :func:`~coflowopt.sim.kernel.
    fluid_horizon`, on the rounded flows at 1 MiB per quantum per port)."""
    if model.arrival.size == 0 or model.flow_size.size == 0:
        return 0.0
    rate = MIB / params.quantum_ms  # bytes per ms per port
    dst = model.red_rack[np.repeat(np.arange(model.red_rack.size), np.diff(model.flow_ptr))]
    busy = max(np.bincount(model.flow_src, model.flow_size).max(),
               np.bincount(dst, model.flow_size).max()) / rate
    spread = model.flow_size.sum() / (rate * max(model.n_in, 1))
    return max(float(model.arrival.max()) + spread, float(model.arrival.min()) + busy)


def coflowsim(instance: Instance, scheduler: str = "sebf", *,
              params: CoflowSimParams | None = None,
              check: Tolerance | bool | None = None, progress: Progress | None = None,
              notify: Notify | None = None, control: np.ndarray | None = None
              ) -> CoflowSimResult:
    """Run ``scheduler`` under CoflowSim's semantics (module docstring).

    ``scheduler``: CoflowSim's names ``sebf``, ``dark``, ``fifo``, ``scf`` (shortest: smallest
    largest-reducer / M first), ``ncf`` (narrowest: min(M, R)), ``lcf`` (lightest: total bytes
    left), ``fair``, ``pfp``; ``varys`` and ``aalo`` are accepted for ``sebf`` and ``dark``;
    and ``a-sebf`` (``asebf``): DARK with the queues on bytes sent per receiver port (spec
    §7.3, the CoflowSim rendering of §10.4).  The instance is read as CoflowSim reads a
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
    (raised to ``t`` when passed); without it :data:`coflowopt.sim.engine.PROGRESS`, if set,
    hears completed coflows.  ``notify``: hears when the kernel compiles (default: stderr).
    ``control``: a caller's control array, as for :func:`coflowopt.sim.fast.fast_simulate`.
    """
    params = params or CoflowSimParams()
    name = _canonical(scheduler)
    kind = _KIND[name]
    n_edges = len(instance.starts_after) + len(instance.finishes_before)
    if n_edges:
        raise ValueError(f"coflowsim semantics are single-stage: the instance has {n_edges} "
                         "precedence edges (Starts-After/Finishes-Before), CoflowSim has none")
    lean = check is not None and check is not False
    t0 = time.process_time()
    model = _build_model(instance, params)
    q = params.quantum_ms
    # the flows the validator checks and the instance holds (built after the run, with its
    # releases at the admission epochs)
    flows = _flows(model, instance.n_coflows)
    if lean:
        tol = _mode_tolerance(params) if check is True else check
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
    if name == "fair":  # one rate group per (mapper port, reducer port) pair
        fdst = model.red_rack[np.repeat(np.arange(model.red_rack.size), np.diff(model.flow_ptr))]
        pairs, pair_of = np.unique(model.flow_src * model.n_out + fdst, return_inverse=True)
        pair_of = pair_of.astype(np.int64).ravel()
        groups = stream.grouped(pairs // model.n_out if lean else pairs[:0],
                                pairs % model.n_out if lean else pairs[:0])
    ctl = new_control(_horizon(model, params), instance.n_coflows, control)
    lean_args = (lean, where, fvol, stream.state, *stream.buffer, ctl)
    if kind <= 5 or name == "a-sebf":
        fn = _run_coflow
        args = (kind, model.arrival, model.red_ptr, model.red_rack, model.red_bytes,
                model.red_perrack, model.flow_ptr, model.flow_src, model.flow_size, model.alpha,
                model.deadline, model.scf_key, model.ncf_key, model.n_in, model.n_out,
                params.epoch_ms, q, params.zero, params.pseudo_deadlines,
                params.dark_queues, params.dark_first_mib * MIB, params.dark_factor,
                params.static_keys, *lean_args)
    elif name == "fair":
        fn = _run_fair
        args = (model.arrival, model.red_ptr, model.red_rack, model.flow_ptr, model.flow_src,
                model.flow_size, pair_of, pairs.size, model.n_in, model.n_out,
                params.epoch_ms, q, params.zero, lean, where, fvol, stream.state, groups,
                *stream.buffer, ctl)
    else:
        fn = _run_pfp
        args = (model.arrival, model.red_ptr, model.red_rack, model.flow_ptr, model.flow_src,
                model.flow_size, model.n_in, model.n_out, params.epoch_ms, q, params.zero,
                *lean_args)
    prepare(fn, *args, notify=notify)
    cb, units = progress_target(progress)
    out = run_kernel(fn, *args, control=ctl, progress=cb, units=units)
    start, finish, sf, sa, sb, sd = out[:6]
    tbp, n_buf, k_first = out[-3:]
    del out
    inst, where = _transformed(instance, model, start, flows)
    del flows
    meta = {"scheduler": f"coflowsim:{name}", "semantics": "coflowsim"}
    sched = valid = None
    if lean:
        stream.finish(tbp, int(n_buf))
        valid = stream.result(meta, instance=inst)
        # the stored schedule's first breakpoint is the first quantum with a change
        valid = replace(valid, start=float(max(int(k_first), 0)) * q)
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
        flow, rate, first, last = _close_drift(sf, sa, sb, sd, where,
                                               np.asarray(inst.flow_volume), q, index)
        sched = Schedule.from_segments(np.flatnonzero(mark).astype(np.float64) * q, flow, rate,
                                       first, last, meta=meta)
    runtime = time.process_time() - t0
    st = np.empty(instance.n_coflows)
    fi = np.empty(instance.n_coflows)
    st[model.order] = start
    fi[model.order] = finish
    return CoflowSimResult(name, inst, sched, st, fi, runtime, params, valid)

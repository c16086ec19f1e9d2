"""The decision-epoch stepper: the order-preserving greedy allocation as a compiled event loop
that returns to Python whenever the set of ready coflows changes.

A learned scheduler (DeepWeave: Sun, Guo, Wang, Li, Lan, Hu, IJCAI 2020, Alg. 1) picks a new
priority list at every *decision epoch*: a coflow becomes ready (released and every
Starts-After predecessor complete) or completes.  In between, the rates follow the same rule as
:func:`coflowopt.sim.drive.order_schedule` with ``allocation="greedy"``: the ready coflows are
served in priority order and each unfinished flow in turn (coflow by coflow, flows in instance
order inside a coflow) takes ``min(free ingress, free egress)`` (Sincronia's order-preserving
allocation, Agarwal et al., SIGCOMM 2018; ``split="ordered"``).  The rates are recomputed at
every flow completion inside the compiled loop by the shared kernels
(:func:`coflowopt.sim.allocate.greedy_kernel`, and the reference engine's ``next_completion`` and
``advance_rates``), so a priority held for a whole episode gives the schedule of
``order_schedule(instance, priority=p)``.

Protocol::

    st = Stepper(instance)
    state = st.reset()                       # the first epoch (admissions at the start time)
    while not done:
        elapsed, n_jobs, done = st.step(priority)   # one number per coflow, smaller first
        state = st.state

``step`` returns the time advanced and the number of unfinished jobs during it (released and
not complete; constant over a step because job releases are epochs too), so the
Decima-style reward ``r_t = -(t_{k+1} - t_k) * n_jobs`` sums to ``-sum_j JCT_j`` over an
episode ([C]: Decima's reward, Mao et al., SIGCOMM 2019).  The rate changes are recorded
as they are made (:meth:`Stepper.changes`), so the episode's schedule can be validated with
:func:`coflowopt.validate.validate_changes` (:meth:`Stepper.validate`) or stored
(:meth:`Stepper.schedule`).

Volumes, rates and times are in the instance's units (normalized units for the DAG generators).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.sim.allocate import AllocState, greedy_kernel, zero_rates
from coflowopt.sim.engine import SimulationError, advance_rates, next_completion, rate_moved
from coflowopt.sim.events import admission_heap, heap_pop, next_breakpoint, release_successors
from coflowopt.sim.ready import by_admission, by_key
from coflowopt.validate import Tolerance, ValidSchedule, validate_changes

__all__ = ["DagState", "Stepper"]

# kernel status codes
_EPOCH = 0  # stopped at a decision epoch
_DONE = 1  # every coflow complete
_GROW = 2  # the change or breakpoint buffers need room (nothing of this event was done yet)
_STALL = 3  # ready coflows, but no flow has a rate and nothing is pending

#: what :func:`_admit` returns: the admission heap's size, the coflows and jobs complete, and
#: whether any coflow was admitted
Admitted = namedtuple("Admitted", ["na", "n_done", "jobs_done", "any"])


@dataclass(frozen=True)
class DagState:
    """What a policy sees at a decision epoch (arrays are read-only copies).

    ``time``: the epoch's time; ``remaining``: remaining volume per flow (``F``);
    ``coflow_done``: per coflow, complete; ``coflow_ready``: per coflow, released, every
    Starts-After predecessor complete and not yet complete (the coflows the priority orders
    now); ``coflow_start``: per coflow, the time it became ready (NaN before).
    """

    time: float
    remaining: np.ndarray
    coflow_done: np.ndarray
    coflow_ready: np.ndarray
    coflow_start: np.ndarray

    @property
    def coflow_waiting(self) -> np.ndarray:
        """Coflows not yet ready (a predecessor or the release is pending)."""
        return ~(self.coflow_done | self.coflow_ready)


# -- the compiled event loop --------------------------------------------------------------------


@njit(cache=True)
def _log(coflows, ptr, order, rate, cur, k, cf, ck, cr, nc):
    """Append the rate changes of ``coflows``' flows at breakpoint ``k``; returns the count.
    A rate that moved only by rounding keeps its recorded value (:func:`rate_moved`)."""
    for c in coflows:
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if rate_moved(rate, cur, f):
                cf[nc] = f
                ck[nc] = k
                cr[nc] = rate[f]
                nc += 1
                cur[f] = rate[f]
    return nc


@njit(cache=True)
def _complete(c, t, done, completion, left_job, coflow_job, n_pred, succ_ptr, succ, release,
              ak, av, na):
    """Coflow ``c`` completes at ``t``: successors whose last predecessor it was become
    admissible at ``max(release, t)``; returns ``(na, job finished)``."""
    done[c] = True
    completion[c] = t
    j = coflow_job[c]
    left_job[j] -= 1
    na = release_successors(c, t, succ_ptr, succ, n_pred, release, ak, av, na)
    return na, left_job[j] == 0


@njit(cache=True)
def _admit(t, ak, av, na, active, admitted, done, completion, left, left_job, coflow_job, n_pred,
           succ_ptr, succ, release, nd, jobs_done):
    """Admit every coflow admissible at ``t`` (one with nothing to send completes at once);
    returns :class:`Admitted`."""
    any_ = False
    while na > 0 and ak[0] <= t:
        c = av[0]
        na = heap_pop(ak, av, na)
        admitted[c] = t
        any_ = True
        if left[c] == 0:
            na, jf = _complete(c, t, done, completion, left_job, coflow_job, n_pred, succ_ptr,
                               succ, release, ak, av, na)
            nd += 1
            if jf:
                jobs_done += 1
        else:
            active[c] = True
    return Admitted(na, nd, jobs_done, any_)


@njit(cache=True)
def _to_epoch(key, sc, ptr, order, src, dst, volume, remaining, rate, cap_in, cap_out, rem_in,
              rem_out, cnt_in, cnt_out, cin_ptr, cin, cout_ptr, cout, has_rate, fslot_in,
              fslot_out, slot_in, slot_out, cur, left, active, admitted, done, completion,
              left_job, coflow_job, n_pred, succ_ptr, succ, release, ak, av, job_rel,
              bps, cf, ck, cr):
    """Advance from a decision epoch to the next one with the ready coflows in ``key`` order
    (smaller first).  ``sc`` holds the scalars ``[t, kk, nc, na, n_done, jobs_done, jr]``
    (time, last breakpoint, changes logged, admission-heap size, coflows and jobs complete,
    next job release to pass); it is updated in place.  Returns a status code.

    The shared skeleton's admission and breakpoints; no stop/progress check: the loop
    returns to Python at every epoch anyway.  The buffers stay the caller's (``_GROW``: they
    are grown in Python), so :func:`~coflowopt.sim.events.next_breakpoint` never grows them
    here."""
    C = active.size
    F = remaining.size
    t = sc[0]
    kk = np.int64(sc[1])
    nc = np.int64(sc[2])
    na = np.int64(sc[3])
    nd = np.int64(sc[4])
    jobs_done = np.int64(sc[5])
    jr = np.int64(sc[6])
    act = by_admission(active, admitted)
    act = by_key(act, key[act])
    status = _EPOCH
    while True:
        if nd == C:
            status = _DONE
            break
        # room for one event: every flow may change once, one breakpoint may open
        if cf.size - nc < F or bps.size - kk < 3:
            status = _GROW
            break
        t_job = job_rel[jr] if jr < job_rel.size else np.inf
        n_fin = 0
        if act.size == 0:
            # idle until the next admission or job release (an epoch either way)
            tn = min(ak[0] if na > 0 else np.inf, t_job)
            if tn == np.inf:
                status = _STALL
                break
            bps, kk, t, _ = next_breakpoint(bps, kk, t, tn)
        else:
            zero_rates(act, ptr, order, rate, has_rate)
            rem_in[:] = cap_in
            rem_out[:] = cap_out
            greedy_kernel(act, False, ptr, order, src, dst, remaining, rate, rem_in, rem_out,
                          cap_in, cap_out, cnt_in, cnt_out, cin_ptr, cin, cout_ptr, cout, has_rate,
                          slot_in, slot_out)
            nc = _log(act, ptr, order, rate, cur, kk, cf, ck, cr, nc)
            dt = next_completion(act, ptr, order, remaining, rate, has_rate)
            if na > 0:
                dt = min(dt, ak[0] - t)
            dt = min(dt, t_job - t)
            if not np.isfinite(dt):
                status = _STALL
                break
            if t + dt > t:
                n_fin = advance_rates(act, ptr, order, remaining, rate, volume, dt, left, has_rate,
                                      fslot_in, fslot_out, slot_in, slot_out)
                bps, kk, t, _ = next_breakpoint(bps, kk, t, t + dt)
            if n_fin > 0:
                fin = np.empty(n_fin, dtype=np.int64)
                j = 0
                for c in act:
                    if left[c] == 0:
                        fin[j] = c
                        j += 1
                        active[c] = False
                        for i in range(ptr[c], ptr[c + 1]):
                            rate[order[i]] = 0.0
                        has_rate[c] = False
                        na, jf = _complete(c, t, done, completion, left_job, coflow_job,
                                           n_pred, succ_ptr, succ, release, ak, av, na)
                        nd += 1
                        if jf:
                            jobs_done += 1
                nc = _log(fin, ptr, order, rate, cur, kk, cf, ck, cr, nc)
        epoch = act.size == 0 or n_fin > 0
        ad = _admit(t, ak, av, na, active, admitted, done, completion, left, left_job,
                    coflow_job, n_pred, succ_ptr, succ, release, nd, jobs_done)
        na, nd, jobs_done = ad.na, ad.n_done, ad.jobs_done
        while jr < job_rel.size and job_rel[jr] <= t:
            jr += 1
            epoch = True
        if epoch or ad.any:
            status = _DONE if nd == C else _EPOCH
            break
    sc[0] = t
    sc[1] = kk
    sc[2] = nc
    sc[3] = na
    sc[4] = nd
    sc[5] = jobs_done
    sc[6] = jr
    return status


# -- the Python side ----------------------------------------------------------------------------


class Stepper:
    """Run the order-preserving greedy allocation on ``instance`` one decision epoch at a time.

    ``reset()`` starts an episode (at ``min(0, releases)``, admitting what is ready then) and
    returns the first :class:`DagState`; ``step(priority)`` serves the ready coflows in
    ``priority`` order (one number per coflow, *smaller served first*; ties by the time a
    coflow became ready, then by position, as :func:`coflowopt.sim.drive.order_schedule`) up
    to the next epoch and returns ``(elapsed, n_unfinished_jobs, done)``.  Only the
    priorities of ready coflows matter.
    """

    def __init__(self, instance: Instance):
        inst = instance
        self.instance = inst
        self._alloc = AllocState.for_instance(inst)
        ptr_p, _ = inst.predecessors_ptr
        self._n_pred0 = np.diff(ptr_p).astype(np.int64)
        sp, s = inst.successors_ptr
        self._succ_ptr = np.ascontiguousarray(sp, dtype=np.int64)
        self._succ = np.ascontiguousarray(s, dtype=np.int64)
        self._release = np.ascontiguousarray(inst.release, dtype=np.float64)
        self._coflow_job = np.ascontiguousarray(inst.coflow_job, dtype=np.int64)
        self._job_rel = np.sort(np.asarray(inst.job_release, dtype=np.float64))
        C, F = inst.n_coflows, inst.n_flows
        vol = self._alloc.volume
        self._left0 = np.bincount(inst.flow_coflow[vol > 0], minlength=C).astype(np.int64)
        self._left_job0 = np.bincount(self._coflow_job, minlength=inst.n_jobs).astype(np.int64)
        self._t0 = min(0.0, float(self._release.min())) if C else 0.0
        self._cap = max(4 * F, 1024)
        self.reset()

    # -- episode ---------------------------------------------------------------------------

    def reset(self) -> DagState:
        """Start a new episode; returns the state at the first epoch."""
        inst = self.instance
        st = self._alloc
        C, F = inst.n_coflows, inst.n_flows
        st.remaining[:] = np.where(st.volume > 0, st.volume, 0.0)
        st.rate[:] = 0.0
        st.has_rate[:] = False
        # unfinished flows per coflow-port slot, as AllocState counts them
        live = st.volume > 0
        st.slot_in[:] = np.bincount(st.fslot_in[live], minlength=st.slot_in.size)
        st.slot_out[:] = np.bincount(st.fslot_out[live], minlength=st.slot_out.size)
        self._cur = np.zeros(F)
        self._left = self._left0.copy()
        self._left_job = self._left_job0.copy()
        self._n_pred = self._n_pred0.copy()
        self._active = np.zeros(C, dtype=np.bool_)
        self._admitted = np.full(C, np.nan)
        self._done = np.zeros(C, dtype=np.bool_)
        self._completion = np.full(C, np.nan)
        self._ak, self._av, na = admission_heap(self._n_pred, self._release)
        self._bps = np.empty(max(2 * C + 16, 64))
        self._bps[0] = self._t0
        self._cf = np.empty(self._cap, dtype=np.int64)
        self._ck = np.empty(self._cap, dtype=np.int64)
        self._cr = np.empty(self._cap)
        # jobs without coflows are complete at their release
        empty = int(np.count_nonzero(self._left_job == 0))
        jr = int(np.searchsorted(self._job_rel, self._t0, side="right"))
        ad = _admit(self._t0, self._ak, self._av, na, self._active, self._admitted, self._done,
                    self._completion, self._left, self._left_job, self._coflow_job,
                    self._n_pred, self._succ_ptr, self._succ, self._release, 0, empty)
        self._sc = np.array([self._t0, 0, 0, ad.na, ad.n_done, ad.jobs_done, jr],
                            dtype=np.float64)
        self._steps = 0
        while not self.done and not self._active.any() and self.n_unfinished_jobs == 0:
            # nothing released yet: idle to the first release (no job waits, no reward lost)
            self._run(np.zeros(C))
        return self.state

    def _run(self, key: np.ndarray) -> int:
        st = self._alloc
        while True:
            status = _to_epoch(
                key, self._sc, st.ptr, st.order, st.src, st.dst, st.volume, st.remaining,
                st.rate, st.cap_in, st.cap_out, st.rem_in, st.rem_out, st.cnt_in, st.cnt_out,
                st.cin_ptr, st.cin, st.cout_ptr, st.cout, st.has_rate, st.fslot_in,
                st.fslot_out, st.slot_in, st.slot_out, self._cur, self._left, self._active,
                self._admitted, self._done, self._completion, self._left_job, self._coflow_job,
                self._n_pred, self._succ_ptr, self._succ, self._release, self._ak, self._av,
                self._job_rel, self._bps, self._cf, self._ck, self._cr)
            if status != _GROW:
                break
            n, kk = int(self._sc[2]), int(self._sc[1])
            if self._cf.size - n < self.instance.n_flows:
                self._cf, self._ck, self._cr = (np.concatenate([a, np.empty_like(a)])
                                                for a in (self._cf, self._ck, self._cr))
            if self._bps.size - kk < 3:
                self._bps = np.concatenate([self._bps, np.empty_like(self._bps)])
        if status == _STALL:
            raise SimulationError(f"stepper at t={self.time:g}: ready coflows but no flow has a "
                                  "rate and no event is pending")
        return status

    def step(self, priority: np.ndarray) -> tuple[float, int, bool]:
        """Serve the ready coflows in ``priority`` order (smaller first) until the next
        decision epoch.  Returns ``(elapsed, n_unfinished_jobs, done)``: the time advanced,
        the number of jobs released and unfinished during it, and whether every coflow is
        complete now."""
        C = self.instance.n_coflows
        if self.done:
            raise RuntimeError("stepper: the episode is over; call reset()")
        key = np.asarray(priority, dtype=np.float64).ravel()
        if key.size != C:
            raise ValueError(f"stepper: priority needs {C} numbers, one per coflow, got "
                             f"{key.size}")
        if not np.all(np.isfinite(key[self._active])):
            bad = int(np.flatnonzero(self._active & ~np.isfinite(key))[0])
            raise ValueError(f"stepper: priority of ready coflow "
                             f"{self.instance.coflow_id[bad]!r} is not finite")
        t = self.time
        n_jobs = self.n_unfinished_jobs
        status = self._run(np.ascontiguousarray(key))
        self._steps += 1
        return self.time - t, n_jobs, status == _DONE

    # -- what it shows -----------------------------------------------------------------------

    @property
    def time(self) -> float:
        return float(self._sc[0])

    @property
    def done(self) -> bool:
        """Every coflow complete."""
        return int(self._sc[4]) == self.instance.n_coflows

    @property
    def n_steps(self) -> int:
        """Steps taken since :meth:`reset`."""
        return self._steps

    @property
    def n_unfinished_jobs(self) -> int:
        """Jobs released by now (``job_release <= time``) and not complete."""
        return int(np.count_nonzero((self.instance.job_release <= self.time)
                                    & (self._left_job > 0)))

    @property
    def ready(self) -> np.ndarray:
        """Positions of the ready coflows (the ones a priority orders now)."""
        return np.flatnonzero(self._active)

    @property
    def state(self) -> DagState:
        def ro(a: np.ndarray) -> np.ndarray:
            b = a.copy()
            b.flags.writeable = False
            return b

        return DagState(time=self.time, remaining=ro(self._alloc.remaining),
                        coflow_done=ro(self._done), coflow_ready=ro(self._active),
                        coflow_start=ro(self._admitted))

    @property
    def coflow_completion(self) -> np.ndarray:
        """Completion time per coflow (NaN while unfinished)."""
        return self._completion.copy()

    def job_completion(self) -> np.ndarray:
        """Completion time per job (its last coflow's; NaN while unfinished)."""
        J = self.instance.n_jobs
        out = np.full(J, -np.inf)
        np.maximum.at(out, self._coflow_job, self._completion)
        out[self._left_job0 == 0] = self.instance.job_release[self._left_job0 == 0]
        out[self._left_job > 0] = np.nan
        return out

    def changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The rate changes so far ``(breakpoints, flow, k, rate)`` in time order: flow
        ``flow[i]`` runs at ``rate[i]`` from breakpoint ``k[i]`` until its next change (the
        input of :func:`coflowopt.validate.validate_changes`)."""
        n, kk = int(self._sc[2]), int(self._sc[1])
        return (self._bps[: kk + 1].copy(), self._cf[:n].copy(), self._ck[:n].copy(),
                self._cr[:n].copy())

    def validate(self, tol: Tolerance | None = None) -> ValidSchedule:
        """Validate the finished episode's schedule (streaming, from the rate changes)."""
        if not self.done:
            raise RuntimeError("stepper: validate() needs a finished episode")
        bps, f, k, r = self.changes()
        return validate_changes(self.instance, bps, f, k, r, tol)

    def schedule(self) -> Schedule:
        """The finished episode's schedule as a stored :class:`~coflowopt.Schedule`."""
        if not self.done:
            raise RuntimeError("stepper: schedule() needs a finished episode")
        bps, f, k, r = self.changes()
        # each change closes the flow's previous segment; consecutive changes of one flow
        o = np.argsort(f, kind="stable")
        f, k, r = f[o], k[o], r[o]
        same = f[1:] == f[:-1]
        seg = np.flatnonzero(same & (r[:-1] > 0))
        return Schedule.from_segments(bps, f[seg], r[seg], k[seg], k[seg + 1],
                                      meta={"engine": "stepper", "steps": self._steps})

"""The event loop's shared steps: admission epochs, the bucket queue of finishing quanta, and
the completion bookkeeping of flows, reducers and jobs (progress and stop are the skeleton's
:func:`coflowopt.sim.events.progress_or_stop`).

CoflowSim (``Simulator.simulate``, the trace-driven simulator of Varys: Chowdhury, Zhong,
Stoica, SIGCOMM 2014) admits the jobs arriving in ``(T, T + epoch]`` at epoch start
``T`` and advances time in quanta; the kernels jump from event to event instead.  These loops
keep their own admission and queues rather than :mod:`coflowopt.sim.events`': admission is by
epoch (not at each release, no Starts-After edges) and events fall on whole quanta, so a bucket
per quantum replaces the heaps.

:func:`run_epochs` is the loop of the flow-level kernels (FAIR, PFP): epochs, admission,
stop and progress, the bucket walk, with the scheduler's steps passed in as compiled functions
(numba compiles one specialisation of the loop per set of steps; FB2010, whole command, the
same time as the two loops written out: FAIR 3.59 s of CPU against 3.66 s, 6 interleaved runs
each, PFP 3.17 s against 3.11 s, 3 each, medians within the runs' spread).  The coflow-level kernel
(:mod:`coflowopt.sim.coflowsim.ordered`) has no per-flow bucket queue: it advances a window of
quanta to the next departure of a whole coflow and re-sorts the coflows there, so it keeps its
own loop and shares :func:`next_admitted` and :func:`gathered`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coflowopt._jit import njit
from coflowopt.sim.coflowsim.stream import breakpoint_times, last_change
from coflowopt.sim.events import progress_or_stop
from coflowopt.sim.segstore import gather_segments

__all__ = ["END_MS", "bq_insert", "bq_remove", "flow_finished", "gathered", "new_buckets",
           "next_admitted", "next_bucket", "no_step", "owners", "run_epochs", "steps"]

#: CoflowSim's time limit: a simulated day (1024 ms a simulated second)
END_MS = 86400 * 1024


@njit(cache=True, inline="always")
def new_buckets(n_items, quantum_ms):
    """An empty bucket queue over a simulated day of quanta for ``n_items`` items:
    ``(head, hm, bq, nb)`` (see :func:`bq_insert`)."""
    nb = END_MS // quantum_ms + 2
    head = np.empty(nb, dtype=np.int64)
    hm = np.array([-1], dtype=np.int64)  # buckets 0 .. hm[0] are initialized
    bq = np.full((n_items, 3), -1, dtype=np.int64)
    return head, hm, bq, nb


@njit(cache=True, inline="always")
def bq_insert(head, hm, bq, g, k):
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
def bq_remove(head, bq, g):
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
def next_admitted(cur, arrival, t_ms, epoch_ms, flow_ptr, red_ptr, start, finish, active_jobs,
                  active_tasks):
    """The next coflow (job) at or after ``cur`` admitted at epoch ``t_ms`` (CoflowSim: those
    arriving up to ``t_ms + epoch_ms``), started at ``t_ms`` and counted with its reducers
    among the active ones; one without flows is finished there and skipped.  Returns ``(j,
    cur, active_jobs, active_tasks)``: ``j = -1`` when none is left to admit."""
    n = arrival.size
    while cur < n:
        j = cur
        if arrival[j] > t_ms + epoch_ms:
            return -1, cur, active_jobs, active_tasks
        start[j] = t_ms
        cur += 1
        if flow_ptr[red_ptr[j + 1]] == flow_ptr[red_ptr[j]]:
            finish[j] = t_ms
            continue
        return j, cur, active_jobs + 1, active_tasks + red_ptr[j + 1] - red_ptr[j]
    return -1, cur, active_jobs, active_tasks


@njit(cache=True)
def owners(ptr, size):
    """Per element of a CSR layout (``ptr``: each segment's first element), its segment."""
    out = np.empty(size, dtype=np.int64)
    for r in range(ptr.size - 1):
        for f in range(ptr[r], ptr[r + 1]):
            out[f] = r
    return out


@njit(cache=True, inline="always")
def next_bucket(head, hm, cursor, q_end):
    """The first non-empty bucket at or after ``cursor`` (``q_end`` when none is before it)."""
    while cursor < q_end and (cursor > hm[0] or head[cursor] < 0):
        cursor += 1
    return cursor


@njit(cache=True, inline="always")
def flow_finished(r, q, red_open, red_job, job_open, finish, quantum_ms, active_tasks,
                  active_jobs):
    """A flow of reducer ``r`` finished in quantum ``q``: the reducer completes with its last
    flow, the job with its last reducer (at the quantum's end).  Returns the open reducer
    and job counts."""
    red_open[r] -= 1
    if red_open[r] == 0:
        active_tasks -= 1
        j = red_job[r]
        job_open[j] -= 1
        if job_open[j] == 0:
            finish[j] = (q + 1) * quantum_ms
            active_jobs -= 1
    return active_tasks, active_jobs


@njit(cache=True, inline="always")
def gathered(store, nseg):
    """The stored segments as ``(flow, first quantum, last quantum exclusive, bytes per
    quantum)`` arrays."""
    seg_i, seg_d = gather_segments(store[0], store[1], store[2], store[3], nseg)
    return seg_i[0], seg_i[1], seg_i[2], seg_d


def steps(*fns: Any) -> tuple[Any, ...]:
    """Compiled step functions to hand to :func:`run_epochs` through a kernel's arguments,
    each given a fixed identity in numba's cache.

    A kernel that takes a compiled function as an argument is compiled for that function,
    and its cache entry names the function by the dispatcher's identity, by default a random
    uuid drawn in each process: every process then missed the cache and compiled the kernel
    again (FAIR: 12 s a run), and reading the grown index rebuilt the old entries' functions.
    Named by module and name, the entry is found by the next process (numba's
    ``Dispatcher._set_uuid``, which its own unpickling uses)."""
    for fn in fns:
        fn._set_uuid(f"coflowopt:{fn.py_func.__module__}.{fn.py_func.__qualname__}")
    return fns


@njit(cache=True)
def no_step(st, qa, nseg, nsc):
    """A step that does nothing (FAIR at an epoch's start)."""
    return nseg, nsc


steps(no_step)


@njit(cache=True, error_model="numpy")
def run_epochs(begin, join, retime, settle, close, st, arrival, red_ptr, flow_ptr, epoch_ms,
               quantum_ms, buckets, store, times, start, finish, stats, kctl):
    """CoflowSim's epoch loop (``Simulator.simulate``) for a flow-level scheduler given as
    compiled steps on its state ``st``, each taking and returning the stored segment count
    ``nseg`` and the streamed change count ``nsc`` last:

    - ``begin(st, qa, nseg, nsc)``: at the start of the epoch of quantum ``qa``;
    - ``join(st, j, qa, nseg, nsc)``: job ``j`` admitted at quantum ``qa``;
    - ``retime(st, qn, nseg, nsc)``: the rates from quantum ``qn`` (after admissions or
      completions);
    - ``settle(st, q, active_tasks, active_jobs, nseg, nsc)``: the flows queued at quantum
      ``q`` (``buckets``' ``head``), returning ``(n_fin, active_tasks, active_jobs, nseg,
      nsc)``;
    - ``close(st, qz, nsc)``: streamed, the flows still served at the end (a run cut at its
      time limit) stop at quantum ``qz``; returns ``nsc``.

    Jobs arriving in ``(T, T + epoch]`` are admitted at epoch start ``T``; inside an epoch the
    loop jumps to the next non-empty bucket, and rates are re-timed after admissions and after
    a quantum in which flows finished (an event, counted in ``stats[0]``).  The run ends when
    every job is done, at CoflowSim's day, or when ``kctl`` asks it to stop.  ``store``: the
    stored segments (:func:`coflowopt.sim.segstore.new_store`); ``times``: the streamed run's
    change buffer, breakpoint times and their counters (``sbuf_i``, ``tbp``, ``tinfo``).
    Returns the kernel's result: per job ``start``, ``finish`` (ms), the stored segments,
    ``stats``, and the streamed run's breakpoint times, buffered count and first quantum."""
    n = arrival.size
    head, hm, _, _ = buckets
    sbuf_i, tbp, tinfo = times
    cursor = 0
    nseg, nsc, cur, active_jobs, active_tasks, t_ms, stopped = 0, 0, 0, 0, 0, 0, False
    while t_ms < END_MS and (cur < n or active_tasks > 0) and not stopped:
        qa = t_ms // quantum_ms
        nseg, nsc = begin(st, qa, nseg, nsc)
        added = 0
        while True:
            j, cur, active_jobs, active_tasks = next_admitted(
                cur, arrival, t_ms, epoch_ms, flow_ptr, red_ptr, start, finish, active_jobs,
                active_tasks)
            if j < 0:
                break
            nseg, nsc = join(st, j, qa, nseg, nsc)
            added += 1
        # events inside the epoch: rates re-timed after admissions and after flows finished
        changed = added > 0
        qn, q_end = qa, (t_ms + epoch_ms) // quantum_ms
        while active_jobs > 0:
            stopped = progress_or_stop(kctl, qn * quantum_ms, 0.0, cur - active_jobs, stats[0])
            if stopped:
                break
            if changed:
                nseg, nsc = retime(st, qn, nseg, nsc)
            q = cursor = next_bucket(head, hm, cursor, q_end)
            if q >= q_end:
                break
            n_fin, active_tasks, active_jobs, nseg, nsc = settle(st, q, active_tasks,
                                                                 active_jobs, nseg, nsc)
            changed = n_fin > 0
            if changed:
                stats[0] += 1
                qn = q + 1
        t_ms += epoch_ms
    if not stopped:
        nsc = close(st, last_change(tinfo, sbuf_i, nsc), nsc)
    sf, sa, sb, sd = gathered(store, nseg)
    return (start, finish, sf, sa, sb, sd, stats,
            breakpoint_times(sbuf_i, nsc, tbp, tinfo, quantum_ms), nsc, tinfo[0])

"""The event loop's shared steps: admission epochs, the bucket queue of finishing quanta, and
the completion bookkeeping of flows, reducers and jobs (progress and stop are the skeleton's
:func:`coflowopt.sim.events.progress_or_stop`).

CoflowSim (``Simulator.simulate``, the trace-driven simulator of Varys: Chowdhury, Zhong,
Stoica, SIGCOMM 2014) admits the jobs arriving in ``(T, T + epoch]`` at epoch start
``T`` and advances time in quanta; the kernels jump from event to event instead.  These loops
keep their own admission and queues rather than :mod:`coflowopt.sim.events`': admission is by
epoch (not at each release, no Starts-After edges) and events fall on whole quanta, so a bucket
per quantum replaces the heaps.
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit
from coflowopt.sim.segstore import gather_segments

__all__ = ["END_MS", "bq_insert", "bq_remove", "flow_finished", "gathered", "new_buckets",
           "next_admitted", "next_bucket", "owners"]

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

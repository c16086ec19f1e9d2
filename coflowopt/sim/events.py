"""The event skeleton every compiled event loop shares: fixed-size heaps (plain, integer and
indexed), breakpoints, admission with Starts-After release, the stop-and-progress check, and
the recording of rate changes (stored or streamed).

The model is the fluid event-driven simulation of coflows on one non-blocking switch (the
fabric of Chowdhury, Zhong and Stoica, "Efficient Coflow Scheduling with Varys", SIGCOMM
2014): between two events every flow keeps its rate, so a loop visits event times
only.  A Starts-After edge ``c1 -> c2`` (Shafiee and Ghaderi, "Scheduling Coflows with
Dependency Graph", IEEE/ACM ToN 2021, Section III) holds ``c2`` back until every flow of ``c1``
has finished.

What a loop provides: its state arrays (allocated before the loop: no array is reallocated
inside it, since a loop-carried array that may be reallocated made numba's loops about twice as
slow), the admission inputs of :func:`admission_inputs` and the heap of :func:`admission_heap`,
a breakpoint array ``bps`` with its last index ``kk``, a control array ``kctl``
(:mod:`coflowopt.sim.kernel`), and a segment store (:mod:`coflowopt.sim.segstore`) or, when
``lean``, the streaming validator's state (:mod:`coflowopt.validate`).  Each round of its loop
then runs these steps (every step an ``inline="always"`` function: it costs nothing over the
code written out, :mod:`coflowopt._jit`):

1. stop and progress, :func:`progress_or_stop`: publish the time reached, the coflows done and
   the events so far; return at once with :data:`STOPPED` when the waiting thread asked;
2. admissions, :func:`admit_next`: pop every coflow whose admission time is ``<= t`` (the loop
   does its own bookkeeping for each; a coflow with nothing to send completes at once and
   releases its successors);
3. rates: the loop's own allocation (its policy); each rate change goes through
   :func:`record_rate` (per flow) or :func:`record_group_rate` / :func:`record_member` (per
   rate group), which hold the store-or-stream branch, and a full stream buffer
   (:func:`buffer_full`) goes to the validator (``stream_consume`` / ``group_consume``);
4. the next event: the smallest of the loop's heap tops (:func:`heap_top`), or, when there is
   none but coflows are left, return with :data:`STALLED`; :func:`next_breakpoint` moves time
   and gives the tolerance within which events are simultaneous;
5. completions at ``t`` (within the tolerance): a coflow whose last flow completed calls
   :func:`release_successors` (its Starts-After successors enter the admission heap).

After the loop, the rates still open are closed at the last breakpoint (``record_rate`` with
rate 0) and the kernel returns :data:`DONE` with its breakpoints and store.
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.sim.kernel import CTL_DONE, CTL_EVENTS, CTL_STATUS, CTL_TIME, stop_requested
from coflowopt.sim.segstore import CHUNK, put_segment
from coflowopt.validate import group_push, member_push, stream_push

__all__ = [
    "DONE",
    "STALLED",
    "STOPPED",
    "admission_heap",
    "admission_inputs",
    "admit_next",
    "buffer_full",
    "grow",
    "heap_pop",
    "heap_push",
    "heap_top",
    "iheap_pop",
    "iheap_pop_at",
    "iheap_push",
    "iheap_push_at",
    "indexed_delete",
    "indexed_pop_min_all",
    "indexed_set",
    "indexed_set_many",
    "mark_once",
    "next_breakpoint",
    "progress_or_stop",
    "record_group_rate",
    "record_member",
    "record_rate",
    "release_successors",
]

#: a loop's status: every coflow completed; active coflows but no pending event; stopped by
#: the waiting thread (:func:`progress_or_stop`)
DONE, STALLED, STOPPED = 0, -1, 2


@njit(cache=True, inline="always")
def heap_push(hk, hv, n, key, val):
    """Push ``(key, val)`` on a min-heap (ties by ``val``) with room for it."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] > key or (hk[p] == key and hv[p] > val):
            hk[i] = hk[p]
            hv[i] = hv[p]
            i = p
        else:
            break
    hk[i] = key
    hv[i] = val
    return n + 1


@njit(cache=True, inline="always")
def heap_pop(hk, hv, n):
    """Drop the top of the heap; returns the new size."""
    n -= 1
    k, v = hk[n], hv[n]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        c = a
        if a + 1 < n and (hk[a + 1] < hk[a] or (hk[a + 1] == hk[a] and hv[a + 1] < hv[a])):
            c = a + 1
        if hk[c] < k or (hk[c] == k and hv[c] < v):
            hk[i] = hk[c]
            hv[i] = hv[c]
            i = c
        else:
            break
    if n > 0:
        hk[i] = k
        hv[i] = v
    return n


@njit(cache=True, inline="always")
def iheap_push_at(h, base, n, v):
    """Push ``v`` on the min-heap of integers stored at ``h[base:base + n]`` (one of several
    heaps sharing an array: no slice view, whose reference counts are two atomic operations
    a call)."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if h[base + p] > v:
            h[base + i] = h[base + p]
            i = p
        else:
            break
    h[base + i] = v
    return n + 1


@njit(cache=True, inline="always")
def iheap_pop_at(h, base, n):
    """Drop the top of the min-heap of integers at ``h[base:base + n]``; returns the new
    size."""
    n -= 1
    v = h[base + n]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        c = a
        if a + 1 < n and h[base + a + 1] < h[base + a]:
            c = a + 1
        if h[base + c] < v:
            h[base + i] = h[base + c]
            i = c
        else:
            break
    if n > 0:
        h[base + i] = v
    return n


@njit(cache=True, inline="always")
def iheap_push(h, n, v):
    """Push ``v`` on a min-heap of integers."""
    return iheap_push_at(h, 0, n, v)


@njit(cache=True, inline="always")
def iheap_pop(h, n):
    """Drop the top of a min-heap of integers; returns the new size."""
    return iheap_pop_at(h, 0, n)


# indexed heap: items 0..N-1; ``heap[i]`` and ``hk[i]`` are the item and key in slot ``i``
# (heap order, so only the first slots are ever touched) and ``where[f]`` is item ``f``'s slot
# (-1: absent); ties by item


@njit(cache=True, inline="always")
def _xup(hk, heap, where, i):
    f = heap[i]
    k = hk[i]
    while i > 0:
        p = (i - 1) >> 1
        g = heap[p]
        if hk[p] > k or (hk[p] == k and g > f):
            heap[i] = g
            hk[i] = hk[p]
            where[g] = i
            i = p
        else:
            break
    heap[i] = f
    hk[i] = k
    where[f] = i


@njit(cache=True, inline="always")
def _xdown(hk, heap, where, n, i):
    f = heap[i]
    k = hk[i]
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        c = a
        if a + 1 < n and (hk[a + 1] < hk[a] or (hk[a + 1] == hk[a] and heap[a + 1] < heap[a])):
            c = a + 1
        g = heap[c]
        if hk[c] < k or (hk[c] == k and g < f):
            heap[i] = g
            hk[i] = hk[c]
            where[g] = i
            i = c
        else:
            break
    heap[i] = f
    hk[i] = k
    where[f] = i


@njit(cache=True, inline="always")
def indexed_set(hk, heap, where, n, f, k):
    """Insert item ``f`` with key ``k``, or move it to key ``k``; returns the new size."""
    i = where[f]
    if i < 0:
        heap[n] = f
        hk[n] = k
        where[f] = n
        _xup(hk, heap, where, n)
        return n + 1
    old = hk[i]
    hk[i] = k
    if k < old:
        _xup(hk, heap, where, i)
    elif k > old:
        _xdown(hk, heap, where, n, i)
    return n


@njit(cache=True, inline="always")
def indexed_delete(hk, heap, where, n, f):
    """Remove item ``f`` if present; returns the new size."""
    i = where[f]
    if i < 0:
        return n
    where[f] = -1
    n -= 1
    if i < n:
        g = heap[n]
        heap[i] = g
        hk[i] = hk[n]
        where[g] = i
        _xup(hk, heap, where, i)
        _xdown(hk, heap, where, n, where[g])
    return n


@njit(cache=True, inline="always")
def _heapify(hk, heap, where, n):
    """Rebuild the indexed heap ``[:n]`` bottom up (``O(n)``)."""
    for i in range(n // 2 - 1, -1, -1):
        _xdown(hk, heap, where, n, i)


@njit(cache=True)
def indexed_set_many(hk, heap, where, n, items, keys, cnt):
    """Give items ``items[:cnt]`` the keys ``keys[:cnt]`` (inserting the absent ones); returns
    the new size.  One :func:`indexed_set` each when they are few (``4 cnt < n``), else all
    written in place and the heap rebuilt bottom up (``O(n)``, cheaper than ``cnt log n``
    once a good part of the heap changes)."""
    if 4 * cnt < n:
        for q in range(cnt):
            n = indexed_set(hk, heap, where, n, items[q], keys[q])
        return n
    for q in range(cnt):
        f = items[q]
        i = where[f]
        if i < 0:
            heap[n] = f
            hk[n] = keys[q]
            where[f] = n
            n += 1
        else:
            hk[i] = keys[q]
    _heapify(hk, heap, where, n)
    return n


@njit(cache=True)
def indexed_pop_min_all(hk, heap, where, n, out, place):
    """Remove every item whose key is the smallest into ``out`` (``place``: scratch of the
    heap's size); returns ``(n, count)``.  Those items are the root's subtree of that key
    (``O(count)`` to find); popped one at a time when few (``4 count < n``), else the rest
    is compacted and rebuilt bottom up (``O(n)``)."""
    if n == 0:
        return n, 0
    kmin = hk[0]
    place[0] = 0
    c = 1
    q = 0
    while q < c:
        i = place[q]
        q += 1
        for a in range(2 * i + 1, min(2 * i + 3, n)):
            if hk[a] == kmin:
                place[c] = a
                c += 1
    if 4 * c < n:
        for j in range(c):
            out[j] = heap[0]
            n = indexed_delete(hk, heap, where, n, heap[0])
        return n, c
    for j in range(c):
        out[j] = heap[place[j]]
        where[out[j]] = -1
    w = 0
    for i in range(n):
        f = heap[i]
        if where[f] >= 0:
            heap[w] = f
            hk[w] = hk[i]
            where[f] = w
            w += 1
    _heapify(hk, heap, where, w)
    return w, c


@njit(cache=True, inline="always")
def mark_once(i, marked, lst, n):
    """Append item ``i`` to ``lst[:n]`` unless ``marked[i]`` (then mark it): a list of what
    changed since the last reset, each item once; returns the list's size."""
    if not marked[i]:
        marked[i] = True
        lst[n] = i
        n += 1
    return n


@njit(cache=True, inline="always")
def grow(a, n):
    """``a``, or a copy of twice its size when index ``n`` does not fit (any dtype)."""
    if n < a.size:
        return a
    b = np.empty(max(2 * a.size, 16), dtype=a.dtype)
    b[: a.size] = a
    return b


@njit(cache=True, inline="always")
def next_breakpoint(bps, kk, t, tn):
    """Move to the next event time ``tn`` (a new breakpoint when it is later than ``t``);
    returns ``(bps, kk, t, tol)``.  Events within ``tol`` of ``t`` (a few dozen ulps) happen
    at ``t``: enough for rounding, small enough that a flow declared done early misses only
    ~1e-14 t x rate of its volume."""
    if tn > t:
        kk += 1
        bps = grow(bps, kk)
        bps[kk] = tn
        t = tn
    return bps, kk, t, 1e-14 * max(1.0, abs(t))


def admission_inputs(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                 np.ndarray, float]:
    """What a compiled event loop needs to admit coflows: ``(n_pred, succ_ptr, succ, release,
    t0)``, predecessor counts and the successor lists (int64), releases (float64) and the
    start time ``min(0, min release)``."""
    C = instance.n_coflows
    ptr_p, _ = instance.predecessors_ptr
    n_pred = np.diff(ptr_p).astype(np.int64)
    succ_ptr, succ = (np.array(a, dtype=np.int64) for a in instance.successors_ptr)
    rel = np.array(instance.release, dtype=np.float64)
    t0 = min(0.0, float(rel.min())) if C else 0.0
    return n_pred, succ_ptr, succ, rel, t0


@njit(cache=True)
def admission_heap(n_pred, release):
    """The admission heap ``(keys, coflows, size)`` with room for every coflow, holding those
    without predecessors at their release times."""
    C = release.size
    ak = np.empty(max(C, 1))
    av = np.empty(max(C, 1), dtype=np.int64)
    na = 0
    for c in range(C):
        if n_pred[c] == 0:
            na = heap_push(ak, av, na, release[c], c)
    return ak, av, na


@njit(cache=True, inline="always")
def release_successors(c, t, succ_ptr, succ, n_pred, release, ak, av, na):
    """Coflow ``c`` completed at ``t``: a successor whose last predecessor it was becomes
    admissible at ``max(release, t)`` (pushed on the admission heap ``ak, av`` of size ``na``)."""
    for j in range(succ_ptr[c], succ_ptr[c + 1]):
        s = succ[j]
        n_pred[s] -= 1
        if n_pred[s] == 0:
            na = heap_push(ak, av, na, max(release[s], t), s)
    return na


# -- the loop's steps ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def progress_or_stop(kctl, t, t0, n_done, n_events):
    """Step 1, once an event: publish the progress (time reached since ``t0``, coflows done,
    events) in the control array ``kctl``; whether the waiting thread set its stop flag (then
    ``CTL_STATUS`` is 1 and the loop returns :data:`STOPPED`)."""
    kctl[CTL_TIME] = t - t0
    kctl[CTL_DONE] = n_done
    kctl[CTL_EVENTS] = n_events
    if stop_requested(kctl):
        kctl[CTL_STATUS] = 1.0
        return True
    return False


@njit(cache=True, inline="always")
def admit_next(ak, av, na, t):
    """Step 2: the next coflow whose admission time is ``<= t``, popped from the admission heap
    ``ak, av`` of size ``na``: ``(c, na)``, ``c = -1`` when none is due."""
    if na > 0 and ak[0] <= t:
        c = av[0]
        return c, heap_pop(ak, av, na)
    return -1, na


@njit(cache=True, inline="always")
def heap_top(hk, n):
    """Step 4: the smallest key of a heap of size ``n`` (``inf`` when it is empty)."""
    if n > 0:
        return hk[0]
    return np.inf


@njit(cache=True, inline="always")
def record_rate(lean, buf_i, buf_d, chunks_i, chunks_d, ns, f, first, kk, old, new):
    """Step 3: flow ``f``'s rate changes from ``old`` (held since breakpoint ``first``) to
    ``new`` at breakpoint ``kk``.  Stored: the segment ``(f, first, kk; old)`` goes to the
    segment store; ``lean``: the change goes to the streaming validator's buffer, which the
    caller hands to :func:`coflowopt.validate.stream_consume` once :func:`buffer_full`.
    Returns the new count ``ns``.

    The validator's state and the breakpoints are not arguments: inlined inside a step of a
    loop (two levels down), an argument is copied at every call, with reference counts on each
    of its arrays (FB2010 fair, the validator's state passed so: 31 s against 4.3 s).  For the
    same reason a hot loop calls this at its own level, not from inside an inlined step."""
    if lean:
        return stream_push(buf_i, buf_d, ns, f, kk, new)
    return put_segment(buf_i, buf_d, chunks_i, chunks_d, ns, f, first, kk, old)


@njit(cache=True, inline="always")
def record_group_rate(lean, buf_i, buf_d, chunks_i, chunks_d, ns, g, first, kk, old, new):
    """:func:`record_rate` for a rate group ``g`` (flows sharing one rate): stored, the group's
    segment; ``lean``, one change for its members (handed over with
    :func:`coflowopt.validate.group_consume` once :func:`buffer_full`)."""
    if lean:
        return group_push(buf_i, buf_d, ns, g, kk, new)
    return put_segment(buf_i, buf_d, chunks_i, chunks_d, ns, g, first, kk, old)


@njit(cache=True, inline="always")
def record_member(lean, buf_i, buf_d, ns, f, kk, g):
    """``lean``: flow ``f`` joins rate group ``g`` at breakpoint ``kk`` (or leaves its group,
    ``g = -1``), streamed.  Stored, nothing: a loop keeps membership itself (the flow's
    admission and completion breakpoints) and cuts the flow's segments from its group's at the
    end."""
    if lean:
        return member_push(buf_i, buf_d, ns, f, kk, g)
    return ns


@njit(cache=True, inline="always")
def buffer_full(lean, ns):
    """Whether the streaming validator's buffer is full (after :func:`record_rate`,
    :func:`record_group_rate` or :func:`record_member`): the caller then hands it over."""
    return lean and ns == CHUNK

"""The event skeleton every compiled event loop shares: fixed-size heaps (plain, integer and
indexed), breakpoints, and admission with Starts-After release.

An event loop keeps its pending events on heaps of fixed size (no array is reallocated inside
the loop), moves time forward with :func:`next_breakpoint` (which records the breakpoint and the
tolerance within which later events count as simultaneous), and admits coflows from the
admission heap built by :func:`admission_heap`: a coflow enters at its release once its last
Starts-After predecessor has completed (:func:`release_successors`).
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance

__all__ = [
    "admission_heap",
    "admission_inputs",
    "grow",
    "heap_pop",
    "heap_push",
    "iheap_pop",
    "iheap_push",
    "indexed_delete",
    "indexed_set",
    "next_breakpoint",
    "release_successors",
]

# -- heaps of fixed size (no array is reallocated inside the event loop) ------------------------


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
def iheap_push(h, n, v):
    """Push ``v`` on a min-heap of integers."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if h[p] > v:
            h[i] = h[p]
            i = p
        else:
            break
    h[i] = v
    return n + 1


@njit(cache=True, inline="always")
def iheap_pop(h, n):
    """Drop the top of a min-heap of integers; returns the new size."""
    n -= 1
    v = h[n]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        c = a
        if a + 1 < n and h[a + 1] < h[a]:
            c = a + 1
        if h[c] < v:
            h[i] = h[c]
            i = c
        else:
            break
    if n > 0:
        h[i] = v
    return n


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

"""A binary min-heap on ``(key, value)`` pairs for compiled event loops: the one used by the
decision-epoch stepper, the Utopia emulation and Approximate's list scheduling.

The heap lives in two caller-owned arrays ``hk`` (keys) and ``hv`` (values) of capacity at least
the largest size; ``n`` is its size, passed in and returned.  Pairs compare by key, then value,
so the pop order is deterministic.
"""

from __future__ import annotations

from numba import njit

__all__ = ["heap_pop", "heap_push"]


@njit(cache=True)
def heap_push(hk, hv, n, key, val):
    """Insert ``(key, val)`` into the heap of size ``n``; returns ``n + 1``."""
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


@njit(cache=True)
def heap_pop(hk, hv, n):
    """Remove the smallest pair (read it at ``hk[0], hv[0]`` first); returns ``n - 1``."""
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

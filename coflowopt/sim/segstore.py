"""One segment store for the compiled simulators (:mod:`coflowopt.sim.fast` and
:mod:`coflowopt.sim.coflowsim`).

A kernel records segments ``(flow, first, last, value)`` (int32 indices: 20 bytes a
segment) into fixed buffers of ``CHUNK`` entries and flushes each full buffer to a typed
list, so no array is reallocated inside an event loop (a loop-carried array that may be
reallocated made numba's loops about twice as slow) and nothing is copied on growth.
:func:`gather_segments` joins them once at the end, into int64 columns.  A kernel hands its
store back as a :class:`SegmentStore` (buffers, chunk lists and count, by name).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba.typed import List

from coflowopt._jit import njit

__all__ = ["CHUNK", "SegmentStore", "gather_segments", "new_store", "put_segment",
           "release_free_memory", "set_segment_end"]

#: entries per buffer (and per chunk); also the streaming validator's buffer length
CHUNK = 1 << 16


class SegmentStore(NamedTuple):
    """A kernel's recorded segments as it returns them (:func:`gather_segments` takes them in
    this order: ``gather_segments(*store)``)."""

    buf_i: np.ndarray  #: int32 ``[3, CHUNK]``: the open buffer's flow, first and last step
    buf_d: np.ndarray  #: float64 ``[CHUNK]``: its values
    chunks_i: Any      #: typed list of the full buffers' ``buf_i`` (first entry: placeholder)
    chunks_d: Any      #: typed list of the full buffers' ``buf_d``
    n: int             #: segments recorded in all (streamed: changes in the open buffer)


@njit(cache=True, inline="always")
def put_segment(buf_i, buf_d, chunks_i, chunks_d, nseg, f, a, b, d):
    """Record a segment (flow ``f`` at value ``d`` from step ``a`` to step ``b``, exclusive:
    quanta or breakpoint indices) in the fixed buffers, flushing a full buffer to the chunk
    lists; empty segments (``b <= a`` or ``d == 0``) are not recorded.  ``nseg`` counts all
    segments."""
    if b > a and d != 0.0:
        k = nseg % CHUNK
        buf_i[0, k] = f
        buf_i[1, k] = a
        buf_i[2, k] = b
        buf_d[k] = d
        nseg += 1
        if k == CHUNK - 1:
            chunks_i.append(buf_i.copy())
            chunks_d.append(buf_d.copy())
    return nseg


@njit(cache=True, inline="always")
def set_segment_end(buf_i, chunks_i, nseg, i, b):
    """Move the end of recorded segment ``i`` to step ``b``, in its chunk or the buffer."""
    k = i % CHUNK
    if i < (nseg // CHUNK) * CHUNK:  # already flushed
        chunks_i[i // CHUNK + 1][2, k] = b
    else:
        buf_i[2, k] = b


@njit(cache=True)
def new_store():
    """Empty buffers and chunk lists (the lists' first entry is an empty placeholder that
    fixes their type)."""
    chunks_i = List()
    chunks_d = List()
    chunks_i.append(np.empty((3, 0), dtype=np.int32))
    chunks_d.append(np.empty(0))
    return np.empty((3, CHUNK), dtype=np.int32), np.empty(CHUNK), chunks_i, chunks_d


@njit(cache=True)
def gather_segments(buf_i, buf_d, chunks_i, chunks_d, nseg):
    """The segments recorded by :func:`put_segment`, in order.  The chunks are dropped from the
    lists as they are copied (last first), so the peak holds little more than one copy."""
    out_i = np.empty((3, nseg), dtype=np.int64)
    out_d = np.empty(nseg)
    full = (len(chunks_i) - 1) * CHUNK
    rest = nseg - full
    for k in range(rest):
        for r in range(3):
            out_i[r, full + k] = buf_i[r, k]
        out_d[full + k] = buf_d[k]
    for c in range(len(chunks_i) - 1, 0, -1):
        pos = (c - 1) * CHUNK
        ci = chunks_i[c]
        cd = chunks_d[c]
        for k in range(CHUNK):
            for r in range(3):
                out_i[r, pos + k] = ci[r, k]
            out_d[pos + k] = cd[k]
        chunks_i.pop()
        chunks_d.pop()
    return out_i, out_d


def release_free_memory() -> None:
    """Hand freed heap pages back to the operating system (glibc's ``malloc_trim``; a no-op
    elsewhere).  Large numpy and numba arrays freed after an event loop otherwise stay in the
    process's resident memory while the segments are joined into the schedule."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass

"""The order of the ready coflows, written once for the compiled loops that re-rank them.

One tie rule for every engine that serves ready coflows by a key, smaller first: the key, then
the admission time, then the position (coflow index).  It is the rule of
:class:`coflowopt.sim.drive.StaticOrderPolicy` and of Sincronia's online re-ordering (Agarwal,
Rajakrishnan, Narayan, Agarwal, Shmoys, Vahdat, SIGCOMM 2018, Sec. 4: the order among the
coflows present is recomputed at each arrival and departure); used by the compiled engine
(:mod:`coflowopt.sim.fast`) and the decision-epoch stepper (:mod:`coflowopt.sim.stepper`).
Two stable sorts (admission, then key) give that order in ``O(n log n)``; the ready set of
FB2010 holds hundreds of coflows at its peaks, so an insertion sort does not serve both.
"""

from __future__ import annotations

import numpy as np

from coflowopt._jit import njit

__all__ = ["by_admission", "by_key"]


@njit(cache=True, inline="always")
def by_admission(active, admitted):
    """The coflows ``c`` with ``active[c]``, by ``admitted[c]`` (ties: position)."""
    nc = 0
    for c in range(active.size):
        if active[c]:
            nc += 1
    act = np.empty(nc, dtype=np.int64)
    j = 0
    for c in range(active.size):
        if active[c]:
            act[j] = c
            j += 1
    # stable: equal admission times keep the coflows' positions
    return act[np.argsort(admitted[act], kind="mergesort")]


@njit(cache=True, inline="always")
def by_key(act, kv):
    """``act`` (in admission order, as :func:`by_admission` gives it) by ``kv`` (one key per
    entry of ``act``, smaller first); stable, so ties keep admission order, then position."""
    return act[np.argsort(kv, kind="mergesort")]

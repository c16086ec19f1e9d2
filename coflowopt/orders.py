"""The shared order machinery: port loads, BSSI (Sincronia), SEBF's effective bottleneck
(Varys) and the static keys (FIFO, SCF, NCF, LCF).

An order is an array of coflow positions, highest priority first.  This module is the one
home of these computations: the simulator's kernels, the schedulers and the LP layer
(:mod:`coflowopt.lp.ordering`) all import them from here.  Orders become rates only through
:mod:`coflowopt.sim.allocate` (see :func:`coflowopt.sim.order_schedule`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

if TYPE_CHECKING:
    import scipy.sparse as sp

from coflowopt.model import Instance

__all__ = [
    "STATIC_KEYS",
    "bssi",
    "bssi_trace",
    "coflow_port_loads",
    "job_port_loads",
    "port_loads",
    "sebf_gamma",
    "static_key",
]


@njit(cache=True)
def _port_loads(coflows, ptr, order, src, dst, remaining, m):
    out = np.zeros((coflows.shape[0], 2 * m))
    for k in range(coflows.shape[0]):
        c = coflows[k]
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            v = remaining[f]
            if v > 0.0:
                out[k, src[f]] += v
                out[k, m + dst[f]] += v
    return out


def port_loads(inst: Instance, coflows: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    """Dense ``(len(coflows), 2m)`` loads ``p[j][l]`` of the remaining volumes: ingress ports
    ``0..m-1`` then egress ports ``m..2m-1``."""
    return _port_loads(np.ascontiguousarray(coflows, dtype=np.int64),
                       np.asarray(inst.coflow_flows_ptr, dtype=np.int64),
                       np.asarray(inst.coflow_flow_order, dtype=np.int64),
                       inst.flow_src.astype(np.int64), inst.flow_dst.astype(np.int64),
                       np.ascontiguousarray(remaining, dtype=np.float64), inst.ports)


@njit(cache=True)
def _bssi_trace(p, w):
    """BSSI filling positions from the last; returns ``(sigma, b, beta)`` with the bottleneck
    port ``b_k`` and the dual ``beta_k = w'_f / p[f, b_k]`` of each position (``b = -1`` where
    what was left carried no load and went first in index order)."""
    n, P = p.shape
    load = np.zeros(P)
    for j in range(n):
        for q in range(P):
            load[q] += p[j, q]
    alive = np.ones(n, dtype=np.bool_)
    wp = w.copy()
    sigma = np.empty(n, dtype=np.int64)
    bots = np.full(n, -1, dtype=np.int64)
    betas = np.zeros(n)
    for k in range(n - 1, -1, -1):
        b = 0
        for q in range(1, P):
            if load[q] > load[b]:
                b = q
        best = -1
        bestv = np.inf
        for j in range(n):
            if alive[j] and p[j, b] > 0.0:
                v = wp[j] / p[j, b]
                if v < bestv:
                    bestv = v
                    best = j
        if best < 0:
            # what is left has no load at all: any order; take the last index
            for j in range(n - 1, -1, -1):
                if alive[j]:
                    best = j
                    break
            sigma[k] = best
            alive[best] = False
            continue
        sigma[k] = best
        bots[k] = b
        pb = p[best, b]
        betas[k] = max(wp[best] / pb, 0.0)
        for j in range(n):
            if alive[j] and j != best and p[j, b] > 0.0:
                wp[j] -= wp[best] * p[j, b] / pb
        alive[best] = False
        for q in range(P):
            load[q] -= p[best, q]
    return sigma, bots, betas


@njit(cache=True)
def _bssi(p, w):
    return _bssi_trace(p, w)[0]


def bssi(loads: np.ndarray, weights: np.ndarray, capacity: np.ndarray | None = None
         ) -> np.ndarray:
    """Sincronia's BSSI order (Bottleneck, Select, Scale, Iterate; spec section 5.1).

    ``loads``: ``(N, P)`` port loads ``p[j][l]``; ``weights``: ``w_j``; ``capacity``: optional
    ``(P,)`` port rates (loads are divided by them, so times are compared).  Returns positions
    ``0..N-1``, highest priority first.  Ties: first index in both the argmax and the argmin.
    """
    p = np.ascontiguousarray(loads, dtype=np.float64)
    if capacity is not None:
        p = p / np.asarray(capacity, dtype=np.float64)[None, :]
    return _bssi(p, np.ascontiguousarray(weights, dtype=np.float64))


def bssi_trace(loads: np.ndarray, weights: np.ndarray, capacity: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`bssi` with its certificate: ``(sigma, b, beta)``, where position ``k`` of the
    order was filled at a step whose bottleneck port was ``b[k]`` and dual ``beta[k]``
    (``b[k] = -1``: no load left, ``beta[k] = 0``).  :func:`coflowopt.lp.bssi_order` builds
    the dual objective from them."""
    p = np.ascontiguousarray(loads, dtype=np.float64)
    if capacity is not None:
        p = p / np.asarray(capacity, dtype=np.float64)[None, :]
    return _bssi_trace(p, np.ascontiguousarray(weights, dtype=np.float64))


def _normalized(inst: Instance, loads: tuple[sp.csr_matrix, sp.csr_matrix]) -> np.ndarray:
    li, lo = loads
    return np.hstack([li.toarray() / inst.fabric.capacity_in[None, :],
                      lo.toarray() / inst.fabric.capacity_out[None, :]])


def coflow_port_loads(instance: Instance) -> np.ndarray:
    """``p[j, l]``: coflow ``j``'s full load on port ``l`` in time units (divided by the port's
    capacity), shape ``(N, 2m)``: ingress ports then egress ports."""
    return _normalized(instance, instance.port_loads)


def job_port_loads(instance: Instance) -> np.ndarray:
    """``d[j, i] = load_i(A^j) / B_i``: job ``j``'s aggregate load on port ``i``, ``(n, 2m)``."""
    return _normalized(instance, instance.job_port_loads)


def sebf_gamma(loads: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Effective bottleneck ``Gamma_j = max_l p[j][l] / B_l`` with all capacity free."""
    if loads.shape[0] == 0:
        return np.zeros(0)
    return (loads / capacity[None, :]).max(axis=1)


# The static orders by the names of Varys' paper and CoflowSim (one name, one order in both
# semantics): shortest = smallest longest flow, narrowest = fewest flows (CoflowSim's NCF counts
# min(senders, receivers) instead, the one place the two measures differ), lightest = smallest
# total bytes; FIFO = arrival.
STATIC_KEYS: dict[str, str] = {"fifo": "arrival", "scf": "length", "ncf": "width",
                               "lcf": "size"}


def static_key(inst: Instance, name: str) -> np.ndarray:
    """Per-coflow keys fixed by the coflow's definition: ``size`` (total volume), ``width``
    (number of flows), ``length`` (largest flow), ``gamma`` (isolation time ``C_j^0``),
    ``arrival`` (release)."""
    keys = {
        "size": inst.coflow_size,
        "width": inst.coflow_width.astype(np.float64),
        "length": inst.coflow_length,
        "gamma": inst.isolation_time,
        "arrival": inst.release,
    }
    if name not in keys:
        raise ValueError(f"unknown order key {name!r}; known: {', '.join(keys)}")
    return np.asarray(keys[name], dtype=np.float64)

"""Coflow orders: BSSI (Sincronia), SEBF (Varys) and the simple static keys.

An order is an array of coflow positions, highest priority first.  Orders become rates only
through :mod:`coflowopt.sim.allocate`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coflowopt.model import Instance

__all__ = ["bssi", "port_loads", "sebf_gamma", "static_key"]


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
def _bssi(p, w):
    n, P = p.shape
    load = np.zeros(P)
    for j in range(n):
        for q in range(P):
            load[q] += p[j, q]
    alive = np.ones(n, dtype=np.bool_)
    wp = w.copy()
    sigma = np.empty(n, dtype=np.int64)
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
        pb = p[best, b]
        for j in range(n):
            if alive[j] and j != best and p[j, b] > 0.0:
                wp[j] -= wp[best] * p[j, b] / pb
        alive[best] = False
        for q in range(P):
            load[q] -= p[best, q]
    return sigma


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


def sebf_gamma(loads: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Effective bottleneck ``Gamma_j = max_l p[j][l] / B_l`` with all capacity free."""
    if loads.shape[0] == 0:
        return np.zeros(0)
    return (loads / capacity[None, :]).max(axis=1)


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

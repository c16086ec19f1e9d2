"""The shared order machinery: port loads, BSSI (Sincronia), SEBF's effective bottleneck
(Varys), the static keys (FIFO, SCF, NCF, LCF), and CoFair's compiled core (its sigma-order
and the online step with MPS's backward fallback; the algorithm is documented in
:mod:`coflowopt.schedulers.fair.cofair`).

An order is an array of coflow positions, highest priority first.  This module is the one
home of these computations: the simulator's kernels, the schedulers and the LP layer
(:mod:`coflowopt.lp.ordering`) all import them from here.  Orders become rates only through
:mod:`coflowopt.sim.allocate` (see :func:`coflowopt.sim.order_schedule`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from coflowopt._jit import njit

if TYPE_CHECKING:
    import scipy.sparse as sp

from coflowopt.model import Instance

__all__ = [
    "STATIC_KEYS",
    "bssi",
    "bssi_sparse_order",
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
    ``0..m-1`` then egress ports ``m..2m-1``.  Costs the flows of ``coflows`` (the port
    columns are read in place: a widening copy of them cost every flow of the instance at each
    call, DeepWeave's features at every event)."""
    return _port_loads(np.ascontiguousarray(coflows, dtype=np.int64),
                       np.asarray(inst.coflow_flows_ptr, dtype=np.int64),
                       np.asarray(inst.coflow_flow_order, dtype=np.int64),
                       inst.flow_src, inst.flow_dst,
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
def bssi_order(p, w):
    return _bssi_trace(p, w)[0]


@njit(cache=True, inline="always")
def _better(load, a, b):
    """Of two port columns (-1: none), the one :func:`_bssi_trace`'s scan would pick: the
    larger load, the lower column on a tie (``a < b``)."""
    if a < 0:
        return b
    if b < 0 or load[a] >= load[b]:
        return a
    return b


@njit(cache=True)
def bssi_sparse_order(rptr, rcol, rval, ncol, w):
    """The BSSI order of :func:`bssi_order` (same ``sigma``, bit for bit) on sparse loads:
    row ``j``'s nonzero port loads ``rval[rptr[j]:rptr[j + 1]]`` in columns ``rcol`` (``ncol``
    columns), weights ``w``.  The bottleneck comes from a max tree over the port loads
    (renewed level by level above the selected coflow's ports, up to where a node's winner and
    its load are unchanged) and the select and scale steps read the
    bottleneck's column, so a step costs the ports and coflows it touches, not the whole
    ``N x P`` matrix (online Sincronia at ten times FB2010: a few hundred coflows over 3,000
    ports at each of 10,000 re-rankings)."""
    n = rptr.size - 1
    # columns: the rows with an entry there, in row order (the scan order of the dense form)
    cptr = np.zeros(ncol + 1, dtype=np.int64)
    for e in range(rptr[n]):
        cptr[rcol[e] + 1] += 1
    for q in range(ncol):
        cptr[q + 1] += cptr[q]
    fill = cptr[:-1].copy()
    crow = np.empty(rptr[n], dtype=np.int64)
    cval = np.empty(rptr[n])
    load = np.zeros(max(ncol, 1))
    for j in range(n):
        for e in range(rptr[j], rptr[j + 1]):
            q = rcol[e]
            crow[fill[q]] = j
            cval[fill[q]] = rval[e]
            fill[q] += 1
            load[q] += rval[e]  # per column in row order, as the dense sum
    size = 1
    while size < max(ncol, 1):
        size *= 2
    tree = np.full(2 * size, -1, dtype=np.int64)
    for q in range(ncol):
        tree[size + q] = q
    for x in range(size - 1, 0, -1):
        tree[x] = _better(load, tree[2 * x], tree[2 * x + 1])
    mark = np.full(size, -1, dtype=np.int64)  # the step that last queued an inner node
    cmark = np.full(max(ncol, 1), -1, dtype=np.int64)  # the step that last lowered a column
    up = np.empty(size, dtype=np.int64)
    up2 = np.empty(size, dtype=np.int64)
    alive = np.ones(n, dtype=np.bool_)
    wp = w.copy()
    sigma = np.empty(n, dtype=np.int64)
    for k in range(n - 1, -1, -1):
        b = tree[1]  # -1 only without columns: then no row has a load
        best = -1
        bestv = np.inf
        pb = 0.0
        for e in range(cptr[max(b, 0)], cptr[max(b, 0) + 1] if b >= 0 else 0):
            j = crow[e]
            if alive[j] and cval[e] > 0.0:
                v = wp[j] / cval[e]
                if v < bestv:
                    bestv = v
                    best = j
                    pb = cval[e]
        if best < 0:
            for j in range(n - 1, -1, -1):
                if alive[j]:
                    best = j
                    break
            sigma[k] = best
            alive[best] = False
            continue
        sigma[k] = best
        for e in range(cptr[b], cptr[b + 1]):
            j = crow[e]
            if alive[j] and j != best and cval[e] > 0.0:
                wp[j] -= wp[best] * cval[e] / pb
        alive[best] = False
        # the tree renewed level by level, each node once after its children (a node is the
        # same function of the loads in any update order, so this is the per-leaf walk's
        # tree): a wide coflow's ports share their upper ancestors.  A node whose winner and
        # the winner's load are unchanged changes nothing above it, so its parent is renewed
        # only if another child asks
        nu = 0
        for e in range(rptr[best], rptr[best + 1]):
            q = rcol[e]
            load[q] -= rval[e]
            cmark[q] = k
            x = (size + q) >> 1
            if x >= 1 and mark[x] != k:
                mark[x] = k
                up[nu] = x
                nu += 1
        while nu > 0:
            nn = 0
            for i in range(nu):
                x = up[i]
                old = tree[x]
                win = _better(load, tree[2 * x], tree[2 * x + 1])
                tree[x] = win
                if win == old and (win < 0 or cmark[win] != k):
                    continue
                x >>= 1
                if x >= 1 and mark[x] != k:
                    mark[x] = k
                    up2[nn] = x
                    nn += 1
            up, up2 = up2, up
            nu = nn
    return sigma


def bssi(loads: np.ndarray, weights: np.ndarray, capacity: np.ndarray | None = None
         ) -> np.ndarray:
    """Sincronia's BSSI order (Bottleneck, Select, Scale, Iterate; Agarwal et al.,
    SIGCOMM 2018, as its authors' public simulator computes it).

    ``loads``: ``(N, P)`` port loads ``p[j][l]``; ``weights``: ``w_j``; ``capacity``: optional
    ``(P,)`` port rates (loads are divided by them, so times are compared).  Returns positions
    ``0..N-1``, highest priority first.  Ties: first index in both the argmax and the argmin.
    """
    p = np.ascontiguousarray(loads, dtype=np.float64)
    if capacity is not None:
        p = p / np.asarray(capacity, dtype=np.float64)[None, :]
    return bssi_order(p, np.ascontiguousarray(weights, dtype=np.float64))


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


# -- CoFair (TPDS 2022, Alg. 2; listing reconstructed [C], see coflowopt.schedulers.fair.cofair) --
# One implementation for the offline order, the reference engine's online re-ranking and the
# compiled engine (coflowopt.schedulers.fair.cofair.cofair_rank), so the three cannot drift apart.


@njit(cache=True)
def cofair_loads(ptr, order, src, dst, volume, m, cap):
    """Per-coflow port loads in time units, coflow-major CSR (ports ascending inside a
    coflow): each coflow's flows summed in the order of ``order[ptr[c]:ptr[c + 1]]`` (zero
    volumes skipped), then divided by the port's capacity ``cap`` (``2m``: ingress, egress)."""
    n = ptr.size - 1
    acc = np.zeros(2 * m)
    mark = np.full(2 * m, -1, dtype=np.int64)
    used = np.empty(2 * m, dtype=np.int64)
    cptr = np.zeros(n + 1, dtype=np.int64)
    cap_n = 2 * (ptr[n] - ptr[0]) + 1
    cport = np.empty(cap_n, dtype=np.int64)
    cval = np.empty(cap_n)
    nnz = 0
    for c in range(n):
        nu = 0
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            v = volume[f]
            if v > 0.0:
                q = np.int64(src[f])
                if mark[q] != c:
                    mark[q] = c
                    acc[q] = 0.0
                    used[nu] = q
                    nu += 1
                acc[q] += v
                q = m + np.int64(dst[f])
                if mark[q] != c:
                    mark[q] = c
                    acc[q] = 0.0
                    used[nu] = q
                    nu += 1
                acc[q] += v
        us = np.sort(used[:nu])
        for a in range(nu):
            q = us[a]
            cport[nnz] = q
            cval[nnz] = acc[q] / cap[q]
            nnz += 1
        cptr[c + 1] = nnz
    return cptr, cport[:nnz], cval[:nnz]


@njit(cache=True)
def cofair_port_major(cptr, cport, cval, P):
    """The same loads port-major (coflows ascending inside a port)."""
    n = cptr.size - 1
    cnt = np.zeros(P + 1, dtype=np.int64)
    for a in range(cport.size):
        cnt[cport[a] + 1] += 1
    pptr = np.cumsum(cnt)
    fill = pptr[:-1].copy()
    pcof = np.empty(cport.size, dtype=np.int64)
    pval = np.empty(cport.size)
    for c in range(n):
        for a in range(cptr[c], cptr[c + 1]):
            q = cport[a]
            pcof[fill[q]] = c
            pval[fill[q]] = cval[a]
            fill[q] += 1
    return pptr, pcof, pval


@njit(cache=True)
def cofair_trace_kernel(cptr, cport, cval, pptr, pcof, pval, w, D, pivot_port, rtol):
    """CoFair's Alg. 2 as reconstructed.  Returns ``(sigma, pivots, betas, fail)``:
    ``pivots[k]`` the pivot port of position ``k`` (-1: no load left), ``betas[k]`` its dual
    ``alpha_sigma(k) / p[mu][sigma(k)]``; ``fail`` = -1, or the pivot port at which no
    feasible tail existed (then the positions from the failing one down are -1)."""
    n = cptr.size - 1
    P = pptr.size - 1
    load = np.zeros(P)
    for c in range(n):  # in coflow order, as BSSI sums them
        for a in range(cptr[c], cptr[c + 1]):
            load[cport[a]] += cval[a]
    top = 0.0
    for q in range(P):
        top = max(top, load[q])
    tol = rtol * top
    alive = np.ones(n, dtype=np.bool_)
    alpha = w.copy()
    sigma = np.full(n, -1, dtype=np.int64)
    pivots = np.full(n, -1, dtype=np.int64)
    betas = np.zeros(n)
    for k in range(n - 1, -1, -1):
        mu = 0
        for q in range(1, P):
            if load[q] > load[mu]:
                mu = q
        if P == 0 or not load[mu] > 0.0:
            # nothing left carries load: any order meets every deadline; BSSI's choice
            for j in range(n - 1, -1, -1):
                if alive[j]:
                    sigma[k] = j
                    alive[j] = False
                    break
            continue
        T = load[mu]
        best = -1
        bestv = np.inf
        for a in range(pptr[mu], pptr[mu + 1]):
            j = pcof[a]
            if alive[j] and pval[a] > 0.0 and D[j] >= T - tol:
                v = alpha[j] / pval[a]
                if v < bestv:
                    bestv = v
                    best = j
        if best < 0:
            return sigma, pivots, betas, mu
        pb = 0.0
        for a in range(pptr[mu], pptr[mu + 1]):
            if pcof[a] == best:
                pb = pval[a]
                break
        ab = alpha[best]
        sigma[k] = best
        pivots[k] = mu
        betas[k] = max(ab / pb, 0.0)
        for a in range(pptr[mu], pptr[mu + 1]):
            j = pcof[a]
            if alive[j] and j != best and pval[a] > 0.0 and (pivot_port or D[j] >= T - tol):
                alpha[j] -= ab * pval[a] / pb
        alive[best] = False
        for a in range(cptr[best], cptr[best + 1]):
            load[cport[a]] -= cval[a]
    return sigma, pivots, betas, -1


@njit(cache=True)
def mps_backward(cptr, cport, cval, P, t, rel, c0, phi):
    """MPS's backward rule on a residual state: last = argmin ``phi_j (t - r_j + T(A)) /
    C_j^0`` (ties: the highest position)."""
    n = cptr.size - 1
    load = np.zeros(P)
    for c in range(n):
        for a in range(cptr[c], cptr[c + 1]):
            load[cport[a]] += cval[a]
    alive = np.ones(n, dtype=np.bool_)
    sigma = np.empty(n, dtype=np.int64)
    for k in range(n - 1, -1, -1):
        T = 0.0
        for q in range(P):
            T = max(T, load[q])
        best = -1
        bestv = np.inf
        for j in range(n - 1, -1, -1):
            if alive[j]:
                v = phi[j] * (t - rel[j] + T) / c0[j] if c0[j] > 0.0 else np.inf
                if best < 0 or v < bestv:
                    bestv = v
                    best = j
        sigma[k] = best
        alive[best] = False
        for a in range(cptr[best], cptr[best + 1]):
            load[cport[a]] -= cval[a]
    return sigma


@njit(cache=True)
def cofair_online(ptr, order, src, dst, remaining, m, cap, w, D, t, rel, c0, phi, pivot_port,
                   rtol):
    """One online re-order ([C]: our online use of CoFair) of the coflows ``0..n-1`` of the CSR
    ``ptr, order`` (global flow ids): CoFair on their ``remaining`` volumes with residual deadlines
    ``D - t``, or, when its exit fires, MPS's backward rule at ``t``.  Returns ``(local
    order, fail)``: ``fail`` = -1, or the pivot port of the exit (the fallback was used)."""
    cptr, cport, cval = cofair_loads(ptr, order, src, dst, remaining, m, cap)
    pptr, pcof, pval = cofair_port_major(cptr, cport, cval, 2 * m)
    n = ptr.size - 1
    Dr = np.empty(n)
    for j in range(n):
        Dr[j] = D[j] - t
    sigma, _, _, fail = cofair_trace_kernel(cptr, cport, cval, pptr, pcof, pval, w, Dr, pivot_port,
                                      rtol)
    if fail < 0:
        return sigma, -1
    return mps_backward(cptr, cport, cval, 2 * m, t, rel, c0, phi), fail


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

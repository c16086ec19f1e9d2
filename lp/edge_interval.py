"""Interval-indexed forms of the two unit-slot LPs of issue 32: the edge-level LP of
:mod:`coflowopt.lp.edge` (Rohwedder and Schnaars, *3.415-Approximation for Coflow Scheduling via
Iterated Rounding*, ICALP 2025, arXiv 2502.21197; its LP reconstructed [C], the
specification's Sec. 3.2) and LP-I of :mod:`coflowopt.lp.flow_order` (Chi-Yeh Chen, arXiv
2311.11296, whose abstract [R Abs] names "an interval-indexed relaxation" with claimed 3 + eps
and 2 + eps; the LP itself is ours [C]).  Both are the time-indexed LPs with the slot index
``t`` replaced by the index ``k`` of an interval end ``tau_k``, so their size is ``O((F + n)
K)`` with ``K = O(log_{1+eps} T + 1/eps + #releases)`` instead of ``O((F + n) T)``.

**Grid** (:func:`slot_grid`) [C]: integer interval ends ``0 = tau_0 < tau_1 < ... < tau_K =
T``: unit steps up to ``N = ceil(1/eps)``, then the ceilings of the geometric grid
``N (1+eps)^{l-1}`` of :func:`coflowopt.lp.interval.geometric_grid`, every slot release
``r_j``, and ``T``.  Property (G): every interval length ``l_k = tau_k - tau_{k-1} <= eps
tau_{k-1} + 1`` (``ceil(g (1+eps)) - ceil(g) <= eps g + 1``; inserting points only shortens
intervals; checked, and repaired by inserting points, on creation).

**Edge LP-I** (:func:`solve_edge_interval_lp`; blocks as in :func:`coflowopt.lp.edge.edge_model`
with ``grid``): ``X_{f,k}`` units of ``f`` done by ``tau_k``, ``y_{j,k}``, ``C_j``::

    (B) X_{f,k} = 0 for tau_k <= r_j ; X_{f,K} = d_f      (M) X_{f,k} >= X_{f,k-1}
    (P) sum_{f at p} (X_{f,k} - X_{f,k-1}) <= l_k       (L) y_{j,k} <= X_{f,k} / d_f
    (O) C_j >= 1 + sum_{k<K} l_k (1 - y_{j,k})         (V) C_j >= r_j + Delta_j

**Flow LP-I** (:func:`solve_flow_order_interval_lp`): ``X_{f,k}`` the fraction of ``f``
completed by ``tau_k``: (R) ``X_{f,k} = 0`` for ``tau_k < r_f + d_f``, ``X_{f,K} = 1``, (M),
(P) ``sum_{f at p} d_f X_{f,k} <= tau_k``, (K) ``C_k >= C_f := 1 + sum_{k<K} l_k (1 -
X_{f,k})``, ``C_k >= r_f + d_f``, and the LB cut (V) ``C_k >= r_k + L_k`` (``lb_cut``).

On the unit grid (``l_k = 1``) both are exactly the time-indexed LPs: (O) and (K) read
``C >= 1 + sum_{t=1}^{T-1} (1 - y_t) = sum_{t=0}^{T-1} (1 - y_t)``.

**Theorem 1 (relaxation): LP-I <= LP-T <= OPT** (the discrete optimum on the same unit edges;
same horizon ``T = max r + |E|``).  *Proof.*  ``LP-T <= OPT`` is the time-indexed LPs' own
theorem.  Take an optimal LP-T solution; replace ``y`` by its running maximum over ``t`` (still
feasible: the right side of (L) is nondecreasing; (O) only gets looser).  Restrict ``X`` and
``y`` to the slots ``tau_k``.  (B)/(R)/(M)/(L)/(V) are rows of LP-T at those slots (the
releases are grid points, so ``X_{tau_k} = 0`` for ``tau_k <= r_j``).  (P): the units done at
``p`` in ``(tau_{k-1}, tau_k]`` are at most one per slot, ``l_k`` in all (edge); the flow form's
(P) is LP-T's row at ``t = tau_k``.  (O)/(K): for a slot ``t in (tau_{k-1}, tau_k]``,
``1 - y_t >= 1 - y_{tau_k}`` (``y`` and ``X`` nondecreasing), so ``sum_{t=1}^{T-1} (1 - y_t)
>= sum_{k<K} l_k (1 - y_{tau_k})`` and LP-T's ``C`` satisfies the interval row.  Same ``C``,
same objective.  []  (``LP-I <= LP-T`` is the inequality that holds; LP-I can sit well below
LP-T on a coarse grid: it charges a completion the start of its interval plus one slot.)

**Theorem 2 (edge LP-I, Greedy): best-of over the breakpoints <= 4 (1+eps) LP-I without
releases, <= (5 + 4 eps) LP-I with releases.**  *Proof.*  The alpha-point ``D_j(alpha) =
min{tau_k : y_{j,k} >= alpha}`` is an interval end, and ``X_{f, D_j} >= alpha d_f`` for ``f in
F_j`` by (L).  Lemma L holds unchanged: by (P) summed over the intervals up to ``D_j``, port ``p``
carries at most ``D_j`` units of LP mass by ``D_j``, so the coflows with ``D_i <= D_j`` have at
most ``D_j / alpha`` units at ``p``; hence Lemma G, ``C_j <= r_j + 2 D_j(alpha) / alpha - 1``.
With ``alpha`` of density ``2 alpha``, ``E[D_j / alpha] = 2 int_0^1 D_j = 2 C+_j`` where
``C+_j = sum_k tau_k (y_k - y_{k-1}) = sum_k l_k (1 - y_{k-1})`` (the end of the completion
interval, averaged).  By (G), ``C+_j - C_hat_j = -1 + sum_k l_k (y_k - y_{k-1}) <= eps
sum_k tau_{k-1} (y_k - y_{k-1}) = eps (C_hat_j - 1)`` with ``C_hat_j = 1 + sum_k l_k (1 -
y_k) <= C_j``.  So ``E[C_j^G] <= r_j + 4 (1+eps) C_hat_j - 4 eps - 1``: ``<= 4 (1+eps) C_j``
without releases, and with them ``r_j + 1 <= C_hat_j`` (``y = 0`` up to the grid point
``r_j``) gives ``<= (5 + 4 eps) C_j``.  The bound of Lemma G decreases in ``alpha`` between
breakpoints, so the best breakpoint does at least as well as the expectation.  []  The (1+eps)
is the whole loss against the time-indexed proof (4 / 5); IR keeps its lemmas on the
interpolated ``X`` (:meth:`~coflowopt.lp.edge.EdgeLPSolution.X_at`, a time-indexed solution)
and its (2 + 8/L) factor becomes (2 + 8/L)(1 + eps) by the same ``C+ <= (1+eps) C_hat``.

**Theorem 3 (flow LP-I, priority greedy): C_k^ALG <= 4 (1+eps) C_k^LP - 1 - 4 eps without
releases, <= (5 + 4 eps) C_k^LP - 2 - 4 eps with them; so ALG <= 4 (1+eps) LP-I - (1 + 4 eps)
sum w, resp. (5 + 4 eps) LP-I - (2 + 4 eps) sum w.**  *Proof.*  Lemma P on LP-I: let ``S = {g :
C_g <= C_f}`` and ``D`` its load at a port ``p`` of ``f`` (``D >= d_f >= 1``).  Then ``D (C_f -
1) >= sum_{g in S at p} d_g (C_g - 1) >= sum_k l_k (D - sum_g d_g X_{g,k}) >= sum_k l_k (D -
tau_k)^+`` by (P).  For a slot ``t in (tau_{k-1}, tau_k]``, (G) gives ``tau_k <= t + eps
tau_{k-1} <= (1+eps) t - eps``, so the sum is ``>= sum_{t>=1} (D + eps - (1+eps) t)^+ >=
(D - 1)^2 / (2 (1+eps))`` (a nonincreasing summand against its integral from 1).  Hence ``D - 2
< (D-1)^2 / D <= 2 (1+eps)(C_f - 1)``, i.e. ``D <= 2 (1+eps) C_f - 2 eps``.  Lemma G of the
greedy (``C_f^ALG <= r_f + d_f + load_u(B_f) + load_v(B_f)``, ``B_f`` the flows ahead, ``B_f
subset S - {f}``) gives ``C_f^ALG <= r_f - d_f + 4 (1+eps) C_f - 4 eps``; ``d_f >= 1``, and with
releases ``r_f + d_f <= C_f``, ``d_f >= 1``; finally ``C_f <= C_k^LP``.  []

**Aggregation.**  Flows of one coflow on one ``(src, dst)`` are merged before either LP
(:func:`coflowopt.lp.edge.unit_edges`).  For the edge LP (time- or interval-indexed) this loses
nothing: the LP of the unmerged flows has the same optimum (split a merged ``X_f`` in proportion
to the demands; sum unmerged ``X`` to merge; (P) sees the same sums and ``X_f / d_f >=
min_i X_{f_i} / d_{f_i}``), checked in ``tests/lp/test_edge_interval.py``.  For the flow LPs the
merge is a model choice (one flow of ``d_1 + d_2`` units; its LP is at least the unmerged one's
and still ``<= OPT``, the units being interchangeable).
"""

from __future__ import annotations

import math

import numpy as np

from .edge import EdgeLPSolution, UnitEdges, edge_horizon, edge_lp_size, solve_edge_lp
from .flow_order import FlowOrderLP, flow_order_lp_size, solve_flow_order_lp
from .interval import geometric_grid
from .model import SolveParams

__all__ = [
    "BYTES_PER_NONZERO",
    "edge_grid",
    "edge_interval_size",
    "flow_order_interval_size",
    "flow_order_offset",
    "interval_size_refusal",
    "proven_factor",
    "slot_grid",
    "solve_edge_interval_lp",
    "solve_flow_order_interval_lp",
]

#: peak resident memory per LP nonzero of a build + HiGHS solve of these LPs: measured growth of
#: ``ru_maxrss`` over the solve on ``synthetic_trace(8, seed=0)`` (4,116 merged flows): 313
#: bytes (flow LP-I, eps 0.5, 6.8e5 nonzeros, dual simplex) and 302 (edge LP-I, eps 0.1, 3.3e6
#: nonzeros, interior point); FB2010's build alone stopped at 7.3 GB under an 8 GiB cap
BYTES_PER_NONZERO = 300.0


def proven_factor(eps: float | None, releases: bool) -> float:
    """The proven multiplier ``a`` of both rounding schemes against their own LP: 4 / 5 on the
    time-indexed form (``eps=None``), ``4 (1+eps)`` / ``5 + 4 eps`` on LP-I (Theorems 2, 3)."""
    e = 0.0 if eps is None else float(eps)
    return 5.0 + 4.0 * e if releases else 4.0 * (1.0 + e)


def flow_order_offset(eps: float | None, releases: bool) -> float:
    """``b`` in the flow order's ``ALG <= a LP - b sum_k w_k``: 3 / 4 on LP-T (its
    specification's Sec. 5.2), ``1 + 4 eps`` / ``2 + 4 eps`` on LP-I (Theorem 3)."""
    if eps is None:
        return 4.0 if releases else 3.0
    return (2.0 if releases else 1.0) + 4.0 * float(eps)


def slot_grid(horizon: int, eps: float, releases: np.ndarray | None = None) -> np.ndarray:
    """Integer interval ends ``0 = tau_0 < ... < tau_K = horizon`` (module docstring): unit
    steps to ``ceil(1/eps)``, the ceilings of the geometric grid beyond, the ``releases`` below
    ``horizon``, and ``horizon``; every ``tau_k - tau_{k-1} <= eps tau_{k-1} + 1``."""
    T = int(horizon)
    if T < 1:
        raise ValueError(f"slot_grid: horizon must be >= 1, got {horizon}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"slot_grid: eps must be a positive number, got {eps}")
    N = min(math.ceil(1.0 / eps - 1e-12), T)
    pts = [np.arange(N + 1), np.array([T])]
    if T > N:
        pts.append(np.ceil(geometric_grid(T, eps, float(N))[1:] - 1e-9).astype(np.int64))
    if releases is not None:
        pts.append(np.asarray(releases, dtype=np.int64))
    tau = np.unique(np.concatenate(pts))
    tau = tau[(tau >= 0) & (tau <= T)]
    while True:  # (G), against rounding of the logarithm's powers
        ell = np.diff(tau)
        cap = np.floor(eps * tau[:-1] + 1 + 1e-9).astype(np.int64)
        bad = np.flatnonzero(ell > cap)
        if not bad.size:
            return tau
        tau = np.unique(np.r_[tau, tau[bad] + cap[bad]])


def edge_grid(edges: UnitEdges, eps: float) -> np.ndarray:
    """:func:`slot_grid` on ``T = max r + |E|`` with the slot releases of the coflows with
    units."""
    live = np.unique(edges.coflow)
    return slot_grid(edge_horizon(edges), eps, edges.release[live])


def edge_interval_size(edges: UnitEdges, eps: float) -> tuple[int, int, int]:
    """``(columns, nonzeros, K)`` of the edge LP-I, before building it."""
    g = edge_grid(edges, eps)
    return (*edge_lp_size(edges, grid=g), g.size - 1)


def flow_order_interval_size(edges: UnitEdges, eps: float) -> tuple[int, int, int]:
    """``(columns, nonzeros, K)`` of the flow LP-I, before building it."""
    g = edge_grid(edges, eps)
    return (*flow_order_lp_size(edges, grid=g), g.size - 1)


def interval_size_refusal(name: str, what: str, size: tuple[int, int, int], edges: UnitEdges,
                          eps: float, max_nonzeros: float) -> str | None:
    """One line naming an interval LP's size (columns, nonzeros, intervals, estimated memory
    at :data:`BYTES_PER_NONZERO`) when it exceeds ``max_nonzeros``, else ``None``.  Every merged
    flow keeps ``K + 1`` columns whatever the quantum, so the line says what would shrink it."""
    cols, nnz, K = size
    if nnz <= max_nonzeros:
        return None
    gb = nnz * BYTES_PER_NONZERO / 2**30
    return (f"{name}: the interval-indexed {what} would have {cols:,} variables and {nnz:,} "
            f"nonzeros ({edges.n_flows:,} merged flows x {K + 1} interval ends, eps {eps:g}, "
            f"quantum {edges.quantum:g}; about {gb:.3g} GiB to build and solve at "
            f"{BYTES_PER_NONZERO:g} bytes per nonzero), over max_nonzeros = "
            f"{max_nonzeros:.3g}; it is not built (no eps makes it much smaller: K stays "
            f"above the {np.unique(edges.release).size} distinct slot releases, and every "
            f"merged flow keeps K + 1 columns)")


def solve_edge_interval_lp(edges: UnitEdges, eps: float, params: SolveParams | None = None, *,
                           backend: str = "highs") -> EdgeLPSolution:
    """The edge LP-I on :func:`edge_grid`, post-processed as the time-indexed one
    (:class:`~coflowopt.lp.edge.EdgeLPSolution` with ``grid``; alpha-points are interval
    ends)."""
    return solve_edge_lp(edges, params, backend=backend, grid=edge_grid(edges, eps), eps=eps)


def solve_flow_order_interval_lp(edges: UnitEdges, eps: float,
                                 params: SolveParams | None = None, *, lb_cut: bool = True,
                                 backend: str = "highs") -> FlowOrderLP:
    """The flow LP-I on :func:`edge_grid` (dual simplex by default)."""
    return solve_flow_order_lp(edges, params, lb_cut=lb_cut, backend=backend,
                               grid=edge_grid(edges, eps), eps=eps)

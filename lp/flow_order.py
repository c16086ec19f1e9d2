"""LP-T, the completion-indexed time-indexed LP that orders *flows* (our reconstruction [C] of
the LP of Chi-Yeh Chen, *Improved Approximation Algorithms for Minimizing the Total Weighted
Completion Time of Coflows*, arXiv 2311.11296, Sec. 3, whose text was not readable beyond the
abstract [R Abs]: "a time-indexed LP" that yields "a flow scheduling order").

Written on the unit edges of :mod:`coflowopt.lp.edge` (merged flows, integer demands ``d_f``,
slot releases ``r_f`` of their coflow), horizon ``T = max r + sum_f d_f``.  Cumulative form:
``X_{f,t}`` (``t = 0..T``) is the fraction of flow ``f`` *completed* by the end of slot ``t``::

    minimise   sum_k w_k C_k
    (R)  X_{f,t} = 0 for t < r_f + d_f ;  X_{f,T} = 1
    (M)  X_{f,t} - X_{f,t-1} >= 0                        every f, t = 1..T
    (P)  sum_{f at p} d_f X_{f,t} <= t                   every loaded port p, t = 1..T
    (K)  C_k + sum_{t=0}^{T-1} X_{f,t} >= T              k, f in F_k  (C_k >= C_f)
    (V)  C_k >= LB_k = r_k + L_k                         (the "LB cut", optional: lb_cut)

with ``C_f = T - sum_{t<T} X_{f,t} = sum_t t x_{f,t}`` the flow's LP completion and ``L_k`` the
largest port load of coflow ``k``.  Every integral schedule gives a feasible point (``x_{f,c_f}
= 1`` at ``f``'s completion slot: the units done at ``p`` by ``t`` used ``t`` distinct slots),
so ``LP-T <= OPT`` (discrete slots).  About ``F (T + 1) + n`` columns and ``5 F T`` nonzeros.
On integer interval ends instead of slots (``grid``) it is LP-I (:mod:`coflowopt.lp.edge_interval`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backends import solve
from .edge import UnitEdges, edge_horizon, monotone_rows
from .model import LinearProgram, ModelBuilder, SolveParams, SolveResult

__all__ = ["FlowOrderLP", "flow_order_lp_size", "flow_order_model", "solve_flow_order_lp"]


def flow_order_lp_size(edges: UnitEdges, *, grid: np.ndarray | None = None
                       ) -> tuple[int, int]:
    """``(columns, nonzeros)`` of :func:`flow_order_model`, before building it (``grid``: the
    interval-indexed form, ``K = grid.size - 1`` intervals in place of ``T`` slots)."""
    T = edge_horizon(edges) if grid is None else int(np.asarray(grid).size) - 1
    F, n = edges.n_flows, np.unique(edges.coflow).size
    return F * (T + 1) + n, 2 * F * T + 2 * F * T + F * (T + 1)


def flow_order_model(edges: UnitEdges, *, lb_cut: bool = True,
                     grid: np.ndarray | None = None) -> LinearProgram:
    """LP-T of the module docstring (blocks ``X`` ``(F, K+1)`` and ``C`` ``(n',)`` over the
    ``n'`` coflows with flows, listed in ``meta["coflows"]``).  ``grid`` (integer interval ends
    ``0 = tau_0 < ... < tau_K = T``; ``None``: unit slots) gives LP-I of
    :mod:`coflowopt.lp.edge_interval`: ``X_{f,k}`` at the interval ends, (R) ``X_{f,k} = 0``
    for ``tau_k < r_f + d_f``, (P) ``sum d_f X_{f,k} <= tau_k``, (K) ``C_k >= 1 + sum_{k<K}
    (tau_k - tau_{k-1})(1 - X_{f,k})`` and ``C_k >= max_f (r_f + d_f)`` (implied on unit
    slots, where both forms coincide)."""
    if grid is None:
        tau = np.arange(edge_horizon(edges) + 1)
    else:
        tau = np.asarray(grid, dtype=np.int64)
    T, K = int(tau[-1]), tau.size - 1
    F = edges.n_flows
    live = np.unique(edges.coflow)
    n = live.size
    cpos = np.full(edges.n_coflows, -1, dtype=np.int64)
    cpos[live] = np.arange(n)
    d = edges.demand.astype(np.float64)
    rf = edges.release[edges.coflow]
    ub = np.ones((F, K + 1))
    ub[tau[None, :] < (rf + edges.demand)[:, None]] = 0.0
    lb = np.zeros((F, K + 1))
    lb[:, K] = 1.0
    b = ModelBuilder("flow_order_time_indexed" if grid is None else "flow_order_interval")
    X = b.add_columns("X", (F, K + 1), lb=lb, ub=ub)
    if lb_cut:
        lbk = (edges.release[live] + edges.delta()[live]).astype(np.float64)
    elif grid is None:
        lbk = np.zeros(n)
    else:  # C_k >= C_f >= r_f + d_f: implied on unit slots, not on coarse intervals
        lbk = np.zeros(n)
        np.maximum.at(lbk, cpos[edges.coflow], (rf + edges.demand).astype(np.float64))
    C = b.add_columns("C", n, lb=lbk, cost=edges.weight[live])
    pidx, fl, P = monotone_rows(b, X, edges)
    rows = (pidx[:, None] * K + np.arange(K)[None, :]).ravel()
    b.add_rows("P", P * K, rows, X[fl][:, 1:].ravel(), np.repeat(d[fl], K),
               upper=np.tile(tau[1:].astype(np.float64), P))
    rows = np.r_[np.arange(F), np.repeat(np.arange(F), K)]
    cols = np.r_[C[cpos[edges.coflow]], X[:, :K].ravel()]
    # X_{f,0} = 0 always (d_f >= 1), so its coefficient is free: 1 keeps the unit-slot rows
    coef = 1.0 if grid is None else np.r_[np.ones(F), np.tile(np.r_[1.0, np.diff(tau)[:K - 1]],
                                                                F)]
    b.add_rows("K", F, rows, cols, coef, lower=float(T) if grid is None else 1.0 + tau[K - 1])
    empty = np.setdiff1d(np.arange(edges.n_coflows), live)
    offset = float(edges.weight[empty] @ edges.release[empty]) if empty.size else 0.0
    return b.build(offset=offset, meta={"horizon": T, "coflows": live, "grid": tau})


@dataclass(frozen=True, eq=False)
class FlowOrderLP:
    """A solved LP-T or LP-I: ``value`` (slots), ``C_flow`` (``C_f``; on LP-I ``max(r_f + d_f,
    1 + sum_{k<K} (tau_k - tau_{k-1})(1 - X_{f,k}))``), ``C_coflow`` (``C_k``; ``r_k`` for a
    coflow without flows), ``X`` ``(F, K+1)``, ``horizon``, the solver's ``result``, ``grid``
    (``None``: unit slots), ``form`` and ``eps``."""

    value: float
    C_flow: np.ndarray
    C_coflow: np.ndarray
    X: np.ndarray
    horizon: int
    result: SolveResult
    grid: np.ndarray | None = None
    form: str = "time-indexed"
    eps: float | None = None


def solve_flow_order_lp(edges: UnitEdges, params: SolveParams | None = None, *,
                        lb_cut: bool = True, backend: str = "highs",
                        grid: np.ndarray | None = None, eps: float | None = None
                        ) -> FlowOrderLP:
    """Solve :func:`flow_order_model` (dual simplex by default: a vertex, as the
    specification's measurements used; on ``grid``: LP-I, built with ``eps``).  Raises
    :class:`RuntimeError` naming the status when it is not solved to optimality."""
    model = flow_order_model(edges, lb_cut=lb_cut, grid=grid)
    if params is None:
        params = SolveParams(options={"solver": "simplex"})
    res = solve(model, params, backend=backend)
    if not res.optimal or res.x is None:
        raise RuntimeError(f"flow-order LP ({model.n_cols} columns, {model.nnz} nonzeros) "
                           f"ended {res.status.value} after {res.runtime:.1f} s "
                           f"{res.message}".strip())
    T = int(model.meta["horizon"])
    live = model.meta["coflows"]
    X = model.values(res.x, "X")
    if grid is None:
        Cf = T - X[:, :T].sum(axis=1)
    else:
        tau = model.meta["grid"]
        K = tau.size - 1
        Cf = 1.0 + ((1.0 - X[:, 1:K]) * np.diff(tau)[:K - 1]).sum(axis=1)
        Cf = np.maximum(Cf, edges.release[edges.coflow] + edges.demand)
    Ck = edges.release.astype(np.float64).copy()
    Ck[live] = model.values(res.x, "C")
    return FlowOrderLP(float(res.objective), Cf, Ck, X, T, res,
                       None if grid is None else model.meta["grid"],
                       "time-indexed" if grid is None else "interval-indexed", eps)

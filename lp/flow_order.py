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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backends import solve
from .edge import UnitEdges, edge_horizon, monotone_rows
from .model import LinearProgram, ModelBuilder, SolveParams, SolveResult

__all__ = ["FlowOrderLP", "flow_order_lp_size", "flow_order_model", "solve_flow_order_lp"]


def flow_order_lp_size(edges: UnitEdges) -> tuple[int, int]:
    """``(columns, nonzeros)`` of :func:`flow_order_model`, before building it."""
    T = edge_horizon(edges)
    F, n = edges.n_flows, np.unique(edges.coflow).size
    return F * (T + 1) + n, 2 * F * T + 2 * F * T + F * (T + 1)


def flow_order_model(edges: UnitEdges, *, lb_cut: bool = True) -> LinearProgram:
    """LP-T of the module docstring (blocks ``X`` ``(F, T+1)`` and ``C`` ``(n',)`` over the
    ``n'`` coflows with flows, listed in ``meta["coflows"]``)."""
    T = edge_horizon(edges)
    F = edges.n_flows
    live = np.unique(edges.coflow)
    n = live.size
    cpos = np.full(edges.n_coflows, -1, dtype=np.int64)
    cpos[live] = np.arange(n)
    d = edges.demand.astype(np.float64)
    rf = edges.release[edges.coflow]
    t_all = np.arange(T + 1)
    ub = np.ones((F, T + 1))
    ub[t_all[None, :] < (rf + edges.demand)[:, None]] = 0.0
    lb = np.zeros((F, T + 1))
    lb[:, T] = 1.0
    b = ModelBuilder("flow_order_time_indexed")
    X = b.add_columns("X", (F, T + 1), lb=lb, ub=ub)
    lbk = (edges.release[live] + edges.delta()[live]) if lb_cut else np.zeros(n)
    C = b.add_columns("C", n, lb=lbk, cost=edges.weight[live])
    pidx, fl, P = monotone_rows(b, X, edges)
    rows = (pidx[:, None] * T + np.arange(T)[None, :]).ravel()
    b.add_rows("P", P * T, rows, X[fl][:, 1:].ravel(), np.repeat(d[fl], T),
               upper=np.tile(np.arange(1.0, T + 1), P))
    rows = np.r_[np.arange(F), np.repeat(np.arange(F), T)]
    cols = np.r_[C[cpos[edges.coflow]], X[:, :T].ravel()]
    b.add_rows("K", F, rows, cols, 1.0, lower=float(T))
    empty = np.setdiff1d(np.arange(edges.n_coflows), live)
    offset = float(edges.weight[empty] @ edges.release[empty]) if empty.size else 0.0
    return b.build(offset=offset, meta={"horizon": T, "coflows": live})


@dataclass(frozen=True, eq=False)
class FlowOrderLP:
    """A solved LP-T: ``value`` (slots), ``C_flow`` (``C_f``), ``C_coflow`` (``C_k``; ``r_k``
    for a coflow without flows), ``X`` ``(F, T+1)``, ``horizon`` and the solver's
    ``result``."""

    value: float
    C_flow: np.ndarray
    C_coflow: np.ndarray
    X: np.ndarray
    horizon: int
    result: SolveResult


def solve_flow_order_lp(edges: UnitEdges, params: SolveParams | None = None, *,
                        lb_cut: bool = True, backend: str = "highs") -> FlowOrderLP:
    """Solve :func:`flow_order_model` (dual simplex by default: a vertex, as the
    specification's measurements used).  Raises :class:`RuntimeError` naming the status when
    it is not solved to optimality."""
    model = flow_order_model(edges, lb_cut=lb_cut)
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
    Cf = T - X[:, :T].sum(axis=1)
    Ck = edges.release.astype(np.float64).copy()
    Ck[live] = model.values(res.x, "C")
    return FlowOrderLP(float(res.objective), Cf, Ck, X, T, res)

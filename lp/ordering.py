"""Ordering LPs and primal-dual orders: lower bounds on weighted completion time, and the orders
that the approximation algorithms build from them.

- :func:`ordering_lp` — the ordering-variable LP for weighted CCT of single-stage coflows
  (Shafiee and Ghaderi, IEEE/ACM ToN 2018, arXiv 1704.08357; LP reconstructed [C], only its
  summary was read);
- :func:`job_ordering_lp` — the relaxed job-ordering LP (3) of multi-stage jobs (Shafiee and
  Ghaderi, *Scheduling Coflows with Dependency Graph*, IEEE/ACM ToN 2021) with its exponentially
  many subset constraints (3b), solved exactly by separation;
- :func:`tian_lp` — the LP of the ``O(m)``-approximation of Tian et al. (INFOCOM 2018;
  reconstructed [C]);
- :func:`bssi_order` — Sincronia's Bottleneck-Select-Scale-Iterate order with its dual
  (Agarwal et al., SIGCOMM 2018), :func:`primal_dual_job_order` — the job ordering of the ToN
  2021 paper's Appendix;
- :func:`order_cost` — ``sum_k w_{sigma(k)} T(A_k)``, the relaxed (port-makespan) cost of an
  order.

Every LP here is a relaxation of the fluid (preemptive) problem, so its optimum is a lower
bound on every feasible schedule's objective (absolute completion times).  None of them is a
schedule.  Ports are numbered ingress ``0..m-1`` then egress ``m..2m-1`` (our convention) and
loads are divided by the port capacity (time units).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from coflowopt.model import Instance
from coflowopt.orders import bssi_trace, coflow_port_loads, job_port_loads

from .backends import solve
from .model import INF, LinearProgram, ModelBuilder, SolveParams, SolveResult, Status

__all__ = [
    "BSSIResult",
    "JobOrderResult",
    "LPBound",
    "bssi_order",
    "coflow_port_loads",
    "job_ordering_lp",
    "job_port_loads",
    "order_cost",
    "ordering_lp",
    "primal_dual_job_order",
    "tian_lp",
]


def _f(d: np.ndarray) -> float:
    """``f(J) = 1/2 (sum d^2 + (sum d)^2)`` (right side of (3b))."""
    return 0.5 * (float(np.dot(d, d)) + float(d.sum()) ** 2)


def order_cost(instance: Instance, order: Any, *, jobs: bool = False) -> float:
    """``sum_k w_{sigma(k)} T(A_k)``: each item charged the port makespan ``T(A_k)`` of the
    first ``k`` items of ``order`` (coflows, or jobs with ``jobs=True``).  This is the relaxed
    cost the primal-dual analyses bound; an order-preserving allocation realises at most twice
    it (a flow waits only while one of its two ports serves higher-priority traffic)."""
    p = job_port_loads(instance) if jobs else coflow_port_loads(instance)
    w = instance.job_weight if jobs else instance.coflow_weight
    order = np.asarray(order, dtype=np.int64)
    prefix = np.cumsum(p[order], axis=0)
    T = prefix.max(axis=1) if prefix.size else np.zeros(order.size)
    return float(np.dot(w[order], T))


@dataclass(frozen=True)
class LPBound:
    """An LP lower bound: ``value`` (NaN unless solved to optimality), per-item LP completion
    times ``C`` (coflows or jobs), the ``order`` they induce (ascending ``C``), the solver
    result, and counters (``rounds``, ``cuts`` for separation)."""

    value: float
    C: np.ndarray | None
    order: np.ndarray | None
    result: SolveResult
    kind: str
    rounds: int = 0
    cuts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def optimal(self) -> bool:
        return self.result.status is Status.OPTIMAL


def _order_from(C: np.ndarray, rank: np.ndarray | None = None) -> np.ndarray:
    idx = np.arange(C.size)
    rank = idx if rank is None else rank
    return np.lexsort((idx, rank, np.round(C, 9)))


def _pair_index(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unordered pairs ``a < b`` and the map ``(a, b) -> column``."""
    a, b = np.triu_indices(n, k=1)
    pid = np.full((n, n), -1, dtype=np.int64)
    pid[a, b] = np.arange(a.size)
    pid[b, a] = np.arange(a.size)
    return a, b, pid


def _ordering_rows(bld: ModelBuilder, name: str, L: np.ndarray, Ccol: np.ndarray,
                   u: np.ndarray, pid: np.ndarray) -> None:
    """Rows ``C_c >= L[c, i] + sum_{c' != c} L[c', i] delta_{c'c}`` for every port ``i`` with
    load and every ``c``; with one column ``u_ab = delta_ab`` per pair ``a < b`` and
    ``delta_ba = 1 - u_ab``."""
    n = L.shape[0]
    ports = np.flatnonzero(L.sum(axis=0) > 0)
    if not ports.size or n == 0:
        return
    cc, oth = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    off = cc != oth
    cc, oth = cc[off], oth[off]  # row coflow c, other coflow c'
    col = u[pid[cc, oth]]
    sign = np.where(oth < cc, -1.0, 1.0)  # delta_{c'c} = u (c' < c) or 1 - u (c' > c)
    rows, cols, vals = [], [], []
    lower = []
    for k, i in enumerate(ports):
        base = k * n
        rows += [base + np.arange(n), base + cc]
        cols += [Ccol, col]
        vals += [np.ones(n), sign * L[oth, i]]
        const = np.bincount(cc, weights=np.where(oth > cc, L[oth, i], 0.0), minlength=n)
        lower.append(L[:, i] + const)
    bld.add_rows(name, ports.size * n, np.concatenate(rows), np.concatenate(cols),
                 np.concatenate(vals), lower=np.concatenate(lower))


def ordering_lp(instance: Instance, params: SolveParams | None = None, *,
                backend: str = "highs",
                on_model: Callable[[LinearProgram], Any] | None = None) -> LPBound:
    """The ordering-variable LP for weighted CCT (Shafiee and Ghaderi, ToN 2018; reconstructed
    [C])::

        min  sum_k w_k f_k
        f_k >= r_k + d_lk                                     every port l, coflow k
        f_k >= d_lk + sum_{k' != k} d_lk' delta_{k'k}          every port l with load, coflow k
        delta_{kk'} + delta_{k'k} = 1,   0 <= delta <= 1

    with ``d_lk = p_lk / B_l``.  ``delta_{k'k} = 1`` means ``k'`` before ``k``; one column per
    unordered pair carries ``delta_{ab}`` (``a < b``) and ``delta_{ba} = 1 - delta_{ab}``
    (exactly the equality).  The first family is the column bound ``f_k >= r_k + C_k^0``.
    Valid for every fluid schedule (order the coflows by completion time), so the optimum is
    a lower bound on ``sum_k w_k C_k``.  Starts-After edges are ignored (still a relaxation).
    ``on_model(lp)``: called with the built model before it is solved (its size, for progress).
    """
    inst = instance
    n = inst.n_coflows
    L = coflow_port_loads(inst)
    bld = ModelBuilder("ordering_lp")
    f = bld.add_columns("f", n, lb=inst.release + inst.isolation_time, cost=inst.coflow_weight)
    a, _, pid = _pair_index(n)
    u = bld.add_columns("delta", a.size, lb=0.0, ub=1.0)
    _ordering_rows(bld, "port_order", L, f, u, pid)
    lp = bld.build()
    if on_model is not None:
        on_model(lp)
    res = solve(lp, params, backend=backend)
    if res.status is not Status.OPTIMAL or res.x is None:
        return LPBound(math.nan, None, None, res, "ordering LP")
    C = lp.values(res.x, "f").copy()
    return LPBound(res.objective, C, _order_from(C), res, "ordering LP")


def tian_lp(instance: Instance, params: SolveParams | None = None, *,
            fix_precedence: bool = False, backend: str = "highs",
            on_model: Callable[[LinearProgram], Any] | None = None) -> LPBound:
    """The LP of Tian et al.'s ``O(m)``-approximation (INFOCOM 2018; reconstructed [C])::

        min  sum_j w_j C_j                                   (jobs)
        (T1) C_c >= rho_{j(c)} + eff_c                       every coflow c
        (T2) C_c >= C_u + eff_c                              every Starts-After edge u -> c
        (T3) C_c >= L_ic + sum_{c' != c} L_ic' delta_{c'c}   every port i with load, coflow c
        (T4) delta_{cc'} + delta_{c'c} = 1, 0 <= delta <= 1  every pair (one column per pair)
        (T5) C_j >= C_c                                      every coflow c of job j

    ``eff_c = C_c^0`` (time units) and (T1) uses the coflow's effective release
    ``max(r_c, rho_j)``.  ``fix_precedence`` fixes ``delta_{uc} = 1`` when ``u`` is an ancestor
    of ``c``.  A relaxation of every fluid schedule, so a lower bound on weighted JCT; ``order``
    is the coflow order by LP ``C_c`` (ties: topological, then position) used by the
    one-at-a-time rounding [C] (:mod:`coflowopt.schedulers.dag.om_lp`).  ``extra["C_jobs"]`` holds
    the job values. ``on_model(lp)``: called with the built model before it is solved (its size, for
    progress).
    """
    inst = instance
    n = inst.n_coflows
    L = coflow_port_loads(inst)
    bld = ModelBuilder("tian_lp")
    C = bld.add_columns("C", n, lb=inst.release + inst.isolation_time)
    CJ = bld.add_columns("CJ", inst.n_jobs, lb=0.0, cost=inst.job_weight)
    a, _, pid = _pair_index(n)
    lo_u = np.zeros(a.size)
    hi_u = np.ones(a.size)
    if fix_precedence and inst.starts_after.size:
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(inst.starts_after.tolist())
        for c in range(n):
            for anc in nx.ancestors(g, c):
                k = pid[anc, c]
                if anc < c:
                    lo_u[k] = 1.0  # delta_{anc, c} = u = 1
                else:
                    hi_u[k] = 0.0  # delta_{anc, c} = 1 - u = 1
    u = bld.add_columns("delta", a.size, lb=lo_u, ub=hi_u)
    e = inst.starts_after.astype(np.int64)
    if e.size:
        ne = e.shape[0]
        bld.add_rows("T2", ne, np.r_[np.arange(ne), np.arange(ne)], np.r_[C[e[:, 1]], C[e[:, 0]]],
                     np.r_[np.ones(ne), -np.ones(ne)], lower=inst.isolation_time[e[:, 1]])
    _ordering_rows(bld, "T3", L, C, u, pid)
    bld.add_rows("T5", n, np.r_[np.arange(n), np.arange(n)], np.r_[CJ[inst.coflow_job], C],
                 np.r_[np.ones(n), -np.ones(n)], lower=0.0)
    lp = bld.build()
    if on_model is not None:
        on_model(lp)
    res = solve(lp, params, backend=backend)
    if res.status is not Status.OPTIMAL or res.x is None:
        return LPBound(math.nan, None, None, res, "Tian et al. LP")
    Cv = lp.values(res.x, "C").copy()
    rank = np.empty(n, dtype=np.int64)
    rank[inst.topological_order] = np.arange(n)
    return LPBound(res.objective, Cv, _order_from(Cv, rank), res, "Tian et al. LP",
                   extra={"C_jobs": lp.values(res.x, "CJ").copy()})


def job_ordering_lp(instance: Instance, params: SolveParams | None = None, *,
                    method: str = "separation", tol: float = 1e-7, max_rounds: int = 500,
                    backend: str = "highs") -> LPBound:
    """The relaxed job-ordering LP (3) of Shafiee and Ghaderi (ToN 2021; the construction [R], the
    closed forms of (3b) and (3c) ours [C])::

        (3a) min  sum_j w_j C_j
        (3b) sum_{j in J} d_i^j C_j >= 1/2 (sum_{j in J} (d_i^j)^2 + (sum_{j in J} d_i^j)^2)
                                                         every port i, every subset J of jobs
        (3c) C_j >= T_j + rho_j

    ``d_i^j`` is job ``j``'s aggregate load on port ``i`` (time units), ``T_j`` its critical
    path.  ``method="separation"`` (exact): start from (3c) and the full set per port, solve,
    and add for each port the most violated subset, until none is violated by more than
    ``tol`` (relative).  When some subset of port ``i`` is violated, the most violated one is a
    prefix of the jobs sorted by ``C_j`` (Queyranne): adding ``k`` to ``S`` changes the
    violation by ``d_k (d(S) + d_k - C_k)``, so a maximiser ``S*`` (with positive violation,
    hence better than the empty set) holds exactly the jobs with ``C_j <= d(S*)``.  Checked
    against enumeration in the tests.  ``method="enumerate"`` writes every subset (``2^n``
    per port; tests).

    For a single-stage instance (one coflow per job) this is the concurrent-open-shop LP with
    parallel inequalities that Sincronia's analysis uses.
    """
    if method not in ("separation", "enumerate"):
        raise ValueError(f"method: expected 'separation' or 'enumerate', got {method!r}")
    inst = instance
    t0 = time.perf_counter()
    d = job_port_loads(inst)
    n, P = d.shape
    lb = inst.critical_path + inst.job_release
    base = LinearProgram.from_arrays(inst.job_weight, sp.csr_matrix((0, n)), col_lower=lb,
                                     col_upper=np.full(n, INF), name="job_ordering_lp")
    ports = [i for i in range(P) if d[:, i].sum() > 0]
    rows: list[np.ndarray] = []
    rhs: list[float] = []
    if method == "enumerate":
        if n > 16:
            raise ValueError(f"job_ordering_lp: enumerate needs n <= 16 jobs, got {n}")
        for i in ports:
            jobs = np.flatnonzero(d[:, i] > 0)
            for r in range(1, jobs.size + 1):
                for J in itertools.combinations(jobs.tolist(), r):
                    row = np.zeros(n)
                    row[list(J)] = d[list(J), i]
                    rows.append(row)
                    rhs.append(_f(d[list(J), i]))
        lp = base.with_rows(np.array(rows).reshape(-1, n), rhs, INF, name="subset")
        res = solve(lp, params, backend=backend)
        return _job_lp_result(res, lp, "job-ordering LP (3), enumerated", 1, len(rows), t0)
    for i in ports:
        row = d[:, i].copy()
        rows.append(row)
        rhs.append(_f(row[row > 0]))
    lp = base.with_rows(np.array(rows).reshape(-1, n), rhs, INF, name="subset")
    n_cuts = len(rows)
    rounds = 0
    while True:
        rounds += 1
        res = solve(lp, params, backend=backend)
        if res.status is not Status.OPTIMAL or res.x is None or rounds >= max_rounds:
            break
        C = res.x
        new_rows, new_rhs = [], []
        for i in ports:
            jobs = np.flatnonzero(d[:, i] > 0)
            srt = jobs[np.lexsort((jobs, C[jobs]))]
            dd = d[srt, i]
            pref = np.cumsum(dd)
            fvals = 0.5 * (np.cumsum(dd * dd) + pref * pref)
            viol = fvals - np.cumsum(dd * C[srt])
            k = int(np.argmax(viol))
            if viol[k] > tol * max(1.0, fvals[k]):
                row = np.zeros(n)
                row[srt[:k + 1]] = dd[:k + 1]
                new_rows.append(row)
                new_rhs.append(float(fvals[k]))
        if not new_rows:
            break
        lp = lp.with_rows(np.array(new_rows), new_rhs, INF, name=f"subset_{rounds}")
        n_cuts += len(new_rows)
    return _job_lp_result(res, lp, "job-ordering LP (3), separation", rounds, n_cuts, t0)


def _job_lp_result(res: SolveResult, lp: LinearProgram, kind: str, rounds: int, cuts: int,
                   t0: float) -> LPBound:
    extra = {"runtime": time.perf_counter() - t0, "lp": lp}
    if res.status is not Status.OPTIMAL or res.x is None:
        return LPBound(math.nan, None, None, res, kind, rounds, cuts, extra)
    C = res.x.copy()
    return LPBound(res.objective, C, _order_from(C), res, kind, rounds, cuts, extra)


@dataclass(frozen=True)
class BSSIResult:
    """Sincronia's BSSI order: ``order`` (coflow positions, first served first), the dual
    objective ``dual = sum_k beta_k f_{b_k}(A_k)`` (a lower bound on the concurrent-open-shop LP
    optimum, hence on OPT), the bottleneck port ``b_k`` and ``beta_k`` of each step (listed from
    the last position to the first)."""

    order: np.ndarray
    dual: float
    bottlenecks: np.ndarray
    beta: np.ndarray


def bssi_order(instance: Instance, weights: Any = None) -> BSSIResult:
    """Bottleneck-Select-Scale-Iterate (Sincronia, SIGCOMM 2018), filling positions from the last.

    At each step: ``b`` = most loaded port of the unscheduled set ``A`` (ties: lowest index,
    ingress before egress); ``f`` = ``argmin_{j in A, p_bj > 0} w'_j / p_bj`` (ties: lowest
    position) goes last among ``A``; scale ``w'_j -= w'_f p_bj / p_bf`` for ``j in A``.
    Coflows without load go first.  Ignores releases and Starts-After edges (the offline
    ``r = 0`` setting of the 2-approximation for the order, 4 for the schedule).
    """
    inst = instance
    p = coflow_port_loads(inst)
    w = np.array(inst.coflow_weight if weights is None else weights, dtype=np.float64)
    order, b, beta = bssi_trace(p, w)
    dual = 0.0
    steps = np.flatnonzero(b >= 0)[::-1]  # filled from the last position
    for k in steps:
        col = p[order[: k + 1], b[k]]  # the unscheduled set A at that step
        dual += float(beta[k]) * _f(col[col > 0])
    return BSSIResult(order, dual, b[steps], beta[steps])


@dataclass(frozen=True)
class JobOrderResult:
    """The primal-dual job order of Shafiee and Ghaderi (ToN 2021, Appendix).

    ``order``: job positions, first first; ``dual``: the dual objective (``<= LP*`` of (3));
    ``steps``: ``"release"`` or ``"load"`` per position (first to last); ``D``: effective size of
    the prefix aggregate ``D_{sigma(k)}`` per job; ``R``: largest key ``T_j + rho_j`` among the
    first ``k`` jobs, per job; ``bound_sum = sum_k w_{sigma(k)} (R_k + D_{sigma(k)})`` (at most
    ``max(1 + 1/kappa, 2 (1 + kappa)) * dual``, [C]: our charging argument); ``key_sum`` the same
    with each job's own key ``T_j + rho_j`` (G-DM's grouping key).
    """

    order: np.ndarray
    dual: float
    steps: tuple[str, ...]
    D: np.ndarray
    R: np.ndarray
    bound_sum: float
    key_sum: float
    kappa: float

    @property
    def factor(self) -> float:
        """``max(1 + 1/kappa, 2 (1 + kappa))``: the proven ratio of ``bound_sum`` to ``dual``."""
        return max(1.0 + 1.0 / self.kappa, 2.0 * (1.0 + self.kappa))


def primal_dual_job_order(instance: Instance, kappa: float = 0.5) -> JobOrderResult:
    """Combinatorial primal-dual job ordering (Shafiee and Ghaderi, ToN 2021, Appendix: the role
    [R], the steps [C], after Mastrolilli et al. 2010 and Ahmadi et al., IPCO 2017).

    Positions are filled from the last: with ``U`` the unscheduled jobs, ``L`` their port
    loads, ``mu = argmax L`` and ``j* = argmax_{U} (T_j + rho_j)`` (ties: lowest index): a
    *release step* puts ``j*`` last when ``T_{j*} + rho_{j*} > kappa L[mu]`` (``alpha_{j*} =``
    its residual weight); otherwise a *load step* puts last the job minimising ``w'_j /
    d[j][mu]`` (``beta_{mu,U} = theta``) and scales the residual weights.  With only the load
    step this is BSSI.
    """
    if not kappa > 0:
        raise ValueError(f"kappa: must be > 0, got {kappa}")
    inst = instance
    d = job_port_loads(inst)
    key = inst.critical_path + inst.job_release
    w = inst.job_weight.astype(np.float64).copy()
    n = inst.n_jobs
    alive = np.ones(n, dtype=bool)
    L = d.sum(axis=0)
    tail: list[int] = []
    steps: list[str] = []
    dual = 0.0
    for _ in range(n):
        U = np.flatnonzero(alive)
        mu = int(np.argmax(L))
        jstar = int(U[int(np.argmax(key[U]))])
        cand = U[d[U, mu] > 0]
        if key[jstar] > kappa * L[mu] or cand.size == 0:
            j = jstar
            dual += max(w[j], 0.0) * key[j]
            w[j] = 0.0
            steps.append("release")
        else:
            ratio = w[cand] / d[cand, mu]
            j = int(cand[int(np.argmin(ratio))])
            theta = max(float(w[j] / d[j, mu]), 0.0)
            dual += theta * _f(d[U, mu][d[U, mu] > 0])
            w[U] -= theta * d[U, mu]
            w[j] = 0.0
            steps.append("load")
        tail.append(j)
        alive[j] = False
        L = L - d[j]
        L[np.abs(L) < 1e-12] = 0.0
    order = np.array(tail[::-1], dtype=np.int64)
    prefix = np.cumsum(d[order], axis=0)
    Dk = prefix.max(axis=1) if prefix.size else np.zeros(0)
    Rk = np.maximum.accumulate(key[order]) if order.size else np.zeros(0)
    D = np.empty(n)
    R = np.empty(n)
    D[order], R[order] = Dk, Rk
    wj = inst.job_weight
    return JobOrderResult(order, dual, tuple(steps[::-1]), D, R,
                          float(np.dot(wj[order], Rk + Dk)),
                          float(np.dot(wj[order], key[order] + Dk)), float(kappa))

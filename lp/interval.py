"""Interval-indexed LP lower bounds with geometric intervals, for weighted CCT and weighted JCT.

After the interval-indexed relaxation of Qiu, Stein and Zhong, *Minimizing the total weighted
completion time of coflows in datacenter networks* (SPAA 2015, section 3): time is cut into
geometric intervals and a coflow chooses (fractionally) the interval it completes in; its cost
is the interval's left end.  The size is about ``N log_{1+eps} T`` variables instead of the
``N^2`` of the ordering LPs or the ``F T`` of time-indexed ones, so it reaches the FB2010 trace.
The exact form below is ours [C] (cumulative variables, release-aware right-hand sides, the
coflow's own lower bound in the cost, an open last interval); the validity proof is given here.

**Grid** (:func:`geometric_grid`): ``tau_0 = 0``, ``tau_l = t_1 (1+eps)^{l-1}`` for
``l = 1..L``, with ``L`` the first index where ``tau_L >= T`` (the horizon).  Interval ``l`` is
``I_l = (tau_{l-1}, tau_l]`` for ``l = 1..L`` and ``I_{L+1} = (tau_L, inf)`` (open: no horizon
can make the LP invalid, it only makes the last interval coarse).

**Variables** (column block ``"X"``, shape ``(n_coflows, L)``; entry ``[k, l-1]``):
``X_{k,l} in [0, 1]``, read "coflow ``k`` has completed by ``tau_l``" (cumulative form; the
interval indicators of the paper are ``x_{kl} = X_{k,l} - X_{k,l-1}``).  ``X_{k,l}`` is fixed at
0 for ``tau_l < E_k`` where ``E_k`` is the coflow's earliest completion (release plus isolation
time ``C_k^0 = max_i p_{ik} / B_i``, propagated along Starts-After edges:
``Instance.earliest_completion``); ``X_{k,L+1} := 1``.  Let ``a_k`` be the first free index.
With ``objective="weighted_jct"`` a second block ``"Z"`` (shape ``(n_jobs, L)``) holds
``Z_{j,l}`` (job ``j`` completed by ``tau_l``), fixed at 0 below the job's lower bound ``J_j``
(``coflowopt.bounds.job_completion_bound``: ``rho_j + max(T_j, Delta_j)`` and coflow ``E``).

**Cost.**  With ``c_{k,l} = max(tau_{l-1}, E_k)`` (nondecreasing in ``l``), coflow ``k``
costs ``sum_{l >= a_k} c_{k,l} (X_{k,l} - X_{k,l-1})
= c_{k,L+1} + sum_{l=a_k}^{L} (c_{k,l} - c_{k,l+1}) X_{k,l}``: the second form is what the
model stores (the constant goes to the offset).  The objective is ``sum_k w_k`` of it
(``weighted_completion``), or ``sum_j w_j`` of the same with ``Z`` and ``J_j`` (``weighted_jct``).

**Rows.**

- (M) ``X_{k,l-1} <= X_{k,l}`` (and the same for ``Z``);
- (P) for every port ``i`` (ingress and egress, capacity ``B_i``, ``p_{ik}`` the load of
  coflow ``k`` on it, ``s_i`` the earliest release of a coflow using it) and every ``l``:
  ``sum_k p_{ik} X_{k,l} <= B_i (tau_l - s_i)``; rows that cannot bind (every coflow on the port
  fits) and empty rows are left out;
- (S) for every Starts-After edge ``q -> k``: ``X_{k,l} <= X_{q,h(l)}`` with
  ``h(l) = min{h >= 1 : tau_h >= tau_l - C_k^0}``;
- (J) (``weighted_jct``) ``Z_{j,l} <= X_{k,l}`` for every coflow ``k`` of job ``j``.

**Theorem** (lower bound).  For every feasible (preemptive, fluid) schedule with coflow
completions ``C_k`` and job completions ``D_j = max_{k in j} C_k``, the point
``X_{k,l} = [C_k <= tau_l]``, ``Z_{j,l} = [D_j <= tau_l]`` is feasible and its objective is at
most the schedule's ``sum w C`` (resp. ``sum w D``).  Hence LP optimum ``<= OPT``.

*Proof.*  Box: 0/1 values.  Fixings: ``C_k >= E_k`` (a coflow cannot start before its release
and its predecessors' completions, and needs its isolation time after that), so
``C_k <= tau_l`` is impossible for ``tau_l < E_k``; likewise ``D_j >= J_j``.  (M): ``[C <= tau]``
is nondecreasing in ``tau``.  (P): the coflows with ``C_k <= tau_l`` have sent all their load
on port ``i`` by ``tau_l`` and none before their releases, all ``>= s_i``; port ``i`` sends at
most ``B_i`` per time unit, so that load is at most ``B_i (tau_l - s_i)``.  (S): ``k`` starts
only after ``q`` completes and then needs at least ``C_k^0``, so ``C_k <= tau_l`` implies
``C_q <= tau_l - C_k^0 <= tau_{h(l)}``.  (J): ``D_j <= tau_l`` implies ``C_k <= tau_l``.
Objective: if ``C_k in I_l`` the point puts ``X_{k,l'} - X_{k,l'-1} = 1`` at ``l' = l`` only,
costing ``c_{k,l} = max(tau_{l-1}, E_k) <= C_k`` (``C_k > tau_{l-1}`` and ``C_k >= E_k``).
Summing with weights ``w_k >= 0`` gives at most ``sum_k w_k C_k``.  The LP minimum is at most
the value of this point, for the optimal schedule in particular.  []

Loss against ``OPT``: the cost charges a left end, so integral points lose at most a factor
``1 + eps`` on completions above ``t_1``; the LP's own gap is the usual relaxation gap.  The
bound is computed by :func:`coflowopt.lp.certify.certified_solve` (PDLP by default), so an
inexact or time-limited solve still returns a certified lower bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from coflowopt.model import Instance

from .certify import CertifiedBound, certified_solve
from .model import LinearProgram, ModelBuilder, SolveParams, Status

__all__ = [
    "IntervalBound",
    "IntervalParams",
    "geometric_grid",
    "interval_lower_bound",
    "interval_lp",
]


def geometric_grid(horizon: float, eps: float, first: float = 1.0) -> np.ndarray:
    """Interval boundaries ``tau_0 = 0 < tau_1 = first < ... < tau_L`` with
    ``tau_l = first (1+eps)^{l-1}`` and ``L`` the first index with ``tau_L >= horizon``
    (``L = 1`` when ``horizon <= first``).  Interval ``l`` is ``(tau_{l-1}, tau_l]``; models
    built on it add an open interval ``(tau_L, inf)``.  Same time unit as ``horizon``."""
    if not (eps > 0) or not math.isfinite(eps):
        raise ValueError(f"geometric_grid: eps must be a positive number, got {eps}")
    if not (first > 0) or not math.isfinite(first):
        raise ValueError(f"geometric_grid: first must be a positive number, got {first}")
    if not math.isfinite(horizon):
        raise ValueError(f"geometric_grid: horizon must be finite, got {horizon}")
    L = 1 if horizon <= first else 1 + math.ceil(math.log(horizon / first) / math.log1p(eps))
    tau = first * (1.0 + eps) ** np.arange(L, dtype=np.float64)
    while tau[-1] < horizon:  # guard against rounding of the logarithm
        tau = np.r_[tau, tau[-1] * (1.0 + eps)]
    return np.r_[0.0, tau]


@dataclass(frozen=True)
class IntervalParams:
    """Parameters of :func:`interval_lp`.

    - ``eps``: grid ratio ``1 + eps`` (smaller: tighter and larger, ``L ~ log(T/t_1)/eps``);
    - ``objective``: ``"weighted_completion"`` (coflows, ``sum w_k C_k``, absolute times) or
      ``"weighted_jct"`` (jobs);
    - ``horizon``: ``T`` (``None``: the largest release plus the busiest port's total load, a
      makespan no optimal schedule needs to pass by much; any value keeps the LP valid);
    - ``first``: ``t_1`` (``None``: the smallest positive earliest completion ``E_k``; no
      completion lies below it).
    """

    eps: float = 0.05
    objective: str = "weighted_completion"
    horizon: float | None = None
    first: float | None = None

    def __post_init__(self) -> None:
        if self.objective not in ("weighted_completion", "weighted_jct"):
            raise ValueError("IntervalParams.objective: expected 'weighted_completion' or "
                             f"'weighted_jct', got {self.objective!r}")
        if not (self.eps > 0):
            raise ValueError(f"IntervalParams.eps: must be > 0, got {self.eps}")


def _port_loads(inst: Instance) -> sp.coo_matrix:
    """``p_{ik} / B_i`` as a ``(C, 2m)`` COO matrix (ingress ports, then egress)."""
    li, lo = inst.port_loads
    cap = np.r_[inst.fabric.capacity_in, inst.fabric.capacity_out]
    both = sp.hstack([li, lo], format="csr")
    return sp.coo_matrix(both.multiply(1.0 / cap[None, :]))


def _grid(inst: Instance, p: IntervalParams, E: np.ndarray, loads: sp.coo_matrix) -> np.ndarray:
    if p.horizon is not None:
        T = float(p.horizon)
    else:
        busiest = float(np.bincount(loads.col, weights=loads.data,
                                    minlength=2 * inst.ports).max(initial=0.0))
        T = float(inst.release.max(initial=0.0)) + busiest
    pos = E[E > 0]
    first = p.first if p.first is not None else float(pos.min()) if pos.size else 1.0
    return geometric_grid(max(T, first, float(E.max(initial=0.0))), p.eps, first)


def _cost_block(bld: ModelBuilder, name: str, tau: np.ndarray, lb: np.ndarray,
                w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Columns ``name[k, l-1] = [done by tau_l]`` fixed at 0 below ``lb``; returns the column
    indices, the first free index ``a_k`` (1-based) and the objective's constant."""
    L = tau.size - 1
    a = np.searchsorted(tau[1:], lb, side="left") + 1  # first l with tau_l >= lb
    ls = np.arange(1, L + 2)
    c = np.maximum(tau[ls - 1][None, :], lb[:, None])  # c_{k,l}, l = 1..L+1
    coef = w[:, None] * (c[:, :-1] - c[:, 1:])
    free = ls[None, :-1] >= a[:, None]
    cols = bld.add_columns(name, (lb.size, L), ub=free.astype(np.float64),
                           cost=np.where(free, coef, 0.0))
    # (M) monotone in l
    k, h = np.nonzero(free[:, 1:] & free[:, :-1])
    if k.size:
        r = np.arange(k.size)
        bld.add_rows(f"{name}_monotone", k.size, np.r_[r, r],
                     np.r_[cols[k, h], cols[k, h + 1]], np.r_[np.ones(k.size), -np.ones(k.size)],
                     upper=0.0)
    return cols, a, float(np.dot(w, c[:, -1]))


def _port_rows(bld: ModelBuilder, inst: Instance, X: np.ndarray, a: np.ndarray,
               tau: np.ndarray, loads: sp.coo_matrix) -> None:
    L = tau.size - 1
    k, port, p = loads.row, loads.col, loads.data
    keep = (p > 0) & (a[k] <= L)
    k, port, p = k[keep], port[keep], p[keep]
    if not k.size:
        return
    s = np.full(2 * inst.ports, np.inf)
    np.minimum.at(s, port, inst.release[k].astype(np.float64))
    reps = L - a[k] + 1
    kk, pp, qq = np.repeat(k, reps), np.repeat(port, reps), np.repeat(p, reps)
    # l runs a_k..L for each (coflow, port) pair
    start = np.repeat(np.cumsum(reps) - reps, reps)
    ll = np.arange(kk.size) - start + np.repeat(a[k], reps)
    key = pp * L + (ll - 1)
    rhs_all = tau[ll] - s[pp]
    total = np.bincount(key, weights=qq, minlength=2 * inst.ports * L)
    # only rows that can bind: the coflows on the port do not all fit by tau_l
    binding = total[key] > rhs_all * (1 + 1e-12)
    kk, ll, qq, key, rhs_all = kk[binding], ll[binding], qq[binding], key[binding], \
        rhs_all[binding]
    if not kk.size:
        return
    uniq, row = np.unique(key, return_inverse=True)
    rhs = np.zeros(uniq.size)
    rhs[row] = rhs_all
    bld.add_rows("port", uniq.size, row, X[kk, ll - 1], qq, upper=rhs)


def _precedence_rows(bld: ModelBuilder, inst: Instance, X: np.ndarray, a: np.ndarray,
                     tau: np.ndarray) -> None:
    e = inst.starts_after
    if not e.size:
        return
    L = tau.size - 1
    q, k = e[:, 0].astype(np.int64), e[:, 1].astype(np.int64)
    reps = np.maximum(L - a[k] + 1, 0)
    qq, kk = np.repeat(q, reps), np.repeat(k, reps)
    start = np.repeat(np.cumsum(reps) - reps, reps)
    ll = np.arange(kk.size) - start + np.repeat(a[k], reps)
    iso = np.asarray(inst.isolation_time)[kk]
    h = np.maximum(np.searchsorted(tau, tau[ll] - iso, side="left"), 1)
    h = np.minimum(h, ll)
    n = kk.size
    r = np.arange(n)
    bld.add_rows("starts_after", n, np.r_[r, r], np.r_[X[kk, ll - 1], X[qq, h - 1]],
                 np.r_[np.ones(n), -np.ones(n)], upper=0.0)


def _job_rows(bld: ModelBuilder, inst: Instance, X: np.ndarray, Z: np.ndarray, b: np.ndarray,
              tau: np.ndarray) -> None:
    L = tau.size - 1
    k = np.arange(inst.n_coflows)
    j = np.asarray(inst.coflow_job, dtype=np.int64)
    reps = np.maximum(L - b[j] + 1, 0)
    kk, jj = np.repeat(k, reps), np.repeat(j, reps)
    start = np.repeat(np.cumsum(reps) - reps, reps)
    ll = np.arange(kk.size) - start + np.repeat(b[j], reps)
    n = kk.size
    if n:
        r = np.arange(n)
        bld.add_rows("job", n, np.r_[r, r], np.r_[Z[jj, ll - 1], X[kk, ll - 1]],
                     np.r_[np.ones(n), -np.ones(n)], upper=0.0)


def _job_lower_bound(inst: Instance, E: np.ndarray) -> np.ndarray:
    """``J_j = max(rho_j + Delta_j, max_{k in j} E_k)``: the job bound of
    ``coflowopt.bounds.job_completion_bound``, computed here because ``coflowopt.bounds`` adds
    this LP to its bounds (importing it back would make the two modules need each other)."""
    out = np.asarray(inst.job_release + inst.aggregate_size, dtype=np.float64).copy()
    np.maximum.at(out, np.asarray(inst.coflow_job, dtype=np.int64), E)
    return out


def interval_lp(instance: Instance, params: IntervalParams | None = None) -> LinearProgram:
    """The interval-indexed LP of the module docstring (a minimisation; its optimum is a lower
    bound on ``params.objective``).  ``meta["tau"]`` holds the grid."""
    inst = instance
    p = params or IntervalParams()
    E = np.asarray(inst.earliest_completion, dtype=np.float64)
    loads = _port_loads(inst)
    tau = _grid(inst, p, E, loads)
    bld = ModelBuilder(f"interval_{p.objective}")
    w_c = np.asarray(inst.coflow_weight, dtype=np.float64)
    jct = p.objective == "weighted_jct"
    X, a, const = _cost_block(bld, "X", tau, E, np.zeros_like(w_c) if jct else w_c)
    if jct:
        J = _job_lower_bound(inst, E)
        Z, b, const = _cost_block(bld, "Z", tau, J, np.asarray(inst.job_weight, np.float64))
        _job_rows(bld, inst, X, Z, b, tau)
    _port_rows(bld, inst, X, a, tau, loads)
    _precedence_rows(bld, inst, X, a, tau)
    return bld.build(offset=const, meta={"tau": tau, "objective": p.objective, "eps": p.eps})


@dataclass(frozen=True)
class IntervalBound:
    """A certified interval-LP lower bound: ``value`` (the certified bound, ``-inf`` if none),
    ``bound`` (how it was obtained: primal/dual values, gap, solver, status, iterations),
    ``intervals`` ``L``, model size, and ``seconds`` (build + solve + certification)."""

    value: float
    bound: CertifiedBound
    intervals: int
    columns: int
    rows: int
    nonzeros: int
    seconds: float

    @property
    def certified(self) -> bool:
        return self.bound.certified


def interval_lower_bound(instance: Instance, params: IntervalParams | None = None,
                         solve_params: SolveParams | None = None) -> IntervalBound:
    """Build :func:`interval_lp` and return its certified lower bound (default solver:
    :data:`coflowopt.lp.certify.PDLP`; pass e.g. ``SolveParams(method="simplex")`` for an
    exact solve of a small instance)."""
    t0 = time.perf_counter()
    lp = interval_lp(instance, params)
    if lp.n_cols == 0:
        res = CertifiedBound(lp.offset, True, lp.offset, lp.offset, 0.0, "none", Status.OPTIMAL,
                             0.0, 0)
    else:
        res = certified_solve(lp, solve_params)
    seconds = time.perf_counter() - t0
    return IntervalBound(res.value, replace(res, seconds=seconds), lp.meta["tau"].size - 1,
                         lp.n_cols, lp.n_rows, lp.nnz, seconds)

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

**Per-coflow grids** (``IntervalParams.grid="release"``).  With releases spread over an hour
(FB2010) a global geometric grid is seconds to minutes wide where late coflows complete, and
(P) with one ``s_i`` per port never binds.  The second form gives coflow ``k`` its own grid
``T_{k,0} = r_k``, ``T_{k,l} = r_k + b_k (1+eps)^{l-1}`` (``b_k = E_k - r_k``, the coflow's
smallest CCT), so ``X_{k,l} = [C_k <= T_{k,l}]`` and ``c_{k,l} = max(T_{k,l-1}, E_k)``, and
replaces (P) by window rows

- (W) for every port ``i``, window start ``s`` (a release of a coflow on ``i``) and end
  ``t = s + G_h`` (geometric lengths ``G_h``, same ratio):
  ``sum_{k on i, r_k >= s} p_{ik} X_{k, lam_k(t)} <= B_i (t - s)``, with
  ``lam_k(t) = max{l : T_{k,l} <= t}`` (a coflow with no grid point by ``t`` drops out).

(S) and (J) use ``h = min{h : T_{q,h} >= T_{k,l} - C_k^0}`` and
``mu = min{h : T_{k,h} >= T^Z_{j,l}}`` on the grids of the coflows and jobs concerned (no row
when there is no such point: ``X_{q,L+1} = 1``).  Only rows that can bind are written.

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
(W): the coflows released at or after ``s`` send their load on port ``i`` within ``[s, t]``
if they complete by ``t``, at most ``B_i (t - s)`` in all, and ``X_{k,lam_k(t)} = 1`` only if
``C_k <= T_{k,lam_k(t)} <= t``.  The per-coflow forms of (S), (J) and the cost follow by the
same arguments with ``T_{k,l}`` in place of ``tau_l`` (``C_k > T_{k,l-1}`` in interval ``l``,
the first interval ``(r_k, T_{k,1}]`` charging ``E_k``).
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
      completion lies below it);
    - ``grid``: ``"global"`` (one grid, rows (P)) or ``"release"`` (a grid per coflow starting
      at its release, rows (W); see the module docstring): the second keeps its resolution
      for coflows released late, where a global geometric grid is coarse; ``"auto"``
      (default): global when every coflow has the same release, else per coflow.  Measured
      on FB2010 (eps 0.1, PDLP): batch, global 18.67e6 against per-coflow 17.82e6; with the
      arrivals, global no better than the isolation bound, per-coflow 19% above it (sum of
      CCTs).
    """

    eps: float = 0.05
    objective: str = "weighted_completion"
    horizon: float | None = None
    first: float | None = None
    grid: str = "auto"

    def __post_init__(self) -> None:
        if self.objective not in ("weighted_completion", "weighted_jct"):
            raise ValueError("IntervalParams.objective: expected 'weighted_completion' or "
                             f"'weighted_jct', got {self.objective!r}")
        if not (self.eps > 0):
            raise ValueError(f"IntervalParams.eps: must be > 0, got {self.eps}")
        if self.grid not in ("auto", "global", "release"):
            raise ValueError(f"IntervalParams.grid: expected 'auto', 'global' or 'release', "
                             f"got {self.grid!r}")


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


def _cost_block(bld: ModelBuilder, name: str, T: np.ndarray, lb: np.ndarray,
                w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Columns ``name[k, l-1] = [done by T[k, l]]`` (``T`` of shape ``(n, L+1)``, row ``k``
    increasing, ``T[k, 0]`` the start of the first interval) fixed at 0 where
    ``T[k, l] < lb_k``; returns the column indices, the first free index ``a_k`` (1-based,
    ``L + 1`` when none) and the objective's constant ``sum_k w_k c_{k,L+1}``."""
    n, L = T.shape[0], T.shape[1] - 1
    fits = T[:, 1:] >= lb[:, None]
    a = np.where(fits.any(axis=1), fits.argmax(axis=1) + 1, L + 1)
    c = np.maximum(T, lb[:, None])  # c_{k,l} = max(T[k, l-1], lb_k), l = 1..L+1
    coef = w[:, None] * (c[:, :-1] - c[:, 1:])
    free = np.arange(1, L + 1)[None, :] >= a[:, None]
    cols = bld.add_columns(name, (n, L), ub=free.astype(np.float64),
                           cost=np.where(free, coef, 0.0))
    # (M) monotone in l
    k, h = np.nonzero(free[:, 1:] & free[:, :-1])
    if k.size:
        r = np.arange(k.size)
        bld.add_rows(f"{name}_monotone", k.size, np.r_[r, r],
                     np.r_[cols[k, h], cols[k, h + 1]], np.r_[np.ones(k.size), -np.ones(k.size)],
                     upper=0.0)
    return cols, a, float(np.dot(w, c[:, -1]))


def _first_at_least(row: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``min{h >= 1 : row[h] >= v}`` for each ``v`` (``row.size`` when none)."""
    return np.maximum(np.searchsorted(row, values, side="left"), 1)


def _port_rows(bld: ModelBuilder, inst: Instance, X: np.ndarray, a: np.ndarray,
               tau: np.ndarray, loads: sp.coo_matrix) -> None:
    """(P) on the global grid ``tau``: one row per (port, l)."""
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
                     T: np.ndarray) -> None:
    """(S): ``X_{k,l} <= X_{q,h(l)}``, ``h(l) = min{h >= 1 : T[q,h] >= T[k,l] - C_k^0}``
    (no row when no such ``h <= L``: ``X_{q,L+1} = 1``)."""
    e = inst.starts_after
    if not e.size:
        return
    L = T.shape[1] - 1
    iso = np.asarray(inst.isolation_time, dtype=np.float64)
    rows_k, rows_q = [], []
    for q, k in e.astype(np.int64).tolist():
        ls = np.arange(a[k], L + 1)
        h = _first_at_least(T[q], T[k, ls] - iso[k])
        ok = h <= L
        rows_k.append(X[k, ls[ok] - 1])
        rows_q.append(X[q, h[ok] - 1])
    xk, xq = np.concatenate(rows_k), np.concatenate(rows_q)
    n = xk.size
    if n:
        r = np.arange(n)
        bld.add_rows("starts_after", n, np.r_[r, r], np.r_[xk, xq],
                     np.r_[np.ones(n), -np.ones(n)], upper=0.0)


def _job_rows(bld: ModelBuilder, inst: Instance, X: np.ndarray, Z: np.ndarray, b: np.ndarray,
              TX: np.ndarray, TZ: np.ndarray) -> None:
    """(J): ``Z_{j,l} <= X_{k,mu}``, ``mu = min{h >= 1 : TX[k,h] >= TZ[j,l]}`` for every
    coflow ``k`` of job ``j`` (no row when ``mu > L``)."""
    LX, LZ = TX.shape[1] - 1, TZ.shape[1] - 1
    jobs = np.asarray(inst.coflow_job, dtype=np.int64)
    zs, xs = [], []
    for k, j in enumerate(jobs.tolist()):
        ls = np.arange(b[j], LZ + 1)
        mu = _first_at_least(TX[k], TZ[j, ls])
        ok = mu <= LX
        zs.append(Z[j, ls[ok] - 1])
        xs.append(X[k, mu[ok] - 1])
    z, x = (np.concatenate(zs), np.concatenate(xs)) if zs else (np.zeros(0), np.zeros(0))
    n = z.size
    if n:
        r = np.arange(n)
        bld.add_rows("job", n, np.r_[r, r], np.r_[z, x], np.r_[np.ones(n), -np.ones(n)],
                     upper=0.0)


def _relative_grid(start: np.ndarray, lb: np.ndarray, horizon: float,
                   eps: float) -> np.ndarray:
    """Per-row grids ``T[k, 0] = start_k``, ``T[k, l] = start_k + b_k (1+eps)^{l-1}`` with
    ``b_k = lb_k - start_k`` (the smallest positive one where that is 0), one common ``L``
    reaching ``horizon`` from the smallest ``b``; points past the horizon are clipped to it
    (equal points are consistent, ``[C <= t]`` twice, and the cost differences stay of the
    size of the data: unclipped, rows with a large ``b_k`` ran to ``1e11`` and PDLP failed)."""
    d = lb - start
    pos = d[d > 0]
    bmin = float(pos.min()) if pos.size else 1.0
    b = np.where(d > 0, d, bmin)
    g = geometric_grid(max(horizon - float(start.min(initial=0.0)), bmin), eps, bmin)
    L = g.size - 1
    steps = (1.0 + eps) ** np.arange(L, dtype=np.float64)
    T = start[:, None] + b[:, None] * steps[None, :]
    cap = max(float(horizon), float((start + b).max(initial=0.0)))
    return np.c_[start, np.minimum(T, cap)]


def _window_rows(bld: ModelBuilder, inst: Instance, X: np.ndarray, T: np.ndarray,
                 loads: sp.coo_matrix, eps: float) -> None:
    """(W) on per-coflow grids: for every port ``i``, window start ``s`` (a release of a
    coflow on ``i``) and window end ``t = s + G_h`` (geometric lengths ``G_h``):
    ``sum_{k on i, r_k >= s} p_{ik} X_{k,lam_k(t)} <= B_i (t - s)`` with
    ``lam_k(t) = max{l : T[k,l] <= t}`` (terms with ``lam = 0`` are 0); only rows that can
    bind."""
    L = T.shape[1] - 1
    rel = np.asarray(inst.release, dtype=np.float64)
    order = np.argsort(loads.col, kind="stable")
    kk_all, pp_all, qq_all = loads.row[order], loads.col[order], loads.data[order]
    bounds = np.searchsorted(pp_all, np.arange(2 * inst.ports + 1))
    rows, cols, vals, rhs = [], [], [], []
    n_rows = 0
    for i in range(2 * inst.ports):
        K = kk_all[bounds[i]:bounds[i + 1]]
        P = qq_all[bounds[i]:bounds[i + 1]]
        if K.size < 2:
            continue  # one coflow alone: its own bottleneck is in E_k already
        r, t1 = rel[K], T[K, 1]
        S = np.unique(r)
        G = geometric_grid(float(T[K, L].max() - S[0]), eps, float((t1 - r).min()))[1:]
        for s in S.tolist():
            inw = r >= s
            t = s + G
            M = inw[None, :] & (t1[None, :] <= t[:, None])  # (H, |K|): done-able by t
            load = M.astype(np.float64) @ P
            bind = np.flatnonzero(load > (t - s) * (1 + 1e-12))
            for h in bind.tolist():
                m = np.flatnonzero(M[h])
                km = K[m]
                lam = (T[km, 1:] <= t[h]).sum(axis=1)  # the points at or before t
                rows.append(np.full(m.size, n_rows))
                cols.append(X[km, lam - 1])
                vals.append(P[m])
                rhs.append(t[h] - s)
                n_rows += 1
    if n_rows:
        bld.add_rows("window", n_rows, np.concatenate(rows), np.concatenate(cols),
                     np.concatenate(vals), upper=np.asarray(rhs))


def _job_lower_bound(inst: Instance, E: np.ndarray) -> np.ndarray:
    """``J_j = max(rho_j + Delta_j, max_{k in j} E_k)``: the job bound of
    ``coflowopt.bounds.job_completion_bound``, computed here because ``coflowopt.bounds`` adds
    this LP to its bounds (importing it back would make the two modules need each other)."""
    out = np.asarray(inst.job_release + inst.aggregate_size, dtype=np.float64).copy()
    np.maximum.at(out, np.asarray(inst.coflow_job, dtype=np.int64), E)
    return out


def interval_lp(instance: Instance, params: IntervalParams | None = None) -> LinearProgram:
    """The interval-indexed LP of the module docstring (a minimisation; its optimum is a lower
    bound on ``params.objective``).  ``meta["grid"]`` holds the interval ends (``(L+1,)`` for
    the global grid, ``(n_coflows, L+1)`` per coflow for ``grid="release"``)."""
    inst = instance
    p = params or IntervalParams()
    E = np.asarray(inst.earliest_completion, dtype=np.float64)
    loads = _port_loads(inst)
    tau = _grid(inst, p, E, loads)
    n = inst.n_coflows
    rel = np.asarray(inst.release, dtype=np.float64)
    if p.grid == "auto":
        same = bool(np.all(rel == rel[0])) if n else True
        p = replace(p, grid="global" if same else "release")
    if p.grid == "global":
        TX = np.broadcast_to(tau, (n, tau.size))
    else:
        TX = _relative_grid(rel, E, float(tau[-1]), p.eps)
    bld = ModelBuilder(f"interval_{p.objective}")
    w_c = np.asarray(inst.coflow_weight, dtype=np.float64)
    jct = p.objective == "weighted_jct"
    X, a, const = _cost_block(bld, "X", TX, E, np.zeros_like(w_c) if jct else w_c)
    if jct:
        J = _job_lower_bound(inst, E)
        rho = np.asarray(inst.job_release, dtype=np.float64)
        TZ = np.broadcast_to(tau, (J.size, tau.size)) if p.grid == "global" else \
            _relative_grid(rho, J, float(tau[-1]), p.eps)
        Z, b, const = _cost_block(bld, "Z", TZ, J, np.asarray(inst.job_weight, np.float64))
        _job_rows(bld, inst, X, Z, b, TX, TZ)
    if p.grid == "global":
        _port_rows(bld, inst, X, a, tau, loads)
    else:
        _window_rows(bld, inst, X, TX, loads, p.eps)
    _precedence_rows(bld, inst, X, a, TX)
    grid = tau if p.grid == "global" else np.asarray(TX)
    return bld.build(offset=const, meta={"grid": grid, "tau": tau, "objective": p.objective,
                                         "eps": p.eps, "grid_kind": p.grid})


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
    return IntervalBound(res.value, replace(res, seconds=seconds), lp.block("X").shape[1],
                         lp.n_cols, lp.n_rows, lp.nnz, seconds)

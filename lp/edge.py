"""The edge-level time-indexed LP of coflow scheduling in unit slots, and the unit-edge data it
is written on.

Model (Rohwedder and Schnaars, *3.415-Approximation for Coflow Scheduling via Iterated
Rounding*, ICALP 2025, arXiv 2502.21197, Sec. 1 [R]): a bipartite multigraph whose edges are
grouped into coflows ``E_j`` of weight ``w_j``; in each unit time step the scheduled edges form
a matching, every edge is scheduled once, and coflow ``j`` completes at the step of its last
edge; the objective is ``sum_j w_j C_j``.  The paper's own LP could not be read; the LP below
is our reconstruction [C] (the specification's Sec. 3.1).

**Unit edges** (:class:`UnitEdges`, :func:`unit_edges`).  Flows of one coflow on the same
``(src, dst)`` pair are merged first (an explicit step: the units of such flows are
interchangeable in this model); a merged flow ``f`` has multiplicity ``d_f``, the sum of its
members' slot demands ``ceil(volume / quantum)`` [C].  A coflow's slot release is
``r_j = ceil(release / slot)`` with ``slot = quantum / c`` (``c`` the uniform port capacity); its
edges may use slots ``t >= r_j + 1``.

**LP** (cumulative variables keep the matrix sparse; horizon ``T``, slots ``1..T``)::

    minimise   sum_j w_j C_j
    (B)  X_{f,t} = 0 for t <= r_j ;  X_{f,T} = d_f
    (M)  X_{f,t} - X_{f,t-1} >= 0                           every f, t = 1..T
    (P)  sum_{f at p} (X_{f,t} - X_{f,t-1}) <= 1            every loaded port p, t = 1..T
    (L)  y_{j,t} - X_{f,t} / d_f <= 0                       j, f in F_j, t = 1..T-1
    (O)  C_j + sum_{t=1}^{T-1} y_{j,t} >= T                 every j
    (V)  C_j >= r_j + Delta_j                               (Delta_j: j's largest port degree)
         0 <= y_{j,t} <= 1

``X_{f,t}``: units of ``f`` finished in slots ``1..t``; ``y_{j,t}``: the fraction of ``j`` done by
slot ``t``.  With ``T = max_j r_j + |E|`` (:func:`edge_horizon`) it is a relaxation of every
integral schedule (some optimal schedule has no idle slot after ``max r``), so ``LP <= OPT``
(discrete, slots).  ``integral=True`` makes ``X`` and ``y`` integer: the exact discrete optimum
of tiny instances.  Size: about ``F (T + 1) + n T`` columns and ``8 F T + n T`` nonzeros
(:func:`edge_lp_size`).

Post-processing [C] (:class:`EdgeLPSolution`): ``y`` is replaced by its running maximum over
``t`` (still feasible: the right side of (L) is nondecreasing); ``C_hat_j = sum_{t=0}^{T-1}
(1 - y_{j,t}) <= C_j``; the alpha-point ``D_j(alpha) = min{t : y_{j,t} >= alpha}`` satisfies
``X_{f, D_j(alpha)} >= alpha d_f`` for every ``f`` of ``j`` and ``int_0^1 D_j(alpha) d alpha =
C_hat_j``.

The same model on integer interval ends instead of unit slots (``grid``) is the
interval-indexed form; its grid, proofs and solver are in :mod:`coflowopt.lp.edge_interval`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from coflowopt.model import Instance

from .backends import solve
from .model import LinearProgram, ModelBuilder, SolveParams, SolveResult

__all__ = [
    "EdgeLPSolution",
    "UnitEdges",
    "auto_quantum",
    "capacity_refusal",
    "edge_horizon",
    "edge_lp_size",
    "edge_model",
    "edges_for",
    "monotone_rows",
    "quantum_delta",
    "run_refusal",
    "solve_edge_lp",
    "unit_edges",
]

_I64 = np.int64
#: alpha-point tolerance [C]
ALPHA_TOL = 1e-9


def _frozen(a: Any, dtype: Any) -> np.ndarray:
    a = np.array(a, dtype=dtype).reshape(-1)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class UnitEdges:
    """Merged flows as unit-edge multiplicities, in slot units (module docstring).

    Flows (length ``F``): ``src``, ``dst`` (ports ``0..m-1`` each side), ``demand`` (``d_f >= 1``),
    ``coflow`` (position).  Coflows (length ``n``): ``release`` (slot release ``r_j >= 0``),
    ``weight`` (``w_j >= 0``).  ``members``/``member_ptr``: the instance flows merged into
    flow ``f`` are ``members[member_ptr[f]:member_ptr[f+1]]`` (with their own slot demands
    ``member_demand``), so a schedule of units maps back to the instance; ``quantum`` and
    ``slot`` (its length in time units) as used.  Checked on creation."""

    ports: int
    src: np.ndarray
    dst: np.ndarray
    demand: np.ndarray
    coflow: np.ndarray
    release: np.ndarray
    weight: np.ndarray
    members: np.ndarray | None = None
    member_ptr: np.ndarray | None = None
    member_demand: np.ndarray | None = None
    quantum: float = 1.0
    slot: float = 1.0

    def __post_init__(self) -> None:
        for name in ("src", "dst", "demand", "coflow", "release"):
            object.__setattr__(self, name, _frozen(getattr(self, name), _I64))
        object.__setattr__(self, "weight", _frozen(self.weight, np.float64))
        F, n, m = self.src.size, self.release.size, int(self.ports)
        for name in ("dst", "demand", "coflow"):
            if getattr(self, name).size != F:
                raise ValueError(f"UnitEdges.{name}: expected {F} values, got "
                                 f"{getattr(self, name).size}")
        if self.weight.size != n:
            raise ValueError(f"UnitEdges.weight: expected {n} values, got {self.weight.size}")
        checks = (("src", self.src, (self.src < 0) | (self.src >= m)),
                  ("dst", self.dst, (self.dst < 0) | (self.dst >= m)),
                  ("demand", self.demand, self.demand < 1),
                  ("coflow", self.coflow, (self.coflow < 0) | (self.coflow >= n)),
                  ("release", self.release, self.release < 0),
                  ("weight", self.weight, ~np.isfinite(self.weight) | (self.weight < 0)))
        for name, arr, bad in checks:
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise ValueError(f"UnitEdges.{name}[{k}]: invalid value {arr[k]}")

    @property
    def n_flows(self) -> int:
        return int(self.src.size)

    @property
    def n_coflows(self) -> int:
        return int(self.release.size)

    @property
    def units(self) -> int:
        """``|E| = sum_f d_f``."""
        return int(self.demand.sum())

    def port_degree(self) -> np.ndarray:
        """``(n, 2m)`` units of each coflow at each port (ingress ``0..m-1``, egress
        ``m..2m-1``)."""
        out = np.zeros((self.n_coflows, 2 * self.ports), dtype=_I64)
        np.add.at(out, (self.coflow, self.src), self.demand)
        np.add.at(out, (self.coflow, self.ports + self.dst), self.demand)
        return out

    def delta(self) -> np.ndarray:
        """``Delta_j``: each coflow's largest port degree (0 for a coflow without units)."""
        deg = self.port_degree()
        return deg.max(axis=1) if deg.size else np.zeros(self.n_coflows, dtype=_I64)


def unit_edges(instance: Instance, quantum: float = 1.0) -> UnitEdges:
    """The instance's merged flows in slots of ``quantum / c`` (module docstring).  Each
    instance flow needs ``ceil(volume / quantum - 1e-9)`` slots (at least 1 for a positive
    volume; zero-volume flows are dropped); flows of one coflow on one ``(src, dst)`` pair are
    merged, their demands summed.  Needs a uniform fabric (the caller refuses others)."""
    q = float(quantum)
    if not (math.isfinite(q) and q > 0):
        raise ValueError(f"quantum: must be finite and > 0, got {quantum!r}")
    c = float(instance.fabric.capacity_in[0]) if instance.ports else 1.0
    slot = q / c
    vol = instance.flow_volume
    need = np.maximum(np.ceil(vol / q - 1e-9), 1).astype(_I64)
    live = np.flatnonzero(vol > 0)
    m = instance.ports
    key = (instance.flow_coflow[live].astype(_I64) * m + instance.flow_src[live]) * m \
        + instance.flow_dst[live]
    order = np.lexsort((live, key))
    live, key = live[order], key[order]
    uniq, first = np.unique(key, return_index=True)
    ptr = np.r_[first, live.size].astype(_I64)
    demand = np.add.reduceat(need[live], first) if live.size else np.zeros(0, _I64)
    rel = np.maximum(np.ceil(np.maximum(instance.release, 0.0) / slot - 1e-9), 0).astype(_I64)
    return UnitEdges(m, (uniq // m) % m, uniq % m, demand, uniq // (m * m), rel,
                     instance.coflow_weight, members=live, member_ptr=ptr,
                     member_demand=need, quantum=q, slot=slot)


def auto_quantum(instance: Instance, max_units: int = 200_000) -> float:
    """The automatic quantum [C]: 1 on integer volumes (exact), else ``v_min / 4`` (so
    ``delta <= 1/4``), raised to ``V_total / max_units`` when the units would exceed
    ``max_units`` (at most one unit per flow then)."""
    v = instance.flow_volume[instance.flow_volume > 0]
    if v.size == 0:
        return 1.0
    q = 1.0 if np.array_equal(v, np.round(v)) else float(v.min()) / 4.0
    def units(q: float) -> float:
        return float(np.maximum(np.ceil(v / q - 1e-9), 1).sum())

    if units(q) > max_units:
        q = float(v.sum()) / max_units
        # the ceilings add up to F units more; every flow keeps at least one unit, so with
        # more than max_units flows the quantum stops at the largest volume
        while units(q) > max_units and q < float(v.max()):
            q = min(q * 1.25, float(v.max()))
    return q


def quantum_delta(instance: Instance, q: float) -> float:
    """``delta = max_f (d_f q - v_f) / v_f``: the relative volume the rounding adds."""
    v = instance.flow_volume[instance.flow_volume > 0]
    if v.size == 0:
        return 0.0
    d = np.maximum(np.ceil(v / q - 1e-9), 1)
    return float(max(0.0, ((d * q - v) / v).max()))


def edge_horizon(edges: UnitEdges) -> int:
    """``T = max_j r_j + |E|``: an optimal schedule ends by then, so the LP on this
    horizon is ``<= OPT``."""
    live = np.unique(edges.coflow)
    rmax = int(edges.release[live].max()) if live.size else 0
    return max(1, rmax + edges.units)


def edge_lp_size(edges: UnitEdges, horizon: int | None = None, *,
                 grid: np.ndarray | None = None) -> tuple[int, int]:
    """``(columns, nonzeros)`` of :func:`edge_model`, computed before building it (``grid``:
    the interval-indexed form on those interval ends, ``K = grid.size - 1`` intervals)."""
    T = edge_horizon(edges) if horizon is None else int(horizon)
    if grid is not None:
        T = int(np.asarray(grid).size) - 1
    F = edges.n_flows
    n = np.unique(edges.coflow).size
    cols = F * (T + 1) + n * max(T - 1, 0) + n
    # (M) 2 per row, (P) 2 per flow and port side, (L) 2 per row, (O) T per coflow
    nnz = 2 * F * T + 4 * F * T + 2 * F * max(T - 1, 0) + n * T
    return cols, nnz


def edge_model(edges: UnitEdges, *, horizon: int | None = None, integral: bool = False,
               grid: np.ndarray | None = None) -> LinearProgram:
    """The LP of the module docstring as a :class:`~coflowopt.lp.LinearProgram` (blocks ``X``
    ``(F, K+1)``, ``y`` ``(n', K-1)``, ``C`` ``(n',)`` over the ``n'`` coflows with units, in
    coflow order; ``meta["coflows"]`` lists them).  ``integral``: ``X`` and ``y`` integer (the
    exact discrete optimum).  The objective's offset counts ``w_j r_j`` of coflows without
    units (they complete at their release).

    ``grid`` (integer interval ends ``0 = tau_0 < ... < tau_K = T`` holding every release;
    ``None``: unit slots, ``tau_k = k``) gives the interval-indexed form of
    :mod:`coflowopt.lp.edge_interval`: ``X``/``y`` at the interval ends, (P) with right side
    ``tau_k - tau_{k-1}`` and (O) ``C_j >= 1 + sum_k (tau_k - tau_{k-1})(1 - y_{j,k})``; on
    unit slots both are the rows above."""
    if grid is None:
        T = edge_horizon(edges) if horizon is None else int(horizon)
        if T < 1:
            raise ValueError(f"edge_model: horizon must be >= 1, got {T}")
        tau = np.arange(T + 1)
    else:
        tau = np.asarray(grid, dtype=_I64)
        T = int(tau[-1])
    K = tau.size - 1
    ell = np.diff(tau).astype(np.float64)
    F = edges.n_flows
    live = np.unique(edges.coflow)
    n = live.size
    cpos = np.full(edges.n_coflows, -1, dtype=_I64)
    cpos[live] = np.arange(n)
    fc = cpos[edges.coflow]
    d = edges.demand.astype(np.float64)
    r = edges.release
    # (B): X_{f,k} = 0 for tau_k <= r_j, X_{f,K} = d_f; X <= d_f everywhere
    ub = np.broadcast_to(d[:, None], (F, K + 1)).copy()
    ub[tau[None, :] <= r[edges.coflow][:, None]] = 0.0
    lb = np.zeros((F, K + 1))
    lb[:, K] = d
    if (r[edges.coflow] >= T).any():
        raise ValueError(f"edge_model: horizon {T} does not leave a slot after a release")
    if grid is not None and not np.isin(r[live], tau).all():
        raise ValueError("edge_model: every release must be an interval end of the grid")
    b = ModelBuilder("edge_time_indexed" if grid is None else "edge_interval_indexed")
    X = b.add_columns("X", (F, K + 1), lb=lb, ub=ub, integer=integral)
    y = b.add_columns("y", (n, max(K - 1, 0)), lb=0.0, ub=1.0, integer=integral)
    delta = edges.delta()[live]
    C = b.add_columns("C", n, lb=r[live] + delta, cost=edges.weight[live])
    pidx, fl, P = monotone_rows(b, X, edges)
    # (P): per loaded port and interval
    rows = (pidx[:, None] * K + np.arange(K)[None, :]).ravel()
    cols_t = X[fl][:, 1:].ravel()
    cols_p = X[fl][:, :-1].ravel()
    b.add_rows("P", P * K, np.r_[rows, rows], np.r_[cols_t, cols_p],
               np.r_[np.ones(rows.size), -np.ones(rows.size)],
               upper=1.0 if grid is None else np.tile(ell, P))
    if K > 1:
        # (L): y_{j,k} - X_{f,k} / d_f <= 0, k = 1..K-1
        Km = K - 1
        rows = (np.arange(F)[:, None] * Km + np.arange(Km)[None, :]).ravel()
        ycols = y[fc][:, :].ravel()
        xcols = X[:, 1:K].ravel()
        xval = np.repeat(-1.0 / d, Km)
        b.add_rows("L", F * Km, np.r_[rows, rows], np.r_[ycols, xcols],
                   np.r_[np.ones(rows.size), xval], upper=0.0)
    # (O): C_j + sum_k ell_k y_{j,k} >= 1 + tau_{K-1} (= T on unit slots)
    Km = max(K - 1, 0)
    rows = np.r_[np.arange(n), np.repeat(np.arange(n), Km)]
    cols = np.r_[C, y.ravel()]
    coef = 1.0 if grid is None else np.r_[np.ones(n), np.tile(ell[:Km], n)]
    b.add_rows("O", n, rows, cols, coef, lower=float(T) if grid is None else 1.0 + tau[K - 1])
    empty = np.setdiff1d(np.arange(edges.n_coflows), live)
    offset = float(edges.weight[empty] @ r[empty]) if empty.size else 0.0
    return b.build(offset=offset, meta={"horizon": T, "coflows": live, "grid": tau})


def monotone_rows(b: ModelBuilder, X: np.ndarray, edges: UnitEdges
                  ) -> tuple[np.ndarray, np.ndarray, int]:
    """Add ``(M)``: ``X_{f,t} - X_{f,t-1} >= 0`` for the cumulative columns ``X`` ``(F, T+1)``;
    return the port incidence of the flows' two ends, ``(port position, flow, ports)``, for
    the per-port rows (ingress ``0..m-1`` and egress ``m..2m-1`` that carry a flow)."""
    F, T = X.shape[0], X.shape[1] - 1
    k = np.arange(F * T)
    fi, ti = k // T, k % T + 1
    b.add_rows("M", F * T, np.r_[k, k], np.r_[X[fi, ti], X[fi, ti - 1]],
               np.r_[np.ones(k.size), -np.ones(k.size)], lower=0.0)
    ports, pidx = np.unique(np.r_[edges.src, edges.ports + edges.dst], return_inverse=True)
    return pidx, np.r_[np.arange(F), np.arange(F)], int(ports.size)


def capacity_refusal(instance: Instance) -> str | None:
    """Why unit slots cannot model ``instance`` (ports of different capacities), else
    ``None``."""
    fab = instance.fabric
    if fab.is_uniform:
        return None
    cap = np.concatenate([fab.capacity_in, fab.capacity_out])
    k = int(np.flatnonzero(cap != cap[0])[0])
    side, port = ("in", k) if k < fab.ports else ("out", k - fab.ports)
    return (f"unit slots need ports of one capacity; port {side} {port} has capacity "
            f"{cap[k]:g}, port in 0 has {cap[0]:g}")


def run_refusal(instance: Instance, name: str, lp: str) -> str | None:
    """One line on why scheduler ``name`` cannot run ``instance`` with LP form ``lp`` (an
    unknown form; ports of different capacities), else ``None``."""
    if lp not in ("time-indexed", "interval-indexed"):
        return f"{name}: unknown lp {lp!r}; expected 'time-indexed' or 'interval-indexed'"
    why = capacity_refusal(instance)
    return f"{name}: {why}" if why else None


def edges_for(instance: Instance, quantum: float | None, max_units: int) -> UnitEdges | None:
    """:func:`unit_edges` at ``quantum`` (``None``: :func:`auto_quantum`), or ``None`` when
    the instance has nothing to send."""
    if instance.n_flows == 0 or not (instance.flow_volume > 0).any():
        return None
    q = quantum if quantum is not None else auto_quantum(instance, max_units)
    return unit_edges(instance, q)


@dataclass(frozen=True, eq=False)
class EdgeLPSolution:
    """A solved edge LP, post-processed (module docstring).

    ``value``: the LP optimum (slots; ``sum_j w_j C_j`` plus the empty coflows' ``w_j r_j``);
    ``X`` ``(F, K+1)`` and ``y`` ``(n, K+1)`` at the interval ends ``grid`` (``K = T`` unit
    slots for the time-indexed form): ``y`` the monotone profile with ``y_{j,0} = 0`` and
    ``y_{j,K} = 1`` (rows of coflows without units are 1 from their release on); ``C`` the
    LP's ``C_j`` and ``C_hat`` the profile values ``1 + sum_{k<K} (tau_k - tau_{k-1})(1 -
    y_{j,k})`` (``sum_{t<T} (1 - y_{j,t})`` on unit slots; ``r_j`` for a coflow without
    units); ``horizon`` ``T``; ``result`` the solver's; ``grid`` the interval ends (``None``:
    unit slots); ``form`` and ``eps`` name the LP form."""

    value: float
    X: np.ndarray
    y: np.ndarray
    C: np.ndarray
    C_hat: np.ndarray
    horizon: int
    result: SolveResult
    grid: np.ndarray | None = None
    form: str = "time-indexed"
    eps: float | None = None

    @property
    def tau(self) -> np.ndarray:
        """The interval ends ``tau_0 = 0 < ... < tau_K = T`` (slots)."""
        return np.arange(self.horizon + 1) if self.grid is None else self.grid

    def alpha_point(self, alpha: float) -> np.ndarray:
        """``D_j(alpha) = min{tau_k : y_{j,k} >= alpha - 1e-9}`` for every coflow (slots; an
        interval end on the interval-indexed form)."""
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha: must be in (0, 1], got {alpha}")
        k = np.argmax(self.y >= alpha - ALPHA_TOL, axis=1).astype(_I64)
        return k if self.grid is None else self.grid[k].astype(_I64)

    def X_at(self, rows: np.ndarray, t: np.ndarray) -> np.ndarray:
        """``X_{f,t}`` of flows ``rows`` at slot times ``t`` (broadcast together, clipped to
        ``0..T``); between interval ends of the interval form the linear interpolation, a
        time-indexed solution (per-slot port load ``(X_{f,k} - X_{f,k-1}) / (tau_k -
        tau_{k-1})`` summed over a port is ``<= 1`` by (P), and the releases are interval
        ends)."""
        t = np.clip(t, 0, self.horizon)
        if self.grid is None:
            return self.X[rows, t]
        g = self.grid
        k = np.clip(np.searchsorted(g, t, side="left"), 1, g.size - 1)
        lo, hi = self.X[rows, k - 1], self.X[rows, k]
        return lo + (hi - lo) * (t - g[k - 1]) / (g[k] - g[k - 1])

    def breakpoints(self) -> np.ndarray:
        """The distinct values of ``y`` in ``(0, 1]``, ascending: ``D(alpha)`` is constant
        between consecutive ones, so these are the only alphas worth trying."""
        v = self.y[(self.y > ALPHA_TOL)]
        v = np.unique(np.round(v, 9))
        return v[v > ALPHA_TOL]


def solve_edge_lp(edges: UnitEdges, params: SolveParams | None = None, *,
                  horizon: int | None = None, backend: str = "highs",
                  grid: np.ndarray | None = None, eps: float | None = None) -> EdgeLPSolution:
    """Solve :func:`edge_model` (on ``grid`` when given: the interval-indexed form of
    :mod:`coflowopt.lp.edge_interval`, built with ``eps``) and post-process it (monotone
    ``y``, ``C_hat``).  Raises :class:`RuntimeError` naming the status when the LP is not
    solved to optimality."""
    model = edge_model(edges, horizon=horizon, grid=grid)
    res = solve(model, params, backend=backend)
    if not res.optimal or res.x is None:
        raise RuntimeError(f"edge LP ({model.n_cols} columns, {model.nnz} nonzeros) ended "
                           f"{res.status.value} after {res.runtime:.1f} s {res.message}".strip())
    T = int(model.meta["horizon"])
    tau = model.meta["grid"]
    K = tau.size - 1
    live = model.meta["coflows"]
    n = edges.n_coflows
    X = model.values(res.x, "X")
    y = np.zeros((n, K + 1))
    y[:, K] = 1.0
    empty = np.setdiff1d(np.arange(n), live)
    for j in empty:  # no units: done from the release on
        y[j, tau >= edges.release[j]] = 1.0
    if K > 1:
        y[live, 1:K] = np.clip(model.values(res.x, "y"), 0.0, 1.0)
    y = np.maximum.accumulate(y, axis=1)
    C = edges.release.astype(np.float64).copy()
    C[live] = model.values(res.x, "C")
    if grid is None:
        C_hat = (1.0 - y[:, :T]).sum(axis=1)
    else:
        C_hat = ((1.0 - y[:, :K]) * np.r_[1.0, np.diff(tau)[:K - 1]]).sum(axis=1)
        C_hat[empty] = edges.release[empty]
    return EdgeLPSolution(float(res.objective), X, y, C, C_hat, T, res,
                          None if grid is None else tau,
                          "time-indexed" if grid is None else "interval-indexed", eps)

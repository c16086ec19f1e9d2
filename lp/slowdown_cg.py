"""Column generation for the slowdown feasibility LP (LP-interval(E) of
:mod:`coflowopt.lp.slowdown`; CoFair paper: De Pellegrini et al., "Fair Coflow Scheduling via
Controlled Slowdown", IEEE TPDS 2022, Theorem 2 and constraint (7); the LP and everything here
are our reconstruction [C]).

With a fixed ``E`` every flow of coflow ``j`` has the window ``[r_j, D_j]``,
``D_j = r_j + E C_j^0 / phi_j``; time is cut at the distinct ``r_j`` and ``D_j`` into intervals
``I_k`` of length ``len_k`` and port ``l`` serves at most ``B_l len_k`` in ``I_k``.

**Aggregation** (exact): flows with the same window and the same (src, dst) pair meet the same
rows with the same coefficients per unit of volume, so they form one *group* ``g`` of volume
``v_g``; a solution for the groups splits over their flows in proportion to volume.

**Phase-1 form.**  ``y_{g,k} >= 0`` the fraction of group ``g`` served in ``I_k`` (``k`` in its
window ``W_g``), ``o_{l,k} >= 0`` the overload of port ``l`` in ``I_k``, each capacity row in
units of its capacity ``c_{l,k} = B_l len_k`` (at the first ``E`` tested)::

    min  sum_{l,k} o_{l,k}
    s.t. sum_{k in W_g} y_{g,k} = 1                                   every group g
         sum_{g through l} (v_g / c_{l,k}) y_{g,k} - o_{l,k} <= 1       every port l, interval k

The optimum is 0 iff every deadline can be met (LP-interval(E) is feasible).

**Restricted master.**  Every group starts *fixed* at one interval ``k0_g`` (where a per-port
EDF order would serve the middle of it on its busier port): its load is a constant on the
right-hand side and it has no row.  A group that pricing moves gets *move* columns
``z_{g,k} = y_{g,k}`` (``k != k0_g``; ``y_{g,k0} = 1 - sum_k z_{g,k}`` substituted out) and one
row ``sum_k z_{g,k} <= 1``.  A new column enters at 0 and a new row is slack, so the basis
stays primal feasible and HiGHS's primal simplex goes on from it (its dual simplex, from the
same warm start, took minutes where the primal one took seconds).  Most groups are never
moved, so the master stays far smaller than the full LP (BENCHMARKS.md, the 200-coflow
batch: about 18 k move columns instead of 3.3 M).

**Pricing.**  With ``pi_{l,k} = -dual / c_{l,k} >= 0`` (the capacity row duals, clipped to
``[0, 1]`` before the division: a price per unit of volume), the reduced cost of ``z_{g,k}`` is
``v_g (pi_{src,k} + pi_{dst,k} - pi_{src,k0} - pi_{dst,k0}) - u_g`` (``u_g <= 0`` the group
row's dual, 0 for a fixed group).  The cheapest ``k`` over every window of every group is a
running minimum along ``k`` of the price of each (src, dst) pair, one numpy pass per distinct
window start.  At most ``max_new`` columns (the most negative) enter per round.

**Certificate of infeasibility** (Farkas, or the Lagrangian relaxation of the capacity rows):
for every ``pi >= 0``::

    L(pi) = sum_g v_g min_{k in W_g} (pi_{src,k} + pi_{dst,k})  -  sum_{l,k} pi_{l,k} c_{l,k}

is at most ``sum_{l,k} pi_{l,k} c_{l,k} o_{l,k}`` for every assignment (each group pays at
least its cheapest interval; the prices collect at most the capacities plus the overloads).
So ``L(pi) > 0`` proves that no fluid schedule meets the deadlines,
hence ``E < E*``, whatever the accuracy of the ``pi`` it came from.  Two sources of ``pi``:
first, before any master solve, ``pi = 1`` on one port over the intervals up to the end of the
window prefix that overloads it most (the per-port test behind ``E_MPS <= E*``: every
``E < E_MPS`` of a batch fails it); then the master's duals every round (in practice they give
``L > 0`` only near the master's optimum; when no column prices out, the master's optimum is
the full LP's and ``L(pi)`` equals it, strong duality, up to the solver's tolerance).

**Feasible side.**  A master with total overload at most ``feas_tol`` is turned into a
schedule (rate ``v_f y_{g,k} / len_k`` per flow, ``y`` normalised per group); an interval
still overloaded by the solver's tolerance is stretched by its overload factor (later
intervals shift), and the schedule is validated: its realised
``max_j phi_j (C_j - r_j) / C_j^0`` is an upper bound on ``E*`` (at most a relative 1e-7 or
so above ``E``).

**Across** ``E``: for a batch the intervals and windows are the same for every ``E`` (the
breakpoints scale with ``E``), so the master, its columns and its basis are kept and only the
capacities change; otherwise the master is rebuilt.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

from .highs import new_highs
from .timeindexed import coflow_preferences

__all__ = [
    "ColGenFeasibility",
    "ColGenParams",
    "SlowdownColGen",
    "interval_windows",
]

_EPS = 1e-9


def interval_windows(instance: Instance, E: float, phi: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The intervals of LP-interval(E) and every flow's window.

    Returns ``(wf, pts, first, last)``: ``wf`` the flows with volume > 0, ``pts`` the sorted
    distinct breakpoints ``{min(0, min r)} u {r_j} u {D_j}``, and per flow of ``wf`` the 0-based
    indices of the first and last interval (``I_k = (pts[k], pts[k+1]]``) inside
    ``[r_j, D_j]``.  ``E = inf`` gives every coflow the horizon ``max r + sum C^0``.
    """
    inst = instance
    wf = np.flatnonzero(inst.flow_volume > 0)
    fc = inst.flow_coflow[wf].astype(np.int64)
    rel = inst.release
    D = rel + E * inst.isolation_time / phi if math.isfinite(E) else \
        np.full(inst.n_coflows, rel.max(initial=0.0) + inst.isolation_time.sum())
    pts = np.unique(np.r_[min(0.0, float(rel.min(initial=0.0))), rel, D])
    lo = np.searchsorted(pts, rel[fc] - _EPS * np.maximum(1, np.abs(rel[fc])), side="left")
    hi = np.searchsorted(pts, D[fc] + _EPS * np.maximum(1, np.abs(D[fc])), side="right") - 1
    return wf, pts, lo, hi - 1


@dataclass(frozen=True)
class ColGenParams:
    """Settings of the column generation.

    ``max_rounds``: master solves per feasibility test; ``max_new``: columns added per round at
    most (the most negative reduced costs first); ``rc_tol``: a column prices out when its
    reduced cost is below ``-rc_tol``; ``feas_tol``: total scaled overload at or below which the
    master counts as feasible (then its schedule is validated); ``cert_rtol``: ``L(pi)`` must
    exceed this fraction of the sum of its absolute terms to count as a certificate (float
    rounding is about 1e-16 per term); ``time_limit``: seconds per feasibility test;
    ``budget``: seconds for a whole :func:`~coflowopt.lp.min_slowdown` search; ``master``:
    ``"simplex"`` (primal, warm-started) or ``"ipm"`` (interior point without crossover, cold
    each round; steadier on the largest masters);
    ``threads``: HiGHS threads (``None``: its default).
    """

    max_rounds: int = 2000
    max_new: int = 5_000
    rc_tol: float = 1e-9
    feas_tol: float = 1e-9
    cert_rtol: float = 1e-9
    time_limit: float = math.inf
    budget: float = math.inf
    threads: int | None = None
    master: str = "simplex"

    def __post_init__(self) -> None:
        if self.master not in ("simplex", "ipm"):
            raise ValueError(f"ColGenParams.master: expected 'simplex' or 'ipm', got "
                             f"{self.master!r}")
        for name in ("max_rounds", "max_new"):
            if getattr(self, name) < 1:
                raise ValueError(f"ColGenParams.{name}: must be >= 1, got {getattr(self, name)}")
        for name in ("rc_tol", "feas_tol", "cert_rtol"):
            v = getattr(self, name)
            if not (0 <= v < 1):
                raise ValueError(f"ColGenParams.{name}: must be in [0, 1), got {v}")
        if not (self.budget > 0):
            raise ValueError(f"ColGenParams.budget: must be > 0, got {self.budget}")
        if not (self.time_limit > 0):
            raise ValueError(f"ColGenParams.time_limit: must be > 0, got {self.time_limit}")


@dataclass(frozen=True, eq=False)
class ColGenFeasibility:
    """One feasibility test by column generation.

    ``feasible``: True (a validated schedule meets every deadline up to ``realised_E``), False
    (infeasible: proven when ``certified``, else the converged master's overload was above
    ``feas_tol`` without a certificate), None (undecided: time or round limit, solver error);
    ``certificate``: the best ``L(pi)`` seen (unscaled volume; > 0 proves infeasibility);
    ``overload``: the last master's total scaled overload; ``rounds``: master solves;
    ``columns``/``rows``: the master's size at the end (``y`` columns, rows);
    ``groups``/``promoted``: groups in all and those with a row; ``full_columns``: the full
    LP's ``y`` columns over the groups (sum of window lengths), for comparison;
    ``realised_E``: the validated schedule's ``max phi_j (C_j - r_j) / C_j^0``;
    ``trace``: per round ``(overload, L(pi), columns, LP seconds so far)``; ``prices``: the
    ``pi`` of the best certificate, per volume (ingress ports x intervals, then egress), on
    ``breakpoints`` (so anyone can recheck ``L(pi) > 0`` against the full LP).
    """

    E: float
    feasible: bool | None
    certified: bool
    certificate: float
    overload: float
    rounds: int
    columns: int
    rows: int
    groups: int
    promoted: int
    full_columns: int
    seconds: float
    lp_seconds: float
    schedule: Schedule | None = None
    realised_E: float = math.nan
    message: str = ""
    trace: tuple[tuple[float, float, int, float], ...] = ()
    prices: np.ndarray | None = None
    breakpoints: np.ndarray | None = None

    def summary(self) -> dict[str, Any]:
        """The figures without the schedule (for tables and JSON)."""
        return {k: getattr(self, k) for k in (
            "E", "feasible", "certified", "certificate", "overload", "rounds", "columns", "rows",
            "groups", "promoted", "full_columns", "seconds", "lp_seconds", "realised_E")}


@dataclass(eq=False)
class _Groups:
    """Intervals and flow groups for one ``E`` (the module docstring's aggregation)."""

    pts: np.ndarray
    length: np.ndarray
    wf: np.ndarray
    flow_group: np.ndarray  # per flow of wf
    first: np.ndarray
    last: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    vol: np.ndarray
    # per distinct window start: (start, groups, pairs, group -> pair position)
    starts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)

    def same_shape(self, other: _Groups) -> bool:
        return (self.length.size == other.length.size
                and np.array_equal(self.flow_group, other.flow_group)
                and np.array_equal(self.first, other.first)
                and np.array_equal(self.last, other.last))


def _groups(inst: Instance, E: float, ph: np.ndarray) -> _Groups:
    wf, pts, first, last = interval_windows(inst, E, ph)
    if np.any(last < first):
        raise ValueError("slowdown column generation: a flow with an empty window "
                         f"(E = {E}); every deadline must lie after its release")
    m = inst.ports
    K = pts.size - 1
    src = inst.flow_src[wf].astype(np.int64)
    dst = inst.flow_dst[wf].astype(np.int64)
    key = ((first * (K + 1) + last) * m + src) * m + dst
    ukey, fg = np.unique(key, return_inverse=True)
    g_dst = ukey % m
    g_src = (ukey // m) % m
    g_last = (ukey // (m * m)) % (K + 1)
    g_first = ukey // (m * m * (K + 1))
    vol = np.bincount(fg, weights=inst.flow_volume[wf], minlength=ukey.size)
    out = _Groups(pts, np.diff(pts), wf, fg, g_first, g_last, g_src, g_dst, vol)
    for f0 in np.unique(g_first):
        sel = np.flatnonzero(g_first == f0)
        upair, inv = np.unique(g_src[sel] * m + g_dst[sel], return_inverse=True)
        out.starts.append((int(f0), sel, upair, inv))
    return out


def _window_min(G: _Groups, price_in: np.ndarray, price_out: np.ndarray, m: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the least ``price_in[src, k] + price_out[dst, k]`` over its window and a ``k``
    attaining it: a running minimum along ``k`` per (src, dst) pair and window start."""
    n = G.vol.size
    best = np.empty(n)
    arg = np.empty(n, dtype=np.int64)
    K = price_in.shape[1]
    for f0, sel, upair, inv in G.starts:
        P = price_in[upair // m, f0:] + price_out[upair % m, f0:]
        M = np.minimum.accumulate(P, axis=1)
        # the last position so far where the running minimum was attained: a valid argmin
        A = np.maximum.accumulate(np.where(P <= M, np.arange(K - f0), 0), axis=1)
        col = G.last[sel] - f0
        best[sel] = M[inv, col]
        arg[sel] = A[inv, col] + f0
    return best, arg


def _initial_intervals(G: _Groups, inst: Instance) -> np.ndarray:
    """Per group, a start interval: the one holding the middle of the group's service when each
    port serves its groups alone, earliest window end first, at full rate (the later of its two
    ports), clipped into its window.  A heuristic only: pricing moves what does not fit."""
    t = np.full(G.vol.size, G.pts[0])
    for port, cap in ((G.src, inst.fabric.capacity_in), (G.dst, inst.fabric.capacity_out)):
        order = np.lexsort((G.first, G.last, port))
        v = G.vol[order] / cap[port[order]]
        cum = np.cumsum(v)
        p = port[order]
        head = np.r_[True, p[1:] != p[:-1]]
        base = np.maximum.accumulate(np.where(head, cum - v, 0.0))
        mid = np.empty_like(cum)
        mid[order] = G.pts[0] + (cum - base) - 0.5 * v
        t = np.maximum(t, mid)
    k = np.searchsorted(G.pts, t, side="left") - 1
    return np.clip(k, G.first, G.last)


def _port_window_prices(G: _Groups, inst: Instance) -> np.ndarray:
    """Prices ``pi = 1`` on the one port and its intervals ``0..k`` where the groups whose
    window ends by ``k`` (through that port) exceed its capacity by the most (all 0 when none
    does): the per-port prefix test behind ``E_MPS <= E*`` as a Lagrangian certificate."""
    m, K = inst.ports, G.length.size
    elapsed = G.pts[1:] - G.pts[0]
    best, where = 0.0, None
    for side, port, cap in ((0, G.src, inst.fabric.capacity_in),
                            (1, G.dst, inst.fabric.capacity_out)):
        load = np.bincount(port * K + G.last, G.vol, m * K).reshape(m, K)
        # only groups whose window starts at the first interval are inside 0..k
        load -= np.bincount(port * K + G.last, G.vol * (G.first > 0), m * K).reshape(m, K)
        over = np.cumsum(load, axis=1) - cap[:, None] * elapsed[None, :]
        i = int(np.argmax(over))
        if over.flat[i] > best:
            best, where = float(over.flat[i]), (side, *divmod(i, K))
    pi = np.zeros(2 * m * K)
    if where is not None:
        side, port_l, k = where
        row0 = side * m * K + port_l * K
        pi[row0:row0 + k + 1] = 1.0
    return pi


class SlowdownColGen:
    """Feasibility of slowdown bound ``E`` by column generation (module docstring), with the
    restricted master kept across calls of :meth:`test` while the intervals keep their shape.

    ``instance``: single-stage; ``phi``: coflow preferences (as :func:`min_slowdown`).
    Units: the instance's (capacities in volume per time unit)."""

    def __init__(self, instance: Instance, phi: Any = None,
                 params: ColGenParams | None = None) -> None:
        if instance.starts_after.size:
            raise ValueError("slowdown column generation: single-stage model; the instance has "
                             "Starts-After edges")
        self.instance = instance
        self.phi = coflow_preferences(instance, phi)
        self.params = params or ColGenParams()
        self.G: _Groups | None = None
        self.h: Any = None

    # -- master ------------------------------------------------------------------------------

    def _cap(self, G: _Groups) -> np.ndarray:
        """Full capacities ``B_l len_k`` of the rows (in, then out), unscaled."""
        fab = self.instance.fabric
        return np.r_[(fab.capacity_in[:, None] * G.length[None, :]).ravel(),
                     (fab.capacity_out[:, None] * G.length[None, :]).ravel()]

    def _rows_of(self, g: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m, K = self.instance.ports, self.G.length.size
        return self.G.src[g] * K + k, m * K + self.G.dst[g] * K + k

    def _build(self, G: _Groups) -> None:
        import highspy

        self.G = G
        m, K = self.instance.ports, G.length.size
        n = 2 * m * K
        # each capacity row in units of its capacity at this E (kept while only E changes)
        self.row_scale = 1.0 / self._cap(G)
        self.k0 = _initial_intervals(G, self.instance)
        self.g_row = np.full(G.vol.size, -1, dtype=np.int64)
        self.col_g = np.zeros(0, dtype=np.int64)
        self.col_k = np.zeros(0, dtype=np.int64)
        r_in, r_out = self._rows_of(np.arange(G.vol.size), self.k0)
        self.fixed = np.bincount(r_in, G.vol, n) + np.bincount(r_out, G.vol, n)
        h = new_highs()
        h.setOptionValue("output_flag", False)
        if self.params.master == "ipm":
            # interior duals are fine: pricing and the certificate take any pi >= 0
            h.setOptionValue("solver", "ipm")
            h.setOptionValue("run_crossover", "off")
        else:
            # new columns keep the basis primal feasible (module docstring): primal simplex
            h.setOptionValue("simplex_strategy", 4)
        if self.params.threads is not None:
            h.setOptionValue("threads", int(self.params.threads))
        inf = highspy.kHighsInf
        h.addRows(n, np.full(n, -inf), (self._cap(G) - self.fixed) * self.row_scale, 0,
                  np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        h.addCols(n, np.ones(n), np.zeros(n), np.full(n, inf), n,
                  np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32), -np.ones(n))
        self.h = h
        self.n_rows = n

    def _set_capacities(self, G: _Groups) -> None:
        self.G.length = G.length
        self.G.pts = G.pts
        n = self.fixed.size
        self.h.changeRowsBounds(n, np.arange(n, dtype=np.int32), np.full(n, -np.inf),
                                (self._cap(G) - self.fixed) * self.row_scale)

    def _add(self, g: np.ndarray, k: np.ndarray) -> None:
        """Move columns ``z_{g,k}`` (a fraction of group ``g`` moved from ``k0_g`` to ``k``);
        a group's first one adds its row ``sum_k z_{g,k} <= 1``."""
        h = self.h
        new = np.unique(g[self.g_row[g] < 0])
        if new.size:
            self.g_row[new] = self.n_rows + np.arange(new.size)
            self.n_rows += new.size
            h.addRows(new.size, np.full(new.size, -np.inf), np.ones(new.size), 0,
                      np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        r_in, r_out = self._rows_of(g, k)
        o_in, o_out = self._rows_of(g, self.k0[g])
        n = g.size
        rows = np.column_stack([r_in, o_in, r_out, o_out, self.g_row[g]])
        v = self.G.vol[g]
        rs = self.row_scale
        val = np.column_stack([v * rs[r_in], -v * rs[o_in], v * rs[r_out], -v * rs[o_out],
                               np.ones(n)])
        h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, np.inf), 5 * n,
                  np.arange(0, 5 * n, 5, dtype=np.int32), rows.ravel().astype(np.int32),
                  val.ravel())
        self.col_g = np.r_[self.col_g, g]
        self.col_k = np.r_[self.col_k, k]

    # -- one test ----------------------------------------------------------------------------

    def test(self, E: float, time_limit: float | None = None) -> ColGenFeasibility:
        """Decide whether every coflow can meet ``phi_j (C_j - r_j) <= E C_j^0``
        (``time_limit``: seconds, instead of the parameters')."""
        import highspy

        if math.isnan(E) or E <= 0:
            raise ValueError(f"E: must be > 0, got {E}")
        t0 = time.perf_counter()
        P = self.params
        G = _groups(self.instance, E, self.phi)
        if self.G is None or not self.G.same_shape(G):
            self._build(G)
        else:
            self._set_capacities(G)
        G = self.G
        m, K = self.instance.ports, G.length.size
        cap = self._cap(G)
        lp_s = 0.0
        best_cert = -math.inf
        rounds = 0
        overload = math.nan
        trace: list[tuple[float, float, int, float]] = []
        best_pi: np.ndarray | None = None

        def done(feasible: bool | None, certified: bool, msg: str = "",
                 sched: Schedule | None = None, realised: float = math.nan) -> ColGenFeasibility:
            return ColGenFeasibility(
                E, feasible, certified, best_cert, overload, rounds, int(self.col_g.size),
                int(self.n_rows), int(G.vol.size), int((self.g_row >= 0).sum()),
                int((G.last - G.first + 1).sum()), time.perf_counter() - t0, lp_s, sched,
                realised, msg, tuple(trace), best_pi, G.pts.copy())

        # the per-port test first: it proves every E below E_MPS of a batch without an LP
        pi = _port_window_prices(G, self.instance)
        best, _ = _window_min(G, pi[:m * K].reshape(m, K), pi[m * K:].reshape(m, K), m)
        pay, rent = float(G.vol @ best), float(pi @ cap)
        if pay - rent > P.cert_rtol * (pay + rent):
            best_cert, best_pi = pay - rent, pi
            return done(False, True, "per-port window test")
        while rounds < P.max_rounds:
            left = (P.time_limit if time_limit is None else time_limit) - \
                (time.perf_counter() - t0)
            if left <= 0:
                return done(None, False, "time limit")
            # HiGHS's time limit counts the object's whole run time, over all rounds
            self.h.setOptionValue("time_limit", self.h.getRunTime() + float(left)
                                  if math.isfinite(left) else 1e30)
            t1 = time.perf_counter()
            self.h.run()
            lp_s += time.perf_counter() - t1
            rounds += 1
            if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                status = self.h.modelStatusToString(self.h.getModelStatus())
                return done(None, False, f"master: {status}")
            sol = self.h.getSolution()
            overload = float(self.h.getInfo().objective_function_value)
            dual = np.asarray(sol.row_dual)
            # prices per unit of volume on each port and interval
            pi = np.clip(-dual[:2 * m * K], 0.0, 1.0) * self.row_scale
            best, arg = _window_min(G, pi[:m * K].reshape(m, K), pi[m * K:].reshape(m, K), m)
            pay = float(G.vol @ best)
            rent = float(pi @ cap)
            cert = pay - rent
            if cert > best_cert:
                best_cert, best_pi = cert, pi
            trace.append((overload, cert, int(self.col_g.size), lp_s))
            if overload <= P.feas_tol:
                return self._feasible(np.asarray(sol.col_value), done)
            if cert > P.cert_rtol * (pay + rent):
                return done(False, True)
            # reduced cost of each group's cheapest move: v_g (best_g - price at k0_g) - u_g
            r_in, r_out = self._rows_of(np.arange(G.vol.size), self.k0)
            row_dual = np.zeros(G.vol.size)
            has = self.g_row >= 0
            row_dual[has] = dual[self.g_row[has]]
            rc = G.vol * (best - pi[r_in] - pi[r_out]) - row_dual
            rc[arg == self.k0] = 0.0
            cand = np.flatnonzero(rc < -P.rc_tol)
            if not cand.size:
                return done(False, False, "converged without a certificate")
            if cand.size > P.max_new:
                cand = cand[np.argpartition(rc[cand], P.max_new)[:P.max_new]]
            self._add(cand, arg[cand])
        return done(None, False, "round limit")

    def _feasible(self, x: np.ndarray, done: Any) -> ColGenFeasibility:
        """Schedule from the master's point (module docstring, feasible side), validated."""
        from coflowopt.validate import InfeasibleSchedule, validate

        inst, G = self.instance, self.G
        m, K = inst.ports, G.length.size
        z = np.clip(x[2 * m * K:], 0.0, None)
        stay = np.clip(1.0 - np.bincount(self.col_g, z, G.vol.size), 0.0, None)
        eg = np.r_[np.arange(G.vol.size), self.col_g]
        ek = np.r_[self.k0, self.col_k]
        ey = np.r_[stay, z]
        keep = ey > 0
        eg, ek, ey = eg[keep], ek[keep], ey[keep]
        ey = ey / np.bincount(eg, ey, G.vol.size)[eg]
        # expand group entries to their flows
        order = np.argsort(G.flow_group, kind="stable")
        cnt = np.bincount(G.flow_group, minlength=G.vol.size)
        start = np.cumsum(cnt) - cnt
        rep = cnt[eg]
        pos = np.repeat(start[eg], rep) + (np.arange(rep.sum()) - np.repeat(np.cumsum(rep) - rep,
                                                                             rep))
        flow = G.wf[order[pos]]
        k = np.repeat(ek, rep)
        amount = inst.flow_volume[flow] * np.repeat(ey, rep)
        load = np.bincount(np.r_[inst.flow_src[flow] * K + k, m * K + inst.flow_dst[flow] * K + k],
                           np.r_[amount, amount], 2 * m * K)
        ratio = np.divide(load, self._cap(G), out=np.zeros_like(load), where=load > 0)
        stretch = np.maximum(1.0, ratio.reshape(2 * m, K).max(axis=0))
        length = G.length * stretch
        pts = G.pts[0] + np.r_[0.0, np.cumsum(length)]
        sched = Schedule.from_segments(pts, flow, amount / length[k], k, k + 1,
                                       meta={"scheduler": "slowdown_colgen"})
        try:
            vs = validate(inst, sched)
        except InfeasibleSchedule as exc:
            return done(None, False, f"schedule rejected by the validator: {exc}")
        work = inst.isolation_time > 0
        cct = vs.coflow_completion - inst.release
        realised = float(np.max(self.phi[work] * cct[work] / inst.isolation_time[work]))
        return done(True, True, "", sched, realised)

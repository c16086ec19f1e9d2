"""CoFair (De Pellegrini, Gupta, El Azouzi, Gueye, Richier, Leguay, "Fair Coflow Scheduling
via Controlled Slowdown", TPDS 2022, Alg. 2): a primal-dual sigma-order under slowdown
deadlines, served by the order-preserving greedy allocation.  Tags: [R] recovered from the paper,
[C] reconstructed by us (docs/families/index.md).

The paper's listing was not recovered; its prose gives the ingredients [R] (a primal-dual
sigma-order after Mastrolilli et al.'s concurrent open-shop algorithm, a pivot bottleneck port,
Smith's rule over the feasible tail coflows, weight updates by Gaussian elimination for the
pivot and the feasible tails, the infeasibility exit of its line 10).  The listing below is our
reconstruction [C] from those ingredients.  With
port loads ``p[l][j]`` in time units (volume / ``B_l``), weights ``w_j`` and deadlines
``D_j = r_j + E C_j^0 / phi_j`` ([C]: the paper's constraint (7) read as a deadline; ``C_j^0`` the
isolation time, ``phi_j`` the
preference, ``E`` the slowdown budget of constraint (7))::

    A <- C ; alpha_j <- w_j
    for k = N down to 1:
        T_l <- sum_{j in A} p[l][j]                     (running loads: subtract the removed row)
        mu  <- argmax_l T_l                             (ties: lowest port, ingress before egress)
        F   <- {j in A : p[mu][j] > 0, D_j >= T_mu}     (feasible tails on the pivot port)
        F empty: NO primal-feasible order of A exists   (line 10: the infeasibility exit)
        sigma(k) <- argmin_{j in F} alpha_j / p[mu][j]  (Smith's rule; ties: lowest position)
        alpha_j  <- alpha_j - alpha_sigma(k) p[mu][j] / p[mu][sigma(k)]   for j in F   (line 12)
        A <- A minus sigma(k)

``update="pivot-port"`` is the alternative reading [C] of the paper's update lines: the elimination
step on every coflow of ``A`` on ``mu`` (as Sincronia's Scale), which may drive some ``alpha_j``
below 0. With ``E = inf`` every coflow on ``mu`` is a feasible tail and the order is exactly
Sincronia's BSSI (:func:`coflowopt.orders.bssi`, same arithmetic, same ties).

The output satisfies the *relaxed* deadlines ``T(A_k) <= D_sigma(k)``; under the greedy
allocation a coflow's slowdown is then at most ``2 E / phi_j`` ([C]: our bound; a flow waits only
while one of its two ports serves higher-priority traffic).  The exit fires iff
``E < E_MPS`` for a batch (``r = 0``), where ``E_MPS`` is MPS (the paper's Alg. 1, reconstructed
[C]: :func:`coflowopt.lp.mps`, the one implementation; a lower bound on the exact ``E*`` of
:func:`coflowopt.lp.min_slowdown`). A run that exits raises :class:`~coflowopt.NoFeasibleSchedule`
naming the pivot port and the coflows whose deadlines are all earlier than its load: a proven
result, not a failure.

Slowdown target.  Meeting the relaxed deadlines does not mean meeting ``E``: the greedy
allocation can take up to ``2 E`` (above), and ``E_MPS`` is only a lower bound on ``E*``
(``coflowopt.lp.mps``: on 1,000 small random batches ``E* = E_MPS`` on 992, up to 1.131 x
larger on the others, BENCHMARKS.md), so with ``E_MPS <= E < E*`` no schedule meets ``E``
although the order exists.  Every run therefore puts in ``meta``, from its validated schedule:
``max_slowdown`` (``max_j phi_j (C_j - r_j) / C_j^0``), ``slowdown_target_met``
(``max_slowdown <= E``, to 1e-9 relative) and ``target_feasible``: ``True`` when met (the
schedule is the witness); when missed, the exact LP-interval test at ``E``
(:func:`coflowopt.lp.slowdown_feasibility`, status in ``meta["target_lp_status"]``) decides it,
unless the ``target_lp`` parameter rules the LP out (``None``, and ``target_lp_status`` says
why).  Offline, an LP that
proves ``E < E*`` raises :class:`~coflowopt.NoFeasibleSchedule` (the target cannot be met by
any schedule); online the run keeps its fallback schedule and reports ``target_feasible =
False``.

Cost: ``O(N (M + N))`` after an ``O(flows)`` set-up, as the CoFair paper states [R] (here the
feasible-tail scan visits only the coflows on the pivot port).  Compiled (numba), so an order of
10,000 coflows on 150 ports takes well under a second.

Schedules: ``mode="offline"`` serves the one sigma-order of the whole instance through
:func:`coflowopt.sim.order_schedule` (compiled, streamed into the validator).
``mode="online"`` [C: the paper's online use was not recovered] recomputes the order at every
arrival and departure on the remaining volumes with residual deadlines ``D_j - t``; when the exit
fires it falls back to the MPS order of the active set (below) and counts that in
``meta["fallbacks"]`` (re-orders in ``meta["orders"]``, the first fallback's time and reason in
``meta["first_fallback"]``).  It runs
on the compiled engine (:func:`cofair_rank`, a rank function of :mod:`coflowopt.sim.policy`:
the re-order inside the event loop, the same greedy order-preserving allocation as Sincronia's,
streamed into the validator); ``engine="reference"`` runs the same step
(:func:`coflowopt.orders.cofair_online`, the one implementation) as a re-ranking callback on
the reference engine.  The whole FB2010 trace online: BENCHMARKS.md, "fair: speed".

Choices where the paper, as recovered, is silent ([C], parameters where they matter):

- ``E`` default: ``slowdown = 1`` times ``E_MPS``, the fairest budget CoFair can meet (our
  trade-off sweeps are in multiples of ``E_MPS``); ``E_MPS`` of the instance read as a batch (MPS
  ignores releases), which is always met offline since releases only move deadlines later;
- feasibility is tested with a relative tolerance of 1e-9 of the largest port load (``E`` equal
  to ``E_MPS`` must pass despite rounding in ``E_MPS C_j^0``);
- a set left with no load at all (zero-volume coflows only) is ordered as BSSI does (the last
  position first), every such coflow meeting any deadline;
- the online fallback is MPS's backward rule on the residual state (Lawler): put last the coflow
  of the active set whose slowdown would be smallest if it finished at ``t + T(A)``, i.e.
  ``argmin phi_j (t - r_j + T(A)) / C_j^0`` (ties: the highest position).  For a batch at
  ``t = 0`` this is exactly MPS's order (ascending ``C_j^0 / phi_j``), and it minimises the
  largest relaxed slowdown of the active set over all orders (Lawler's argument, as for
  MPS: :func:`coflowopt.lp.mps`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.orders import (
    cofair_loads,
    cofair_online,
    cofair_port_major,
    cofair_trace_kernel,
    mps_backward,
)
from coflowopt.params import Params
from coflowopt.schedulers.registry import NoFeasibleSchedule
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.validate import ValidSchedule

__all__ = [
    "CoFairParams",
    "CoFairTrace",
    "cofair_deadlines",
    "cofair_order",
    "cofair_trace",
    "mps_fallback_order",
    "realised_max_slowdown",
    "run_cofair",
]

UPDATES = ("tails", "pivot-port")
#: relative tolerance of the feasible-tail test ``D_j >= T_mu`` (of the largest port load)
FEAS_RTOL = 1e-9
#: relative tolerance of "the realised slowdown meets E" (simulated completion times)
TARGET_RTOL = 1e-9
#: ``target_lp="auto"`` solves the LP only up to this many variables (flows x intervals): near
#: ``E*`` the LP on 1,000 coflows x 150 ports took minutes (BENCHMARKS, MPS part 3)
TARGET_LP_MAX_VARIABLES = 50_000


# -- loads from an instance or an array -------------------------------------------------------


def _capacity(inst: Instance) -> np.ndarray:
    return np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out]).astype(np.float64)


def _instance_loads(inst: Instance, coflows: np.ndarray | None = None,
                    remaining: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Coflow-major CSR loads (time units) of ``coflows`` (default all) on ``remaining``
    volumes (default the full ones)."""
    if coflows is None:
        ptr = np.asarray(inst.coflow_flows_ptr, dtype=np.int64)
        order = np.asarray(inst.coflow_flow_order, dtype=np.int64)
    else:  # a sub-CSR of the chosen coflows, in the given order
        ptr, order = _sub_csr(inst, coflows)
    vol = inst.flow_volume if remaining is None else remaining
    cptr, cport, cval = cofair_loads(ptr, order, inst.flow_src.astype(np.int64),
                                      inst.flow_dst.astype(np.int64),
                                      np.ascontiguousarray(vol, dtype=np.float64), inst.ports,
                                      _capacity(inst))
    return cptr, cport, cval, 2 * inst.ports


def _array_loads(loads: Any, capacity: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    import scipy.sparse as sp

    if sp.issparse(loads):
        mat = sp.csr_matrix(loads, dtype=np.float64)
        if capacity is not None:
            mat = sp.csr_matrix(mat.multiply(1.0 / np.asarray(capacity, dtype=np.float64)[None, :]))
        mat.sum_duplicates()
        mat.sort_indices()
        mat.eliminate_zeros()
        return (mat.indptr.astype(np.int64), mat.indices.astype(np.int64),
                mat.data.astype(np.float64), int(mat.shape[1]))
    p = np.asarray(loads, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"cofair_order: loads must be an (N, P) array of port loads, got "
                         f"shape {p.shape}")
    if capacity is not None:
        p = p / np.asarray(capacity, dtype=np.float64)[None, :]  # as bssi divides
    if not np.all(np.isfinite(p)) or (p < 0).any():
        j, q = np.argwhere(~(np.isfinite(p) & (p >= 0)))[0]
        raise ValueError(f"cofair_order: loads[{j}, {q}] must be finite and >= 0, got "
                         f"{p[j, q]}")
    rows, cols = np.nonzero(p > 0)
    cptr = np.zeros(p.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=p.shape[0]), out=cptr[1:])
    return cptr, cols.astype(np.int64), p[rows, cols], int(p.shape[1])


def _port_label(q: int, m: int | None) -> str:
    """A port of the ``2m`` columns named as the validator names ports (``in 2``, ``out 2``)."""
    if m is None:
        return f"column {q}"
    return f"in {q}" if q < m else f"out {q - m}"


def _label(ids: Any, j: int) -> str:
    if ids is None:
        return f"position {j}"
    v = ids[j]
    return str(v.item() if isinstance(v, np.generic) else v)


# -- public order functions ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CoFairTrace:
    """A CoFair order with its certificate: ``sigma`` (positions, first served first),
    ``pivots[k]`` the pivot port of position ``k`` (-1 where no load was left), ``betas[k]``
    the dual of that step."""

    sigma: np.ndarray
    pivots: np.ndarray
    betas: np.ndarray


def cofair_deadlines(instance: Instance, E: float, phi: Any = None) -> np.ndarray:
    """``D_j = r_j + E C_j^0 / phi_j`` ([C], module docstring; ``inf`` everywhere for ``E = inf``),
    in the instance's time unit."""
    ph = _phi(instance, phi)
    if math.isinf(E):
        return np.full(instance.n_coflows, math.inf)
    return instance.release + E * instance.isolation_time / ph


def cofair_trace(loads: Instance | Any, weights: Any = None, deadlines: Any = None, *,
                 capacity: Any = None, update: str = "tails", ids: Any = None,
                 rtol: float = FEAS_RTOL) -> CoFairTrace:
    """:func:`cofair_order` with its certificate (:class:`CoFairTrace`)."""
    if update not in UPDATES:
        raise ValueError(f"cofair: update must be one of {UPDATES}, got {update!r}")
    m: int | None = None
    if isinstance(loads, Instance):
        inst = loads
        cptr, cport, cval, P = _instance_loads(inst)
        m = inst.ports
        if weights is None:
            weights = inst.coflow_weight
        if ids is None:
            ids = inst.coflow_id
    else:
        cptr, cport, cval, P = _array_loads(loads, capacity)
        if P % 2 == 0:
            m = P // 2
    n = cptr.size - 1
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.size != n or not np.all(np.isfinite(w) & (w > 0)):
        bad = "needs one per coflow" if w.size != n else \
            f"weight of coflow {_label(ids, int(np.flatnonzero(~(np.isfinite(w) & (w > 0)))[0]))}"
        raise ValueError(f"cofair: weights must be finite and > 0 ({bad}), got {w.size} values")
    D = np.full(n, math.inf) if deadlines is None else \
        np.asarray(deadlines, dtype=np.float64).ravel()
    if D.size != n or np.isnan(D).any():
        raise ValueError(f"cofair: deadlines need {n} numbers (not NaN), one per coflow, got "
                         f"{D.size}")
    pptr, pcof, pval = cofair_port_major(cptr, cport, cval, P)
    sigma, pivots, betas, fail = cofair_trace_kernel(cptr, cport, cval, pptr, pcof, pval,
                                         np.ascontiguousarray(w), np.ascontiguousarray(D),
                                         update == "pivot-port", float(rtol))
    if fail >= 0:
        raise _infeasible(fail, sigma, cptr, cport, cval, pptr, pcof, D, ids, m)
    return CoFairTrace(sigma, pivots, betas)


def _infeasible(mu: int, sigma: np.ndarray, cptr: np.ndarray, cport: np.ndarray,
                cval: np.ndarray, pptr: np.ndarray, pcof: np.ndarray, D: np.ndarray, ids: Any,
                m: int | None) -> NoFeasibleSchedule:
    """The exit's one-line reason: the pivot port, its load, and the deadlines on it."""
    placed = np.zeros(cptr.size - 1, dtype=bool)
    placed[sigma[sigma >= 0]] = True
    on = pcof[pptr[mu]:pptr[mu + 1]]
    on = on[~placed[on]]
    left = np.flatnonzero(~placed)
    P = pptr.size - 1
    load = np.zeros(P)
    for c in left:  # the remaining set's load on the pivot, again (message only)
        a, b = cptr[c], cptr[c + 1]
        np.add.at(load, cport[a:b], cval[a:b])
    on = on[np.lexsort((on, D[on]))]
    shown = ", ".join(f"{_label(ids, int(j))}: {D[j]:.6g}" for j in on[:6])
    if on.size > 6:
        shown += f", ... ({on.size} coflows)"
    where = _label(ids, int(on[-1])) if on.size else None
    return NoFeasibleSchedule(
        f"cofair: on port {_port_label(mu, m)} (load {load[mu]:.6g}) every coflow's deadline "
        f"is earlier (coflow {shown}); no sigma-order meets them", where)


def cofair_order(loads: Instance | Any, weights: Any = None, deadlines: Any = None, *,
                 capacity: Any = None, update: str = "tails", ids: Any = None,
                 rtol: float = FEAS_RTOL) -> np.ndarray:
    """CoFair's primal-feasible sigma-order (Alg. 2 as reconstructed [C]; module docstring).

    ``loads``: an :class:`~coflowopt.Instance` (its full port loads; ``weights`` default to the
    coflow weights, ``ids`` to the coflow ids), or ``(N, P)`` port loads ``p[j][l]`` (dense or
    scipy sparse; ports ``0..m-1`` ingress, ``m..2m-1`` egress), divided by ``capacity`` when
    given (time units, as :func:`coflowopt.orders.bssi`).  ``weights``: ``w_j`` (default 1);
    ``deadlines``: ``D_j`` in the loads' time units (default ``inf``: BSSI's order; see
    :func:`cofair_deadlines`); ``update``: ``"tails"`` (our main reading [C]) or
    ``"pivot-port"`` (the alternative).  Returns positions ``0..N-1``, highest priority first.
    Raises :class:`~coflowopt.NoFeasibleSchedule` (one line: the pivot port, its load, the
    coflows on it and their deadlines; ``where`` = the id of the one with the latest deadline)
    when no primal-feasible order exists.
    """
    return cofair_trace(loads, weights, deadlines, capacity=capacity, update=update, ids=ids,
                        rtol=rtol).sigma


def mps_fallback_order(instance: Instance, coflows: Any, remaining: Any, t: float,
                       phi: Any = None) -> np.ndarray:
    """The online fallback (module docstring, [C]): ``coflows`` (positions) in the order of
    MPS's backward rule on their ``remaining`` volumes at time ``t``; for a batch at ``t = 0``
    on full volumes, exactly the order of :func:`coflowopt.lp.mps`."""
    c = np.asarray(coflows, dtype=np.int64)
    cptr, cport, cval, P = _instance_loads(instance, c, remaining)
    ph = _phi(instance, phi)
    local = mps_backward(cptr, cport, cval, P, float(t),
                          np.asarray(instance.release[c], np.float64),
                          np.asarray(instance.isolation_time[c], np.float64), ph[c])
    return c[local]


# -- parameters and the scheduler -------------------------------------------------------------


def _phi(instance: Instance, phi: Any) -> np.ndarray:
    """``phi_j``: ``None`` (1), ``"volume"`` (``V_j``, the paper's example), a number or one
    per coflow; each finite and > 0 (an error names the coflow)."""
    n = instance.n_coflows
    if phi is None:
        return np.ones(n)
    if isinstance(phi, str):
        if phi != "volume":
            raise ValueError(f"cofair: phi must be a number, one per coflow or 'volume', got "
                             f"{phi!r}")
        arr = np.asarray(instance.coflow_size, dtype=np.float64).copy()
        arr[arr <= 0] = 1.0  # an empty coflow has no slowdown to weigh
        return arr
    arr = np.asarray(phi, dtype=np.float64)
    if arr.ndim == 1 and arr.size != n:
        raise ValueError(f"cofair: phi needs one value per coflow ({n}), got {arr.size}")
    arr = np.broadcast_to(arr, (n,)).copy()
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"cofair: phi of coflow {_label(instance.coflow_id, k)} must be finite "
                         f"and > 0, got {arr[k]}")
    return arr


@dataclass(frozen=True)
class CoFairParams(Params):
    """``E``: the slowdown budget of constraint (7) (absolute; ``inf``: no constraint, BSSI's
    order), or ``slowdown``: a factor over ``E_MPS`` (``slowdown=1.25``: ``E = 1.25 E_MPS``);
    neither given: ``slowdown=1``, i.e. ``E = E_MPS`` ([C]).  ``phi``: the preference
    ``phi_j`` (default 1; a number, one per coflow, or ``"volume"`` for ``V_j``).  ``mode``:
    ``offline`` (one order) or ``online`` (re-ordered at arrivals and departures, [C]).
    ``update``: ``tails`` or ``pivot-port`` (module docstring).  ``engine``: ``fast`` (the
    compiled engine, both modes) or ``reference``.  ``target_lp``: when the realised schedule
    misses ``E``, decide with the exact slowdown LP whether any schedule meets it
    (:func:`coflowopt.lp.slowdown_feasibility`): ``auto`` up to :data:`TARGET_LP_MAX_VARIABLES`
    LP variables, ``always``, or ``never`` (module docstring, "Slowdown target")."""

    E: float | None = None
    slowdown: float | None = None
    phi: float | tuple[float, ...] | Literal["volume"] | None = None
    mode: Literal["offline", "online"] = "offline"
    update: Literal["tails", "pivot-port"] = "tails"
    engine: Literal["fast", "reference"] = "fast"
    target_lp: Literal["auto", "always", "never"] = "auto"

    def check(self) -> None:
        if self.E is not None and self.slowdown is not None:
            raise ValueError("CoFairParams: give E (absolute) or slowdown (a factor over "
                             "E_MPS), not both")
        for name in ("E", "slowdown"):
            v = getattr(self, name)
            if v is not None and (math.isnan(v) or v <= 0):
                raise ValueError(f"CoFairParams.{name}: must be > 0 (inf allowed), got {v}")
        if isinstance(self.phi, tuple):
            for i, v in enumerate(self.phi):
                if not (math.isfinite(v) and v > 0):
                    raise ValueError(f"CoFairParams.phi[{i}]: must be finite and > 0, got {v}")
        elif isinstance(self.phi, float) and not (math.isfinite(self.phi) and self.phi > 0):
            raise ValueError(f"CoFairParams.phi: must be finite and > 0, got {self.phi}")


def resolve_E(instance: Instance, params: CoFairParams) -> tuple[float, float]:
    """``(E, E_MPS)`` for ``params`` on ``instance`` (``E_MPS`` of the instance as a batch)."""
    from coflowopt.lp import mps

    ph = _phi(instance, params.phi)
    e_mps = float(mps(instance, ph).E) if instance.n_coflows else 1.0
    if params.E is not None:
        return float(params.E), e_mps
    factor = 1.0 if params.slowdown is None else float(params.slowdown)
    return factor * e_mps, e_mps


def _sub_csr(inst: Instance, coflows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ptr, order)``: the flows of ``coflows`` (in that order), instance order inside each."""
    ptr = np.asarray(inst.coflow_flows_ptr, dtype=np.int64)
    order = np.asarray(inst.coflow_flow_order, dtype=np.int64)
    c = np.asarray(coflows, dtype=np.int64)
    cnt = ptr[c + 1] - ptr[c]
    sub = np.zeros(c.size + 1, dtype=np.int64)
    np.cumsum(cnt, out=sub[1:])
    starts = np.repeat(ptr[c] - sub[:-1], cnt) + np.arange(int(sub[-1]))
    return sub, order[starts]


def _fallback_reason(inst: Instance, coflows: np.ndarray, remaining: np.ndarray, t: float,
                     D: np.ndarray, update: str) -> str:
    """Why CoFair's exit fired on the active ``coflows`` at ``t``: the offline exit's message
    on the residual state (residual loads, residual deadlines ``D_j - t``); for
    ``meta["first_fallback"]``."""
    c = np.asarray(coflows, dtype=np.int64)
    cptr, cport, cval, P = _instance_loads(inst, c, remaining)
    pptr, pcof, pval = cofair_port_major(cptr, cport, cval, P)
    Dc = np.ascontiguousarray(D[c], dtype=np.float64)
    sigma, _, _, fail = cofair_trace_kernel(cptr, cport, cval, pptr, pcof, pval,
                                      np.ascontiguousarray(inst.coflow_weight[c],
                                                           dtype=np.float64),
                                      Dc - t, update == "pivot-port", FEAS_RTOL)
    if fail < 0:  # cannot happen for the state the exit fired on; say so rather than guess
        return "cofair: the exit fired (its state was not reproduced)"
    # residual deadlines, so that they compare with the residual load the message names
    why = str(_infeasible(fail, sigma, cptr, cport, cval, pptr, pcof, Dc - t,
                          inst.coflow_id[c], inst.ports))
    return f"cofair: at t = {t:.6g} (deadlines D_j - t): " + why.removeprefix("cofair: ")


class _Online:
    """The online order on the reference engine ([C]): the re-ranking callback of
    :func:`coflowopt.sim.order_schedule`, calling the compiled step that :func:`cofair_rank`
    calls on the compiled engine (:func:`coflowopt.orders.cofair_online`)."""

    def __init__(self, inst: Instance, D: np.ndarray, phi: np.ndarray, update: str):
        self.inst, self.D, self.phi, self.update = inst, D, phi, update
        self.src = inst.flow_src.astype(np.int64)
        self.dst = inst.flow_dst.astype(np.int64)
        self.cap = _capacity(inst)
        self.recomputations = 0
        self.fallbacks = 0
        self.first_fallback: tuple[float, str] | None = None

    def __call__(self, view: Any) -> np.ndarray:
        c = view.coflows
        inst = self.inst
        self.recomputations += 1
        ptr, order = _sub_csr(inst, c)
        f64 = np.float64
        local, fail = cofair_online(
            ptr, order, self.src, self.dst, np.ascontiguousarray(view.remaining, dtype=f64),
            inst.ports, self.cap, np.ascontiguousarray(inst.coflow_weight[c], dtype=f64),
            np.ascontiguousarray(self.D[c], dtype=f64), float(view.t),
            np.ascontiguousarray(inst.release[c], dtype=f64),
            np.ascontiguousarray(inst.isolation_time[c], dtype=f64),
            np.ascontiguousarray(self.phi[c], dtype=f64), self.update == "pivot-port",
            FEAS_RTOL)
        if fail >= 0:
            self.fallbacks += 1
            if self.first_fallback is None:
                self.first_fallback = (float(view.t), _fallback_reason(
                    inst, c, view.remaining, float(view.t), self.D, self.update))
        return c[local]


@njit(cache=True)
def cofair_rank(s, act, out):
    """Online CoFair on the compiled engine (a :data:`~coflowopt.sim.policy.RANK_SIGNATURE`
    function): the step of :class:`_Online` (:func:`coflowopt.orders.cofair_online`) on the
    remaining volumes of the active coflows ``act`` (admission order).  ``s.table``: per coflow
    the deadline ``D_j``, release, ``C_j^0`` and ``phi_j``; ``s.scalars``: ``[pivot-port, feasible
    tail rtol]``.  ``s.stats``: re-orders, fallbacks, the first fallback's time and number of
    coflows, whose ``act`` goes to ``s.iscratch`` and remaining volumes to ``s.scratch``."""
    nc = act.size
    if nc == 0:
        return 0
    s.stats[0] += 1
    sp = np.zeros(nc + 1, dtype=np.int64)
    for j in range(nc):
        c = act[j]
        sp[j + 1] = sp[j] + (s.live_end[c] - s.ptr[c])
    so = np.empty(sp[nc], dtype=np.int64)
    for j in range(nc):
        c = act[j]
        for i in range(s.ptr[c], s.live_end[c]):
            so[sp[j] + i - s.ptr[c]] = s.live[i]
    fdl = np.empty(nc)
    frl = np.empty(nc)
    fc0 = np.empty(nc)
    fph = np.empty(nc)
    for j in range(nc):
        c = act[j]
        fdl[j] = s.table[0, c]
        frl[j] = s.table[1, c]
        fc0[j] = s.table[2, c]
        fph[j] = s.table[3, c]
    capq = np.concatenate((s.cap_in, s.cap_out))
    local, fail = cofair_online(sp, so, s.src, s.dst, s.remaining, s.cap_in.size, capq,
                                 s.weight[act], fdl, s.t, frl, fc0, fph, s.scalars[0] != 0.0,
                                 s.scalars[1])
    if fail >= 0:
        s.stats[1] += 1
        if s.stats[1] == 1.0:
            s.stats[2] = s.t
            s.stats[3] = nc
            s.iscratch[:nc] = act
            s.scratch[:] = s.remaining
    for j in range(nc):
        out[j] = act[local[j]]
    return nc


def _fair_args(inst: Instance, D: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """:func:`cofair_rank`'s per-coflow rows: deadline, release, isolation time, preference."""
    return np.vstack([D, inst.release, inst.isolation_time, phi]).astype(np.float64)


def run_cofair(instance: Instance, params: CoFairParams, sink: RateSink, *, seed: Any = None,
               progress: Any = None) -> Outcome:
    """CoFair: the sigma-order under slowdown deadlines with greedy order-preserving
    allocation.  Deterministic (``seed`` unused).  Offline, an ``E`` below ``E_MPS`` raises
    :class:`~coflowopt.NoFeasibleSchedule` before any simulation, and one the LP proves below
    ``E*`` after it (module docstring, "Slowdown target"); the factor 4 holds offline with all
    releases 0."""
    from coflowopt.sim.drive import order_schedule

    p = params
    inst = instance
    if inst.starts_after.shape[0] or inst.finishes_before.shape[0]:
        raise ValueError("cofair: single-stage model; the instance has precedence edges")
    ph = _phi(inst, p.phi)
    E, e_mps = resolve_E(inst, p)
    D = cofair_deadlines(inst, E, ph)
    meta: dict[str, Any] = {"scheduler": "cofair",
                            "params": {"mode": p.mode, "update": p.update, "E": E,
                                       "slowdown": p.slowdown, "phi": p.phi},
                            "E": E, "E_mps": e_mps}
    if p.mode == "offline":
        try:
            sigma = cofair_order(inst, inst.coflow_weight, D, update=p.update)
        except NoFeasibleSchedule as exc:
            head = f"cofair: E = {E:.6g} is below E_MPS = {e_mps:.6g}: " if E < e_mps else \
                f"cofair: E = {E:.6g}: "
            raise NoFeasibleSchedule(head + str(exc).removeprefix("cofair: "),
                                     exc.where) from None
        out = order_schedule(inst, sigma, engine=p.engine, check=sink.check, progress=progress)
        meta["fallbacks"] = 0
    elif p.engine == "reference":
        online = _Online(inst, D, ph, p.update)
        out = order_schedule(inst, rerank=online, engine="reference", check=sink.check,
                             progress=progress)
        meta["fallbacks"] = online.fallbacks
        meta["orders"] = online.recomputations
        if online.first_fallback is not None:
            meta["first_fallback"] = {"t": online.first_fallback[0],
                                      "why": online.first_fallback[1]}
    else:
        from coflowopt.sim.fast import fast_simulate
        from coflowopt.sim.policy import EnginePolicy, builtin_rank

        pol = EnginePolicy(rank=builtin_rank("cofair", cofair_rank),
                           table=_fair_args(inst, D, ph),
                           scalars=[float(p.update == "pivot-port"), FEAS_RTOL],
                           scratch=np.zeros(inst.n_flows),
                           iscratch=np.zeros(inst.n_coflows, dtype=np.int64), stats=np.zeros(4))
        out = fast_simulate(inst, pol, check=sink.check, progress=progress)
        meta["allocation"] = "greedy"
        meta["fallbacks"] = int(pol.stats[1])
        meta["orders"] = int(pol.stats[0])
        if pol.stats[1] > 0:
            t_fb, act = float(pol.stats[2]), pol.iscratch[: int(pol.stats[3])]
            meta["first_fallback"] = {"t": t_fb, "why": _fallback_reason(
                inst, act, pol.scratch, t_fb, D, p.update)}
    res = sink.outcome(out)
    meta.update(_slowdown_target(inst, sink.validated(inst, res), E, e_mps, ph, p))
    return res.with_meta(meta)


def realised_max_slowdown(valid: ValidSchedule, phi: Any = None) -> float:
    """``max_j phi_j (C_j - r_j) / C_j^0`` of a validated schedule (the left side of (7)
    over ``C_j^0``: the plain largest slowdown when ``phi = 1``); coflows with ``C_j^0 = 0``
    are left out (1.0 when none is left)."""
    inst = valid.instance
    ph = _phi(inst, phi)
    c0 = inst.isolation_time
    pos = c0 > 0
    if not pos.any():
        return 1.0
    return float(np.max(ph[pos] * (valid.coflow_completion[pos] - inst.release[pos]) / c0[pos]))


def _lp_variables(inst: Instance) -> int:
    """An upper bound on LP-interval's variables: flows x intervals (at most ``2N + 1``)."""
    return int(np.count_nonzero(inst.flow_volume > 0)) * (2 * inst.n_coflows + 1)


def _slowdown_target(inst: Instance, v: ValidSchedule, E: float, e_mps: float,
                     ph: np.ndarray, p: CoFairParams) -> dict[str, Any]:
    """``slowdown_target_met``, ``max_slowdown`` (from the validated schedule) and, when the
    target is missed, whether any schedule meets it (module docstring, "Slowdown target")."""
    worst = realised_max_slowdown(v, ph)
    met = bool(worst <= E * (1 + TARGET_RTOL))
    res: dict[str, Any] = {"max_slowdown": worst, "slowdown_target_met": met}
    if met:
        res["target_feasible"] = True  # this schedule is the witness
        return res
    size = _lp_variables(inst)
    if p.target_lp == "never" or (p.target_lp == "auto" and size > TARGET_LP_MAX_VARIABLES):
        res["target_feasible"] = None
        res["target_lp_status"] = "not solved: " + ("target_lp='never'" if p.target_lp == "never"
                                             else f"up to {size:,} variables > "
                                                  f"{TARGET_LP_MAX_VARIABLES:,}")
        return res
    from coflowopt.lp import slowdown_feasibility

    fr = slowdown_feasibility(inst, E, ph)
    res["target_feasible"] = fr.feasible
    res["target_lp_status"] = fr.result.status.value
    if fr.feasible is False and p.mode == "offline":
        raise NoFeasibleSchedule(
            f"cofair: E = {E:.6g} is below E* (the slowdown LP is infeasible at E: no schedule "
            f"meets every deadline r_j + E C_j^0 / phi_j; E_MPS = {e_mps:.6g} is only a lower "
            f"bound on E*, coflowopt.lp.min_slowdown finds E*); CoFair's order met the "
            f"relaxed deadlines, its schedule reached slowdown {worst:.6g}")
    return res

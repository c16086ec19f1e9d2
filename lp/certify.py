"""Certified lower bounds from any dual vector of an LP (the Lagrangian value).

For the container's LP (:class:`~coflowopt.lp.model.LinearProgram`, minimisation)::

    min c^T x + offset   s.t.   L <= A x <= U,   l <= x <= u,

every vector ``y`` (one entry per row) gives, for every feasible ``x`` with ``s = A x``,
``c^T x = (c - A^T y)^T x + y^T s``, hence (weak duality, Lagrangian relaxation of the rows)::

    OPT >= g(y) = offset + sum_i (y_i > 0 ? y_i L_i : y_i U_i) + sum_j min(r_j l_j, r_j u_j),
    r = c - A^T y.

This is HiGHS's sign convention (a ``<=`` row binding at a minimum has ``y_i <= 0``; the reduced
costs HiGHS reports are ``r``), checked on a small LP against its exact optimum in
``tests/lp/test_certify.py``.  ``g(y)`` needs no optimality, no feasibility and no accuracy of
``y``: a dual from an inexact or early-stopped first-order solve (PDLP) still yields a valid
bound, only a weaker one.  It is finite when every term is: a row whose lower side is
``-inf`` needs ``y_i <= 0`` and one whose upper side is ``+inf`` needs ``y_i >= 0`` (we clip ``y``
to the allowed sign first, which keeps it a valid multiplier), and a column with an infinite bound
needs ``r_j`` of the matching sign (in the boxed case, every ``l_j`` and ``u_j`` finite, every
``y`` works).  The bound also holds for an integer program (it bounds its LP relaxation).

**Floating point.**  ``g(y)`` is evaluated in float64 from the stored (float64) model data and
the dual as given.  Each computed reduced cost ``fl(r_j)`` differs from the exact one by at most
``gamma_{k} (|c_j| + (|A|^T |y|)_j)`` (Higham, *Accuracy and Stability of Numerical Algorithms*,
2nd ed. 2002, section 3.1: ``gamma_n = n u / (1 - n u)``, ``u = 2^-53``, ``k`` the longest column
plus one); every product adds one rounding and the final sums of ``N`` terms at most
``gamma_N`` times the sum of the absolute terms.  :func:`lagrangian_bound` adds these bounds up,
doubles the total (to cover the rounding of the bound's own computation) and subtracts it: the
returned value is a lower bound on the exact ``g(y)`` of the stored model, hence on its optimum,
*certified up to that bounded float rounding* (a column with an infinite bound whose reduced cost
is not provably of the right sign makes the bound ``-inf``, not certified).  The model itself is
what the formulation built in float64; that its optimum bounds the scheduling problem is the
formulation's theorem (e.g. :mod:`coflowopt.lp.interval`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from .backends import solve
from .model import LinearProgram, SolveParams, SolveResult, Status

__all__ = ["PDLP", "CertifiedBound", "certified_solve", "lagrangian_bound"]

_U = 2.0 ** -53

#: PDLP at a 1e-4 relative duality gap, without presolve (a presolved model stopped at a limit
#: has no dual vector in the original space)
PDLP = SolveParams(method="pdlp", tolerance=1e-4, presolve=False)


def _gamma(n: int) -> float:
    nu = n * _U
    return nu / (1.0 - nu) if nu < 0.5 else math.inf


def lagrangian_bound(lp: LinearProgram, row_dual: np.ndarray | None) -> tuple[float, float]:
    """``(g, slack)``: the Lagrangian value ``g(y)`` of ``lp`` at ``y = row_dual`` (clipped to
    the sign each row allows; ``None``: ``y = 0``) as computed in float64, and a bound on its
    float rounding error; ``g - slack`` is a certified lower bound on the LP optimum (see the
    module docstring).  ``g = -inf`` when a column with an infinite bound has a reduced cost of
    the wrong sign (or one too close to zero to tell)."""
    if lp.sense != "min":
        raise ValueError(f"lagrangian_bound: {lp.name}: a lower bound needs a minimisation")
    m, n = lp.n_rows, lp.n_cols
    y = np.zeros(m) if row_dual is None else np.array(row_dual, dtype=np.float64)
    if y.shape != (m,):
        raise ValueError(f"lagrangian_bound: {lp.name}: expected {m} row duals, got "
                         f"shape {y.shape}")
    y[~np.isfinite(y)] = 0.0
    lo_r, up_r = lp.row_lower, lp.row_upper
    # a side at infinity takes no multiplier of its sign
    y[(y > 0) & ~np.isfinite(lo_r)] = 0.0
    y[(y < 0) & ~np.isfinite(up_r)] = 0.0
    row_terms = np.where(y > 0, y * np.where(y > 0, lo_r, 0.0),
                         y * np.where(y < 0, up_r, 0.0))
    AT = lp.A.T.tocsr()
    r = lp.cost - AT @ y
    k = int(np.diff(AT.indptr).max(initial=0)) + 2
    r_err = _gamma(k) * (np.abs(lp.cost) + abs(AT) @ np.abs(y))
    lo_c, up_c = lp.col_lower, lp.col_upper
    # min over [l, u] of r x: at l when r >= 0, at u when r <= 0
    use_lo = r >= 0
    at = np.where(use_lo, lo_c, up_c)
    if not np.isfinite(at).all():
        return -math.inf, 0.0
    # an infinite other side needs the sign of r proven, not just computed
    unsafe = (use_lo & ~np.isfinite(up_c)) & (r < r_err)
    unsafe |= (~use_lo & ~np.isfinite(lo_c)) & (-r < r_err)
    if unsafe.any():
        return -math.inf, 0.0
    col_terms = r * at
    g = float(lp.offset + row_terms.sum() + col_terms.sum())
    mag = np.maximum(np.abs(np.where(np.isfinite(lo_c), lo_c, 0.0)),
                     np.abs(np.where(np.isfinite(up_c), up_c, 0.0)))
    terms = np.abs(row_terms).sum() + np.abs(col_terms).sum() + abs(lp.offset)
    slack = float(r_err @ mag) + (_U + _gamma(m + n + 2)) * float(terms)
    return g, 2.0 * slack


@dataclass(frozen=True)
class CertifiedBound:
    """A lower bound on an LP's optimum and how it was obtained.

    - ``value``: the certified lower bound ``g(y) - slack`` (``-inf`` when none: see
      :func:`lagrangian_bound`); ``certified``: whether it is finite;
    - ``primal_value``: the objective of the solver's primal vector (an estimate only: an
      inexact solve's ``x`` may violate rows by up to the tolerance; NaN without one);
    - ``dual_value``: ``g(y)`` as computed, before the rounding slack ``slack``;
    - ``gap``: ``(primal_value - value) / max(|primal_value|, 1e-9)`` (NaN without a primal);
    - ``solver``: back-end and method; ``status``: the solve's status; ``seconds``: wall clock of
      solve and certification; ``iterations``: the method's iterations; ``message``: the
      solver's words.
    """

    value: float
    certified: bool
    primal_value: float
    dual_value: float
    gap: float
    solver: str
    status: Status
    seconds: float
    iterations: int
    slack: float = 0.0
    message: str = ""


def certify(lp: LinearProgram, result: SolveResult, seconds: float | None = None) -> \
        CertifiedBound:
    """The certified bound of a finished solve of ``lp`` (its row duals; ``y = 0`` when it has
    none, still a valid bound on a boxed model)."""
    t0 = time.perf_counter()
    g, slack = lagrangian_bound(lp, result.row_dual)
    value = g - slack
    primal = result.objective if result.x is not None else math.nan
    gap = (primal - value) / max(abs(primal), 1e-9) if math.isfinite(primal) and \
        math.isfinite(value) else math.nan
    spent = (result.runtime if seconds is None else seconds) + time.perf_counter() - t0
    source = "" if result.row_dual is not None else " (no dual vector: y = 0)"
    return CertifiedBound(value, math.isfinite(value), primal, g, gap, result.backend,
                          result.status, spent, result.iterations, slack,
                          result.message + source)


def certified_solve(lp: LinearProgram, params: SolveParams | None = None, *,
                    backend: str = "highs") -> CertifiedBound:
    """Solve ``lp`` (default :data:`PDLP`; any ``params``) and certify a lower bound on its
    optimum from the dual vector the solve ends with, whatever its status."""
    params = PDLP if params is None else params
    res = solve(lp, params, backend=backend)
    out = certify(lp, res)
    method = params.method or "default"
    return replace(out, solver=f"{res.backend}/{method}")

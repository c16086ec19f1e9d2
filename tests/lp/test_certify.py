"""Certified Lagrangian bounds and the PDLP back-end option (coflowopt.lp.certify)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coflowopt.lp import LinearProgram, SolveParams, Status, solve
from coflowopt.lp.certify import PDLP, certified_solve, lagrangian_bound


def tiny() -> LinearProgram:
    """min -x0 - 2 x1 s.t. x0 + x1 <= 1.5, x0 - x1 >= -0.5, 0 <= x <= 1.

    Hand-worked optimum: x1 = 1 (its cost is the larger), then x0 <= 0.5 from the first row
    (the second, x0 >= 0.5, holds with equality): -0.5 - 2 = -2.5."""
    return LinearProgram.from_arrays([-1.0, -2.0], [[1.0, 1.0], [1.0, -1.0]],
                                     [-np.inf, -0.5], [1.5, np.inf], [0.0, 0.0], [1.0, 1.0])


def test_sign_convention_on_tiny_lp():
    lp = tiny()
    # the optimal dual (worked by hand): y = (-1, 0); r = c - A^T y = (0, -1);
    # g = -1.5 + min(0, 0) + min(0, -1) = -2.5
    g, slack = lagrangian_bound(lp, np.array([-1.0, 0.0]))
    assert g == pytest.approx(-2.5)
    assert 0 <= slack < 1e-12
    res = solve(lp, SolveParams(method="simplex"))
    assert res.objective == pytest.approx(-2.5)
    assert lagrangian_bound(lp, res.row_dual)[0] == pytest.approx(-2.5)


def test_any_dual_is_a_lower_bound():
    lp = tiny()
    rng = np.random.default_rng(5)
    for _ in range(200):
        y = rng.normal(scale=3.0, size=2)
        g, slack = lagrangian_bound(lp, y)
        assert g - slack <= -2.5 + 1e-12
    # a wrong-sign multiplier on a one-sided row is clipped to 0, not used
    assert lagrangian_bound(lp, np.array([5.0, 0.0]))[0] == lagrangian_bound(lp, None)[0]
    assert lagrangian_bound(lp, None)[0] == pytest.approx(-3.0)  # the box alone


def test_unbounded_column_needs_the_right_reduced_cost():
    # min x s.t. x >= 1, x >= 0 unbounded above: y = 1/2 gives r = 1/2 > 0, g = 1/2
    lp = LinearProgram.from_arrays([1.0], [[1.0]], [1.0], [np.inf])
    assert lagrangian_bound(lp, np.array([0.5]))[0] == pytest.approx(0.5)
    # y = 2 makes r = -1 on a column without an upper bound: no bound
    assert lagrangian_bound(lp, np.array([2.0]))[0] == -math.inf


@pytest.mark.parametrize("method", ["simplex", "ipm", "pdlp"])
def test_methods_agree(method):
    res = solve(tiny(), SolveParams(method=method, tolerance=1e-7))
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(-2.5, abs=1e-5)
    b = certified_solve(tiny(), SolveParams(method=method, tolerance=1e-7))
    assert b.certified and b.value <= -2.5 + 1e-12
    assert b.value == pytest.approx(-2.5, abs=1e-4)


def test_early_stopped_pdlp_is_still_a_bound():
    lp = tiny()
    b = certified_solve(lp, SolveParams(method="pdlp", iteration_limit=3, presolve=False))
    assert b.status in (Status.FEASIBLE, Status.TIME_LIMIT)
    assert b.certified and b.value <= -2.5
    assert b.iterations <= 3


def test_bad_method_and_scipy_pdlp():
    with pytest.raises(ValueError, match="method"):
        SolveParams(method="barrier")
    res = solve(tiny(), PDLP, backend="scipy")
    assert res.status is Status.ERROR and "pdlp" in res.message
    assert solve(tiny(), SolveParams(method="ipm"), backend="scipy").objective == \
        pytest.approx(-2.5)

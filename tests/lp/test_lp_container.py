"""The LP container and its three back-ends: agreement, statuses, bad data, export."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coflowopt.lp import (
    LinearProgram,
    LPDataError,
    ModelBuilder,
    SolveParams,
    Status,
    pulp_problem,
    solve,
    time_indexed_model,
)
from coflowopt.lp.model import Block

BACKENDS = ("highs", "scipy", "pulp")


def random_model(seed: int, *, integer: bool, n: int = 6, m: int = 5) -> LinearProgram:
    """A bounded, feasible random model: x in [0, u], mixed <=, >=, ranged and equality rows
    that hold at a known point x0."""
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, size=(m, n)) * (rng.random((m, n)) < 0.7)
    x0 = rng.integers(0, 4, size=n).astype(float)
    ax = A @ x0
    kind = rng.integers(0, 4, size=m)
    lo = np.where(kind == 0, -np.inf, ax - rng.integers(0, 3, size=m))
    up = np.where(kind == 1, np.inf, ax + rng.integers(0, 3, size=m))
    eq = kind == 3
    lo[eq] = up[eq] = ax[eq]
    c = rng.integers(-5, 6, size=n).astype(float)
    integ = (rng.random(n) < 0.6) if integer else np.zeros(n, bool)
    return LinearProgram.from_arrays(c, sp.csr_matrix(A.astype(float)), lo, up,
                                     np.zeros(n), np.full(n, 5.0), integ,
                                     sense="max" if seed % 3 == 0 else "min")


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_backends_agree(seed: int, integer: bool) -> None:
    lp = random_model(seed, integer=integer)
    results = {b: solve(lp, backend=b) for b in BACKENDS}
    for b, r in results.items():
        assert r.status is Status.OPTIMAL, (b, r.message)
        assert r.x is not None and lp.violation(r.x) < 1e-6
        if integer:
            assert np.allclose(r.x[lp.integrality], np.round(r.x[lp.integrality]), atol=1e-6)
        assert r.objective == pytest.approx(lp.objective_value(r.x), abs=1e-7)
    objs = [r.objective for r in results.values()]
    assert max(objs) - min(objs) < 1e-6 * max(1.0, abs(objs[0]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.booleans())
def test_backends_agree_property(seed: int, integer: bool) -> None:
    lp = random_model(seed, integer=integer, n=4, m=3)
    a, b = solve(lp, backend="highs"), solve(lp, backend="scipy")
    assert a.status is b.status is Status.OPTIMAL
    # "optimal" means within the relative MIP gap (1e-6) for a MILP: allow it on both sides
    gap = 2 * SolveParams().mip_rel_gap * max(1.0, abs(b.objective)) if integer else 0.0
    assert a.objective == pytest.approx(b.objective, abs=1e-6 + gap)


def test_relaxation_below_milp() -> None:
    for seed in range(10):
        lp = random_model(seed, integer=True)
        r_int, r_lp = solve(lp), solve(lp.relax())
        better = (lambda a, b: a <= b + 1e-9) if lp.sense == "min" else \
            (lambda a, b: a >= b - 1e-9)
        assert better(r_lp.objective, r_int.objective)
        assert not lp.relax().is_mip


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_and_unbounded(backend: str) -> None:
    infeasible = LinearProgram.from_arrays([1.0, 1.0], [[1.0, 1.0]], [10.0], None, [0, 0],
                                           [2, 2])
    r = solve(infeasible, backend=backend)
    assert r.status is Status.INFEASIBLE and r.x is None and math.isnan(r.objective)
    unbounded = LinearProgram.from_arrays([-1.0, 0.0], [[0.0, 1.0]], None, [1.0], [0, 0],
                                          [np.inf, np.inf])
    assert solve(unbounded, backend=backend).status is Status.UNBOUNDED
    infeasible_mip = infeasible.relax()
    object.__setattr__(infeasible_mip, "integrality", np.array([True, False]))
    assert solve(infeasible_mip, backend=backend).status is Status.INFEASIBLE


def _hard_milp() -> LinearProgram:
    from coflowopt.proofs_check.instances import random_single_stage

    inst = random_single_stage(np.random.default_rng(5), coflows=(12, 12), ports=(3, 3),
                               flows=(2, 4), vmax=4)
    return time_indexed_model(inst).lp


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_is_a_status(backend: str) -> None:
    lp = _hard_milp()
    r = solve(lp, backend=backend, time_limit=0.2)
    assert r.status in (Status.TIME_LIMIT, Status.FEASIBLE)
    if r.status is Status.FEASIBLE:
        assert r.x is not None and lp.violation(r.x) < 1e-5
        assert r.gap > 0 or math.isnan(r.gap)
    else:
        assert r.x is None
    assert r.runtime < 30


def test_solver_failure_is_a_result() -> None:
    lp = random_model(1, integer=False)
    r = solve(lp, backend="pulp", solver="NO_SUCH_SOLVER")
    assert r.status is Status.ERROR and "NO_SUCH_SOLVER" in r.message
    with pytest.raises(ValueError, match="unknown backend"):
        solve(lp, backend="cplex")


def test_pulp_with_a_solver_object() -> None:
    import pulp

    lp = random_model(4, integer=True)
    r = solve(lp, backend="pulp", solver=pulp.HiGHS(msg=False))
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(solve(lp).objective, abs=1e-6)
    prob, xs = pulp_problem(lp)
    assert len(xs) == lp.n_cols and prob.numConstraints() >= lp.n_rows


@pytest.mark.parametrize("field,match", [
    ("cost", r"cost\[1\] \(column x_1\): nan"),
    ("A", r"A\[0, 1\] \(row r_0, column x_1\): nan"),
    ("row_lower", r"row_lower\[0\] \(row r_0\): nan"),
    ("col_upper", r"col_upper\[1\] \(column x_1\): nan"),
])
def test_nan_is_refused_with_the_field(field: str, match: str) -> None:
    data = {"cost": [1.0, 1.0], "A": [[1.0, 1.0]], "row_lower": [1.0], "col_upper": [4.0, 4.0]}
    if field == "A":
        data["A"] = [[1.0, np.nan]]
    elif field == "cost":
        data["cost"] = [1.0, np.nan]
    elif field == "row_lower":
        data["row_lower"] = [np.nan]
    else:
        data["col_upper"] = [4.0, np.nan]
    with pytest.raises(LPDataError, match=match):
        LinearProgram.from_arrays(data["cost"], data["A"], data["row_lower"], None, None,
                                  data["col_upper"])


def test_other_bad_data() -> None:
    with pytest.raises(LPDataError, match=r"cost.*not a finite"):
        LinearProgram.from_arrays([np.inf])
    with pytest.raises(LPDataError, match=r"col_lower.*not a valid bound"):
        LinearProgram.from_arrays([1.0], col_lower=[np.inf])
    with pytest.raises(LPDataError, match="A: has 3 columns, cost has 2"):
        LinearProgram.from_arrays([1.0, 1.0], [[1.0, 1.0, 1.0]])
    b = ModelBuilder("m")
    x = b.add_columns("flow", (2, 3), cost=np.nan)
    with pytest.raises(LPDataError, match=r"cost\[0\] \(column flow_0_0\)"):
        b.build()
    del x


def test_builder_blocks_and_values() -> None:
    b = ModelBuilder("toy")
    x = b.add_columns("x", (2, 2), lb=0, ub=1, cost=[[1, 2], [3, 4]])
    y = b.add_columns("y", 1, cost=-1.0, ub=3, integer=True)
    b.add_rows("sum", 1, [0] * 5, np.r_[x.ravel(), y], 1.0, lower=2.0, upper=2.0)
    lp = b.build()
    assert lp.col_names() == ["x_0_0", "x_0_1", "x_1_0", "x_1_1", "y_0"]
    assert lp.row_names() == ["sum_0"]
    assert lp.block("x") == Block("x", 0, (2, 2))
    r = solve(lp)
    assert r.objective == pytest.approx(-2.0)  # y = 2, x = 0
    assert lp.values(r.x, "x").shape == (2, 2)
    cut = lp.with_rows(sp.csr_matrix(np.r_[0, 0, 0, 0, 1.0][None, :]), -np.inf, 1.0)
    assert solve(cut).objective == pytest.approx(-1.0 + 1.0)  # y = 1, one unit of x_0_0


@pytest.mark.parametrize("ext", [".mps", ".lp"])
def test_export_round_trip(tmp_path, ext: str) -> None:
    import highspy

    from coflowopt.lp.highs import new_highs

    lp = random_model(7, integer=True)
    path = lp.write(tmp_path / f"model{ext}")
    assert path.exists() and path.stat().st_size > 0
    h = new_highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(solve(lp).objective, abs=1e-6)
    with pytest.raises(ValueError, match="extension"):
        lp.write(tmp_path / "model.txt")


def test_params_checked() -> None:
    with pytest.raises(ValueError, match="time_limit"):
        SolveParams(time_limit=0)
    with pytest.raises(ValueError, match="mip_rel_gap"):
        SolveParams(mip_rel_gap=1.5)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_highs_threads_are_each_solves_parameter() -> None:
    # HiGHS keeps one thread pool per process (so: a fresh process here).  A solve's
    # SolveParams.threads decides its count, the pool following when it differs (HiGHS would
    # refuse the run otherwise); a solve that asks for none runs on the pool as it is, which is
    # how a proof-check worker runs every LP on the one thread it started the pool with
    code = """
import os
import numpy as np
import scipy.sparse as sp
from coflowopt.lp import LinearProgram, SolveParams, Status, solve
from coflowopt.lp.backends import HIGHS_POOL

def tasks():
    return len(os.listdir("/proc/self/task"))

lp = random_model(1, integer=True)
HIGHS_POOL.start(3)
n3 = tasks()
assert solve(lp).status is Status.OPTIMAL and tasks() == n3 and HIGHS_POOL.threads == 3
assert solve(lp, SolveParams(threads=1)).status is Status.OPTIMAL
assert HIGHS_POOL.threads == 1 and tasks() == n3 - 2
assert solve(lp, threads=2).status is Status.OPTIMAL and tasks() == n3 - 1
assert solve(lp).status is Status.OPTIMAL and HIGHS_POOL.threads == 2
print("ok")
"""
    import inspect
    import subprocess
    import sys

    src = inspect.getsource(random_model)
    out = subprocess.run([sys.executable, "-c", code.replace("\nlp = ", f"\n{src}\nlp = ", 1)],
                         capture_output=True, text=True, check=False)
    assert out.stdout.strip().endswith("ok"), out.stderr[-2000:]

"""The interval-indexed LP (coflowopt.lp.interval): grid, validity against exact optima."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt.lp import SolveParams, fluid_optimum
from coflowopt.lp.interval import (
    IntervalParams,
    geometric_grid,
    interval_lower_bound,
    interval_lp,
)
from coflowopt.model import Fabric, Instance
from coflowopt.proofs_check import instances as gen

SIMPLEX = SolveParams(method="simplex")


def test_geometric_grid():
    tau = geometric_grid(10.0, 1.0, first=1.0)  # 0, 1, 2, 4, 8, 16
    assert tau.tolist() == [0.0, 1.0, 2.0, 4.0, 8.0, 16.0]
    assert geometric_grid(0.5, 0.1, first=1.0).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="eps"):
        geometric_grid(10.0, 0.0)


def two_coflows() -> Instance:
    """Two unit coflows on ingress port 0 of a 1-port fabric, weights 1, release 0.

    Hand-worked: OPT = 1 + 2 = 3 (one after the other).  On the grid 0, 1, 2 (eps = 1, first
    = 1, horizon 2) the LP has X_{k,1}, X_{k,2} per coflow, port rows X_{0,1} + X_{1,1} <= 1
    (X_{0,2} + X_{1,2} <= 2 cannot bind), costs c_{k,1} = max(0, 1) = 1, c_{k,2} = 1,
    c_{k,3} = 2: each coflow costs 2 + 0 X_{k,1} - X_{k,2}, and X_{k,2} = 1 is allowed, so the
    LP value is 1 + 1 = 2 (below OPT = 3: the grid charges the left end of (1, 2]).
    """
    return Instance.from_arrays(Fabric.uniform(1), [0, 0], [0, 0], [1.0, 1.0], [0, 1],
                                n_coflows=2)


def test_hand_worked_value():
    inst = two_coflows()
    b = interval_lower_bound(inst, IntervalParams(eps=1.0, horizon=2.0), SIMPLEX)
    assert b.intervals == 2
    assert b.certified and b.value == pytest.approx(2.0, abs=1e-9)
    assert b.value <= 3.0


@pytest.mark.parametrize("grid", ["global", "release"])
@pytest.mark.parametrize("seed", range(5))
def test_bound_below_fluid_optimum(seed, grid):
    rng = np.random.default_rng(seed)
    inst = gen.random_single_stage(rng, coflows=(2, 4))
    opt = fluid_optimum(inst).value  # brute force over completion orders
    for eps in (0.05, 0.5):
        exact = interval_lower_bound(inst, IntervalParams(eps=eps, grid=grid), SIMPLEX)
        pdlp = interval_lower_bound(inst, IntervalParams(eps=eps, grid=grid))
        assert exact.certified and pdlp.certified
        assert exact.value <= opt + 1e-9
        assert pdlp.value <= exact.bound.primal_value + 1e-9


@pytest.mark.parametrize("grid", ["global", "release"])
@pytest.mark.parametrize("seed", range(4))
def test_job_version_below_fluid_optimum(seed, grid):
    rng = np.random.default_rng(100 + seed)
    inst = gen.random_dag_jobs(rng, releases=False)
    for obj in ("weighted_jct", "weighted_completion"):
        opt = fluid_optimum(inst, obj).value
        b = interval_lower_bound(inst, IntervalParams(eps=0.1, objective=obj, grid=grid),
                                 SIMPLEX)
        assert b.certified and b.value <= opt + 1e-9


def test_model_blocks_and_size():
    inst = gen.example2()
    lp = interval_lp(inst, IntervalParams(eps=0.5, objective="weighted_jct", grid="global"))
    L = lp.meta["tau"].size - 1
    assert lp.block("X").shape == (inst.n_coflows, L)
    assert lp.block("Z").shape == (inst.n_jobs, L)
    # example 2's jobs have different releases: "auto" takes the per-coflow grids
    rel = interval_lp(inst, IntervalParams(eps=0.5, objective="weighted_jct"))
    assert rel.meta["grid_kind"] == "release"
    assert rel.block("X").shape == (inst.n_coflows, rel.meta["grid"].shape[1] - 1)
    assert rel.block("Z").shape[0] == inst.n_jobs
    assert {b.name for b in lp.row_blocks} >= {"X_monotone", "Z_monotone", "job",
                                               "starts_after"}


@pytest.mark.parametrize("grid", ["global", "release"])
def test_releases_hand_worked(grid):
    # A (release 0) and B (release 0.5), one unit of work each on the one port.  By hand:
    # A first gives 1 + 2 = 3; B first (A preempted at 0.5) gives 1.5 + 2 = 3.5; so OPT = 3;
    # the isolation bound is 1 + 1.5 = 2.5
    inst = Instance.from_arrays(Fabric.uniform(1), [0, 0], [0, 0], [1.0, 1.0], [0, 1],
                                n_coflows=2, coflow_release=[0.0, 0.5])
    b = interval_lower_bound(inst, IntervalParams(eps=0.1, grid=grid), SIMPLEX)
    assert b.certified and 2.5 - 1e-9 <= b.value <= 3.0 + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_pdlp_stopped_after_5_iterations_is_still_below_the_optimum(seed):
    rng = np.random.default_rng(200 + seed)
    inst = gen.random_single_stage(rng, coflows=(3, 4))
    opt = fluid_optimum(inst).value
    stopped = interval_lower_bound(
        inst, IntervalParams(eps=0.1), SolveParams(method="pdlp", iteration_limit=5,
                                                   presolve=False))
    assert stopped.bound.iterations <= 5
    assert stopped.certified and stopped.value <= opt

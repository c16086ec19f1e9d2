"""Slowdown feasibility, E* bisection and MPS; the ordering LPs and primal-dual orders."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mps_gap import E_MPS, E_STAR, seed306, witness
from strategies import example2, instances

from coflowopt import CoflowSpec, Instance, build_instance, metrics, validate
from coflowopt.lp import (
    Status,
    bssi_order,
    fluid_optimum,
    job_ordering_lp,
    job_port_loads,
    min_slowdown,
    mps,
    order_cost,
    ordering_lp,
    primal_dual_job_order,
    ps_model,
    slot_horizon,
    slowdown_feasibility,
    tian_lp,
)
from coflowopt.proofs_check.instances import (
    e2_instance,
    example4,
    random_dag_jobs,
    random_single_stage,
)

# -- slowdown ------------------------------------------------------------------------------


def test_e3_mps_and_e_star() -> None:
    """Single-stage E3: MPS order C3, C1, C2, C4 with ratios 1, 1.25, 1.5, 1.6 -> 1.6 = E*."""
    inst = e2_instance()
    r = mps(inst)
    assert r.E == pytest.approx(1.6)
    assert r.order.tolist() == [2, 0, 1, 3]
    assert slowdown_feasibility(inst, 1.6).feasible
    assert slowdown_feasibility(inst, 1.5).feasible is False
    assert slowdown_feasibility(inst, 1.599).feasible is False
    res = min_slowdown(inst)
    assert res.E_star == pytest.approx(1.6) and res.lp_solves == 1
    v = validate(inst, res.schedule)
    assert metrics.slowdown(v).max() <= 1.6 + 1e-6


@pytest.mark.parametrize("seed", range(10))
def test_bisection(seed: int) -> None:
    inst = random_single_stage(np.random.default_rng(seed), coflows=(3, 6), ports=(2, 4),
                               weights=False)
    res = min_slowdown(inst, rtol=1e-4)
    assert res.E_mps <= res.E_star * (1 + 1e-9)
    assert res.E_hi - res.E_lo <= 1e-4 * res.E_lo + 1e-12 or res.lp_solves == 1
    v = validate(inst, res.schedule)
    assert metrics.slowdown(v).max() <= res.E_star * (1 + 1e-6)
    if res.lp_solves > 1:  # the lower end is infeasible, the upper feasible
        assert slowdown_feasibility(inst, res.E_lo).feasible is False
    # number of LPs: 1 + 1 + ceil(log2((hi - lo) / eps)) at most
    assert res.lp_solves <= 2 + math.ceil(math.log2(max(res.E_hi, 2) / (1e-4 * res.E_lo))) + 1


@pytest.mark.parametrize("seed", range(6))
def test_theorem2_slot_lp_decides_ps(seed: int) -> None:
    """PS(E) (the MILP) is feasible iff LP-slot(E) is; LP-slot feasible => LP-interval feasible."""
    inst = random_single_stage(np.random.default_rng(40 + seed), coflows=(2, 4),
                               releases=bool(seed % 2), weights=False)
    for E in (1.0, 1.5, 2.0, 3.0):
        slot = slowdown_feasibility(inst, E, form="slot").feasible
        milp = ps_model(inst, E=E, horizon=slot_horizon(inst) + 10).solve()
        assert slot == (milp.status is Status.OPTIMAL), E
        if slot:
            assert slowdown_feasibility(inst, E).feasible
            v = validate(inst, milp.schedule)
            assert metrics.slowdown(v).max() <= E + 1e-6


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=4, max_flows=3, releases=False, dags=False))
def test_mps_is_a_lower_bound(inst: Instance) -> None:
    e_mps = mps(inst).E
    # (the LP decides feasibility to the solver's absolute tolerance, 1e-7)
    if slowdown_feasibility(inst, e_mps * (1 - 1e-4)).feasible:
        pytest.fail(f"feasible below E_MPS = {e_mps}")


def test_seed306_mps_below_e_star() -> None:
    """Issue 26: bench_cofair's seed 306 (tests/mps_gap.py, worked by hand): E_MPS = 21/19 is
    below E* = 5/4; the LP agrees at both ends and the bisection finds 5/4; the hand witness
    meets 5/4."""
    inst = seed306()
    assert mps(inst).E == pytest.approx(E_MPS)
    assert slowdown_feasibility(inst, E_STAR).feasible
    assert slowdown_feasibility(inst, E_STAR * (1 - 1e-4)).feasible is False
    assert slowdown_feasibility(inst, E_MPS).feasible is False
    res = min_slowdown(inst, rtol=1e-6)
    assert res.E_mps == pytest.approx(E_MPS)
    assert res.E_star == pytest.approx(E_STAR, rel=2e-6)
    assert metrics.slowdown(validate(inst, witness())).max() == pytest.approx(E_STAR)


@pytest.mark.parametrize("seed", range(8))
def test_mps_exact_with_one_sender(seed: int) -> None:
    """The condition of lp.mps's docstring: every flow leaves sender 0 (unit capacities), so
    it is the bottleneck of every coflow and prefix and E* = E_MPS (the LP, feasible at E_MPS
    and not 1e-4 below)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 5))
    inst = build_instance(m, coflows=[
        CoflowSpec([(0, int(rng.integers(0, m)), float(rng.integers(1, 10)))
                    for _ in range(int(rng.integers(1, 4)))])
        for _ in range(int(rng.integers(2, 7)))])
    e_mps = mps(inst).E
    assert slowdown_feasibility(inst, e_mps).feasible
    assert slowdown_feasibility(inst, e_mps * (1 - 1e-4)).feasible is False


def test_slowdown_needs_single_stage() -> None:
    with pytest.raises(ValueError, match="Starts-After"):
        min_slowdown(example2())


# -- ordering LPs --------------------------------------------------------------------------


def test_example2_values() -> None:
    """dag-coflows Example 2: LP (3) = 15 with C = (5, 5); primal-dual (J2, J1) with dual 15;
    Tian LP 18.5 (free and precedence-fixed delta); D = (6, 2)."""
    inst = example2()
    d = job_port_loads(inst)
    assert d.tolist() == [[4, 4, 1, 3, 2, 4], [1, 2, 2, 2, 2, 1]]
    lp = job_ordering_lp(inst)
    assert lp.value == pytest.approx(15.0) and lp.C == pytest.approx([5, 5])
    pd = primal_dual_job_order(inst)
    assert pd.order.tolist() == [1, 0] and pd.steps == ("release", "release")
    assert pd.dual == pytest.approx(15.0)
    assert pd.D.tolist() == [6, 2]
    assert tian_lp(inst).value == pytest.approx(18.5)
    assert tian_lp(inst, fix_precedence=True).value == pytest.approx(18.5)


def test_example4_values() -> None:
    """dag-coflows Example 4: sigma = (job1, job2, job0), steps load/release/load, dual 19 =
    LP (3) with C = (7, 2, 3); D = (7, 2, 3); sum w (T + rho + D) = 30 <= 3 * 19."""
    inst = example4()
    lp = job_ordering_lp(inst)
    assert lp.value == pytest.approx(19.0) and lp.C == pytest.approx([7, 2, 3])
    pd = primal_dual_job_order(inst)
    assert pd.order.tolist() == [1, 2, 0]
    assert pd.steps == ("load", "release", "load")
    assert pd.dual == pytest.approx(19.0)
    assert pd.D.tolist() == [7, 2, 3]
    assert pd.key_sum == pytest.approx(30.0)
    assert pd.bound_sum <= 3 * pd.dual


def _max_violation_brute(d: np.ndarray, C: np.ndarray) -> float:
    best = -math.inf
    idx = np.flatnonzero(d > 0)
    for r in range(1, idx.size + 1):
        for J in itertools.combinations(idx, r):
            J = list(J)
            best = max(best, 0.5 * (np.sum(d[J] ** 2) + d[J].sum() ** 2) - np.dot(d[J], C[J]))
    return best


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=7), st.integers(0, 10_000))
def test_prefix_separation_is_exact(d_int: list[int], seed: int) -> None:
    """When some subset inequality is violated, the most violated one is a prefix in C order
    (with none violated, the empty set is the maximiser and prefixes need not be)."""
    d = np.array(d_int, dtype=float)
    C = np.random.default_rng(seed).uniform(0, d.sum() + 2, size=d.size).round(1)
    idx = np.flatnonzero(d > 0)
    if not idx.size:
        return
    srt = idx[np.lexsort((idx, C[idx]))]
    pref = np.cumsum(d[srt])
    prefix_best = (0.5 * (np.cumsum(d[srt] ** 2) + pref ** 2) - np.cumsum(d[srt] * C[srt])).max()
    brute = _max_violation_brute(d, C)
    assert (prefix_best > 1e-12) == (brute > 1e-12)
    if brute > 1e-12:
        assert prefix_best == pytest.approx(brute, abs=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_separation_equals_enumeration(seed: int) -> None:
    inst = random_dag_jobs(np.random.default_rng(seed), jobs=(2, 6), per_job=(1, 2),
                           max_coflows=8)
    sep = job_ordering_lp(inst)
    enum = job_ordering_lp(inst, method="enumerate")
    assert sep.value == pytest.approx(enum.value, rel=1e-7)
    pd = primal_dual_job_order(inst)
    assert pd.dual <= enum.value + 1e-7
    assert pd.bound_sum <= pd.factor * pd.dual + 1e-7


def test_bssi_e2_trace() -> None:
    """Single-stage E2: bottlenecks out3, in1, in3, -, sigma = (C2, C4, C1, C3), cost 28."""
    inst = e2_instance()
    res = bssi_order(inst)
    assert res.order.tolist() == [1, 3, 0, 2]
    assert res.bottlenecks.tolist()[:3] == [5, 0, 2]
    assert res.beta[:2] == pytest.approx([1 / 3, 1 / 4])
    assert order_cost(inst, res.order) == pytest.approx(28.0)
    assert order_cost(inst, [2, 0, 1, 3]) == pytest.approx(30.0)  # SEBF order of E2


@pytest.mark.parametrize("seed", range(10))
def test_lower_bounds_below_the_fluid_optimum(seed: int) -> None:
    inst = random_single_stage(np.random.default_rng(200 + seed), coflows=(2, 5))
    opt = fluid_optimum(inst).value
    assert ordering_lp(inst).value <= opt + 1e-6
    cos = job_ordering_lp(inst)
    assert cos.value <= opt + 1e-6
    res = bssi_order(inst)
    assert res.dual <= cos.value + 1e-6
    assert order_cost(inst, res.order) <= 2 * res.dual + 1e-6


def test_dag_lower_bounds_below_slotted_optimum() -> None:
    from coflowopt.lp import solve_time_indexed

    for seed in range(6):
        inst = random_dag_jobs(np.random.default_rng(300 + seed))
        opt = solve_time_indexed(inst, objective="weighted_jct").value
        assert job_ordering_lp(inst).value <= opt + 1e-6
        assert tian_lp(inst).value <= opt + 1e-6
        assert tian_lp(inst, fix_precedence=True).value <= opt + 1e-6


def test_ordering_lp_two_coflows_by_hand() -> None:
    """Two coflows on one port pair, sizes 1 and 2, weights 1: LP = 1 + 3 = 4 (optimal
    order, delta integral)."""
    inst = build_instance(1, coflows=[CoflowSpec([(0, 0, 1.0)]), CoflowSpec([(0, 0, 2.0)])])
    res = ordering_lp(inst)
    assert res.value == pytest.approx(4.0)
    assert res.order.tolist() == [0, 1]


def test_best_lower_bound_weighs_coflows_not_jobs():
    """One coflow of weight 1 in a job of weight 2: one flow of volume 3 on one port, so the
    optimum weighted CCT is 1 x 3 = 3 (by hand).  The concurrent-open-shop LP weighs jobs, so it
    would say 6; no candidate may exceed the optimum."""
    from coflowopt.lp import best_lower_bound
    from coflowopt.model import Instance

    inst = Instance.from_arrays(1, [0], [0], [3.0], [0], coflow_weight=[1.0], job_weight=[2.0])
    lb = best_lower_bound(inst)
    assert lb.value == pytest.approx(3.0)
    assert max(lb.candidates.values()) <= 3.0 + 1e-9


def test_best_lower_bound_survives_a_refused_time_indexed_lp():
    """Two flows of 3e6 units on two separate port pairs: the time-indexed LP would need
    about 3e6 slots x 2 flows (over its column cap), so it is refused by size; the other bounds
    still stand.  Each coflow alone is optimal (separate ports), so OPT = 3e6 + 3e6 = 6e6 by
    hand, and the best bound must reach it (isolation is tight here) without exceeding it."""
    from coflowopt.lp import best_lower_bound
    from coflowopt.model import Instance

    inst = Instance.from_arrays(2, [0, 1], [0, 1], [3e6, 3e6], [0, 1])
    lb = best_lower_bound(inst)
    assert "time-indexed LP" in lb.skipped and "max_columns" in lb.skipped["time-indexed LP"]
    assert math.isnan(lb.candidates["time-indexed LP"])
    assert lb.value == pytest.approx(6e6, rel=1e-9)
    assert lb.value <= 6e6 * (1 + 1e-9)

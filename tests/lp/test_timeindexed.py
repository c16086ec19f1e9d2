"""The slotted MILP, its relaxation, the fluid LP lower bound, PS(E), SPS and the fluid optimum,
against brute force, worked examples and validated heuristics."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from scipy.optimize import linprog
from strategies import instances

from coflowopt import CoflowSpec, Instance, build_instance, metrics, validate
from coflowopt.lp import (
    SolveParams,
    Status,
    TimeIndexedParams,
    fluid_optimum,
    ps_model,
    slot_horizon,
    solve_time_indexed,
    sps_model,
    static_progress,
    time_indexed_lower_bound,
    time_indexed_model,
)
from coflowopt.proofs_check.instances import (
    e2_instance,
    example2,
    random_dag_jobs,
    random_single_stage,
    sqrt_mu_fixture,
)
from coflowopt.schedulers import registry, sequential


def slot_feasible(inst: Instance, comp: np.ndarray) -> bool:
    """Brute-force oracle: is there a slotted schedule in which coflow ``j`` is served only in
    slots ``r_j + 1 .. comp[j]`` and after its predecessors' slots ``comp[u]``?  A dense LP on
    x[i, t] with scipy, written independently of coflowopt.lp."""
    T = int(comp.max())
    F = inst.n_flows
    ptr, pred = inst.predecessors_ptr
    allowed = np.zeros((F, T), bool)
    for i in range(F):
        c = inst.flow_coflow[i]
        lo = math.ceil(inst.release[c] - 1e-9) + 1
        p = pred[ptr[c]:ptr[c + 1]]
        if p.size:
            lo = max(lo, int(comp[p].max()) + 1)
        allowed[i, lo - 1:int(comp[c])] = True
    if not allowed.any(axis=1).all():
        return False
    idx = np.flatnonzero(allowed.ravel())
    fi, ti = idx // T, idx % T
    A_eq = np.zeros((F, idx.size))
    A_eq[fi, np.arange(idx.size)] = 1
    m = inst.ports
    A_ub = np.zeros((2 * m * T, idx.size))
    v = inst.flow_volume
    A_ub[inst.flow_src[fi] * T + ti, np.arange(idx.size)] += v[fi]
    A_ub[m * T + inst.flow_dst[fi] * T + ti, np.arange(idx.size)] += v[fi]
    res = linprog(np.zeros(idx.size), A_ub=A_ub, b_ub=np.ones(2 * m * T), A_eq=A_eq,
                  b_eq=np.ones(F), bounds=(0, 1), method="highs")
    return res.status == 0


def brute_force_slotted(inst: Instance, objective: str = "weighted_completion") -> float:
    """min over completion-slot vectors (ascending objective) of the first feasible one."""
    T = slot_horizon(inst)
    lo = np.ceil(inst.release + inst.isolation_time - 1e-9).astype(int)
    ranges = [range(max(1, lo[c]), T + 1) for c in range(inst.n_coflows)]
    vecs = np.array(list(itertools.product(*ranges)), dtype=float)
    if objective == "weighted_completion":
        obj = vecs @ inst.coflow_weight
    elif objective == "makespan":
        obj = vecs.max(axis=1)
    else:
        jc = np.zeros((vecs.shape[0], inst.n_jobs))
        for c in range(inst.n_coflows):
            j = inst.coflow_job[c]
            jc[:, j] = np.maximum(jc[:, j], vecs[:, c])
        obj = jc @ inst.job_weight
    for k in np.argsort(obj, kind="stable"):
        if slot_feasible(inst, vecs[k]):
            return float(obj[k])
    raise AssertionError("no feasible completion vector within the horizon")


def tiny(seed: int, dag: bool) -> Instance:
    rng = np.random.default_rng(seed)
    if dag:
        return random_dag_jobs(rng, ports=(2, 2), jobs=(1, 2), per_job=(1, 2), max_coflows=3,
                               vmax=2)
    return random_single_stage(rng, ports=(2, 3), coflows=(2, 3), flows=(1, 2), vmax=2,
                               releases=bool(seed % 2))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("dag", [False, True])
def test_milp_equals_brute_force(seed: int, dag: bool) -> None:
    inst = tiny(seed, dag)
    objective = "weighted_jct" if dag else "weighted_completion"
    sol = solve_time_indexed(inst, TimeIndexedParams(objective=objective))
    assert sol.status is Status.OPTIMAL
    v = validate(inst, sol.schedule)
    value = metrics.weighted_jct(v) if dag else metrics.weighted_completion(v)
    assert value == pytest.approx(sol.value, abs=1e-6)
    assert sol.value == pytest.approx(brute_force_slotted(inst, objective), abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_makespan_equals_brute_force(seed: int) -> None:
    inst = tiny(seed, True)
    sol = solve_time_indexed(inst, objective="makespan")
    assert sol.value == pytest.approx(brute_force_slotted(inst, "makespan"), abs=1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_sandwich_with_every_registered_heuristic(seed: int) -> None:
    """fluid LP bound <= fluid OPT <= OPT_slot; relaxation <= OPT_slot; OPT_slot <= every
    heuristic's validated completion times counted per slot (integer data and releases)."""
    inst = random_single_stage(np.random.default_rng(100 + seed), coflows=(2, 4))
    heur = {}
    for name, info in registry().items():
        if info.multistage and name != "sequential":
            continue
        try:
            v = validate(inst, info(inst, seed=0))
        except Exception:  # another module's algorithm failing is its own tests' business
            if name == "sequential":
                raise
            continue
        heur[name] = v
    assert "sequential" in heur
    T = max(slot_horizon(inst), *(math.ceil(v.coflow_completion.max() - 1e-9)
                                  for v in heur.values()))
    model = time_indexed_model(inst, horizon=T)
    milp = model.solve()
    relax = model.solve(relax=True)
    lb = time_indexed_lower_bound(inst)
    opt = fluid_optimum(inst)
    w = inst.coflow_weight
    assert relax.value <= milp.value + 1e-6
    assert lb.value <= opt.value + 1e-6 <= milp.value + 2e-6
    assert metrics.weighted_completion(validate(inst, opt.schedule)) == pytest.approx(opt.value)
    for name, v in heur.items():
        assert metrics.weighted_completion(v) >= opt.value - 1e-6, name
        assert milp.value <= float(w @ np.ceil(v.coflow_completion - 1e-9)) + 1e-6, name


def test_e2_worked_example() -> None:
    """Single-stage E2/E3: slotted optimum 28 (= Sincronia's, the brute-force greedy optimum);
    with E = 5/3 the PS optimum is 30 with max slowdown 1.6; E = 1.5 < E* is infeasible."""
    inst = e2_instance()
    assert ps_model(inst).solve().value == pytest.approx(28.0)
    s = ps_model(inst, E=5 / 3).solve()
    v = validate(inst, s.schedule)
    assert s.value == pytest.approx(30.0)
    assert metrics.slowdown(v).max() == pytest.approx(1.6)
    assert ps_model(inst, E=1.5).solve().status is Status.INFEASIBLE
    assert fluid_optimum(inst).value <= 28.0 + 1e-9


def test_ps_monotone_in_E() -> None:
    inst = random_single_stage(np.random.default_rng(3), coflows=(4, 4), weights=True)
    vals = []
    for E in (1.5, 2.0, 3.0, math.inf):
        s = ps_model(inst, E=E, horizon=slot_horizon(inst)).solve()
        vals.append(s.value if s.status is Status.OPTIMAL else math.inf)
        if s.schedule is not None and math.isfinite(E):
            v = validate(inst, s.schedule)
            assert metrics.slowdown(v).max() <= E + 1e-6
    assert all(a >= b - 1e-6 for a, b in itertools.pairwise(vals))


def test_sps_floor_and_slowdown() -> None:
    inst = e2_instance()
    sp_ = static_progress(inst)
    assert sp_.P_star == pytest.approx(0.5)  # out3: 3/3 + 5/5 = 2 -> P* = 1/2
    model = sps_model(inst)
    sol = model.solve()
    assert sol.status is Status.OPTIMAL
    v = validate(inst, sol.schedule)
    # every flow at >= its floor from its release until it finishes: slowdown <= 1/P0 up to
    # slot rounding (here C0 / P0 are integers, so exactly)
    assert metrics.slowdown(v).max() <= 1 / sp_.P0 + 1e-6
    assert sol.value >= ps_model(inst).solve().value - 1e-6
    # an SPS schedule is a PS(E) schedule for E = max phi / P0
    assert ps_model(inst, E=1 / sp_.P0).solve().value <= sol.value + 1e-6


def test_sqrt_mu_fixture_by_exact_ilp() -> None:
    for k in (2, 3):
        inst = sqrt_mu_fixture(k)
        assert inst.aggregate_size[0] == k and inst.critical_path[0] == k
        sol = solve_time_indexed(inst, objective="makespan")
        assert sol.status is Status.OPTIMAL
        v = validate(inst, sol.schedule)
        assert v.coflow_completion.max() == pytest.approx(k * k)


def test_dag_example2_against_lp_bounds() -> None:
    inst = example2()
    sol = solve_time_indexed(inst, objective="weighted_jct")
    v = validate(inst, sol.schedule)
    lb = time_indexed_lower_bound(inst, objective="weighted_jct")
    assert lb.value <= metrics.weighted_jct(v) + 1e-6
    assert 18.5 - 1e-6 <= metrics.weighted_jct(v)  # Tian LP (spec: 18.5) is a lower bound
    assert metrics.weighted_jct(v) <= metrics.weighted_jct(validate(inst, sequential(inst)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=2, max_coflows=3, max_flows=2, releases=False, integer=True))
def test_lower_bound_below_slotted_and_sequential(inst: Instance) -> None:
    seq = validate(inst, sequential(inst))
    for objective, value in (("weighted_completion", metrics.weighted_completion(seq)),
                             ("weighted_jct", metrics.weighted_jct(seq))):
        lb = time_indexed_lower_bound(inst, objective=objective)
        assert lb.result.optimal
        assert lb.value <= value + 1e-6
        milp = solve_time_indexed(inst, objective=objective,
                                  horizon=max(slot_horizon(inst),
                                              math.ceil(seq.coflow_completion.max() - 1e-9)))
        assert lb.value <= milp.value + 1e-6 <= value + 2e-6


def test_fluid_optimum_is_smith_on_one_port() -> None:
    """One port pair: coflows are jobs on one machine; preemptive optimum = WSPT (Smith)."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        n = 4
        p = rng.integers(1, 6, size=n).astype(float)
        w = rng.integers(1, 4, size=n).astype(float)
        inst = build_instance(1, coflows=[CoflowSpec([(0, 0, p[j])], weight=w[j])
                                          for j in range(n)])
        order = np.argsort(p / w)
        smith = float(np.dot(w[order], np.cumsum(p[order])))
        sol = fluid_optimum(inst)
        assert sol.value == pytest.approx(smith)
        assert metrics.weighted_completion(validate(inst, sol.schedule)) == pytest.approx(smith)
        assert solve_time_indexed(inst).value == pytest.approx(smith)  # integer data


def test_fluid_optimum_refuses() -> None:
    inst = random_single_stage(np.random.default_rng(1), coflows=(3, 3), releases=True)
    if np.allclose(inst.release, inst.release[0]):
        pytest.skip("equal releases drawn")
    with pytest.raises(ValueError, match="common release"):
        fluid_optimum(inst)
    with pytest.raises(ValueError, match="max_coflows"):
        fluid_optimum(random_single_stage(np.random.default_rng(1), coflows=(7, 7)))


def test_non_unit_slot() -> None:
    """Half-unit slots on half-volume data: the same optimum, in half the time.  C2 (0->1,
    weight 2) blocks both ports of C1 for one slot: C2 = 0.5, C1 = 1.5 -> 2.5 (C1 first: 4)."""
    half = build_instance(2, coflows=[CoflowSpec([(0, 0, 0.5), (1, 1, 1.0)]),
                                      CoflowSpec([(0, 1, 0.5)], weight=2.0)])
    full = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0), (1, 1, 2.0)]),
                                      CoflowSpec([(0, 1, 1.0)], weight=2.0)])
    sol = solve_time_indexed(half, slot=0.5)
    v = validate(half, sol.schedule)
    assert metrics.weighted_completion(v) == pytest.approx(sol.value)
    assert sol.value == pytest.approx(2.5)
    assert solve_time_indexed(full).value == pytest.approx(5.0)
    assert sol.value == pytest.approx(brute_force_slotted(full) / 2)


def test_time_limited_milp_returns_a_bound() -> None:
    inst = random_single_stage(np.random.default_rng(5), coflows=(12, 12), ports=(3, 3),
                               flows=(2, 4), vmax=4)
    sol = time_indexed_model(inst).solve(SolveParams(time_limit=0.3))
    assert sol.status in (Status.TIME_LIMIT, Status.FEASIBLE)
    if sol.schedule is not None:
        v = validate(inst, sol.schedule)
        assert metrics.weighted_completion(v) <= sol.value + 1e-6


def test_a_model_past_max_columns_is_refused_before_building() -> None:
    from coflowopt.lp import ModelTooLarge
    from coflowopt.lp.timeindexed import slot_horizon
    from coflowopt.workloads.synthetic import synthetic_trace

    inst = synthetic_trace(5, seed=0)  # MB and ms: a 1 ms slot makes thousands of slots
    F, T = int((inst.flow_volume > 0).sum()), slot_horizon(inst, 1.0)
    expected = (2 * F + 2 * inst.n_coflows) * T  # x and the cuts' U per flow, X and Z per coflow
    with pytest.raises(ModelTooLarge, match=f"about {expected:,} columns") as err:
        time_indexed_model(inst, TimeIndexedParams(max_columns=100_000))
    slot = float(str(err.value).split("slot=")[1].split()[0])
    model = time_indexed_model(inst, TimeIndexedParams(slot=slot, max_columns=100_000))
    # the suggested slot fits (the estimate leaves out the few per-coflow columns)
    assert model.lp.n_cols <= 100_000 + 10 * inst.n_coflows

"""CoFair (single-stage spec section 4): the E3 worked example, the relaxed-deadline and
slowdown guarantees on random instances, the infeasibility exit against a brute force over all
orders, BSSI at ``E = inf``, the online mode against Sincronia's, and the proof check.

Values that depend on the reconstructed steps (4.3 [INF], the online mode 4.4 [PROP]) are
"against our reconstruction"; their oracles are the spec's worked example E3, a brute force, or
a second algorithm (BSSI, Sincronia's online mode)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from mps_gap import E_MPS, E_STAR, seed306

import coflowopt
from coflowopt import metrics
from coflowopt.lp import mps
from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.orders import bssi, coflow_port_loads, port_loads
from coflowopt.proofs_check.instances import e2_instance, random_single_stage
from coflowopt.schedulers.fair.cofair import (
    CoFairParams,
    cofair_deadlines,
    cofair_order,
    cofair_trace,
    mps_fallback_order,
)
from coflowopt.sim.drive import order_schedule
from coflowopt.validate import validate

IDS = ("C1", "C2", "C3", "C4")


def _named(inst, sigma):
    return tuple(str(inst.coflow_id[j]) for j in sigma)


def _relaxed_ok(p: np.ndarray, sigma: np.ndarray, D: np.ndarray) -> bool:
    """``T(A_k) <= D_sigma(k)`` for every prefix (prefix sums, independent of the code)."""
    T = np.cumsum(p[sigma], axis=0).max(axis=1)
    return bool(np.all(T <= D[sigma] * (1 + 1e-9) + 1e-12))


def _brute_feasible(p: np.ndarray, D: np.ndarray) -> bool:
    """Some order of all coflows meets every relaxed deadline (brute force over N! orders)."""
    return any(_relaxed_ok(p, np.array(s), D) for s in itertools.permutations(range(len(D))))


def _random(seed: int, releases: bool = False):
    rng = np.random.default_rng(seed)
    return random_single_stage(rng, ports=(2, 4), coflows=(3, 5), flows=(1, 4), vmax=9,
                               releases=releases)


# -- E3 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("E", [5 / 3, 2.0, 2.5])
def test_e3_orders_and_greedy_ccts(E: float) -> None:
    """Spec E3 (against our reconstruction): sigma = (C3, C2, C1, C4); greedy CCTs 6, 5, 3, 8;
    sum w C = 30; max slowdown 1.6."""
    inst = e2_instance()
    assert _named(inst, cofair_order(inst, None, cofair_deadlines(inst, E))) == \
        ("C3", "C2", "C1", "C4")
    res = coflowopt.run(inst, "cofair", params={"E": E})
    assert res.streamed
    np.testing.assert_allclose(res.valid.coflow_completion, [6, 5, 3, 8])
    assert metrics.summary(res.valid)["weighted_completion"] == pytest.approx(30)
    assert metrics.slowdown(res.valid).max() == pytest.approx(1.6)


@pytest.mark.parametrize("E", [8 / 3, 3.0, 10.0, math.inf])
def test_e3_large_E_gives_sincronias_order(E: float) -> None:
    """Spec E3: for E >= 8/3 (C3's deadline reaches 8) CoFair returns (C2, C4, C1, C3)."""
    inst = e2_instance()
    assert _named(inst, cofair_order(inst, None, cofair_deadlines(inst, E))) == \
        ("C2", "C4", "C1", "C3")
    res = coflowopt.run(inst, "cofair", params={"E": E})
    assert metrics.summary(res.valid)["weighted_completion"] == pytest.approx(28)


def test_e3_trace_pivots() -> None:
    """Spec E3 at E = 5/3: pivots out3, in1, in2 (ports 0..2 here: out 2, in 0, in 1)."""
    inst = e2_instance()
    tr = cofair_trace(inst, None, cofair_deadlines(inst, 5 / 3))
    m = inst.ports
    assert tr.pivots[3] == m + 2 and tr.pivots[2] == 0 and tr.pivots[1] == 1


def test_e3_default_is_E_mps_and_fairest() -> None:
    """Default slowdown = 1: E = E_MPS = 1.6 (spec E3), the same order as at 5/3."""
    inst = e2_instance()
    res = coflowopt.run(inst, "cofair")
    assert res.valid.meta["E"] == pytest.approx(1.6)
    np.testing.assert_allclose(res.valid.coflow_completion, [6, 5, 3, 8])
    res2 = coflowopt.run(inst, "cofair", params={"slowdown": 1.25})
    assert res2.valid.meta["E"] == pytest.approx(2.0)


def test_e3_infeasible_names_the_coflows() -> None:
    """Spec E3: E = 1.5 < E_MPS; deadlines 6, 6, 4.5, 7.5, pivot out3 of load 8 > C3's and
    C4's deadlines: no primal-feasible order (brute force agrees)."""
    inst = e2_instance()
    D = cofair_deadlines(inst, 1.5)
    np.testing.assert_allclose(D, [6, 6, 4.5, 7.5])
    assert not _brute_feasible(coflow_port_loads(inst), D)
    with pytest.raises(coflowopt.NoFeasibleSchedule) as exc:
        coflowopt.run(inst, "cofair", params={"E": 1.5})
    msg = str(exc.value)
    assert "\n" not in msg and exc.value.where == "C4"
    for part in ("E = 1.5 is below E_MPS = 1.6", "out 2 (load 8)", "C3: 4.5", "C4: 7.5"):
        assert part in msg
    with pytest.raises(coflowopt.NoFeasibleSchedule):
        coflowopt.run(inst, "cofair", params={"slowdown": 0.99})


# -- the slowdown target (issue 26) ---------------------------------------------------------------


@pytest.mark.parametrize("E", [5 / 3, math.inf])
def test_target_met_is_reported(E: float) -> None:
    """Spec E3: at E = 5/3 the greedy schedule's max slowdown is 1.6 <= E (and anything is
    met at inf): met, the schedule is the witness."""
    res = coflowopt.run(e2_instance(), "cofair", params={"E": E})
    meta = res.valid.meta
    want = 1.6 if E == 5 / 3 else metrics.slowdown(res.valid).max()
    assert meta["max_slowdown"] == pytest.approx(want)
    assert meta["slowdown_target_met"] is True and meta["target_feasible"] is True


def test_target_missed_but_feasible_is_reported() -> None:
    """Seed 306 (tests/mps_gap.py) at E = E* = 5/4 (hand witness): CoFair's order meets the
    relaxed deadlines but its greedy schedule exceeds 5/4 (metrics.slowdown of the validated
    schedule, within the 2E bound): not met, yet feasible (the LP)."""
    inst = seed306()
    res = coflowopt.run(inst, "cofair", params={"E": E_STAR})
    meta = res.valid.meta
    worst = metrics.slowdown(res.valid).max()
    assert E_STAR < worst <= 2 * E_STAR
    assert meta["max_slowdown"] == pytest.approx(worst)
    assert meta["slowdown_target_met"] is False and meta["target_feasible"] is True


def test_target_below_e_star_is_said() -> None:
    """Seed 306 by default (E = E_MPS = 21/19 < E* = 5/4, by hand): offline raises
    NoFeasibleSchedule saying E is below E*; with the LP ruled out the run reports an undecided
    miss; online it keeps its schedule and reports the target infeasible."""
    inst = seed306()
    for params in ({}, {"E": 1.2}, {"engine": "reference"}):
        with pytest.raises(coflowopt.NoFeasibleSchedule) as exc:
            coflowopt.run(inst, "cofair", params=params)
        assert "is below E*" in str(exc.value) and "\n" not in str(exc.value)
    res = coflowopt.run(inst, "cofair", params={"target_lp": "never"})
    meta = res.valid.meta
    assert meta["E"] == pytest.approx(E_MPS)
    assert meta["slowdown_target_met"] is False and meta["target_feasible"] is None
    assert meta["max_slowdown"] == pytest.approx(metrics.slowdown(res.valid).max())
    on = coflowopt.run(inst, "cofair", params={"mode": "online"}).valid.meta
    assert on["slowdown_target_met"] is False and on["target_feasible"] is False


def test_target_with_phi_uses_phi() -> None:
    """max_slowdown is max_j phi_j (C_j - r_j) / C_j^0, the left side of (7)."""
    inst = _random(2)
    phi = tuple(float(x) for x in np.linspace(0.5, 2.0, inst.n_coflows))
    res = coflowopt.run(inst, "cofair", params={"slowdown": 2.0, "phi": phi})
    want = float(np.max(np.array(phi) * metrics.slowdown(res.valid)))
    assert res.valid.meta["max_slowdown"] == pytest.approx(want)
    assert res.valid.meta["slowdown_target_met"] == (want <= res.valid.meta["E"] * (1 + 1e-9))


# -- BSSI at E = inf ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("update", ["tails", "pivot-port"])
def test_E_inf_is_bssi(seed: int, update: str) -> None:
    """With E = inf every coflow is a feasible tail: BSSI's order (coflowopt.orders.bssi)."""
    inst = _random(seed)
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    loads = port_loads(inst, np.arange(inst.n_coflows), inst.flow_volume)
    want = bssi(loads, inst.coflow_weight, cap)
    np.testing.assert_array_equal(cofair_order(inst, update=update), want)
    np.testing.assert_array_equal(
        cofair_order(loads, inst.coflow_weight, capacity=cap, update=update), want)


def test_E_inf_is_bssi_with_ties_and_empty_coflows() -> None:
    """Equal loads (ties everywhere) and a zero-volume coflow: BSSI's tie rules."""
    inst = build_instance(2, coflows=[
        CoflowSpec([(0, 0, 2.0)]), CoflowSpec([(0, 0, 2.0)]), CoflowSpec([(1, 1, 0.0)]),
        CoflowSpec([(1, 1, 2.0)]), CoflowSpec([(0, 1, 1.0), (1, 0, 1.0)])])
    loads = port_loads(inst, np.arange(inst.n_coflows), inst.flow_volume)
    np.testing.assert_array_equal(cofair_order(inst), bssi(loads, inst.coflow_weight))


# -- random instances: guarantees and the exit --------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_random_relaxed_deadlines_slowdown_and_exit(seed: int) -> None:
    """Against our reconstruction: the order meets every relaxed deadline, the validated
    greedy schedule has slowdown <= 2E/phi_j (4.3), and the exit fires iff no order meets the
    relaxed deadlines (brute force) iff E < E_MPS (batch, r = 0)."""
    inst = _random(seed)
    p = coflow_port_loads(inst)
    e_mps = mps(inst).E
    for factor in (0.9, 0.999, 1.0, 1.25, 2.0):
        E = factor * e_mps
        D = cofair_deadlines(inst, E)
        feasible = _brute_feasible(p, D * (1 + 1e-12))
        assert feasible == (factor >= 1.0)
        for update in ("tails", "pivot-port"):
            if not feasible:
                with pytest.raises(coflowopt.NoFeasibleSchedule):
                    cofair_order(inst, None, D, update=update)
                continue
            sigma = cofair_order(inst, None, D, update=update)
            assert _relaxed_ok(p, sigma, D)
            res = coflowopt.run(inst, "cofair", params={"E": E, "update": update})
            assert metrics.slowdown(res.valid).max() <= 2 * E * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_phi_preferences(seed: int) -> None:
    """phi = V_j (the paper's example) and per-coflow values: deadlines E C_j^0 / phi_j are met
    in the relaxation; the slowdown bound is 2E/phi_j per coflow."""
    inst = _random(seed)
    p = coflow_port_loads(inst)
    rng = np.random.default_rng(seed)
    for phi in ("volume", tuple(float(x) for x in rng.uniform(0.5, 2.0, inst.n_coflows))):
        ph = inst.coflow_size if phi == "volume" else np.array(phi)
        E = 1.25 * mps(inst, ph).E
        D = cofair_deadlines(inst, E, ph)
        np.testing.assert_allclose(D, E * inst.isolation_time / ph)
        sigma = cofair_order(inst, None, D)
        assert _relaxed_ok(p, sigma, D)
        res = coflowopt.run(inst, "cofair", params={"slowdown": 1.25, "phi": phi})
        assert res.valid.meta["E"] == pytest.approx(E)
        assert np.all(metrics.slowdown(res.valid) <= 2 * E / ph * (1 + 1e-9))


def test_offline_with_releases_meets_E_mps_of_the_batch() -> None:
    """Releases only move deadlines later: E = E_MPS of the batch never exits offline; the
    order meets the relaxed deadlines r_j + E C_j^0."""
    for seed in range(8):
        inst = _random(seed, releases=True)
        res = coflowopt.run(inst, "cofair")
        D = cofair_deadlines(inst, res.valid.meta["E"])
        sigma = cofair_order(inst, None, D)
        assert _relaxed_ok(coflow_port_loads(inst), sigma, D)


def test_same_seed_same_schedule() -> None:
    inst = _random(3, releases=True)
    for mode in ("offline", "online"):
        a = coflowopt.run(inst, "cofair", params={"mode": mode}, seed=1, keep_schedule=True)
        b = coflowopt.run(inst, "cofair", params={"mode": mode}, seed=1, keep_schedule=True)
        np.testing.assert_array_equal(a.valid.coflow_completion, b.valid.coflow_completion)
        np.testing.assert_array_equal(a.schedule.breakpoints, b.schedule.breakpoints)


def test_offline_engines_agree() -> None:
    inst = _random(5, releases=True)
    a = coflowopt.run(inst, "cofair", params={"engine": "fast"})
    b = coflowopt.run(inst, "cofair", params={"engine": "reference"})
    np.testing.assert_allclose(a.valid.coflow_completion, b.valid.coflow_completion, rtol=1e-9)


# -- online ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_online_E_inf_is_sincronia_online(seed: int) -> None:
    """Online with E = inf re-orders by BSSI on the remaining volumes at every arrival and
    departure: the same schedule as Sincronia's online mode (a second algorithm)."""
    inst = _random(seed, releases=True)
    a = coflowopt.run(inst, "cofair", params={"E": math.inf, "mode": "online"})
    b = coflowopt.run(inst, "sincronia", params={"mode": "online", "engine": "reference"})
    np.testing.assert_allclose(a.valid.coflow_completion, b.valid.coflow_completion,
                               rtol=1e-9, atol=1e-9)
    assert a.valid.meta["fallbacks"] == 0


def test_online_batch_first_order_is_offline() -> None:
    """Batch (r = 0) online: the first order is the offline order (E2, E = 5/3 gives the E3
    CCTs; every later re-order on the residual keeps it)."""
    res = coflowopt.run(e2_instance(), "cofair", params={"E": 5 / 3, "mode": "online"})
    np.testing.assert_allclose(res.valid.coflow_completion, [6, 5, 3, 8])
    assert res.valid.meta["fallbacks"] == 0


def test_online_fallback_is_mps_order_and_counted() -> None:
    """Online below E_MPS: the exit fires at t = 0, the fallback is MPS's order (lp.mps:
    C3, C1, C2, C4), the run is counted in meta and still validated."""
    inst = e2_instance()
    res = coflowopt.run(inst, "cofair", params={"E": 1.5, "mode": "online"})
    assert res.valid.meta["fallbacks"] >= 1
    assert "C3: 4.5" in res.valid.meta["first_fallback"]["why"]
    want = validate(inst, order_schedule(inst, mps(inst).order))
    np.testing.assert_allclose(res.valid.coflow_completion, want.coflow_completion)
    assert _named(inst, mps(inst).order) == ("C3", "C1", "C2", "C4")


@pytest.mark.parametrize("seed", range(6))
def test_fallback_order_is_mps_in_a_batch_and_optimal(seed: int) -> None:
    """At t = 0 on full volumes the fallback is exactly lp.mps's order, and (brute force) no
    order has a smaller largest relaxed slowdown phi_j T(A_k) / C_j^0."""
    inst = _random(seed)
    allc = np.arange(inst.n_coflows)
    sigma = mps_fallback_order(inst, allc, inst.flow_volume, 0.0)
    np.testing.assert_array_equal(sigma, mps(inst).order)
    p = coflow_port_loads(inst)
    c0 = inst.isolation_time

    def worst(s):
        T = np.cumsum(p[list(s)], axis=0).max(axis=1)
        return float(np.max(T / c0[list(s)]))

    best = min(worst(s) for s in itertools.permutations(allc))
    assert worst(sigma) == pytest.approx(best)
    assert mps(inst).E == pytest.approx(best)


def _online_pair(inst, params):
    fast = coflowopt.run(inst, "cofair", params={**params, "mode": "online"})
    ref = coflowopt.run(inst, "cofair", params={**params, "mode": "online",
                                                 "engine": "reference"})
    return fast, ref


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("params", [{"slowdown": 0.7}, {"slowdown": 1.0},
                                    {"slowdown": 1.5, "update": "pivot-port"},
                                    {"E": math.inf}, {"slowdown": 1.0, "phi": "volume"}],
                         ids=["0.7", "1", "1.5-pivot", "inf", "1-volume"])
def test_online_compiled_equals_reference(seed: int, params: dict) -> None:
    """The compiled online mode (cofair_rank on the compiled engine, the default) gives the
    reference engine's online schedule (a second simulator: every rate at every event):
    completion times to 1e-9, the same re-orders, fallbacks and first fallback's reason.
    Both validated (coflowopt.run); the compiled one streamed."""
    inst = _random(seed, releases=True)
    fast, ref = _online_pair(inst, params)
    a, b = fast.valid, ref.valid
    assert a.meta["engine"] == "fast" and b.meta["engine"] == "reference" and fast.streamed
    np.testing.assert_allclose(a.flow_completion, b.flow_completion, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.coflow_completion, b.coflow_completion, rtol=1e-9, atol=1e-9)
    assert (a.meta["fallbacks"], a.meta["orders"]) == (b.meta["fallbacks"], b.meta["orders"])
    assert a.meta.get("first_fallback") == b.meta.get("first_fallback")


def test_online_compiled_counts_fallbacks() -> None:
    """Below E_MPS (E2 at E = 1.5, spec E3) both engines fall back at every re-order and name
    the same pivot; over the random instances at 0.7 E_MPS some fall back, equally."""
    fast, ref = _online_pair(e2_instance(), {"E": 1.5})
    assert fast.valid.meta["fallbacks"] == ref.valid.meta["fallbacks"] >= 1
    assert "C3: 4.5" in fast.valid.meta["first_fallback"]["why"]
    np.testing.assert_allclose(fast.valid.coflow_completion, ref.valid.coflow_completion)
    total = 0
    for seed in range(6):
        a, b = _online_pair(_random(seed, releases=True), {"slowdown": 0.7})
        assert a.valid.meta["fallbacks"] == b.valid.meta["fallbacks"]
        total += a.valid.meta["fallbacks"]
    assert total > 0


# -- parameters, refusals, proof check -------------------------------------------------------------


def test_params_are_checked() -> None:
    with pytest.raises(ValueError, match="not both"):
        CoFairParams(E=2.0, slowdown=1.5)
    with pytest.raises(ValueError, match="E"):
        CoFairParams(E=-1.0)
    with pytest.raises(ValueError, match="phi"):
        CoFairParams(phi=0.0)
    with pytest.raises(TypeError, match="update"):
        CoFairParams(update="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"phi\[1\]"):
        coflowopt.run(e2_instance(), "cofair", params={"phi": (1.0, -1.0, 1.0, 1.0)})
    with pytest.raises(ValueError, match="phi of coflow C2"):
        cofair_deadlines(e2_instance(), 2.0, [1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="one value per coflow"):
        coflowopt.run(e2_instance(), "cofair", params={"phi": (1.0, 1.0)})
    with pytest.raises(ValueError, match="deadlines"):
        cofair_order(e2_instance(), None, [1.0, 2.0])


def test_job_dags_are_refused() -> None:
    inst = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 1, 1.0)]), CoflowSpec([(1, 0, 1.0)])],
                                           [(0, 1)], id="J")])
    with pytest.raises(coflowopt.UnsupportedInstance, match="cofair"):
        coflowopt.run(inst, "cofair")


def test_registry_row() -> None:
    info = coflowopt.schedulers.get("cofair")
    assert (info.family, info.kind, info.clairvoyant, info.factor, info.streams) == \
        ("fair", "offline", True, "4", True)
    assert info.factor_metric == "weighted_completion"
    assert info.factor_assumes == ("release 0", "single-stage")
    assert "reconstructed" in info.summary


def test_proof_check_cofair_finite_E() -> None:
    """``coflowopt verify --check cofair-finite-E``: passes quick with the registered CoFair;
    fails for a schedule idle for 100 time units first (slowdown > 2E, CCT > 4 OPT) and for
    a run whose meta misreports its max slowdown."""
    from coflowopt.proofs_check.runner import run_checks
    from coflowopt.schedule import Schedule

    (rep,) = run_checks(["cofair-finite-E"], quick=True, seed=0)
    assert rep.status == "passed" and rep.n >= 20, rep
    cofair = coflowopt.schedulers.get("cofair")

    def idle_first(inst, seed=None, **params):
        s = cofair(inst, E=math.inf)
        return Schedule(s.breakpoints + 100.0, s.flow, s.rate, s.first, s.last)

    def misreports(inst, seed=None, **params):
        s = cofair(inst, **params)
        s.meta["max_slowdown"] = 0.5
        return s

    for fake in (idle_first, misreports):
        (bad,) = run_checks(["cofair-finite-E"], quick=True, seed=0, count=3,
                            algorithms={"cofair": fake})
        assert bad.status == "failed" and bad.failed == 3, (fake.__name__, bad)


def test_proof_check_cofair_passes_quick() -> None:
    """The registered proof check (``coflowopt verify --quick --check cofair``)."""
    from coflowopt.proofs_check.runner import run_checks

    (rep,) = run_checks(["cofair"], quick=True, seed=0)
    assert rep.status == "passed", rep
    assert rep.n >= 20

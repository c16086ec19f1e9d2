"""Column generation for the slowdown feasibility LP (``coflowopt.lp.slowdown_cg``) against the
full LP-interval(E) built whole (``slowdown_lp`` / ``slowdown_feasibility``, the independent
source), the hand-worked gap instance of ``tests/mps_gap.py`` and a brute-force recheck of its
infeasibility certificates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from mps_gap import E_MPS, E_STAR, seed306

from coflowopt import Instance, metrics, validate
from coflowopt.lp import min_slowdown, mps, slowdown_feasibility, slowdown_lp
from coflowopt.lp.slowdown_cg import ColGenParams, SlowdownColGen


def small(seed: int, releases: bool = False) -> Instance:
    """2-5 ports, 3-7 coflows, 1-6 flows each, volumes in {1, 2, 3, 5, 8, 13}; optional
    integer releases in 0..9."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 6))
    n = int(rng.integers(3, 8))
    fc = np.repeat(np.arange(n), rng.integers(1, 7, n))
    f = fc.size
    vol = rng.choice(np.array([1.0, 2.0, 3.0, 5.0, 8.0, 13.0]), f)
    rel = rng.integers(0, 10, n).astype(float) if releases else None
    return Instance.from_arrays(m, rng.integers(0, m, f), rng.integers(0, m, f), vol, fc,
                                n_coflows=n, coflow_release=rel)


def recheck_certificate(inst: Instance, E: float, pi: np.ndarray, pts: np.ndarray) -> float:
    """``L(pi)`` by brute force over every variable ``(flow, interval)`` of the full LP as
    ``slowdown_lp`` enumerates it (flows one by one, no groups)."""
    model = slowdown_lp(inst, E)
    assert np.allclose(model.breakpoints, pts)
    K = pts.size - 1
    m = inst.ports
    f = model.var_flow
    k = model.var_interval
    price = pi[inst.flow_src[f] * K + k] + pi[m * K + inst.flow_dst[f] * K + k]
    cheapest = np.full(inst.n_flows, np.inf)
    np.minimum.at(cheapest, f, price)
    used = np.unique(f)
    pay = float(inst.flow_volume[used] @ cheapest[used])
    length = np.diff(pts)
    cap = np.r_[(inst.fabric.capacity_in[:, None] * length).ravel(),
                (inst.fabric.capacity_out[:, None] * length).ravel()]
    return pay - float(pi @ cap)


@pytest.mark.parametrize("releases", [False, True], ids=["batch", "releases"])
def test_same_answer_as_the_full_lp(releases: bool) -> None:
    """Feasible or not at the same E, on 25 seeds x 5 values of E around E_MPS (or around the
    bisection's E* with releases); every infeasible answer carries a certificate that the
    brute-force recheck confirms, every feasible one a validated schedule meeting E."""
    for seed in range(25):
        inst = small(seed, releases)
        ref = mps(inst).E if not releases else min_slowdown(inst, rtol=1e-3).E_star
        cg = SlowdownColGen(inst)
        for factor in (0.9, 0.999, 1.0, 1.002, 1.2):
            E = ref * factor
            want = slowdown_feasibility(inst, E).feasible
            got = cg.test(E)
            assert got.feasible is want, (seed, factor, got.message)
            if want:
                v = validate(inst, got.schedule)
                assert metrics.slowdown(v).max() <= got.realised_E * (1 + 1e-9)
                assert got.realised_E <= E * (1 + 1e-6)
            else:
                assert got.certified and got.certificate > 0
                assert recheck_certificate(inst, E, got.prices, got.breakpoints) > 0


def test_gap_instance_by_hand() -> None:
    """Seed 306 (``tests/mps_gap.py``): E_MPS = 21/19 < E* = 5/4 by hand.  Column generation
    finds 5/4 to the tolerance, proves every E it rejects (so E_lo_certified > E_MPS) and
    returns a validated schedule within the solver's tolerance of 5/4."""
    inst = seed306()
    res = min_slowdown(inst, rtol=1e-5, method="colgen")
    assert res.E_star == pytest.approx(E_STAR, rel=2e-5)
    assert E_MPS < res.E_lo_certified <= E_STAR <= res.E_hi_realised
    assert res.E_hi_realised <= res.E_star * (1 + 1e-6)
    v = validate(inst, res.schedule)
    assert metrics.slowdown(v).max() <= res.E_hi_realised * (1 + 1e-9)
    assert all(t["feasible"] or t["certified"] for t in res.tests)
    # 5/4 itself is feasible, just below is not, with a certificate the recheck confirms
    cg = SlowdownColGen(inst)
    assert cg.test(E_STAR * (1 + 1e-7)).feasible
    below = cg.test(E_STAR * (1 - 1e-4))
    assert below.feasible is False and below.certified
    assert recheck_certificate(inst, below.E, below.prices, below.breakpoints) > 0


@pytest.mark.parametrize("seed", range(6))
def test_e_star_matches_the_full_lp_bisection(seed: int) -> None:
    """Same E* as the default bisection (same start, same rule, same tolerance) and a
    certified bracket around it."""
    inst = small(100 + seed, releases=seed % 2 == 1)
    want = min_slowdown(inst, rtol=1e-4, use_mps=False)
    got = min_slowdown(inst, rtol=1e-4, use_mps=False, method="colgen")
    assert got.E_star == pytest.approx(want.E_star, rel=2e-4)
    assert got.E_lo_certified <= want.E_star * (1 + 1e-4)
    assert got.E_hi_realised >= want.E_star * (1 - 1e-4)
    assert math.isnan(want.E_lo_certified) and not want.tests


def test_master_kept_across_e_for_a_batch() -> None:
    """A batch keeps one master over the bisection: the second test adds no rows for the
    groups promoted by the first one, and a small round limit reports "undecided", never a
    wrong answer."""
    inst = small(3)
    cg = SlowdownColGen(inst)
    e = mps(inst).E
    first = cg.test(e * 1.5)
    h = cg.h
    second = cg.test(e * 1.4)
    assert cg.h is h and second.rows >= first.rows
    tight = SlowdownColGen(inst, params=ColGenParams(max_rounds=1)).test(e * 0.999)
    assert tight.feasible in (None, False)
    if tight.feasible is False:
        assert tight.certified


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="max_new"):
        ColGenParams(max_new=0)
    with pytest.raises(ValueError, match="method"):
        min_slowdown(small(0), method="pdlp")
    with pytest.raises(ValueError, match="E: must be > 0"):
        SlowdownColGen(small(0)).test(0.0)


def test_interior_point_master_gives_the_same_answers() -> None:
    """``master="ipm"`` (cold interior point, no crossover): the same decisions as the full LP
    on a few seeds, certificates included."""
    for seed in range(8):
        inst = small(200 + seed)
        e = mps(inst).E
        cg = SlowdownColGen(inst, params=ColGenParams(master="ipm"))
        for factor in (0.99, 1.0, 1.05):
            want = slowdown_feasibility(inst, e * factor).feasible
            got = cg.test(e * factor)
            assert got.feasible is want, (seed, factor, got.message)
            assert want or got.certified


def test_out_of_budget_still_gives_a_proven_bracket() -> None:
    """With no time to test, the bracket is the proven start (E_MPS, a batch) and the best
    validated heuristic schedule (sequential or greedy EDF), whose slowdown the validator
    confirms; E_star is that upper end."""
    inst = seed306()
    res = min_slowdown(inst, method="colgen", colgen=ColGenParams(budget=1e-9))
    assert res.lp_solves == 0 and not res.tests
    assert res.E_lo_certified == pytest.approx(E_MPS)
    assert res.E_hi_realised >= E_STAR and res.E_star == res.E_hi_realised
    if res.schedule is not None:
        assert metrics.slowdown(validate(inst, res.schedule)).max() == \
            pytest.approx(res.E_hi_realised)


def test_below_e_mps_the_per_port_prices_prove_it() -> None:
    """For a batch every E < E_MPS fails the per-port prefix test; the test says so without a
    master solve, and its prices pass the brute-force recheck."""
    for seed in range(5):
        inst = small(300 + seed)
        e = mps(inst).E
        got = SlowdownColGen(inst).test(e * 0.97)
        assert got.feasible is False and got.certified and got.rounds == 0
        assert recheck_certificate(inst, got.E, got.prices, got.breakpoints) > 0

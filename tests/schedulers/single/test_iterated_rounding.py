"""iterated-rounding (Rohwedder-Schnaars, reconstructed): the specification's worked examples
(Example A, A', B, the IR micro-test; hand-worked there), its lemmas on seeded random
instances against the exact discrete optimum, refusals and the quantum.  Every schedule is
validated (the run service)."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import CoflowSpec, build_instance, metrics
from coflowopt.lp import solve
from coflowopt.lp.edge import edge_model, solve_edge_lp, unit_edges
from coflowopt.model import Fabric, JobSpec
from coflowopt.proofs_check.instances import random_single_stage
from coflowopt.proofs_check.reference import exact_optimum
from coflowopt.proofs_check.rounding_checks import example_a, example_b, rounding_problems
from coflowopt.schedulers import UnsupportedInstance, get
from coflowopt.schedulers.dag.iterated_rounding import (
    IteratedRoundingParams,
    completions,
    greedy_allocation,
    ir_allocation,
    ir_rounding,
    iterated_rounding,
    konig_slots,
)
from coflowopt.schedulers.registry import SolverStopped
from coflowopt.service import run


def test_example_a_run_validated_and_meta():
    r = run(example_a(), "iterated-rounding", seed=0, keep_schedule=True)
    v = r.valid
    assert v.coflow_completion.tolist() == [1.0, 3.0]        # OPT = 5 (spec Example A)
    assert metrics.weighted_completion(v) == pytest.approx(5.0)
    meta = v.meta
    assert meta["lp_value"] == pytest.approx(4.5)
    assert meta["quantum"] == 1.0 and meta["quantum_delta"] == 0.0
    assert meta["proven_bound"] == pytest.approx(18.0)       # 4 x LP, no releases


def test_example_a_greedy_and_ir_candidates():
    e = unit_edges(example_a())
    lp = solve_edge_lp(e)
    for alpha in (0.5, 1.0):
        D = lp.alpha_point(alpha)
        assert completions(e, *greedy_allocation(e, D, lp.C)).tolist() == [1, 3]
    # IR alpha = 1/2, L = 1: B's two units in interval 2, stretched to 2 slots
    uf, sl, u, _ = ir_allocation(e, lp, 0.5, 1)
    assert completions(e, uf, sl).tolist() == [1, 3]
    assert u.sum(axis=1).tolist() == [1, 1, 2]
    # L = 2: all four units in interval 1, degree 3 at a1 and b2: a forced 3-colouring
    uf, sl, u, _ = ir_allocation(e, lp, 0.5, 2)
    assert u[:, 0].tolist() == [1, 1, 2]
    assert sl.max() + 1 == 3
    assert completions(e, uf, sl)[1] == 3


def test_example_a_prime_needs_all_breakpoints():
    e = unit_edges(example_a(1.0))
    lp = solve_edge_lp(e)
    lo = completions(e, *greedy_allocation(e, lp.alpha_point(0.5), lp.C))
    hi = completions(e, *greedy_allocation(e, lp.alpha_point(1.0), lp.C))
    assert lo.tolist() == [3, 2] and hi.tolist() == [2, 3]    # objectives 8 and 7
    uf, sl, _, _ = ir_allocation(e, lp, 0.5, 1)
    assert completions(e, uf, sl).tolist() == [3, 2]
    res = iterated_rounding(e, seed=0)
    assert res.winner.objective == pytest.approx(7.0)
    v = run(example_a(1.0), "iterated-rounding", seed=0).valid
    assert metrics.weighted_completion(v) == pytest.approx(7.0)


def test_example_b_invariants():
    v = run(example_b(), "iterated-rounding", seed=3).valid
    obj = metrics.weighted_completion(v)
    assert 11.0 - 1e-9 <= obj <= 4 * 9.0


def test_ir_micro_test_four_cycle():
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0), (0, 1, 1.0), (1, 0, 1.0),
                                                  (1, 1, 1.0)])])
    e = unit_edges(inst)
    z = np.full((4, 2), 0.5)
    u, rounds = ir_rounding(e, z, 1.0)
    assert rounds == 1                                        # integral vertex at once
    assert u.sum(axis=1).tolist() == [1, 1, 1, 1]
    for k in range(2):                                        # every (port, interval) load 1
        col = u[:, k]
        for p in range(2):
            assert col[e.src == p].sum() == 1 and col[e.dst == p].sum() == 1
    _, sl = konig_slots(e, u)
    assert sorted(sl.tolist()) == [0, 0, 1, 1]


def _discrete_opt(e) -> float:
    res = solve(edge_model(e, integral=True))
    assert res.optimal
    return res.objective


def test_lemmas_on_random_instances():
    """Spec 5.3: Lemma G per Greedy candidate, IR loads and per-coflow bounds, the left-shift,
    best-of <= 4 / 5 x LP, LP <= OPT <= ALG (exact discrete optimum)."""
    rng = np.random.default_rng(11)
    for i in range(8):
        inst = random_single_stage(rng, releases=bool(i % 2), vmax=2)  # MILP stays fast
        e = unit_edges(inst)
        res = iterated_rounding(e, IteratedRoundingParams(ir_L=2 if i % 3 == 0 else None),
                                seed=i)
        lp = res.lp
        opt = _discrete_opt(e)
        assert lp.value <= opt + 1e-6
        r = e.release
        assert rounding_problems(res) == []
        best = res.winner.objective
        assert opt - 1e-6 <= best <= (5.0 if r.any() else 4.0) * lp.value + 1e-6
        v = run(inst, "iterated-rounding", seed=i,
                params={"ir_L": 2 if i % 3 == 0 else None}).valid
        assert metrics.weighted_completion(v) == pytest.approx(best)
        if not r.any():
            fluid, _, _ = exact_optimum(inst, "weighted_completion")
            assert fluid <= best + 1e-6


def test_seeded_and_mixture_mode():
    inst = example_b()
    a = run(inst, "iterated-rounding", seed=5).valid.meta["winner"]
    b = run(inst, "iterated-rounding", seed=5).valid.meta["winner"]
    assert a == b
    v = run(inst, "iterated-rounding", seed=5, params={"mode": "mixture"}).valid
    assert v.meta["candidates"] == 1 and v.meta["proven_bound"] is None


def test_quantum_for_real_volumes():
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.3), (1, 1, 0.7)], weight=2.0),
                                      CoflowSpec([(0, 1, 2.1)], release=0.5)])
    v = run(inst, "iterated-rounding", seed=0).valid
    q = v.meta["quantum"]
    assert q == pytest.approx(0.7 / 4)
    assert 0.0 < v.meta["quantum_delta"] <= 0.25 + 1e-12
    assert v.meta["quantum_additive"] == pytest.approx(2 * q * 3.0)
    v = run(inst, "iterated-rounding", seed=0, params={"quantum": 0.5}).valid
    assert v.meta["quantum"] == 0.5


def test_refusals():
    info = get("iterated-rounding")
    slow = build_instance(Fabric(2, capacity_in=[1.0, 2.0], capacity_out=[1.0, 1.0]),
                          coflows=[CoflowSpec([(0, 0, 1.0)])])
    assert "capacity" in info.refusal(slow)
    dag = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)], id="a"),
                                           CoflowSpec([(1, 1, 1.0)], id="b")],
                                          starts_after=[(0, 1)], id="j")])
    with pytest.raises(UnsupportedInstance, match="precedence"):
        run(dag, "iterated-rounding")
    big = build_instance(2, coflows=[CoflowSpec([(0, 0, 300.0), (1, 1, 200.0)])])
    with pytest.raises(SolverStopped, match=r"variables and [\d,]+ nonzeros"):
        run(big, "iterated-rounding", params={"max_nonzeros": 1e3})
    # the interval-indexed form runs, and is refused by its own size (intervals, memory)
    with pytest.raises(SolverStopped, match=r"interval-indexed .* [\d,]+ nonzeros .* GiB"):
        run(big, "iterated-rounding", params={"lp": "interval-indexed", "max_nonzeros": 1e2})
    run(example_a(), "iterated-rounding", params={"lp": "interval-indexed"})

"""The interval-indexed edge LP and flow LP-I (coflowopt.lp.edge_interval) and both schedulers
on them.  Expected values are hand-worked (the four-unit example below; the specifications'
Examples A, A', B and flow Ex 1-3, which the unit grid must reproduce) or come from a second
formulation: the time-indexed LPs (LP-I <= LP-T, Theorem 1) and the exact discrete optimum (the
integral edge MILP).  Every schedule is validated (the run service)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coflowopt import CoflowSpec, build_instance, metrics
from coflowopt.lp import solve
from coflowopt.lp.edge import UnitEdges, edge_model, solve_edge_lp, unit_edges
from coflowopt.lp.edge_interval import (
    edge_grid,
    slot_grid,
    solve_edge_interval_lp,
    solve_flow_order_interval_lp,
)
from coflowopt.lp.flow_order import solve_flow_order_lp
from coflowopt.proofs_check.instances import random_single_stage
from coflowopt.proofs_check.rounding_checks import (
    example_a,
    example_b,
    flow_example,
    flow_order_problems,
    merged_completion,
    rounding_problems,
)
from coflowopt.schedulers.dag.iterated_rounding import IteratedRoundingParams, iterated_rounding
from coflowopt.schedulers.single.lp_flow_order import flow_priority
from coflowopt.service import run

EPS = 0.5
IL = {"lp": "interval-indexed", "lp_eps": EPS}


def discrete_opt(e: UnitEdges) -> float:
    res = solve(edge_model(e, integral=True))
    assert res.optimal
    return res.objective


@pytest.mark.parametrize("T, eps, rel", [(4, 1.0, []), (50, 0.1, [7, 33]), (10**5, 0.5, [3]),
                                         (1000, 0.05, [999, 0, 512])])
def test_grid_holds_releases_and_the_length_rule(T, eps, rel):
    g = slot_grid(T, eps, np.array(rel, dtype=np.int64))
    assert g[0] == 0 and g[-1] == T and np.all(np.diff(g) > 0)
    assert set(rel) <= set(g.tolist())
    # (G): every interval is at most eps x its start + 1 slot long
    assert np.all(np.diff(g) <= eps * g[:-1] + 1 + 1e-9)
    # K = O(1/eps + log_{1+eps} T + #releases)
    N = math.ceil(1 / eps)
    assert g.size - 1 <= N + math.log(max(T / N, 1)) / math.log1p(eps) + 2 + len(rel)
    assert slot_grid(4, 1.0).tolist() == [0, 1, 2, 4]


def test_four_unit_coflows_hand_worked():
    """Four coflows of one unit each on a1->b1, weights 1, eps = 1: grid 0, 1, 2, 4.  LP-T =
    OPT = 1 + 2 + 3 + 4 = 10; LP-I only sees the port rows at 1 and 2 (sum X <= 1, <= 2), so
    sum C >= 4 + (4 - 1) + (4 - 2) = 9, attained by X = 1/4, 1/2 for every flow."""
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0)]) for _ in range(4)])
    e = unit_edges(inst)
    assert edge_grid(e, 1.0).tolist() == [0, 1, 2, 4]
    s = solve_edge_interval_lp(e, 1.0)
    assert s.value == pytest.approx(9.0)
    assert solve_edge_lp(e).value == pytest.approx(10.0)
    assert discrete_opt(e) == pytest.approx(10.0)
    f = solve_flow_order_interval_lp(e, 1.0)
    assert f.value == pytest.approx(9.0)
    assert solve_flow_order_lp(e).value == pytest.approx(10.0)
    # the alpha-points are interval ends
    assert set(s.alpha_point(1.0).tolist()) <= {1, 2, 4}


@pytest.mark.parametrize("inst, value", [(example_a(), 4.5), (example_a(1.0), 6.0),
                                         (example_b(), 9.0)])
def test_unit_grid_is_the_time_indexed_edge_lp(inst, value):
    """eps <= 1/T: unit intervals, so LP-I is the time-indexed LP (hand values, spec Sec. 6)."""
    e = unit_edges(inst)
    s = solve_edge_interval_lp(e, 0.01)
    assert s.grid.tolist() == list(range(s.horizon + 1))
    assert s.value == pytest.approx(value)
    t = solve_edge_lp(e)
    np.testing.assert_allclose(s.C_hat, t.C_hat, atol=1e-7)


@pytest.mark.parametrize("n, value", [(1, 18.0), (2, 27.0 + 2.0 / 3.0), (3, 4.0)])
def test_unit_grid_is_lp_t(n, value):
    """Flow Ex 1-3 (values of the flow-order specification's prototype, Sec. 6)."""
    assert solve_flow_order_interval_lp(unit_edges(flow_example(n)), 0.01).value == \
        pytest.approx(value, abs=1e-6)


def test_relaxation_and_alpha_points_on_random_instances():
    """Theorem 1: LP-I <= LP-T <= OPT (both LPs); (L): X_{f, D_j(alpha)} >= alpha d_f at the
    interval-end alpha-points; Theorem 2's key step int_0^1 D_j <= (1 + eps) C_hat_j - eps;
    C_hat <= C; X_at interpolates a time-indexed solution (per-slot port load <= 1)."""
    rng = np.random.default_rng(3)
    for i in range(6):
        e = unit_edges(random_single_stage(rng, releases=bool(i % 2), vmax=3))
        opt = discrete_opt(e)
        s, t = solve_edge_interval_lp(e, EPS), solve_edge_lp(e)
        assert s.value <= t.value + 1e-6 and t.value <= opt + 1e-6
        for cut in (True, False):
            fi = solve_flow_order_interval_lp(e, EPS, lb_cut=cut).value
            assert fi <= solve_flow_order_lp(e, lb_cut=cut).value + 1e-6 <= opt + 2e-6
        assert np.all(s.C_hat <= s.C + 1e-6)
        for a in np.r_[s.breakpoints(), 0.37]:
            D = s.alpha_point(float(a))
            assert set(D.tolist()) <= set(s.grid.tolist())
            assert np.all(s.X[np.arange(e.n_flows), np.searchsorted(s.grid, D[e.coflow])]
                          >= a * e.demand - 1e-6)
        cplus = (s.grid[1:] * np.diff(s.y, axis=1)).sum(axis=1)
        assert np.all(cplus <= (1 + EPS) * s.C_hat - EPS + 1e-6)
        slots = np.arange(s.horizon + 1)
        X = s.X_at(np.arange(e.n_flows)[:, None], slots[None, :])
        np.testing.assert_allclose(X[:, s.grid], s.X, atol=1e-9)
        per_slot = np.diff(X, axis=1)
        assert per_slot.min() >= -1e-9
        for p in range(e.ports):
            assert per_slot[e.src == p].sum(axis=0).max() <= 1 + 1e-6
            assert per_slot[e.dst == p].sum(axis=0).max() <= 1 + 1e-6


def test_schedulers_within_the_proven_factor_on_random_instances():
    """ALG <= 4(1+eps) / (5+4eps) x LP-I (iterated rounding, with Lemmas G, IR-2, IR-3 on every
    candidate) and ALG <= 4(1+eps) LP-I - (1+4eps) sum w / (5+4eps) LP-I - (2+4eps) sum w with
    Lemma P on LP-I (flow order); OPT <= ALG."""
    rng = np.random.default_rng(13)
    for i in range(6):
        inst = random_single_stage(rng, releases=bool(i % 2), vmax=2)
        e = unit_edges(inst)
        rel = bool(e.release.any())
        opt = discrete_opt(e)
        v = run(inst, "iterated-rounding", seed=i, params=IL).valid
        alg = metrics.weighted_completion(v)
        m = v.meta
        assert m["lp_form"] == "interval-indexed" and m["lp_eps"] == EPS
        assert m["proven_factor"] == (7.0 if rel else 6.0)   # 5 + 4 * 0.5, 4 * 1.5
        assert opt - 1e-6 <= alg <= m["proven_factor"] * m["lp_value"] + 1e-6
        res = iterated_rounding(e, IteratedRoundingParams(lp="interval-indexed", lp_eps=EPS),
                                seed=i)
        assert rounding_problems(res) == []
        assert res.winner.objective == pytest.approx(alg)
        v = run(inst, "lp-flow-order", params=IL).valid
        alg = metrics.weighted_completion(v)
        lp = solve_flow_order_interval_lp(e, EPS)
        assert v.meta["lp_value"] == pytest.approx(lp.value)
        a, b = (7.0, 4.0) if rel else (6.0, 3.0)                # Theorem 3 at eps = 1/2
        assert opt - 1e-6 <= alg <= a * lp.value - b * float(e.weight.sum()) + 1e-6
        assert np.all(v.coflow_completion <= a * lp.C_coflow - b + 1e-6)
        cf = merged_completion(e, v.flow_completion)
        assert flow_order_problems(e, lp, flow_priority(e, lp), cf) == []


def test_merging_flows_of_one_pair_leaves_the_edge_lp_unchanged():
    """Flows of one coflow on one (src, dst) pair: the edge LP (either form) of the unmerged
    unit edges has the merged one's optimum; the flow LP-I only gets tighter by the merge."""
    split = UnitEdges(2, [0, 0, 0, 1], [0, 0, 1, 1], [1, 2, 2, 3], [0, 0, 1, 1], [0, 1],
                      [2.0, 1.0])
    merged = UnitEdges(2, [0, 0, 1], [0, 1, 1], [3, 2, 3], [0, 1, 1], [0, 1], [2.0, 1.0])
    for eps in (0.5, 1.0):
        assert solve_edge_interval_lp(split, eps).value == pytest.approx(
            solve_edge_interval_lp(merged, eps).value)
        assert solve_flow_order_interval_lp(split, eps).value <= \
            solve_flow_order_interval_lp(merged, eps).value + 1e-9
    assert solve_edge_lp(split).value == pytest.approx(solve_edge_lp(merged).value)
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0), (0, 0, 2.0)], weight=2.0)])
    assert unit_edges(inst).demand.tolist() == [3]


def test_example_a_on_the_interval_lp():
    """Example A at eps = 1/2 (grid 0..4, unit): the run reports LP 4.5 and completes (1, 3),
    OPT (spec Sec. 6); the flow order on Ex 1 keeps its completions (2, 6, 4)."""
    v = run(example_a(), "iterated-rounding", seed=0, params=IL, keep_schedule=True).valid
    assert v.coflow_completion.tolist() == [1.0, 3.0]
    assert v.meta["lp_value"] == pytest.approx(4.5)
    assert v.meta["proven_bound"] == pytest.approx(6.0 * 4.5)
    v = run(flow_example(1), "lp-flow-order", params={"lp": "interval-indexed"}).valid
    assert v.meta["lp_eps"] == 0.5 and v.meta["lp_form"] == "interval-indexed"
    assert v.coflow_completion.tolist() == [2, 6, 4]


def test_ir_candidates_over_the_cell_cap_are_skipped():
    """ir_max_cells: an IR allocation with more (flow, interval) cells is not built; Greedy's
    candidates, and so the proven bound, stay."""
    e = unit_edges(example_b())
    p = IteratedRoundingParams(lp="interval-indexed", lp_eps=EPS, ir_max_cells=1)
    res = iterated_rounding(e, p, seed=0)
    assert res.ir_skipped and all(c.scheme == "greedy" for c in res.candidates)
    full = iterated_rounding(e, IteratedRoundingParams(lp="interval-indexed", lp_eps=EPS),
                             seed=0)
    assert not full.ir_skipped and any(c.scheme == "ir" for c in full.candidates)
    v = run(example_b(), "iterated-rounding", seed=0, params={**IL, "ir_max_cells": 1}).valid
    assert v.meta["ir_skipped"] == len(res.ir_skipped)
    assert metrics.weighted_completion(v) <= v.meta["proven_bound"]


def test_the_cell_cap_also_holds_in_mixture_mode():
    """mode="mixture" with p_ir = 1 draws IR; over ir_max_cells it is skipped and Greedy runs
    at the same drawn alpha, with the seeded draws unchanged."""
    e = unit_edges(example_b())
    mix = {"lp": "interval-indexed", "lp_eps": EPS, "mode": "mixture", "p_ir": 1.0}
    free = iterated_rounding(e, IteratedRoundingParams(**mix), seed=3)
    (ir,) = free.candidates
    assert ir.scheme == "ir" and not free.ir_skipped
    capped = iterated_rounding(e, IteratedRoundingParams(**mix, ir_max_cells=1), seed=3)
    (g,) = capped.candidates
    assert g.scheme == "greedy" and g.alpha == ir.alpha
    assert capped.ir_skipped == [(ir.alpha, ir.L)]

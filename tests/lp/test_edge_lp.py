"""The edge-level time-indexed LP (coflowopt.lp.edge) and the flow-completion LP-T
(coflowopt.lp.flow_order) on the specifications' worked examples (values hand-proved there or
computed by the specification's own prototype, never by this code) and against the exact
discrete optimum."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import CoflowSpec, build_instance
from coflowopt.lp import solve
from coflowopt.lp.edge import (
    UnitEdges,
    edge_horizon,
    edge_lp_size,
    edge_model,
    solve_edge_lp,
    unit_edges,
)
from coflowopt.lp.flow_order import flow_order_lp_size, flow_order_model, solve_flow_order_lp
from coflowopt.model import Fabric
from coflowopt.proofs_check.instances import random_single_stage
from coflowopt.proofs_check.rounding_checks import example_a, example_b, flow_example


def discrete_opt(edges: UnitEdges) -> float:
    res = solve(edge_model(edges, integral=True))
    assert res.optimal
    return res.objective


def test_example_a_lp_unique_solution_and_alpha_points():
    e = unit_edges(example_a())
    assert edge_horizon(e) == 4
    s = solve_edge_lp(e)
    # hand proof (spec Sec. 6): objective >= 5.5 - p >= 4.5, equality only at p = 1
    assert s.value == pytest.approx(4.5)
    np.testing.assert_allclose(s.C_hat, [1.0, 2.5], atol=1e-7)
    np.testing.assert_allclose(s.y[1], [0, 0, 0.5, 1, 1], atol=1e-7)
    np.testing.assert_allclose(s.breakpoints(), [0.5, 1.0])
    assert s.alpha_point(0.5).tolist() == [1, 2]
    assert s.alpha_point(0.51).tolist() == [1, 3]
    assert s.alpha_point(1.0).tolist() == [1, 3]
    assert discrete_opt(e) == pytest.approx(5.0)  # the alternatives cost 7 and 8


def test_example_a_prime_releases():
    e = unit_edges(example_a(1.0))
    assert edge_horizon(e) == 5
    s = solve_edge_lp(e)
    assert s.value == pytest.approx(6.0)     # both C_j at their bound (V)
    np.testing.assert_allclose(s.C_hat, [2.0, 2.0], atol=1e-7)
    assert s.alpha_point(0.5).tolist() == [2, 1]
    assert s.alpha_point(0.75).tolist() == [2, 3]
    assert discrete_opt(e) == pytest.approx(7.0)


def test_example_b_value():
    e = unit_edges(example_b())
    assert edge_horizon(e) == 7
    assert solve_edge_lp(e).value == pytest.approx(9.0)
    assert discrete_opt(e) == pytest.approx(11.0)


def test_size_estimates_match_the_built_models():
    e = unit_edges(example_b())
    cols, nnz = edge_lp_size(e)
    m = edge_model(e)
    assert (cols, nnz) == (m.n_cols, m.nnz)
    cols, nnz = flow_order_lp_size(e)
    m = flow_order_model(e)
    assert (cols, nnz) == (m.n_cols, m.nnz)


def test_lp_properties_on_random_instances():
    """LP <= discrete OPT; X_{f, D_j(alpha)} >= alpha d_f (spec 3.4.4); the integral of D(alpha)
    over alpha is C_hat (3.4.5); C_hat <= C_j^LP (3.4.2)."""
    rng = np.random.default_rng(7)
    for i in range(6):
        e = unit_edges(random_single_stage(rng, releases=bool(i % 2)))
        s = solve_edge_lp(e)
        assert s.value <= discrete_opt(e) + 1e-6
        assert np.all(s.C_hat <= s.C + 1e-6)
        bp = s.breakpoints()
        for a in np.r_[bp, 0.37]:
            D = s.alpha_point(float(a))
            got = s.X[np.arange(e.n_flows), D[e.coflow]]
            assert np.all(got >= a * e.demand - 1e-6)
        lo = np.r_[0.0, bp[:-1]]
        integral = sum((b - a) * s.alpha_point(float(b)) for a, b in zip(lo, bp, strict=True))
        np.testing.assert_allclose(integral, s.C_hat, atol=1e-6)


def test_unit_edges_merge_and_refuse_bad_data():
    inst = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.5), (0, 1, 1.0), (1, 0, 0.0)])])
    e = unit_edges(inst, 0.5)
    # the two (0, 1) flows merge: 3 + 2 units; the zero-volume flow is dropped
    assert e.demand.tolist() == [5]
    assert sorted(e.members.tolist()) == [0, 1]
    assert e.slot == 0.5
    with pytest.raises(ValueError, match="demand"):
        UnitEdges(2, [0], [1], [0], [0], [0], [1.0])
    with pytest.raises(ValueError, match="dst"):
        UnitEdges(2, [0], [2], [1], [0], [0], [1.0])
    with pytest.raises(ValueError, match="quantum"):
        unit_edges(inst, 0.0)


def test_capacity_rescales_slots():
    inst = build_instance(Fabric(2, 2.0), coflows=[CoflowSpec([(0, 0, 4.0)], release=1.0)])
    e = unit_edges(inst)
    assert e.slot == 0.5 and e.release.tolist() == [2] and e.demand.tolist() == [4]


# -- LP-T (flow-order spec, Sec. 6; values from the specification's prototype) ----------------


@pytest.mark.parametrize("n, value, ck", [
    (1, 18.0, [2.5, 5.5, 2.5]),
    (2, 27.0 + 2.0 / 3.0, [3.0 + 2.0 / 3.0, 4.0, 4.0]),
    (3, 4.0, [1.0, 2.0]),
])
def test_flow_order_lp_examples(n, value, ck):
    s = solve_flow_order_lp(unit_edges(flow_example(n)))
    assert s.value == pytest.approx(value, abs=1e-6)
    np.testing.assert_allclose(s.C_coflow, ck, atol=1e-6)


def test_flow_order_lp_ex4_and_cut():
    e = unit_edges(flow_example(4))
    s = solve_flow_order_lp(e)
    assert s.value == pytest.approx(8019.718, abs=1e-3)
    np.testing.assert_allclose(s.C_coflow, [5.757, 8.0, 7.962, 6.0], atol=1e-3)
    # without the LB cut the LP is weaker, never stronger
    assert solve_flow_order_lp(e, lb_cut=False).value <= s.value + 1e-6

"""lp-flow-order (Chen, reconstructed): the specification's Sec. 6 examples (completions from
the specification's prototype), Ex 4 as the regression fixture that breaks the claimed
2 + 1/LB, and the proven Lemma P / Lemma G / 4-5 x LP bounds on seeded random instances
against the exact discrete optimum.  Every schedule is validated (the run service)."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import CoflowSpec, build_instance, metrics
from coflowopt.lp import solve
from coflowopt.lp.edge import edge_model, unit_edges
from coflowopt.lp.flow_order import solve_flow_order_lp
from coflowopt.model import Fabric
from coflowopt.proofs_check.instances import random_single_stage
from coflowopt.proofs_check.rounding_checks import (
    flow_example,
    flow_order_problems,
    merged_completion,
)
from coflowopt.schedulers import get
from coflowopt.schedulers.registry import SolverStopped
from coflowopt.schedulers.single.lp_flow_order import flow_priority
from coflowopt.service import run


@pytest.mark.parametrize("n, completions", [(1, [2, 6, 4]), (2, [3, 5, 5]), (3, [1, 3])])
def test_worked_examples(n, completions):
    v = run(flow_example(n), "lp-flow-order", keep_schedule=True).valid
    assert v.coflow_completion.tolist() == completions


def test_ex4_breaks_the_claimed_ratio():
    """Spec Ex 4 (W = 1000): G1 completions (5, 19, 13, 9), ALG = 19W + 27, and the exact
    discrete optimum 8W + 31 (slotted MILP): ALG / OPT = 2.369 > 2 + 1/LB = 2.2."""
    W = 1000.0
    inst = flow_example(4, W)
    v = run(inst, "lp-flow-order").valid
    assert v.coflow_completion.tolist() == [5, 19, 13, 9]
    alg = metrics.weighted_completion(v)
    assert alg == 19 * W + 27
    assert v.meta["lb"] == 5
    opt = solve(edge_model(unit_edges(inst), integral=True)).objective
    assert opt == pytest.approx(8 * W + 31)
    assert alg / opt > 2 + 1 / v.meta["lb"]
    assert alg <= 4 * v.meta["lp_value"] - 3 * float(inst.coflow_weight.sum())
    # without the LB cut the heavy coflow goes first: near-optimal
    v = run(inst, "lp-flow-order", params={"lb_cut": False}).valid
    assert metrics.weighted_completion(v) <= 1.01 * opt


def test_lemmas_on_random_instances():
    """Spec 5.2: Lemma P on the LP, Lemma G on the schedule, C_k <= 4 C_k^LP - 3 (5 C_k^LP - 4
    with releases), LP <= OPT <= ALG."""
    rng = np.random.default_rng(5)
    for i in range(8):
        inst = random_single_stage(rng, releases=bool(i % 2), vmax=2)
        e = unit_edges(inst)
        lp = solve_flow_order_lp(e)
        opt = solve(edge_model(e, integral=True)).objective
        assert lp.value <= opt + 1e-6
        v = run(inst, "lp-flow-order").valid
        cf = merged_completion(e, v.flow_completion)
        assert flow_order_problems(e, lp, flow_priority(e, lp), cf) == []
        rel = e.release.any()
        a, b = (5.0, 4.0) if rel else (4.0, 3.0)
        C = v.coflow_completion
        assert np.all(C <= a * lp.C_coflow - b + 1e-6)
        alg = metrics.weighted_completion(v)
        assert opt - 1e-6 <= alg


def test_refusals():
    info = get("lp-flow-order")
    slow = build_instance(Fabric(2, capacity_in=[1.0, 2.0], capacity_out=[1.0, 1.0]),
                          coflows=[CoflowSpec([(0, 0, 1.0)])])
    assert "capacity" in info.refusal(slow)
    big = build_instance(2, coflows=[CoflowSpec([(0, 0, 300.0), (1, 1, 200.0)])])
    with pytest.raises(SolverStopped, match=r"variables and [\d,]+ nonzeros"):
        run(big, "lp-flow-order", params={"max_nonzeros": 1e3})
    # the interval-indexed form runs, and is refused by its own size (intervals, memory)
    with pytest.raises(SolverStopped, match=r"interval-indexed .* [\d,]+ nonzeros .* GiB"):
        run(big, "lp-flow-order", params={"lp": "interval-indexed", "max_nonzeros": 1e2})
    run(flow_example(1), "lp-flow-order", params={"lp": "interval-indexed"})

"""The order-to-schedule mechanism (:func:`coflowopt.sim.order_schedule`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances

from coflowopt import CoflowSpec, Instance, ValidSchedule, build_instance, validate
from coflowopt.sim import order_schedule
from coflowopt.validate import Tolerance


def _three() -> Instance:
    # A: in0->out0 (2); B: in0->out1 (1); C: in1->out0 (1); unit ports
    return build_instance(2, coflows=[CoflowSpec([(0, 0, 2.0)]), CoflowSpec([(0, 1, 1.0)]),
                                      CoflowSpec([(1, 0, 1.0)])])


def test_fixed_order_hand_worked() -> None:
    inst = _three()
    # A first: it holds in0 and out0 until 2, B and C wait until then: done at 3
    v = validate(inst, order_schedule(inst, [0, 1, 2]))
    assert v.coflow_completion.tolist() == [2.0, 3.0, 3.0]
    # B and C first (disjoint ports): both done at 1, A runs 1..3
    v = validate(inst, order_schedule(inst, [1, 2, 0]))
    assert v.coflow_completion.tolist() == [3.0, 1.0, 1.0]


def test_priority_and_rerank_give_the_order_s_schedule() -> None:
    inst = _three()
    by_order = validate(inst, order_schedule(inst, [2, 0, 1])).coflow_completion
    by_prio = validate(inst, order_schedule(inst, priority=[1.0, 2.0, 0.0])).coflow_completion
    rank = np.array([1, 2, 0])
    by_cb = validate(inst, order_schedule(
        inst, rerank=lambda view: view.coflows[np.argsort(rank[view.coflows])])
    ).coflow_completion
    assert by_order.tolist() == by_prio.tolist() == by_cb.tolist()


def test_bad_orders_are_refused() -> None:
    inst = _three()
    with pytest.raises(ValueError, match="permutation"):
        order_schedule(inst, [0, 0, 1])
    with pytest.raises(ValueError, match="exactly one"):
        order_schedule(inst, [0, 1, 2], priority=[0, 1, 2])
    with pytest.raises(ValueError, match="rerank at t=0"):
        validate(inst, order_schedule(inst, rerank=lambda view: view.coflows[:1]))


@settings(max_examples=40, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=6))
def test_orders_on_both_engines_and_streamed(inst: Instance) -> None:
    rng = np.random.default_rng(inst.n_flows)
    order = rng.permutation(inst.n_coflows)
    fast = validate(inst, order_schedule(inst, order))
    ref = validate(inst, order_schedule(inst, order, engine="reference"))
    streamed = order_schedule(inst, order, check=Tolerance())
    assert isinstance(streamed, ValidSchedule) and streamed.schedule is None
    for v in (ref, streamed):
        np.testing.assert_allclose(v.coflow_completion, fast.coflow_completion, rtol=1e-9,
                                   atol=1e-9)
    madd = validate(inst, order_schedule(inst, order, allocation="madd"))  # reference engine
    assert np.all(np.isfinite(madd.coflow_completion))

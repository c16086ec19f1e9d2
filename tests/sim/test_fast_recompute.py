"""The fast engine's full recomputation touches only what can change (issue 28): remaining
volumes of served flows, the live ranges of coflows with a finished flow, the pair heads in
the greedy and rate passes.  Expected values hand-worked on tiny instances."""

from __future__ import annotations

import numpy as np

import coflowopt as co
from coflowopt import Fabric, Instance, metrics


def _overtaken() -> Instance:
    """Two ports, capacity 1.  Coflow A (release 0): an empty flow and 4 units, both 0 -> 1;
    coflow B (release 1): 1 unit on 0 -> 1.  B is the smaller one."""
    return Instance.from_arrays(Fabric.uniform(2, 1.0), np.array([0, 0, 0]),
                                np.array([1, 1, 1]), np.array([0.0, 4.0, 1.0]),
                                np.array([0, 0, 1]), coflow_release=np.array([0.0, 1.0]))


def test_a_served_flow_overtaken_by_a_new_pair_head_stops_until_the_head_finishes() -> None:
    # by hand: A's flow runs alone over [0, 1] (3 units left); B arrives, is first in the
    # smallest-first order, so its flow becomes the head of pair (0, 1) and A's flow (served,
    # no longer a head) must drop to 0; B runs over [1, 2], then A's 3 units over [2, 5]
    res = co.run(_overtaken(), "scf")
    assert metrics.cct(res.valid).tolist() == [5.0, 1.0]
    # arrivals only (a fixed order): at t = 0 A's one unfinished flow (the empty one is
    # dropped from its live range on admission), at t = 1 two flows on one pair: one head
    assert res.counters["recomputations"] == 2
    assert res.counters["recompute_flows"] == 1 + 2
    assert res.valid.meta["recompute_heads"] == 1 + 1


def test_a_fifo_order_keeps_the_served_flow_and_the_new_one_waits() -> None:
    # by hand: FIFO keeps A first, so A's flow stays the head and runs over [0, 4]; B's flow
    # waits behind it on the same pair and runs over [4, 5]: CCTs 4 and 5 - 1 = 4
    res = co.run(_overtaken(), "fifo")
    assert metrics.cct(res.valid).tolist() == [4.0, 4.0]
    assert res.valid.meta["recompute_heads"] == 1 + 1

"""Shafiee-Ghaderi's "Approximate" (IEEE/ACM ToN 2018, arXiv 1704.08357; [INF]): the
list-scheduling rule on hand-worked traces, one full-rate segment per flow, Starts-After
through eligibility, and the factors 4 (releases 0) and 5 (releases) against the ordering LP
of :mod:`coflowopt.lp` on random instances, every schedule validated.

The list-scheduling details are [INF]: values that depend on them are "against our
reconstruction"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances

import coflowopt
from coflowopt import CoflowSpec, Fabric, Instance, JobSpec, build_instance, validate
from coflowopt import metrics as M
from coflowopt.lp import ordering_lp
from coflowopt.schedulers import get
from coflowopt.schedulers.fair.approximate import (
    ApproximateParams,
    LPNotSolved,
    list_schedule,
    run_approximate,
)
from coflowopt.sim.sink import RateSink

STORE = RateSink.store()  # the direct call: the schedule stored, validated here


def _one_segment_per_flow_at_full_rate(inst: Instance, s) -> None:
    live = np.flatnonzero(inst.flow_volume > 0)
    assert sorted(s.flow.tolist()) == live.tolist()  # each flow exactly one segment
    full = np.minimum(inst.fabric.capacity_in[inst.flow_src[s.flow]],
                      inst.fabric.capacity_out[inst.flow_dst[s.flow]])
    np.testing.assert_allclose(s.rate, full)


def test_hand_worked_waiting_flow_blocks_its_ports() -> None:
    """Against our reconstruction.  Three unit ports, list order X, Y, Z, W (one flow each):
    X = in0->out0 volume 2, Y = in1->out0 volume 1, Z = in1->out1 volume 1, W = in2->out2
    volume 1.  t = 0: X starts; Y waits (out0 busy) and blocks in1 and out0; Z waits (in1 is
    idle but blocked by the earlier waiting Y); W starts.  t = 1: W done, nothing changes.
    t = 2: X done, Y starts; Z waits (in1 busy).  t = 3: Z starts, done at 4.
    C = (2, 3, 4, 1)."""
    inst = build_instance(3, coflows=[
        CoflowSpec([(0, 0, 2.0)], id="X"), CoflowSpec([(1, 0, 1.0)], id="Y"),
        CoflowSpec([(1, 1, 1.0)], id="Z"), CoflowSpec([(2, 2, 1.0)], id="W"),
    ])
    s = list_schedule(inst, [0, 1, 2, 3])
    v = validate(inst, s)
    assert v.coflow_completion.tolist() == [2.0, 3.0, 4.0, 1.0]
    assert v.flow_start.tolist() == [0.0, 2.0, 3.0, 0.0]
    _one_segment_per_flow_at_full_rate(inst, s)


def test_hand_worked_releases_and_capacities() -> None:
    """Against our reconstruction.  Two ports, ingress capacities (2, 2), egress (1, 4).
    List order A, B: A = in0->out0 volume 3 at t = 0 (rate min(2, 1) = 1, [0, 3]); B =
    in0->out1 volume 4 released at 1: at t = 1 in0 is busy, B waits; t = 3: B at
    min(2, 4) = 2, [3, 5].  C = (3, 5)."""
    inst = build_instance(Fabric(2, capacity_in=[2.0, 2.0], capacity_out=[1.0, 4.0]),
                          coflows=[CoflowSpec([(0, 0, 3.0)], id="A"),
                                   CoflowSpec([(0, 1, 4.0)], id="B", release=1.0)])
    s = list_schedule(inst, [0, 1])
    v = validate(inst, s)
    assert v.coflow_completion.tolist() == [3.0, 5.0]
    _one_segment_per_flow_at_full_rate(inst, s)


def test_hand_worked_starts_after() -> None:
    """Against our reconstruction.  Two unit ports; job J: a = in0->out0 volume 1, then b =
    in1->out1 volume 1 (b Starts-After a); coflow c = in1->out1 volume 2.  List order b, a, c:
    at t = 0 b is not eligible, so it neither starts nor blocks: a and c start.  t = 1: a done,
    b eligible but in1 busy (c): waits.  t = 2: b starts, done at 3.  C = (1, 3, 2)."""
    inst = build_instance(2, jobs=[
        JobSpec([CoflowSpec([(0, 0, 1.0)], id="a"), CoflowSpec([(1, 1, 1.0)], id="b")],
                [(0, 1)], id="J"),
        JobSpec([CoflowSpec([(1, 1, 2.0)], id="c")], id="K"),
    ])
    s = list_schedule(inst, [1, 0, 2])
    v = validate(inst, s)
    assert v.coflow_completion.tolist() == [1.0, 3.0, 2.0]
    res = coflowopt.run(inst, "approximate")  # the LP order on a DAG instance also validates
    assert res.valid.coflow_start[1] >= res.valid.coflow_completion[0]


def test_hand_worked_lp_order() -> None:
    """Two coflows on one unit port pair: A volume 1 weight 1, B volume 3 weight 1.  The LP
    (lp.ordering_lp) puts A first (f = (1, 4), value 5), so A runs [0, 1] and B [1, 4]:
    sum w C = 5 = LP*."""
    inst = build_instance(1, coflows=[CoflowSpec([(0, 0, 1.0)], id="A"),
                                      CoflowSpec([(0, 0, 3.0)], id="B")])
    s = get("approximate")(inst)
    v = validate(inst, s)
    assert s.meta["order"].tolist() == [0, 1]
    assert s.meta["lp_value"] == pytest.approx(5.0)
    assert M.weighted_completion(v) == pytest.approx(5.0)


def _ratio(inst: Instance) -> float:
    res = coflowopt.run(inst, "approximate")
    _one_segment_per_flow_at_full_rate(inst, res.valid.schedule)
    lp = ordering_lp(inst).value
    wc = M.weighted_completion(res.valid)
    assert wc >= lp * (1 - 1e-7) - 1e-9  # the LP is a lower bound on every schedule
    return wc / lp


@settings(max_examples=25, deadline=None)
@given(instances(max_ports=4, max_coflows=6, max_flows=4, releases=False, dags=False))
def test_factor_4_with_releases_zero(inst: Instance) -> None:
    assert _ratio(inst) <= 4.0 + 1e-9


@settings(max_examples=25, deadline=None)
@given(instances(max_ports=4, max_coflows=6, max_flows=4, releases=True, dags=False))
def test_factor_5_with_releases(inst: Instance) -> None:
    assert _ratio(inst) <= 5.0 + 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factors_on_larger_random_instances(seed: int) -> None:
    """20 coflows of 1-6 flows on 6 ports, weights in {1, 2, 3}, with and without releases."""
    rng = np.random.default_rng(seed)
    for rel in (False, True):
        coflows = [CoflowSpec([(int(rng.integers(6)), int(rng.integers(6)),
                                float(rng.uniform(0.2, 4.0)))
                               for _ in range(int(rng.integers(1, 7)))],
                              weight=float(rng.choice([1.0, 2.0, 3.0])),
                              release=float(rng.uniform(0, 5)) if rel else 0.0, id=f"c{k}")
                   for k in range(20)]
        inst = build_instance(6, coflows=coflows)
        assert _ratio(inst) <= (5.0 if rel else 4.0)


def test_registry_factor_and_lp_failure() -> None:
    info = get("approximate")
    inst0 = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.0)]), CoflowSpec([(1, 1, 2.0)])])
    inst1 = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.0)]),
                                       CoflowSpec([(1, 1, 2.0)], release=1.0)])
    assert info.factor_for("weighted_completion", inst0) == "4"
    assert info.factor_for("weighted_completion", inst1) is None
    assert "5" in info.summary
    rng = np.random.default_rng(0)
    big = build_instance(6, coflows=[CoflowSpec([(int(rng.integers(6)), int(rng.integers(6)),
                                                  1.0 + rng.random()) for _ in range(5)])
                                     for _ in range(40)])
    with pytest.raises(LPNotSolved, match=r"40 coflows.*time_limit"):
        run_approximate(big, ApproximateParams(time_limit=1e-6), STORE)
    with pytest.raises(ValueError, match="time_limit"):
        ApproximateParams(time_limit=0.0)
    for params in ({"backend": "scipy"}, {"lp_solver": "simplex"}):
        r = coflowopt.run(inst1, "approximate", params=params).valid
        assert r.meta["lp_value"] == pytest.approx(ordering_lp(inst1).value)
    a = coflowopt.run(inst1, "approximate", seed=1).valid
    b = coflowopt.run(inst1, "approximate", seed=2).valid
    np.testing.assert_array_equal(a.coflow_completion, b.coflow_completion)

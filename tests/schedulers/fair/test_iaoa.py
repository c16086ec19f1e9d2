"""The IAOA *placeholder* (single-stage spec 8.3, [PROP]; not the paper's algorithm): hand-worked
traces of the proposed rule, the non-preemptive port hold on random instances, validated
schedules.  Every value is "against our reconstruction" (the spec's proposal)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances

import coflowopt
from coflowopt import CoflowSpec, Instance, JobSpec, build_instance, validate
from coflowopt.schedulers import get
from coflowopt.schedulers.fair.iaoa import IAOAParams, IAOAPolicy, run_iaoa
from coflowopt.sim.sink import RateSink

STORE = RateSink.store()  # the direct call: the schedule stored, validated here


def test_hand_worked_weight_backfill_and_hold() -> None:
    """Against our reconstruction.  Two unit ports.  A = {in0->out0 volume 2, in1->out1
    volume 1} weight 1; B = in0->out1 volume 1 weight 2; C = in1->out0 volume 1 released at
    0.5; D = in1->out1 volume 1/2 released at 2.
    t = 0: A and B wait with S = 0; the larger weight goes first: B takes in0, out1 (done at
    1); A needs in0: skipped.  t = 0.5: C fits on in1, out0 (done at 1.5).  t = 1: A needs in1
    (held by C): waits.  t = 1.5: A starts on all four ports; its in1->out1 flow ends at 2.5,
    in0->out0 at 3.5.  t = 2: D needs in1, out1, held by A until A completes (3.5), although
    they idle from 2.5: D runs [3.5, 4].  C = (3.5, 1, 1.5, 4)."""
    inst = build_instance(2, coflows=[
        CoflowSpec([(0, 0, 2.0), (1, 1, 1.0)], id="A"),
        CoflowSpec([(0, 1, 1.0)], id="B", weight=2.0),
        CoflowSpec([(1, 0, 1.0)], id="C", release=0.5),
        CoflowSpec([(1, 1, 0.5)], id="D", release=2.0),
    ])
    for level in ("coflow", "job"):
        res = coflowopt.run(inst, "iaoa", params={"level": level})
        assert res.valid.coflow_completion.tolist() == pytest.approx([3.5, 1.0, 1.5, 4.0])
        assert res.valid.meta["placeholder"] is True


def _chain() -> Instance:
    # one unit port pair; job J: j1 then j2 (volume 1 each); job K: k volume 1 released at 1
    return build_instance(1, jobs=[
        JobSpec([CoflowSpec([(0, 0, 1.0)], id="j1"), CoflowSpec([(0, 0, 1.0)], id="j2")],
                [(0, 1)], id="J"),
        JobSpec([CoflowSpec([(0, 0, 1.0)], id="k", release=1.0)], id="K"),
    ])


def test_hand_worked_job_level_attained_service() -> None:
    """Against our reconstruction.  One unit port pair; job J: j1 then j2 (Starts-After),
    volume 1 each; job K: k volume 1 released at 1.  j1 runs [0, 1].  At t = 1 j2 and k wait.
    level="job": J has attained 1, K 0: k first [1, 2], j2 [2, 3].  level="coflow": both
    have S = 0 and equal weight, both admitted at 1: position decides, j2 [1, 2], k [2, 3]."""
    inst = _chain()
    job = validate(inst, run_iaoa(inst, IAOAParams(level="job"), STORE).schedule)
    assert job.coflow_completion.tolist() == pytest.approx([1.0, 3.0, 2.0])
    cof = validate(inst, run_iaoa(inst, IAOAParams(level="coflow"), STORE).schedule)
    assert cof.coflow_completion.tolist() == pytest.approx([1.0, 2.0, 3.0])


def _check_hold(inst: Instance, v) -> None:
    """No other coflow sends on a port of coflow c while c runs (from its start to its
    completion)."""
    s = v.schedule
    t = s.breakpoints
    fc = inst.flow_coflow[s.flow]
    a, b = t[s.first], t[s.last]
    for c in range(inst.n_coflows):
        f = inst.flows_of(c)
        f = f[inst.flow_volume[f] > 0]
        if f.size == 0:
            continue
        lo, hi = v.coflow_start[c], v.coflow_completion[c]
        other = (fc != c) & (np.minimum(b, hi) - np.maximum(a, lo) > 1e-9)
        shares = (np.isin(inst.flow_src[s.flow], inst.flow_src[f])
                  | np.isin(inst.flow_dst[s.flow], inst.flow_dst[f]))
        assert not (other & shares).any(), f"coflow {c} preempted on a held port"


@settings(max_examples=25, deadline=None)
@given(instances(max_coflows=6, max_flows=4))
def test_non_preemptive_hold_on_random_instances(inst: Instance) -> None:
    for level in ("coflow", "job"):
        v = validate(inst, run_iaoa(inst, IAOAParams(level=level), STORE).schedule)
        _check_hold(inst, v)


def test_registry_row_says_placeholder_and_non_clairvoyant() -> None:
    info = get("iaoa")
    assert "placeholder" in info.summary and not info.clairvoyant and info.multistage
    assert IAOAPolicy.clairvoyant is False
    with pytest.raises(ValueError, match="level"):
        IAOAPolicy("bytes")
    with pytest.raises(coflowopt.params.ParamsError, match="level"):
        info.make_params({"level": "bytes"})
    inst = _chain()
    a = coflowopt.run(inst, "iaoa", seed=0).valid
    b = coflowopt.run(inst, "iaoa", seed=0).valid
    np.testing.assert_array_equal(a.coflow_completion, b.coflow_completion)
    assert "placeholder" in a.meta["note"]

"""Tian et al.'s O(m) baseline (dag-coflows spec 7): LP <= weighted JCT <= (2m + 1) LP, the LP
order respects precedence, the BF variant, and a failed LP as a one-line error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coflowopt
from coflowopt.lp import LPBound, tian_lp
from coflowopt.lp.model import SolveResult, Status
from coflowopt.metrics import weighted_jct
from coflowopt.proofs_check.instances import example2, example4, random_dag_jobs
from coflowopt.schedulers.dag import om_lp
from coflowopt.schedulers.dag.gdm import release_slots
from coflowopt.schedulers.dag.om_lp import OMLPError, OMLPParams, om_lp_plan
from coflowopt.schedulers.dag.slots import slot_demand


def _wjct(inst, **params):
    return weighted_jct(coflowopt.run(inst, "om-lp", params=params).valid)


@pytest.mark.parametrize("make", [example2, example4])
def test_examples_within_bound(make):
    """Examples 2 and 4: LP <= weighted JCT <= (2m + 1) LP (Tian LP 18.5 on Example 2, spec
    10) -- the LP and rounding are our reconstruction (7.2, 7.3 [R])."""
    inst = make()
    lp = tian_lp(inst).value
    if make is example2:
        assert lp == pytest.approx(18.5)
    val = _wjct(inst)
    assert lp * (1 - 1e-9) <= val <= (2 * inst.ports + 1) * lp


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), fix=st.booleans())
def test_random_within_2m_plus_1(seed, fix):
    """On random DAG jobs with releases: Tian LP <= weighted JCT <= (2m + 1) x Tian LP (the
    schedule validated by the run service) -- against our reconstruction."""
    inst = random_dag_jobs(np.random.default_rng(seed), jobs=(1, 4), max_coflows=7)
    lp = tian_lp(inst, fix_precedence=fix).value
    val = _wjct(inst, fix_precedence=fix)
    assert lp * (1 - 1e-7) <= val <= (2 * inst.ports + 1) * lp * (1 + 1e-7)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000))
def test_backfill_variant_never_later(seed):
    """``backfill=True``: every job completes no later than in the plain baseline."""
    inst = random_dag_jobs(np.random.default_rng(seed), jobs=(1, 4), max_coflows=7)
    a = coflowopt.run(inst, "om-lp").valid.job_completion
    b = coflowopt.run(inst, "om-lp", params={"backfill": True}).valid.job_completion
    assert (b <= a + 1e-9).all()


def test_sequential_in_lp_order():
    """One coflow at a time: in LP order, each from max(previous end, its release)."""
    inst = example2()
    lp = tian_lp(inst)
    d, rel = slot_demand(inst), release_slots(inst)
    plan, starts = om_lp_plan(inst, lp.order, d, rel)
    end = 0
    for c in lp.order.tolist():
        assert starts[c] == max(end, rel[c])
        end = starts[c] + int(inst.effective_size[c])
    assert plan.makespan == end


def test_order_against_precedence_is_asserted():
    inst = example4()  # job2: coflow 5 -> coflow 6
    order = np.array([0, 1, 2, 3, 4, 6, 5])
    with pytest.raises(AssertionError, match="before its predecessor"):
        om_lp_plan(inst, order, slot_demand(inst), release_slots(inst))


def test_failed_lp_is_one_line(monkeypatch):
    """An LP stopped by its time limit ends the run with one line naming the status."""
    def failed(instance, params=None, *, fix_precedence=False, backend="highs", on_model=None):
        res = SolveResult(Status.TIME_LIMIT, math.nan, math.nan, math.nan, 2.0, None, "highs",
                          "time limit reached\nsecond line")
        return LPBound(math.nan, None, None, res, "Tian et al. LP")

    monkeypatch.setattr(om_lp, "tian_lp", failed)
    with pytest.raises(OMLPError) as info:
        coflowopt.run(example4(), "om-lp", params={"time_limit": 2.0})
    msg = str(info.value)
    assert "\n" not in msg and "time_limit" in msg.replace(" ", "_") and "7 coflows" in msg


def test_params_checked():
    with pytest.raises(ValueError, match="time_limit"):
        OMLPParams(time_limit=0.0)
    with pytest.raises(ValueError, match="quantum"):
        OMLPParams(quantum=0.0)


def test_deterministic():
    inst = random_dag_jobs(np.random.default_rng(4), jobs=(3, 3), max_coflows=7)
    a = coflowopt.run(inst, "om-lp", seed=1).valid.job_completion
    b = coflowopt.run(inst, "om-lp", seed=2).valid.job_completion
    assert np.array_equal(a, b)


def test_too_large_lp_refused_in_one_line():
    """An LP over ``max_nonzeros`` is refused before it is built, in one line."""
    inst = random_dag_jobs(np.random.default_rng(2), jobs=(3, 3), max_coflows=7)
    with pytest.raises(OMLPError, match="over max_nonzeros") as info:
        coflowopt.run(inst, "om-lp", params={"max_nonzeros": 10.0})
    assert "\n" not in str(info.value)

"""The run service: one call from a registered scheduler to a validated result."""

from __future__ import annotations

import numpy as np
import pytest

import coflowopt as co
from coflowopt.workloads.synthetic import synthetic_trace


@pytest.mark.parametrize("semantics,name", [("fluid", "varys"), ("fluid", "fair"),
                                            ("coflowsim", "sebf"), ("coflowsim", "dark")])
def test_streamed_and_stored_runs_agree(semantics: str, name: str) -> None:
    inst = synthetic_trace(30, seed=4, ports=20)
    a = co.run(inst, name, semantics=semantics)
    b = co.run(inst, name, semantics=semantics, keep_schedule=True)
    assert a.streamed and a.schedule is None and a.validate_seconds == 0.0
    assert not b.streamed and b.schedule is not None
    if (semantics, name) == ("fluid", "fair"):
        # streamed through the validator's rate groups: completion times from the group's
        # cumulative service, equal to the per-flow sums up to rounding
        np.testing.assert_allclose(a.valid.coflow_completion, b.valid.coflow_completion,
                                   rtol=1e-12, atol=0)
    else:
        np.testing.assert_array_equal(a.valid.coflow_completion, b.valid.coflow_completion)
    assert a.counters["rate_changes"] > 0 and b.counters["segments"] == b.schedule.n_segments
    # what was validated is what was scheduled: CoflowSim's own (rounded, epoch) instance
    assert (a.instance is inst) == (semantics == "fluid")


def test_parameters_are_checked_and_kept() -> None:
    inst = synthetic_trace(10, seed=4, ports=8)
    res = co.run(inst, "aalo", params={"first": 2, "queues": 4}, seed=7)
    assert res.params.first == 2.0 and res.params.queues == 4 and res.seed == 7
    assert res.scheduler == "aalo" and res.semantics == "fluid"
    with pytest.raises(co.ParamsError, match=r"aalo\.frist"):
        co.run(inst, "aalo", params={"frist": 2})


def test_an_infeasible_schedule_raises() -> None:
    inst = synthetic_trace(10, seed=4, ports=8)
    with pytest.raises(co.InfeasibleSchedule):
        co.run(inst, "varys", tol=co.Tolerance(capacity_rtol=-0.5))

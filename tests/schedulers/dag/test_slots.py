"""The slot plan and its real-first executor (coflowopt.schedulers.dag.slots)."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt.model import CoflowSpec, Fabric, build_instance
from coflowopt.schedulers.dag.slots import (
    SlotPlan,
    plan_to_schedule,
    run_plan,
    slot_demand,
    slot_length,
    uniform_fabric_refusal,
)
from coflowopt.sim.sink import RateSink
from coflowopt.validate import InfeasibleSchedule, Tolerance, validate


def _inst(capacity: float = 1.0):
    return build_instance(Fabric.uniform(2, capacity), coflows=[
        CoflowSpec([(0, 0, 2.5), (1, 1, 1.0)]), CoflowSpec([(0, 1, 1.0), (1, 0, 0.0)])])


def test_plan_basics() -> None:
    p = SlotPlan([0, 0, 1], [0, 2, 5], [1, 2, 1])
    assert p.makespan == 6
    assert SlotPlan.empty().makespan == 0
    assert p.shifted(3).start.tolist() == [3, 5, 8]
    assert p.flow_completion(3).tolist() == [4, 6, -1]
    q = SlotPlan.concat([p, p.shifted(10)])
    assert q.n_pieces == 6 and q.makespan == 16
    assert SlotPlan.concat([]).n_pieces == 0
    with pytest.raises(ValueError, match="lengths differ"):
        SlotPlan([0], [0, 1], [1])


def test_slot_demand_and_length() -> None:
    inst = _inst(2.0)
    assert slot_demand(inst).tolist() == [3, 1, 1, 0]
    assert slot_demand(inst, 0.5).tolist() == [5, 2, 2, 0]
    assert slot_demand(inst, 10.0).tolist() == [1, 1, 1, 0]   # at least 1 for a positive volume
    assert slot_length(inst, 0.5) == 0.25
    with pytest.raises(ValueError, match="quantum"):
        slot_demand(inst, 0.0)


def test_real_first_cut_and_merge() -> None:
    """Flow 0 (2.5 units) in slots 0 and 1-2: one segment [0, 2.5); flow 1 in slot 0; flow 2
    in slot 3 (after flow 0 left source 0)."""
    inst = _inst()
    plan = SlotPlan([0, 0, 1, 2], [0, 1, 0, 3], [1, 2, 1, 1])
    s = plan_to_schedule(inst, plan)
    assert s.n_segments == 3
    assert s.breakpoints.tolist() == [0.0, 1.0, 2.5, 3.0, 4.0]
    v = validate(inst, s)
    assert v.flow_completion[:3].tolist() == [2.5, 1.0, 4.0]
    # capacity 2: the same plan in slots of 0.5
    inst2 = _inst(2.0)
    v2 = validate(inst2, plan_to_schedule(inst2, plan, origin=1.0))
    assert v2.flow_completion[:3].tolist() == [2.25, 1.5, 3.0]


def test_run_plan_streams() -> None:
    inst = _inst()
    plan = SlotPlan([0, 1, 2], [0, 0, 3], [3, 1, 1])
    out = run_plan(inst, plan, sink=RateSink.streaming(Tolerance()), meta={"scheduler": "x"})
    v = out.valid
    assert out.schedule is None and v.schedule is None and v.meta["scheduler"] == "x"
    ref = validate(inst, plan_to_schedule(inst, plan))
    assert np.array_equal(v.flow_completion, ref.flow_completion)
    stored = run_plan(inst, plan)
    assert stored.valid is None and isinstance(stored.schedule, type(ref.schedule))


def test_run_plan_reports_an_overlap() -> None:
    inst = _inst()
    plan = SlotPlan([0, 2], [0, 0], [3, 1])          # source 0 twice in slot 0
    with pytest.raises(InfeasibleSchedule, match="capacity"):
        run_plan(inst, plan, sink=RateSink.streaming(Tolerance()))


def test_bad_piece_named() -> None:
    with pytest.raises(ValueError, match="piece 0"):
        plan_to_schedule(_inst(), SlotPlan([9], [0], [1]))


def test_uniform_fabric_refusal() -> None:
    assert uniform_fabric_refusal(_inst()) is None
    inst = build_instance(Fabric(2, [1.0, 1.0], [1.0, 3.0]), coflows=[[(0, 0, 1.0)]])
    why = uniform_fabric_refusal(inst)
    assert why is not None and "\n" not in why and "port out 1" in why

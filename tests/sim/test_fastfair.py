"""The compiled fair engine: recomputing only the pairs whose ports' levels or flows changed
gives the schedule of recomputing every pair at every event (the engine before that
shortcut), bit for bit; a second, independent check is the reference engine's max-min fair
allocation (``tests/schedulers/test_single.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import fb2010_prefix, instances

from coflowopt import Instance, Tolerance, build_instance
from coflowopt.model import CoflowSpec
from coflowopt.schedulers import get
from coflowopt.sim.fastfair import fast_fair
from coflowopt.validate import validate
from coflowopt.workloads.synthetic import synthetic_trace


def _times(inst: Instance, *, every_pair: bool, stream: bool) -> tuple[np.ndarray, np.ndarray]:
    if stream:
        v = fast_fair(inst, check=Tolerance(), every_pair=every_pair)
    else:
        v = validate(inst, fast_fair(inst, every_pair=every_pair))
    return v.flow_completion, v.coflow_completion


def _same(inst: Instance) -> None:
    for stream in (False, True):
        a = _times(inst, every_pair=False, stream=stream)
        b = _times(inst, every_pair=True, stream=stream)
        assert a[0].tobytes() == b[0].tobytes()
        assert a[1].tobytes() == b[1].tobytes()


@settings(max_examples=60, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=6, max_flows=5))
def test_only_changed_pairs_random(inst: Instance) -> None:
    _same(inst)


@pytest.mark.parametrize("seed", [1, 2])
def test_only_changed_pairs_synthetic(seed: int) -> None:
    _same(synthetic_trace(60, seed=seed, ports=30))


def test_only_changed_pairs_fb2010_prefix() -> None:
    _same(fb2010_prefix(120))


def test_ties_everywhere() -> None:
    # unit ports and unit volumes, every pair of a 4 x 4 switch: every level ties with others
    flows = [(i, j, 1.0) for i in range(4) for j in range(4)]
    inst = build_instance(4, coflows=[CoflowSpec(flows[:8]), CoflowSpec(flows[8:], release=0.5),
                                      CoflowSpec(flows[::3], release=1.25)])
    _same(inst)
    # and the reference engine's per-flow max-min fair allocation at every event
    ref = validate(inst, get("fair")(inst, engine="reference"))
    got = fast_fair(inst, check=Tolerance())
    np.testing.assert_allclose(got.flow_completion, ref.flow_completion, rtol=1e-12)

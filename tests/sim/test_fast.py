"""The fluid fast engine's input limits."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import Fabric, Instance
from coflowopt.schedulers.single.varys import varys_engine_policy
from coflowopt.sim.fast import fast_simulate


def test_a_fabric_whose_port_lists_overflow_int32_is_refused_before_any_work() -> None:
    # 2 m + 2 list slots per port, slot indices int32: 32,768 * 65,538 > 2**31 - 1
    inst = Instance.from_arrays(Fabric.uniform(32_768, 1.0), np.array([0]), np.array([1]),
                                np.array([1.0]), np.array([0]), n_coflows=1)
    with pytest.raises(ValueError, match=r"at most 32,767 ports; this fabric has 32768"):
        fast_simulate(inst, varys_engine_policy(inst))

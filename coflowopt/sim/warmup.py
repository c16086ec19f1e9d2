"""Compile or load every engine kernel once, before timed work (bench workers, the tests).

Its own module because it imports every engine (the fluid kernels, the fair kernel, the CoflowSim
kernels), each of which imports :mod:`coflowopt.sim.kernel`: kept there, it made the kernel
control module and the engines import each other.
"""

from __future__ import annotations

import time

import numpy as np

from coflowopt.model import Fabric, Instance
from coflowopt.sim.coflowsim import coflowsim
from coflowopt.sim.fast import fast_simulate
from coflowopt.sim.fastfair import fast_fair
from coflowopt.sim.kernel import Notify
from coflowopt.sim.policy import EnginePolicy
from coflowopt.validate import Tolerance, schedule_changes, validate, validate_changes

__all__ = ["warm_up"]


def warm_up(verbose: bool = False, notify: Notify | None = None) -> float:
    """Compile or load every compiled kernel (the fluid kernels, the fair kernel, both
    CoflowSim kernels, storing and streaming, and the validators) on a tiny instance;
    returns the seconds spent.  ``verbose``: report compiles (to ``notify``, default stderr);
    otherwise silent."""
    def quiet(_: str) -> None:
        pass

    say = notify if verbose else quiet
    t0 = time.perf_counter()
    # two coflows on two ports, in MB and ms like a trace (CoflowSim reads it as one)
    inst = Instance.from_arrays(
        Fabric.uniform(2, 0.125), np.array([0, 1, 0]), np.array([1, 0, 0]),
        np.array([2.0, 3.0, 1.0]), np.array([0, 0, 1]), coflow_release=np.array([0.0, 5.0]),
        n_coflows=2, time_unit="ms")
    tol = Tolerance()
    for check in (None, tol):
        sched = fast_simulate(inst, EnginePolicy(departures=False), check=check, notify=say)
        if check is None:
            validate(inst, sched)
            validate_changes(inst, sched.breakpoints, *schedule_changes(sched))
        fast_fair(inst, check=check, notify=say)
        for name in ("sebf", "fair"):
            res = coflowsim(inst, name, check=check is not None, notify=say)
            if res.schedule is not None:
                validate(res.instance, res.schedule, res.tolerance)
    return time.perf_counter() - t0

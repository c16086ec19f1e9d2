"""Test-only schedulers for the bench tests, importable by worker processes.

Suites name this module in ``imports = ["bench_plugins"]``; ``tests/bench/conftest.py`` puts
its folder on ``sys.path`` (worker processes inherit it; subprocesses get ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import time

from coflowopt.schedule import Schedule
from coflowopt.schedulers import registry, sequential
from coflowopt.schedulers.registry import register

MARKER_ENV = "COFLOWOPT_BENCH_MARKER"  # as in conftest.py


def _mark(seed: int, n_flows: int) -> None:
    path = os.environ.get(MARKER_ENV)
    if path:
        with open(path, "a") as fh:
            fh.write(f"{seed}:{n_flows}\n")
            fh.flush()
            os.fsync(fh.fileno())


def _register(name: str, **kw):
    def deco(func):
        if name not in registry():
            register(name, kind="offline", clairvoyant=True, **kw)(func)
        return func

    return deco


@_register("bench-test-fail", objective="nothing", summary="always raises")
def always_fails(instance, *, seed=None, message: str = "this algorithm always fails"):
    raise ValueError(message)


@_register("bench-test-count", factor="2", summary="sequential, and notes each call")
def counted(instance, *, seed=None, pause: float = 0.0):
    """Sequential; appends ``seed:n_flows`` to $COFLOWOPT_BENCH_MARKER, after ``pause`` s."""
    end = time.monotonic() + pause
    while time.monotonic() < end:
        time.sleep(0.01)
    _mark(seed, instance.n_flows)
    return sequential(instance)


@_register("bench-test-sleep", summary="sleeps in short steps, then sequential")
def sleeps(instance, *, seed=None, seconds: float = 30.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)
    return sequential(instance)


@_register("bench-test-infeasible", summary="sequential at twice the rates")
def too_fast(instance, *, seed=None) -> Schedule:
    s = sequential(instance)
    return Schedule.from_segments(s.breakpoints, s.flow, s.rate * 2, s.first, s.last)

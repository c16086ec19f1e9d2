"""Baselines that need no simulator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.sequential import sequential_schedule
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["SequentialParams", "run_sequential"]


@dataclass(frozen=True)
class SequentialParams(Params):
    """``order``: coflow positions to serve in that order (default: by earliest possible start,
    which respects Starts-After edges)."""

    order: tuple[int, ...] | None = None


def run_sequential(instance: Instance, params: SequentialParams, sink: RateSink, *,
                   seed: Any = None, progress: Any = None) -> Outcome:
    """One coflow at a time, each alone on the fabric at MADD rates
    (:func:`coflowopt.sequential.sequential_schedule`).  Deterministic (``seed`` unused)."""
    return sink.outcome(sequential_schedule(instance, params.order))

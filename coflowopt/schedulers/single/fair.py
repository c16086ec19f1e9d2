"""Per-flow max-min fair sharing (TCP-like, non-clairvoyant): the baseline every coflow paper
compares against."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.sim import allocate
from coflowopt.sim.drive import run_policy
from coflowopt.sim.engine import SimView
from coflowopt.sim.fastfair import fast_fair
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["FairParams", "FairPolicy", "run_fair"]


@dataclass(frozen=True)
class FairParams(Params):
    """``engine``: ``fast`` (the pair-level kernel of :mod:`coflowopt.sim.fastfair`) or
    ``reference``."""

    engine: Literal["fast", "reference"] = "fast"


class FairPolicy:
    """Per-flow max-min fair sharing of every port (non-clairvoyant)."""

    clairvoyant = False

    def start(self, view: SimView) -> None:
        pass

    def rates(self, view: SimView) -> float:
        allocate.max_min_fair(view.alloc, view.coflows)
        return math.inf


def run_fair(instance: Instance, params: FairParams, sink: RateSink, *, seed: Any = None,
             progress: Any = None) -> Outcome:
    """Per-flow max-min fair sharing of every port, recomputed at every arrival and flow
    completion."""
    meta = {"scheduler": "fair", "params": {}}
    if params.engine == "fast":
        return sink.outcome(fast_fair(instance, check=sink.check, progress=progress), meta=meta)
    return run_policy(instance, FairPolicy(), sink, engine="reference", meta=meta,
                      progress=progress)

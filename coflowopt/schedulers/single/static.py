"""The static-order baselines the papers compare against (Varys' paper; CoflowSim): FIFO, SCF
(shortest first: smallest largest flow), NCF (narrowest first: fewest flows) and LCF (lightest
first: smallest total bytes), each with order-preserving greedy allocation.  The keys are
:data:`coflowopt.orders.STATIC_KEYS`; CoflowSim's NCF counts min(mappers, reducers) instead of
flows, the one place the two semantics measure differently."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from coflowopt.model import Instance
from coflowopt.orders import STATIC_KEYS
from coflowopt.params import Params
from coflowopt.sim.drive import StaticOrderPolicy, run_policy
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["StaticParams", "run_fifo", "run_lcf", "run_ncf", "run_scf", "run_static"]


@dataclass(frozen=True)
class StaticParams(Params):
    """``allocation``: ``greedy`` (order-preserving) or ``madd`` (reference engine);
    ``split``: the intra-coflow rule; ``engine``."""

    allocation: Literal["greedy", "madd"] = "greedy"
    split: Literal["ordered", "equal"] = "ordered"
    engine: Literal["fast", "reference"] = "fast"


def run_static(instance: Instance, name: str, params: StaticParams, sink: RateSink,
               progress: Any = None) -> Outcome:
    """The static order ``name`` (a key of :data:`~coflowopt.orders.STATIC_KEYS`); ties by
    admission time, then position."""
    p = params
    policy = StaticOrderPolicy(STATIC_KEYS[name], p.allocation, p.split)
    meta = {"scheduler": name, "params": {"allocation": p.allocation, "split": p.split}}
    return run_policy(instance, policy, sink, engine=p.engine, meta=meta, progress=progress)


def run_fifo(instance: Instance, params: StaticParams, sink: RateSink, *,
            seed: Any = None, progress: Any = None) -> Outcome:
    """FIFO by admission time (ties by position)."""
    return run_static(instance, "fifo", params, sink, progress)


def run_scf(instance: Instance, params: StaticParams, sink: RateSink, *,
           seed: Any = None, progress: Any = None) -> Outcome:
    """Shortest-coflow-first: smallest length (largest flow volume) first."""
    return run_static(instance, "scf", params, sink, progress)


def run_ncf(instance: Instance, params: StaticParams, sink: RateSink, *,
           seed: Any = None, progress: Any = None) -> Outcome:
    """Narrowest-coflow-first: fewest flows first."""
    return run_static(instance, "ncf", params, sink, progress)


def run_lcf(instance: Instance, params: StaticParams, sink: RateSink, *,
           seed: Any = None, progress: Any = None) -> Outcome:
    """Lightest-coflow-first: smallest total volume ``V_j`` first."""
    return run_static(instance, "lcf", params, sink, progress)

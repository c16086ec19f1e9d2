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
from coflowopt.schedule import Schedule
from coflowopt.sim.drive import StaticOrderPolicy, run_policy
from coflowopt.validate import Tolerance, ValidSchedule

__all__ = ["StaticParams", "run_fifo", "run_lcf", "run_ncf", "run_scf", "run_static"]


@dataclass(frozen=True)
class StaticParams(Params):
    """``allocation``: ``greedy`` (order-preserving) or ``madd`` (reference engine);
    ``split``: the intra-coflow rule; ``engine``."""

    allocation: Literal["greedy", "madd"] = "greedy"
    split: Literal["ordered", "equal"] = "ordered"
    engine: Literal["fast", "reference"] = "fast"


def run_static(instance: Instance, name: str, params: StaticParams,
               check: Tolerance | None = None, progress: Any = None
               ) -> Schedule | ValidSchedule:
    """The static order ``name`` (a key of :data:`~coflowopt.orders.STATIC_KEYS`); ties by
    admission time, then position."""
    p = params
    policy = StaticOrderPolicy(STATIC_KEYS[name], p.allocation, p.split)
    meta = {"scheduler": name, "params": {"allocation": p.allocation, "split": p.split}}
    return run_policy(instance, policy, engine=p.engine, check=check, meta=meta,
                      progress=progress)


def run_fifo(instance: Instance, params: StaticParams, *, seed: Any = None,
             check: Tolerance | None = None, progress: Any = None
             ) -> Schedule | ValidSchedule:
    """FIFO by admission time (ties by position)."""
    return run_static(instance, "fifo", params, check, progress)


def run_scf(instance: Instance, params: StaticParams, *, seed: Any = None,
            check: Tolerance | None = None, progress: Any = None
             ) -> Schedule | ValidSchedule:
    """Shortest-coflow-first: smallest length (largest flow volume) first."""
    return run_static(instance, "scf", params, check, progress)


def run_ncf(instance: Instance, params: StaticParams, *, seed: Any = None,
            check: Tolerance | None = None, progress: Any = None
             ) -> Schedule | ValidSchedule:
    """Narrowest-coflow-first: fewest flows first."""
    return run_static(instance, "ncf", params, check, progress)


def run_lcf(instance: Instance, params: StaticParams, *, seed: Any = None,
            check: Tolerance | None = None, progress: Any = None
             ) -> Schedule | ValidSchedule:
    """Lightest-coflow-first: smallest total volume ``V_j`` first."""
    return run_static(instance, "lcf", params, check, progress)

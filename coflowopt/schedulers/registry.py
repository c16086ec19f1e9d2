"""The scheduler registry: names to algorithms, for the CLI, the bench and the proofs checks.

Every algorithm follows one calling convention, ``algorithm(instance, *, seed=None, **params)
-> Schedule``, and is registered with what a researcher needs to pick it: its kind, whether it
is clairvoyant (knows flow volumes), and its proven approximation factor, if any.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from coflowopt.model import Instance
from coflowopt.schedule import Schedule

__all__ = ["Algorithm", "SchedulerInfo", "get", "register", "registry"]


class Algorithm(Protocol):
    def __call__(self, instance: Instance, *, seed: Any = None, **params: Any) -> Schedule: ...


@dataclass(frozen=True)
class SchedulerInfo:
    """A registered algorithm.

    ``kind``: ``offline`` (all coflows known at the start), ``online`` (sees coflows at their
    release), or ``exact`` (an optimum from a solver).  ``factor``: the proven approximation
    factor as the paper states it (``None`` when there is none), with ``objective`` naming
    what it bounds.
    """

    name: str
    func: Callable[..., Schedule]
    kind: str
    clairvoyant: bool
    factor: str | None
    objective: str
    summary: str
    multistage: bool = False

    def __call__(self, instance: Instance, *, seed: Any = None, **params: Any) -> Schedule:
        sched = self.func(instance, seed=seed, **params)
        sched.meta.setdefault("scheduler", self.name)
        return sched


_REGISTRY: dict[str, SchedulerInfo] = {}


def register(name: str, *, kind: str, clairvoyant: bool, factor: str | None = None,
             objective: str = "sum of weighted CCT", summary: str = "",
             multistage: bool = False) -> Callable[[Callable[..., Schedule]],
                                                   Callable[..., Schedule]]:
    """Decorator: add an algorithm to the registry under ``name``."""
    if kind not in ("offline", "online", "exact"):
        raise ValueError(f"register({name!r}): kind must be offline, online or exact")

    def deco(func: Callable[..., Schedule]) -> Callable[..., Schedule]:
        if name in _REGISTRY:
            raise ValueError(f"scheduler {name!r} registered twice")
        doc = (func.__doc__ or "").strip().splitlines()
        _REGISTRY[name] = SchedulerInfo(name, func, kind, clairvoyant, factor, objective,
                                        summary or (doc[0] if doc else ""), multistage)
        return func

    return deco


def registry() -> dict[str, SchedulerInfo]:
    """All registered algorithms by name (a copy)."""
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> SchedulerInfo:
    """The algorithm registered as ``name``; ``KeyError`` lists the known names."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise KeyError(f"unknown scheduler {name!r}; known: {known}") from None

"""Scheduling algorithms by family, and the one registry that names them.

Families (one folder each, one module per algorithm named by its paper name):
``single/`` (Varys, Sincronia, Aalo, A-SEBF, the static orders, per-flow fair sharing), and,
as they land, ``dag/``, ``fair/`` and ``learned/``; ``baselines`` holds ``sequential``.
Nothing here is imported until it runs: :func:`get` returns a registry entry whose
implementation loads on first use.
"""

from coflowopt.schedulers.registry import (
    Algorithm,
    NoFeasibleSchedule,
    SchedulerInfo,
    SolverStopped,
    UnsupportedInstance,
    get,
    register,
    registry,
)

__all__ = ["Algorithm", "NoFeasibleSchedule", "SchedulerInfo", "SolverStopped",
           "UnsupportedInstance", "get", "register", "registry", "sequential"]


def __getattr__(name: str) -> SchedulerInfo:
    # ``sequential``: the baseline as a callable, ``sequential(instance, *, order=None)``,
    # looked up when first asked for rather than at import (PEP 562)
    if name == "sequential":
        return get("sequential")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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

#: The ``sequential`` baseline as a callable: ``sequential(instance, *, order=None)``.
sequential = get("sequential")

__all__ = ["Algorithm", "NoFeasibleSchedule", "SchedulerInfo", "SolverStopped",
           "UnsupportedInstance", "get", "register", "registry", "sequential"]

"""Scheduling algorithms and their registry.

Importing this package registers every algorithm of the toolkit: the baselines here and the
simulator policies of :mod:`coflowopt.sim.policies`.
"""

from coflowopt.schedulers import baselines
from coflowopt.schedulers.baselines import sequential
from coflowopt.schedulers.registry import Algorithm, SchedulerInfo, get, register, registry
from coflowopt.sim import policies as _policies  # noqa: F401  (registers the policies)

__all__ = ["Algorithm", "SchedulerInfo", "baselines", "get", "register", "registry", "sequential"]

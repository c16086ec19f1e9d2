"""Scheduling algorithms and their registry."""

from coflowopt.schedulers import baselines
from coflowopt.schedulers.baselines import sequential
from coflowopt.schedulers.registry import Algorithm, SchedulerInfo, get, register, registry

__all__ = ["Algorithm", "SchedulerInfo", "baselines", "get", "register", "registry", "sequential"]

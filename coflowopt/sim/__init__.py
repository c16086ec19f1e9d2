"""The engines: the event-driven fluid simulator (reference and compiled), the shared
allocators, the order-to-schedule mechanism, and the CoflowSim-semantics mode.

Algorithms live in :mod:`coflowopt.schedulers`; nothing here imports them.
"""

from coflowopt.sim import allocate, coflowsim, drive, policy
from coflowopt.sim.drive import (
    ENGINES,
    KeyPolicy,
    OrderPolicy,
    StaticOrderPolicy,
    order_schedule,
    run_policy,
)
from coflowopt.sim.engine import Policy, SimulationError, SimView, simulate
from coflowopt.sim.policy import EngineView, PolicyState, compiled_key

__all__ = ["ENGINES", "EngineView", "KeyPolicy", "OrderPolicy", "Policy", "PolicyState",
           "SimView", "SimulationError", "StaticOrderPolicy", "allocate", "coflowsim",
           "compiled_key", "drive", "order_schedule", "policy", "run_policy", "simulate"]

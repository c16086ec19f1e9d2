"""The event-driven fluid simulator, the shared allocators, and the single-stage policies."""

from coflowopt.sim import allocate, coflowsim, orders, policies
from coflowopt.sim.engine import Policy, SimulationError, SimView, simulate

__all__ = ["Policy", "SimView", "SimulationError", "allocate", "coflowsim", "orders",
           "policies", "simulate"]

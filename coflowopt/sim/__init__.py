"""The event-driven fluid simulator, the shared allocators, and the single-stage policies."""

from coflowopt.sim import allocate, coflowsim, orders, policies
from coflowopt.sim.engine import Policy, SimulationError, SimView, simulate
from coflowopt.sim.policies import simulate_validated

__all__ = ["Policy", "SimView", "SimulationError", "allocate", "coflowsim", "orders",
           "policies", "simulate", "simulate_validated"]

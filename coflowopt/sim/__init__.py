"""The engines: the event-driven fluid simulator (reference and compiled), the shared
allocators, the order-to-schedule mechanism, and the CoflowSim-semantics mode.

Algorithms live in :mod:`coflowopt.schedulers`; nothing here imports them.
"""

from coflowopt.sim import allocate, coflowsim, drive
from coflowopt.sim.drive import ENGINES, OrderPolicy, StaticOrderPolicy, order_schedule, run_policy
from coflowopt.sim.engine import Policy, SimulationError, SimView, simulate

__all__ = ["ENGINES", "OrderPolicy", "Policy", "SimView", "SimulationError", "StaticOrderPolicy",
           "allocate", "coflowsim", "drive", "order_schedule", "run_policy", "simulate"]

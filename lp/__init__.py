"""Exact formulations of coflow scheduling (imported as ``coflowopt.lp``).

One container, :class:`LinearProgram` (cost, sparse matrix, row/column bounds, integrality,
names), written once per formulation as arrays and solved by :func:`solve` on HiGHS (default),
scipy or PuLP; every solve returns a :class:`SolveResult` (status, objective, bound, gap,
runtime, solution).  Formulations:

- time-indexed (slotted) weighted-CCT MILP and PS(E): :func:`time_indexed_model`,
  :func:`ps_model`; SPS: :func:`sps_model`; a fluid LP lower bound:
  :func:`time_indexed_lower_bound`;
- slowdown feasibility LP and the bisection for ``E*``: :func:`slowdown_feasibility`,
  :func:`min_slowdown`, and the MPS closed form :func:`mps`;
- ordering LPs: :func:`ordering_lp` (single stage), :func:`job_ordering_lp` (multi-stage LP (3)
  by separation), :func:`tian_lp` (the ``O(m)`` baseline), and the primal-dual orders
  :func:`bssi_order`, :func:`primal_dual_job_order`;
- interval-indexed LP (geometric intervals) for weighted CCT / JCT at trace scale:
  :func:`interval_lp`, :func:`interval_lower_bound`, :func:`geometric_grid`;
- certified lower bounds from any dual vector (PDLP, early-stopped solves):
  :func:`certified_solve`, :func:`lagrangian_bound`;
- the exact fluid optimum of tiny instances: :func:`fluid_optimum`; the best lower bound:
  :func:`best_lower_bound`.

Which number bounds what is stated in each docstring: a slotted MILP optimum is an *upper*
bound on the true (fluid) optimum; the LPs are *lower* bounds; relaxations carry no schedule.
"""

from .backends import BACKENDS, pulp_problem, solve
from .bounds import LowerBound, best_lower_bound
from .certify import PDLP, CertifiedBound, certified_solve, lagrangian_bound
from .fluid import fluid_optimum, order_lp
from .interval import (
    IntervalBound,
    IntervalParams,
    geometric_grid,
    interval_lower_bound,
    interval_lp,
)
from .model import (
    Block,
    LinearProgram,
    LPDataError,
    ModelBuilder,
    SolveParams,
    SolveResult,
    Status,
)
from .ordering import (
    BSSIResult,
    JobOrderResult,
    LPBound,
    bssi_order,
    coflow_port_loads,
    job_ordering_lp,
    job_port_loads,
    order_cost,
    ordering_lp,
    primal_dual_job_order,
    tian_lp,
)
from .progress import StaticProgress, ps_model, sps_model, static_progress
from .slowdown import (
    FeasibilityResult,
    MPSResult,
    SlowdownResult,
    min_slowdown,
    mps,
    slowdown_feasibility,
    slowdown_lp,
)
from .timeindexed import (
    OBJECTIVES,
    ExactSolution,
    ModelTooLarge,
    TimeIndexedModel,
    TimeIndexedParams,
    deadlines,
    slot_horizon,
    solve_time_indexed,
    time_indexed_lower_bound,
    time_indexed_model,
)

__all__ = [
    "BACKENDS",
    "OBJECTIVES",
    "PDLP",
    "BSSIResult",
    "Block",
    "CertifiedBound",
    "ExactSolution",
    "FeasibilityResult",
    "IntervalBound",
    "IntervalParams",
    "JobOrderResult",
    "LPBound",
    "LPDataError",
    "LinearProgram",
    "LowerBound",
    "MPSResult",
    "ModelBuilder",
    "ModelTooLarge",
    "SlowdownResult",
    "SolveParams",
    "SolveResult",
    "StaticProgress",
    "Status",
    "TimeIndexedModel",
    "TimeIndexedParams",
    "best_lower_bound",
    "bssi_order",
    "certified_solve",
    "coflow_port_loads",
    "deadlines",
    "fluid_optimum",
    "geometric_grid",
    "interval_lower_bound",
    "interval_lp",
    "job_ordering_lp",
    "job_port_loads",
    "lagrangian_bound",
    "min_slowdown",
    "mps",
    "order_cost",
    "order_lp",
    "ordering_lp",
    "primal_dual_job_order",
    "ps_model",
    "pulp_problem",
    "slot_horizon",
    "slowdown_feasibility",
    "slowdown_lp",
    "solve",
    "solve_time_indexed",
    "sps_model",
    "static_progress",
    "tian_lp",
    "time_indexed_lower_bound",
    "time_indexed_model",
]

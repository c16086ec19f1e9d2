"""Proofs checks (imported as ``coflowopt.proofs_check``; run by ``coflowopt verify``).

Each check takes small seeded instances, computes an exact reference (the fluid optimum by
order enumeration, a slotted MILP, brute force, or an LP bound, and says which), runs the
algorithm or formulation, validates every schedule, and reports the worst and mean ratio next
to the proven factor.  A ratio above its bound fails the check and prints the instance.
"""

from .reference import EXACT, LB, SLOT, exact_optimum, factor_trial, objective_of, run_validated
from .registry import (
    Check,
    CheckReport,
    Trial,
    all_checks,
    get_check,
    register_check,
    register_family,
)
from .runner import format_failures, format_table, instance_of, load, run_checks, run_trial

__all__ = [
    "EXACT",
    "LB",
    "SLOT",
    "Check",
    "CheckReport",
    "Trial",
    "all_checks",
    "exact_optimum",
    "factor_trial",
    "format_failures",
    "format_table",
    "get_check",
    "instance_of",
    "load",
    "objective_of",
    "register_check",
    "register_family",
    "run_checks",
    "run_trial",
    "run_validated",
]

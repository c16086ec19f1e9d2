"""Proofs checks (imported as ``coflowopt.proofs_check``; run by ``coflowopt verify``).

Each check takes small seeded instances, computes an exact reference (the fluid optimum by
order enumeration, a slotted MILP, brute force, or an LP bound, and says which), runs the
algorithm or formulation, validates every schedule, and reports the worst and mean ratio next
to the proven factor.  A ratio above its bound fails the check and prints the instance.
"""

from __future__ import annotations

import importlib
from typing import Any

# the names load on first use (PEP 562): ``coflowopt <command>`` imports this package to add
# ``verify`` to its parser, and the LP layer the checks need costs every command 0.2 s
_HOME = {
    **dict.fromkeys(("EXACT", "LB", "SLOT", "exact_optimum", "factor_trial", "objective_of",
                     "run_validated"), "reference"),
    **dict.fromkeys(("Check", "CheckReport", "Trial", "all_checks", "get_check",
                     "register_check", "register_family"), "registry"),
    **dict.fromkeys(("NO_CONSTANT", "format_failures", "format_sizes", "format_table",
                     "instance_of", "load", "run_checks", "run_trial"), "runner"),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


__all__ = [
    "EXACT",
    "LB",
    "NO_CONSTANT",
    "SLOT",
    "Check",
    "CheckReport",
    "Trial",
    "all_checks",
    "exact_optimum",
    "factor_trial",
    "format_failures",
    "format_sizes",
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

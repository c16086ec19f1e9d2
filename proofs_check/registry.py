"""Checks of proven guarantees, and their registry.

A :class:`Check` pairs a seeded instance generator with an ``evaluate`` function that runs the
algorithm (or formulation) on one instance, validates every schedule, computes the reference
value, and returns a :class:`Trial`: pass / fail / inconclusive, the ratio and *which bound the
ratio uses*.  Checks plug in with :func:`register_check`; a check whose ``requires`` names a
scheduler that is not (yet) in :func:`coflowopt.schedulers.registry` is skipped with a reason,
so a check written today runs as soon as the algorithm registers itself.

:func:`register_family` adds a function that makes checks from the current scheduler registry
(one check per registered algorithm, e.g. the lower-bound sanity check).

Two kinds.  A ``"bound"`` check asserts ``ALG <= factor x reference`` and passes or fails.  A
``"report"`` check is for an ``O(.)`` result without a constant: it fails only on a broken
sanity invariant (an invalid schedule, a value below a lower bound or above a bound the
algorithm meets by construction); otherwise it is ``reported``, never ``passed``, and shows
``ratio / f`` (``f`` the stated function, e.g. ``mu g(m)``) by instance size.
``factor_source`` tags the factor: ``"R"`` recovered from the paper, ``"C"`` our
reconstruction (the factor, or the bound it is checked against).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coflowopt.model import Instance

__all__ = [
    "Check",
    "CheckReport",
    "Trial",
    "all_checks",
    "get_check",
    "register_check",
    "register_family",
]

KINDS = ("bound", "report")
SOURCES = ("R", "C")
#: keys of :attr:`Trial.values` a report check fills: the ratio divided by the stated function,
#: and the size it is grouped by
SCALED, SIZE_M, SIZE_MU = "ratio_over_f", "m", "mu"

Evaluate = Callable[[Instance, Mapping[str, Any]], "Trial"]
Generate = Callable[[np.random.Generator, int], Instance]


@dataclass
class Trial:
    """One instance of one check.

    ``ok``: ``True`` pass, ``False`` fail (the guarantee is violated, or a schedule is invalid),
    ``None`` inconclusive (e.g. the ratio against the LP lower bound exceeds the factor but
    only a slotted upper bound on the optimum is available).  ``ratio``: the measured ratio and
    ``reference`` the value it divides by (``"OPT (fluid, exact)"``, ``"LP lower bound"``,
    ``"OPT_slot (slotted MILP, >= OPT)"``, ...).  ``limit``: the bound the ratio must respect
    (the factor; may depend on the instance).  ``skipped``: a reason when the trial could not
    run at all (an algorithm that does not support the instance).
    """

    ok: bool | None
    ratio: float | None = None
    reference: str = ""
    limit: float | None = None
    message: str = ""
    values: dict[str, float] = field(default_factory=dict)
    skipped: str | None = None


@dataclass(frozen=True)
class Check:
    """A registered check (see the module docstring)."""

    name: str
    evaluate: Evaluate
    instances: Generate
    quick: int
    full: int
    factor: str = "-"
    objective: str = ""
    requires: tuple[str, ...] = ()
    theorem: str = ""
    description: str = ""
    kind: str = "bound"
    factor_source: str = "R"
    function: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"check {self.name!r}: kind must be one of {KINDS}")
        if self.factor_source not in SOURCES:
            raise ValueError(f"check {self.name!r}: factor_source must be one of {SOURCES}")

    @property
    def factor_label(self) -> str:
        """The factor with its provenance tag (``"3 [C]"``); ``"-"`` when there is none."""
        from coflowopt.schedulers.registry import factor_label

        return factor_label(self.factor, self.factor_source)

    def count(self, quick: bool) -> int:
        return self.quick if quick else self.full

    def missing(self) -> list[str]:
        """Required schedulers not in the registry."""
        from coflowopt.schedulers import registry

        reg = registry()
        return [r for r in self.requires if r not in reg]


@dataclass
class CheckReport:
    """The outcome of one check over its instances.

    ``status``: ``passed`` (no failure), ``failed`` (at least one), ``skipped`` (``reason``),
    or for a ``report`` check ``reported`` (no sanity failure; there is no constant to pass).
    ``worst``/``mean``: worst and mean ratio over the trials that have one (a report check:
    of ``ratio / f``), ``references``: how many ratios used each reference.  ``by_size``: a
    report check's ``(m, mu) -> (count, max, mean)`` of ``ratio / f``.  ``failures``:
    ``(index, message, instance JSON)``.  ``runtime``: seconds spent on the check's instances
    (summed over workers with ``jobs > 1``).
    """

    name: str
    status: str
    factor: str
    objective: str
    n: int = 0
    passed: int = 0
    failed: int = 0
    inconclusive: int = 0
    skipped_trials: int = 0
    worst: float = float("nan")
    mean: float = float("nan")
    references: dict[str, int] = field(default_factory=dict)
    runtime: float = 0.0
    reason: str = ""
    failures: list[tuple[int, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kind: str = "bound"
    factor_source: str = "R"
    function: str = ""
    by_size: dict[tuple[int, int], tuple[int, float, float]] = field(default_factory=dict)

    @property
    def factor_label(self) -> str:
        from coflowopt.schedulers.registry import factor_label

        return factor_label(self.factor, self.factor_source)


_CHECKS: dict[str, Check] = {}
_FAMILIES: list[Callable[[Mapping[str, Any]], list[Check]]] = []


def register_check(name: str, *, instances: Generate, quick: int = 20, full: int = 100,
                   factor: str = "-", objective: str = "", requires: tuple[str, ...] = (),
                   theorem: str = "", description: str = "", kind: str = "bound",
                   factor_source: str = "R", function: str = ""
                   ) -> Callable[[Evaluate], Evaluate]:
    """Decorator: register ``evaluate(instance, algorithms) -> Trial`` as check ``name``.

    ``algorithms`` maps each name in ``requires`` to the registered scheduler (tests may pass
    their own).  ``instances(rng, index)`` makes instance ``index`` from a seeded generator.
    ``kind``, ``factor_source``: see the module docstring; ``function``: a report check's
    stated function (``"mu g(m)"``), its trials put ``ratio / f`` in ``values[SCALED]``.
    """

    def deco(func: Evaluate) -> Evaluate:
        if name in _CHECKS:
            raise ValueError(f"check {name!r} registered twice")
        doc = (func.__doc__ or "").strip().splitlines()
        _CHECKS[name] = Check(name, func, instances, quick, full, factor, objective,
                              tuple(requires), theorem, description or (doc[0] if doc else ""),
                              kind, factor_source, function)
        return func

    return deco


def register_family(make: Callable[[Mapping[str, Any]], list[Check]]
                    ) -> Callable[[Mapping[str, Any]], list[Check]]:
    """Decorator: ``make(scheduler_registry) -> [Check, ...]`` is called whenever the checks
    are listed, so a family grows with the scheduler registry."""
    _FAMILIES.append(make)
    return make


def all_checks() -> dict[str, Check]:
    """Every check by name: the registered ones, then the families' (in registration order)."""
    from coflowopt.schedulers import registry

    out = dict(_CHECKS)
    reg = registry()
    for make in _FAMILIES:
        for chk in make(reg):
            out.setdefault(chk.name, chk)
    return out


def get_check(name: str) -> Check:
    checks = all_checks()
    try:
        return checks[name]
    except KeyError:
        raise KeyError(f"unknown check {name!r}; known: {', '.join(checks)}") from None

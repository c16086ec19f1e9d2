"""Where a scheduler's rates go: the one sink every scheduler writes to, and the one outcome it
returns.

The run service (:func:`coflowopt.run`) decides whether a run's rate changes are stored as a
:class:`~coflowopt.Schedule` or streamed into the validator as the engine produces them (the
schedule is then never held in memory); a scheduler only passes the :class:`RateSink` it was
handed to the engine that produces its rates, and returns that engine's output through
:meth:`RateSink.outcome`.  So no scheduler chooses a tolerance or returns a validated schedule
itself, and every scheduler has one signature::

    impl(instance, params, sink, *, seed=None, progress=None) -> Outcome

A streaming sink is a request, not an order: an engine that cannot stream (the reference engine,
an LP's stored plan) stores its schedule, and the service validates it afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.validate import Tolerance, ValidSchedule, validate

__all__ = ["Outcome", "RateSink"]


@dataclass(frozen=True)
class RateSink:
    """Stream the rate changes into the validator with ``tolerance`` (``stream=True``), or
    store them (``stream=False``, the default).  ``tolerance`` is the validator's; the run
    service fills it in."""

    stream: bool = False
    tolerance: Tolerance | None = None

    @classmethod
    def store(cls) -> RateSink:
        """Store the schedule (what a direct call of a scheduler returns)."""
        return cls(False, None)

    @classmethod
    def streaming(cls, tolerance: Tolerance | None = None) -> RateSink:
        """Stream into the validator with ``tolerance`` (default: :class:`~coflowopt.Tolerance`)."""
        return cls(True, tolerance or Tolerance())

    @property
    def check(self) -> Tolerance | None:
        """What the engines take: the validator's tolerance when streaming, else ``None``."""
        return (self.tolerance or Tolerance()) if self.stream else None

    def validated(self, instance: Instance, out: Outcome) -> ValidSchedule:
        """``out`` validated: the streamed validation as it is, a stored schedule validated now
        (with the outcome's tolerance, else this sink's; raises
        :class:`~coflowopt.InfeasibleSchedule`).  For a scheduler whose own metadata needs the
        validated times (CoFair's realised slowdown)."""
        if out.valid is not None:
            return out.valid
        return validate(out.instance or instance, out.schedule,
                        out.tolerance or self.tolerance or Tolerance())

    def outcome(self, out: Schedule | ValidSchedule | Outcome, *,
                instance: Instance | None = None, tolerance: Tolerance | None = None,
                meta: dict[str, Any] | None = None) -> Outcome:
        """Wrap an engine's output (a stored schedule or the streamed validation) as the
        scheduler's :class:`Outcome`; ``instance`` and ``tolerance`` when the rates are of a
        transformed instance or need the semantics' own tolerance (CoflowSim); ``meta`` is
        merged into the output's ``meta``."""
        if isinstance(out, Outcome):
            return out.with_meta(meta)
        if meta:
            out.meta.update(meta)
        if isinstance(out, ValidSchedule):
            return Outcome(None, out, instance, tolerance)
        return Outcome(out, None, instance, tolerance)


@dataclass(frozen=True, eq=False)
class Outcome:
    """What every scheduler returns: its rates, either stored (``schedule``) or already streamed
    through the validator (``valid``); exactly one of the two is set.  ``instance``: the
    instance the rates are of when it is not the one given (CoflowSim's rounded instance),
    else ``None``; ``tolerance``: the tolerance the semantics validate with, when it is not the
    caller's (CoflowSim's finishing rule)."""

    schedule: Schedule | None
    valid: ValidSchedule | None
    instance: Instance | None = None
    tolerance: Tolerance | None = None

    def __post_init__(self) -> None:
        if (self.schedule is None) == (self.valid is None):
            raise ValueError("Outcome: exactly one of schedule and valid must be set")

    @property
    def streamed(self) -> bool:
        """The rates went through the validator as they were produced."""
        return self.valid is not None

    @property
    def meta(self) -> dict[str, Any]:
        """The run's metadata (the schedule's, or the streamed validation's)."""
        return self.valid.meta if self.valid is not None else self.schedule.meta

    def with_meta(self, meta: dict[str, Any] | None) -> Outcome:
        """This outcome with ``meta`` merged into its metadata."""
        if meta:
            self.meta.update(meta)
        return self

"""The run service: run a registered scheduler and validate what it produces, in one call.

:func:`run` is the one path from a scheduler to a validated result: ``coflowopt run``, the
bench worker, the proof checks and the notebooks all go through it.  It checks the parameters
and refuses an unsupported instance before any work, streams the validation wherever a kernel
can (the schedule is then never stored, so memory stays proportional to flows and ports), and
stores a schedule only when asked (``keep_schedule=True``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coflowopt.model import Instance
from coflowopt.schedule import Schedule
from coflowopt.schedulers.registry import SchedulerInfo, get
from coflowopt.sim.sink import RateSink
from coflowopt.validate import Tolerance, ValidSchedule

__all__ = ["RunResult", "run"]

_COUNTERS = ("events", "recomputations", "cascade_visits", "rate_changes", "engine",
             "pair_visits", "fill_visits", "recompute_flows", "recompute_heads",
             "recompute_linked")


@dataclass(frozen=True)
class RunResult:
    """A validated run of one scheduler.

    ``valid``: the :class:`~coflowopt.ValidSchedule` (the only input the metrics accept; its
    ``schedule`` is ``None`` when the run was streamed); ``instance``: the instance that was
    scheduled (for CoflowSim semantics the rounded instance with releases at the admission
    epochs, on which CCTs are measured); ``params``: the checked parameter dataclass;
    ``simulate_seconds`` / ``validate_seconds``: wall seconds of the scheduler and of the
    validation (a streamed run validates as it simulates: everything is in
    ``simulate_seconds`` and ``validate_seconds`` is 0); ``cpu_seconds``: process CPU time of
    both; ``counters``: the kernel's counters (events, full recomputations, cascade visits,
    rate changes, engine).
    """

    scheduler: str
    semantics: str
    params: Any
    seed: Any
    valid: ValidSchedule
    instance: Instance
    simulate_seconds: float
    validate_seconds: float
    cpu_seconds: float
    streamed: bool
    counters: dict[str, Any] = field(default_factory=dict)

    @property
    def schedule(self) -> Schedule | None:
        """The stored schedule (``None`` when streamed)."""
        return self.valid.schedule

    def summary(self) -> dict[str, float]:
        """:func:`coflowopt.metrics.summary` of the validated schedule."""
        from coflowopt import metrics

        return metrics.summary(self.valid)


def run(instance: Instance, scheduler: str | SchedulerInfo, *, params: Any = None,
        seed: Any = None, semantics: str = "fluid", tol: Tolerance | None = None,
        keep_schedule: bool = False, progress: Callable[[float, float], Any] | None = None
        ) -> RunResult:
    """Run ``scheduler`` (a registry name of ``semantics``, or an entry) on ``instance`` and
    validate its schedule.

    ``params``: a mapping or the scheduler's parameter dataclass (unknown or ill-typed fields
    raise :class:`~coflowopt.params.ParamsError` naming them); an instance the scheduler does
    not support raises :class:`~coflowopt.schedulers.UnsupportedInstance` with a one-line
    reason; both before any work.  ``seed``: the scheduler's seed (numpy ``Generator`` seed).
    ``tol``: the validator's tolerances (CoflowSim semantics use the mode's own).  An
    infeasible schedule raises :class:`~coflowopt.InfeasibleSchedule` naming the first
    violation.  ``progress(done, total)``: called as the run advances (the compiled kernels:
    simulated time against an estimate of the horizon, from the waiting thread).  Ctrl-C
    stops a compiled run within a fraction of a second and raises ``KeyboardInterrupt``; the
    first call of a kernel that has to compile says so on stderr.
    """
    info = scheduler if isinstance(scheduler, SchedulerInfo) else get(scheduler, semantics)
    p = info.make_params(params)
    info.check_supports(instance)
    c0, t0 = time.process_time(), time.perf_counter()
    # CoflowSim semantics validate with the mode's own tolerance (its finishing rule) unless
    # the caller gives one: the sink then carries none and the outcome names the mode's
    sink = RateSink(info.streams and not keep_schedule,
                    (tol or Tolerance()) if info.semantics == "fluid" else tol)
    out = info.impl(instance, p, sink, seed=seed, progress=progress)
    t1 = time.perf_counter()
    inst = out.instance or instance
    streamed = out.streamed
    out.meta.setdefault("scheduler", info.name)
    valid = sink.validated(instance, out)  # as it streamed, else the stored schedule now
    meta = dict(out.meta)
    t2 = time.perf_counter()
    counters = {k: meta[k] for k in _COUNTERS if k in meta}
    if "rate_changes" not in counters and valid.schedule is not None:
        counters["segments"] = int(valid.schedule.n_segments)
    return RunResult(info.name, info.semantics, p, seed, valid, inst,
                     simulate_seconds=(t2 if streamed else t1) - t0,
                     validate_seconds=0.0 if streamed else t2 - t1,
                     cpu_seconds=time.process_time() - c0, streamed=streamed,
                     counters=counters)

"""A suite expanded into tasks: one (workload, seed, scheduler) each, with a stable key.

The key is a hash of what determines the result (the workload's name, generator and
parameters, the scheduler's label, name and parameters, and the seed), so a rerun recognises a
finished task, and a changed parameter makes a new task.  Time limits and the executor are not
part of it.

Seeds: the workload generator gets ``seed`` itself (so the instance equals, e.g.,
``synthetic_trace(n, seed=seed)``), the algorithm gets :func:`algorithm_seed` ``(seed)``, an
independent stream derived with :class:`numpy.random.SeedSequence`.  A scheduler with
``algorithm_seeds = n`` runs ``n`` times on the same instance, run ``k`` with
``algorithm_seed(seed, k)`` (run 0 is the usual task, with the usual key).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from coflowopt.bench.suite import SchedulerSpec, Suite, WorkloadSpec

__all__ = ["Task", "algorithm_seed", "expand", "task_key"]

KEY_VERSION = 1


def algorithm_seed(seed: int, run: int = 0) -> int:
    """The algorithm's seed for suite seed ``seed`` and run ``run`` of that instance: the first
    32-bit word of ``SeedSequence(seed).spawn(run + 1)[run]`` (run 0: ``spawn(1)[0]``, the
    seed every task had before runs existed)."""
    child = np.random.SeedSequence(seed).spawn(run + 1)[run]
    return int(child.generate_state(1, dtype=np.uint32)[0])


def task_key(workload: WorkloadSpec, scheduler: SchedulerSpec, seed: int, run: int = 0) -> str:
    """16 hex digits of the SHA-256 of the task's canonical JSON (``run`` enters it only when
    it is not 0, so run 0 keeps the key of a one-run task)."""
    doc = {
        "v": KEY_VERSION,
        "workload": {"name": workload.name, "generator": workload.generator,
                     "params": workload.params},
        "scheduler": {"label": scheduler.label, "name": scheduler.name,
                      "params": scheduler.params},
        "seed": int(seed),
    }
    if scheduler.semantics != "fluid":  # keys of fluid tasks stay as they were
        doc["scheduler"]["semantics"] = scheduler.semantics
    if run:
        doc["run"] = int(run)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Task:
    """One unit of work, small and picklable, sent to an executor."""

    key: str
    suite: str
    workload: WorkloadSpec
    scheduler: SchedulerSpec
    seed: int
    timeout: float | None = None
    isolate: bool = False
    imports: tuple[str, ...] = ()
    base_dir: str = "."
    per_coflow: bool = True
    run: int = 0

    @property
    def algorithm_seed(self) -> int:
        return algorithm_seed(self.seed, self.run)


def expand(suite: Suite) -> list[Task]:
    """All tasks of ``suite``, workload by workload, seed by seed, then scheduler (so that a
    worker often reuses the instance it just built)."""
    out = []
    for w in suite.workloads:
        for seed in suite.seeds_of(w):
            for s in suite.schedulers:
                if not s.runs_on(w.name):
                    continue
                for run in range(s.algorithm_seeds):
                    out.append(Task(
                        key=task_key(w, s, seed, run), suite=suite.name, workload=w,
                        scheduler=s, seed=int(seed),
                        timeout=s.timeout if s.timeout is not None else suite.timeout,
                        isolate=suite.isolate, imports=suite.imports, base_dir=suite.base_dir,
                        per_coflow=suite.per_coflow, run=run,
                    ))
    return out

"""Training instances and heuristic teachers for DeepWeave's imitation and fine-tuning (issue
30; DeepWeave: Sun, Guo, Wang, Li, Lan, Hu, IJCAI 2020; the teachers: Sincronia, Agarwal et
al., SIGCOMM 2018, and G-DM-BF, Shafiee and Ghaderi, ToN 2021).

- :data:`WORKLOADS`: the three workloads of the held-out grid (``docs/deepweave-protocol.md``,
  ``benchmarks/deepweave_eval.toml``), by name, as generator calls.
- :func:`training_seeds`: seeded draws of ``(workload, generator seed)`` with generator seeds
  in ``[SEED_LOW, 2**31)``, disjoint from the held-out seeds 10000-10999 by construction.
- :func:`demonstration`: both teachers run on the decision-epoch stepper (the policy's own
  environment, :func:`coflowopt.training.episodes.rollout` with ``teacher=``); the better
  one's (lower average JCT) ready-coflow orders, at a sample of its decision epochs, are the
  imitation target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedulers.learned.network import DeepWeaveConfig
from coflowopt.training.episodes import TEACHER_COLUMN, rollout

__all__ = ["HELD_OUT", "SEED_LOW", "WORKLOADS", "check_workloads", "demonstration",
           "make_instance", "training_seeds"]

#: The protocol's workloads: name -> (generator, parameters).
WORKLOADS: dict[str, tuple[str, dict[str, Any]]] = {
    "tpcds-10": ("tpcds_like", {"n_jobs": 10, "ports": 10, "critical_path": (4, 7)}),
    "ggen-30-20ports": ("ggen_fan_in_fan_out", {"n_jobs": 30, "ports": 20, "nodes": (4, 64)}),
    "tpcds-30-arriving": ("tpcds_like", {"n_jobs": 30, "ports": 10, "critical_path": (4, 7),
                                         "arrival_rate": 1e-4}),
}
#: Held-out generator seeds (the grid uses 10000-10009; the whole block is reserved).
HELD_OUT = range(10_000, 11_000)
#: Training generator seeds are drawn from ``[SEED_LOW, 2**31)``.
SEED_LOW = 100_000


def check_workloads(where: str, workloads: Sequence[str]) -> None:
    """A :class:`ValueError` naming ``where`` for an empty list or an unknown name."""
    bad = [w for w in workloads if w not in WORKLOADS]
    if bad or not workloads:
        raise ValueError(f"{where}: unknown {bad!r}; known: {', '.join(WORKLOADS)}")


def make_instance(workload: str, seed: int) -> Instance:
    """The instance of ``workload`` (a :data:`WORKLOADS` name) for generator ``seed``."""
    from coflowopt.workloads import dags

    if workload not in WORKLOADS:
        raise ValueError(f"workload: must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    gen, kw = WORKLOADS[workload]
    return getattr(dags, gen)(seed=int(seed), **kw)


def training_seeds(seed: int, n: int, workloads: Sequence[str] = tuple(WORKLOADS),
                   stream: int = 7) -> list[tuple[str, int]]:
    """``n`` pairs ``(workload, generator seed)``, workloads in turn, generator seeds uniform
    on ``[SEED_LOW, 2**31)`` from ``default_rng([seed, stream])`` (never a held-out seed)."""
    for w in workloads:
        if w not in WORKLOADS:
            raise ValueError(f"workload: must be one of {', '.join(WORKLOADS)}, got {w!r}")
    rng = np.random.default_rng([int(seed), int(stream)])
    gen = rng.integers(SEED_LOW, 2**31, size=n)
    return [(workloads[k % len(workloads)], int(gen[k])) for k in range(n)]


def demonstration(instance: Instance, cfg: DeepWeaveConfig, *, record: int | None = 32,
                  seed: int = 0, teachers: Sequence[str] = tuple(TEACHER_COLUMN)
                  ) -> dict[str, Any]:
    """Run every teacher of ``teachers`` on ``instance`` (full episodes, validated) and keep
    the best one's rollout (lowest average JCT; ties: the first listed): the rollout's
    ``x``, ``orders`` and ``steps`` (at most ``record`` decision epochs, a seeded uniform
    sample), plus ``teacher`` (its name) and ``avg_jct`` (every teacher's, by name)."""
    best: dict[str, Any] | None = None
    avg: dict[str, float] = {}
    for t in teachers:
        r = rollout(instance, None, cfg, steps=None, seed=seed, validate=True, teacher=t,
                    record=record)
        avg[t] = float(r["jct"].mean())
        if best is None or avg[t] < avg[best["teacher"]]:
            best = {**r, "teacher": t}
    assert best is not None
    best["avg_jct"] = avg
    return best

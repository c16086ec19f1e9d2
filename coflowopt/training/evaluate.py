"""Evaluating a policy during training: the greedy policy's mean JCT on a fixed set of
instances, and Sincronia's level on the same set (the reference line of DeepWeave's
learning curve; Sun, Guo, Wang, Li, Lan, Hu, IJCAI 2020, evaluation section, JCT against the
baselines).

Sincronia runs through the run service (:func:`coflowopt.run`, validated): that is why this
lives in the training application and not in the learned family, which imports no
application.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedulers.learned.network import DeepWeaveConfig
from coflowopt.training.episodes import rollouts

__all__ = ["evaluate", "evaluate_each", "sincronia_level"]


def evaluate_each(instances: Sequence[Instance], params: dict[str, np.ndarray],
                  cfg: dict[str, Any]) -> list[float]:
    """The greedy policy's mean JCT on each of ``instances`` (full episodes, validated);
    ``cfg``: the network's settings as a plain dict (picklable to a worker process)."""
    return [float(rollouts(inst, params, cfg, None, [0], True, 1.0, True, False)[0]["jct"]
                  .mean()) for inst in instances]


def evaluate(instances: Sequence[Instance], params: dict[str, np.ndarray],
             cfg: DeepWeaveConfig) -> float:
    """Mean JCT of the greedy policy over ``instances`` (full episodes, validated)."""
    js = evaluate_each(instances, params, cfg.to_dict())
    return float(np.mean(js)) if js else math.nan


def sincronia_level(instances: Sequence[Instance]) -> float:
    """Sincronia's mean JCT over ``instances`` (through :func:`coflowopt.run`, validated)."""
    from coflowopt.service import run

    if not instances:
        return math.nan
    js = []
    for inst in instances:
        v = run(inst, "sincronia").valid
        js.append(float((v.job_completion - inst.job_release).mean()))
    return float(np.mean(js))

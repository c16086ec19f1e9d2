"""One agent's episode with DeepWeave's stochastic policy ``mu_theta`` (Sun, Guo, Wang, Li,
Lan, Hu, IJCAI 2020, Algorithm 1, the agents' step) on the decision-epoch environment of
:mod:`coflowopt.schedulers.learned.env`.

numpy only (the forward pass of :mod:`coflowopt.schedulers.learned.network`): the agents run
in worker processes that never import torch.  ``mu_theta`` [C]: Plackett-Luce over the
ready coflows on the network's priorities, drawn by the Gumbel-max construction; greedy
(sorted) at evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedulers.learned import network
from coflowopt.schedulers.learned.env import DagEpisode, order_to_priority
from coflowopt.schedulers.learned.features import N_FEATURES, DagBatch
from coflowopt.schedulers.learned.network import DeepWeaveConfig

__all__ = ["TEACHER_COLUMN", "rollout", "rollouts"]


def _priorities(params: dict[str, np.ndarray], cfg: DeepWeaveConfig,
                batches: Sequence[DagBatch], n: int) -> np.ndarray:
    p = np.empty(n)
    for b in batches:
        p[b.coflows] = network.forward(params, cfg, b)
    return p


#: Teachers of :func:`rollout`: the v2 feature column whose ascending order is the teacher's
#: order of the ready coflows (:data:`coflowopt.schedulers.learned.features.HEURISTIC_NAMES`).
TEACHER_COLUMN = {"sincronia": N_FEATURES, "gdm-bf": N_FEATURES + 1}


def rollout(instance: Instance, params: dict[str, np.ndarray] | None, cfg: DeepWeaveConfig, *,
            steps: int | None, seed: Any = None, greedy: bool = False, scale: float = 1.0,
            validate: bool = False, teacher: str | None = None, record: int | None = None
            ) -> dict[str, Any]:
    """One agent's episode on ``instance`` for at most ``steps`` decision epochs (``None``:
    to the end) with the policy ``params``: Plackett-Luce draws (Gumbel-max, numpy generator
    ``seed``) or, with ``greedy``, the ready coflows by decreasing priority (ties: lower
    position).  ``teacher`` (``"sincronia"`` or ``"gdm-bf"``, feature set ``"v2"``): follow
    that heuristic's order instead (BSSI on the remaining volumes of the ready coflows, or
    G-DM-BF's rank; :data:`TEACHER_COLUMN`; ``params`` unused).  Returns ``rewards`` ``(S,)``
    (divided by ``scale``), ``orders`` (the ready coflows in the order drawn, per kept step),
    ``x`` (per job, ``(S', V_j, F)`` features of the kept steps; with ``head="attr"`` one
    entry, the whole instance), ``steps`` (their indices),
    ``episode_return`` (unscaled), ``done`` and, with ``validate`` on a finished episode,
    ``jct`` (per job, from the validated schedule).  ``record``: keep the features and
    orders of at most that many steps, a uniform sample (reservoir, generator ``[seed, 1]``)
    so that a long episode's states fit in memory; ``None`` keeps all."""
    rng = np.random.default_rng(seed)
    keep_rng = np.random.default_rng([0 if seed is None else int(seed), 1])
    if teacher is not None and (teacher not in TEACHER_COLUMN or cfg.feature_set != "v2"):
        raise ValueError(f"rollout: teacher must be one of {', '.join(TEACHER_COLUMN)} with "
                         f"feature set 'v2', got {teacher!r} ({cfg.feature_set!r})")
    ep = DagEpisode(instance, cfg.feature_set, whole=cfg.head == "attr")
    ep.reset()
    n = instance.n_coflows
    rewards: list[float] = []
    kept: list[tuple[int, np.ndarray, list[np.ndarray]]] = []
    while not ep.done and (steps is None or len(rewards) < steps):
        bs = ep.batches()
        idx = np.flatnonzero(ep.ready)
        if teacher is not None:
            col = TEACHER_COLUMN[teacher]
            p = np.empty(n)
            for b in bs:
                p[b.coflows] = -b.x[:, col]
        else:
            assert params is not None
            p = _priorities(params, cfg, bs, n)
        if greedy or teacher is not None:
            order = idx[np.argsort(-p[idx], kind="stable")]
        else:
            order = idx[np.argsort(-(p[idx] + rng.gumbel(size=idx.size)), kind="stable")]
        t = len(rewards)
        r, _ = ep.step(order_to_priority(order, n))
        rewards.append(r / scale)
        if record is None or len(kept) < record:
            kept.append((t, order, [b.x for b in bs]))
        else:
            k = int(keep_rng.integers(t + 1))
            if k < record:
                kept[k] = (t, order, [b.x for b in bs])
    kept.sort(key=lambda e: e[0])
    n_batches = 1 if cfg.head == "attr" else instance.n_jobs
    out: dict[str, Any] = {
        "rewards": np.asarray(rewards, dtype=np.float64),
        "orders": [e[1] for e in kept],
        "steps": np.asarray([e[0] for e in kept], dtype=np.int64),
        "x": [np.stack([e[2][j] for e in kept]) if kept else np.zeros((0, 0, 0))
              for j in range(n_batches)],
        "episode_return": ep.episode_return,
        "done": ep.done,
    }
    if validate and ep.done:
        v = ep.stepper.validate()
        out["jct"] = v.job_completion - instance.job_release
    return out


def rollouts(instance: Instance, params: dict[str, np.ndarray], cfg: dict[str, Any],
             steps: int | None, seeds: Sequence[Any], greedy: bool, scale: float,
             validate: bool, keep: bool) -> list[dict[str, Any]]:
    """:func:`rollout` for each of ``seeds`` (the network's settings as a plain dict, so that
    the call pickles to a worker process); without ``keep`` the per-step features and orders
    are dropped (an evaluation needs only the returns and JCTs)."""
    c = DeepWeaveConfig.from_dict(cfg)
    out = []
    for s in seeds:
        r = rollout(instance, params, c, steps=steps, seed=s, greedy=greedy, scale=scale,
                    validate=validate)
        if not keep:
            r = {k: v for k, v in r.items() if k not in ("x", "orders")}
        out.append(r)
    return out
